"""Lemmas that justify the facts of the local model (:mod:`equiv.vmap.local`).

Each lemma is a query whose UNSAT answer shows that every run of the kernel code (of the
revision checked) satisfies a fact the local model assumes; an obligation proved locally is
PROVED only if the lemmas it rests on are.  The loop lemmas are inductive: one symbolic loop
iteration from any state satisfying the invariant (and, for facts about every page, one
symbolic page ``u``: the invariant at ``u`` depends only on the invariant at ``u`` before).

* ``hook_tiles``: whenever the arch hook's guards hold it returns a multiple of 64K, at least
  64K and at most ``end - addr``; otherwise one page.  So block steps keep the loop on
  64K-aligned positions and never pass the end (the PTE loop tiling).
* ``batch_lock_step`` (vmap): in ``vmap_pages_range_batched``, ``batch_end`` and
  ``map_addr`` stay in lock step with ``i`` and ``idx`` (a walk's ``pages + idx`` starts at
  the walk's first page).
* ``batch_runs`` (vmap): the invariant of the batching loop: besides the lock step, every
  page of the walk being gathered lies in an iteration of order ``prev_shift - PAGE_SHIFT``
  that is physically contiguous, aligned in PA to its size and inside the walk; so is every
  walk issued, and the final one.
* The walks of the batching loop tile the range (``map_addr = batch_end`` after each walk,
  the last one to ``end``) and a walk's ``*nr`` advances with ``addr`` (a PTE loop by the
  slot's length; a PMD block by 512 with the v8 "*nr increment"): both by the structure of
  the code.  Seeded bug M3 drops the increment; the local model then counts the lag.
* ``vmalloc_chunks_aligned`` (vmalloc): with shift >= 16, every 64K-aligned page of the range
  maps a 64K-aligned pfn (P3), so the hook's acceptance is the same at every aligned position.
"""

from __future__ import annotations

from collections.abc import Callable

import z3
from attrs import frozen

from equiv import bv
from equiv.bv import Cond, Val
from equiv.vmap import arch, ops
from equiv.vmap.arch import IDX_BITS, PFN_BITS
from equiv.vmap.inputs import VmapInputs
from equiv.vmap.paths import BASE_HOOK, OFF, batch_max_steps, get_vmap_batch_order, va_low
from equiv.vmap.revisions import Revision


@frozen(kw_only=True, eq=False)
class Lemma:
    """A lemma: UNSAT of ``assumptions ∧ premise ∧ ¬claim`` proves it."""

    name: str
    description: str
    premise: Cond
    claim: Cond
    #: free variables of the lemma (shown when it fails)
    free: dict[str, Val]
    #: lemmas whose claims (instances over the same free variables) are in the premise: this
    #: lemma counts as proved only if they are
    requires: tuple[str, ...] = ()


def _hook_tiles(inp: VmapInputs, path: str, rev: Revision) -> Lemma:
    hooks = [rev.hook] + ([BASE_HOOK] if path != "vmap" else [])
    lo = z3.BitVec("lemma.hook.addr_lo", 9)
    rem = z3.BitVec("lemma.hook.rem", IDX_BITS)
    pfn = z3.BitVec("lemma.hook.pfn", PFN_BITS)
    s = z3.BitVec("lemma.hook.shift", 32)
    parts: list[Cond] = []
    for h in hooks:
        g = arch.map_size_guards(lo, rem, pfn, s, h)
        size = arch.arch_vmap_pte_range_map_size(lo, rem, pfn, s, h)
        parts.append(
            ops.implies(g, bv.and_(arch.ge(size, arch.CONT_PTES), bv.eq(size & 15, 0), bv.ule(size, rem)))
        )
        parts.append(ops.implies(bv.not_(g), bv.eq(size, 1)))
    return Lemma(
        name="hook_tiles",
        description="arch_vmap_pte_range_map_size() returns one page unless its guards hold, and "
        "then a multiple of 64K, at least 64K, at most end - addr (block steps stay on "
        "64K-aligned positions and never pass the end)",
        premise=bv.ult(s, 64),
        claim=bv.and_(*parts),
        free={"addr_lo": lo, "rem": rem, "pfn": pfn, "shift": s},
    )


def _batch(inp: VmapInputs, rev: Revision, runs: bool) -> Lemma:
    pg = inp.pages
    count = inp.count
    nbits = max(inp.max_count, 2).bit_length()
    names = ("i", "idx", "prev", "batch_end", "map_addr", "u")
    i, idx, prev, bend, mapo, u = (z3.BitVec(f"lemma.batch.{n}", IDX_BITS) for n in names)

    def walk_ok(lo: Val, hi: Val, widx: Val, shift: Val) -> Cond:
        """The facts local.fast_vmap assumes about a walk, at page u."""
        if not runs:
            return bv.eq(lo, widx)
        order = shift - arch.PAGE_SHIFT
        size = ops.pow2(order, OFF, nbits)
        r = lo + ((u - lo) & ~(size - 1))
        rs = pg.seg(r)
        run_facts = bv.and_(
            bv.eq(pg.seg(u).off, rs.off), ops.is_aligned_dyn(rs.pfn(r), order), bv.ule(r + size, hi)
        )
        batched = bv.not_(bv.eq(shift, arch.PAGE_SHIFT))
        return bv.and_(
            bv.eq(lo, widx),
            bv.ult(shift, arch.PAGE_SHIFT + nbits),
            arch.ge(shift, arch.PAGE_SHIFT),
            ops.implies(bv.and_(batched, arch.ge(u, lo), bv.ult(u, hi)), run_facts),
        )

    def inv(i: Val, idx: Val, prev: Val, bend: Val, mapo: Val) -> Cond:
        if not runs:
            return bv.and_(bv.eq(bend, i), bv.eq(mapo, idx), bv.ule(idx, i))
        size = ops.pow2(prev - arch.PAGE_SHIFT, OFF, nbits)
        return bv.and_(
            # lock step: batch_end == addr + i, map_addr == addr + idx
            bv.eq(bend, i),
            bv.eq(mapo, idx),
            bv.ule(idx, i),
            bv.ule(i, count),
            ops.implies(bv.eq(prev, 0), bv.eq(i, 0)),
            ops.implies(bv.eq(prev, arch.PAGE_SHIFT), bv.eq(i, idx)),
            ops.implies(
                bv.not_(bv.eq(prev, 0)),
                bv.and_(arch.ge(prev, arch.PAGE_SHIFT), bv.ult(prev, arch.PAGE_SHIFT + nbits)),
            ),
            ops.implies(
                bv.not_(bv.or_(bv.eq(prev, 0), bv.eq(prev, arch.PAGE_SHIFT))),
                bv.and_(bv.eq((i - idx) & (size - 1), 0), walk_ok(mapo, i, idx, prev)),
            ),
        )

    # one iteration of the loop body, from a state satisfying the invariant
    lock = rev.batch_step == "order"
    run = bv.ult(i, count)
    bo = get_vmap_batch_order(inp, rev, batch_max_steps(rev, count, i), i)
    shift = bo.order + arch.PAGE_SHIFT
    prev1 = bv.ite(bv.eq(i, 0), shift, prev)
    change = bv.not_(bv.eq(shift, prev1))
    if rev.walk_on == "drop":
        change = bv.and_(change, bv.ult(shift, prev1))
    issued_ok = ops.implies(change, walk_ok(mapo, bend, idx, prev1))
    prev2 = bv.ite(change, shift, prev1)
    map2 = bv.ite(change, bend, mapo)
    idx2 = bv.ite(change, i, idx)
    brk = bv.eq(shift, arch.PAGE_SHIFT)
    bend2 = bend + ops.pow2(bo.order, OFF, nbits)
    i2 = i + ops.pow2(bo.order if lock else shift, IDX_BITS, nbits if lock else IDX_BITS - 1)
    after = bv.and_(
        issued_ok,
        # broken: the remaining walk [map_addr, end) has shift PAGE_SHIFT
        ops.implies(brk, bv.eq(prev2, arch.PAGE_SHIFT)) if runs else bv.eq(map2, idx2),
        ops.implies(bv.not_(brk), inv(i2, idx2, prev2, bend2, map2)),
    )
    # the loop ended normally: the final walk [map_addr, end) with prev_shift
    final = walk_ok(mapo, count, idx, bv.ite(bv.eq(prev, 0), ops.const(prev, arch.PAGE_SHIFT, 32), prev))
    claim = bv.and_(ops.implies(run, after), ops.implies(bv.not_(run), final))
    if not runs:
        return Lemma(
            name="batch_lock_step",
            description="vmap_pages_range_batched: batch_end and map_addr stay in lock step with i "
            "and idx (inductive: one symbolic iteration)",
            premise=inv(i, idx, prev, bend, mapo),
            claim=claim,
            free=dict(zip(names, (i, idx, prev, bend, mapo, u), strict=True)),
        )
    helpers = bv.and_(_batch_order_run(inp, rev).claim, _chain_contiguous(inp).claim)
    return Lemma(
        name="batch_runs",
        description="vmap_pages_range_batched: every page of every walk lies in an iteration of the "
        "walk's order that is physically contiguous, PA-aligned to its size and inside "
        "the walk (inductive: one symbolic iteration, one symbolic page)",
        premise=bv.and_(inv(i, idx, prev, bend, mapo), helpers),
        claim=claim,
        free=dict(zip(names, (i, idx, prev, bend, mapo, u), strict=True)),
        requires=("batch_order_run", "chain_contiguous"),
    )


def _batch_order_run(inp: VmapInputs, rev: Revision) -> Lemma:
    """The iteration at index i (i < count) covers [i, i + 2^order): inside the contiguous
    chain of pages[i], inside the array, its first pfn aligned to 2^order."""
    pg = inp.pages
    nbits = max(inp.max_count, 2).bit_length()
    i = z3.BitVec("lemma.batch.i", IDX_BITS)
    bo = get_vmap_batch_order(inp, rev, batch_max_steps(rev, inp.count, i), i)
    size = ops.pow2(bo.order, OFF, nbits)
    si = pg.seg(i)
    claim = ops.implies(
        bv.ult(i, inp.count),
        bv.and_(
            bv.ule(i + size, si.chain_end),
            ops.is_aligned_dyn(si.pfn(i), bo.order),
            bv.ule(i + size, inp.count),
        ),
    )
    return Lemma(
        name="batch_order_run",
        description="get_vmap_batch_order: the iteration at pages[i] covers 2^order pages that are "
        "physically contiguous, inside the array, the first pfn aligned to 2^order",
        premise=True,
        claim=claim,
        free={"i": i},
    )


def _chain_contiguous(inp: VmapInputs) -> Lemma:
    """Every index between i and the end of i's contiguous chain maps to pfn off + index with
    the same off (a property of the segment encoding, stated for the solver)."""
    pg = inp.pages
    i = z3.BitVec("lemma.batch.i", IDX_BITS)
    u = z3.BitVec("lemma.batch.u", IDX_BITS)
    si = pg.seg(i)
    claim = ops.implies(
        bv.and_(bv.ule(i, u), bv.ult(u, si.chain_end), bv.ult(u, pg.count)), bv.eq(pg.seg(u).off, si.off)
    )
    return Lemma(
        name="chain_contiguous",
        description="the pages of one physically contiguous chain of segments map to consecutive pfns",
        premise=True,
        claim=claim,
        free={"i": i, "u": u},
    )


def _vmalloc_chunks_aligned(inp: VmapInputs) -> Lemma:
    x = z3.BitVec("lemma.chunks.x", OFF)
    premise = bv.and_(
        arch.ge(inp.shift, arch.CONT_PTE_SHIFT), bv.ult(x, inp.count), bv.eq(va_low(inp, x, 4), 0)
    )
    return Lemma(
        name="vmalloc_chunks_aligned",
        description="vmalloc with shift >= 16: every 64K-aligned page of the range maps a "
        "64K-aligned pfn (the hook accepts every aligned position alike)",
        premise=premise,
        claim=ops.is_aligned(inp.pages.pfn_at(x), 4),
        free={"x": x},
    )


LEMMAS: dict[str, Callable[[VmapInputs, str, Revision], Lemma]] = {
    "hook_tiles": _hook_tiles,
    "batch_lock_step": lambda inp, path, rev: _batch(inp, rev, runs=False),
    "batch_order_run": lambda inp, path, rev: _batch_order_run(inp, rev),
    "chain_contiguous": lambda inp, path, rev: _chain_contiguous(inp),
    "batch_runs": lambda inp, path, rev: _batch(inp, rev, runs=True),
    "vmalloc_chunks_aligned": lambda inp, path, rev: _vmalloc_chunks_aligned(inp),
}

#: which lemmas each path's local model rests on
PATH_LEMMAS: dict[str, tuple[str, ...]] = {
    "ioremap": ("hook_tiles",),
    "vmalloc": ("hook_tiles", "vmalloc_chunks_aligned"),
    "vmap": ("hook_tiles", "batch_lock_step", "batch_order_run", "chain_contiguous", "batch_runs"),
}

#: the lemmas each obligation's local proof rests on (intersected with the path's)
DEPENDS: dict[str, frozenset[str]] = {
    "e_trans": frozenset(
        {
            "hook_tiles",
            "vmalloc_chunks_aligned",
            "batch_runs",
            "batch_lock_step",
            "batch_order_run",
            "chain_contiguous",
        }
    ),
    "e_enc": frozenset({"hook_tiles", "vmalloc_chunks_aligned"}),
    "frame": frozenset({"hook_tiles", "vmalloc_chunks_aligned"}),
    "wf_block": frozenset({"hook_tiles", "vmalloc_chunks_aligned"}),
    "index_bound": frozenset({"batch_lock_step"}),
    "terminates": frozenset({"hook_tiles", "vmalloc_chunks_aligned"}),
    "errors_agree": frozenset(),
    "flush_covers": frozenset(),
    "ub_ffs0": frozenset(),
}


def depends(obligation: str, path: str) -> frozenset[str]:
    """The lemmas ``obligation``'s local proof on ``path`` rests on."""
    return DEPENDS[obligation] & frozenset(PATH_LEMMAS[path])


def lemmas(inp: VmapInputs, path: str, rev: Revision) -> list[Lemma]:
    """The lemmas of ``path``, in a fixed order."""
    return [LEMMAS[n](inp, path, rev) for n in PATH_LEMMAS[path]]

"""Lemmas that justify the facts of the local model (:mod:`equiv.vmap.local`).

Each lemma is a query whose UNSAT answer shows that every run of the kernel code (of the
revision checked) satisfies a fact the local model assumes; an obligation proved locally is
PROVED only if the lemmas it rests on are.  The loop lemmas are inductive: one symbolic loop
iteration from any state satisfying the invariant (and, for facts about every page, one
symbolic page ``u``: the invariant at ``u`` depends only on the invariant at ``u`` before).

* ``hook_tiles``: whenever the arch hook's guards hold it returns a multiple of 64K, at least
  64K and at most ``end - addr``; otherwise one page.  So block steps keep the loop on
  64K-aligned positions and never pass the end (the PTE loop tiling).
* The batching loop's lemmas (vmap) are proved on the loop the exact model runs: one
  symbolic iteration of :func:`equiv.vmap.paths.batch_iteration` from any state satisfying
  the invariant, the invariant of the initial state, and what holds wherever the loop is
  left (``break``, its end, a walk's error).  The invariants share the lock step and the
  loop's shape (``i <= count``; ``prev_shift`` 0 only before the first iteration, otherwise
  above ``PAGE_SHIFT``: an iteration of shift ``PAGE_SHIFT`` breaks, so no pending walk of
  that shift reaches the loop's head; the pending walk is not empty).
* ``batch_lock_step``: ``batch_end`` and ``map_addr`` stay in lock step with ``i`` and
  ``idx`` (a walk's ``pages + idx`` starts at the walk's first page).
* ``batch_order_inside`` / ``batch_order_run``: the iteration at ``pages[i]`` ends inside
  the array / and is physically contiguous with its first pfn aligned to its size.
* ``batch_runs``: every page of the walk being gathered lies in an iteration of order
  ``prev_shift - PAGE_SHIFT`` that is physically contiguous, aligned in PA to its size and
  inside the walk; so is every walk issued, and the final one.
* ``batch_walks_inside``: with a ghost ``covered`` (the end of the walks issued so far, 0 at
  the start), every walk starts at ``covered``, ends by N, has a batch shift, and moves
  ``covered`` to its end: the walks are disjoint, contiguous from 0 and inside the range.
* ``batch_walks_tile``: moreover no walk is empty and the last ends at N (without a final
  walk ``covered`` is N): the walks tile [0, N).  Seeded bug X3 breaks it.
* ``batch_flush_covers``: wherever the loop is left, ``flush_cache_vmap()``'s range covers
  [0, N) on both ends, and no walk on the way is empty (``BUG_ON(addr >= end)``).  M4 and
  X4 break it.
* A walk's ``*nr`` advances with ``addr`` (a PTE loop by the slot's length; a PMD block by
  512 with the v8 "*nr increment"): by the structure of the code.  Seeded bug M3 drops the
  increment; the local model then counts the lag.
* With a page array of any number of runs (the cell of bound ``ANY``,
  :class:`equiv.vmap.inputs.RunArray`) the same lemmas are proved over uninterpreted
  functions of the index; ``chain_contiguous`` is then not a lemma but the definition of
  ``run_end`` (:meth:`~equiv.vmap.inputs.RunArray.run_def`), which ``batch_runs`` states at
  its (i, u).
* ``vmalloc_chunks_aligned`` (vmalloc): with shift >= 16, every 64K-aligned page of the range
  maps a 64K-aligned pfn (P3), so the hook's acceptance is the same at every aligned position.
"""

from __future__ import annotations

from collections.abc import Callable

import z3
from attrs import frozen

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.vmap import arch
from equiv.vmap.arch import IDX_BITS, PFN_BITS
from equiv.vmap.inputs import RunArray, VmapInputs
from equiv.vmap.leaves import OFF
from equiv.vmap.paths import (
    BASE_HOOK,
    BatchState,
    batch_iteration,
    batch_max_steps,
    final_walk,
    flush_range,
    get_vmap_batch_order,
    state_select,
    va_low,
)
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
    #: the claim as a conjunction of parts, each proved by its own query (smaller queries;
    #: empty: the claim in one query)
    parts: tuple[Cond, ...] = ()


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
            bv.implies(g, bv.and_(arch.ge(size, arch.CONT_PTES), bv.eq(size & 15, 0), bv.ule(size, rem)))
        )
        parts.append(bv.implies(bv.not_(g), bv.eq(size, 1)))
    return Lemma(
        name="hook_tiles",
        description="arch_vmap_pte_range_map_size() returns one page unless its guards hold, and "
        "then a multiple of 64K, at least 64K, at most end - addr (block steps stay on "
        "64K-aligned positions and never pass the end)",
        premise=bv.ult(s, 64),
        claim=bv.and_(*parts),
        free={"addr_lo": lo, "rem": rem, "pfn": pfn, "shift": s},
    )


#: the variables of the batching loop, as the lemmas name them (``lemma.batch.<name>``)
_STATE = ("i", "idx", "prev", "batch_end", "map_addr")


def _loop_state() -> BatchState:
    """A symbolic state of ``vmap_pages_range_batched``'s loop (any values: the invariant
    of each lemma constrains them)."""
    i, idx, prev, bend, mapo = (z3.BitVec(f"lemma.batch.{n}", IDX_BITS) for n in _STATE)
    return BatchState(i=i, idx=idx, prev=prev, bend=bend, map_addr=mapo)


def _free(st: BatchState, **extra: Val) -> dict[str, Val]:
    return {"i": st.i, "idx": st.idx, "prev": st.prev, "batch_end": st.bend, "map_addr": st.map_addr, **extra}


def _nbits(inp: VmapInputs) -> int:
    return max(inp.max_count, 2).bit_length()


def _lock(st: BatchState) -> Cond:
    """Lock step: ``batch_end == addr + i`` and ``map_addr == addr + idx`` (positions are
    pages from ``addr``), ``idx <= i``."""
    return bv.and_(bv.eq(st.bend, st.i), bv.eq(st.map_addr, st.idx), bv.ule(st.idx, st.i))


def _shape(inp: VmapInputs, st: BatchState) -> Cond:
    """What the loop's variables can be at the head of the loop: ``i <= count``;
    ``prev_shift`` is 0 only before the first iteration, and otherwise a batch shift above
    ``PAGE_SHIFT`` (``PAGE_SHIFT`` + an order below the array's size): an iteration whose
    shift is ``PAGE_SHIFT`` leaves the loop (``break``), so no pending walk of shift
    ``PAGE_SHIFT`` reaches the head; once an iteration ran, the pending walk is not empty
    (``idx < i``).  (Excluding a pending walk of shift ``PAGE_SHIFT`` is what keeps a walk
    issued only when the shift drops, X6, provable: from such a state a rising shift would
    extend it.)"""
    nbits = _nbits(inp)
    started = bv.not_(bv.eq(st.prev, 0))
    return bv.and_(
        bv.ule(st.i, inp.count),
        bv.implies(bv.not_(started), bv.eq(st.i, 0)),
        bv.implies(
            started,
            bv.and_(
                bv.ult(st.idx, st.i),
                bv.ult(arch.PAGE_SHIFT, st.prev),
                bv.ult(st.prev, arch.PAGE_SHIFT + nbits),
            ),
        ),
    )


def _walk_facts(inp: VmapInputs, u: Val, lo: Val, hi: Val, widx: Val, shift: Val) -> Cond:
    """The facts :func:`equiv.vmap.local.fast_vmap` assumes about a walk ``[lo, hi)`` of
    shift ``shift`` called with ``pages + widx``, at page ``u``: it starts at its first page
    (``widx == lo``), its shift is a batch shift, and if it batches, u's iteration
    ``[r, r + 2^o)`` (``r = lo + k * 2^o``) is physically contiguous, aligned in PA to its
    size and inside the walk."""
    pg = inp.pages
    nbits = _nbits(inp)
    order = shift - arch.PAGE_SHIFT
    size = bv.pow2(order, OFF, nbits)
    r = lo + ((u - lo) & ~(size - 1))
    rs = pg.seg(r)
    run_facts = bv.and_(
        bv.eq(pg.seg(u).off, rs.off), bv.is_aligned_dyn(rs.pfn(r), order), bv.ule(r + size, hi)
    )
    batched = bv.not_(bv.eq(shift, arch.PAGE_SHIFT))
    return bv.and_(
        bv.eq(lo, widx),
        bv.ult(shift, arch.PAGE_SHIFT + nbits),
        arch.ge(shift, arch.PAGE_SHIFT),
        bv.implies(bv.and_(batched, arch.ge(u, lo), bv.ult(u, hi)), run_facts),
    )


def _batch_lock_step(inp: VmapInputs, rev: Revision) -> Lemma:
    st = _loop_state()
    it = batch_iteration(inp, rev, st)
    _, fin_lo, _ = final_walk(inp, rev, st)
    run = bv.ult(st.i, inp.count)
    claim = bv.and_(
        # the loop starts in lock step
        _lock(BatchState.initial(st.i)),
        bv.implies(
            run,
            bv.and_(
                # a walk issued here gets pages + idx at its first page map_addr
                bv.implies(it.issued, bv.eq(st.map_addr, st.idx)),
                # after a break the final walk starts at its first page
                bv.implies(it.brk, bv.eq(it.mid.map_addr, it.mid.idx)),
                bv.implies(bv.not_(it.brk), _lock(it.after)),
            ),
        ),
        # the loop ended: the final walk starts at its first page
        bv.implies(bv.not_(run), bv.eq(fin_lo, st.idx)),
    )
    return Lemma(
        name="batch_lock_step",
        description="vmap_pages_range_batched: batch_end and map_addr stay in lock step with i "
        "and idx (inductive: one symbolic iteration)",
        premise=_lock(st),
        claim=claim,
        free=_free(st),
    )


def _batch_runs(inp: VmapInputs, rev: Revision) -> Lemma:
    u = z3.BitVec("lemma.batch.u", IDX_BITS)
    st = _loop_state()
    nbits = _nbits(inp)

    def inv(s: BatchState) -> Cond:
        size = bv.pow2(s.prev - arch.PAGE_SHIFT, OFF, nbits)
        gathering = bv.not_(bv.eq(s.prev, 0))
        return bv.and_(
            _lock(s),
            _shape(inp, s),
            # the pending walk [map_addr, i) is made of whole iterations of its order
            bv.implies(
                gathering,
                bv.and_(
                    bv.eq((s.i - s.idx) & (size - 1), 0), _walk_facts(inp, u, s.map_addr, s.i, s.idx, s.prev)
                ),
            ),
        )

    # get_vmap_batch_order() summarised by what lemma batch_order_run proves of it
    order = z3.BitVec("lemma.batch.order", 32)
    it = batch_iteration(inp, rev, st, order)
    run = bv.ult(st.i, inp.count)
    _, fin_lo, fin_hi = final_walk(inp, rev, st)
    fin_shift = bv.ite(bv.eq(st.prev, 0), bv.const_like(st.prev, arch.PAGE_SHIFT, 32), st.prev)
    parts = (
        inv(BatchState.initial(st.i)),
        # the walk issued here has the facts
        bv.implies(bv.and_(run, it.issued), _walk_facts(inp, u, st.map_addr, st.bend, st.idx, it.prev)),
        # broken: the remaining walk [map_addr, end) has shift PAGE_SHIFT
        bv.implies(bv.and_(run, it.brk), bv.eq(it.mid.prev, arch.PAGE_SHIFT)),
        # the invariant again, the pending walk extended (no new walk: the hard case) or new
        bv.implies(bv.and_(run, bv.not_(it.brk), bv.not_(it.issued)), inv(it.after)),
        bv.implies(bv.and_(run, bv.not_(it.brk), it.issued), inv(it.after)),
        # the loop ended normally: the final walk [map_addr, end) with prev_shift
        bv.implies(bv.not_(run), _walk_facts(inp, u, fin_lo, fin_hi, st.idx, fin_shift)),
    )
    pg = inp.pages
    if isinstance(pg, RunArray):
        # run_end's definition at u and at u's iteration start in the walk after this
        # iteration (X6: an iteration of a higher order joins a walk of a lower one, whose
        # iterations then start inside it)
        after = it.after
        size = bv.pow2(after.prev - arch.PAGE_SHIFT, OFF, nbits)
        start = after.map_addr + ((u - after.map_addr) & ~(size - 1))
        contiguous = bv.and_(pg.run_def(st.i, u), pg.run_def(st.i, start))
    else:
        contiguous = _chain_contiguous(inp).claim
    helpers = bv.and_(_order_facts(inp, st.i, order), contiguous)
    return Lemma(
        name="batch_runs",
        description="vmap_pages_range_batched: every page of every walk lies in an iteration of the "
        "walk's order that is physically contiguous, PA-aligned to its size and inside "
        "the walk (inductive: one symbolic iteration, one symbolic page)",
        premise=bv.and_(inv(st), helpers),
        claim=bv.and_(*parts),
        parts=parts,
        free=_free(st, u=u, order=order),
        requires=("batch_order_run",) + (() if isinstance(pg, RunArray) else ("chain_contiguous",)),
    )


def _batch_walks(inp: VmapInputs, rev: Revision, cover: bool) -> Lemma:
    """The walks of the batching loop, with a ghost ``cov`` (the end of the walks issued so
    far) that starts at 0: every walk starts at ``cov`` and moves it to its end, inside [0,
    N) (``batch_walks_inside``: the walks are disjoint and inside the range); with ``cover``
    (``batch_walks_tile``) moreover no walk is empty and, when the loop is left, the final
    walk (if any) ends at N, and without one ``cov`` is N: the walks tile [0, N)."""
    st = _loop_state()
    cov = z3.BitVec("lemma.batch.covered", IDX_BITS)
    count = inp.count
    nbits = _nbits(inp)

    def inv(s: BatchState, c: Val) -> Cond:
        return bv.and_(_lock(s), _shape(inp, s), bv.eq(c, s.map_addr))

    def walk(lo: Val, hi: Val, c: Val, shift: Val) -> Cond:
        """The walk [lo, hi) continues the tiling at c, inside the range (not empty), with
        a batch shift."""
        return bv.and_(
            bv.eq(lo, c),
            bv.ult(lo, hi) if cover else bv.ule(lo, hi),
            bv.ule(hi, count),
            arch.ge(shift, arch.PAGE_SHIFT),
            bv.ult(shift, arch.PAGE_SHIFT + nbits),
        )

    def left(s: BatchState, c: Val) -> Cond:
        """The loop is left in state s with [0, c) covered: the final walk (if any), with
        ``prev_shift`` (PAGE_SHIFT if no iteration ran)."""
        issued, lo, hi = final_walk(inp, rev, s)
        shift = bv.ite(bv.eq(s.prev, 0), bv.const_like(s.prev, arch.PAGE_SHIFT, 32), s.prev)
        if not cover:
            return bv.implies(issued, walk(lo, hi, c, shift))
        return bv.and_(
            bv.implies(issued, bv.and_(walk(lo, hi, c, shift), bv.eq(hi, count))),
            bv.implies(bv.not_(issued), bv.eq(c, count)),
        )

    it = batch_iteration(inp, rev, st)
    run = bv.ult(st.i, count)
    cov2 = bv.ite(it.issued, st.bend, cov)
    claim = bv.and_(
        # the walks start at 0
        inv(BatchState.initial(st.i), bv.const_like(st.i, 0, IDX_BITS)),
        bv.implies(
            run,
            bv.and_(
                # the walk [map_addr, batch_end) issued here continues them
                bv.implies(it.issued, walk(st.map_addr, st.bend, cov, it.prev)),
                bv.implies(it.brk, left(it.mid, cov2)),
                bv.implies(bv.not_(it.brk), inv(it.after, cov2)),
            ),
        ),
        bv.implies(bv.not_(run), left(st, cov)),
    )
    if cover:
        name = "batch_walks_tile"
        what = ("the walks it issues tile [0, N): each starts where the previous one ended (the first "
                "at 0), none is empty, and the last ends at N")
    else:
        name = "batch_walks_inside"
        what = ("the walks it issues are disjoint and inside [0, N): each starts where the previous "
                "one ended (the first at 0) and ends by N")
    return Lemma(
        name=name,
        description=f"vmap_pages_range_batched: {what} (inductive: one symbolic iteration)",
        premise=bv.and_(inv(st, cov), _batch_order_inside(inp, rev).claim),
        claim=claim,
        free=_free(st, covered=cov),
        requires=("batch_order_inside",),
    )


def _batch_flush_covers(inp: VmapInputs, rev: Revision) -> Lemma:
    """Wherever the batching loop is left (a break, its end, a walk error's ``goto out``),
    ``flush_cache_vmap()``'s range covers [0, N); and the flush is reached: no walk on the
    way is empty (``vmap_pages_range_noflush_walk``'s ``BUG_ON(addr >= end)``)."""
    st = _loop_state()
    count = inp.count

    def inv(s: BatchState) -> Cond:
        return bv.and_(_lock(s), _shape(inp, s))

    def covers(s: BatchState, final: bool = True) -> Cond:
        lo, hi = flush_range(inp, rev, s)
        issued, w_lo, w_hi = final_walk(inp, rev, s)
        # the final walk (if any) does not hit its BUG_ON before the flush
        reached = bv.implies(issued, bv.ult(w_lo, w_hi)) if final else True
        return bv.and_(bv.eq(lo, 0), bv.ule(count, hi), reached)

    it = batch_iteration(inp, rev, st)
    run = bv.ult(st.i, count)
    claim = bv.and_(
        inv(BatchState.initial(st.i)),
        bv.implies(
            run,
            bv.and_(
                # the walk issued here is not empty; if it fails: goto out with the state as
                # it is
                bv.implies(it.issued, bv.and_(bv.ult(st.map_addr, st.bend), covers(st, final=False))),
                bv.implies(it.brk, covers(it.mid)),
                bv.implies(bv.not_(it.brk), inv(it.after)),
            ),
        ),
        # the loop ended (the final walk does not move the state)
        bv.implies(bv.not_(run), covers(st)),
    )
    return Lemma(
        name="batch_flush_covers",
        description="vmap_pages_range_batched: wherever the loop is left (break, end, a walk's error), "
        "flush_cache_vmap()'s range covers [addr, end) (inductive: one symbolic iteration)",
        premise=bv.and_(inv(st), _batch_order_inside(inp, rev).claim),
        claim=claim,
        free=_free(st),
        requires=("batch_order_inside",),
    )


def _order_facts(inp: VmapInputs, i: Val, order: Val) -> Cond:
    """What lemma ``batch_order_run`` proves of the order of the iteration at index ``i``:
    if ``i < count``, ``[i, i + 2^order)`` lies in the contiguous chain of ``pages[i]`` and
    in the array, the first pfn is aligned to ``2^order``, and the order is below the
    width of the bit-vector helpers."""
    pg = inp.pages
    nbits = _nbits(inp)
    size = bv.pow2(order, OFF, nbits)
    si = pg.seg(i)
    return bv.implies(
        bv.ult(i, inp.count),
        bv.and_(
            bv.ult(order, nbits),
            bv.ule(i + size, si.chain_end),
            bv.is_aligned_dyn(si.pfn(i), order),
            bv.ule(i + size, inp.count),
        ),
    )


def _batch_order_run(inp: VmapInputs, rev: Revision) -> Lemma:
    """The iteration at index i (i < count) covers [i, i + 2^order): inside the contiguous
    chain of pages[i], inside the array, its first pfn aligned to 2^order (and the order
    below the helpers' width): :func:`_order_facts`, which ``batch_runs`` assumes in place
    of ``get_vmap_batch_order()``."""
    i = z3.BitVec("lemma.batch.i", IDX_BITS)
    bo = get_vmap_batch_order(inp, rev, batch_max_steps(rev, inp.count, i), i)
    claim = _order_facts(inp, i, bo.order)
    return Lemma(
        name="batch_order_run",
        description="get_vmap_batch_order: the iteration at pages[i] covers 2^order pages that are "
        "physically contiguous, inside the array, the first pfn aligned to 2^order",
        premise=True,
        claim=claim,
        free={"i": i},
    )


def _batch_one_iteration(inp: VmapInputs, rev: Revision) -> Lemma:
    """Seeded bug M5 (``i += 1U << shift``), the facts its local model takes instead of the
    walks' (:func:`equiv.vmap.local.fast_vmap`): the loop runs one iteration, issues no walk
    in it, and is left (a break, or ``i`` past ``count``: the shift is at least 16 and the
    array shorter than 2^16 pages for bounds below 128); then the final walk is [0, N) at
    ``pages + 0`` with the first iteration's shift, and the flush covers [0, N)."""
    st0 = BatchState.initial(inp.a)
    it = batch_iteration(inp, rev, st0)
    count = inp.count
    left = state_select(it.brk, it.mid, it.after)
    issued, lo, hi = final_walk(inp, rev, left)
    f_lo, f_hi = flush_range(inp, rev, left)
    claim = bv.and_(
        bv.not_(it.issued),
        bv.implies(bv.not_(it.brk), bv.not_(bv.ult(it.after.i, count))),
        issued,
        bv.eq(lo, 0),
        bv.eq(hi, count),
        bv.eq(left.idx, 0),
        bv.eq(left.prev, it.shift),
        bv.eq(f_lo, 0),
        bv.ule(count, f_hi),
    )
    return Lemma(
        name="batch_one_iteration",
        description="vmap_pages_range_batched with i += 1U << shift (M5): one iteration, then the "
        "final walk over [0, N) with the first shift, and the flush covers [0, N)",
        premise=True,
        claim=claim,
        free={},
    )


def _batch_order_inside(inp: VmapInputs, rev: Revision) -> Lemma:
    """The iteration at index i (i < count) ends inside the array: i + 2^order <= count
    (the part of ``batch_order_run`` the walks' lemmas need)."""
    nbits = _nbits(inp)
    i = z3.BitVec("lemma.batch.i", IDX_BITS)
    bo = get_vmap_batch_order(inp, rev, batch_max_steps(rev, inp.count, i), i)
    claim = bv.implies(bv.ult(i, inp.count), bv.ule(i + bv.pow2(bo.order, OFF, nbits), inp.count))
    return Lemma(
        name="batch_order_inside",
        description="get_vmap_batch_order: the iteration at pages[i] ends inside the array",
        premise=True,
        claim=claim,
        free={"i": i},
    )


def _chain_contiguous(inp: VmapInputs) -> Lemma:
    """Every index between i and the end of i's contiguous chain maps to pfn off + index with
    the same off (a property of the segment encoding, stated for the solver; with a
    :class:`~equiv.vmap.inputs.RunArray` it is the definition of ``run_end``, not a lemma)."""
    pg = inp.pages
    i = z3.BitVec("lemma.batch.i", IDX_BITS)
    u = z3.BitVec("lemma.batch.u", IDX_BITS)
    si = pg.seg(i)
    claim = bv.implies(
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
        claim=bv.is_aligned(inp.pages.pfn_at(x), 4),
        free={"x": x},
    )


LEMMAS: dict[str, Callable[[VmapInputs, str, Revision], Lemma]] = {
    "hook_tiles": _hook_tiles,
    "batch_lock_step": lambda inp, path, rev: _batch_lock_step(inp, rev),
    "batch_order_run": lambda inp, path, rev: _batch_order_run(inp, rev),
    "batch_order_inside": lambda inp, path, rev: _batch_order_inside(inp, rev),
    "batch_one_iteration": lambda inp, path, rev: _batch_one_iteration(inp, rev),
    "chain_contiguous": lambda inp, path, rev: _chain_contiguous(inp),
    "batch_runs": lambda inp, path, rev: _batch_runs(inp, rev),
    "batch_walks_inside": lambda inp, path, rev: _batch_walks(inp, rev, cover=False),
    "batch_walks_tile": lambda inp, path, rev: _batch_walks(inp, rev, cover=True),
    "batch_flush_covers": lambda inp, path, rev: _batch_flush_covers(inp, rev),
    "vmalloc_chunks_aligned": lambda inp, path, rev: _vmalloc_chunks_aligned(inp),
}

#: the lemmas that justify the facts of each path's local model (``LocalObs.facts``).  Every
#: obligation about the observed page rests on them: the facts constrain the free variables
#: of every such query, and a fact that did not hold would leave some run out of the proof.
FACTS: dict[str, tuple[str, ...]] = {
    "ioremap": ("hook_tiles",),
    "vmalloc": ("hook_tiles", "vmalloc_chunks_aligned"),
    "vmap": ("hook_tiles", "batch_lock_step", "batch_order_inside", "batch_walks_inside"),
}
#: the lemmas that justify the run facts of the batching loop's walks
#: (``LocalObs.run_facts``: every iteration of a walk contiguous, PA-aligned, inside it),
#: which only the translation needs
RUNS: tuple[str, ...] = ("batch_order_run", "chain_contiguous", "batch_runs")
#: what is a lemma with segments but a definition with a page array of any number of runs
#: (:meth:`equiv.vmap.inputs.RunArray.run_def`)
DEFINED_ANY: frozenset[str] = frozenset({"chain_contiguous"})

#: which lemmas each path's local model rests on, in the order they are proved (a lemma
#: after those it requires)
PATH_LEMMAS: dict[str, tuple[str, ...]] = {
    "ioremap": FACTS["ioremap"],
    "vmalloc": FACTS["vmalloc"],
    "vmap": (
        "hook_tiles",
        "batch_lock_step",
        "batch_order_inside",
        "batch_order_run",
        "chain_contiguous",
        "batch_runs",
        "batch_walks_inside",
        "batch_walks_tile",
        "batch_flush_covers",
    ),
}

#: what each obligation rests on besides the facts (None: not the facts either: its query
#: does not read the observed page or the free variables, and the facts hold for some page
#: of every input: a one-page walk of shift PAGE_SHIFT at it).  The facts cover every page
#: *some walk maps* (walks inside the range: frame, wf_block, index_bound, terminates are
#: about what is written and read); e_trans, e_enc and errors_agree are about every page of
#: the range, which needs the walks to cover it (``batch_walks_tile``), and the translation
#: needs the run facts; on vmap the flush range is the lemma ``batch_flush_covers``, and
#: ub_ffs0 asks for any iteration of the batching loop (a free index below N).
EXTRA: dict[str, frozenset[str] | None] = {
    "e_trans": frozenset({"batch_walks_tile", *RUNS}),
    "e_enc": frozenset({"batch_walks_tile"}),
    "errors_agree": frozenset({"batch_walks_tile"}),
    "flush_covers": None,
    "ub_ffs0": None,
}
#: the lemmas of the obligations that do not rest on the facts
GLOBAL: dict[str, frozenset[str]] = {
    "flush_covers": frozenset({"batch_flush_covers", "batch_order_inside", "batch_one_iteration"}),
    "ub_ffs0": frozenset(),
}

#: seeded bug M5 (``i += 1U << shift``): the local model has one walk over [0, N) instead of
#: the walks of the loop (its facts rest on ``batch_one_iteration``, no run facts); the
#: path's other lemmas still run (and fail: M5 breaks the lock step), nothing rests on them
M5_FACTS: tuple[str, ...] = ("hook_tiles", "batch_one_iteration")


def _m5(path: str, rev: Revision | None) -> bool:
    return path == "vmap" and rev is not None and rev.batch_step == "shift"


def path_lemmas(path: str, rev: Revision | None = None, unbounded: bool = False) -> tuple[str, ...]:
    """The lemmas of ``path`` (revision ``rev``; ``unbounded``: a page array of any number
    of runs), in the order they are proved."""
    names = (*PATH_LEMMAS[path], "batch_one_iteration") if _m5(path, rev) else PATH_LEMMAS[path]
    return tuple(n for n in names if not (unbounded and n in DEFINED_ANY))


def depends(
    obligation: str, path: str, rev: Revision | None = None, unbounded: bool = False
) -> frozenset[str]:
    """The lemmas ``obligation``'s local proof on ``path`` (revision ``rev``; ``unbounded``:
    a page array of any number of runs) rests on."""
    m5 = _m5(path, rev)
    facts = frozenset(M5_FACTS if m5 else FACTS[path])
    on_path = facts if m5 else frozenset(path_lemmas(path, rev, unbounded))
    extra = EXTRA.get(obligation, frozenset())
    if extra is None:
        return GLOBAL[obligation] & on_path
    return (facts | extra) & on_path


def runs(unbounded: bool = False) -> frozenset[str]:
    """The lemmas of the run facts (:data:`RUNS`; without the definitions of a page array
    of any number of runs)."""
    return frozenset(RUNS) - (DEFINED_ANY if unbounded else frozenset())


def lemmas(inp: VmapInputs, path: str, rev: Revision) -> list[Lemma]:
    """The lemmas of ``path``, in a fixed order."""
    return [LEMMAS[n](inp, path, rev) for n in path_lemmas(path, rev, inp.unbounded)]

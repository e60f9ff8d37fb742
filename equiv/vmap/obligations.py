"""The obligations of the page-table subject (reference §9), symbolically and concretely.

Every obligation has two readings: a claim about one observed page (or one batching step)
that the solver decides over symbolic inputs (:func:`claim`), and a check of a concrete run of
both paths on the twin (:func:`violations`), which decides whether a solver counterexample is
real.  Obligations are about the fast path against the slow path (the slow path is the
reference); ``e_trans`` also checks the slow path against ``pages[]``.
"""

from __future__ import annotations

import z3
from attrs import frozen

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.vmap import arch
from equiv.vmap.inputs import ConcreteCase, VmapInputs
from equiv.vmap.local import LocalObs
from equiv.vmap.paths import PathObs, pmd_present, pud_present, va_low, vpn
from equiv.vmap.twin import Run

Obs = LocalObs | PathObs


@frozen
class Obligation:
    """One obligation: its name, whether it is about one page (``page``) or the whole call
    (``global``), the paths it applies to, and what it claims."""

    name: str
    kind: str
    paths: tuple[str, ...]
    description: str


ALL = ("ioremap", "vmalloc", "vmap")
OBLIGATIONS: dict[str, Obligation] = {
    o.name: o
    for o in (
        Obligation(
            "e_trans",
            "page",
            ALL,
            "E-trans: every page of the range translates to pages[i] on both paths, with the same "
            "attributes (PTE_CONT and the table/block type bits masked off)",
        ),
        Obligation(
            "e_enc",
            "page",
            ("ioremap", "vmalloc"),
            "E-enc: bit-identical leaf entries (same level, same 64-bit entry) at every page",
        ),
        Obligation(
            "frame", "page", ALL, "Frame: no write (PTE, CONT step, PMD/PUD block) outside [va, va + N pages)"
        ),
        Obligation(
            "wf_block",
            "page",
            ALL,
            "WF-block: every PMD/PUD leaf is aligned in VA and PA, inside the range and without "
            "PTE_CONT; every CONT PTE belongs to a 64K-aligned group of 16 inside the range whose 16 "
            "entries are all valid CONT PTEs with the same attributes over consecutive pfns from a "
            "64K-aligned pfn",
        ),
        Obligation("index_bound", "page", ALL, "every pages[] index the fast path reads is < N"),
        Obligation(
            "terminates",
            "page",
            ALL,
            "termination: no PTE-loop step goes past the loop's end (addr != end would never "
            "hold and the loop would write on)",
        ),
        Obligation(
            "errors_agree",
            "page",
            ALL,
            "errors: both paths attempt the same page-table allocations, so under a shared "
            "oracle one fails iff the other does (vmap: the fast path may need fewer, only the "
            "PTE tables of slots it maps with a PMD block); after the caller's unwind the range "
            "is empty since every write lies inside it (frame)",
        ),
        Obligation(
            "flush_covers",
            "global",
            ALL,
            "the flush_cache_vmap() range covers [va, va + N pages): it starts at or before va "
            "and ends at or after va + N pages",
        ),
        Obligation(
            "ub_ffs0",
            "global",
            ("vmap",),
            "UB: __ffs(0) is never evaluated (the PFN-0 guard of get_vmap_batch_order)",
        ),
    )
}


def for_path(path: str) -> list[Obligation]:
    """The obligations of ``path``, in report order."""
    return [o for o in OBLIGATIONS.values() if path in o.paths]


def expected_attrs(path: str, inp: VmapInputs) -> Val:
    """The normalised attributes every leaf of the range must carry (after pgprot_nx for
    vmap and ioremap)."""
    prot = inp.prot if path == "vmalloc" else arch.pgprot_nx(inp.prot)
    return arch.normalise(prot)


def wf(inp: VmapInputs, v: Val, o: Obs, k: Val) -> Cond:
    """WF-block of the leaf covering ``v`` (reference §9 claim 3, and the kernel's CONT rule
    of §2, ``contpte_is_consistent``), checked on entry ``k`` (0..15) of v's 64K group.

    A PMD/PUD leaf: aligned in VA and PA to its size, inside the range, and no PTE_CONT (no
    path writes CONT PMD groups; a block entry with the bit would be one).  A PTE written by
    a CONT step: v's 64K group lies inside the step and the range, and *every* entry of the
    group (entry ``k``, for a symbolic ``k``: the negated claim asks for any) is a valid PTE
    with PTE_CONT, pfn ``base + k`` with ``base`` 64K-aligned, and the attributes of entry 0.
    The entries of the group are those the step covering v writes there
    (:attr:`equiv.vmap.leaves.Leaf.entry_at`): the group lies inside the step, and no other
    write reaches it (the steps of a PTE loop do not overlap, the walks of the batching loop
    neither: lemma ``batch_walks_tile``)."""
    lf = o.leaf
    end = lf.va0 + lf.npages
    inside = bv.and_(bv.ule(end, inp.count), arch.ge(end, lf.va0))
    no_cont = bv.eq(lf.entry & arch.PTE_CONT, 0)
    blk9 = bv.and_(
        bv.eq(va_low(inp, lf.va0, 9), 0), bv.is_aligned(arch.entry_pfn(lf.entry), 9), inside, no_cont
    )
    blk18 = bv.and_(
        bv.eq(va_low(inp, lf.va0, 18), 0), bv.is_aligned(arch.entry_pfn(lf.entry), 18), inside, no_cont
    )
    g = v - bv.zext(va_low(inp, v, 4), 32)
    e0, ek = lf.entry_at(g), lf.entry_at(g + k)
    pfn0 = arch.entry_pfn(e0)
    cont = bv.and_(
        # the 64K group of v lies inside the CONT step and the range (a step reaching past
        # the range is a frame violation)
        arch.ge(g, lf.va0),
        bv.ule(g + 16, end),
        bv.ule(g + 16, inp.count),
        arch.ge(g + 16, g),
        # its first entry maps a 64K-aligned pfn
        bv.is_aligned(pfn0, 4),
        # entry k: valid, PTE_CONT, pfn base + k, the attributes of entry 0
        bv.implies(
            bv.ult(k, 16),
            bv.and_(
                bv.eq(ek & arch.PTE_VALID, arch.PTE_VALID),
                bv.eq(ek & arch.PTE_CONT, arch.PTE_CONT),
                bv.eq(arch.entry_pfn(ek), pfn0 + bv.zext(k, arch.PFN_BITS)),
                bv.eq(arch.normalise(ek), arch.normalise(e0)),
            ),
        ),
    )
    return bv.and_(
        bv.implies(bv.eq(lf.level, arch.LEVEL_PMD), blk9),
        bv.implies(bv.eq(lf.level, arch.LEVEL_PUD), blk18),
        bv.implies(bv.and_(bv.eq(lf.level, arch.LEVEL_PTE), lf.cont), cont),
    )


def claim(name: str, path: str, inp: VmapInputs, slow: Obs, fast: Obs, v: Val) -> Cond:
    """The claim of page obligation ``name`` at page ``v`` (0 <= v < N)."""
    if name == "e_trans":
        p = inp.pages.pfn_at(v)
        attrs = expected_attrs(path, inp)
        return bv.and_(
            bv.not_(bv.eq(slow.leaf.level, arch.LEVEL_NONE)),
            bv.not_(bv.eq(fast.leaf.level, arch.LEVEL_NONE)),
            bv.eq(slow.leaf.pfn, p),
            bv.eq(fast.leaf.pfn, p),
            bv.eq(arch.normalise(slow.leaf.entry), attrs),
            bv.eq(arch.normalise(fast.leaf.entry), attrs),
        )
    if name == "e_enc":
        return bv.and_(bv.eq(slow.leaf.level, fast.leaf.level), bv.eq(slow.leaf.entry, fast.leaf.entry))
    if name == "frame":
        return bv.and_(slow.writes_inside, fast.writes_inside)
    if name == "wf_block":
        if bv.is_sym(v):
            # entry k of v's CONT group, free: the negated claim asks for any of the 16
            return wf(inp, v, fast, z3.BitVec("obs.cont_entry", 32))
        return bv.and_(*[wf(inp, v, fast, bv.const_like(v, k, 32)) for k in range(16)])
    if name == "index_bound":
        return bv.and_(slow.reads_ok, fast.reads_ok)
    if name == "terminates":
        return bv.and_(slow.no_overshoot, fast.no_overshoot)
    if name == "errors_agree":
        o = inp.oracles
        vv = vpn(inp, v)
        absent = {
            "pte": bv.not_(pmd_present(o, vv)),
            "pmd": bv.not_(pud_present(o, vv)),
            "pud": bv.not_(o.pgd_table(bv.extract(vv, arch.VPN_BITS - 1, 27))),
        }
        need = {
            "pte": (slow.needs_pte, fast.needs_pte),
            "pmd": (slow.needs_pmd, fast.needs_pmd),
            "pud": (slow.needs_pud, fast.needs_pud),
        }
        parts: list[Cond] = []
        for lvl, (ns, nf) in need.items():
            if path == "vmap":
                ok = bv.and_(
                    bv.implies(nf, ns),
                    bv.implies(bv.and_(ns, bv.not_(nf)), bv.and_(lvl == "pte", fast.block_slot)),
                )
            else:
                ok = bv.cond_eq(ns, nf)
            parts.append(bv.implies(absent[lvl], ok))
        return bv.and_(*parts)
    raise ValueError(f"{name} is not a page obligation")


# --------------------------------------------------------------------------- concretely


@frozen
class Violation:
    """A concrete violation: the page (index into the range, None if not about one page)
    and what is wrong, in one line."""

    page: int | None
    detail: str


def _attrs(path: str, prot: int) -> int:
    p = prot if path == "vmalloc" else (prot & ~arch.PTE_GP) | arch.PTE_PXN
    return p & ~arch.NORMALISE_MASK


def _wf_page(case: ConcreteCase, rf: Run, i: int) -> str | None:
    va, n = case.va, case.nr_pages
    v = va + i
    lvl, e, va0, npg = rf.leaf(v)
    pfn0 = (e & arch.OA_MASK) >> 12
    if lvl in (arch.LEVEL_PMD, arch.LEVEL_PUD):
        if va0 % npg or pfn0 % npg:
            name = arch.LEVEL_NAMES[lvl]
            return f"{name} block at page {va0 - va} maps pfn {pfn0:#x}: not aligned to its size"
        if va0 < va or va0 + npg > va + n:
            return f"{arch.LEVEL_NAMES[lvl]} block at page {va0 - va} reaches outside the range"
        return None
    if lvl == arch.LEVEL_PTE and e & arch.PTE_CONT:
        g = v & ~15
        es = [rf.pte.get(g + k, 0) for k in range(16)]
        base = (es[0] & arch.OA_MASK) >> 12
        if g < va or g + 16 > va + n:
            return f"CONT group at page {g - va} is not wholly inside the range"
        for k, ek in enumerate(es):
            if not ek & arch.PTE_VALID or not ek & arch.PTE_CONT:
                return f"CONT group at page {g - va}: entry {k} is not a valid CONT PTE"
            if (ek & arch.OA_MASK) >> 12 != base + k or (ek & ~arch.NORMALISE_MASK) != (
                es[0] & ~arch.NORMALISE_MASK
            ):
                return f"CONT group at page {g - va}: entry {k} breaks the consecutive pfns or attributes"
        if base % 16:
            return (
                f"CONT group at page {g - va} starts at pfn {base:#x}, not 64K-aligned "
                "(misprogrammed CONT bit)"
            )
    return None


def violations(name: str, case: ConcreteCase, rs: Run, rf: Run) -> list[Violation]:
    """Every violation of obligation ``name`` in the concrete runs ``rs`` (slow) and ``rf``
    (fast) of ``case``."""
    va, n = case.va, case.nr_pages
    out: list[Violation] = []
    if name == "e_trans":
        pfns = case.pfns()
        want = _attrs(case.path, case.prot)
        for i in range(n):
            for side, r in (("slow", rs), ("fast", rf)):
                lvl, e, _, _ = r.leaf(va + i)
                t = r.translation(va + i)
                if lvl == arch.LEVEL_NONE:
                    out.append(Violation(i, f"{side} path leaves page {i} unmapped"))
                elif t != pfns[i]:
                    out.append(
                        Violation(i, f"{side} path maps page {i} to pfn {t:#x}, pages[{i}] is {pfns[i]:#x}")
                    )
                elif e & ~arch.NORMALISE_MASK != want:
                    out.append(
                        Violation(i, f"{side} path gives page {i} attributes {e & ~arch.NORMALISE_MASK:#x}")
                    )
    elif name == "e_enc":
        for i in range(n):
            ls, lf = rs.leaf(va + i), rf.leaf(va + i)
            if (ls[0], ls[1]) != (lf[0], lf[1]):
                out.append(
                    Violation(
                        i,
                        f"page {i}: slow {arch.LEVEL_NAMES[ls[0]]} {ls[1]:#x}, "
                        f"fast {arch.LEVEL_NAMES[lf[0]]} {lf[1]:#x}",
                    )
                )
    elif name == "frame":
        for side, r in (("slow", rs), ("fast", rf)):
            for what, lo, hi in r.writes:
                if lo < va or hi > va + n:
                    out.append(
                        Violation(
                            None,
                            f"{side} path writes {what} over pages [{lo - va}, {hi - va}) of "
                            "the range: outside it",
                        )
                    )
    elif name == "wf_block":
        for i in range(n):
            d = _wf_page(case, rf, i)
            if d is not None:
                out.append(Violation(i, d))
    elif name == "index_bound":
        for side, r in (("slow", rs), ("fast", rf)):
            bad = sorted({k for k in r.reads if not 0 <= k < n})
            if bad:
                out.append(Violation(None, f"{side} path reads pages[{bad[0]}] (N = {n})"))
    elif name == "terminates":
        for side, r in (("slow", rs), ("fast", rf)):
            for what in r.runaway:
                out.append(Violation(None, f"{side} path: {what}"))
    elif name == "errors_agree":
        a_s, a_f = rs.allocs, rf.allocs
        if case.path == "vmap":
            extra_f = a_f - a_s
            extra_s = {x for x in a_s - a_f if not (x[0] == "pte" and rf.pmd.get(x[1], ("", 0))[0] == "L")}
        else:
            extra_f, extra_s = a_f - a_s, a_s - a_f
        for side, extra in (("fast", extra_f), ("slow", extra_s)):
            for table, slot in sorted(extra):
                what = f"only the {side} path allocates the {table.upper()} table of slot {slot:#x}"
                out.append(Violation(None, what))
        for side, r in (("slow", rs), ("fast", rf)):
            if r.err or r.bugs:
                out.append(
                    Violation(
                        None,
                        f"{side} path fails ({r.err}{'; ' + r.bugs[0] if r.bugs else ''}) "
                        "under P1/P2 with every allocation succeeding",
                    )
                )
    elif name == "flush_covers":
        for side, r in (("slow", rs), ("fast", rf)):
            if r.flush is None or r.flush[0] > va or r.flush[1] < va + n:
                got = "no flush" if r.flush is None else f"pages [{r.flush[0] - va}, {r.flush[1] - va})"
                out.append(Violation(None, f"{side} path flushes {got}, not [0, {n})"))
    elif name == "ub_ffs0":
        for idx in rf.ub:
            out.append(
                Violation(
                    idx,
                    f"__ffs(0): pages[{idx}] has pfn 0 and get_vmap_batch_order() takes "
                    "__ffs of it (undefined behaviour)",
                )
            )
    return out

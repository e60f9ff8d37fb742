"""The leaf a path leaves covering the observed page, built one way for both models.

The exact model (:mod:`equiv.vmap.paths`, loops unrolled) and the local model
(:mod:`equiv.vmap.local`, no loop unrolled) differ in how they find the step or block that
covers the observed page ``v``; what that step or block writes is the same kernel code in
both, and is built here:

* a PTE-loop step (:func:`step_leaf`): ``vmap_set_ptes()``'s ``set_pte_at(pfn_pte(pfn,
  prot))`` or, for a CONT step, ``set_huge_pte_at(arch_make_huge_pte(...), size)``
  (:func:`step_entry`);
* a single PTE of ``vmap_small_pages_range_noflush()`` (:func:`page_leaf`);
* a PMD or PUD block of ``vmap_try_huge_pmd/pud()`` (:func:`block_leaf`);
* no leaf at all (:func:`leaf_none`), and the choice between leaves (:func:`leaf_ite`,
  :func:`leaf_select`).

**Positions** are :data:`OFF`-bit offsets in pages from the start of the range; the page
at position ``x`` is array index ``x + lag`` (:data:`Lag`, :func:`add_lag`: no term at all
for a zero lag), and a step's pfns are the linear extension of the segment holding its
first index (:func:`lagged_pfn`).  Every function runs on z3 terms or on concrete
:class:`equiv.engine.bv.CBV` values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from attrs import frozen

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.vmap import arch
from equiv.vmap.arch import IDX_BITS, LEVEL_NONE, LEVEL_PMD, LEVEL_PTE, PFN_BITS, PMD_PAGES, PUD_PAGES
from equiv.vmap.inputs import PageArray, Seg, VmapInputs

OFF = IDX_BITS  # width of positions (offsets from the range start, in pages)

#: the index lag of a loop: the page at position ``x`` is array index ``x + lag``; None for
#: a zero lag (the kernel's lock step ``*nr``/``addr`` holds)
Lag: TypeAlias = Val | None


def add_lag(x: Val, lag: Lag) -> Val:
    """The array index of position ``x``."""
    return x if lag is None else x + lag


def lagged_pfn(sg: Seg, lag: Lag) -> Callable[[Val], Val]:
    """Position ``p``'s pfn in segment ``sg`` (array index ``p + lag``)."""
    return lambda p: sg.pfn(add_lag(p, lag))


def ioremap_seg(inp: VmapInputs) -> Seg:
    """ioremap's physical range as one segment over every index (``phys += next - addr``
    at every level: one physically linear source, whatever the bound)."""
    top = bv.const_like(inp.a, (1 << IDX_BITS) - 1, IDX_BITS)
    assert isinstance(inp.pages, PageArray)  # ioremap: one segment, whatever the bound
    return Seg(off=inp.pages.base[0], start=bv.const_like(inp.a, 0, IDX_BITS), end=top, chain_end=top)


@frozen(kw_only=True, eq=False)
class Leaf:
    """The leaf a path leaves covering the observed page: its level (``arch.LEVEL_*``), its
    entry (a PTE: the page's own PTE; a block: the block entry), the pfn it maps the page to,
    the first position and size (pages) of the block or of the CONT step that wrote it, and
    whether that step is a CONT step (``set_huge_pte_at``), and ``entry_at``: the entry the
    same write leaves at any position ``p`` of ``[va0, va0 + npages)`` (a block: its one
    entry; a step: the PTE it writes there), so that WF-block can check every entry of the
    observed page's CONT group, not only the observed one."""

    level: Val  # 2 bits
    entry: Val
    pfn: Val
    va0: Val
    npages: Val
    cont: Cond
    entry_at: Callable[[Val], Val]


def step_entry(
    pfn_of: Callable[[Val], Val], prot: Val, cont: Cond, va0: Val, size: Val, cont_every: bool
) -> Callable[[Val], Val]:
    """The PTE a PTE-loop step from ``va0`` of ``size`` pages writes at position ``p``:
    ``pfn_pte(pfn, prot)``, and for a CONT step (``cont``) ``set_huge_pte_at(...,
    arch_make_huge_pte(pfn_pte(pfn, prot)), size)``: ``pte_mkcont`` on every one of its
    ``size`` PTEs, the pfn advancing by one per PTE (arch/arm64/mm/hugetlbpage.c POST-HT).
    ``cont_every`` False is seeded bug X5: the last PTE of the step lacks PTE_CONT."""

    def at(p: Val) -> Val:
        pte = arch.pfn_pte(pfn_of(p), prot)
        mk: Cond = cont if cont_every else bv.and_(cont, bv.not_(bv.eq(p, va0 + size - 1)))
        return bv.ite(mk, arch.pte_mkcont(pte), pte)

    return at


def step_leaf(
    *, v: Val, va0: Val, pfn_of: Callable[[Val], Val], prot: Val, cont: Cond, size: Val, cont_every: bool
) -> Leaf:
    """The PTE a PTE-loop step from ``va0`` writes for the observed page ``v`` (``pfn_of(p)``:
    the pfn the step writes at position ``p``): ``vmap_set_ptes()`` (mm/vmalloc.c POST-C1)
    writes ``pfn_pte(pfn, prot)``, and when the step is a CONT step (``cont``) ``size``
    PTEs with ``pte_mkcont``, one page otherwise; ``entry_at`` gives the step's PTE at any
    of its positions (:func:`step_entry`; ``cont_every`` False: seeded bug X5)."""
    pfn = pfn_of(v)
    npages = bv.ite(cont, size, bv.const_like(v, 1, OFF))
    entry_at = step_entry(pfn_of, prot, cont, va0, npages, cont_every)
    return Leaf(
        level=bv.const_like(v, LEVEL_PTE, 2),
        entry=entry_at(v),
        pfn=pfn,
        va0=va0,
        npages=npages,
        cont=cont,
        entry_at=entry_at,
    )


def page_leaf(inp: VmapInputs, v: Val, prot: Val) -> Leaf:
    """The one PTE ``vmap_small_pages_range_noflush()`` (mm/vmalloc.c BASE-C) writes for
    page ``v``: ``set_pte_at(..., mk_pte(pages[v], prot))`` (``*nr`` and ``addr`` advance
    together, so page ``v`` gets ``pages[v]``)."""
    pfn = inp.pages.pfn_at(v)
    entry = arch.pfn_pte(pfn, prot)
    return Leaf(
        level=bv.const_like(v, LEVEL_PTE, 2),
        entry=entry,
        pfn=pfn,
        va0=v,
        npages=bv.const_like(v, 1, OFF),
        cont=False,
        entry_at=lambda _p: entry,
    )


def block_leaf(level: int, va0: Val, v: Val, sel: Seg, lag: Lag, prot: Val) -> Leaf:
    """The block ``pmd_set_huge()`` / ``pud_set_huge()`` (arch/arm64/mm/mmu.c, 6.12) write
    for the slot from ``va0`` (``level``: ``LEVEL_PMD`` or ``LEVEL_PUD``):
    ``pfn_pmd(__phys_to_pfn(phys), mk_pmd_sect_prot(prot))`` with ``phys`` the block's
    first pfn (``vmap_try_huge_pmd/pud``'s ``phys_addr``), taken from segment ``sel``."""
    npages = PMD_PAGES if level == LEVEL_PMD else PUD_PAGES
    entry = arch.pfn_pte(sel.pfn(add_lag(va0, lag)), arch.mk_sect_prot(prot))
    return Leaf(
        level=bv.const_like(va0, level, 2),
        entry=entry,
        pfn=sel.pfn(add_lag(v, lag)),
        va0=va0,
        npages=bv.const_like(va0, npages, OFF),
        cont=False,
        entry_at=lambda _p: entry,
    )


def leaf_none(like: Val) -> Leaf:
    """No leaf (the page is unmapped)."""
    z = bv.const_like(like, 0, OFF)
    zero = bv.const_like(like, 0, arch.ENTRY_BITS)
    return Leaf(
        level=bv.const_like(like, LEVEL_NONE, 2),
        entry=zero,
        pfn=bv.const_like(like, 0, PFN_BITS),
        va0=z,
        npages=z,
        cont=False,
        entry_at=lambda _p: zero,
    )


def leaf_ite(c: Cond, a: Leaf, b: Leaf) -> Leaf:
    """``c ? a : b`` field by field."""
    return Leaf(
        level=bv.ite(c, a.level, b.level),
        entry=bv.ite(c, a.entry, b.entry),
        pfn=bv.ite(c, a.pfn, b.pfn),
        va0=bv.ite(c, a.va0, b.va0),
        npages=bv.ite(c, a.npages, b.npages),
        cont=bv.ite_cond(c, a.cont, b.cont),
        entry_at=lambda p: bv.ite(c, a.entry_at(p), b.entry_at(p)),
    )


def leaf_select(cases: list[tuple[Cond, Leaf]], default: Leaf) -> Leaf:
    """The leaf of the first case that holds."""

    def pick(f: Callable[[Leaf], Val]) -> Val:
        return bv.select([(c, f(lf)) for c, lf in cases], f(default))

    return Leaf(
        level=pick(lambda x: x.level),
        entry=pick(lambda x: x.entry),
        pfn=pick(lambda x: x.pfn),
        va0=pick(lambda x: x.va0),
        npages=pick(lambda x: x.npages),
        cont=bv.select_cond([(c, lf.cont) for c, lf in cases], default.cont),
        entry_at=lambda p: bv.select([(c, lf.entry_at(p)) for c, lf in cases], default.entry_at(p)),
    )

"""Other slow paths, compared with the v7.3-rc1 base: refactors and an older kernel.

``--compare NAME`` proves (or refutes, with counterexamples) that a variant of the slow path
leaves the same final memory as the base slow path (:mod:`equiv.slow_path`):

* ``v5-helper-split`` — series v5 patch 2/8 "factor zone-device page init helpers" (25-new
  @ebb5a9e4): ``zone_device_page_init_slow()`` = ``__zone_device_page_init()`` +
  ``if (!pagemap_resets_refcount(pgmap)) set_page_count(page, 0)`` at both call sites.
  Claimed "no functional change".
* ``pre-section-helper`` — the slow path before v11 patch 2 "add set_page_section_from_pfn()":
  ``set_page_links()`` with the open-coded ``#ifdef SECTION_IN_PAGE_FLAGS set_page_section(page,
  pfn_to_section_nr(pfn))``.  Claimed "no functional change"; meaningful on the
  section-in-flags preset.
* ``v6.12`` — mm/mm_init.c of v6.12 (TV@2ebc3b68 as quoted in the reference): pageblock
  migratetype set per page in ``__init_zone_device_page`` when ``pageblock_aligned(pfn)``;
  only PRIVATE and COHERENT pages reset to refcount 0 [M: the 6.12 condition as recalled];
  ``prep_compound_tail(head, pfn - head_pfn)`` and ``prep_compound_head()`` inside the tail
  loop right after tail 1; ``compound_nr_pages(altmap, pgmap)`` without the early-section
  test.  Differences from the base are expected and are what a reviewer wants listed.
  The 6.12 logic runs on the v7.3 struct page layout and encodings, so the comparison is of
  behaviour, not of 6.12's own bytes: checked against the real 6.12.117 text (``--linux``),
  6.12 writes ``head + 1`` in the compound head word, the 6.12 folio page[1] fields at their
  6.12 offsets, and masks only migratetype bits 0..2; that exact kernel is modelled in
  :mod:`equiv.zone_device.source.slow_v612y` and proved equal to the tree's text.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.engine.errors import lookup
from equiv.loops import Carry, Ctx, block_loop
from equiv.memmap import (
    MIGRATE_MOVABLE,
    VMEMMAP_RESERVE_NR,
    Inputs,
    MemoryType,
    Scenario,
    compound_frame,
    geometry,
    page_addr,
    pfn_of,
    tail_frame,
    with_vmemmap,
)
from equiv.page_model import Layout, Memory, PageState, ite_page, sym_ite_mem
from equiv.slow_path import (
    InitFn,
    TailFn,
    early_return,
    flags_field,
    init_pageblock_migratetype,
    init_zone_device_page,
    memmap_init_compound,
    memmap_init_zone_device,
    pagemap_resets_refcount,
    prep_compound_head,
    prep_compound_tail,
    reset_refcount_unless,
    set_head,
    set_page_count,
    zone_device_page_init_common,
)

PathFn = Callable[[Ctx, Scenario, Inputs], Memory]


@frozen
class Comparison:
    """A slow-path variant and what is claimed about it."""

    name: str
    summary: str
    claim: str  # "no functional change" or "differences expected"
    path: PathFn
    assumptions: tuple[str, ...] = ()
    #: the changes between the two that explain the expected counterexamples
    differences: tuple[str, ...] = ()


# ---- v5 helper split ---------------------------------------------------------------------


def zone_device_page_init_slow(sc: Scenario, inp: Inputs, page: PageState, pfn: Val) -> PageState:
    """v5: ``__zone_device_page_init()`` then ``if (!pagemap_resets_refcount(pgmap))
    set_page_count(page, 0)``."""
    step = "zone_device_page_init_slow"
    page = zone_device_page_init_common(sc, inp, page, pfn, f"{step}: __zone_device_page_init")
    return reset_refcount_unless(sc, inp, page, f"{step}: set_page_count(page, 0)")


def _generic_path(init: InitFn, tail_fn: TailFn | None = None, tail_end_delta: int = 0,
                  heads_end_delta: int = 0) -> PathFn:
    """The base slow path with another per-page init (both call sites) and, optionally,
    another tail-loop body in memmap_init_compound or another end of its loops."""

    def run(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
        return memmap_init_zone_device(ctx, sc, inp, init=init, tail_fn=tail_fn,
                                       tail_end_delta=tail_end_delta,
                                       heads_end_delta=heads_end_delta)

    return run


# ---- before set_page_section_from_pfn ---------------------------------------------------------


def set_page_links_open_coded(L: Layout, page: PageState, zone: int, nid: Val, pfn: Val) -> PageState:
    """``set_page_links()`` before v11 patch 2: zone, node, then the open-coded
    ``#ifdef SECTION_IN_PAGE_FLAGS set_page_section(page, pfn_to_section_nr(pfn)) #endif``."""
    page = flags_field(L, page, "ZONES", zone, "set_page_links: set_page_zone")
    page = flags_field(L, page, "NODES", nid, "set_page_links: set_page_node")
    if L.config.section_in_page_flags:
        page = flags_field(L, page, "SECTIONS", bv.lshr(pfn, L.config.pfn_section_shift),
                           "set_page_links: set_page_section")
    return page


def _init_pre_section_helper(sc: Scenario, inp: Inputs, page: PageState, pfn: Val) -> PageState:
    """``__init_zone_device_page`` whose ``__init_single_page`` uses the open-coded links."""
    return init_zone_device_page(sc, inp, page, pfn, set_page_links_open_coded)


# ---- v6.12 ----------------------------------------------------------------------------------


def _resets_612(sc: Scenario, inp: Inputs) -> Cond:
    """6.12: ``if (pgmap->type == MEMORY_DEVICE_PRIVATE || pgmap->type == MEMORY_DEVICE_COHERENT)
    set_page_count(page, 0)`` [M]."""
    zeroing = (MemoryType.PRIVATE, MemoryType.COHERENT)
    if sc.ptype is not None:
        return sc.ptype in zeroing
    return bv.or_(*(bv.eq(inp.pgmap_type, bv.const_like(inp.pgmap_type, int(t), 32)) for t in zeroing))


def _init_612(ctx: Ctx, sc: Scenario, inp: Inputs, m: Memory, c: Val, s: Val, pfn: Val) -> Memory:
    """6.12 ``__init_zone_device_page``: single-page init, PG_reserved, pgmap,
    zone_device_data, refcount 0 for PRIVATE/COHERENT, and ``if (pageblock_aligned(pfn))
    set_pageblock_migratetype(page, MIGRATE_MOVABLE)`` on the bitmap."""
    L, cfg = sc.layout, sc.layout.config
    step = "__init_zone_device_page (6.12)"
    page = zone_device_page_init_common(sc, inp, m.read(c, s), pfn, step)
    zero = _resets_612(sc, inp)
    zeroed = set_page_count(L, page, 0, f"{step}: set_page_count(page, 0)", inp)
    page = zeroed if zero is True else page if zero is False else ite_page(zero, zeroed, page)
    m = m.write(c, s, page)
    po = cfg.PAGEBLOCK_ORDER
    aligned = bv.eq(pfn & ((1 << po) - 1), 0)
    b = bv.lshr(pfn, po)

    def set_block() -> Memory:
        with ctx.assuming(aligned if not isinstance(aligned, bool) else True):
            cell = init_pageblock_migratetype(sc, inp, m.read_pb(b), MIGRATE_MOVABLE)
        return m.write_pb(b, cell)

    if isinstance(aligned, bool):
        return set_block() if aligned else m
    return sym_ite_mem(aligned, set_block(), m)


def _path_612(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
    cfg = sc.layout.config

    def rest() -> Memory:
        g = geometry(sc, inp)
        po = cfg.PAGEBLOCK_ORDER

        def block_of_heads(b: Val) -> tuple[Cond, Val]:
            return True, bv.lshr((b << po) - g.start, sc.order_v)

        def head(m: Memory, carry: Carry, c: Val) -> tuple[Memory, Carry]:
            s0 = bv.const_like(c, 0)
            head_pfn = pfn_of(sc, g, c, s0)
            m = _init_612(ctx, sc, inp, m, c, s0, head_pfn)
            if not sc.order_at_least(1):  # pfns_per_compound == 1
                return m, carry
            # compound_nr_pages(altmap, pgmap): no early-section test in 6.12
            full = sc.stride_like(c)
            if sc.can_optimize_static:
                nr = bv.ite(inp.altmap_valid, full,
                            bv.const_like(c, VMEMMAP_RESERVE_NR * sc.per_vmemmap_page))
            else:
                nr = full
            head_addr = page_addr(sc, inp, head_pfn)
            m = set_head(sc, m, c)

            def one_tail(mm: Memory, t: Val) -> Memory:
                mm = _init_612(ctx, sc, inp, mm, c, t, pfn_of(sc, g, c, t))
                page = prep_compound_tail(sc, mm.read(c, t), head_addr)
                page = set_page_count(sc.layout, page, 0, "memmap_init_compound: set_page_count(page, 0)",
                              inp)
                return mm.write(c, t, page)

            def tail(mm: Memory, cr: Carry, t: Val) -> tuple[Memory, Carry]:
                return one_tail(mm, t), cr

            def tail_pb(b: Val) -> tuple[Cond, Val]:
                return True, (b << po) - head_pfn

            # the 6.12 loop runs prep_compound_head in its first iteration (pfn == head_pfn + 1),
            # which writes page[2] before iteration 2 re-initialises it: the first iteration is
            # peeled off so every remaining iteration touches only its own struct page
            m = one_tail(m, bv.const_like(c, 1))
            m = prep_compound_head(sc, inp, g, m, c)
            m, _ = block_loop(ctx, "memmap_init_compound.tails (6.12)", m, bv.const_like(c, 2), nr,
                              (), tail, tail_frame(sc, c, tail_pb))
            return m, carry

        out, _ = block_loop(ctx, "memmap_init_zone_device.heads (6.12)", inp.mem,
                            bv.const_like(g.start, 0), g.ncompounds, (), head,
                            compound_frame(sc, g, block_of_heads))
        return out

    inp = with_vmemmap(sc, inp)
    return early_return(bv.eq(inp.pgmap, 0), inp.mem, rest, ctx)


# ---- seeded slow-path bugs (refactors that break it; used by the self-test) ------------------


def _tail_count_first(sc: Scenario, inp: Inputs, page: PageState, pfn: Val, head: Val) -> PageState:
    """set_page_count(page, 0) moved before __init_zone_device_page (which sets it again)."""
    page = set_page_count(sc.layout, page, 0, "memmap_init_compound: set_page_count(page, 0)", inp)
    return prep_compound_tail(sc, init_zone_device_page(sc, inp, page, pfn), head)


def _tail_prep_first(sc: Scenario, inp: Inputs, page: PageState, pfn: Val, head: Val) -> PageState:
    """prep_compound_tail moved before __init_zone_device_page (which zeroes the page)."""
    page = prep_compound_tail(sc, page, head)
    page = init_zone_device_page(sc, inp, page, pfn)
    return set_page_count(sc.layout, page, 0, "memmap_init_compound: set_page_count(page, 0)", inp)


def _init_split_inverted(sc: Scenario, inp: Inputs, page: PageState, pfn: Val) -> PageState:
    """The helper split with the policy test inverted: ``if (pagemap_resets_refcount(pgmap))``."""
    step = "zone_device_page_init_slow"
    page = zone_device_page_init_common(sc, inp, page, pfn, f"{step}: __zone_device_page_init")
    zeroed = set_page_count(sc.layout, page, 0, f"{step}: set_page_count(page, 0)", inp)
    keeps = pagemap_resets_refcount(sc, inp)
    if isinstance(keeps, bool):
        return zeroed if keeps else page
    return ite_page(keeps, zeroed, page)


COMPARISONS: dict[str, Comparison] = {c.name: c for c in (
    Comparison("v5-helper-split", "series v5 patch 2/8: zone_device_page_init_slow + "
               "pagemap_resets_refcount at both call sites", "no functional change",
               _generic_path(zone_device_page_init_slow)),
    Comparison("pre-section-helper", "set_page_links before v11 patch 2 (open-coded "
               "SECTION_IN_PAGE_FLAGS)", "no functional change",
               _generic_path(_init_pre_section_helper)),
    Comparison("slow-count-before-init", "seeded bug: memmap_init_compound calls "
               "set_page_count(page, 0) before __init_zone_device_page", "seeded bug",
               _generic_path(zone_device_page_init_slow, _tail_count_first)),
    Comparison("slow-prep-tail-before-init", "seeded bug: prep_compound_tail before "
               "__init_zone_device_page, whose zeroing undoes it", "seeded bug",
               _generic_path(zone_device_page_init_slow, _tail_prep_first)),
    Comparison("slow-split-inverted", "seeded bug: the v5 helper split with "
               "`if (pagemap_resets_refcount(pgmap))` inverted", "seeded bug",
               _generic_path(_init_split_inverted)),
    Comparison("slow-tail-loop-one-past", "seeded bug: memmap_init_compound's tail loop runs "
               "`pfn <= head_pfn + nr_pages`, one struct page past its compound", "seeded bug",
               _generic_path(init_zone_device_page, tail_end_delta=1)),
    Comparison("slow-heads-loop-one-past", "seeded bug: memmap_init_zone_device's heads loop "
               "runs `pfn <= end_pfn`, one compound past the range", "seeded bug",
               _generic_path(init_zone_device_page, heads_end_delta=1)),
    Comparison("v6.12", "mm/mm_init.c of v6.12: per-page pageblock migratetype, PRIVATE/COHERENT "
               "refcount 0, prep_compound_head inside the tail loop, no early-section test",
               "differences expected", _path_612,
               ("6.12 refcount policy: only PRIVATE and COHERENT reset to 0 [M; confirmed by "
                "the 6.12.117 text, mm/mm_init.c:1027-1029]",
                "6.12 set_pageblock_migratetype modelled like init_pageblock_migratetype [M]",
                "6.12's logic run on the v7.3 struct page layout and encodings (compound_info "
                "order mask, 2026 folio page[1] fields, pageblock mask): a comparison of what "
                "the two kernels' code does, not of 6.12's bytes; the 6.12.y text with its own "
                "layout is proved against equiv/zone_device/source/slow_v612y.py by --linux"),
               ("_refcount of FS_DAX and PCI_P2PDMA pages: 6.12 left FS_DAX and "
                "PCI_P2PDMA at 1; v7.3 resets every type but GENERIC (v11 patch 1 fixes the "
                "comment that grouped FS_DAX with GENERIC)",
                "page[2] _deferred_list (order >= 2): 6.12 ran prep_compound_head inside the tail "
                "loop after tail 1, so initialising tail 2 overwrote the list head with "
                "zone_device_data = NULL and TAIL_MAPPING; v7.3 runs it after the loop",
                "pageblock bitmap: 6.12 set MIGRATE_MOVABLE per aligned pfn it initialised, so "
                "pageblocks of a deduplicated compound past its 128 written struct pages were "
                "missed (Muchun Song's fix: pageblock_migratetype_init_range over the range)",
                "tails of a compound in an early section: 6.12's compound_nr_pages() had no "
                "early_section() test and wrote only 128 struct pages of a memmap that is not "
                "deduplicated (Muchun Song's fix, Fixes 6fd3620b3428)")),
)}


def comparison(name: str) -> Comparison:
    """Look a comparison up by name.

    Raises:
        InputError: unknown name; the message lists the valid ones.
    """
    return lookup(COMPARISONS, name, "--compare")


__all__ = ["COMPARISONS", "Comparison", "comparison", "memmap_init_compound"]

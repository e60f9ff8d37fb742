"""The 6.12 stable slow path (6.12.117, Debian's ``linux-source-6.12``), written by hand.

Mirrors, in linux-source-6.12 6.12.117-1~deb12u1: ``__init_zone_device_page`` (mm/mm_init.c:993),
``compound_nr_pages`` (:1034, with the backported early_section() test),
``memmap_init_compound`` (:1050), ``memmap_init_zone_device`` (:1077, ending in the backported
``pageblock_migratetype_init_range``, :655), ``prep_compound_head`` / ``prep_compound_tail`` /
``folio_set_order`` (mm/internal.h:709 / :722 / :672), ``set_compound_head``
(include/linux/page-flags.h:853) and the struct folio of include/linux/mm_types.h:327.

It differs from ``--compare v6.12`` (:func:`equiv.slow_variants._path_612`, the v6.12 *release*
as recalled in the reference) where the 6.12.117 text is unambiguous:

* 6.12.y carries Muchun Song's two fixes (Cc stable): ``compound_nr_pages(pfn, altmap, pgmap)``
  tests ``early_section()`` (mm_init.c:1043) and the pageblock migratetype is set once over
  the range by ``pageblock_migratetype_init_range()`` (mm_init.c:1118), not per page;
* ``prep_compound_head()`` of 6.12 writes ``_large_mapcount``, ``_entire_mapcount``,
  ``_nr_pages_mapped``, ``_pincount`` unconditionally (internal.h:714-717) and
  ``folio_set_order()`` writes ``_folio_nr_pages`` (internal.h:679), in the 6.12 struct folio:
  ``_entire_mapcount`` @+20, ``_nr_pages_mapped`` @+24, ``_folio_nr_pages`` @+32 of page[1]
  (mm_types.h:372-377); there are no ``_mm_ids`` / ``_mm_id_mapcount`` / ``_nr_pages``;
* ``set_compound_head()`` stores ``head + 1`` (page-flags.h:855): 6.12 has no mask encoding;
* ``set_pageblock_migratetype()`` (mm/page_alloc.c:446) masks ``MIGRATETYPE_MASK`` (bits 0..2,
  pageblock-flags.h:16), not the 2026 ``MIGRATETYPE_AND_ISO_MASK``.

The refcount policy, PRIVATE and COHERENT to 0 and the other types kept at 1, is what
``_path_612`` assumed [M]; the text confirms it (mm_init.c:1027-1029).
"""

from __future__ import annotations

from attrs import evolve

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.loops import Carry, Ctx, block_loop
from equiv.memmap import (
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
from equiv.page_model import PB_BITS, Layout, Memory, PageState, PG_head, View, atoms_of, ite_page
from equiv.slow_path import (
    U32_MINUS_1,
    compound_nr_pages,
    early_return,
    pageblock_migratetype_init_range,
    set_head,
    set_page_count,
    zone_device_page_init_common,
)

#: ``MIGRATETYPE_MASK`` of 6.12: ``(1UL << PB_migratetype_bits) - 1`` (pageblock-flags.h:16).
MIGRATETYPE_MASK_612 = 0x7

_FOLIO1_612 = (("_flags_1", 0, 8), ("_head_1", 8, 8), ("_large_mapcount", 16, 4),
               ("_entire_mapcount", 20, 4), ("_nr_pages_mapped", 24, 4), ("_pincount", 28, 4),
               ("_folio_nr_pages", 32, 4))


def layout_612(cfg_layout: Layout) -> Layout:
    """struct page as the 2026 model lays it out (unchanged since 6.12 for the fields the
    path writes) with the 6.12 struct folio overlay of page[1] (mm_types.h:367-382), its
    views under 6.12's names (:meth:`~equiv.page_model.Layout.named_for`)."""
    views = [v for v in cfg_layout.views if v.page != 1]
    views += [View(n, o, s, 1) for n, o, s in _FOLIO1_612]
    vs = tuple(views)
    return Layout(config=cfg_layout.config, flags=cfg_layout.flags, size=cfg_layout.size,
                  views=vs, atoms=atoms_of(vs, cfg_layout.size)).named_for("6.12")


def scenario_612(sc: Scenario) -> Scenario:
    """``sc`` with the 6.12 layout."""
    return evolve(sc, layout=layout_612(sc.layout))


def _resets(sc: Scenario, inp: Inputs) -> Cond:
    """``pgmap->type == MEMORY_DEVICE_PRIVATE || pgmap->type == MEMORY_DEVICE_COHERENT``
    (mm_init.c:1027-1028)."""
    zeroing = (MemoryType.PRIVATE, MemoryType.COHERENT)
    if sc.ptype is not None:
        return sc.ptype in zeroing
    return bv.or_(*(bv.eq(inp.pgmap_type, bv.const_like(inp.pgmap_type, int(t), 32)) for t in zeroing))


def init_zone_device_page_612(sc: Scenario, inp: Inputs, page: PageState, pfn: Val) -> PageState:
    """``__init_zone_device_page()`` of 6.12.117 (mm_init.c:993)."""
    step = "__init_zone_device_page (6.12.y)"
    page = zone_device_page_init_common(sc, inp, page, pfn, step)
    zero = _resets(sc, inp)
    zeroed = set_page_count(sc.layout, page, 0, f"{step}: set_page_count(page, 0)", inp)
    return ite_page(zero, zeroed, page)


def prep_compound_tail_612(sc: Scenario, tail: PageState, head_addr: Val) -> PageState:
    """``prep_compound_tail(head, tail_idx)`` of 6.12 (internal.h:722): mapping =
    TAIL_MAPPING, ``set_compound_head(p, head)`` = ``head + 1``, private = 0."""
    L = sc.layout
    tail = tail.set(L, "mapping", 0x400 + L.config.POISON_POINTER_DELTA,
                    "prep_compound_tail (6.12): mapping = TAIL_MAPPING")
    tail = tail.set(L, "compound_info", head_addr + 1, "prep_compound_tail (6.12): set_compound_head")
    return tail.set(L, "private", 0, "prep_compound_tail (6.12): set_page_private(p, 0)")


def prep_compound_head_612(sc: Scenario, inp: Inputs, mem: Memory, c: Val, head_pfn: Val) -> Memory:
    """``prep_compound_head(page, order)`` of 6.12 (internal.h:709-720)."""
    L, order = sc.layout, sc.order_v
    one, two = bv.const_like(c, 1), bv.const_like(c, 2)
    head = mem.read(c, bv.const_like(c, 0))
    p1 = mem.read(c, one)
    large = bv.ne(head.get(L, "flags") & (1 << PG_head), 0)
    step = "prep_compound_head (6.12): folio_set_order"
    p1s = p1.set(L, "_flags_1", (p1.get(L, "_flags_1", 1) & ~0xFF) | order, step, 1)
    p1s = p1s.set(L, "_folio_nr_pages", sc.nr_pages_u32, step, 1)  # CONFIG_64BIT: 1U << order
    p1 = ite_page(bv.and_(sc.order_at_least(1), large), p1s, p1)
    step = "prep_compound_head (6.12)"
    p1 = p1.set(L, "_large_mapcount", U32_MINUS_1, f"{step}: _large_mapcount = -1", 1)
    p1 = p1.set(L, "_entire_mapcount", U32_MINUS_1, f"{step}: _entire_mapcount = -1", 1)
    p1 = p1.set(L, "_nr_pages_mapped", 0, f"{step}: _nr_pages_mapped = 0", 1)
    p1 = p1.set(L, "_pincount", 0, f"{step}: _pincount = 0", 1)
    mem = mem.write(c, one, p1)
    if sc.order_at_least(2):
        p2 = mem.read(c, two)
        lst = page_addr(sc, inp, head_pfn + 2) + 16
        p2 = p2.set(L, "_deferred_list.next", lst, f"{step}: INIT_LIST_HEAD(_deferred_list)", 2)
        p2 = p2.set(L, "_deferred_list.prev", lst, f"{step}: INIT_LIST_HEAD(_deferred_list)", 2)
        mem = mem.write(c, two, p2)
    return mem


def set_pageblock_migratetype_612(inp: Inputs, cell: Val, mt: int) -> Val:
    """``set_pageblock_migratetype(page, mt)`` of 6.12 (page_alloc.c:446): UNMOVABLE when
    grouping by mobility is disabled (MIGRATE_MOVABLE < MIGRATE_PCPTYPES), then the
    migratetype into bits 0..2."""
    mt_v = bv.ite(inp.mobility_disabled, bv.const_like(cell, 0, PB_BITS),
                  bv.const_like(cell, mt, PB_BITS))
    return (cell & ~MIGRATETYPE_MASK_612) | mt_v


def path_612y(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
    """``memmap_init_zone_device()`` of 6.12.117 (mm_init.c:1077).  ``sc`` must carry the 6.12
    layout (:func:`scenario_612`)."""

    def rest() -> Memory:
        g = geometry(sc, inp)

        def head(m: Memory, carry: Carry, c: Val) -> tuple[Memory, Carry]:
            s0 = bv.const_like(c, 0)
            head_pfn = pfn_of(sc, g, c, s0)
            m = m.write(c, s0, init_zone_device_page_612(sc, inp, m.read(c, s0), head_pfn))
            if not sc.order_at_least(1):  # pfns_per_compound == 1
                return m, carry
            nr, _opt = compound_nr_pages(sc, inp, head_pfn)
            head_addr = page_addr(sc, inp, head_pfn)
            m = set_head(sc, m, c)

            def one_tail(mm: Memory, t: Val) -> Memory:
                page = init_zone_device_page_612(sc, inp, mm.read(c, t), pfn_of(sc, g, c, t))
                page = prep_compound_tail_612(sc, page, head_addr)
                page = set_page_count(sc.layout, page, 0,
                                      "memmap_init_compound (6.12): set_page_count(page, 0)", inp)
                return mm.write(c, t, page)

            def tail(mm: Memory, cr: Carry, t: Val) -> tuple[Memory, Carry]:
                return one_tail(mm, t), cr

            # prep_compound_head runs in the first iteration (pfn == head_pfn + 1): peeled
            m = one_tail(m, bv.const_like(c, 1))
            m = prep_compound_head_612(sc, inp, m, c, head_pfn)
            m, _ = block_loop(ctx, "memmap_init_compound.tails (6.12.y)", m, bv.const_like(c, 2),
                              nr, (), tail, tail_frame(sc, c))
            return m, carry

        out, _ = block_loop(ctx, "memmap_init_zone_device.heads (6.12.y)", inp.mem,
                            bv.const_like(g.start, 0), g.ncompounds, (), head, compound_frame(sc, g))
        # pageblock_migratetype_init_range() of 6.12.117 (mm_init.c:655), with 6.12's
        # set_pageblock_migratetype() on each block
        return pageblock_migratetype_init_range(
            ctx, sc, inp, out, g.start, g.nr_pages, set_block=set_pageblock_migratetype_612,
            loop="pageblock_migratetype_init_range (6.12.y)")

    inp = with_vmemmap(sc, inp)
    return early_return(bv.eq(inp.pgmap, 0), inp.mem, rest, ctx)


__all__ = ["init_zone_device_page_612", "layout_612", "path_612y", "prep_compound_head_612",
           "prep_compound_tail_612", "scenario_612", "set_pageblock_migratetype_612"]

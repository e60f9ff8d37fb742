"""The slow path: per-pfn initialisation of ZONE_DEVICE struct pages, base v7.3-rc1.

Each function mirrors the kernel function of the same name in the v7.3-rc1 tree as
listed in docs/model.md (mm/mm_init.c LMM@00f68374 with
Muchun Song's pageblock and compound_nr_pages fixes from akpm's 25-new @a8d6729b,
mm/internal.h and include/linux/mm.h LMM@009857a2, include/linux/page-flags.h and
include/linux/page_ref.h LMM@03e0599d).  Functions on one struct page are pure
``PageState -> PageState``; functions on the memmap are ``Memory -> Memory``.  Each store
names its kernel step; the concrete replay keeps it as provenance.

Not modelled (no effect on memory): ``cond_resched()``, ``pr_debug``, the ``page_ref_set``
tracepoint events (see :func:`set_page_count`), ``VM_BUG_ON``/``WARN`` reporting (their
control-flow effect, returning early, is modelled).
"""

from __future__ import annotations

from collections.abc import Callable

import z3

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.loops import Carry, Ctx, Owner, block_loop, never
from equiv.memmap import (
    MIGRATE_MOVABLE,
    MIGRATETYPE_AND_ISO_MASK,
    VMEMMAP_RESERVE_NR,
    Geometry,
    Inputs,
    MemoryType,
    Scenario,
    compound_frame,
    deduplicated,
    geometry,
    page_addr,
    pfn_of,
    tail_frame,
    va,
    with_vmemmap,
)
from equiv.page_model import (
    PB_BITS,
    Layout,
    Memory,
    PageState,
    PG_head,
    PG_reserved,
    ite_page,
    sym_ite_mem,
)

U32_MINUS_1 = 0xFFFFFFFF

# ---- helpers on one struct page (include/linux/mm.h, page_ref.h, page-flags.h) ----------


def mm_zero_struct_page(L: Layout, page: PageState) -> PageState:
    """``mm_zero_struct_page()``: 64-bit ``__mm_zero_struct_page`` stores 0 to every word
    of the 56..96-byte struct (mm.h switch on sizeof(struct page)); every byte becomes 0."""
    if page.size != L.size:
        raise ValueError(f"page of {page.size} bytes for a {L.size}-byte struct page")
    return page.zeroed("__init_single_page: mm_zero_struct_page")


def flags_field(L: Layout, page: PageState, name: str, value: Val | int, step: str) -> PageState:
    """``set_page_zone/node/section``: ``f &= ~(X_MASK << X_PGSHIFT); f |= (v & X_MASK) << X_PGSHIFT``."""
    fld = L.flags.get(name)
    f = page.get(L, "flags")
    f = f & ~(fld.mask << fld.pgshift)
    f = f | ((value & fld.mask) << fld.pgshift)
    return page.set(L, "flags", f, step)


def set_page_section_from_pfn(L: Layout, page: PageState, pfn: Val, step: str) -> PageState:
    """``set_page_section_from_pfn()`` (series patch 2, mm.h): under SECTION_IN_PAGE_FLAGS
    ``set_page_section(page, pfn_to_section_nr(pfn))``, otherwise an empty inline."""
    if not L.config.section_in_page_flags:
        return page
    nr = bv.lshr(pfn, L.config.pfn_section_shift)
    return flags_field(L, page, "SECTIONS", nr, step)


def set_page_links(L: Layout, page: PageState, zone: int, nid: Val, pfn: Val) -> PageState:
    """``set_page_links()`` (mm.h): zone bits, node bits, then section bits if in flags."""
    page = flags_field(L, page, "ZONES", zone, "set_page_links: set_page_zone")
    page = flags_field(L, page, "NODES", nid, "set_page_links: set_page_node")
    return set_page_section_from_pfn(L, page, pfn, "set_page_links: set_page_section")


def set_page_count(L: Layout, page: PageState, v: int, step: str = "set_page_count",
                   inp: Inputs | None = None) -> PageState:
    """``set_page_count()`` (page_ref.h): ``atomic_set(&page->_refcount, v)``, then
    ``if (page_ref_tracepoint_active(page_ref_set)) __page_ref_set(page, v)``: an event,
    counted in the page's ghost ``events`` when DEBUG_PAGE_REF makes the tracepoint exist."""
    page = page.set(L, "_refcount", v, step)
    if page.events is None or inp is None or not L.config.DEBUG_PAGE_REF:
        return page
    one = bv.ite(inp.tracepoint_on, bv.const_like(page.events, 1, 16),
                 bv.const_like(page.events, 0, 16))
    return PageState(bits=page.bits, origin=page.origin, events=page.events + one)


def page_cpupid_reset_last(L: Layout, page: PageState) -> PageState:
    """``page_cpupid_reset_last()`` (mm.h): all ones into LAST_CPUPID in flags, or
    ``_last_cpupid = -1 & LAST_CPUPID_MASK`` when not in flags; nothing without NUMA_BALANCING."""
    fl = L.flags
    if not L.config.NUMA_BALANCING:
        return page
    step = "__init_single_page: page_cpupid_reset_last"
    if fl.last_cpupid_not_in_page_flags:
        return page.set(L, "_last_cpupid", fl.last_cpupid_mask, step)
    fld = fl.get("LAST_CPUPID")
    return page.set(L, "flags", page.get(L, "flags") | (fl.last_cpupid_mask << fld.pgshift), step)


def page_kasan_tag_reset(L: Layout, page: PageState) -> PageState:
    """``page_kasan_tag_reset()`` (mm.h): with tag-based KASAN and kasan_enabled() [M: assumed
    enabled], store ``KASAN_TAG_KERNEL ^ 0xff`` into the KASAN_TAG field."""
    cfg = L.config
    if not (cfg.KASAN_SW_TAGS or cfg.KASAN_HW_TAGS):
        return page
    return flags_field(L, page, "KASAN_TAG", cfg.KASAN_TAG_KERNEL ^ 0xFF,
                       "__init_single_page: page_kasan_tag_reset")


LinksFn = Callable[[Layout, PageState, int, Val, Val], PageState]


def init_single_page(sc: Scenario, inp: Inputs, page: PageState, pfn: Val, zone: int,
                     nid: Val, links: LinksFn | None = None) -> PageState:
    """``__init_single_page(page, pfn, zone, nid)`` (mm/mm_init.c), in kernel order.

    ``links`` replaces ``set_page_links`` (``--compare pre-section-helper`` passes the
    pre-patch-2 open-coded version)."""
    L = sc.layout
    page = mm_zero_struct_page(L, page)
    page = (links or set_page_links)(L, page, zone, nid, pfn)
    page = set_page_count(L, page, 1, "__init_single_page: init_page_count", inp)
    page = page.set(L, "_mapcount", U32_MINUS_1, "__init_single_page: atomic_set(_mapcount, -1)")
    page = page_cpupid_reset_last(L, page)
    page = page_kasan_tag_reset(L, page)
    lru = page_addr(sc, inp, pfn) + 8  # &page->lru
    page = page.set(L, "lru.next", lru, "__init_single_page: INIT_LIST_HEAD(&page->lru)")
    page = page.set(L, "lru.prev", lru, "__init_single_page: INIT_LIST_HEAD(&page->lru)")
    if L.config.WANT_PAGE_VIRTUAL:  # !is_highmem_idx(ZONE_DEVICE) on 64-bit
        page = page.set(L, "virtual", va(sc, inp, pfn), "__init_single_page: set_page_address")
    return page


def set_bit(L: Layout, page: PageState, bit: int, step: str) -> PageState:
    """Non-atomic ``__set_bit(bit, &page->flags.f)`` (``__SetPageReserved``, ``__SetPageHead``)."""
    return page.set(L, "flags", page.get(L, "flags") | (1 << bit), step)


def pagemap_resets_refcount(sc: Scenario, inp: Inputs) -> Cond:
    """Refcount policy of ``__init_zone_device_page`` (v11 patch 1 comment; v5's
    ``pagemap_resets_refcount``): GENERIC keeps 1, FS_DAX/PRIVATE/COHERENT/PCI_P2PDMA get 0.

    With a concrete scenario type this is a Python bool; with ``sc.ptype is None`` it is the
    condition ``pgmap->type == MEMORY_DEVICE_GENERIC`` on the symbolic input (the switch of
    the kernel, whose other cases all reset the count).
    """
    if sc.ptype is not None:
        return sc.ptype is MemoryType.GENERIC
    return bv.eq(inp.pgmap_type, bv.const_like(inp.pgmap_type, int(MemoryType.GENERIC), 32))


def reset_refcount_unless(sc: Scenario, inp: Inputs, page: PageState, step: str) -> PageState:
    """``if (!pagemap_resets_refcount(pgmap)) set_page_count(page, 0)`` / the switch of
    ``__init_zone_device_page``."""
    keeps = pagemap_resets_refcount(sc, inp)
    if isinstance(keeps, bool):
        return page if keeps else set_page_count(sc.layout, page, 0, step, inp)
    return ite_page(keeps, page, set_page_count(sc.layout, page, 0, step, inp))


def zone_device_page_init_common(sc: Scenario, inp: Inputs, page: PageState, pfn: Val,
                                 step: str, links: LinksFn | None = None) -> PageState:
    """The type-independent part of ``__init_zone_device_page`` (v5: ``__zone_device_page_init``)."""
    L, cfg = sc.layout, sc.layout.config
    page = init_single_page(sc, inp, page, pfn, cfg.ZONE_DEVICE_IDX, inp.nid, links)
    page = set_bit(L, page, PG_reserved, f"{step}: __SetPageReserved")
    page = page.set(L, "folio.pgmap", inp.pgmap, f"{step}: page_folio(page)->pgmap = pgmap")
    return page.set(L, "zone_device_data", 0, f"{step}: page->zone_device_data = NULL")


def init_zone_device_page(sc: Scenario, inp: Inputs, page: PageState, pfn: Val,
                          links: LinksFn | None = None) -> PageState:
    """``__init_zone_device_page(page, pfn, zone_idx, nid, pgmap)`` (mm/mm_init.c, v7.3-rc1):
    single-page init, PG_reserved, pgmap, zone_device_data, then ``set_page_count(page, 0)``
    for every type but MEMORY_DEVICE_GENERIC.  No pageblock work (moved out by Muchun's fix)."""
    step = "__init_zone_device_page"
    page = zone_device_page_init_common(sc, inp, page, pfn, step, links)
    return reset_refcount_unless(sc, inp, page, f"{step}: set_page_count(page, 0)")


def compound_info_has_mask(L: Layout) -> bool:
    """``compound_info_has_mask()``: HUGETLB_PAGE_OPTIMIZE_VMEMMAP && is_power_of_2(sizeof page)."""
    return L.config.HUGETLB_PAGE_OPTIMIZE_VMEMMAP and L.size & (L.size - 1) == 0


def compound_info(sc: Scenario, head_addr: Val) -> Val:
    """The value ``set_compound_head(tail, head, order)`` stores (page-flags.h): the mask
    ``GENMASK(63, order + order_base_2(sizeof(struct page))) | 1`` or ``head | 1``."""
    L = sc.layout
    if compound_info_has_mask(L):
        if sc.is_class:  # GENMASK(63, shift) with the order a symbolic input
            shift = sc.order_v + bv.order_base_2(L.size)
            return ~((z3.BitVecVal(1, 64) << shift) - 1) | 1
        shift = sc.order + bv.order_base_2(L.size)
        return bv.const_like(head_addr, (((1 << 64) - 1) & ~((1 << shift) - 1)) | 1)
    return head_addr | 1


def prep_compound_tail(sc: Scenario, tail: PageState, head_addr: Val) -> PageState:
    """``prep_compound_tail(tail, head, order)`` (mm/internal.h, Jan 2026 signature):
    mapping = TAIL_MAPPING, set_compound_head, set_page_private(tail, 0)."""
    L = sc.layout
    tail_mapping = 0x400 + L.config.POISON_POINTER_DELTA
    tail = tail.set(L, "mapping", tail_mapping, "prep_compound_tail: mapping = TAIL_MAPPING")
    tail = tail.set(L, "compound_info", compound_info(sc, head_addr),
                    "prep_compound_tail: set_compound_head")
    return tail.set(L, "private", 0, "prep_compound_tail: set_page_private(tail, 0)")


def prep_compound_head(sc: Scenario, inp: Inputs, g: Geometry, mem: Memory, c: Val) -> Memory:
    """``prep_compound_head(head, order)`` (mm/internal.h) on compound ``c``: writes the
    struct folio fields that live in page[1] (and page[2] for order > 1)."""
    L, cfg, order = sc.layout, sc.layout.config, sc.order_v
    s1 = bv.const_like(c, 0)
    one, two = bv.const_like(c, 1), bv.const_like(c, 2)
    head = mem.read(c, s1)
    p1 = mem.read(c, one)
    # folio_set_order: WARN_ON_ONCE(!order || !folio_test_large(folio)) -> return
    large = bv.ne(head.get(L, "flags") & (1 << PG_head), 0)
    step = "prep_compound_head: folio_set_order"
    p1s = p1.set(L, "_flags_1", (p1.get(L, "_flags_1", 1) & ~0xFF) | order, step, 1)
    if L.has("_nr_pages"):  # NR_PAGES_IN_LARGE_FOLIO
        p1s = p1s.set(L, "_nr_pages", sc.nr_pages_u32, step, 1)  # 1U << order
    p1 = ite_page(bv.and_(sc.order_at_least(1), large), p1s, p1)
    step = "prep_compound_head"
    p1 = p1.set(L, "_large_mapcount", U32_MINUS_1, f"{step}: _large_mapcount = -1", 1)
    if cfg.PAGE_MAPCOUNT:
        p1 = p1.set(L, "_nr_pages_mapped", 0, f"{step}: _nr_pages_mapped = 0", 1)
    if cfg.MM_ID:
        p1 = p1.set(L, "_mm_ids", 0, f"{step}: _mm_ids = 0", 1)
        p1 = p1.set(L, "_mm_id_mapcount[0]", U32_MINUS_1, f"{step}: _mm_id_mapcount[0] = -1", 1)
        p1 = p1.set(L, "_mm_id_mapcount[1]", U32_MINUS_1, f"{step}: _mm_id_mapcount[1] = -1", 1)
    if cfg.BITS_PER_LONG == 64 or sc.order_at_least(2):
        p1 = p1.set(L, "_pincount", 0, f"{step}: _pincount = 0", 1)
        p1 = p1.set(L, "_entire_mapcount", U32_MINUS_1, f"{step}: _entire_mapcount = -1", 1)
    mem = mem.write(c, one, p1)
    if sc.order_at_least(2):  # INIT_LIST_HEAD(&folio->_deferred_list)
        p2 = mem.read(c, two)
        lst = page_addr(sc, inp, pfn_of(sc, g, c, two)) + 16
        p2 = p2.set(L, "_deferred_list.next", lst, f"{step}: INIT_LIST_HEAD(_deferred_list)", 2)
        p2 = p2.set(L, "_deferred_list.prev", lst, f"{step}: INIT_LIST_HEAD(_deferred_list)", 2)
        mem = mem.write(c, two, p2)
    return mem


def compound_nr_pages(sc: Scenario, inp: Inputs, pfn: Val) -> tuple[Val, Cond]:
    """``compound_nr_pages(pfn, altmap, pgmap)`` (mm/mm_init.c, with Muchun's early-section
    fix): all ``1 << order`` struct pages, or ``VMEMMAP_RESERVE_NR * PAGE_SIZE /
    sizeof(struct page)`` when the vmemmap of this compound is deduplicated.

    Returns:
        ``(nr_pages, optimised)``.
    """
    full = sc.stride_like(pfn)
    optimised = deduplicated(sc, inp, pfn)
    if isinstance(optimised, bool) and not optimised:
        return full, False
    reduced = bv.const_like(pfn, VMEMMAP_RESERVE_NR * sc.per_vmemmap_page)
    return bv.ite(optimised, reduced, full), optimised


def set_head(sc: Scenario, mem: Memory, c: Val) -> Memory:
    """``__SetPageHead(head)``."""
    s0 = bv.const_like(c, 0)
    head = set_bit(sc.layout, mem.read(c, s0), PG_head, "memmap_init_compound: __SetPageHead")
    return mem.write(c, s0, head)


InitFn = Callable[[Scenario, Inputs, PageState, Val], PageState]
#: one iteration of memmap_init_compound's tail loop: (scenario, inputs, page, pfn, head) -> page
TailFn = Callable[[Scenario, Inputs, PageState, Val, Val], PageState]


def tail_step(init: InitFn = init_zone_device_page) -> TailFn:
    """The v7.3-rc1 tail: ``init``, ``prep_compound_tail``, ``set_page_count(page, 0)``."""

    def tail(sc: Scenario, inp: Inputs, page: PageState, pfn: Val, head_addr: Val) -> PageState:
        page = init(sc, inp, page, pfn)
        page = prep_compound_tail(sc, page, head_addr)
        return set_page_count(sc.layout, page, 0, "memmap_init_compound: set_page_count(page, 0)",
                              inp)

    return tail


def memmap_init_compound(ctx: Ctx, sc: Scenario, inp: Inputs, g: Geometry, mem: Memory,
                         c: Val, nr_pages: Val, optimised: Cond,
                         tail_fn: TailFn | None = None, end_delta: int = 0) -> Memory:
    """``memmap_init_compound(head, head_pfn, zone_idx, nid, pgmap, nr_pages)`` (mm/mm_init.c,
    v7.3-rc1 ordering: __SetPageHead, the tail loop, then prep_compound_head).  ``tail_fn``
    replaces the loop body and ``end_delta`` moves its end (slow-path variants and seeded
    bugs, :mod:`equiv.slow_variants`)."""
    step = tail_fn or tail_step()
    head_addr = page_addr(sc, inp, pfn_of(sc, g, c, bv.const_like(c, 0)))
    mem = set_head(sc, mem, c)

    def tail(m: Memory, carry: Carry, t: Val) -> tuple[Memory, Carry]:
        return m.write(c, t, step(sc, inp, m.read(c, t), pfn_of(sc, g, c, t), head_addr)), carry

    end = nr_pages + end_delta if end_delta else nr_pages
    mem, _ = block_loop(ctx, "memmap_init_compound.tails", mem, bv.const_like(c, 1), end, (),
                        tail, tail_frame(sc, c))
    return prep_compound_head(sc, inp, g, mem, c)


def init_pageblock_migratetype(sc: Scenario, inp: Inputs, cell: Val, mt: int) -> Val:
    """``init_pageblock_migratetype(page, mt, false)`` (mm/page_alloc.c) on the pageblock's
    bitmap cell: UNMOVABLE if grouping by mobility is disabled, then
    ``__set_pfnblock_flags_mask(page, pfn, mt, MIGRATETYPE_AND_ISO_MASK)`` [M]."""
    mt_v = bv.ite(inp.mobility_disabled, bv.const_like(cell, 0, PB_BITS),
                  bv.const_like(cell, mt, PB_BITS))
    return (cell & ~MIGRATETYPE_AND_ISO_MASK) | mt_v


def pageblock_migratetype_init_range(ctx: Ctx, sc: Scenario, inp: Inputs, mem: Memory,
                                     start: Val, nr_pages: Val, *,
                                     set_block: Callable[[Inputs, Val, int], Val] | None = None,
                                     loop: str = "pageblock_migratetype_init_range") -> Memory:
    """``pageblock_migratetype_init_range(start_pfn, nr_pages, MIGRATE_MOVABLE)`` (Muchun's
    fix, 25-new @a8d6729b): ``for (pfn = pageblock_align(start); pfn < end; pfn +=
    pageblock_nr_pages)`` init the block.  ``pageblock_align`` rounds *up*.

    ``set_block(inp, cell, mt)`` is what one block gets (default
    :func:`init_pageblock_migratetype`; 6.12.y calls ``set_pageblock_migratetype``)."""
    po = sc.layout.config.PAGEBLOCK_ORDER
    pbn = 1 << po
    end = start + nr_pages
    first = (start + (pbn - 1)) & ~(pbn - 1)
    b0 = bv.lshr(first, po)
    nblocks = bv.ite(bv.ult(first, end), bv.lshr(end - first + (pbn - 1), po),
                     bv.const_like(end, 0))

    def block(m: Memory, carry: Carry, k: Val) -> tuple[Memory, Carry]:
        b = b0 + k
        cell = m.read_pb(b)
        new = (set_block(inp, cell, MIGRATE_MOVABLE) if set_block is not None
               else init_pageblock_migratetype(sc, inp, cell, MIGRATE_MOVABLE))
        return m.write_pb(b, new), carry

    owner = Owner(page=never, pb=lambda b: (True, b - b0))
    mem, _ = block_loop(ctx, loop, mem, bv.const_like(end, 0), nblocks, (), block, owner)
    return mem


def early_return(cond: Cond, mem: Memory, rest: Callable[[], Memory],
                 ctx: Ctx | None = None) -> Memory:
    """``if (cond) return;`` at the top of a function on memory, in either domain.

    With ``ctx``, the exit is recorded (``ctx.exits``) so the checker can show that the path
    reaches its end under the assumptions (a proof about a path that always returns early
    would be vacuous), and the rest runs under the path condition ``!cond`` (the loop
    lemmas of the rest assume it).
    """
    if isinstance(cond, bool):
        return mem if cond else rest()
    if ctx is None:
        return sym_ite_mem(cond, mem, rest())
    ctx.exits.append((ctx.path, cond))
    with ctx.assuming(bv.not_(cond)):  # what follows the return runs only without it
        after = rest()
    return sym_ite_mem(cond, mem, after)


def memmap_init_zone_device(ctx: Ctx, sc: Scenario, inp: Inputs, *,
                            init: InitFn = init_zone_device_page,
                            tail_fn: TailFn | None = None, tail_end_delta: int = 0,
                            heads_end_delta: int = 0) -> Memory:
    """``memmap_init_zone_device(zone, start_pfn, nr_pages, pgmap)`` (mm/mm_init.c, v7.3-rc1).

    ``WARN_ON_ONCE(!pgmap || zone_idx != ZONE_DEVICE)`` returns before anything is written.
    ``init`` (the per-page init at both call sites), ``tail_fn`` (the tail loop body) and the
    loops' ends (``tail_end_delta``, ``heads_end_delta``) are changed only by the slow-path
    variants of :mod:`equiv.slow_variants`.  The memmap is
    seen through the vmemmap as ``memremap_pages()`` populated it before the call
    (:func:`~equiv.memmap.with_vmemmap`).
    """
    inp = with_vmemmap(sc, inp)
    return early_return(bv.eq(inp.pgmap, 0), inp.mem,
                        lambda: _memmap_init_zone_device(ctx, sc, inp, init, tail_fn,
                                                         tail_end_delta, heads_end_delta), ctx)


def _memmap_init_zone_device(ctx: Ctx, sc: Scenario, inp: Inputs, init: InitFn,
                             tail_fn: TailFn | None, tail_end_delta: int = 0,
                             heads_end_delta: int = 0) -> Memory:
    g = geometry(sc, inp)
    mem = inp.mem
    step = tail_fn or tail_step(init)

    def head(m: Memory, carry: Carry, c: Val) -> tuple[Memory, Carry]:
        s0 = bv.const_like(c, 0)
        m = m.write(c, s0, init(sc, inp, m.read(c, s0), pfn_of(sc, g, c, s0)))
        if not sc.order_at_least(1):  # pfns_per_compound == 1
            return m, carry
        nr, opt = compound_nr_pages(sc, inp, pfn_of(sc, g, c, s0))
        return memmap_init_compound(ctx, sc, inp, g, m, c, nr, opt, step, tail_end_delta), carry

    zero = bv.const_like(g.start, 0)
    end = g.ncompounds + heads_end_delta if heads_end_delta else g.ncompounds
    out, _ = block_loop(ctx, "memmap_init_zone_device.heads", mem, zero, end, (), head,
                        compound_frame(sc, g))
    return pageblock_migratetype_init_range(ctx, sc, inp, out, g.start, g.nr_pages)

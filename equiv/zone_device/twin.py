"""A concrete, independent twin of ZONE_DEVICE memmap initialisation (slow path and v11 fast path).

Written from the kernel semantics (the texts are listed in docs/model.md; the ``§n`` below
number the sections of the reconstruction it was written from), not from the symbolic model,
so it can be used for differential testing.  It works on plain ints and bytearrays: every
struct page is a little-endian ``bytearray`` of ``cfg.size`` bytes, every pageblock bitmap cell an 8-bit int.

Only x86_64-like configurations are covered: ``ZONES_SHIFT`` 3 (five zones, ``ZONE_DEVICE`` = 4),
``NR_PAGEFLAGS`` 23, no LRU_GEN, no KASAN tags, no section bits in ``page->flags`` (SPARSEMEM_VMEMMAP,
§5), and the cpupid inside ``page->flags``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

ZONE_DEVICE = 4
ZONES_WIDTH = 3
NR_PAGEFLAGS = 23  # v7.3: 20 always, PG_mlocked, PG_hwpoison, PG_arch_2 (X86_PAT)
PG_HEAD = 6
PG_RESERVED = 13
MEMORY_DEVICE_GENERIC = 4
VMEMMAP_RESERVE_NR = 2
MIGRATE_MOVABLE = 1
MIGRATE_UNMOVABLE = 0
MIGRATETYPE_AND_ISO_MASK = 0x17
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1

# struct page / folio offsets (§6 table and FOLIO_MATCH list), x86_64, little-endian
OFF_FLAGS = 0
OFF_LRU = 8           # lru.next / compound_info / folio->pgmap
OFF_LRU_PREV = 16     # lru.prev / zone_device_data
OFF_MAPPING = 24
OFF_PRIVATE = 40
OFF_MAPCOUNT = 48     # _mapcount / page_type (u32)
OFF_REFCOUNT = 52     # _refcount (u32)
OFF_MEMCG = 56
OFF_VIRTUAL = 64      # with WANT_PAGE_VIRTUAL on the 80-byte layout
# page[1] (folio) fields
OFF_LARGE_MAPCOUNT = 16
OFF_NR_PAGES_MAPPED = 20
OFF_ENTIRE_MAPCOUNT = 24
OFF_PINCOUNT = 28
OFF_MM_ID_MAPCOUNT = 32   # [0] @32, [1] @36
OFF_MM_IDS = 40
OFF_NR_PAGES = 56
# page[2]
OFF_DEFERRED_LIST = 16    # next @16, prev @24


def order_base_2(n: int) -> int:
    """``order_base_2(n)``: ceil(log2(n)), 0 for n <= 1."""
    return 0 if n <= 1 else (n - 1).bit_length()


def genmask(h: int, lo: int) -> int:
    """``GENMASK(h, lo)`` on 64-bit."""
    return ((1 << (h + 1)) - 1) & ~((1 << lo) - 1) & M64


@dataclass(frozen=True)
class TwinConfig:
    """The configuration symbols the twin depends on (§5, §6)."""

    size: int = 64
    NODES_SHIFT: int = 6
    NR_CPUS: int = 64
    NUMA_BALANCING: bool = True
    MEMCG: bool = True
    PAGE_MAPCOUNT: bool = True
    MM_ID: bool = True
    HUGETLB_PAGE_OPTIMIZE_VMEMMAP: bool = True
    WANT_PAGE_VIRTUAL: bool = False
    ARCH_WANT_OPTIMIZE_DAX_VMEMMAP: bool = True
    POISON_POINTER_DELTA: int = 0xDEAD000000000000
    PAGE_SHIFT: int = 12
    pageblock_order: int = 9
    PFN_SECTION_SHIFT: int = 15

    def __post_init__(self) -> None:
        if self.size not in (64, 80):
            raise ValueError(f"struct page size {self.size}: the twin handles 64 and 80")
        if self.WANT_PAGE_VIRTUAL and self.size < 72:
            raise ValueError("WANT_PAGE_VIRTUAL needs the `virtual` word at offset 64")
        if self.last_cpupid_shift and not self.last_cpupid_width:
            raise ValueError("cpupid outside page->flags is not covered by the twin")

    # §5 flags layout ---------------------------------------------------------------------
    @property
    def nodes_width(self) -> int:
        """NODES_WIDTH = NODES_SHIFT if ZONES + LRU_GEN(0) + SECTIONS(0) + NODES fits, else 0."""
        return self.NODES_SHIFT if ZONES_WIDTH + self.NODES_SHIFT <= 64 - NR_PAGEFLAGS else 0

    @property
    def last_cpupid_shift(self) -> int:
        """LAST_CPUPID_SHIFT = 8 + NR_CPUS_BITS under NUMA_BALANCING (NR_CPUS_BITS as order_base_2)."""
        return 8 + order_base_2(self.NR_CPUS) if self.NUMA_BALANCING else 0

    @property
    def last_cpupid_width(self) -> int:
        s = self.last_cpupid_shift
        return s if ZONES_WIDTH + self.nodes_width + s <= 64 - NR_PAGEFLAGS else 0

    @property
    def nodes_pgshift(self) -> int:
        return (64 - self.nodes_width) if self.nodes_width else 0

    @property
    def zones_pgshift(self) -> int:
        return 64 - self.nodes_width - ZONES_WIDTH

    @property
    def last_cpupid_pgshift(self) -> int:
        return (self.zones_pgshift - self.last_cpupid_width) if self.last_cpupid_width else 0

    # §3a / §4 ------------------------------------------------------------------------------
    @property
    def per_vmemmap_page(self) -> int:
        return (1 << self.PAGE_SHIFT) // self.size

    @property
    def pow2(self) -> bool:
        return self.size & (self.size - 1) == 0

    @property
    def compound_info_has_mask(self) -> bool:
        """§4: HUGETLB_PAGE_OPTIMIZE_VMEMMAP && is_power_of_2(sizeof(struct page))."""
        return self.HUGETLB_PAGE_OPTIMIZE_VMEMMAP and self.pow2


@dataclass(frozen=True)
class TwinInputs:
    start_pfn: int
    nr_pages: int
    nid: int
    pgmap: int
    altmap: tuple[int, int] | None
    vmemmap_base: int
    page_offset: int
    early_sections: frozenset[int]
    mobility_disabled: bool
    initial: Callable[[int, int], bytes]
    initial_pb: Callable[[int], int]


@dataclass
class TwinResult:
    """Final memory: ``page(c, s)`` is raw vmemmap slot ``s`` of compound ``c`` (after aliasing)."""

    initial: Callable[[int, int], bytes]
    initial_pb: Callable[[int], int]
    pages: dict[tuple[int, int], bytearray] = field(default_factory=dict)
    pbs: dict[int, int] = field(default_factory=dict)

    def page(self, c: int, s: int) -> bytes:
        p = self.pages.get((c, s))
        return bytes(self.initial(c, s)) if p is None else bytes(p)

    def pageblock(self, b: int) -> int:
        return self.pbs.get(b, self.initial_pb(b) & 0xFF)


class _Machine:
    """One run: the memmap (slots, with vmemmap deduplication) and the kernel helpers."""

    def __init__(self, cfg: TwinConfig, ptype: int, order: int, inp: TwinInputs, start: int) -> None:
        self.cfg, self.ptype, self.order, self.inp, self.start = cfg, ptype, order, inp, start
        self.res = TwinResult(inp.initial, inp.initial_pb)

    # memory ---------------------------------------------------------------------------
    def early_section(self, pfn: int) -> bool:
        return (pfn >> self.cfg.PFN_SECTION_SHIFT) in self.inp.early_sections

    def can_optimize(self) -> bool:
        """§3a vmemmap_can_optimize(): ARCH_WANT_OPTIMIZE_DAX_VMEMMAP, pgmap, pow2 size, no altmap,
        and more than VMEMMAP_RESERVE_NR vmemmap pages per compound."""
        c = self.cfg
        return (c.ARCH_WANT_OPTIMIZE_DAX_VMEMMAP and self.inp.pgmap != 0 and c.pow2
                and self.inp.altmap is None
                and ((1 << self.order) * c.size) >> c.PAGE_SHIFT > VMEMMAP_RESERVE_NR)

    def deduplicated(self, head_pfn: int) -> bool:
        return self.can_optimize() and not self.early_section(head_pfn)

    def slot(self, pfn: int) -> tuple[int, int]:
        """§3a/§9 vmemmap aliasing: with dedup, tail t >= 2P lives in slot P + t % P."""
        rel = pfn - self.start
        c, t = rel >> self.order, rel & ((1 << self.order) - 1)
        p = self.cfg.per_vmemmap_page
        head = self.start + (c << self.order)
        if t >= VMEMMAP_RESERVE_NR * p and self.deduplicated(head):
            t = p + t % p
        return c, t

    def page(self, pfn: int) -> bytearray:
        k = self.slot(pfn)
        p = self.res.pages.get(k)
        if p is None:
            p = bytearray(self.inp.initial(*k))
            assert len(p) == self.cfg.size
            self.res.pages[k] = p
        return p

    def addr(self, pfn: int) -> int:
        """pfn_to_page(pfn): vmemmap_base + pfn * sizeof(struct page)."""
        return (self.inp.vmemmap_base + pfn * self.cfg.size) & M64

    # field access ---------------------------------------------------------------------
    @staticmethod
    def get(p: bytearray, off: int, n: int = 8) -> int:
        return int.from_bytes(p[off:off + n], "little")

    @staticmethod
    def put(p: bytearray, off: int, val: int, n: int = 8) -> None:
        p[off:off + n] = (val & ((1 << (8 * n)) - 1)).to_bytes(n, "little")

    # §1 -------------------------------------------------------------------------------
    def init_single_page(self, pfn: int) -> None:
        """§1 __init_single_page(page, pfn, ZONE_DEVICE, nid)."""
        c, p = self.cfg, self.page(pfn)
        p[:] = bytes(c.size)                                   # 1. mm_zero_struct_page
        f = self.get(p, OFF_FLAGS)                              # 2. set_page_links (§5)
        f &= ~(((1 << ZONES_WIDTH) - 1) << c.zones_pgshift)
        f |= (ZONE_DEVICE & ((1 << ZONES_WIDTH) - 1)) << c.zones_pgshift
        nmask = (1 << c.nodes_width) - 1
        f &= ~(nmask << c.nodes_pgshift)
        f |= (self.inp.nid & nmask) << c.nodes_pgshift
        self.put(p, OFF_FLAGS, f)
        self.put(p, OFF_REFCOUNT, 1, 4)                         # 3. init_page_count
        self.put(p, OFF_MAPCOUNT, -1, 4)                        # 4. _mapcount = -1
        if c.NUMA_BALANCING:                                    # 5. page_cpupid_reset_last
            f = self.get(p, OFF_FLAGS)
            f |= ((1 << c.last_cpupid_shift) - 1) << c.last_cpupid_pgshift
            self.put(p, OFF_FLAGS, f)
        # 6. page_kasan_tag_reset: nothing on x86_64
        lru = self.addr(pfn) + OFF_LRU                          # 7. INIT_LIST_HEAD(&page->lru)
        self.put(p, OFF_LRU, lru)
        self.put(p, OFF_LRU_PREV, lru)
        if c.WANT_PAGE_VIRTUAL:                                 # 8. set_page_address (not highmem)
            self.put(p, OFF_VIRTUAL, self.virtual(pfn))

    def virtual(self, pfn: int) -> int:
        return (self.inp.page_offset + (pfn << self.cfg.PAGE_SHIFT)) & M64

    def set_bit(self, pfn: int, bit: int) -> None:
        p = self.page(pfn)
        self.put(p, OFF_FLAGS, self.get(p, OFF_FLAGS) | (1 << bit))

    # §2a ------------------------------------------------------------------------------
    def init_zone_device_page(self, pfn: int) -> None:
        """§2a __init_zone_device_page (v7.3-rc1): no pageblock work here any more."""
        self.init_single_page(pfn)
        self.set_bit(pfn, PG_RESERVED)
        p = self.page(pfn)
        self.put(p, OFF_LRU, self.inp.pgmap)       # page_folio(page)->pgmap
        self.put(p, OFF_LRU_PREV, 0)               # zone_device_data
        if self.ptype != MEMORY_DEVICE_GENERIC:
            self.put(p, OFF_REFCOUNT, 0, 4)        # set_page_count(page, 0)

    # §4 -------------------------------------------------------------------------------
    def prep_compound_tail(self, pfn: int, head_pfn: int) -> None:
        c, p = self.cfg, self.page(pfn)
        self.put(p, OFF_MAPPING, 0x400 + c.POISON_POINTER_DELTA)    # TAIL_MAPPING
        if c.compound_info_has_mask:
            info = genmask(63, self.order + order_base_2(c.size)) | 1
        else:
            info = self.addr(head_pfn) | 1
        self.put(p, OFF_LRU, info)
        self.put(p, OFF_PRIVATE, 0)

    def prep_compound_head(self, head_pfn: int) -> None:
        c, order = self.cfg, self.order
        head = self.page(head_pfn)
        # folio_set_order: WARN + return if !order or !folio_test_large (PG_head)
        if order and self.get(head, OFF_FLAGS) >> PG_HEAD & 1:
            p1 = self.page(head_pfn + 1)
            self.put(p1, OFF_FLAGS, (self.get(p1, OFF_FLAGS) & ~0xFF) | order)
            if c.MEMCG:                                    # NR_PAGES_IN_LARGE_FOLIO
                self.put(p1, OFF_NR_PAGES, 1 << order, 4)
        p1 = self.page(head_pfn + 1)
        self.put(p1, OFF_LARGE_MAPCOUNT, -1, 4)
        if c.PAGE_MAPCOUNT:
            self.put(p1, OFF_NR_PAGES_MAPPED, 0, 4)
        if c.MM_ID:
            self.put(p1, OFF_MM_IDS, 0)
            self.put(p1, OFF_MM_ID_MAPCOUNT, -1, 4)
            self.put(p1, OFF_MM_ID_MAPCOUNT + 4, -1, 4)
        self.put(p1, OFF_PINCOUNT, 0, 4)                   # CONFIG_64BIT
        self.put(p1, OFF_ENTIRE_MAPCOUNT, -1, 4)
        if order > 1:
            p2 = self.page(head_pfn + 2)
            dl = self.addr(head_pfn + 2) + OFF_DEFERRED_LIST
            self.put(p2, OFF_DEFERRED_LIST, dl)
            self.put(p2, OFF_DEFERRED_LIST + 8, dl)

    # §3a ------------------------------------------------------------------------------
    def compound_nr_pages(self, pfn: int) -> int:
        if self.early_section(pfn) or not self.can_optimize():
            return 1 << self.order
        return VMEMMAP_RESERVE_NR * self.cfg.per_vmemmap_page

    def tail_slow(self, pfn: int, head_pfn: int) -> None:
        self.init_zone_device_page(pfn)
        self.prep_compound_tail(pfn, head_pfn)
        self.put(self.page(pfn), OFF_REFCOUNT, 0, 4)        # set_page_count(page, 0)

    def memmap_init_compound_slow(self, head_pfn: int, nr_pages: int) -> None:
        """§3a memmap_init_compound, v7.3 order (prep_compound_head after the tail loop)."""
        self.set_bit(head_pfn, PG_HEAD)
        for pfn in range(head_pfn + 1, head_pfn + nr_pages):
            self.tail_slow(pfn, head_pfn)
        self.prep_compound_head(head_pfn)

    def from_template(self, pfn: int, template: bytearray) -> None:
        """§7 patch 3 zone_device_page_init_from_template: refresh pfn fields IN the template
        (no section bits under SPARSEMEM_VMEMMAP; ``virtual``), then copy sizeof(struct page)."""
        if self.cfg.WANT_PAGE_VIRTUAL:
            self.put(template, OFF_VIRTUAL, self.virtual(pfn))
        self.page(pfn)[:] = template

    def memmap_init_compound_fast(self, head_pfn: int, nr_pages: int) -> None:
        """§7 patch 4: tail 1 slow, snapshot as tail template, tails 2.. copied from it."""
        self.set_bit(head_pfn, PG_HEAD)
        self.tail_slow(head_pfn + 1, head_pfn)
        template = bytearray(self.page(head_pfn + 1))
        for pfn in range(head_pfn + 2, head_pfn + nr_pages):
            self.from_template(pfn, template)
        self.prep_compound_head(head_pfn)

    def pageblock_init_range(self, start: int, nr: int) -> None:
        """§2a pageblock_migratetype_init_range(start, nr, MIGRATE_MOVABLE) (MIGRATE_UNMOVABLE when
        page mobility grouping is disabled)."""
        pb = 1 << self.cfg.pageblock_order
        mt = MIGRATE_UNMOVABLE if self.inp.mobility_disabled else MIGRATE_MOVABLE
        pfn = (start + pb - 1) & ~(pb - 1)
        while pfn < start + nr:
            b = pfn >> self.cfg.pageblock_order
            self.res.pbs[b] = (self.res.pageblock(b) & ~MIGRATETYPE_AND_ISO_MASK & 0xFF) | mt
            pfn += pb


def run(cfg: TwinConfig, ptype: int, order: int, inp: TwinInputs, path: str) -> TwinResult:
    """memmap_init_zone_device (§3a) for ``path`` "slow" (v7.3-rc1) or "fast" (v11, §7 patches 3-4)."""
    if path not in ("slow", "fast"):
        raise ValueError(f"path {path!r}: 'slow' or 'fast'")
    start, nr = inp.start_pfn, inp.nr_pages
    end = start + nr
    if inp.altmap is not None:      # start_pfn = altmap->base_pfn (== start_pfn) + reserve + free
        start = inp.start_pfn + inp.altmap[0] + inp.altmap[1]
        nr = end - start
    m = _Machine(cfg, ptype, order, inp, start)
    if inp.pgmap == 0:              # WARN_ON_ONCE(!pgmap): return
        return m.res
    step = 1 << order
    if path == "slow":
        for pfn in range(start, end, step):
            m.init_zone_device_page(pfn)
            if order:
                m.memmap_init_compound_slow(pfn, m.compound_nr_pages(pfn))
    elif nr != 0:                   # v11: if (!nr_pages) return;
        # nr_pages is unsigned: when the altmap offset passes end_pfn it is huge, not negative, and
        # v11 still initialises the first head (and its compound) before the loop test (§7 patch 3).
        m.init_zone_device_page(start)
        template = bytearray(m.page(start))         # snapshot BEFORE compound setup
        if order:
            m.memmap_init_compound_fast(start, m.compound_nr_pages(start))
        for pfn in range(start + step, end, step):
            m.from_template(pfn, template)
            if order:
                m.memmap_init_compound_fast(pfn, m.compound_nr_pages(pfn))
    if nr > 0:
        m.pageblock_init_range(start, nr)
    return m.res

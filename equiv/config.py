"""Kernel configuration: the symbols the struct page layout and the init paths depend on.

Values are the Kconfig symbols of the kernel (``CONFIG_`` prefix dropped) plus the arch
constants that a .config cannot settle (``SECTION_SIZE_BITS``, ``MAX_PHYSMEM_BITS``,
``pageblock_order``, ``KASAN_TAG_KERNEL``, ``WANT_PAGE_VIRTUAL``).  Sources: mm/Kconfig,
arch/x86/Kconfig, arch/arm64/Kconfig and include/linux/page-flags-layout.h as summarised in
../shared/reference/zone_device.md §5.  Arch defaults marked [M] there are taken as given
and every run prints them (``Config.assumed``).
"""

from __future__ import annotations

from attrs import evolve, field, frozen

from equiv.engine.errors import ConfigError, lookup


@frozen(kw_only=True)
class Config:
    """A kernel configuration (only the symbols that change the modelled result)."""

    name: str = field(metadata={"doc": "preset name or .config path, printed in every result"})
    arch: str = "x86_64"
    hypothetical: bool = False
    description: str = ""
    #: values not read from a .config but taken from the arch preset, printed with results
    assumed: tuple[str, ...] = ()
    BITS_PER_LONG: int = 64
    PAGE_SHIFT: int = 12
    SPARSEMEM_VMEMMAP: bool = True
    NUMA: bool = True
    NODES_SHIFT: int = 6
    NR_CPUS: int = 64
    NUMA_BALANCING: bool = True
    KASAN_SW_TAGS: bool = False
    KASAN_HW_TAGS: bool = False
    KMSAN: bool = False
    MEMCG: bool = True
    SLAB_OBJ_EXT: bool = True
    LRU_GEN: bool = False
    MMU: bool = True
    MEMORY_FAILURE: bool = True
    PAGE_IDLE_FLAG: bool = False
    PAGE_MAPCOUNT: bool = True
    MM_ID: bool = True
    HUGETLB_PAGE_OPTIMIZE_VMEMMAP: bool = True
    ARCH_WANT_OPTIMIZE_DAX_VMEMMAP: bool = True
    HAVE_ALIGNED_STRUCT_PAGE: bool = True
    DEBUG_PAGE_REF: bool = False
    ZONE_DMA: bool = True
    ZONE_DMA32: bool = True
    ZONE_DEVICE: bool = True
    WANT_PAGE_VIRTUAL: bool = False
    # Hypothetical: SPARSEMEM without VMEMMAP puts section bits in page->flags.  No ZONE_DEVICE
    # kernel builds this way (ZONE_DEVICE depends on SPARSEMEM_VMEMMAP, mm/Kconfig).
    SECTION_IN_PAGE_FLAGS_FORCED: bool = False
    # Hypothetical: the cpupid forced out of page->flags where the formulas would keep it in.
    LAST_CPUPID_OUTSIDE_FORCED: bool = False
    #: tool setting, not a kernel symbol: compare the page_ref_set tracepoint events beside
    #: memory (meaningful with DEBUG_PAGE_REF; --observe-events)
    observe_events: bool = False
    # arch constants [M]
    SECTION_SIZE_BITS: int = 27
    MAX_PHYSMEM_BITS: int = 46
    PAGEBLOCK_ORDER: int = 9
    POISON_POINTER_DELTA: int = 0xDEAD000000000000
    KASAN_TAG_KERNEL: int = 0xFF

    @property
    def page_size(self) -> int:
        return 1 << self.PAGE_SHIFT

    @property
    def tracks_events(self) -> bool:
        """Are page_ref_set events modelled (DEBUG_PAGE_REF and asked for)?"""
        return self.DEBUG_PAGE_REF and self.observe_events

    @property
    def hypothetical_note(self) -> str:
        """What "hypothetical" means here (reports print it with a hypothetical config)."""
        return "no ZONE_DEVICE kernel builds this"

    @property
    def header_note(self) -> str:
        """The note after the config's name in a text report's header."""
        return "+ page_ref_set events observed" if self.tracks_events else ""

    @property
    def MAX_NR_ZONES(self) -> int:
        """``enum zone_type``: [DMA] [DMA32] NORMAL [HIGHMEM: 32-bit only] MOVABLE [DEVICE]."""
        return int(self.ZONE_DMA) + int(self.ZONE_DMA32) + 2 + int(self.ZONE_DEVICE)

    @property
    def ZONE_DEVICE_IDX(self) -> int:
        """``ZONE_DEVICE``'s index: the last zone."""
        return self.MAX_NR_ZONES - 1

    @property
    def section_in_page_flags(self) -> bool:
        """``SECTION_IN_PAGE_FLAGS``: defined iff SPARSEMEM && !SPARSEMEM_VMEMMAP (mm.h)."""
        return self.SECTION_IN_PAGE_FLAGS_FORCED or not self.SPARSEMEM_VMEMMAP

    @property
    def pfn_section_shift(self) -> int:
        """``PFN_SECTION_SHIFT = SECTION_SIZE_BITS - PAGE_SHIFT``."""
        return self.SECTION_SIZE_BITS - self.PAGE_SHIFT

    @property
    def max_order(self) -> int:
        """Largest vmemmap_shift proved: the PUD order, ``2 * (PAGE_SHIFT - 3)`` (18 with 4K
        pages, 22 with 16K, 26 with 64K)."""
        return 2 * (self.PAGE_SHIFT - 3)

    def validate(self) -> Config:
        """Reject configurations the kernel would refuse to build, or that have nothing to check.

        Raises:
            ConfigError: with what is wrong and what would be valid.
        """
        if self.BITS_PER_LONG != 64:
            raise ConfigError(
                f"config {self.name}: BITS_PER_LONG={self.BITS_PER_LONG}; ZONE_DEVICE needs 64BIT "
                "(MEMORY_HOTPLUG depends on 64BIT in mm/Kconfig); valid: 64")
        if not self.ZONE_DEVICE:
            raise ConfigError(f"config {self.name}: CONFIG_ZONE_DEVICE is not set; there is no "
                              "ZONE_DEVICE memmap initialisation to check")
        if self.PAGE_SHIFT not in (12, 14, 16):
            raise ConfigError(f"config {self.name}: PAGE_SHIFT={self.PAGE_SHIFT}; valid: 12, 14, 16")
        if self.KASAN_SW_TAGS and self.KASAN_HW_TAGS:
            raise ConfigError(f"config {self.name}: KASAN_SW_TAGS and KASAN_HW_TAGS exclude each other")
        if not self.NUMA and self.NODES_SHIFT != 0:
            raise ConfigError(f"config {self.name}: NODES_SHIFT={self.NODES_SHIFT} needs NUMA")
        if self.NR_CPUS < 1:
            raise ConfigError(f"config {self.name}: NR_CPUS={self.NR_CPUS}; must be at least 1")
        return self


X86_ASSUMED = ("SECTION_SIZE_BITS=27 (arch/x86/include/asm/sparsemem.h) [M]",
               "MAX_PHYSMEM_BITS=46 (4-level; section bits unused under VMEMMAP) [M]",
               "pageblock_order=9 [M]", "WANT_PAGE_VIRTUAL undefined on x86_64 [M]")
ARM64_ASSUMED = ("SECTION_SIZE_BITS=27 [M]", "MAX_PHYSMEM_BITS=48 [M]",
                 "pageblock_order = PMD order (9 / 11 / 13 for 4K / 16K / 64K) [M]",
                 "KASAN_TAG_KERNEL=0xff, kasan_enabled() [M]", "WANT_PAGE_VIRTUAL undefined [M]")

DEFAULT = Config(name="x86_64-default", assumed=X86_ASSUMED,
                 description="x86_64, 4K pages, 64-byte struct page, SPARSEMEM_VMEMMAP, NUMA "
                             "(NODES_SHIFT 6), NUMA_BALANCING with NR_CPUS 64, MEMCG")
ARM64_4K = Config(name="arm64-4k", arch="arm64", NODES_SHIFT=4, NR_CPUS=512,
                  HAVE_ALIGNED_STRUCT_PAGE=False, MAX_PHYSMEM_BITS=48, assumed=ARM64_ASSUMED,
                  description="arm64, 4K pages, NODES_SHIFT 4, NR_CPUS 512")


def _v(base: Config, name: str, description: str, **kw: object) -> Config:
    return evolve(base, name=name, description=description, **kw)  # type: ignore[arg-type]


PRESETS: dict[str, Config] = {c.name: c for c in (
    DEFAULT,
    _v(DEFAULT, "x86_64-maxsmp", "MAXSMP: NODES_SHIFT 10, NR_CPUS 8192 (cpupid 21 bits, in flags)",
       NODES_SHIFT=10, NR_CPUS=8192),
    _v(DEFAULT, "x86_64-lru-gen", "LRU_GEN: generation and refs bits in page->flags", LRU_GEN=True),
    _v(DEFAULT, "x86_64-no-memcg", "no MEMCG and no SLAB_OBJ_EXT: 56 bytes of fields, 8 of padding",
       MEMCG=False, SLAB_OBJ_EXT=False),
    _v(DEFAULT, "x86_64-kmsan", "KMSAN: kmsan_shadow and kmsan_origin, 80-byte struct page",
       KMSAN=True),
    _v(DEFAULT, "x86_64-kmsan-cpupid-outside",
       "KMSAN with the cpupid outside page->flags: 96-byte struct page (the size the v11 x86 "
       "patch names; x86_64's flags never overflow under these formulas, so forced)",
       KMSAN=True, LAST_CPUPID_OUTSIDE_FORCED=True, hypothetical=True),
    _v(DEFAULT, "x86_64-compound-info-head",
       "no HUGETLB_PAGE_OPTIMIZE_VMEMMAP: tails hold head | 1", HUGETLB_PAGE_OPTIMIZE_VMEMMAP=False),
    _v(DEFAULT, "x86_64-want-page-virtual",
       "WANT_PAGE_VIRTUAL: a pfn-dependent `virtual` word (80 bytes)", WANT_PAGE_VIRTUAL=True,
       hypothetical=True),
    _v(DEFAULT, "x86_64-section-in-flags",
       "section number in page->flags (SPARSEMEM without VMEMMAP)",
       SECTION_IN_PAGE_FLAGS_FORCED=True, hypothetical=True),
    _v(DEFAULT, "x86_64-debug-page-ref",
       "DEBUG_PAGE_REF: the page_ref_set tracepoint exists and may be enabled at run time; "
       "its events are an observable beside memory", DEBUG_PAGE_REF=True),
    ARM64_4K,
    _v(ARM64_4K, "arm64-16k", "arm64, 16K pages", PAGE_SHIFT=14, PAGEBLOCK_ORDER=11),
    _v(ARM64_4K, "arm64-64k", "arm64, 64K pages", PAGE_SHIFT=16, PAGEBLOCK_ORDER=13,
       SECTION_SIZE_BITS=29),
    _v(ARM64_4K, "arm64-4k-kasan-sw", "arm64, 4K pages, KASAN_SW_TAGS (8-bit tag in flags)",
       KASAN_SW_TAGS=True),
    _v(ARM64_4K, "arm64-4k-kasan-hw", "arm64, 4K pages, KASAN_HW_TAGS (4-bit tag in flags)",
       KASAN_HW_TAGS=True),
    _v(ARM64_4K, "arm64-cpupid-outside",
       "arm64, KASAN_SW_TAGS, NODES_SHIFT 10, NR_CPUS 4096, LRU_GEN: the cpupid no longer fits "
       "page->flags and moves to _last_cpupid (72-byte struct page)",
       KASAN_SW_TAGS=True, NODES_SHIFT=10, NR_CPUS=4096, LRU_GEN=True),
)}

WANT_VIRTUAL = PRESETS["x86_64-want-page-virtual"]
SECTION_FLAGS = PRESETS["x86_64-section-in-flags"]
HEAD_ENCODING = PRESETS["x86_64-compound-info-head"]


def preset(name: str) -> Config:
    """Look a preset up by name.

    Raises:
        InputError: unknown name; the message lists the valid ones.
    """
    return lookup(PRESETS, name, "config", ", all")

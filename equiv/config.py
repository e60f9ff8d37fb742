"""Kernel configuration: the symbols the struct page layout and the init paths depend on.

Values are the Kconfig symbols of the kernel (``CONFIG_`` prefix dropped) plus the arch
constants that a .config cannot settle.  Sources: mm/Kconfig, arch/x86/Kconfig and
include/linux/page-flags-layout.h as summarised in ../shared/reference/zone_device.md §5.
Defaults of x86_64 marked [M] there (NR_CPUS, NODES_SHIFT, SECTION_SIZE_BITS) are taken as
given and printed with every result.
"""

from __future__ import annotations

from attrs import evolve, field, frozen

from equiv.errors import ConfigError, InputError


@frozen(kw_only=True)
class Config:
    """A kernel configuration (only the symbols that change the modelled result)."""

    name: str = field(metadata={"doc": "preset name, printed in every result"})
    arch: str = "x86_64"
    hypothetical: bool = False
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
    WANT_PAGE_VIRTUAL: bool = False
    # Hypothetical: SPARSEMEM without VMEMMAP puts section bits in page->flags.  No ZONE_DEVICE
    # kernel builds this way (ZONE_DEVICE depends on SPARSEMEM_VMEMMAP, mm/Kconfig).
    SECTION_IN_PAGE_FLAGS_FORCED: bool = False
    # arch constants [M]
    SECTION_SIZE_BITS: int = 27
    MAX_PHYSMEM_BITS: int = 46
    MAX_NR_ZONES: int = 5
    ZONE_DEVICE_IDX: int = 4
    PAGEBLOCK_ORDER: int = 9
    POISON_POINTER_DELTA: int = 0xDEAD000000000000
    KASAN_TAG_KERNEL: int = 0xFF

    @property
    def page_size(self) -> int:
        return 1 << self.PAGE_SHIFT

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
        """Largest vmemmap_shift proved: PUD order (1 GiB with 4K pages: 18)."""
        ptrs = self.PAGE_SHIFT - 3
        return 2 * ptrs

    def validate(self) -> Config:
        """Reject configurations the kernel would refuse to build."""
        if self.BITS_PER_LONG != 64:
            raise ConfigError(
                f"config {self.name}: BITS_PER_LONG={self.BITS_PER_LONG}; ZONE_DEVICE needs 64BIT "
                "(MEMORY_HOTPLUG depends on 64BIT in mm/Kconfig); valid: 64"
            )
        if self.KASAN_SW_TAGS and self.KASAN_HW_TAGS:
            raise ConfigError(f"config {self.name}: KASAN_SW_TAGS and KASAN_HW_TAGS exclude each other")
        if not self.NUMA and self.NODES_SHIFT != 0:
            raise ConfigError(f"config {self.name}: NODES_SHIFT={self.NODES_SHIFT} needs NUMA")
        return self


DEFAULT = Config(name="x86_64-default")

#: Hypothetical layout used by tests and controls: WANT_PAGE_VIRTUAL gives struct page a
#: ``virtual`` word that depends on the pfn (the reason the template refresh exists).
WANT_VIRTUAL = evolve(
    DEFAULT, name="x86_64-want-page-virtual", hypothetical=True,
    WANT_PAGE_VIRTUAL=True,
)

#: Hypothetical layout: section bits in page->flags (SPARSEMEM without VMEMMAP).
SECTION_FLAGS = evolve(
    DEFAULT, name="x86_64-section-in-flags", hypothetical=True,
    SECTION_IN_PAGE_FLAGS_FORCED=True,
)

#: The ``head | 1`` compound_info encoding (no HUGETLB_PAGE_OPTIMIZE_VMEMMAP).
HEAD_ENCODING = evolve(
    DEFAULT, name="x86_64-compound-info-head", HUGETLB_PAGE_OPTIMIZE_VMEMMAP=False,
)

PRESETS: dict[str, Config] = {c.name: c for c in (DEFAULT, HEAD_ENCODING, WANT_VIRTUAL, SECTION_FLAGS)}


def preset(name: str) -> Config:
    """Look a preset up by name.

    Raises:
        InputError: unknown name; the message lists the valid ones.
    """
    try:
        return PRESETS[name]
    except KeyError:
        raise InputError(f"unknown config {name!r}; valid: {', '.join(PRESETS)}") from None

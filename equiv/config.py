"""Kernel configuration: the symbols the struct page layout and the init paths depend on.

Values are the Kconfig symbols of the kernel (``CONFIG_`` prefix dropped) plus the arch
constants that a .config cannot settle (``SECTION_SIZE_BITS``, ``MAX_PHYSMEM_BITS``,
``pageblock_order``, ``KASAN_TAG_KERNEL``, ``WANT_PAGE_VIRTUAL``).  Sources: mm/Kconfig,
arch/x86/Kconfig, arch/arm64/Kconfig and include/linux/page-flags-layout.h as summarised in
docs/model.md.  Arch defaults marked [M] are taken as given
and every run prints them (``Config.assumed``).  :func:`from_kconfig` builds one from a
kernel .config (read by :mod:`equiv.linux.kconfig`) on the arch preset's constants.
"""

from __future__ import annotations

from typing import Any

from attrs import evolve, field, frozen

from equiv.engine.errors import ConfigError, InputError, lookup


@frozen(kw_only=True)
class Config:
    """A kernel configuration (only the symbols that change the modelled result)."""

    name: str = field(metadata={"doc": "preset name or .config path, printed in every result"})
    arch: str = "x86_64"
    hypothetical: bool = False
    description: str = ""
    #: values not read from a .config but taken from the arch preset, printed with results
    assumed: tuple[str, ...] = ()
    #: the whole ``.config`` text this configuration was read from (``--kconfig``): the C
    #: path prepares the tree with it as given (:func:`equiv.zone_device.source.files.headers_for`)
    kconfig: str | None = field(default=None, eq=False, repr=False)
    #: the generated headers the C path prepared for this configuration
    #: (:func:`equiv.zone_device.source.prepared.as_prepared`: an ``equiv.linux.cfront.Headers``),
    #: which it is then read with everywhere, workers included
    headers: object | None = field(default=None, eq=False, repr=False)
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
    #: PG_arch_2 / PG_arch_3 in ``enum pageflags`` (include/linux/page-flags.h): selected by
    #: x86's X86_PAT (default y, arch/x86/Kconfig) and arm64's ARM64_MTE (default y, both)
    ARCH_USES_PG_ARCH_2: bool = True
    ARCH_USES_PG_ARCH_3: bool = False
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
                  ARCH_USES_PG_ARCH_3=True,
                  description="arm64, 4K pages, NODES_SHIFT 4, NR_CPUS 512")


def _v(base: Config, name: str, description: str, **kw: Any) -> Config:
    return evolve(base, name=name, description=description, **kw)


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
       "section number in page->flags (SPARSEMEM without VMEMMAP); X86_PAT off (no PG_arch_2), "
       "so the cpupid fits page->flags in 6.12 and v7.3 alike",
       SECTION_IN_PAGE_FLAGS_FORCED=True, ARCH_USES_PG_ARCH_2=False, hypothetical=True),
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


# ---- from a kernel .config ----------------------------------------------------------------

#: Boolean symbols :func:`from_kconfig` reads as-is (``=y`` or ``=m`` is true; absent or
#: "is not set" is false).
KCONFIG_BOOLS = (
    "SPARSEMEM_VMEMMAP", "NUMA", "NUMA_BALANCING", "KASAN_SW_TAGS", "KASAN_HW_TAGS", "KMSAN",
    "MEMCG", "SLAB_OBJ_EXT", "LRU_GEN", "MMU", "MEMORY_FAILURE", "PAGE_IDLE_FLAG",
    "ARCH_USES_PG_ARCH_2", "ARCH_USES_PG_ARCH_3",
    "PAGE_MAPCOUNT", "MM_ID", "HUGETLB_PAGE_OPTIMIZE_VMEMMAP", "ARCH_WANT_OPTIMIZE_DAX_VMEMMAP",
    "HAVE_ALIGNED_STRUCT_PAGE", "DEBUG_PAGE_REF", "ZONE_DMA", "ZONE_DMA32", "ZONE_DEVICE",
)


def _kconfig_int(sym: dict[str, str], name: str, path: str) -> int | None:
    v = sym.get(name)
    if v is None:
        return None
    try:
        return int(v, 0)
    except ValueError:
        raise InputError(f"--kconfig {path!r}: CONFIG_{name}={v!r} is not a number") from None


def _kconfig_page_shift(sym: dict[str, str], path: str) -> int:
    shift = _kconfig_int(sym, "PAGE_SHIFT", path)
    if shift is not None:
        return shift
    for size, shift in (("4KB", 12), ("16KB", 14), ("64KB", 16)):
        if f"PAGE_SIZE_{size}" in sym:
            return shift
    for size, shift in (("4K", 12), ("16K", 14), ("64K", 16)):
        if f"ARM64_{size}_PAGES" in sym:
            return shift
    return 12


def from_kconfig(path: str) -> Config:
    """Build the configuration of the kernel whose .config is at ``path`` (plain, or gzip,
    xz, bzip2, zstd as /proc/config.gz and Debian's linux-config packages ship it; read by
    :func:`equiv.linux.kconfig.read`).

    The symbols a .config settles (``CONFIG_NUMA``, ``CONFIG_NODES_SHIFT``, ``CONFIG_NR_CPUS``,
    the KASAN/KMSAN/MEMCG/LRU_GEN/... switches, the page size, ``CONFIG_ILLEGAL_POINTER_VALUE``)
    are read; arch constants that live in headers, not in Kconfig (``SECTION_SIZE_BITS``,
    ``MAX_PHYSMEM_BITS``, ``pageblock_order``, ``KASAN_TAG_KERNEL``, ``WANT_PAGE_VIRTUAL``)
    come from the arch preset (:data:`DEFAULT` for x86_64, :data:`ARM64_4K` for arm64) and
    are listed in :attr:`Config.assumed`, which every report prints.

    Raises:
        InputError: unreadable file, not a .config, an unsupported arch, or a configuration
            the model rejects (see :meth:`Config.validate`).
    """
    from equiv.linux import kconfig  # not at the top: this module is loaded for every run

    text = kconfig.read_text(path)
    return from_kconfig_text(text, path)


def from_kconfig_text(text: str, path: str) -> Config:
    """:func:`from_kconfig` of the ``.config`` ``text`` (``path`` names it in messages and
    is the configuration's name).

    Raises:
        InputError: as :func:`from_kconfig`.
    """
    from equiv.linux import kconfig

    sym = kconfig.parse(text)
    if not sym:
        raise InputError(f"--kconfig {path!r} has no CONFIG_ lines; pass a kernel .config "
                         "(plain or compressed, e.g. /proc/config.gz)")
    if "X86_64" in sym:
        base = DEFAULT
    elif "ARM64" in sym:
        base = ARM64_4K
    else:
        arch = next((a for a in ("X86_32", "ARM", "RISCV", "PPC64", "S390") if a in sym), None)
        if arch is None:  # e.g. a truncated .config: say what is missing, not "arch unknown"
            raise InputError(f"--kconfig {path!r} has no CONFIG_X86_64 or CONFIG_ARM64 line "
                             "(truncated, or not a whole kernel .config?); the modelled arches "
                             "are x86_64 and arm64")
        raise InputError(f"--kconfig {path!r}: arch {arch} is not modelled; valid: x86_64, arm64")
    shift = _kconfig_page_shift(sym, path)
    # Config fields by name: the switches (bool) and the numbers (int)
    values: dict[str, Any] = {s: s in sym and sym[s] in ("y", "m") for s in KCONFIG_BOOLS}
    values["BITS_PER_LONG"] = 64 if "64BIT" in sym else 32
    values["PAGE_SHIFT"] = shift
    values["NODES_SHIFT"] = (_kconfig_int(sym, "NODES_SHIFT", path) or 0) if values["NUMA"] else 0
    values["NR_CPUS"] = (_kconfig_int(sym, "NR_CPUS", path) or 1) if "SMP" in sym else 1
    values["POISON_POINTER_DELTA"] = _kconfig_int(sym, "ILLEGAL_POINTER_VALUE", path) or 0
    assumed = list(base.assumed)
    if base.arch == "arm64":
        values["PAGEBLOCK_ORDER"] = shift - 3
        values["SECTION_SIZE_BITS"] = 29 if shift == 16 else 27
    if base.arch == "x86_64" and _kconfig_int(sym, "PGTABLE_LEVELS", path) == 5:
        assumed = [a for a in assumed if not a.startswith("MAX_PHYSMEM_BITS")]
        assumed.append("MAX_PHYSMEM_BITS=52 when 5-level paging is enabled at boot (unused: "
                       "section bits are not in page->flags under VMEMMAP) [M]")
    cfg = evolve(base, name=path, description=f"from {path} (arch {base.arch})",
                 assumed=tuple(assumed), kconfig=text, **values)
    try:
        return cfg.validate()
    except InputError as e:
        raise InputError(f"--kconfig {path!r}: {e}") from None

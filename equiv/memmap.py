"""Inputs of ``memmap_init_zone_device()`` and the address arithmetic both paths share.

Mirrors (v7.3-rc1, docs/model.md): ``pfn_to_page`` (SPARSEMEM_VMEMMAP:
``vmemmap + pfn``), ``__va``, ``pfn_to_section_nr``, ``pgmap_altmap``, ``vmem_altmap_offset``,
``pgmap_vmemmap_nr``, the vmemmap deduplication of optimised device-dax compounds
(Documentation/mm/vmemmap_dedup.rst: struct pages past the first two vmemmap pages of a
compound all live in the second one), and ``enum memory_type`` of include/linux/memremap.h.

Memory naming (:func:`vmemmap_namer`): a path names a struct page as ``pfn_to_page()`` does,
by its pfn, written ``(c, t)``: tail ``t`` of compound ``c`` counted from the loop's first
pfn.  The memory stores it under one *storage key*, the pair ``(c', s')`` with ``s'`` below
the compound size and ``(c' << order) + s' == (c << order) + t`` (compounds below the first
pfn negative), except that in a deduplicated compound of the range tail ``s' >= 2P`` lives in
the storage of tail ``P + s' % P`` (``P`` struct pages per vmemmap page: every vmemmap page
past the first two maps the second one).  So every struct page has exactly one name,
whatever ``(c, t)`` a path forms (``(c, 2^order)`` is ``(c + 1, 0)``), and the key is the
struct page's address ``vmemmap_base + pfn * sizeof(struct page)`` followed through the
deduplicated mapping.

The frame condition every loop summary rests on is written here too (``compound_frame``,
``tail_frame``): which struct pages an iteration may touch, in the kernel's terms; and the
assumptions every proof makes about these inputs (``input_assumptions``), each with the
kernel lines that guarantee it or the choice it is (``SOURCES``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

import z3
from attrs import evolve, field, frozen

from equiv.engine import bv
from equiv.engine.bv import BV, CBV, Cond, Val
from equiv.engine.errors import InputError
from equiv.loops import Owner, never
from equiv.page_model import KEY_BITS, Layout, Memory, Namer, SymMemory


class MemoryType(enum.IntEnum):
    """``enum memory_type`` (include/linux/memremap.h; 0 is reserved)."""

    PRIVATE = 1
    COHERENT = 2
    FS_DAX = 3
    GENERIC = 4
    PCI_P2PDMA = 5

    @property
    def kname(self) -> str:
        return f"MEMORY_DEVICE_{self.name}"


def parse_types(spec: str) -> list[MemoryType]:
    """The pgmap types of a ``--types`` value: ``all`` (every type, in enum order) or a comma
    list of names (``GENERIC`` or ``MEMORY_DEVICE_GENERIC``, any case), in order, without
    repeats.

    >>> [t.name for t in parse_types("generic,MEMORY_DEVICE_FS_DAX,generic")]
    ['GENERIC', 'FS_DAX']

    Raises:
        InputError: an unknown name; the message lists the valid ones.
    """
    if spec == "all":
        return list(MemoryType)
    out: list[MemoryType] = []
    valid = ", ".join(t.name for t in MemoryType)
    for name in spec.split(","):
        key = name.strip().upper().removeprefix("MEMORY_DEVICE_")
        if key not in MemoryType.__members__:
            raise InputError(f"unknown pgmap type {name.strip()!r}; valid: {valid}, all")
        out.append(MemoryType[key])
    return list(dict.fromkeys(out))


#: ``VMEMMAP_RESERVE_NR`` (include/linux/mm.h).
VMEMMAP_RESERVE_NR = 2
#: ``MIGRATE_MOVABLE`` (enum migratetype).
MIGRATE_MOVABLE = 1
#: ``MIGRATETYPE_AND_ISO_MASK``: migratetype bits 0..2 and PB_migrate_isolate (bit 4) [M].
MIGRATETYPE_AND_ISO_MASK = 0x17


class SymbolicOrder(TypeError):
    """A concrete order was asked of an order class's scenario (whose order is a symbolic
    input): the caller must use :attr:`Scenario.order_v` or a class-wide static test."""


#: the name of the compound order (``pgmap->vmemmap_shift``) when it is a symbolic input
ORDER_VAR = "vmemmap_shift"


@frozen
class Scenario:
    """The concrete part of one proof cell: config/layout, pgmap type, compound order.

    With ``order_hi`` the scenario is an *order class*: the compound order
    (``pgmap->vmemmap_shift``) is a symbolic input ranging over ``order ..= order_hi``, so
    one proof covers every order of the class.  A class is cut (:func:`order_classes`) so
    that every decision the model takes on the order in Python (``pfns_per_compound ==
    1``, ``order > 1``, ``vmemmap_can_optimize()``) is the same for all its orders; there
    :attr:`order` and :attr:`stride` raise :class:`SymbolicOrder` and the paths compute
    with :attr:`order_v` and :attr:`stride_v`, terms of the symbolic order.  For a single
    order both are the plain integers, so its queries are exactly those of before.
    """

    layout: Layout
    #: the pgmap type, or None: ``pgmap->type`` is then a symbolic input ranging over all
    #: five types, and one proof covers every type at once
    ptype: MemoryType | None
    _order: int = field(alias="order")
    #: the highest order of an order class (None: the single order ``order``)
    order_hi: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.order_hi is not None:
            lo, hi = self._order, self.order_hi
            if not 2 <= lo < hi:
                raise ValueError(f"an order class needs 2 <= lo < hi, not {lo}..{hi}")
            for test in (self._dedups_at, self._optimizes_at):
                if test(lo) != test(hi):
                    raise ValueError(f"orders {lo}..{hi} differ in a static decision")

    @property
    def is_class(self) -> bool:
        """Whether the order is a symbolic input (an order class)."""
        return self.order_hi is not None

    @property
    def orders(self) -> range:
        """The orders this scenario covers."""
        return range(self._order, (self.order_hi if self.order_hi is not None else self._order) + 1)

    @property
    def order(self) -> int:
        """The compound order; an order class has none (:class:`SymbolicOrder`)."""
        if self.order_hi is not None:
            raise SymbolicOrder(f"orders {self._order}..{self.order_hi} are one symbolic order")
        return self._order

    @property
    def order_label(self) -> str:
        """``"3"`` or ``"2-7"``."""
        return str(self._order) if self.order_hi is None else f"{self._order}-{self.order_hi}"

    @property
    def order_v(self) -> BV | int:
        """The compound order as a value: the integer, or the symbolic ``vmemmap_shift``
        (64 bits, as ``pgmap_vmemmap_nr()``'s shift count) of an order class."""
        if self.order_hi is None:
            return self._order
        return z3.BitVec(ORDER_VAR, 64)

    @property
    def stride(self) -> int:
        """``pfns_per_compound = pgmap_vmemmap_nr(pgmap) = 1 << vmemmap_shift``."""
        return 1 << self.order

    @property
    def stride_v(self) -> BV | int:
        """:attr:`stride` as a value: the integer, or ``1 << vmemmap_shift``."""
        if self.order_hi is None:
            return 1 << self._order
        return z3.BitVecVal(1, 64) << self.order_v

    def stride_like(self, x: Val) -> Val:
        """:attr:`stride_v` in the domain and width of ``x`` (64-bit): a constant of
        ``x``'s domain for one order, the ``1 << vmemmap_shift`` term in a class."""
        return bv.const_like(x, self.stride_v) if isinstance(self.stride_v, int) else self.stride_v

    @property
    def nr_pages_u32(self) -> BV | int:
        """``1U << order`` (a 32-bit ``unsigned int``: ``folio->_nr_pages``)."""
        return self.stride_v if isinstance(self.stride_v, int) else bv.extract(self.stride_v, 31, 0)

    def order_at_least(self, k: int) -> bool:
        """Is the order ``>= k``: the same answer for every order of a class, or
        :class:`SymbolicOrder`."""
        lo_ok, hi_ok = self._order >= k, self.orders[-1] >= k
        if lo_ok != hi_ok:
            raise SymbolicOrder(f"orders {self.order_label} straddle order {k}")
        return lo_ok

    @property
    def per_vmemmap_page(self) -> int:
        """``PAGE_SIZE / sizeof(struct page)``."""
        return self.layout.config.page_size // self.layout.size

    def _optimizes_at(self, order: int) -> bool:
        cfg, size = self.layout.config, self.layout.size
        if not cfg.ARCH_WANT_OPTIMIZE_DAX_VMEMMAP or size & (size - 1):
            return False
        return ((1 << order) * size) >> cfg.PAGE_SHIFT > VMEMMAP_RESERVE_NR

    def _dedups_at(self, order: int) -> bool:
        return self._optimizes_at(order) and (1 << order) > VMEMMAP_RESERVE_NR * self.per_vmemmap_page

    @property
    def can_optimize_static(self) -> bool:
        """``vmemmap_can_optimize()`` minus its ``!altmap`` term (mm.h, ARCH_WANT_OPTIMIZE_DAX_VMEMMAP)
        (the same for every order of a class)."""
        return self._optimizes_at(self._order)

    @property
    def dedups_static(self) -> bool:
        """Can a compound's vmemmap be deduplicated at all: :attr:`can_optimize_static` and
        more struct pages than the two vmemmap pages kept (the same for a whole class)."""
        return self._dedups_at(self._order)


def order_classes(layout: Layout, orders: Sequence[int]) -> list[tuple[int, int]]:
    """The order classes of ``orders``: maximal runs of consecutive orders ``>= 2`` on which
    every static decision of the model is the same (:class:`Scenario`), two orders or more
    each; orders 0 and 1 and lone orders are not in any.

    >>> from equiv.config import preset
    >>> order_classes(Layout.from_config(preset("x86_64-default")), range(19))
    [(2, 7), (8, 18)]
    """
    probe = Scenario(layout, None, 0)
    out: list[tuple[int, int]] = []
    run: list[int] = []

    def key(o: int) -> tuple[bool, bool]:
        return probe._optimizes_at(o), probe._dedups_at(o)

    for o in sorted(set(orders)):
        if o >= 2 and run and o == run[-1] + 1 and key(o) == key(run[-1]):
            run.append(o)
            continue
        if len(run) >= 2:
            out.append((run[0], run[-1]))
        run = [o] if o >= 2 else []
    if len(run) >= 2:
        out.append((run[0], run[-1]))
    return out


@frozen(kw_only=True, eq=False)
class Inputs:
    """Everything the two paths read besides the scenario.

    Symbolic in proofs, concrete in replays.  Pointers are addresses (64-bit values).
    """

    start_pfn: Val  # range->start >> PAGE_SHIFT, before the altmap adjustment
    nr_pages: Val
    nid: Val  # zone->zone_pgdat->node_id
    pgmap: Val  # struct dev_pagemap *
    pgmap_type: Val  # pgmap->type (enum memory_type, 32 bits)
    altmap_valid: Cond  # pgmap->flags & PGMAP_ALTMAP_VALID
    altmap_reserve: Val
    altmap_free: Val
    vmemmap_base: Val  # address of pfn 0's struct page (x86_64: vmemmap_base)
    page_offset: Val  # PAGE_OFFSET, for __va()
    mobility_disabled: Cond  # page_group_by_mobility_disabled
    tracepoint_on: Cond  # page_ref_set tracepoint enabled (only with DEBUG_PAGE_REF)
    early_section: Callable[[Val], Cond]  # early_section(__nr_to_section(nr))
    mem: Memory

    #: names of the scalar inputs, in report order
    SCALARS = ("start_pfn", "nr_pages", "nid", "pgmap", "pgmap_type", "altmap_valid", "altmap_reserve",
               "altmap_free", "vmemmap_base", "page_offset", "mobility_disabled",
               "tracepoint_on")


def symbolic_inputs(layout: Layout, *, first_form: bool = False) -> tuple[Inputs, z3.FuncDeclRef]:
    """Fresh symbolic inputs (stable dotted names) and the early_section function symbol.

    With ``first_form``, ``start_pfn`` and ``nr_pages`` are not variables but terms of two
    others: the first pfn the loops initialise, ``first_pfn`` (``start_pfn`` plus the
    altmap's reserve and free pages when there is an altmap), and the pages from it to the
    end, ``first_nr_pages``: ``start_pfn = first_pfn - off`` and ``nr_pages =
    first_nr_pages + off`` with ``off = altmap_valid ? reserve + free : 0``.  This is a
    bijection of the inputs (every value of the two old variables is reached once, for
    each altmap), so a query is satisfiable in one form iff in the other and a model of
    either gives the same inputs; but the loops' first pfn and end, which the pfn, owner
    and pageblock arithmetic of every loop summary is written in, become the plain sums
    ``first_pfn`` and ``first_pfn + first_nr_pages``, which z3's rewriter cancels where
    the altmap's three-term sum made it bit-blast adders (a pageblock query of ``--compare
    v6.12`` at order 0: over 60 s, then 2 s).
    """
    b64 = z3.BitVecSort(64)
    early = z3.Function("early_section", b64, z3.BoolSort())
    valid = z3.Bool("altmap_valid")
    reserve, free = z3.BitVec("altmap_reserve", 64), z3.BitVec("altmap_free", 64)
    if first_form:
        off = z3.If(valid, reserve + free, z3.BitVecVal(0, 64))
        start = z3.BitVec("first_pfn", 64) - off
        nr = z3.BitVec("first_nr_pages", 64) + off
    else:
        start, nr = z3.BitVec("start_pfn", 64), z3.BitVec("nr_pages", 64)
    inp = Inputs(
        start_pfn=start, nr_pages=nr,
        nid=z3.BitVec("nid", 64), pgmap=z3.BitVec("pgmap", 64),
        pgmap_type=z3.BitVec("pgmap.type", 32),
        altmap_valid=valid, altmap_reserve=reserve,
        altmap_free=free, vmemmap_base=z3.BitVec("vmemmap_base", 64),
        page_offset=z3.BitVec("page_offset", 64),
        mobility_disabled=z3.Bool("mobility_disabled"),
        tracepoint_on=z3.Bool("tracepoint_on"),
        early_section=lambda nr: early(nr),
        mem=SymMemory.fresh("mem0", layout.nwords, events=layout.config.tracks_events),
    )
    return inp, early


# ---- the assumptions about the inputs ------------------------------------------------------
#
# Every cell of every proof (the hand model's, ``--linux``'s, ``--patch``'s) asserts these
# terms in every query; each carries what it says and where it comes from, so that what a
# report prints is what the solver was given.  Line numbers are those of Linux 6.12.117
# (Debian's linux-source-6.12), where the text was read; a report of a tree finds each line
# again in the tree it read (equiv/zone_device/source/assumed.py).

#: the kernel release whose text the sites below were read in
SITES_VERSION = "6.12.117"
SITES_READ_IN = f"Linux {SITES_VERSION}"


@frozen
class Site:
    """One line of the kernel's text an assumption rests on: its file, the function (or
    macro, struct) it is in, its line in :data:`SITES_READ_IN` and its text, by which a
    report finds it in another tree."""

    file: str
    line: int
    function: str
    text: str


#: What an assumption's :attr:`Source.kind` means, as reports print it.
SOURCE_KINDS = {
    "kernel": "kernel invariant",
    "config": "the configuration",
    "choice": "a choice of the project",
}


@frozen
class Source:
    """Where an assumption comes from: a kernel invariant (``kernel``: the kernel's text
    guarantees it at the ``guaranteed_by`` lines, the function checked relies on it at the
    ``relied_on`` ones), a fact of the configuration (``config``) or a named choice of the
    project (``choice``); ``why`` says it in one sentence, naming the functions and files;
    ``beyond`` what the assumption claims that the kernel's text does not guarantee."""

    kind: str
    tag: str  # the reading tag (docs/model.md): R read in the text named, M general knowledge
    why: str
    relied_on: tuple[Site, ...] = ()
    guaranteed_by: tuple[Site, ...] = ()
    beyond: str = ""

    def __attrs_post_init__(self) -> None:
        if self.kind not in SOURCE_KINDS:
            raise ValueError(f"unknown source kind {self.kind!r}; valid: {', '.join(SOURCE_KINDS)}")


def assumption_name(text: str, tag: str, kind: str, why: str, beyond: str = "") -> str:
    """An assumption as one line: ``text [tag] (kind): why``, then what it claims beyond
    the kernel's guarantee, if anything.

    >>> assumption_name("nid < 64", "R", "kernel", "node ids are below MAX_NUMNODES")
    'nid < 64 [R] (kernel invariant): node ids are below MAX_NUMNODES'
    """
    more = f"; beyond the kernel's guarantee: {beyond}" if beyond else ""
    return f"{text} [{tag}] ({SOURCE_KINDS[kind]}): {why}{more}"


@frozen
class Stated:
    """An assumption as reports print it (no solver term: it crosses processes): a stable
    ``key``, what it says and where it comes from."""

    key: str
    text: str
    source: Source

    @property
    def name(self) -> str:
        """The one line the model's reports print: ``text [tag] (kind): why``, and what it
        claims beyond the kernel's guarantee."""
        return assumption_name(self.text, self.source.tag, self.source.kind, self.source.why,
                               self.source.beyond)


@frozen(eq=False)
class Assumption:
    """One assumption of a cell: the term every query of the cell asserts, and what it
    says (:class:`Stated`): a report prints the same object that constrains the solver."""

    stated: Stated
    term: z3.BoolRef

    @property
    def key(self) -> str:
        return self.stated.key

    @property
    def name(self) -> str:
        return self.stated.name


_s = Site

_MIZD = "memmap_init_zone_device"
#: memmap_init_zone_device()'s one caller runs it with the range as __add_pages() accepted it
_PAGEMAP_RANGE = (
    _s("mm/memremap.c", 238, "pagemap_range", "error = add_pages(nid, PHYS_PFN(range->start),"),
    _s("mm/memremap.c", 247, "pagemap_range",
       "error = arch_add_memory(nid, range->start, range_len(range),"),
    _s("mm/memremap.c", 262, "pagemap_range", "goto err_add_memory;"),
    _s("mm/memremap.c", 268, "pagemap_range",
       "memmap_init_zone_device(&NODE_DATA(nid)->node_zones[ZONE_DEVICE],"),
)
#: every architecture's arch_add_memory() (and add_pages()) reaches __add_pages() with the
#: range's first pfn and page count
_ARCH_ADD_PAGES = (
    _s("arch/x86/mm/init_64.c", 1012, "arch_add_memory",
       "return add_pages(nid, start_pfn, nr_pages, params);"),
    _s("arch/x86/mm/init_64.c", 985, "add_pages",
       "ret = __add_pages(nid, start_pfn, nr_pages, params);"),
    _s("arch/arm64/mm/mmu.c", 1387, "arch_add_memory",
       "ret = __add_pages(nid, start >> PAGE_SHIFT, size >> PAGE_SHIFT,"),
    _s("arch/powerpc/mm/mem.c", 154, "arch_add_memory",
       "rc = add_pages(nid, start_pfn, nr_pages, params);"),
    _s("arch/powerpc/mm/mem.c", 133, "add_pages",
       "ret = __add_pages(nid, start_pfn, nr_pages, params);"),
    _s("arch/s390/mm/init.c", 287, "arch_add_memory",
       "rc = __add_pages(nid, start_pfn, size_pages, params);"),
    _s("arch/loongarch/mm/init.c", 97, "arch_add_memory",
       "ret = __add_pages(nid, start_pfn, nr_pages, params);"),
    _s("arch/riscv/mm/init.c", 1828, "arch_add_memory",
       "ret = __add_pages(nid, start >> PAGE_SHIFT, size >> PAGE_SHIFT, params);"),
)
#: the one altmap of the tree: __nvdimm_setup_pfn()'s, and the two ways it reaches
#: memremap_pages() (fsdax pmem, device-dax on pmem)
_ALTMAP_CALLERS = (
    _s("drivers/nvdimm/pfn_devs.c", 697, "__nvdimm_setup_pfn", ".reserve = init_altmap_reserve(base),"),
    _s("drivers/nvdimm/pfn_devs.c", 718, "__nvdimm_setup_pfn", "altmap->free = PHYS_PFN(offset - reserve);"),
    _s("drivers/nvdimm/pfn_devs.c", 720, "__nvdimm_setup_pfn", "pgmap->flags |= PGMAP_ALTMAP_VALID;"),
    _s("drivers/nvdimm/pmem.c", 492, "pmem_attach_disk", "rc = nvdimm_setup_pfn(nd_pfn, &pmem->pgmap);"),
    _s("drivers/nvdimm/pmem.c", 529, "pmem_attach_disk", "addr = devm_memremap_pages(dev, &pmem->pgmap);"),
    _s("drivers/dax/pmem.c", 33, "__dax_pmem_probe", "rc = nvdimm_setup_pfn(nd_pfn, &pgmap);"),
    _s("drivers/dax/pmem.c", 64, "__dax_pmem_probe", ".pgmap = &pgmap,"),
    _s("drivers/dax/bus.c", 1467, "__devm_create_dev_dax", "dev_dax->pgmap = kmemdup(data->pgmap,"),
    _s("drivers/dax/device.c", 448, "dev_dax_probe", "addr = devm_memremap_pages(dev, pgmap);"),
    _s("drivers/gpu/drm/amd/amdkfd/kfd_migrate.c", 1074, "kgd2kfd_init_zone_device",
       "pgmap->flags = 0;"),
)
#: the type every caller of memremap_pages() gives its pgmap
_TYPE_SETTERS = (
    _s("drivers/nvdimm/pmem.c", 527, "pmem_attach_disk", "pmem->pgmap.type = MEMORY_DEVICE_FS_DAX;"),
    _s("drivers/nvdimm/pmem.c", 541, "pmem_attach_disk", "pmem->pgmap.type = MEMORY_DEVICE_FS_DAX;"),
    _s("drivers/dax/device.c", 444, "dev_dax_probe", "pgmap->type = MEMORY_DEVICE_GENERIC;"),
    _s("fs/fuse/virtio_fs.c", 1087, "virtio_fs_setup_dax", "pgmap->type = MEMORY_DEVICE_FS_DAX;"),
    _s("drivers/xen/unpopulated-alloc.c", 93, "fill_list", "pgmap->type = MEMORY_DEVICE_GENERIC;"),
    _s("drivers/gpu/drm/amd/amdkfd/kfd_migrate.c", 1061, "kgd2kfd_init_zone_device",
       "pgmap->type = MEMORY_DEVICE_COHERENT;"),
    _s("drivers/gpu/drm/amd/amdkfd/kfd_migrate.c", 1068, "kgd2kfd_init_zone_device",
       "pgmap->type = MEMORY_DEVICE_PRIVATE;"),
    _s("drivers/gpu/drm/nouveau/nouveau_dmem.c", 251, "nouveau_dmem_chunk_alloc",
       "chunk->pagemap.type = MEMORY_DEVICE_PRIVATE;"),
    _s("drivers/pci/p2pdma.c", 321, "pci_p2pdma_add_resource", "pgmap->type = MEMORY_DEVICE_PCI_P2PDMA;"),
    _s("lib/test_hmm.c", 565, "dmirror_allocate_chunk", "devmem->pagemap.type = MEMORY_DEVICE_PRIVATE;"),
    _s("lib/test_hmm.c", 573, "dmirror_allocate_chunk", "devmem->pagemap.type = MEMORY_DEVICE_COHERENT;"),
    _s("arch/powerpc/kvm/book3s_hv_uvmem.c", 1186, "kvmppc_uvmem_init",
       "kvmppc_uvmem_pgmap.type = MEMORY_DEVICE_PRIVATE;"),
)

#: The source of each assumption of :func:`input_assumptions`, by key.
SOURCES: dict[str, Source] = {
    "range-physmem": Source(
        "kernel", "R",
        "pagemap_range() (mm/memremap.c), memmap_init_zone_device()'s only caller, maps no "
        "range mhp_range_allowed() (mm/memory_hotplug.c) refuses: start < end and end - 1 <= "
        "PHYSMEM_END, 2^MAX_PHYSMEM_BITS - 1 (include/linux/mm.h)",
        relied_on=(_s("mm/mm_init.c", 1082, _MIZD,
                      "unsigned long pfn, end_pfn = start_pfn + nr_pages;"),),
        guaranteed_by=(
            _s("mm/memremap.c", 219, "pagemap_range",
               "if (!mhp_range_allowed(range->start, range_len(range), !is_private)) {"),
            _s("mm/memory_hotplug.c", 1730, "mhp_range_allowed",
               "if (start < end && start >= mhp_range.start && (end - 1) <= mhp_range.end)"),
            _s("include/linux/mm.h", 102, "PHYSMEM_END",
               "# define PHYSMEM_END	((1ULL << MAX_PHYSMEM_BITS) - 1)"),
            _PAGEMAP_RANGE[3])),
    "range-aligned": Source(
        "kernel", "R",
        "__add_pages() (mm/memory_hotplug.c) refuses a start_pfn or nr_pages that is not a "
        "multiple of PAGES_PER_SUBSECTION (2 MiB: order 9 with 4K pages); a larger compound "
        "comes only from device-dax (drivers/dax/device.c), whose vmemmap_shift is its align, "
        "and alloc_dax_region() and dev_dax_validate_align() (drivers/dax/bus.c) align the "
        "region and each range's length to it",
        relied_on=(_s("mm/mm_init.c", 1085, _MIZD,
                      "unsigned int pfns_per_compound = pgmap_vmemmap_nr(pgmap);"),),
        guaranteed_by=(
            _s("mm/memory_hotplug.c", 413, "__add_pages", "if (check_pfn_span(pfn, nr_pages)) {"),
            _s("mm/memory_hotplug.c", 335, "check_pfn_span",
               "if (!IS_ALIGNED(pfn | nr_pages, min_align))"),
            _s("drivers/dax/device.c", 446, "dev_dax_probe", "pgmap->vmemmap_shift ="),
            _s("drivers/dax/bus.c", 649, "alloc_dax_region", "if (!IS_ALIGNED(range->start, align)"),
            _s("drivers/dax/bus.c", 1217, "dev_dax_validate_align",
               "if (!alloc_is_aligned(dev_dax, len)) {"),
            *_PAGEMAP_RANGE),
        beyond="above PAGES_PER_SUBSECTION the kernel does not align the start of a device-dax "
               "range given through its 'mapping' attribute (drivers/dax/bus.c:1192 "
               "mapping_store checks the length only), nor start_pfn when a pmem namespace's "
               "altmap precedes the data (drivers/dax/pmem.c:54 aligns the data after the "
               "altmap, whose first pfn and end are then multiples of the compound size)"),
    "nid": Source(
        "kernel", "R",
        "the zone is NODE_DATA(nid)'s ZONE_DEVICE zone (mm/memremap.c), whose node_id "
        "free_area_init_node() (mm/mm_init.c) sets to its index in node_data[], below "
        "MAX_NUMNODES = 1 << NODES_SHIFT (include/linux/numa.h; 1 without NUMA)",
        relied_on=(_s("mm/mm_init.c", 1088, _MIZD, "int nid = pgdat->node_id;"),),
        guaranteed_by=(_PAGEMAP_RANGE[3],
                       _s("mm/mm_init.c", 1708, "free_area_init_node", "pgdat->node_id = nid;"),
                       _s("include/linux/numa.h", 13, "MAX_NUMNODES",
                          "#define MAX_NUMNODES    (1 << NODES_SHIFT)"))),
    "pgmap-pointer": Source(
        "kernel", "R",
        "memremap_pages() (mm/memremap.c) reads through pgmap before pagemap_range() passes "
        "it on, and struct dev_pagemap (include/linux/memremap.h) holds pointers and "
        "unsigned longs, so the C ABI aligns it to 8 bytes (its address goes into "
        "page->pgmap, the word of compound_head: bit 0 must be clear)",
        relied_on=(_s("mm/mm_init.c", 1084, _MIZD, "struct vmem_altmap *altmap = pgmap_altmap(pgmap);"),
                   _s("mm/mm_init.c", 1014, "__init_zone_device_page", "page->pgmap = pgmap;")),
        guaranteed_by=(_s("mm/memremap.c", 295, "memremap_pages", ".altmap = pgmap_altmap(pgmap),"),
                       _PAGEMAP_RANGE[3],
                       _s("include/linux/memremap.h", 127, "struct dev_pagemap",
                          "struct dev_pagemap {"))),
    "altmap-in-range": Source(
        "kernel", "R",
        "__add_pages() (mm/memory_hotplug.c) refuses an altmap whose base_pfn is not the "
        "range's first pfn or whose vmem_altmap_offset() = reserve + free exceeds nr_pages, "
        "and pagemap_range() (mm/memremap.c), memmap_init_zone_device()'s only caller, calls "
        "it with that pfn and page count only after add_pages() or arch_add_memory(), which "
        "reach __add_pages() on every architecture, succeeded; the tree's one altmap, "
        "__nvdimm_setup_pfn()'s (drivers/nvdimm/pfn_devs.c, for fsdax pmem and device-dax on "
        "pmem), has free = PHYS_PFN() of a u64 (below 2^52) and reserve a few pages, so "
        "reserve + free does not wrap",
        relied_on=(_s("mm/mm_init.c", 1099, _MIZD,
                      "start_pfn = altmap->base_pfn + vmem_altmap_offset(altmap);"),
                   _s("include/linux/mm.h", 3919, "vmem_altmap_offset",
                      "return altmap->reserve + altmap->free;")),
        guaranteed_by=(
            _s("mm/memory_hotplug.c", 405, "__add_pages", "if (altmap->base_pfn != pfn"),
            _s("mm/memory_hotplug.c", 406, "__add_pages",
               "|| vmem_altmap_offset(altmap) > nr_pages) {"),
            *_PAGEMAP_RANGE, *_ARCH_ADD_PAGES, *_ALTMAP_CALLERS)),
    "vmemmap-base": Source(
        "choice", "R",
        "the vmemmap is placed as on x86-64 for every preset, at "
        "__VMEMMAP_BASE_L4 or where KASLR's kernel_randomize_memory() puts it, in PUD-sized "
        "steps (arch/x86)",
        guaranteed_by=(_s("arch/x86/include/asm/pgtable_64_types.h", 133, "__VMEMMAP_BASE_L4",
                          "#define __VMEMMAP_BASE_L4	0xffffea0000000000UL"),
                       _s("arch/x86/mm/kaslr.c", 146, "kernel_randomize_memory",
                          "entropy = (rand % (entropy + 1)) & PUD_MASK;"))),
    "page-offset": Source(
        "choice", "R",
        "the direct map is placed as on x86-64 for every preset, at "
        "__PAGE_OFFSET_BASE_L4 or where KASLR's kernel_randomize_memory() puts it, in "
        "PUD-sized steps (arch/x86)",
        guaranteed_by=(_s("arch/x86/include/asm/page_64_types.h", 42, "__PAGE_OFFSET_BASE_L4",
                          "#define __PAGE_OFFSET_BASE_L4	_AC(0xffff888000000000, UL)"),
                       _s("arch/x86/mm/kaslr.c", 146, "kernel_randomize_memory",
                          "entropy = (rand % (entropy + 1)) & PUD_MASK;"))),
    "order-class": Source(
        "choice", "class",
        "one proof for every order of the class, each order's "
        "assumptions and page roles checked satisfiable on their own"),
    "pgmap-type": Source(
        "kernel", "R",
        "memremap_pages() (mm/memremap.c) takes the five types and only WARNs on another, "
        "and every caller in the tree sets one of them",
        relied_on=(_s("mm/mm_init.c", 1021, "__init_zone_device_page",
                      "if (pgmap->type == MEMORY_DEVICE_PRIVATE ||"),),
        guaranteed_by=(_s("mm/memremap.c", 347, "memremap_pages",
                          'WARN(1, "Invalid pgmap type %d\\n", pgmap->type);'),
                       *_TYPE_SETTERS)),
    "pgmap-type-cell": Source(
        "choice", "R",
        "the cell of this pgmap type (--types names the cells); every caller in the tree "
        "sets one of the five",
        relied_on=(_s("mm/mm_init.c", 1021, "__init_zone_device_page",
                      "if (pgmap->type == MEMORY_DEVICE_PRIVATE ||"),),
        guaranteed_by=_TYPE_SETTERS),
    "page-ref-tracepoints": Source(
        "config", "R",
        "CONFIG_DEBUG_PAGE_REF is off, so page_ref_tracepoint_active() is false "
        "(include/linux/page_ref.h)",
        relied_on=(_s("include/linux/page_ref.h", 18, "page_ref_tracepoint_active",
                      "#ifdef CONFIG_DEBUG_PAGE_REF"),)),
}


def _stated(key: str, text: str, term: z3.BoolRef, source: str | None = None) -> Assumption:
    return Assumption(Stated(key, text, SOURCES[source or key]), term)


def input_assumptions(sc: Scenario, inp: Inputs) -> list[Assumption]:
    """The environment the kernel guarantees (and the project's named choices): each
    assumption's term, what it says and where it comes from (:data:`SOURCES`).  Every cell
    of every proof asserts exactly these; reports print them from the same objects."""
    cfg = sc.layout.config
    pfn_bits = cfg.MAX_PHYSMEM_BITS - cfg.PAGE_SHIFT
    limit = z3.BitVecVal(1 << pfn_bits, 64)
    sp, nr = inp.start_pfn, inp.nr_pages
    assert isinstance(sp, z3.BitVecRef) and isinstance(nr, z3.BitVecRef)
    out = [
        _stated("range-physmem", "range within MAX_PHYSMEM_BITS: start_pfn + nr_pages <= "
                f"2^{pfn_bits} (no wrap)",
                z3.And(z3.ULT(sp, limit), z3.ULE(nr, limit), z3.ULE(sp + nr, limit))),
        _stated("range-aligned", "range aligned to the compound size: start_pfn and nr_pages "
                "multiples of 2^order",
                z3.And(sp & (sc.stride_v - 1) == 0, nr & (sc.stride_v - 1) == 0)),
        _stated("nid", "nid < MAX_NUMNODES",
                z3.ULT(inp.nid, 1 << (cfg.NODES_SHIFT if cfg.NUMA else 0))),
        _stated("pgmap-pointer", "pgmap is a non-NULL, 8-aligned pointer",
                z3.And(inp.pgmap != 0, inp.pgmap & 7 == 0)),
        _stated("altmap-in-range", "altmap lies inside the range: altmap->base_pfn == "
                "start_pfn, reserve + free <= nr_pages, no wrap",
                z3.And(z3.ULE(inp.altmap_reserve, nr), z3.ULE(inp.altmap_free, nr),
                       z3.ULE(inp.altmap_reserve + inp.altmap_free, nr))),
        _stated("vmemmap-base", "vmemmap_base is PUD-aligned in the kernel half, no wrap over "
                "the memmap",
                z3.And(inp.vmemmap_base & ((1 << 30) - 1) == 0,
                       z3.UGE(inp.vmemmap_base, 0xFFFF800000000000),
                       z3.ULE(inp.vmemmap_base, 0xFFFFFE0000000000))),
        _stated("page-offset", "PAGE_OFFSET is PUD-aligned in the kernel half, direct map "
                "does not wrap",
                z3.And(inp.page_offset & ((1 << 30) - 1) == 0,
                       z3.UGE(inp.page_offset, 0xFFFF800000000000),
                       z3.ULE(inp.page_offset, 0xFFFFF00000000000))),
    ]
    if sc.order_hi is not None:
        shift = sc.order_v
        assert isinstance(shift, z3.BitVecRef)
        out.append(_stated("order-class", f"vmemmap_shift is one of the orders {sc.order_label}",
                           z3.And(z3.UGE(shift, sc.orders[0]), z3.ULE(shift, sc.orders[-1]))))
    pt = inp.pgmap_type
    if sc.ptype is None:
        out.append(_stated("pgmap-type", "pgmap->type is one of the five memory types (any "
                           "of them)", z3.And(z3.UGE(pt, 1), z3.ULE(pt, 5))))
    else:
        out.append(_stated(f"pgmap-type={sc.ptype.name}", f"pgmap->type == {sc.ptype.kname}",
                           pt == int(sc.ptype), "pgmap-type-cell"))
    if not cfg.DEBUG_PAGE_REF:
        out.append(_stated("page-ref-tracepoints", "page_ref tracepoints compiled out "
                           "(!DEBUG_PAGE_REF)", z3.Not(inp.tracepoint_on)))
    return out


def assumptions(sc: Scenario, inp: Inputs) -> list[tuple[str, z3.BoolRef]]:
    """:func:`input_assumptions` as (the line reports print, the term) pairs, the form the
    model's checker keeps them in."""
    return [(a.name, a.term) for a in input_assumptions(sc, inp)]


# ---- address arithmetic shared by both paths ------------------------------------------


@frozen
class Geometry:
    """Where the loop runs: the first pfn after the altmap adjustment and the compound count.

    Mirrors the prologue of ``memmap_init_zone_device()``:
    ``end_pfn = start_pfn + nr_pages; if (altmap) { start_pfn = altmap->base_pfn +
    vmem_altmap_offset(altmap); nr_pages = end_pfn - start_pfn; }`` with
    ``altmap->base_pfn == range start`` and ``vmem_altmap_offset = reserve + free``.
    """

    start: Val  # first pfn of the loop
    end: Val  # end_pfn
    nr_pages: Val  # after the adjustment
    ncompounds: Val  # trip count of the heads loop: ceil(nr_pages / stride)


def geometry(sc: Scenario, inp: Inputs) -> Geometry:
    end = inp.start_pfn + inp.nr_pages
    adj = bv.ite(inp.altmap_valid, inp.altmap_reserve + inp.altmap_free, bv.const_like(inp.start_pfn, 0))
    start = inp.start_pfn + adj
    nr = end - start
    ncomp = bv.lshr(nr + (sc.stride_v - 1), sc.order_v)
    return Geometry(start=start, end=end, nr_pages=nr, ncompounds=ncomp)


def pfn_of(sc: Scenario, g: Geometry, c: Val, t: Val) -> Val:
    """pfn of tail ``t`` of compound ``c``: ``start + (c << order) + t``."""
    return g.start + (c << sc.order_v) + t


def page_addr(sc: Scenario, inp: Inputs, pfn: Val) -> Val:
    """``pfn_to_page(pfn)`` as an address: ``vmemmap + pfn * sizeof(struct page)``."""
    size = sc.layout.size
    if size & (size - 1) == 0:
        return inp.vmemmap_base + (pfn << bv.ilog2(size))
    return inp.vmemmap_base + pfn * size


def va(sc: Scenario, inp: Inputs, pfn: Val) -> Val:
    """``__va(pfn << PAGE_SHIFT)`` = ``PAGE_OFFSET + (pfn << PAGE_SHIFT)``."""
    return inp.page_offset + (pfn << sc.layout.config.PAGE_SHIFT)


def section_nr(sc: Scenario, pfn: Val) -> Val:
    """``pfn_to_section_nr(pfn) = pfn >> PFN_SECTION_SHIFT``."""
    return bv.lshr(pfn, sc.layout.config.pfn_section_shift)


def deduplicated(sc: Scenario, inp: Inputs, head_pfn: Val) -> Cond:
    """Is the vmemmap of the compound headed by ``head_pfn`` deduplicated?  The condition of
    ``compound_nr_pages()`` (mm/mm_init.c, with Muchun's early-section fix): the static
    ``vmemmap_can_optimize()`` terms, no altmap, and not an early section (whose memmap was
    populated without the compound optimisation)."""
    if not sc.can_optimize_static:
        return False  # (the same for every order of a class)
    return bv.and_(bv.not_(inp.altmap_valid), bv.not_(inp.early_section(section_nr(sc, head_pfn))))


def _small_const(t: Val, bound: int) -> bool:
    """``t`` is a constant in ``[0, bound)`` (no deduplication can apply to it)."""
    if isinstance(t, CBV):
        return int(t) < bound
    return bool(z3.is_bv_value(t) and t.as_long() < bound)


M64 = (1 << 64) - 1


def join_key(sc: Scenario, c: Val, s: Val) -> Val:
    """The storage key of slot ``s < 2^order`` of compound ``c``: ``c ++ s`` (128 bits)."""
    return bv.concat(c, s)


def key_compound(sc: Scenario, n: Val) -> Val:
    """The compound of storage key ``n`` (of a key written ``c ++ s``, the term ``c``
    itself: :func:`equiv.engine.bv.extract`)."""
    return bv.extract(n, 127, 64)


def key_slot(sc: Scenario, n: Val) -> Val:
    """The slot of storage key ``n`` in its compound (below ``2^order``; of ``c ++ s``,
    the term ``s``)."""
    return bv.extract(n, 63, 0)


def vmemmap_namer(sc: Scenario, inp: Inputs) -> Namer:
    """The storage key of the struct page of pfn ``first + (c << order) + t``: how
    ``pfn_to_page()`` reaches memory through the vmemmap as ``memremap_pages()`` populated
    it (``vmemmap_populate_compound_pages``, Documentation/mm/vmemmap_dedup.rst).

    The key is the pair ``(c', s')`` with ``c' << order + s' == (c << order) + t`` and
    ``0 <= s' < 2^order`` (``t`` read as signed: ``t == 2^order`` is compound ``c + 1``'s
    head, ``t == -1`` compound ``c - 1``'s last tail), then, in a deduplicated compound of
    the range, a slot ``s' >= 2P`` folded onto ``P + s' % P``.  So every struct page has
    one key whichever compound a path counted it from.  Compound numbers are 64-bit: the
    key tells apart pfns ``2^64`` apart, which no path forms (pfns are below
    ``2^MAX_PHYSMEM_BITS``).

    Invariant (tested in tests/test_properties.py): ``vmemmap_base + (first + (c' <<
    order) + s') * sizeof(struct page)`` is the struct page ``vmemmap_base + pfn *
    sizeof(struct page)`` reaches, the deduplicated vmemmap pages of a compound all mapping
    its second vmemmap page.  Struct pages outside the range's compounds are never aliased
    (their memmap belongs to whatever memory lies there).

    One exception, for solver speed: a symbolic ``t`` (a loop's index) is named in
    compound ``c`` as it is; past the compound's end that is a key with a slot ``>=
    2^order``, which names no struct page.  Such a store or load is outside its loop's
    frame (``tail_frame`` owns slots below ``2^order`` only), so the frame lemma fails, no
    page role is PROVED, and the concrete replay (exact names) decides.
    """
    order, p, stride = sc.order_v, sc.per_vmemmap_page, sc.stride_v
    # slots below it are inside their compound at every order of the scenario
    small = 1 << sc.orders[0]
    dedup = sc.dedups_static
    g = geometry(sc, inp) if dedup else None
    reserve = VMEMMAP_RESERVE_NR * p
    if not bv.is_sym(inp.start_pfn):
        return _concrete_namer(sc, inp, g)

    opt_of: dict[int, tuple[Val, Cond]] = {}  # compound term id -> (term, deduplicated)

    def compound_dedup(c: BV) -> Cond:
        assert g is not None
        hit = opt_of.get(c.get_id())
        if hit is None:
            head = pfn_of(sc, g, c, bv.const_like(c, 0))  # the term compound_nr_pages() uses
            hit = opt_of[c.get_id()] = (
                c, bv.and_(bv.ult(c, g.ncompounds), deduplicated(sc, inp, head)))
        return hit[1]

    def in_compound(c: Val, t: Val) -> Val:
        """Slot ``t < 2^order`` of compound ``c`` (terms shared with compound_nr_pages)."""
        if g is None or _small_const(t, reserve):
            return join_key(sc, c, t)
        opt = bv.and_(compound_dedup(c), bv.not_(bv.ult(t, reserve)))
        return join_key(sc, c, bv.ite(opt, (t & (p - 1)) | p, t))

    memo: dict[tuple[int, int], tuple[Val, Val, Val]] = {}  # holds the terms: ids stay unique

    def name(c: BV, t: BV) -> Val:
        key = (c.get_id(), t.get_id())
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = (c, t, _name(c, t))
        return hit[2]

    def _name(c: Val, t: Val) -> Val:
        if _small_const(t, small):
            return in_compound(c, t)
        if isinstance(t, CBV) or not z3.is_bv_value(t):  # (a CBV is never a z3 numeral)
            # a loop's index: named in its compound even past the compound's end, where
            # the key has a slot >= 2^order that no canonical key has; tail_frame owns no
            # such slot, so the store fails the frame lemma and the concrete replay
            # (exact names) decides
            return in_compound(c, t)
        c2 = c + (t >> order)  # z3's >> shifts arithmetically: t is read as signed
        return in_compound(c2, t & (stride - 1))

    return name


def _concrete_namer(sc: Scenario, inp: Inputs, g: Geometry | None) -> Namer:
    """:func:`vmemmap_namer` on plain integers (the replay names every struct page of an
    order-18 compound: the same function, without building bit-vector terms)."""
    order, p, stride = sc.order, sc.per_vmemmap_page, sc.stride
    reserve = VMEMMAP_RESERVE_NR * p
    first = 0 if g is None else int(g.start)
    ncomp = 0 if g is None else int(g.ncompounds)
    dedup: dict[int, bool] = {}

    def name(c: Val, t: Val) -> Val:
        ts = int(t)
        ts = ts - (1 << 64) if ts >> 63 else ts
        cc, ss = (int(c) + (ts >> order)) & M64, ts & (stride - 1)
        if cc < ncomp and ss >= reserve:
            d = dedup.get(cc)
            if d is None:
                d = dedup[cc] = bool(deduplicated(sc, inp, CBV((first + (cc << order)) & M64, 64)))
            if d:
                ss = p | (ss & (p - 1))
        return CBV((cc << 64) | ss, KEY_BITS)

    return name


def storage_pfn(sc: Scenario, inp: Inputs, pfn: Val) -> tuple[Cond, Val]:
    """The struct page whose storage ``pfn_to_page(pfn)`` reaches, for a path that names
    struct pages by pfn (the C path, :class:`equiv.zone_device.source.cstate.VmemmapFold`):
    ``(aliased, storage pfn)``, the fold of :func:`vmemmap_namer` in pfn terms.

    With ``t = (pfn - first) & (2^order - 1)`` and ``c = (pfn - first) >> order`` (``first``
    the loop's first pfn, :func:`geometry`), ``pfn`` is *aliased* iff compound ``c`` is one
    of the range's (``c`` below the number of compounds), its vmemmap is deduplicated
    (:func:`deduplicated`: the static ``vmemmap_can_optimize()`` terms, no altmap, not an
    early section: ``compound_nr_pages()``, mm/mm_init.c 6.12) and ``t >=
    VMEMMAP_RESERVE_NR * P`` (``P = PAGE_SIZE / sizeof(struct page)``); its storage is then
    that of tail ``P + t % P`` of the same compound (``vmemmap_populate_compound_pages()``,
    mm/sparse-vmemmap.c 6.12: every vmemmap page of a compound past the first two maps the
    second one; Documentation/mm/vmemmap_dedup.rst).  Otherwise ``pfn`` is its own storage
    (the storage pfn returned is ``pfn`` itself where ``aliased`` is False).  Where the
    scenario cannot deduplicate (:attr:`Scenario.dedups_static`), ``(False, pfn)``."""
    if not sc.dedups_static:
        return False, pfn
    g = geometry(sc, inp)
    p = sc.per_vmemmap_page
    rel = pfn - g.start
    c = bv.lshr(rel, sc.order_v)
    t = rel & (sc.stride_like(rel) - 1)
    head = pfn - t  # first + (c << order), the pfn compound_nr_pages() is given
    aliased = bv.and_(bv.ult(c, g.ncompounds),
                      bv.not_(bv.ult(t, bv.const_like(t, VMEMMAP_RESERVE_NR * p))),
                      deduplicated(sc, inp, head))
    return aliased, head + ((t & (p - 1)) | p)


def with_vmemmap(sc: Scenario, inp: Inputs) -> Inputs:
    """``inp`` whose memory is seen through the vmemmap mapping of this scenario."""
    return evolve(inp, mem=inp.mem.named(vmemmap_namer(sc, inp)))


def pfn_of_key(sc: Scenario, g: Geometry, n: Val) -> Val:
    """The pfn of storage key ``n`` (for an aliased key: the pfn whose storage it is)."""
    return pfn_of(sc, g, key_compound(sc, n), key_slot(sc, n))


def concrete_inputs(layout: Layout, *, start_pfn: int, nr_pages: int, nid: int = 1,
                    pgmap: int = 0xFFFF888012340000, pgmap_type: int = 4,
                    altmap: tuple[int, int] | None = None,
                    vmemmap_base: int = 0xFFFFEA0000000000,
                    page_offset: int = 0xFFFF888000000000, mobility_disabled: bool = False,
                    tracepoint_on: bool = False, early: frozenset[int] = frozenset(),
                    garbage: int = 0x5A) -> Inputs:
    """Concrete inputs for replays and tests.  Unwritten struct pages hold a per-page byte
    pattern derived from ``garbage`` and the storage key (never zero), so a missed store is
    visible."""
    from equiv.page_model import PB_BITS, ConcreteMemory, PageState

    size = layout.size
    unwritten = ((),) * size  # one object: the model's provenance memo keys on it

    def initial(n: int) -> PageState:
        c, s = n >> 64, n & ((1 << 64) - 1)
        byte = (garbage + 7 * c + 13 * s) & 0xFF or 0xA5
        return PageState(bits=CBV(int.from_bytes(bytes([byte]) * size, "little"), 8 * size),
                         origin=unwritten,
                         events=CBV(0, 16) if layout.config.tracks_events else None)

    def v(x: int) -> CBV:
        return CBV(x, 64)

    return Inputs(
        start_pfn=v(start_pfn), nr_pages=v(nr_pages), nid=v(nid), pgmap=v(pgmap),
        pgmap_type=CBV(pgmap_type, 32),
        altmap_valid=altmap is not None, altmap_reserve=v(altmap[0] if altmap else 0),
        altmap_free=v(altmap[1] if altmap else 0), vmemmap_base=v(vmemmap_base),
        page_offset=v(page_offset), mobility_disabled=mobility_disabled,
        tracepoint_on=tracepoint_on, early_section=lambda nr: int(nr) in early,
        mem=ConcreteMemory(initial, lambda b: CBV((garbage ^ b) & 0xFF, PB_BITS)),
    )


# ---- the frame condition every loop summary rests on ---------------------------------------
#
# Written once, in the kernel's terms, and every frame lemma (equiv.loops) is derived from it:
#
#   An iteration of a loop over struct pages writes and reads only the struct pages of the
#   pfns it is given, and those lie inside the part of the range it works on:
#   * iteration c of a loop over compounds (memmap_init_zone_device's heads loops) owns the
#     struct pages of pfn first + c * 2^order ... first + (c + 1) * 2^order - 1, and only
#     for c below the number of compounds of the range;
#   * iteration t of a loop over the tails of compound c (memmap_init_compound's tail loops)
#     owns the struct page of pfn head(c) + t, and only for 0 <= t < 2^order.
#
# Owners are stated on storage keys, so a write through an alias (deduplicated vmemmap) or
# past the end of a compound or of the range is outside every frame that does not own the
# struct page it reaches, whatever bound the loop under test computed for itself.


def compound_frame(sc: Scenario, g: Geometry,
                   pb: Callable[[Val], tuple[Cond, Val]] = never) -> Owner:
    """Iteration ``c`` of a loop over the range's compounds owns compound ``c``'s struct
    pages, and only ``c`` below the number of compounds of the range exist (the
    ``frame-bound`` lemma)."""

    def page(n: Val) -> tuple[Cond, Val]:
        return True, key_compound(sc, n)

    # "below the number of compounds of the range" is the frame-bound lemma: in the
    # summary's ownership it would only repeat the loop's own bound in every read
    return Owner(page=page, pb=pb, bound=lambda c: bv.ult(c, g.ncompounds),
                 bound_text="the compounds of the range (c < the number of compounds)")


def tail_frame(sc: Scenario, c: Val, pb: Callable[[Val], tuple[Cond, Val]] = never) -> Owner:
    """Iteration ``t`` of a loop over compound ``c``'s tails owns the struct page of pfn
    ``head(c) + t``, for ``t < 2^order``."""
    def page(n: Val) -> tuple[Cond, Val]:
        k = key_slot(sc, n)
        return bv.and_(bv.eq(key_compound(sc, n), c), bv.ult(k, sc.stride_v)), k

    return Owner(page=page, pb=pb)


#: How each input is named in a report (kernel terms), in the order they are listed.
INPUT_NAMES = {
    "start_pfn": "start_pfn", "nr_pages": "nr_pages", "nid": "nid", "pgmap": "pgmap",
    "pgmap_type": "pgmap->type", "altmap_valid": "altmap", "altmap_reserve": "altmap->reserve",
    "altmap_free": "altmap->free", "vmemmap_base": "vmemmap_base", "page_offset": "PAGE_OFFSET",
    "mobility_disabled": "page_group_by_mobility_disabled",
    "tracepoint_on": "page_ref_set tracepoint on",
}
#: Pseudo-inputs a counterexample can also be independent of.
PSEUDO_INPUTS = {"page": "which compound / tail shows it",
                 "initial_memory": "initial struct page contents",
                 "early_sections": "which sections are early"}

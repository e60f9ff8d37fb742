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
``tail_frame``): which struct pages an iteration may touch, in the kernel's terms.
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


def assumptions(sc: Scenario, inp: Inputs) -> list[tuple[str, z3.BoolRef]]:
    """The environment the kernel guarantees, as named assumptions (printed in reports).

    Tags follow the reference: [R] confirmed in source, [M] general kernel knowledge.
    """
    cfg = sc.layout.config
    pfn_bits = cfg.MAX_PHYSMEM_BITS - cfg.PAGE_SHIFT
    limit = z3.BitVecVal(1 << pfn_bits, 64)
    sp, nr = inp.start_pfn, inp.nr_pages
    assert isinstance(sp, z3.BitVecRef) and isinstance(nr, z3.BitVecRef)
    out: list[tuple[str, z3.BoolRef]] = [
        ("range within MAX_PHYSMEM_BITS [M]",
         z3.And(z3.ULT(sp, limit), z3.ULE(nr, limit), z3.ULE(sp + nr, limit))),
        ("range aligned to the compound size (memremap_pages/device-dax) [M]",
         z3.And(sp & (sc.stride_v - 1) == 0, nr & (sc.stride_v - 1) == 0)),
        ("nid < MAX_NUMNODES [R]",
         z3.ULT(inp.nid, 1 << (cfg.NODES_SHIFT if cfg.NUMA else 0))),
        ("pgmap is a non-NULL, 8-aligned pointer [R]",
         z3.And(inp.pgmap != 0, inp.pgmap & 7 == 0)),
        ("altmap lies inside the range: reserve + free <= nr_pages [M]",
         z3.And(z3.ULE(inp.altmap_reserve, nr), z3.ULE(inp.altmap_free, nr),
                z3.ULE(inp.altmap_reserve + inp.altmap_free, nr))),
        ("vmemmap_base is PUD-aligned in the kernel half, no wrap over the memmap [M]",
         z3.And(inp.vmemmap_base & ((1 << 30) - 1) == 0,
                z3.UGE(inp.vmemmap_base, 0xFFFF800000000000),
                z3.ULE(inp.vmemmap_base, 0xFFFFFE0000000000))),
        ("PAGE_OFFSET is PUD-aligned in the kernel half, direct map does not wrap [M]",
         z3.And(inp.page_offset & ((1 << 30) - 1) == 0,
                z3.UGE(inp.page_offset, 0xFFFF800000000000),
                z3.ULE(inp.page_offset, 0xFFFFF00000000000))),
    ]
    if sc.order_hi is not None:
        shift = sc.order_v
        assert isinstance(shift, z3.BitVecRef)
        out.append((f"vmemmap_shift is one of the orders {sc.order_label} (an order class) [class]",
                    z3.And(z3.UGE(shift, sc.orders[0]), z3.ULE(shift, sc.orders[-1]))))
    pt = inp.pgmap_type
    if sc.ptype is None:
        out.append(("pgmap->type is one of the five memory types (any of them) [R]",
                    z3.And(z3.UGE(pt, 1), z3.ULE(pt, 5))))
    else:
        out.append((f"pgmap->type == {sc.ptype.kname} [R]", pt == int(sc.ptype)))
    if not cfg.DEBUG_PAGE_REF:
        out.append(("page_ref tracepoints compiled out (!DEBUG_PAGE_REF) [R]",
                    z3.Not(inp.tracepoint_on)))
    return out


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

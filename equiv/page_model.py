"""Byte-precise model of ``struct page`` / ``struct folio`` and of the memmap being initialised.

What is modelled, and from where (see docs/model.md):

* :class:`FlagsLayout` — the ``page->flags`` bit layout, computed with the formulas of
  include/linux/page-flags-layout.h, kernel/bounds.c (``NR_CPUS_BITS = order_base_2(NR_CPUS)``,
  current trees) and ``enum pageflags`` of include/linux/page-flags.h (v7.3-rc1 snapshot
  LMM@03e0599d / 0dccebc9).
* :class:`Layout` — every byte of ``struct page`` for a :class:`~equiv.config.Config`: each
  storage member with its byte offset and size, every union view under its kernel name, the
  ``struct folio`` overlays that land in page[1] and page[2] (FOLIO_MATCH asserts of
  include/linux/mm_types.h, LMM@0199209e), the config-dependent tail words (``memcg_data``,
  ``virtual``, ``_last_cpupid``, ``kmsan_shadow``, ``kmsan_origin``) and the padding that
  ``_struct_page_alignment`` adds.  Padding is part of the state: a copy that skips it shows.
* :class:`PageState` — the contents of one struct page as 8-byte little-endian words, symbolic
  (z3) or concrete; optional per-byte provenance (which modelled step wrote each byte) in the
  concrete domain.
* :class:`Memory` — the struct pages, one storage key per struct page (its pfn relative to
  the loop's first pfn, after vmemmap deduplication), plus the pageblock migratetype bitmap
  indexed by absolute pageblock number.  Initial contents are arbitrary (fresh z3 arrays,
  or caller-chosen concrete values): a byte that a path forgets to write differs between
  two paths.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import z3
from attrs import evolve, field, frozen

from equiv.config import Config
from equiv.engine import bv
from equiv.engine.bv import BV, CBV, Cond, Val
from equiv.engine.errors import ConfigError, WidthError

# ----------------------------------------------------------------------------------------
# page->flags


#: ``enum pageflags`` bit numbers that the paths use (include/linux/page-flags.h).
PG_head = 6
PG_reserved = 13
PG_active = 8  # second-page alias PG_has_hwpoisoned
PG_workingset = 9  # second-page alias PG_large_rmappable

#: ``enum pageflags`` up to PG_dropbehind (always present), bit numbers 0..19.
_ALWAYS_PAGEFLAGS = 20
#: the always-present page flags of an older release, where it has fewer: 6.12's end at
#: PG_unevictable (include/linux/page-flags.h of 6.12; PG_dropbehind came in 6.14)
OLDER_ALWAYS_PAGEFLAGS: dict[str, int] = {"6.12": 19}
#: ``KASAN_TAG_WIDTH`` under ``CONFIG_KASAN_HW_TAGS`` by release, where it is not the
#: model's 4: 6.12's include/linux/page-flags-layout.h gives 8 to SW and HW tags alike
#: (found by the C path, which reads clang's value: ``--linux`` of 6.12 with
#: arm64-4k-kasan-hw was UNKNOWN on KASAN_TAG_PGSHIFT)
OLDER_KASAN_HW_WIDTH: dict[str, int] = {"6.12": 8}


@frozen
class FlagsField:
    """One field of page->flags above the page flags: width, PGOFF and PGSHIFT."""

    name: str
    width: int
    pgoff: int

    @property
    def pgshift(self) -> int:
        """``X_PGSHIFT = X_PGOFF * (X_WIDTH != 0)``."""
        return self.pgoff * (self.width != 0)

    @property
    def mask(self) -> int:
        """``X_MASK = (1UL << X_WIDTH) - 1``."""
        return (1 << self.width) - 1


@frozen
class FlagsLayout:
    """The page->flags layout of page-flags-layout.h, from the MSB down:
    ``| SECTION | NODE | ZONE | LAST_CPUPID | KASAN_TAG | LRU_GEN | LRU_REFS | ... | FLAGS |``.
    """

    nr_pageflags: int
    zones_shift: int
    nodes_shift: int
    last_cpupid_shift: int
    last_cpupid_not_in_page_flags: bool
    node_not_in_page_flags: bool
    fields: tuple[FlagsField, ...]
    #: fields a layout taken from a tree has not (the macro named is no C constant there:
    #: :func:`equiv.zone_device.source.tree_layout.flags_from_tree`)
    left_out: tuple[str, ...] = ()

    def get(self, name: str) -> FlagsField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def last_cpupid_mask(self) -> int:
        """``LAST_CPUPID_MASK = (1UL << LAST_CPUPID_SHIFT) - 1`` (uses SHIFT, not WIDTH)."""
        return (1 << self.last_cpupid_shift) - 1

    @classmethod
    def from_config(cls, cfg: Config, always: int = _ALWAYS_PAGEFLAGS,
                    kasan_hw: int = 4) -> FlagsLayout:
        """Compute the layout with the kernel's formulas (``always``: the page flags every
        configuration has, :data:`OLDER_ALWAYS_PAGEFLAGS` for an older release;
        ``kasan_hw``: the KASAN tag's width with HW tags, :data:`OLDER_KASAN_HW_WIDTH`).

        Raises:
            ConfigError: NODES do not fit into page->flags under SPARSEMEM_VMEMMAP, which is an
                ``#error`` in page-flags-layout.h.
        """
        bpl = cfg.BITS_PER_LONG
        nr = always + int(cfg.MMU) + int(cfg.MEMORY_FAILURE)
        nr += 2 * int(cfg.PAGE_IDLE_FLAG and bpl == 64)
        nr += int(cfg.ARCH_USES_PG_ARCH_2) + int(cfg.ARCH_USES_PG_ARCH_3)
        zones = cfg.MAX_NR_ZONES
        zones_shift = 0 if zones < 2 else 1 if zones <= 2 else 2 if zones <= 4 else 3
        sections_shift = cfg.MAX_PHYSMEM_BITS - cfg.SECTION_SIZE_BITS
        sections_width = sections_shift if cfg.section_in_page_flags else 0
        nodes_shift = cfg.NODES_SHIFT if cfg.NUMA else 0
        lru_gen_width = bv.order_base_2(4 + 1) if cfg.LRU_GEN else 0  # MAX_NR_GENS = 4 [M]
        lru_refs_max = (4 - 2) if cfg.LRU_GEN else 0  # MAX_NR_TIERS - 2, MAX_NR_TIERS = 4 [M]
        budget = bpl - nr
        if zones_shift + lru_gen_width + sections_width + nodes_shift <= budget:
            nodes_width = nodes_shift
        elif not cfg.section_in_page_flags or cfg.SPARSEMEM_VMEMMAP:
            raise ConfigError(
                f"config {cfg.name}: NODES_SHIFT={nodes_shift} does not fit into page->flags "
                f"({budget} bits above {nr} page flags); the kernel's page-flags-layout.h stops "
                "with '#error Vmemmap: No space for nodes field in page flags'"
            )
        else:
            nodes_width = 0
        kasan = 8 if cfg.KASAN_SW_TAGS else kasan_hw if cfg.KASAN_HW_TAGS else 0
        nr_cpus_bits = bv.order_base_2(cfg.NR_CPUS)
        cpupid_shift = (8 + nr_cpus_bits) if cfg.NUMA_BALANCING else 0  # LAST__PID_SHIFT = 8
        used = zones_shift + lru_gen_width + sections_width + nodes_width + kasan
        fits = used + cpupid_shift <= budget and not cfg.LAST_CPUPID_OUTSIDE_FORCED
        cpupid_width = cpupid_shift if fits else 0
        lru_refs = min(lru_refs_max, budget - used - cpupid_width)
        sections_pgoff = bpl - sections_width
        nodes_pgoff = sections_pgoff - nodes_width
        zones_pgoff = nodes_pgoff - zones_shift
        cpupid_pgoff = zones_pgoff - cpupid_width
        kasan_pgoff = cpupid_pgoff - kasan
        lru_gen_pgoff = kasan_pgoff - lru_gen_width
        lru_refs_pgoff = lru_gen_pgoff - lru_refs
        return cls(
            nr_pageflags=nr,
            zones_shift=zones_shift,
            nodes_shift=nodes_shift,
            last_cpupid_shift=cpupid_shift,
            last_cpupid_not_in_page_flags=cpupid_shift != 0 and cpupid_width == 0,
            node_not_in_page_flags=nodes_width == 0 and nodes_shift != 0,
            fields=(
                FlagsField("SECTIONS", sections_width, sections_pgoff),
                FlagsField("NODES", nodes_width, nodes_pgoff),
                FlagsField("ZONES", zones_shift, zones_pgoff),
                FlagsField("LAST_CPUPID", cpupid_width, cpupid_pgoff),
                FlagsField("KASAN_TAG", kasan, kasan_pgoff),
                FlagsField("LRU_GEN", lru_gen_width, lru_gen_pgoff),
                FlagsField("LRU_REFS", lru_refs, lru_refs_pgoff),
            ),
        )


# ----------------------------------------------------------------------------------------
# struct page layout


@frozen
class View:
    """One name for some bytes of struct page: a union member or a folio overlay field.

    ``page`` is None for views of every struct page, or 1/2 for struct folio fields that
    land in page[1] / page[2] of a large folio.  ``name`` is the model's (v7.3-rc1) and
    what the paths write by; ``kernel`` is the name of an older kernel whose layout this is
    where that kernel calls the view otherwise (:meth:`Layout.named_for`), and reports print
    :attr:`shown`.
    """

    name: str
    offset: int
    size: int
    page: int | None = None
    kernel: str = ""

    @property
    def shown(self) -> str:
        """The name a report prints: the kernel's of this layout."""
        return self.kernel or self.name


@frozen
class Atom:
    """A byte range no view splits: the unit of an obligation and of a reported difference."""

    offset: int
    size: int
    views: tuple[View, ...]

    @property
    def name(self) -> str:
        """The primary name: the first struct page view (or padding)."""
        return self.views[0].shown if self.views else "<padding>"

    def names_for(self, page_index: int | None) -> list[str]:
        """The view names that apply to page ``page_index`` of a compound (0 = head), as
        the layout's kernel names them (:attr:`View.shown`)."""
        out = [v.shown for v in self.views if v.page is None]
        out += [f"folio.{v.shown}" for v in self.views if v.page is not None and v.page == page_index]
        return out or ["<padding>"]

    def labels_for(self, page_index: int | None) -> list[str]:
        """:meth:`names_for`, each naming the bytes of its view this atom is: a view wider
        than the atom gets its byte range, ``memcg_data[4..7]`` for the upper half of
        memcg_data (a reported difference then says which part of the field it is)."""
        views = [v for v in self.views if v.page is None]
        views += [v for v in self.views if v.page is not None and v.page == page_index]
        out = []
        for v, name in zip(views, self.names_for(page_index), strict=False):
            lo = self.offset - v.offset
            whole = lo == 0 and v.size == self.size
            out.append(name if whole else f"{name}[{lo}..{lo + self.size - 1}]")
        return out or ["<padding>"]


@frozen
class Layout:
    """struct page for one config: size, alignment, views, and the atom partition of its bytes."""

    config: Config
    flags: FlagsLayout
    size: int
    views: tuple[View, ...]
    atoms: tuple[Atom, ...]

    @property
    def nwords(self) -> int:
        return self.size // 8

    _index: dict[tuple[str, int | None], View] = field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_index", {(v.name, v.page): v for v in self.views})

    def view(self, name: str, page: int | None = None) -> View:
        try:
            return self._index[(name, page)]
        except KeyError:
            raise KeyError(f"no view {name!r} (page {page}) in struct page of "
                           f"{self.config.name}") from None

    def has(self, name: str) -> bool:
        return any(v.name == name for v in self.views)

    def named_for(self, release: str) -> Layout:
        """This layout with its views under the names the kernel ``release`` (e.g. "6.12")
        gives them, where they differ from the model's (:data:`OLDER_NAMES`): what a run
        about that kernel prints.  The paths still write the views by the model's names.
        The page flags are counted as that release has them (:data:`OLDER_ALWAYS_PAGEFLAGS`:
        ``NR_PAGEFLAGS``, and the widths that depend on the room it leaves), with that
        release's KASAN tag width (:data:`OLDER_KASAN_HW_WIDTH`)."""
        names = OLDER_NAMES.get(release, {})
        views = tuple(evolve(v, kernel=names.get(v.name, "")) for v in self.views)
        flags = self.flags
        if release in OLDER_ALWAYS_PAGEFLAGS or release in OLDER_KASAN_HW_WIDTH:
            flags = FlagsLayout.from_config(
                self.config, OLDER_ALWAYS_PAGEFLAGS.get(release, _ALWAYS_PAGEFLAGS),
                OLDER_KASAN_HW_WIDTH.get(release, 4))
            if flags.last_cpupid_not_in_page_flags != self.flags.last_cpupid_not_in_page_flags:
                raise ConfigError(f"config {self.config.name}: the cpupid fits page->flags in "
                                  f"one of {release} and the model but not in the other (a "
                                  "struct page with another layout): not modelled")
        return evolve(self, views=views, atoms=atoms_of(views, self.size), flags=flags)

    @classmethod
    def from_config(cls, cfg: Config) -> Layout:
        """Lay out struct page as include/linux/mm_types.h does for ``cfg`` (LP64)."""
        cfg.validate()
        fl = FlagsLayout.from_config(cfg)
        v: list[View] = [
            View("flags", 0, 8),
            # word @8: the lru / compound_info union, and folio->pgmap
            View("lru.next", 8, 8), View("compound_info", 8, 8), View("buddy_list.next", 8, 8),
            View("pp_magic", 8, 8), View("rcu_head.next", 8, 8), View("folio.pgmap", 8, 8),
            # word @16
            View("lru.prev", 16, 8), View("zone_device_data", 16, 8), View("pp", 16, 8),
            View("rcu_head.func", 16, 8),
            View("mapping", 24, 8),
            View("index", 32, 8), View("share", 32, 8),
            View("private", 40, 8),
            View("_mapcount", 48, 4), View("page_type", 48, 4),
            View("_refcount", 52, 4),
        ]
        off = 56
        if cfg.MEMCG or cfg.SLAB_OBJ_EXT:
            v.append(View("memcg_data" if cfg.MEMCG else "_unused_slab_obj_exts", 56, 8))
            off = 64
        if cfg.WANT_PAGE_VIRTUAL:
            v.append(View("virtual", off, 8))
            off += 8
        if fl.last_cpupid_not_in_page_flags:
            v.append(View("_last_cpupid", off, 4))
            off += 4
        if cfg.KMSAN:
            off = (off + 7) & ~7
            v += [View("kmsan_shadow", off, 8), View("kmsan_origin", off + 8, 8)]
            off += 16
        align = 16 if cfg.HAVE_ALIGNED_STRUCT_PAGE else 8
        size = (off + align - 1) & ~(align - 1)
        if size % 8 or not 56 <= size <= 96:
            raise ConfigError(
                f"config {cfg.name}: sizeof(struct page)={size}; mm.h allows 56..96 in steps of 8"
            )
        # struct folio overlays (FOLIO_MATCH / FOLIO1/2_MATCH in mm_types.h, 64BIT)
        v += [
            View("_flags_1", 0, 8, 1), View("_head_1", 8, 8, 1),
            View("_large_mapcount", 16, 4, 1), View("_nr_pages_mapped", 20, 4, 1),
            View("_entire_mapcount", 24, 4, 1), View("_pincount", 28, 4, 1),
            View("_mm_id_mapcount[0]", 32, 4, 1), View("_mm_id_mapcount[1]", 36, 4, 1),
            View("_mm_ids", 40, 8, 1), View("_mapcount_1", 48, 4, 1),
            View("_refcount_1", 52, 4, 1),
            View("_flags_2", 0, 8, 2), View("_head_2", 8, 8, 2),
            View("_deferred_list.next", 16, 8, 2), View("_deferred_list.prev", 24, 8, 2),
        ]
        if cfg.MEMCG or cfg.SLAB_OBJ_EXT:  # NR_PAGES_IN_LARGE_FOLIO
            v.append(View("_nr_pages", 56, 4, 1))
        views = tuple(v)
        return cls(config=cfg, flags=fl, size=size, views=views, atoms=atoms_of(views, size))


#: The names of model views in the struct page of an older kernel, by release, where they
#: differ from the model's (v7.3-rc1): 6.12's include/linux/mm_types.h has the word at
#: offset 8 as ``unsigned long compound_head; /* Bit zero is set */`` (the tail pages'
#: struct; renamed compound_info with the order-mask encoding in 2026) and as ``struct
#: dev_pagemap *pgmap`` of struct page's ZONE_DEVICE struct (struct folio's since).
OLDER_NAMES: dict[str, dict[str, str]] = {
    "6.12": {"compound_info": "compound_head", "folio.pgmap": "pgmap"},
}


def atoms_of(views: tuple[View, ...], size: int) -> tuple[Atom, ...]:
    """Partition ``[0, size)`` at every view boundary; bytes no view covers are padding."""
    cuts = {0, size}
    for v in views:
        cuts |= {v.offset, v.offset + v.size}
    edges = sorted(cuts)
    atoms = []
    for lo, hi in itertools.pairwise(edges):
        covering = tuple(x for x in views if x.offset <= lo and hi <= x.offset + x.size)
        atoms.append(Atom(lo, hi - lo, covering))
    return tuple(atoms)


# ----------------------------------------------------------------------------------------
# state of one struct page


def _check_bits(inst: PageState, _attr: Any, bits: Val) -> None:
    w = bv.width(bits)
    if w % 64 or not 56 * 8 <= w <= 96 * 8:
        raise WidthError(f"struct page of {w} bits; must be 56..96 bytes, 8-aligned")


@frozen(kw_only=True, eq=False)
class PageState:
    """Contents of one struct page as one little-endian bit-vector of ``8 * sizeof`` bits
    (byte ``i`` is bits ``8i+7..8i``; word ``w`` is bits ``64w+63..64w``).

    ``origin`` (concrete domain only) is, per byte, its provenance chain: the modelled
    kernel steps that wrote the byte, oldest first (``()``: initial memory, never written).
    A copy extends the source byte's chain, so a byte copied from a template tells how the
    template got its value.  It is what reports print as provenance.
    """

    bits: Val = field(validator=_check_bits)
    origin: tuple[Chain, ...] | None = None
    #: ghost observable beside memory: how many ``page_ref_set`` tracepoint events were
    #: emitted for this struct page (16 bits); None when tracepoints are compiled out
    events: Val | None = None

    @property
    def size(self) -> int:
        return bv.width(self.bits) // 8

    def load(self, offset: int, size: int) -> Val:
        """Read ``size`` bytes at ``offset`` (a naturally aligned field within one word)."""
        if offset % 8 + size > 8:
            raise WidthError(f"access at {offset}+{size} straddles a word")
        return bv.extract(self.bits, 8 * (offset + size) - 1, 8 * offset)

    def store(self, offset: int, size: int, value: Val | int, step: str) -> PageState:
        """Write ``size`` bytes at ``offset``; ``step`` names the kernel step for provenance."""
        if offset % 8 + size > 8:
            raise WidthError(f"access at {offset}+{size} straddles a word")
        bits = self.bits
        if isinstance(bits, CBV):  # concrete fast path: plain integer arithmetic
            if isinstance(value, CBV):
                if value.width != 8 * size:
                    raise WidthError(f"value of width {value.width} stored into a {8 * size}-bit field")
                v = value.value
            elif isinstance(value, int):
                v = value & ((1 << (8 * size)) - 1)
            else:
                raise WidthError("symbolic value stored into a concrete page")
            lo = 8 * offset
            m = ((1 << (8 * size)) - 1) << lo
            return PageState(bits=CBV((bits.value & ~m) | (v << lo), bits.width),
                             origin=_origin(self.origin, offset, size, step), events=self.events)
        val = _as(value, 8 * size, like=bits)
        return PageState(bits=splice(bits, 8 * offset, val),
                         origin=_origin(self.origin, offset, size, step), events=self.events)

    def get(self, layout: Layout, name: str, page: int | None = None) -> Val:
        v = layout.view(name, page)
        return self.load(v.offset, v.size)

    def set(self, layout: Layout, name: str, value: Val | int, step: str,
            page: int | None = None) -> PageState:
        v = layout.view(name, page)
        return self.store(v.offset, v.size, value, step)

    def zeroed(self, step: str) -> PageState:
        """Every byte 0 (what ``__mm_zero_struct_page``'s word stores leave), in one step."""
        zero = CBV(0, bv.width(self.bits)) if isinstance(self.bits, CBV) else \
            bv.num(0, bv.width(self.bits))
        origin = None if self.origin is None else _origin(self.origin, 0, len(self.origin), step)
        return PageState(bits=zero, origin=origin, events=self.events)

    def noted(self, step: str) -> PageState:
        """The same bytes with ``step`` added to every byte's provenance chain (a snapshot
        taken as a template, for example); no memory is written."""
        if self.origin is None:
            return self
        return PageState(bits=self.bits, origin=tuple(extend_chain(o, step) for o in self.origin),
                         events=self.events)


def splice(x: Val, lo: int, val: Val) -> Val:
    """``x`` with bits ``lo .. lo + width(val) - 1`` replaced by ``val``."""
    top, hi = bv.width(x), lo + bv.width(val)
    parts = []
    if hi < top:
        parts.append(bv.extract(x, top - 1, hi))
    parts.append(val)
    if lo > 0:
        parts.append(bv.extract(x, lo - 1, 0))
    return parts[0] if len(parts) == 1 else bv.concat(*parts)


#: Provenance of one byte: the modelled steps that wrote it (or copied it), oldest first.
Chain = tuple[str, ...]


def extend_chain(chain: Chain, step: str) -> Chain:
    """``chain`` then ``step``; a step repeated back to back is kept once (a template
    refreshed once per compound would otherwise grow with the number of compounds)."""
    return chain if chain and chain[-1] == step else (*chain, step)


#: :func:`_origin`'s results by (id of the origin, offset, size, step); each entry keeps its
#: origin alive so the id stays its own.  A concrete run over many struct pages builds the
#: same chains for every page: this makes them one object each (and the stores cheap).
_ORIGINS: dict[tuple[int, int, int, str], tuple[tuple[Chain, ...], tuple[Chain, ...]]] = {}
_ORIGINS_MAX = 1 << 16


def _origin(origin: tuple[Chain, ...] | None, offset: int, size: int,
            step: str) -> tuple[Chain, ...] | None:
    if origin is None:
        return None
    key = (id(origin), offset, size, step)
    hit = _ORIGINS.get(key)
    if hit is not None:
        return hit[1]
    part = origin[offset:offset + size]
    new = tuple(extend_chain(o, step) for o in part)
    # a step repeated (a template refreshed again) keeps the very same object
    out = origin if all(a is b for a, b in zip(new, part, strict=True)) else \
        origin[:offset] + new + origin[offset + size:]
    if len(_ORIGINS) >= _ORIGINS_MAX:
        _ORIGINS.clear()
    _ORIGINS[key] = (origin, out)
    return out


#: :func:`copied_origin`'s results by (ids of both origins, bytes, step), keeping both alive
_COPIES: dict[tuple[int, int, int, str],
              tuple[tuple[Chain, ...], tuple[Chain, ...], tuple[Chain, ...]]] = {}


def copied_origin(dst: tuple[Chain, ...] | None, src: tuple[Chain, ...] | None, nbytes: int,
                  step: str) -> tuple[Chain, ...] | None:
    """The provenance of ``memcpy(dst, src, nbytes)`` into a struct page: each byte below
    ``nbytes`` carries the source byte's chain then ``step``, the others keep the
    destination's.  None when either has none: a page without write history passes none
    on, so a provenance that is not None is complete.  Memoised as :func:`_origin` is: the
    2^18 copies of one template onto unwritten tails build one origin."""
    if dst is None or src is None:
        return None
    key = (id(dst), id(src), nbytes, step)
    hit = _COPIES.get(key)
    if hit is not None:
        return hit[2]
    n = max(0, min(nbytes, len(dst)))
    out = tuple(extend_chain(o, step) for o in src[:n]) + dst[n:]
    if len(_COPIES) >= _ORIGINS_MAX:
        _COPIES.clear()
    _COPIES[key] = (dst, src, out)
    return out


def _as(value: Val | int, bits: int, like: Val) -> Val:
    if isinstance(value, int):
        return CBV(value, bits) if isinstance(like, CBV) else bv.num(value, bits)
    if bv.width(value) != bits:
        raise WidthError(f"value of width {bv.width(value)} stored into a {bits}-bit field")
    if isinstance(like, CBV) and not isinstance(value, CBV):
        raise WidthError("symbolic value stored into a concrete page")
    return value


def ite_page(c: Cond, a: PageState, b: PageState) -> PageState:
    """``c ? a : b`` (provenance follows the branch taken when ``c`` is concrete)."""
    if isinstance(c, bool):
        return a if c else b
    ev = None if a.events is None or b.events is None else bv.ite(c, a.events, b.events)
    return PageState(bits=bv.ite(c, a.bits, b.bits), events=ev)


# ----------------------------------------------------------------------------------------
# memory: the memmap range and the pageblock bitmap

#: Bits per pageblock cell in the model: migratetype bits 0..2, PB_compact_skip 3,
#: PB_migrate_isolate 4 (include/linux/pageblock-flags.h [M]); one byte per pageblock.
PB_BITS = 8

#: ``(compound, tail) -> storage key``: how a path's ``pfn_to_page()`` reaches memory.
Namer = Callable[[Val, Val], Val]
#: Width of a storage key: the compound (64 bits) and the slot in it (64 bits, below the
#: compound size); see :func:`equiv.memmap.vmemmap_namer`.
KEY_BITS = 128


class Memory:
    """Persistent view of the memmap and the pageblock bitmap.

    **One name per struct page.**  Memory is indexed by a single *storage key*, ``compound
    ++ slot`` with the slot below the compound size: the struct page whose bytes are stored,
    counted from the loop's first pfn (compounds below it negative), after the vmemmap's
    deduplication (:func:`equiv.memmap.vmemmap_namer`).  Invariant: two stores that reach
    the same bytes in the kernel (``vmemmap_base + pfn * sizeof(struct page)`` followed
    through the deduplicated vmemmap mapping) use the same key in the model, two that reach
    different bytes use different keys, and a load sees the last store to its key.  Paths
    never form keys themselves: ``read(c, t)`` / ``write(c, t)`` name the struct page of pfn
    ``first + (c << order) + t`` as ``pfn_to_page()`` does, and the memory's :attr:`namer`
    (the vmemmap mapping, attached with the inputs) turns that into the key, whatever
    ``t`` is (``t == 2^order`` is compound ``c + 1``'s head; a negative ``t`` lies before
    the compound).  ``tests/test_properties.py`` checks the invariant on random geometries.

    ``read_pb(b)`` is the bitmap cell of absolute pageblock ``b``.  Writes return a new
    Memory.  The symbolic implementation layers closures (no enumeration of pages); the
    concrete one is a dict with linear use enforced (a stale Memory raises on use).
    """

    namer: Namer | None = None

    def key(self, c: Val, t: Val) -> Val:
        """The storage key of the struct page of tail ``t`` of compound ``c``."""
        if self.namer is None:
            raise RuntimeError("memory used before the vmemmap was mapped (model bug: "
                               "use equiv.memmap.with_vmemmap)")
        return self.namer(c, t)

    def read(self, c: Val, t: Val) -> PageState:
        """``*pfn_to_page(first + (c << order) + t)``."""
        return self.load(self.key(c, t))

    def write(self, c: Val, t: Val, page: PageState) -> Memory:
        return self.store(self.key(c, t), page)

    def load(self, n: Val) -> PageState:
        """The struct page stored under key ``n``."""
        raise NotImplementedError

    def store(self, n: Val, page: PageState) -> Memory:
        raise NotImplementedError

    def read_pb(self, b: Val) -> Val:
        raise NotImplementedError

    def write_pb(self, b: Val, cell: Val) -> Memory:
        raise NotImplementedError

    def named(self, namer: Namer) -> Memory:
        """This memory seen through the vmemmap mapping ``namer``."""
        raise NotImplementedError


class SymMemory(Memory):
    """Symbolic memory: a load function composed of stores, memoised per key term.

    Each SymMemory also knows its *footprint*: which keys may differ from its parents
    (``wrote``).  :func:`footprint` chains these back to an ancestor; the loop frame lemmas
    use it instead of comparing whole pages.  A derived memory keeps its first parent's
    :attr:`namer` unless given one.
    """

    def __init__(self, load: Callable[[Val], PageState], read_pb: Callable[[Val], Val],
                 parents: tuple[Memory, ...] = (),
                 wrote: Callable[[Val], Cond] | None = None,
                 wrote_pb: Callable[[Val], Cond] | None = None,
                 namer: Namer | None = None) -> None:
        self._load, self._read_pb = load, read_pb
        self.parents = parents
        self.namer = namer if namer is not None else (parents[0].namer if parents else None)
        self.wrote: Callable[[Val], Cond] = wrote or (lambda n: True)
        self.wrote_pb: Callable[[Val], Cond] = wrote_pb or (lambda b: True)
        #: for ``c ? a : b`` memories: c (the footprint follows the branch)
        self.ite_cond: Cond | None = None
        # memo values hold the index terms too: z3 recycles the id of a freed term, so a
        # key must never outlive the term it names
        self._memo: dict[int, tuple[Val, PageState]] = {}
        self._memo_pb: dict[int, tuple[Val, Val]] = {}

    @classmethod
    def fresh(cls, name: str, nwords: int, events: bool = False) -> SymMemory:
        """Arbitrary memory: an uninterpreted array of struct pages indexed by the 128-bit
        storage key ``compound ++ slot`` (so every query is plain SMT-LIB QF_AUFBV that any
        solver reads), and one array of bitmap cells.  It has no namer until the inputs attach the vmemmap."""
        arr = z3.Array(f"{name}.pages", z3.BitVecSort(KEY_BITS), z3.BitVecSort(64 * nwords))
        pb = z3.Array(f"{name}.pageblock", z3.BitVecSort(64), z3.BitVecSort(PB_BITS))
        ev = z3.BitVecVal(0, 16) if events else None  # the event trace starts empty
        return cls(lambda n: PageState(bits=z3.Select(arr, n), events=ev),
                   lambda b: z3.Select(pb, b))

    def load(self, n: BV) -> PageState:
        key = n.get_id()
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = (n, self._load(n))
        return hit[1]

    def read_pb(self, b: BV) -> Val:
        key = b.get_id()
        hit = self._memo_pb.get(key)
        if hit is None:
            hit = self._memo_pb[key] = (b, self._read_pb(b))
        return hit[1]

    def store(self, n: Val, page: PageState) -> Memory:
        def load(n2: BV) -> PageState:
            if n2.eq(n):  # same AST: shadowed
                return page
            return ite_page(bv.eq(n2, n), page, self.load(n2))

        return SymMemory(load, self.read_pb, (self,), lambda n2: bv.eq(n2, n), lambda b: False)

    def write_pb(self, b: Val, cell: Val) -> Memory:
        return SymMemory(self.load, lambda b2: bv.ite(bv.eq(b2, b), cell, self.read_pb(b2)),
                         (self,), lambda n: False, lambda b2: bv.eq(b2, b))

    def named(self, namer: Namer) -> Memory:
        return SymMemory(self.load, self.read_pb, (self,), lambda n: False, lambda b: False, namer)


class TrackingMemory(SymMemory):
    """A view of ``base`` that logs every key loaded through it, with the path condition
    (from ``pc()``) under which the load was made (for the frame-read lemma)."""

    def __init__(self, base: Memory, pc: Callable[[], tuple[z3.BoolRef, ...]]) -> None:
        self.log: list[tuple[tuple[z3.BoolRef, ...], Val]] = []
        self.log_pb: list[tuple[tuple[z3.BoolRef, ...], Val]] = []

        def load(n: Val) -> PageState:
            self.log.append((pc(), n))
            return base.load(n)

        def read_pb(b: Val) -> Val:
            self.log_pb.append((pc(), b))
            return base.read_pb(b)

        super().__init__(load, read_pb, (base,), lambda n: False, lambda b: False)

    def load(self, n: Val) -> PageState:  # no memo: every load is logged
        return self._load(n)

    def read_pb(self, b: Val) -> Val:
        return self._read_pb(b)


def footprint(mem: Memory, ancestor: Memory, n: Val, *, pageblock: bool = False) -> Cond:
    """May key ``n`` of ``mem`` (with ``pageblock``: cell ``n`` of the pageblock bitmap)
    differ from ``ancestor``'s?  (Sound over-approximation: each memory between them says
    which keys it wrote, ``wrote``, or which bitmap cells, ``wrote_pb``.)"""
    if mem is ancestor:
        return False
    if not isinstance(mem, SymMemory) or not mem.parents:
        return True
    if mem.ite_cond is not None:
        a, b = (footprint(p, ancestor, n, pageblock=pageblock) for p in mem.parents)
        return bv.or_(bv.and_(mem.ite_cond, a), bv.and_(bv.not_(mem.ite_cond), b))
    wrote = mem.wrote_pb if pageblock else mem.wrote
    return bv.or_(wrote(n), *(footprint(p, ancestor, n, pageblock=pageblock) for p in mem.parents))


def sym_ite_mem(c: Cond, a: Memory, b: Memory) -> Memory:
    """``c ? a : b`` over memories."""
    if isinstance(c, bool):
        return a if c else b
    out = SymMemory(lambda n: ite_page(c, a.load(n), b.load(n)),
                    lambda x: bv.ite(c, a.read_pb(x), b.read_pb(x)),
                    (a, b), lambda n: False, lambda x: False)
    out.ite_cond = c
    return out


class ConcreteMemory(Memory):
    """Concrete memory over a dict keyed by storage key; ``initial(n)`` / ``initial_pb(b)``
    give unwritten cells."""

    def __init__(self, initial: Callable[[int], PageState],
                 initial_pb: Callable[[int], CBV],
                 pages: dict[int, PageState] | None = None,
                 pb: dict[int, CBV] | None = None, namer: Namer | None = None) -> None:
        self.initial, self.initial_pb = initial, initial_pb
        self.pages = {} if pages is None else pages
        self.pb = {} if pb is None else pb
        self.namer = namer
        self.stale = False
        #: the lazy loop (``equiv.loops._LazyLoop``) whose final memory ``initial`` reads, or
        #: None: how a lazy replay's concrete frame check finds the writes of a loop
        self.lazy: Any = None

    def _live(self) -> None:
        if self.stale:
            raise RuntimeError("concrete Memory used after it was written (model bug)")

    def load(self, n: Val) -> PageState:
        self._live()
        k = int(n)
        p = self.pages.get(k)
        return self.initial(k) if p is None else p

    def read_pb(self, b: Val) -> Val:
        self._live()
        p = self.pb.get(int(b))
        return self.initial_pb(int(b)) if p is None else p

    def _next(self, namer: Namer | None = None) -> ConcreteMemory:
        self._live()
        self.stale = True
        nxt = ConcreteMemory(self.initial, self.initial_pb, self.pages, self.pb,
                             namer or self.namer)
        nxt.lazy = self.lazy
        return nxt

    def store(self, n: Val, page: PageState) -> Memory:
        nxt = self._next()
        nxt.pages[int(n)] = page
        return nxt

    def write_pb(self, b: Val, cell: Val) -> Memory:
        nxt = self._next()
        nxt.pb[int(b)] = cell
        return nxt

    def named(self, namer: Namer) -> Memory:
        return self._next(namer)

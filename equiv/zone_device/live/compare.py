"""A real kernel's struct pages against the model's concrete prediction.

:func:`compare` takes one dump directory (:mod:`equiv.zone_device.live.dump`) of a booted 6.12.117 kernel
and the kernel's configuration, builds the model's concrete inputs from the dump and runs the
prediction:

* **prediction**: the hand-written 6.12.y slow path, :func:`equiv.zone_device.source.slow_v612y.path_612y`
  (``memmap_init_zone_device()`` of mm/mm_init.c as in 6.12.117), in the concrete domain
  (plain integers, every loop really iterated, every byte with its provenance);
* **inputs, all from the dump**: ``start_pfn``/``nr_pages`` from the pgmap's (single) range
  as ``pagemap_range()`` passes them, the node from the NODES field of the first read struct
  page's flags (0 if none was read), the ``dev_pagemap`` pointer and type,
  ``vmemmap_shift`` as the compound order, the altmap's reserve and free when
  PGMAP_ALTMAP_VALID, ``vmemmap_base`` and ``page_offset_base`` of the layout file.  The
  model therefore computes with the guest's real addresses: a ``compound_head`` is the head's
  struct page address ``vmemmap_base + 64 * pfn`` plus 1, ``pgmap`` is the dumped pointer;
  the diffs name what a pointer means (:func:`meaning`).  (In 6.12.117 the
  ``_deferred_list`` that ``prep_compound_head()`` points at page[2] itself is overwritten
  when the tail loop then initialises page[2]: ``prep_compound_head()`` runs in the loop's
  first iteration.  The model predicts it and the live kernel agrees.);
* **assumed** (:data:`ASSUMED`): no early section (a pmem namespace is hot-plugged),
  ``page_group_by_mobility_disabled`` false, the page_ref tracepoint off.

Compared: every struct page that ``memmap_init_zone_device()`` writes and the dump holds
(from the altmap-adjusted first pfn, ``base_pfn + reserve + free``, to the range's end), byte
for byte, but only the bytes the model writes (a byte whose provenance chain is empty is
initial memory, undefined in the model); and the migratetype bits (0..2,
``MIGRATETYPE_MASK``) of each pageblock cell ``pageblock_migratetype_init_range()`` sets.
Everything else the dump holds is listed in :attr:`LiveComparison.outside` with the reason.

To keep the cost proportional to the dump, the model runs over the range cut after the
compound holding the dump's last pfn: a compound's struct pages and a pageblock cell below
the cut do not depend on the pages after it.

A deduplicated vmemmap (``vmemmap_shift`` >= 8 without an altmap, e.g. devdax ``--map mem``
at 2M or 1G; ``compound_nr_pages()`` is then 128 and ``vmemmap_populate_compound_pages()``
maps every vmemmap page of a compound past its second onto the second) is predicted through
the model's vmemmap mapping (:func:`equiv.memmap.vmemmap_namer`): the struct page the dump
read for tail ``t >= 128`` is the model's page in slot ``64 + t % 64``, which the tail loop
wrote.  Such pages are counted in the role "aliased tail".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from attrs import evolve, frozen

from equiv.config import Config
from equiv.engine.bv import CBV
from equiv.engine.errors import InputError
from equiv.loops import Ctx
from equiv.memmap import VMEMMAP_RESERVE_NR, MemoryType, Scenario, concrete_inputs
from equiv.page_model import Atom, Chain, ConcreteMemory, Layout, PageState
from equiv.zone_device.live.dump import Dump, KernelLayout, Pgmap
from equiv.zone_device.source.slow_v612y import MIGRATETYPE_MASK_612, layout_612, path_612y

#: what produced the prediction (printed with every result)
PREDICTION = ("hand model: memmap_init_zone_device() of 6.12.117, "
              "equiv/zone_device/source/slow_v612y.py path_612y, run concretely")
#: inputs the dump cannot give, taken as stated
ASSUMED = ("no early section (the namespace's sections are hot-plugged)",
           "page_group_by_mobility_disabled = false",
           "page_ref tracepoint off")
#: what a driver writes into its pgmap's struct pages after ``memremap_pages()`` returns,
#: by the dump's driver word (:data:`equiv.zone_device.live.dump.DRIVER_FILE`); predicted on
#: top of the model's ``memmap_init_zone_device()`` (:func:`driver_step`).  The nvme
#: driver's p2pdma pgmap has none: ``pci_p2pdma_add_resource()`` only hands the range to a
#: gen_pool, and nothing allocates from it here.
DRIVER_STEPS = {
    "test_hmm": ("then test_hmm.ko's free list: lib/test_hmm.c dmirror_allocate_chunk() "
                 "(6.12.117) sets each page's zone_device_data to the page before it"),
    "nvme": "",
}
#: the provenance step of test_hmm's free-list store, with its file and line in 6.12.117
#: (the C interpreter's ``file:line: statement`` form, which the reports locate)
TEST_HMM_STEP = ("lib/test_hmm.c:626: page->zone_device_data = mdevice->free_pages "
                 "(dmirror_allocate_chunk, after memremap_pages)")


def driver_step(driver: str, page: PageState, L: Layout, pfn: int, start: int,
                vmemmap_base: int, page_size: int) -> PageState:
    """``page`` (the model's struct page of ``pfn``) after the driver's own writes.

    ``test_hmm``: ``dmirror_allocate_chunk()`` of lib/test_hmm.c (6.12.117), right after
    ``memremap_pages()`` of the device's chunk, threads every page of it onto the device's
    free list in pfn order: ``page->zone_device_data = mdevice->free_pages;
    mdevice->free_pages = page``.  At module load (``dmirror_device_init()``, the device's
    first chunk, ``ppage`` NULL) the list is empty, so the first pfn's is NULL and every
    other pfn's is the struct page of the pfn before it (``vmemmap_base + (pfn - 1) *
    sizeof(struct page)``).  Other drivers: ``page`` unchanged.
    """
    if driver != "test_hmm":
        return page
    prev = 0 if pfn == start else vmemmap_base + (pfn - 1) * page_size
    return page.set(L, "zone_device_data", prev, TEST_HMM_STEP)


#: the page roles, by tail index (order 0: every struct page is a "page")
ROLE_NAMES = ("head", "tail 1", "tail 2", "tail >= 3")
#: tails ``t >= 128`` read through the deduplicated vmemmap (slot ``64 + t % 64``)
ALIASED = "aliased tail"


@frozen
class LiveDiff:
    """One differing field of one struct page: where it is, its names (the struct page views
    and, for page[1] / page[2] of a compound, the struct folio overlay), the dump's value,
    the model's value, the model's provenance and what the two values mean."""

    pfn: int
    compound: int  #: compound index from the first pfn memmap_init_zone_device() writes
    tail: int  #: index in the compound (0: the head)
    offset: int
    size: int
    names: tuple[str, ...]
    live: int
    model: int
    provenance: tuple[Chain, ...]  #: the model's steps that wrote these bytes
    live_meaning: str = ""
    model_meaning: str = ""

    def describe(self) -> str:
        """One line: ``pfn 0x... compound c tail t: +off names: live ... model ...``."""
        def val(v: int, m: str) -> str:
            return f"{v:#x}" + (f" ({m})" if m else "")
        return (f"pfn {self.pfn:#x} compound {self.compound} tail {self.tail}: "
                f"+{self.offset} {'/'.join(self.names)}: live {val(self.live, self.live_meaning)}"
                f", model {val(self.model, self.model_meaning)}")


@frozen
class PageblockDiff:
    """One pageblock whose migratetype bits differ."""

    pfn: int  #: first pfn of the pageblock
    live: int
    model: int

    def describe(self) -> str:
        """One line."""
        return (f"pageblock of pfn {self.pfn:#x}: migratetype live {self.live}, "
                f"model {self.model}")


@frozen
class Outside:
    """Part of the dump that is not compared, and why."""

    what: str
    count: int
    reason: str


@frozen
class RoleCount:
    """How many struct pages of one role were compared and how many differ."""

    role: str
    compared: int
    differing: int


@frozen(eq=False)
class LiveComparison:
    """The result of :func:`compare`."""

    dump: str
    prediction: str
    inputs: Mapping[str, int | bool]
    assumed: tuple[str, ...]
    first_pfn: int  #: the first pfn memmap_init_zone_device() writes
    end_pfn: int  #: the range's end (exclusive)
    roles: tuple[RoleCount, ...]
    diffs: tuple[LiveDiff, ...]
    pageblocks_compared: int
    pageblock_diffs: tuple[PageblockDiff, ...]
    outside: tuple[Outside, ...]

    @property
    def pages_compared(self) -> int:
        """Struct pages compared, all roles."""
        return sum(r.compared for r in self.roles)

    @property
    def clean(self) -> bool:
        """No difference, and something was compared."""
        return not self.diffs and not self.pageblock_diffs and self.pages_compared > 0

    def summary(self) -> str:
        """A few lines for a terminal."""
        lines = [f"{self.dump}: {'SAME' if self.clean else 'DIFFERENT'} "
                 f"({self.pages_compared} struct pages, {self.pageblocks_compared} pageblocks; "
                 f"prediction: {self.prediction})"]
        lines += [f"  {r.role}: {r.compared} compared, {r.differing} differ" for r in self.roles]
        lines += [f"  {d.describe()}" for d in self.diffs[:20]]
        if len(self.diffs) > 20:
            lines.append(f"  ... {len(self.diffs) - 20} more field differences")
        lines += [f"  {d.describe()}" for d in self.pageblock_diffs[:20]]
        lines += [f"  not compared: {o.what} ({o.count}): {o.reason}" for o in self.outside]
        return "\n".join(lines)


# ---- checks and inputs ---------------------------------------------------------------


def _check_layout(kl: KernelLayout, L: Layout) -> None:
    """The dump's struct page constants must be the model's, else nothing compares."""
    cfg, fl = L.config, L.flags
    want: dict[str, int] = {
        "sizeof_struct_page": L.size, "PAGE_SHIFT": cfg.PAGE_SHIFT,
        "NR_PAGEFLAGS": fl.nr_pageflags, "pageblock_order": cfg.PAGEBLOCK_ORDER,
    }
    for name in ("NODES", "ZONES", "LAST_CPUPID"):
        f = fl.get(name)
        want[f"{name}_PGSHIFT"], want[f"{name}_WIDTH"] = f.pgshift, f.width
    bad = [f"{k} {kl[k]} (model {v})" for k, v in want.items() if kl[k] != v]
    if bad:
        raise InputError(f"the dump's struct page layout is not the model's for {cfg.name}: "
                         f"{', '.join(bad)}")


def _pgmap(dump: Dump) -> Pgmap:
    pg = dump.pgmap
    if pg is None:
        raise InputError(f"dump {dump.path}: pfn {dump.pages.start_pfn:#x} has no dev_pagemap")
    if len(pg.ranges) != 1:
        raise InputError(f"dump {dump.path}: the pgmap has {len(pg.ranges)} ranges; only one "
                         "is compared")
    try:
        MemoryType(pg.type)
    except ValueError:
        raise InputError(f"dump {dump.path}: pgmap type {pg.type} is not a modelled "
                         "enum memory_type") from None
    return pg


def _nid(dump: Dump, first: int) -> int:
    """The NODES field of the first read struct page from ``first`` (0 if none)."""
    for pfn in range(max(first, dump.pages.start_pfn), dump.pages.start_pfn + len(dump.pages)):
        rec = dump.pages[pfn]
        if rec.read:
            return dump.layout.field("NODES", rec.u64(dump.layout["offsetof_page_flags"]))
    return 0


def meaning(value: int, size: int, kl: KernelLayout, pgmap: int) -> str:
    """What a pointer-sized value means in the guest: a struct page (``pfn P``, ``| 1`` for an
    encoded compound head, ``+ k`` inside it), the pgmap, TAIL_MAPPING; else ""."""
    if size != 8:
        return ""
    if value == pgmap:
        return "the pgmap"
    if value == kl.values.get("TAIL_MAPPING"):
        return "TAIL_MAPPING"
    base, ps = kl["vmemmap_base"], kl.page_size
    off = value - base
    if 0 <= off < (1 << 46) * ps >> kl["PAGE_SHIFT"]:
        pfn, inside = divmod(off, ps)
        if inside == 1:
            return f"struct page of pfn {pfn:#x} | 1"
        return f"struct page of pfn {pfn:#x}" + (f" + {inside}" if inside else "")
    return ""


def _word_meaning(atom: Atom, page: int, kl: KernelLayout, pgmap: int) -> str:
    """What the pointer-sized field holding ``atom`` means in ``page`` (the struct page's
    bytes as one integer): :func:`meaning` of the whole word when a view of 8 bytes covers
    the atom (a union can split a pointer into 4-byte atoms), prefixed by the view's name
    when the atom is part of it; "" otherwise."""
    for v in atom.views:
        if v.size == 8:
            m = meaning((page >> (8 * v.offset)) & (1 << 64) - 1, 8, kl, pgmap)
            if m and atom.size < 8:
                return f"in {v.shown}: {m}"
            return m
    return ""


def field_diffs(L: Layout, kl: KernelLayout, pgmap: int, pfn: int, c: int, t: int | None,
                live: int, page: PageState) -> list[LiveDiff]:
    """The fields of one struct page whose live bytes (``live``, the page as one integer)
    differ from the prediction ``page`` in a byte the prediction wrote, one per layout atom,
    named for tail index ``t`` (None: not a compound page)."""
    assert page.origin is not None
    bits = int(page.bits)
    out: list[LiveDiff] = []
    for atom in L.atoms:
        lo, hi = atom.offset, atom.offset + atom.size
        written = [i for i in range(lo, hi) if page.origin[i]]
        if not written:
            continue
        amask = sum(0xFF << (8 * (i - lo)) for i in written)
        lv, mv = (live >> (8 * lo)) & amask, (bits >> (8 * lo)) & amask
        if lv != mv:
            chains = tuple(dict.fromkeys(page.origin[i] for i in written))
            out.append(LiveDiff(pfn, c, t or 0, lo, atom.size, tuple(atom.names_for(t)), lv, mv,
                                chains, _word_meaning(atom, live, kl, pgmap),
                                _word_meaning(atom, bits, kl, pgmap)))
    return out


# ---- the comparison ------------------------------------------------------------------


def _expectation(page: PageState, L: Layout,
                 cache: dict[int, tuple[tuple[Chain, ...], int, tuple[tuple[int, int], ...]]]
                 ) -> tuple[int, int, tuple[tuple[int, int], ...]]:
    """What the model says of one struct page: the mask of the bytes it wrote, their value,
    and the (offset, size) of each layout atom it did not write in full.  The mask and the
    atoms depend on the provenance only, which a concrete run shares between pages written
    alike: they are kept per provenance object (``cache`` holds it, so its id stays its own)."""
    origin = page.origin
    assert origin is not None
    hit = cache.get(id(origin))
    if hit is None:
        mask = sum(0xFF << (8 * i) for i, o in enumerate(origin) if o)
        gaps = tuple((a.offset, a.size) for a in L.atoms
                     if not all(origin[a.offset:a.offset + a.size]))
        hit = cache[id(origin)] = (origin, mask, gaps)
    return hit[1], int(page.bits) & hit[1], hit[2]


def compare(dump: Dump, cfg: Config) -> LiveComparison:
    """Compare what the booted kernel wrote (``dump``) with the model's prediction for the
    kernel configuration ``cfg`` (e.g. ``from_kconfig(<root>/boot/config-6.12.117+deb12-amd64)``),
    plus the writes of the driver that created the pgmap (:func:`driver_step`, when the dump
    names one).

    Raises:
        InputError: no pgmap or more than one range, a type the model does not know, a dump
            layout that is not the model's, a driver the comparison does not know.
    """
    if dump.driver and dump.driver not in DRIVER_STEPS:
        raise InputError(f"dump {dump.path}: driver {dump.driver!r} is not one the comparison "
                         f"knows ({', '.join(DRIVER_STEPS)})")
    kl, pg = dump.layout, _pgmap(dump)
    shift = kl["PAGE_SHIFT"]
    start = pg.ranges[0][0] >> shift
    end = (pg.ranges[0][1] + 1) >> shift
    altmap = pg.altmap_valid(kl)
    if altmap and pg.altmap.base_pfn != start:
        raise InputError(f"dump {dump.path}: altmap base_pfn {pg.altmap.base_pfn:#x} is not the "
                         f"range's first pfn {start:#x}")
    order = pg.vmemmap_shift
    stride = 1 << order
    # vmemmap_can_optimize() is false with an altmap: the static switch off is the same path
    # and keeps the hand path (which does not model deduplication) usable
    model_cfg = evolve(cfg, ARCH_WANT_OPTIMIZE_DAX_VMEMMAP=False) if altmap else cfg
    L = layout_612(Layout.from_config(model_cfg))
    _check_layout(kl, L)
    sc = Scenario(L, MemoryType(pg.type), order)
    first = pg.first_device_pfn(kl)
    d_start, d_end = dump.pages.start_pfn, dump.pages.start_pfn + len(dump.pages)
    model_end = min(end, first + -(-max(d_end - first, 0) // stride) * stride)
    reserve, free = (pg.altmap.reserve, pg.altmap.free) if altmap else (0, 0)
    nid = _nid(dump, first)
    inputs: dict[str, int | bool] = {
        "start_pfn": start, "nr_pages": end - start, "nid": nid, "pgmap": pg.pointer,
        "pgmap_type": pg.type, "order": order, "altmap_valid": altmap,
        "altmap_reserve": reserve, "altmap_free": free, "vmemmap_base": kl["vmemmap_base"],
        "page_offset": kl["page_offset_base"], "model_nr_pages": max(model_end - start, 0)}
    outside: list[Outside] = []
    if d_start < first:
        outside.append(Outside(
            f"pfns {d_start:#x}..{min(first, d_end) - 1:#x}", min(first, d_end) - d_start,
            f"before the first device pfn (altmap base + reserve {reserve} + free {free}: the "
            "reserve (a pmem namespace's info block) and the altmap's own pages, which "
            "memmap_init_range initialises, not memmap_init_zone_device)"))
    if d_end > end:
        outside.append(Outside(f"pfns {end:#x}..{d_end - 1:#x}", d_end - end,
                               "past the range's end"))
    # the deduplicated vmemmap (no altmap: compound_nr_pages() tests vmemmap_can_optimize())
    aliased_from = VMEMMAP_RESERVE_NR * sc.per_vmemmap_page if sc.can_optimize_static else None
    role_names = (ROLE_NAMES if order else ("page",)) + ((ALIASED,) if aliased_from else ())
    roles = {r: [0, 0] for r in role_names}
    diffs: list[LiveDiff] = []
    pb_diffs: list[PageblockDiff] = []
    nblocks = 0
    if model_end > first:
        inp = concrete_inputs(L, start_pfn=start, nr_pages=model_end - start, nid=nid,
                              pgmap=pg.pointer, pgmap_type=pg.type,
                              altmap=(reserve, free) if altmap else None,
                              vmemmap_base=kl["vmemmap_base"], page_offset=kl["page_offset_base"])
        mem = path_612y(Ctx(False), sc, inp)
        assert isinstance(mem, ConcreteMemory)
        unread = 0
        unwritten: Counter[tuple[str, int, int]] = Counter()
        cache: dict[int, tuple[tuple[Chain, ...], int, tuple[tuple[int, int], ...]]] = {}
        for pfn in range(max(first, d_start), min(model_end, d_end)):
            rec = dump.pages[pfn]
            c, t = divmod(pfn - first, stride)
            role = "page" if not order else ROLE_NAMES[min(t, 3)]
            if aliased_from is not None and t >= aliased_from:
                role = ALIASED
            if not rec.read:
                unread += 1
                continue
            page = mem.read(CBV(c, 64), CBV(t, 64))
            if dump.driver:
                page = driver_step(dump.driver, page, L, pfn, start, kl["vmemmap_base"],
                                   kl.page_size)
            mask, want, gaps = _expectation(page, L, cache)
            for lo, size in gaps:
                unwritten[(role, lo, size)] += 1
            live = int.from_bytes(rec.raw, "little")
            differs = live & mask != want
            if differs:  # name each differing field (rare: the slow loop)
                diffs += field_diffs(L, kl, pg.pointer, pfn, c, t if order else None,
                                     live, page)
            roles[role][0] += 1
            roles[role][1] += differs
        if unread:
            outside.append(Outside("unread struct pages in the compared range", unread,
                                   "the dump module could not read them (status -EFAULT or "
                                   "-ENOENT)"))
        for (role, lo, size), n in sorted(unwritten.items()):
            outside.append(Outside(f"bytes +{lo}..+{lo + size - 1} of {role} pages", n,
                                   "the model does not write (all of) them: initial memory, "
                                   "undefined in the model"))
        po = kl["pageblock_order"]
        skipped = 0
        for blk in dump.pageblocks:
            b = blk.pfn >> po
            if blk.pfn >= model_end or b not in mem.pb:
                skipped += 1
                continue
            if blk.migratetype is None:
                raise InputError(f"dump {dump.path}: pageblock of pfn {blk.pfn:#x} has no usemap "
                                 "but memmap_init_zone_device() sets it")
            nblocks += 1
            mv = int(mem.pb[b]) & MIGRATETYPE_MASK_612
            if blk.migratetype != mv:
                pb_diffs.append(PageblockDiff(blk.pfn, blk.migratetype, mv))
        if skipped:
            outside.append(Outside("pageblocks not set by pageblock_migratetype_init_range",
                                   skipped, "they start before pageblock_align(first pfn) or at "
                                   "or past the range's end"))
        outside.append(Outside("pageblock bits 3.. (PB_migrate_skip)", nblocks,
                               "set_pageblock_migratetype() writes only MIGRATETYPE_MASK (0x7)"))
    return LiveComparison(
        dump=str(dump.path), inputs=inputs, assumed=ASSUMED,
        prediction=PREDICTION + ("; " + DRIVER_STEPS[dump.driver] if DRIVER_STEPS.get(
            dump.driver) else ""),
        first_pfn=first, end_pfn=end,
        roles=tuple(RoleCount(r, n, d) for r, (n, d) in roles.items()),
        diffs=tuple(diffs), pageblocks_compared=nblocks, pageblock_diffs=tuple(pb_diffs),
        outside=tuple(outside))


__all__ = ["ALIASED", "ASSUMED", "DRIVER_STEPS", "PREDICTION", "TEST_HMM_STEP", "LiveComparison",
           "LiveDiff", "Outside", "PageblockDiff", "RoleCount", "compare", "driver_step",
           "field_diffs", "meaning"]

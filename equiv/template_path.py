"""The fast path: template-copy initialisation from Li Zhe's series, per revision.

Mirrors "mm: optimize zone-device memmap initialization" as described in
docs/model.md (the fast path):

* **v11** (2026-08-31, on v7.3-rc1; akpm 25-new @f0475a50 / 372d26e3 / e51430ad / 51d58682,
  queued as cfb3f192 + dca3fd8b): the first head is initialised by the slow path on the
  real page and snapshotted into a stack template *before* its compound setup; every later
  head is ``zone_device_page_init_from_template()`` (refresh the pfn-dependent fields of the
  template, then copy it); in ``memmap_init_compound`` tail 1 is initialised slowly, given
  ``prep_compound_tail`` and ``set_page_count(0)``, and snapshotted as the tail template that
  the remaining tails are copied from; ``prep_compound_head`` stays after all tails.  The copy
  is ``memcpy_nontemporal()``; here a plain byte copy (same bytes, see issue on the copy
  primitive).  v11's ``-fix`` (whitespace) is the same model.
* **v5** (2026-07-01; 25-new @ebb5a9e4 has patches 2,3,6,7 only): the helper split
  (``zone_device_page_init_slow`` = ``__zone_device_page_init`` + ``pagemap_resets_refcount``)
  and a ``use_template`` switch with the slow path as fallback.  The text of v5's template and
  tail patches is unknown [N]; they are modelled as the v11 structure behind the switch, and
  the switch's condition is a named choice printed with every result.

A :class:`FastVariant` spells the construction as a few named knobs; the revisions set them
to the kernel's values and the seeded-bug controls (:mod:`equiv.zone_device.mutants`) change one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import evolve, field, frozen

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.engine.errors import InputError, lookup
from equiv.loops import Carry, Ctx, block_loop
from equiv.memmap import (
    Geometry,
    Inputs,
    MemoryType,
    Scenario,
    compound_frame,
    geometry,
    page_addr,
    pfn_of,
    tail_frame,
    va,
    with_vmemmap,
)
from equiv.page_model import Memory, PageState, copied_origin, sym_ite_mem
from equiv.slow_path import (
    compound_nr_pages,
    early_return,
    init_zone_device_page,
    memmap_init_compound,
    memmap_init_zone_device,
    pageblock_migratetype_init_range,
    prep_compound_head,
    prep_compound_tail,
    reset_refcount_unless,
    set_head,
    set_page_count,
    set_page_section_from_pfn,
    zone_device_page_init_common,
)


@frozen(kw_only=True)
class FastVariant:
    """The knobs of the template construction.  Defaults are v11."""

    #: "before_compound" (v11: snapshot before memmap_init_compound of the first head) or
    #: "after_compound".
    head_snapshot: str = "before_compound"
    #: where the tail template is taken: "after_tail_init" (v11: after prep_compound_tail and
    #: set_page_count(0)), "before_prep_compound_tail", "after_prep_compound_head",
    #: "head_template".
    tail_seed: str = "after_tail_init"
    #: v11 calls set_page_count(page, 0) on tail 1 before the snapshot.
    tail_refcount_reset: bool = True
    refresh_section: bool = True
    refresh_virtual: bool = True
    #: bytes copied = sizeof(struct page) + copy_len_delta.
    copy_len_delta: int = 0
    #: the template tail loop runs ``for (pfn = head + tail_loop_start; pfn < end + delta; ...)``.
    tail_loop_start: int = 2
    tail_loop_end_delta: int = 0
    #: v11 rebuilds the tail template in every compound; False keeps compound 0's.
    tail_template_per_compound: bool = True
    #: refresh the template before the copy ("before", v3+), after it ("after"), or copy and
    #: then fix the pfn fields in the destination page ("destination", v1/v2).
    refresh_when: str = "before"
    #: memmap_init_compound ends with prep_compound_head(head, order) (v11, as the base).
    prep_compound_head: bool = True
    #: where prep_compound_head runs: "after_tails" (v11) or "before_tail_loop" (after the
    #: tail template snapshot, before the template tail loop).
    prep_compound_head_when: str = "after_tails"
    #: where __SetPageHead(head) runs in memmap_init_compound: "first" (v11, as the base),
    #: "after_tails" (after the tail loop, before prep_compound_head) or
    #: "after_prep_compound_head".
    set_head_when: str = "first"
    #: memmap_init_compound runs for the first compound (v11: after its head snapshot).
    first_compound_setup: bool = True
    #: the template heads loop runs over compounds ``[heads_loop_start, ncompounds +
    #: heads_loop_end_delta)`` (v11: from 1, compound 0 being the slow-initialised seed).
    heads_loop_start: int = 1
    heads_loop_end_delta: int = 0
    #: the template tail loop refreshes the template with ``pfn + tail_refresh_pfn_delta``.
    tail_refresh_pfn_delta: int = 0
    #: tail 1 is ``zone_device_page_init_from_template(page + 1, pfn + 1, head template)``
    #: instead of the slow ``__init_zone_device_page`` (then prep_compound_tail etc. as v11).
    #: The refresh this does to the head template is not carried back to the heads loop,
    #: which refreshes the template again before each head copy.
    tail1_from_template: bool = False
    #: v1 had only a head template: tails keep the slow memmap_init_compound
    tail_template: bool = True
    #: tail 1 gets prep_compound_tail before the snapshot (v11).
    tail1_prep_compound_tail: bool = True
    #: the template tail loop runs one iteration past ``nr_pages`` in the last compound only
    #: (its extra iteration writes the struct page of ``end_pfn``).
    tail_loop_end_last_only: bool = False
    #: the template tail loop's condition: ``pfn < end`` (v11) or ``pfn != end``.
    tail_loop_cond: str = "<"
    #: iteration t of the template tail loop writes tail ``t + tail_write_delta`` (a write to
    #: the wrong struct page) while refreshing for pfn ``head + t``.
    tail_write_delta: int = 0
    #: the first head is written at ``pfn_to_page(start_pfn + first_head_delta)`` (-1: the
    #: struct page before the range).
    first_head_delta: int = 0
    #: after its copy onto the compound's last tail, the template tail loop also copies that
    #: struct page onto page ``tail_last_copy_to`` of the compound (1: tail 1, 0: the head),
    #: a store outside the iteration's own page; None (v11): no such copy.
    tail_last_copy_to: int | None = None

    def __attrs_post_init__(self) -> None:
        for name, ok in (("head_snapshot", {"before_init", "before_compound", "after_compound"}),
                         ("tail_seed", {"after_tail_init", "before_prep_compound_tail",
                                        "after_prep_compound_head", "head_template"}),
                         ("refresh_when", {"before", "after", "destination"}),
                         ("prep_compound_head_when", {"after_tails", "before_tail_loop"}),
                         ("tail_loop_cond", {"<", "!="}),
                         ("set_head_when", {"first", "after_tails", "after_prep_compound_head"})):
            if getattr(self, name) not in ok:
                raise InputError(f"FastVariant.{name}={getattr(self, name)!r}; valid: {sorted(ok)}")
        # bounds a model of the kernel's memory can represent: a copy longer than struct page
        # writes the next struct page, a loop starting before the seed compound or ending
        # more than one compound past the range is not an edit of this loop
        for name, lo, hi in (("copy_len_delta", None, 0), ("heads_loop_start", 0, 2),
                             ("heads_loop_end_delta", -1, 1), ("tail_loop_start", 1, None)):
            val = getattr(self, name)
            if not isinstance(val, int) or (lo is not None and val < lo) or (hi is not None and val > hi):
                bounds = f"{'-inf' if lo is None else lo}..{'inf' if hi is None else hi}"
                raise InputError(f"FastVariant.{name}={val!r}; valid: an integer in {bounds}")
        if self.tail_last_copy_to is not None and (not isinstance(self.tail_last_copy_to, int)
                                                   or self.tail_last_copy_to < 0):
            raise InputError(f"FastVariant.tail_last_copy_to={self.tail_last_copy_to!r}; "
                             "valid: None or a non-negative integer")
        if not isinstance(self.tail_refresh_pfn_delta, int):
            raise InputError(f"FastVariant.tail_refresh_pfn_delta={self.tail_refresh_pfn_delta!r}; "
                             "valid: an integer")
        if not self.first_compound_setup and not self.tail_template_per_compound:
            raise InputError("FastVariant.first_compound_setup=False needs "
                             "tail_template_per_compound=True (no first-compound tail template)")


@frozen(kw_only=True)
class Revision:
    """A revision of the series: what its fast path is, and what is assumed about it."""

    name: str
    summary: str
    variant: FastVariant = field(factory=FastVariant)
    #: v1-v5 style switch: fall back to the slow path when the page_ref_set tracepoint is on.
    use_template_switch: bool = False
    #: v5: the slow calls go through zone_device_page_init_slow (helper split).
    helper_split: bool = False
    assumptions: tuple[str, ...] = ()
    #: the :mod:`equiv.slow_variants` comparison whose slow-path variant stands in the fast
    #: path's place (``--compare NAME``; the revision is then named ``compare:NAME``), or
    #: None for a revision of the series
    comparison: str | None = None


_V1_V4_GUARD = ("use_template = !page_ref_tracepoint_active(page_ref_set) [R: opening of each "
                "LKML mail]; without DEBUG_PAGE_REF the guard is the constant true")
_OLD_BASE = ("compared with the v7.3-rc1 slow path, not the v7.1-rc3 one the revision was "
             "written against [N]")

REVISIONS: dict[str, Revision] = {
    "v11": Revision(
        name="v11",
        summary="final (2026-08-31, v7.3-rc1): template used unconditionally, "
                "memcpy_nontemporal without drain",
        assumptions=("memcpy_nontemporal() modelled as a byte copy (same bytes as memcpy) [R]",
                     "unchanged tail of the v11 heads loop (memmap_init_compound call) [I]"),
    ),
    "v11-fix": Revision(
        name="v11-fix",
        summary="v11 with its -fix (2026-09-03, 25-new @892d1221): whitespace only, requested "
                "by Mike Rapoport; queued as cfb3f192 + 4cb76e2f",
        assumptions=("the -fix changes whitespace only [R]: the same construction as v11",
                     "memcpy_nontemporal() modelled as a byte copy (same bytes as memcpy) [R]"),
    ),
    "v1": Revision(
        name="v1",
        summary="2026-05-15 (v7.1-rc3, 4 patches): head template only; slow path when the "
                "page_ref_set tracepoint is on; 64-bit only",
        variant=FastVariant(tail_template=False, refresh_when="destination"),
        use_template_switch=True,
        assumptions=(_V1_V4_GUARD, "64BIT condition: always true (ZONE_DEVICE needs 64BIT) [R]",
                     "pfn fields fixed in the destination after the copy, as v2 [N]",
                     "tails by the unchanged slow memmap_init_compound [I: the tail template "
                     "arrives in v2 patch 4/7]", _OLD_BASE),
    ),
    "v2": Revision(
        name="v2",
        summary="2026-05-21 (7 patches): head and tail templates; copy, then fix the "
                "pfn-dependent fields in the destination",
        variant=FastVariant(refresh_when="destination"),
        use_template_switch=True,
        assumptions=(_V1_V4_GUARD + " && IS_ALIGNED(sizeof(struct page), sizeof(u64)): always "
                     "true (56..96, multiples of 8) [R]",
                     "tail template seeded as in v11 [N]", _OLD_BASE),
    ),
    "v3": Revision(
        name="v3",
        summary="2026-05-26 (8 patches): refresh the pfn fields in the template, then memcpy",
        use_template_switch=True,
        assumptions=(_V1_V4_GUARD, "tail template seeded as in v11 [N]", _OLD_BASE),
    ),
    "v4": Revision(
        name="v4",
        summary="2026-06-03 (8 patches): zone_device_tail_page_init(), memcpy_streaming() + "
                "memcpy_streaming_drain()",
        use_template_switch=True,
        assumptions=(_V1_V4_GUARD, "memcpy_streaming() modelled as a byte copy [R]",
                     "tail template seeded as in v11 [N]", _OLD_BASE),
    ),
    "v5": Revision(
        name="v5",
        summary="2026-07-01: helper split, memcpy_nt + memcpy_nt_drain, use_template switch",
        use_template_switch=True,
        helper_split=True,
        assumptions=(
            "v5 template/tail patch text unknown [N]: modelled as the v11 construction "
            "behind use_template",
            "use_template = !page_ref_tracepoint_active(page_ref_set) (the v3/v4 condition) "
            "[choice; a KASAN/KMSAN guard is [N] and not modelled]",
            "memcpy_nt() + memcpy_nt_drain() modelled as a byte copy (sfence orders, "
            "does not change bytes) [R]",
        ),
    ),
}


def revision(name: str) -> Revision:
    """Look a revision up by name.

    Raises:
        InputError: unknown name; the message lists the valid ones.
    """
    return lookup(REVISIONS, name, "revision")


# ---- the fast path -----------------------------------------------------------------------


def copy_page(dst: PageState, src: PageState, nbytes: int, what: str) -> PageState:
    """``memcpy(dst, src, nbytes)`` into a struct page: bytes ``[0, nbytes)`` from ``src``."""
    top = 8 * dst.size
    n = max(0, min(nbytes, dst.size))
    if n == dst.size:
        bits = src.bits
    elif n == 0:
        bits = dst.bits
    else:
        bits = bv.concat(bv.extract(dst.bits, top - 1, 8 * n), bv.extract(src.bits, 8 * n - 1, 0))
    # a copied byte carries the source byte's chain: how the template got its value
    origin = copied_origin(dst.origin, src.origin, nbytes, f"memcpy from the {what}")
    return PageState(bits=bits, origin=origin, events=dst.events)  # memcpy emits no event


def refresh_template(sc: Scenario, inp: Inputs, v: FastVariant, tmpl: PageState,
                     pfn: Val, where: str = "template") -> PageState:
    """The template refresh of ``zone_device_page_init_from_template()`` (v11 patch 3):
    ``set_page_section_from_pfn(template, pfn)`` and, under WANT_PAGE_VIRTUAL,
    ``set_page_address(template, __va(pfn << PAGE_SHIFT))``."""
    L = sc.layout
    step = "zone_device_page_init_from_template"
    if v.refresh_section:
        tmpl = set_page_section_from_pfn(L, tmpl, pfn, f"{step}: set_page_section_from_pfn({where})")
    if L.config.WANT_PAGE_VIRTUAL and v.refresh_virtual:
        tmpl = tmpl.set(L, "virtual", va(sc, inp, pfn), f"{step}: set_page_address({where})")
    return tmpl


def init_from_template(sc: Scenario, inp: Inputs, v: FastVariant, dst: PageState,
                       tmpl: PageState, pfn: Val, what: str) -> tuple[PageState, PageState]:
    """``zone_device_page_init_from_template(page, pfn, template)``: refresh, then copy.

    Returns:
        ``(new page, new template)``; the template is mutated in place in the kernel.
    """
    n = sc.layout.size + v.copy_len_delta
    if v.refresh_when == "destination":  # v1/v2: copy, then fix the pfn fields in the page
        out = copy_page(dst, tmpl, n, what)
        return refresh_template(sc, inp, v, out, pfn, "page"), tmpl
    if v.refresh_when == "before":
        tmpl = refresh_template(sc, inp, v, tmpl, pfn)
        return copy_page(dst, tmpl, n, what), tmpl
    out = copy_page(dst, tmpl, n, what)
    return out, refresh_template(sc, inp, v, tmpl, pfn)


def slow_init(sc: Scenario, inp: Inputs, rev: Revision, page: PageState, pfn: Val) -> PageState:
    """The slow per-page init a revision calls: ``__init_zone_device_page`` (v11) or v5's
    ``zone_device_page_init_slow`` (``__zone_device_page_init`` then ``if
    (!pagemap_resets_refcount(pgmap)) set_page_count(page, 0)``)."""
    if not rev.helper_split:
        return init_zone_device_page(sc, inp, page, pfn)
    step = "zone_device_page_init_slow"
    page = zone_device_page_init_common(sc, inp, page, pfn, f"{step}: __zone_device_page_init")
    return reset_refcount_unless(sc, inp, page, f"{step}: set_page_count(page, 0)")


def fast_memmap_init_compound(ctx: Ctx, sc: Scenario, inp: Inputs, rev: Revision, g: Geometry,
                              mem: Memory, c: Val, nr_pages: Val, optimised: Cond,
                              head_tmpl: PageState, carried_tail: PageState | None
                              ) -> tuple[Memory, Callable[[], PageState]]:
    """``memmap_init_compound()`` of v11 patch 4 ("extend to compound tails"); with
    ``tail_template=False`` (v1) the base ``memmap_init_compound()``.

    Returns:
        memory, and a function giving the tail template after the compound (used only by a
        variant that keeps one template across compounds).
    """
    if not rev.variant.tail_template:
        return memmap_init_compound(ctx, sc, inp, g, mem, c, nr_pages, optimised), lambda: head_tmpl
    v, L = rev.variant, sc.layout
    head_addr = page_addr(sc, inp, pfn_of(sc, g, c, bv.const_like(c, 0)))
    if v.set_head_when == "first":
        mem = set_head(sc, mem, c)
    one = bv.const_like(c, 1)
    if v.tail1_from_template:
        page, _ = init_from_template(sc, inp, v, mem.read(c, one), head_tmpl, pfn_of(sc, g, c, one),
                                     "head template")
    else:
        page = slow_init(sc, inp, rev, mem.read(c, one), pfn_of(sc, g, c, one))
    early_seed = page
    if v.tail1_prep_compound_tail:
        page = prep_compound_tail(sc, page, head_addr)
    if v.tail_refcount_reset:
        page = set_page_count(L, page, 0, "memmap_init_compound: set_page_count(page, 0)", inp)
    mem = mem.write(c, one, page)
    if v.tail_seed == "after_prep_compound_head" and v.prep_compound_head:
        mem = prep_compound_head(sc, inp, g, mem, c)
    seeds = {
        "after_tail_init": lambda: mem.read(c, one),
        "before_prep_compound_tail": lambda: early_seed,
        "after_prep_compound_head": lambda: mem.read(c, one),
        "head_template": lambda: head_tmpl,
    }
    tmpl = seeds[v.tail_seed]().noted(
        "tail 1 taken as the tail template" if v.tail_seed != "head_template" else
        "head template taken as the tail template")
    if carried_tail is not None:
        tmpl = carried_tail
    prep_late = v.prep_compound_head and v.tail_seed != "after_prep_compound_head"
    if prep_late and v.prep_compound_head_when == "before_tail_loop":
        mem = prep_compound_head(sc, inp, g, mem, c)
        prep_late = False

    def tail(m: Memory, carry: Carry, t: Val) -> tuple[Memory, Carry]:
        pfn = pfn_of(sc, g, c, t)
        if v.tail_refresh_pfn_delta:
            pfn = pfn + v.tail_refresh_pfn_delta
        dst = t + v.tail_write_delta if v.tail_write_delta else t
        new, tm = init_from_template(sc, inp, v, m.read(c, dst), carry[0], pfn, "tail template")
        m = m.write(c, dst, new)
        if v.tail_last_copy_to is not None:
            m = _copy_last_tail(m, c, t, dst, nr_pages, v.tail_last_copy_to, L.size)
        return m, (tm,)

    lo = bv.const_like(c, v.tail_loop_start)
    hi = nr_pages + v.tail_loop_end_delta
    if v.tail_loop_end_last_only:  # one past the end in the last compound only
        hi = hi + bv.ite(bv.eq(c, g.ncompounds - 1), bv.const_like(c, 1), bv.const_like(c, 0))
    if v.tail_loop_cond == "!=":  # for (...; pfn != end; ...): the same trip count when lo <= hi
        hi = bv.ite(bv.ule(lo, hi), hi, bv.const_like(c, (1 << 64) - 1))
    mem, tmpl_after = block_loop(ctx, "memmap_init_compound.template_tails", mem, lo, hi, (tmpl,),
                                 tail, tail_frame(sc, c))
    if v.set_head_when == "after_tails":
        mem = set_head(sc, mem, c)
    if prep_late:
        mem = prep_compound_head(sc, inp, g, mem, c)
    if v.set_head_when == "after_prep_compound_head":
        mem = set_head(sc, mem, c)
    return mem, lambda: tmpl_after()[0]


def _copy_last_tail(m: Memory, c: Val, t: Val, src: Val, nr_pages: Val, to: int,
                    size: int) -> Memory:
    """The seeded bug of :attr:`FastVariant.tail_last_copy_to`: in iteration ``t`` of the
    template tail loop, when ``t`` is the compound's last tail, a ``memcpy()`` of
    ``sizeof(struct page)`` bytes from the struct page just written (slot ``src``) onto
    slot ``to`` of the compound."""
    last = bv.eq(t, nr_pages - 1)
    if isinstance(last, bool) and not last:
        return m
    slot = bv.const_like(c, to)
    copied = m.write(c, slot, copy_page(m.read(c, slot), m.read(c, src), size,
                                        "compound's last tail"))
    return copied if isinstance(last, bool) else sym_ite_mem(last, copied, m)


def template_memmap_init_zone_device(ctx: Ctx, sc: Scenario, inp: Inputs, rev: Revision) -> Memory:
    """``memmap_init_zone_device()`` of v11 patch 3 (heads) with patch 4 (tails)."""
    inp = with_vmemmap(sc, inp)
    return early_return(bv.eq(inp.pgmap, 0), inp.mem, lambda: _fast(ctx, sc, inp, rev), ctx)


def _fast(ctx: Ctx, sc: Scenario, inp: Inputs, rev: Revision) -> Memory:
    g = geometry(sc, inp)
    return early_return(bv.eq(g.nr_pages, 0), inp.mem, lambda: _fast_nonempty(ctx, sc, inp, rev, g),
                        ctx)


def _fast_nonempty(ctx: Ctx, sc: Scenario, inp: Inputs, rev: Revision, g: Geometry) -> Memory:
    v = rev.variant
    mem = inp.mem
    c0 = bv.const_like(g.start, 0)
    # first head: slow path on the real page, then the template snapshot
    h0 = bv.const_like(g.start, v.first_head_delta)
    first = mem.read(c0, h0)
    mem = mem.write(c0, h0, slow_init(sc, inp, rev, first, pfn_of(sc, g, c0, h0)))
    # "before_init": the snapshot is the uninitialised struct page
    head_tmpl = (first if v.head_snapshot == "before_init" else mem.read(c0, h0)).noted(
        "first head taken as the head template")
    tail_tmpl: PageState | None = None
    compound = sc.order_at_least(1)  # pfns_per_compound != 1
    keep_tail = compound and not v.tail_template_per_compound
    if compound and v.first_compound_setup:
        nr, opt = compound_nr_pages(sc, inp, pfn_of(sc, g, c0, c0))
        mem, tail_after = fast_memmap_init_compound(ctx, sc, inp, rev, g, mem, c0, nr, opt,
                                                    head_tmpl, None)
        if v.head_snapshot == "after_compound":
            head_tmpl = mem.read(c0, c0).noted("first head taken as the head template")
        if keep_tail:
            tail_tmpl = tail_after()
    carry0: Carry
    if keep_tail:  # so the first compound was set up (FastVariant rejects the other case)
        assert tail_tmpl is not None
        carry0 = (head_tmpl, tail_tmpl)
    else:
        carry0 = (head_tmpl,)

    def head(m: Memory, carry: Carry, c: Val) -> tuple[Memory, Carry]:
        s0 = bv.const_like(c, 0)
        new, ht = init_from_template(sc, inp, v, m.read(c, s0), carry[0], pfn_of(sc, g, c, s0),
                                     "head template")
        m = m.write(c, s0, new)
        if not compound:
            return m, (ht,)
        nr, opt = compound_nr_pages(sc, inp, pfn_of(sc, g, c, s0))
        m, tt = fast_memmap_init_compound(ctx, sc, inp, rev, g, m, c, nr, opt, ht,
                                          carry[1] if keep_tail else None)
        return m, ((ht, tt()) if keep_tail else (ht,))

    end = g.ncompounds + v.heads_loop_end_delta if v.heads_loop_end_delta else g.ncompounds
    mem, _ = block_loop(ctx, "memmap_init_zone_device.template_heads", mem, c0 + v.heads_loop_start,
                        end, carry0, head, compound_frame(sc, g))
    return pageblock_migratetype_init_range(ctx, sc, inp, mem, g.start, g.nr_pages)


def fast_path(rev: Revision) -> Callable[[Ctx, Scenario, Inputs], Memory]:
    """The fast ``memmap_init_zone_device`` of ``rev`` as a function of (ctx, scenario, inputs)."""

    def run(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
        if not rev.use_template_switch:
            return template_memmap_init_zone_device(ctx, sc, inp, rev)
        # v1-v5: use_template = !page_ref_tracepoint_active(page_ref_set)
        active = inp.tracepoint_on if sc.layout.config.DEBUG_PAGE_REF else False
        if isinstance(active, bool):
            if active:
                return memmap_init_zone_device(ctx, sc, inp)
            return template_memmap_init_zone_device(ctx, sc, inp, rev)
        from equiv.page_model import sym_ite_mem

        return sym_ite_mem(active, memmap_init_zone_device(ctx, sc, inp),
                           template_memmap_init_zone_device(ctx, sc, inp, rev))

    return run


def with_variant(rev: Revision, **knobs: Any) -> Revision:
    """``rev`` with some knobs changed (used by the seeded-bug controls); each value of its
    knob's type (:class:`FastVariant` validates them)."""
    return evolve(rev, variant=evolve(rev.variant, **knobs))


__all__ = ["REVISIONS", "FastVariant", "MemoryType", "Revision", "fast_path", "revision",
           "with_variant"]

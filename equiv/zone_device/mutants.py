"""Seeded-bug controls: small edits of the fast path, each with the outcome it must have.

Each control changes one knob of :class:`~equiv.template_path.FastVariant` - an edit a patch
could plausibly contain.  ``expect(ptype, order)`` says what the checker must answer for a
cell: ``None`` (the edit is harmless there: PROVED) or the names of struct page fields of
which at least one must be reported as differing (REFUTED).  A checker that cannot refute the
bugs, or that refutes the harmless edits, is not trusted (tests/test_mutants.py).
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

from equiv.engine.results import ObligationResult
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.page_model import Layout
from equiv.template_path import Revision, with_variant
from equiv.zone_device.counterexample import Counterexample, counterexample_of
from equiv.zone_device.obligations import ROLES

Expect = Callable[[MemoryType, int], "tuple[str, ...] | None"]


@frozen
class Mutant:
    """A named edit of the fast path and the verdict it must get."""

    name: str
    description: str
    knobs: dict[str, object]
    #: preset the control is meant for (the edit may be harmless elsewhere)
    config: str
    expect: Expect
    #: a slow-path edit: the name of the :mod:`equiv.slow_variants` comparison that holds the
    #: edited slow path, checked against the base slow path (``knobs`` then unused)
    compare: str | None = None
    #: the struct page a counterexample must name, where the bug writes outside the range:
    #: "end_pfn" (the struct page right after it), "past_end" (one of the compound after it)
    #: or "before_start" (the one before its first pfn)
    page: str | None = None

    def apply(self, rev: Revision) -> Revision:
        return with_variant(rev, **self.knobs)


def _always(*fields: str) -> Expect:
    return lambda ptype, order: fields


def _from_order(n: int, *fields: str) -> Expect:
    return lambda ptype, order: fields if order >= n else None


def _never(ptype: MemoryType, order: int) -> None:
    return None


def _generic_only(*fields: str) -> Expect:
    return lambda ptype, order: fields if ptype is MemoryType.GENERIC and order >= 1 else None


MUTANTS: dict[str, Mutant] = {m.name: m for m in (
    # slow-path refactors that break it (checked against the base slow path)
    Mutant("mutant_slow_count_before_init",
           "memmap_init_compound: set_page_count(page, 0) moved before __init_zone_device_page, "
           "which sets the count again (caught for GENERIC tails, the others reset it anyway)",
           {}, "x86_64-default", _generic_only("_refcount", "folio._refcount_1"),
           compare="slow-count-before-init"),
    Mutant("mutant_slow_prep_tail_before_init",
           "memmap_init_compound: prep_compound_tail moved before __init_zone_device_page, whose "
           "zeroing and pgmap store undo compound_info, TAIL_MAPPING and private",
           {}, "x86_64-default", _from_order(1, "compound_info", "mapping"),
           compare="slow-prep-tail-before-init"),
    Mutant("mutant_slow_split_inverted",
           "v5 helper split with the refcount policy test inverted",
           {}, "x86_64-default", _always("_refcount", "folio._refcount_1"),
           compare="slow-split-inverted"),
    Mutant("mutant_slow_tail_loop_one_past",
           "memmap_init_compound's tail loop runs `pfn <= head_pfn + nr_pages`: in the last "
           "compound it initialises the struct page of end_pfn, which belongs to whatever "
           "follows the device (elsewhere it writes the next head, initialised again after)",
           {}, "x86_64-default", _from_order(1, "flags", "compound_info"),
           compare="slow-tail-loop-one-past", page="end_pfn"),
    Mutant("mutant_slow_heads_loop_one_past",
           "memmap_init_zone_device's heads loop runs `pfn <= end_pfn` in the slow path: the "
           "compound after the range is initialised (its head at end_pfn)",
           {}, "x86_64-default", _always("flags", "_mapcount", "folio.pgmap"),
           compare="slow-heads-loop-one-past", page="past_end"),
    Mutant("harmless_slow_helper_split",
           "the v5 helper split itself (zone_device_page_init_slow at both call sites): "
           "no functional change",
           {}, "x86_64-default", _never, compare="v5-helper-split"),
    Mutant("mutant_tail_seed_before_prep_compound_tail",
           "tail template snapshotted after __init_zone_device_page of tail 1 but before "
           "prep_compound_tail: later tails miss TAIL_MAPPING and compound_info",
           {"tail_seed": "before_prep_compound_tail"}, "x86_64-default",
           _from_order(2, "mapping", "compound_info")),
    Mutant("mutant_tail_seed_after_prep_compound_head",
           "prep_compound_head moved before the tail template snapshot: the folio fields of "
           "page[1] are copied into every later tail, and page[2] is overwritten",
           {"tail_seed": "after_prep_compound_head"}, "x86_64-default",
           _from_order(2, "mapping", "_entire_mapcount", "folio._deferred_list.next", "lru.prev")),
    Mutant("mutant_tail_keeps_type_refcount",
           "no set_page_count(page, 0) on tail 1 before the snapshot: tails keep the type's "
           "refcount (caught for MEMORY_DEVICE_GENERIC only, the others already end at 0)",
           {"tail_refcount_reset": False}, "x86_64-default",
           lambda ptype, order: ("_refcount",) if ptype is MemoryType.GENERIC and order >= 1
           else None),
    Mutant("mutant_no_virtual_refresh",
           "template not refreshed with __va(pfn) under WANT_PAGE_VIRTUAL: every copy keeps the "
           "first page's virtual address",
           {"refresh_virtual": False}, "x86_64-want-page-virtual",
           _always("virtual")),
    Mutant("mutant_no_section_refresh",
           "template not refreshed with the section number under SECTION_IN_PAGE_FLAGS: copies "
           "keep the first section's bits in page->flags",
           {"refresh_section": False}, "x86_64-section-in-flags",
           _always("flags")),
    Mutant("harmless_no_refresh_real",
           "no template refresh at all (neither section bits nor virtual): harmless on every "
           "ZONE_DEVICE kernel that builds, where no struct page field depends on the pfn",
           {"refresh_section": False, "refresh_virtual": False}, "x86_64-default", _never),
    Mutant("mutant_head_template_for_tails",
           "the head template is reused for the tails: tails get pgmap in compound_info, no "
           "TAIL_MAPPING, and the head's refcount",
           {"tail_seed": "head_template"}, "x86_64-default",
           _from_order(2, "compound_info", "mapping")),
    Mutant("mutant_short_copy",
           "memcpy of sizeof(struct page) - 8 bytes: the last word (memcg_data) keeps whatever "
           "was in memory (caught only because initial memory is arbitrary)",
           {"copy_len_delta": -8}, "x86_64-default",
           lambda ptype, order: ("memcg_data",)),
    Mutant("mutant_copy_one_byte_short",
           "memcpy one byte short: the top byte of memcg_data is not written",
           {"copy_len_delta": -1}, "x86_64-default",
           lambda ptype, order: ("memcg_data",)),
    Mutant("mutant_tail_loop_one_short",
           "template tail loop stops one page early: the last struct page of the compound that "
           "the kernel writes is left uninitialised",
           {"tail_loop_end_delta": -1}, "x86_64-default",
           _from_order(2, "flags", "mapping", "_refcount")),
    Mutant("mutant_tail_template_across_compounds",
           "one tail template kept across compounds (seeded in the first compound only): later "
           "compounds' tails point at the first head with the `head | 1` encoding",
           {"tail_template_per_compound": False}, "x86_64-compound-info-head",
           _from_order(2, "compound_info")),
    Mutant("harmless_tail_template_across_compounds_mask",
           "the same edit with the order-mask compound_info encoding: every tail of every "
           "compound of one order holds the same mask, so it is harmless",
           {"tail_template_per_compound": False}, "x86_64-default", _never),
    Mutant("harmless_head_snapshot_after_compound",
           "head template snapshotted after the first compound's setup: it then carries PG_head, "
           "which memmap_init_compound sets on every head anyway",
           {"head_snapshot": "after_compound"}, "x86_64-default", _never),
    Mutant("harmless_tail_loop_from_tail1",
           "template tail loop starts at tail 1, copying the template onto the page it was "
           "taken from",
           {"tail_loop_start": 1}, "x86_64-default", _never),
    Mutant("harmless_refresh_after_copy",
           "template refreshed after the copy instead of before: harmless where no struct page "
           "field depends on the pfn (every ZONE_DEVICE build today)",
           {"refresh_when": "after"}, "x86_64-default", _never),
    Mutant("mutant_refresh_after_copy_virtual",
           "the same edit under WANT_PAGE_VIRTUAL: each copy carries the previous pfn's address",
           {"refresh_when": "after"}, "x86_64-want-page-virtual", _always("virtual")),
    # ---- memmap_init_compound (v11 patch 4): the compound setup steps --------------------
    Mutant("mutant_no_prep_compound_head",
           "memmap_init_compound loses its final prep_compound_head(head, order): the folio "
           "fields of page[1] (folio_set_order's _flags_1 order byte and _nr_pages, "
           "_large_mapcount, _entire_mapcount, _pincount, _mm_ids) and page[2]'s "
           "INIT_LIST_HEAD(&folio->_deferred_list) keep the tail template's bytes",
           {"prep_compound_head": False}, "x86_64-default",
           _from_order(1, "folio._flags_1", "folio._large_mapcount", "folio._entire_mapcount",
                       "folio._deferred_list.next")),
    Mutant("mutant_prep_compound_head_before_tail_loop",
           "prep_compound_head moved up to just after the tail template snapshot, before the "
           "template tail loop: page[1] is right, but the loop then copies the tail template over "
           "page[2] and wipes INIT_LIST_HEAD(&folio->_deferred_list) (order >= 2)",
           {"prep_compound_head_when": "before_tail_loop"}, "x86_64-default",
           _from_order(2, "folio._deferred_list.next", "folio._deferred_list.prev")),
    Mutant("mutant_set_head_after_prep_compound_head",
           "__SetPageHead(head) moved after prep_compound_head: folio_set_order() sees no PG_head, "
           "hits WARN_ON_ONCE(!folio_test_large(folio)) and returns, so page[1] lacks the order "
           "byte in _flags_1 and _nr_pages (PG_head itself ends up set)",
           {"set_head_when": "after_prep_compound_head"}, "x86_64-default",
           _from_order(1, "folio._flags_1", "folio._nr_pages")),
    Mutant("harmless_set_head_after_tails",
           "__SetPageHead(head) moved from the top of memmap_init_compound to after the tail loop, "
           "still before prep_compound_head: nothing in between reads the head's flags "
           "(prep_compound_tail stores the head's address or the order mask, never its contents; "
           "the tail loop writes only tails; the head template was snapshotted before "
           "memmap_init_compound) and folio_set_order still sees PG_head",
           {"set_head_when": "after_tails"}, "x86_64-default", _never),
    Mutant("mutant_tail1_no_prep_compound_tail",
           "prep_compound_tail(page, head, order) dropped for tail 1 before its snapshot: tail 1 "
           "and, through the tail template, every tail keep folio.pgmap where compound_info "
           "should be, and no TAIL_MAPPING",
           {"tail1_prep_compound_tail": False}, "x86_64-default",
           _from_order(1, "compound_info", "folio._head_1", "mapping")),
    Mutant("harmless_tail1_from_template",
           "tail 1 initialised by zone_device_page_init_from_template(page + 1, pfn + 1, head "
           "template) instead of __init_zone_device_page, then prep_compound_tail and "
           "set_page_count(0) as v11.  Equivalent: the head template is __init_zone_device_page of "
           "the first head, taken before memmap_init_compound (so no PG_head); both start from "
           "mm_zero_struct_page and write the same zone/node/refcount/mapcount/cpupid/KASAN "
           "bits, PG_reserved, pgmap and zone_device_data for any pfn; the only pfn-dependent "
           "stores, INIT_LIST_HEAD(&page->lru), are overwritten by pgmap (lru.next) and "
           "zone_device_data (lru.prev); section bits and `virtual` are redone by the refresh; "
           "the type's refcount policy is the same, and prep_compound_tail/set_page_count(0) "
           "then overwrite the same fields on both",
           {"tail1_from_template": True}, "x86_64-default", _never),
    # ---- the template tail loop ----------------------------------------------------------
    Mutant("mutant_tail_loop_skips_tail2",
           "template tail loop starts at head_pfn + 3 instead of + 2: tail 2 (page[2]) is never "
           "copied and keeps its initial bytes except for prep_compound_head's _deferred_list",
           {"tail_loop_start": 3}, "x86_64-default",
           _from_order(2, "flags", "folio._flags_2", "compound_info", "_mapcount")),
    Mutant("harmless_tail_refresh_off_by_one",
           "the template tail loop hands pfn + 1 to zone_device_page_init_from_template: harmless "
           "on x86_64-default, where the refresh writes nothing (no section bits in page->flags, "
           "no WANT_PAGE_VIRTUAL), so its pfn argument is dead",
           {"tail_refresh_pfn_delta": 1}, "x86_64-default", _never),
    Mutant("mutant_tail_refresh_off_by_one_virtual",
           "the same edit under WANT_PAGE_VIRTUAL: every template-copied tail (t >= 2) gets the "
           "next page's __va() in `virtual`",
           {"tail_refresh_pfn_delta": 1}, "x86_64-want-page-virtual", _from_order(2, "virtual")),
    # ---- memmap_init_zone_device (v11 patch 3): the first head and the heads loop --------
    Mutant("mutant_head_snapshot_before_init",
           "head template snapshotted before __init_zone_device_page of the first head (the "
           "memcpy to the stack template moved above the slow init): every later head is a copy "
           "of the uninitialised struct page",
           {"head_snapshot": "before_init"}, "x86_64-default",
           _always("flags", "_refcount", "_mapcount", "folio.pgmap")),
    Mutant("mutant_first_compound_not_set_up",
           "memmap_init_compound not called for the first head (the slow-path branch returns "
           "after the snapshot): the first compound has no PG_head, no folio fields, and its "
           "tails are never initialised",
           {"first_compound_setup": False}, "x86_64-default",
           _from_order(1, "flags", "folio._flags_1", "compound_info", "mapping")),
    Mutant("harmless_heads_loop_from_first",
           "the template heads loop starts at compound 0 again: the first head is overwritten by "
           "its own snapshot (refreshed with its own pfn, clearing PG_head) and memmap_init_compound "
           "runs on it a second time.  Equivalent: the snapshot is exactly the first head after "
           "__init_zone_device_page, and every store of memmap_init_compound is a value that does "
           "not depend on what the page held (tail 1 restarts from mm_zero_struct_page, tails are "
           "whole-page copies, folio_set_order reads only page[1]'s flags, just rewritten, and "
           "the head's PG_head, just set again), so the second run leaves the same bytes",
           {"heads_loop_start": 0}, "x86_64-default", _never),
    Mutant("mutant_heads_loop_skips_second_compound",
           "template heads loop starts at compound 2 (`pfn = start_pfn + 2 * pfns_per_compound`): "
           "compound 1 is never initialised",
           {"heads_loop_start": 2}, "x86_64-default",
           _always("flags", "_mapcount", "folio.pgmap")),
    Mutant("mutant_heads_loop_one_short",
           "template heads loop stops one compound early (`pfn < end_pfn - pfns_per_compound`): "
           "the last compound of the range is never initialised",
           {"heads_loop_end_delta": -1}, "x86_64-default",
           _always("flags", "_mapcount", "folio.pgmap")),
    Mutant("mutant_heads_loop_one_past_end",
           "template heads loop runs one compound past the range (`pfn <= end_pfn`): the struct "
           "pages of the compound after the range are overwritten (caught on the outside role)",
           {"heads_loop_end_delta": 1}, "x86_64-default",
           _always("flags", "_mapcount", "folio.pgmap"), page="past_end"),
    # ---- writes outside the range (one name per struct page) ------------------------
    Mutant("mutant_tail_loop_one_past_end",
           "template tail loop runs `pfn <= head_pfn + nr_pages`: in the last compound the "
           "extra copy lands on the struct page of end_pfn, the memmap of whatever follows "
           "the device (in the other compounds on the next head, which is initialised again)",
           {"tail_loop_end_delta": 1}, "x86_64-default",
           _from_order(1, "flags", "compound_info"), page="end_pfn"),
    Mutant("mutant_tail_loop_one_past_end_last_compound",
           "the same overrun in the last compound only (`pfn <= end_pfn` there): the one "
           "store outside the range",
           {"tail_loop_end_last_only": True}, "x86_64-default",
           _from_order(1, "flags", "compound_info"), page="end_pfn"),
    Mutant("mutant_first_head_before_range",
           "the first head is initialised at `pfn_to_page(start_pfn - 1)`: the struct page "
           "before the range is written and the real first head never is",
           {"first_head_delta": -1}, "x86_64-default",
           _always("flags", "_mapcount", "folio.pgmap"), page="before_start"),
    Mutant("mutant_tail_copy_to_next_page",
           "the template tail loop copies into `page + 1` of the pfn it refreshes for: tail 2 "
           "is never initialised and the last copy of each compound lands one page further",
           {"tail_write_delta": 1}, "x86_64-default", _from_order(2, "flags", "compound_info")),
    Mutant("mutant_tail_loop_last_tail_over_head",
           "the template tail loop, after its copy onto the compound's last tail, also copies "
           "that struct page over the head (`memcpy(head, page, sizeof(struct page))`): the "
           "head loses PG_head and gets the tail's compound_info, TAIL_MAPPING and refcount",
           {"tail_last_copy_to": 0}, "x86_64-default",
           _from_order(2, "flags", "compound_info", "folio.pgmap", "mapping")),
    Mutant("mutant_tail_loop_last_tail_over_tail1_virtual",
           "the same extra copy over tail 1 under WANT_PAGE_VIRTUAL: tail 1 gets the last "
           "tail's __va() in `virtual` (elsewhere tail 1 and the last tail hold the same bytes, "
           "and the edit is harmless though not provable: the loop leaves its frame)",
           {"tail_last_copy_to": 1}, "x86_64-want-page-virtual", _from_order(2, "virtual")),
    Mutant("harmless_tail_loop_ne",
           "the template tail loop's bound written `pfn != end` instead of `pfn < end`: the "
           "same trip count, since the loop starts at or below its end",
           {"tail_loop_cond": "!="}, "x86_64-default", _never),
)}


def names_page(cx: Counterexample, page: str) -> bool:
    """Does ``cx`` name the struct page ``page`` ("end_pfn": the one right after the range,
    "past_end": one of the compound after it, "before_start": the one before its first
    pfn)?"""
    start, nr = cx.inputs.get("start_pfn"), cx.inputs.get("nr_pages")
    if cx.role != "outside" or cx.pfn is None or isinstance(start, bool) or isinstance(nr, bool) \
            or start is None or nr is None:
        return False
    if page == "past_end":
        return 0 <= cx.pfn - (start + nr) < 1 << 18
    want = start + nr if page == "end_pfn" else start - 1
    return cx.pfn == want & ((1 << 64) - 1)


def first_roles(name: str, ptype: MemoryType | None, order: int, layout: Layout
                ) -> tuple[str, ...]:
    """The page roles a cell of mutant ``name`` is best checked at first: ``outside`` for a
    bug that must name a struct page outside the range, else the roles of the folio pages
    its expected fields overlay (``folio._refcount_1`` lies on page[1]: ``tail1``; on
    page[2]: ``tail2``).  Only the order of the checks: :func:`caught` stops at the first
    obligation that catches the bug, and :func:`equiv.zone_device.selftest.classify` scores a cell
    by whether any obligation decided catches it, so the order changes how soon a kill is
    found, never whether there is one."""
    m = MUTANTS[name]
    want = None if ptype is None else m.expect(ptype, order)
    if want is None or is_equivalent(m):
        return ()
    if m.page is not None:
        return ("outside",)
    pages = {v.page for v in layout.views if v.page is not None and f"folio.{v.name}" in want}
    return tuple(r.name for r in sorted(ROLES.values(), key=lambda r: r.page_index or 0)
                 if r.page_index is not None and r.page_index in pages)


def is_equivalent(m: Mutant) -> bool:
    """An equivalent-mutant control (named ``harmless_*``): must be PROVED on every cell."""
    return m.name.startswith("harmless_")


def caught(name: str, ptype: MemoryType | None, order: int
           ) -> Callable[[ObligationResult], bool] | None:
    """When a cell of mutant ``name`` has shown what the self-test asks of it: an obligation
    REFUTED by a counterexample that reports one of the fields the bug must name (and, for
    a bug of a page outside the range, names that page).
    :func:`equiv.zone_device.selftest.classify` scores such a
    cell KILLED whatever the obligations after it say, so :func:`~equiv.zone_device.check.check_cell`
    stops there.  None where the bug is not expected to show (the cell must be proved
    whole) and for the equivalent controls."""
    m = MUTANTS[name]
    want = None if ptype is None else m.expect(ptype, order)
    if want is None or m.name.startswith("harmless_"):
        return None
    fields = set(want)

    def enough(o: ObligationResult) -> bool:
        cx = counterexample_of(o)
        if o.verdict is not Verdict.REFUTED or cx is None:
            return False
        if not fields & {n for d in cx.diffs for n in d.fields}:
            return False
        return m.page is None or names_page(cx, m.page)

    return enough

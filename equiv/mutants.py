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

from equiv.memmap import MemoryType
from equiv.template_path import Revision, with_variant

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

    def apply(self, rev: Revision) -> Revision:
        return with_variant(rev, **self.knobs)


def _always(*fields: str) -> Expect:
    return lambda ptype, order: fields


def _from_order(n: int, *fields: str) -> Expect:
    return lambda ptype, order: fields if order >= n else None


def _never(ptype: MemoryType, order: int) -> None:
    return None


MUTANTS: dict[str, Mutant] = {m.name: m for m in (
    Mutant("mutant_tail_seed_before_prep_compound_tail",
           "tail template snapshotted after __init_zone_device_page of tail 1 but before "
           "prep_compound_tail: later tails miss TAIL_MAPPING and compound_info",
           {"tail_seed": "before_prep_compound_tail"}, "x86_64-default",
           _from_order(2, "mapping", "compound_info")),
    Mutant("mutant_tail_seed_after_prep_compound_head",
           "prep_compound_head moved before the tail template snapshot: the folio fields of "
           "page[1] are copied into every later tail, and page[2] is overwritten",
           {"tail_seed": "after_prep_compound_head"}, "x86_64-default",
           _from_order(2, "mapping", "_entire_mapcount", "_deferred_list.next", "lru.prev")),
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
)}

"""Seeded bugs M1-M8 of the reference (§10), and equiv's own controls X1-X6, as one-line
edits of the fast paths: X1-X2 for the obligations index_bound and errors_agree, which no M
refutes; X3-X5 for what the local model once took for granted (the walks of the batching
loop cover the range, the flush's end, every entry of a CONT group); X6 an equivalent
control for the batching invariant (a walk issued only when the shift drops).

Each is an edit of a :class:`~equiv.vmap.revisions.Revision` knob (``hook.*`` edits the arm64
hook).  ``expect[path]`` is what the checker must answer on that path: ``None`` (the edit
cannot show there, or is harmless: every obligation PROVED) or the obligations of which at
least one must be REFUTED; ``not_reported`` lists obligations that must not be refuted (M6:
"E-trans alone does not catch it"; M7: undefined behaviour, not a translation difference).
The self-test (:mod:`equiv.vmap.selftest`) applies them to ``v8-fix``, the latest revision
with the fix of docs/findings/vmap-multi-cont-crosses-runs.md: on v8 itself vmap is already
refuted (the finding), which would make every kill on vmap meaningless.
"""

from __future__ import annotations

from typing import Any

from attrs import evolve, frozen

from equiv.engine.errors import lookup
from equiv.vmap.revisions import Revision


@frozen
class Mutant:
    """A seeded bug (or an equivalent control) and the verdicts it must get."""

    name: str
    label: str
    description: str
    knobs: tuple[tuple[str, object], ...]
    #: path -> obligations of which one must be refuted, or None (must be PROVED)
    expect: tuple[tuple[str, tuple[str, ...] | None], ...]
    #: obligations that must not be refuted
    not_reported: tuple[str, ...] = ()
    #: an equivalent-mutant control (must be PROVED everywhere)
    equivalent: bool = False
    #: the smallest bound at which it can show
    min_bound: int = 1

    def expected(self, path: str) -> tuple[str, ...] | None:
        return dict(self.expect).get(path)


def _vmap(*obs: str) -> tuple[tuple[str, tuple[str, ...] | None], ...]:
    return (("ioremap", None), ("vmalloc", None), ("vmap", obs))


MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant(
            "mutant_no_pfn_align_clamp",
            "M1",
            "get_vmap_batch_order without the pfn-alignment clamp (order = ilog2(nr_contig)): a contiguous "
            "run at a misaligned pfn gets shift >= 17 and the multi-CONT step crosses into the next segment",
            (("pfn_clamp", False),),
            _vmap("e_trans"),
            min_bound=2,
        ),
        Mutant(
            "mutant_fls_not_fls",
            "M2",
            "arm64 hook with 1UL << fls(size) (pre-v3): the size is twice end - addr or twice the run",
            (("hook.round_down", "fls"),),
            (
                ("ioremap", ("terminates", "frame", "e_trans")),
                ("vmalloc", ("terminates", "frame", "e_trans")),
                ("vmap", ("terminates", "frame", "e_trans")),
            ),
        ),
        Mutant(
            "mutant_no_pmd_nr_increment",
            "M3",
            "vmap_pages_pmd_range without *nr += 1 << (PMD_SHIFT - PAGE_SHIFT) after a PMD block: "
            "every later PTE of the walk maps pages[] shifted by 512",
            (("pmd_nr_increment", False),),
            (("ioremap", None), ("vmalloc", ("e_trans",)), ("vmap", ("e_trans",))),
            min_bound=2,
        ),
        Mutant(
            "mutant_flush_from_map_addr",
            "M4",
            "vmap_pages_range_batched flushes flush_cache_vmap(map_addr, end): the flushed range misses the "
            "start when there was more than one walk",
            (("flush_from", "map_addr"),),
            _vmap("flush_covers"),
            min_bound=2,
        ),
        Mutant(
            "mutant_batch_step_by_shift",
            "M5",
            "vmap_pages_range_batched steps i += 1U << shift (Rezki's Oops): the index jumps past the array "
            "and the rest is mapped with the first batch's shift",
            (("batch_step", "shift"),),
            _vmap("e_trans", "index_bound"),
            min_bound=2,
        ),
        Mutant(
            "mutant_no_cont_pfn_guard",
            "M6",
            "arm64 hook without the IS_ALIGNED(PFN_PHYS(pfn), CONT_PTE_SIZE) guard: per-PTE pfns stay right "
            "but the CONT group has a misaligned base (a misprogrammed contiguous bit)",
            (("hook.pfn_guard", False),),
            (("ioremap", ("wf_block",)), ("vmalloc", None), ("vmap", ("wf_block",))),
            not_reported=(),
        ),
        Mutant(
            "mutant_no_pfn0_guard",
            "M7",
            "get_vmap_batch_order without if (pfn > 0): __ffs(0) is evaluated (undefined behaviour); any "
            "value it yields is a sound clamp, so only the UB is to report",
            (("pfn0_guard", False),),
            _vmap("ub_ffs0"),
            not_reported=("e_trans", "wf_block", "frame"),
        ),
        Mutant(
            "mutant_max_steps_past_end",
            "X1",
            "equiv's own control for index_bound: vmap_pages_range_batched calls "
            "get_vmap_batch_order(pages, prot, count - i + 1, i): num_pages_contiguous() reads "
            "pages[count] when pages[i..count) are contiguous",
            (("max_steps_slack", 1),),
            _vmap("index_bound"),
        ),
        Mutant(
            "mutant_pte_alloc_before_pmd",
            "X2",
            "equiv's own control for errors_agree: vmap_pages_pmd_range allocates the PTE table "
            "(pte_alloc_kernel_track) before trying the PMD block: a slot mapped by a block "
            "allocates a table the slow path never does",
            (("pte_alloc_first", True),),
            (("ioremap", None), ("vmalloc", ("errors_agree",)), ("vmap", None)),
        ),
        Mutant(
            "mutant_final_walk_to_batch_end",
            "X3",
            "equiv's own control for the walks' coverage (lemma batch_walks_tile): the final "
            "vmap_pages_range_noflush_walk(map_addr, batch_end, ...) of vmap_pages_range_batched ends "
            "at the end of the last batch instead of end: the pages after a break in the batching "
            "are never mapped (an array of single pages maps nothing, the empty walk hits its BUG_ON)",
            (("final_walk_end", "batch_end"),),
            _vmap("e_trans"),
        ),
        Mutant(
            "mutant_flush_to_batch_end",
            "X4",
            "equiv's own control for the flush end (lemma batch_flush_covers): vmap_pages_range_batched "
            "flushes flush_cache_vmap(addr, batch_end): the flushed range misses the pages after a "
            "break in the batching",
            (("flush_to", "batch_end"),),
            _vmap("flush_covers"),
        ),
        Mutant(
            "mutant_cont_last_pte_not_cont",
            "X5",
            "equiv's own control for every entry of a CONT group: set_huge_pte_at() writes the last "
            "PTE of a CONT step without PTE_CONT (15 entries of its group CONT, one not: arm64 requires "
            "all 16 to agree); the translation is unchanged",
            (("cont_every_pte", False),),
            (
                ("ioremap", ("wf_block", "e_enc")),
                ("vmalloc", ("wf_block", "e_enc")),
                ("vmap", ("wf_block",)),
            ),
            not_reported=("e_trans",),
        ),
        Mutant(
            "harmless_walk_on_shift_drop",
            "X6",
            "equivalent control: vmap_pages_range_batched issues the pending walk only when the batch "
            "shift drops (if (shift < prev_shift)); a run of a higher order joins the pending walk, "
            "whose smaller shift maps it with smaller blocks of the same pages (the kernel's order "
            "of walks allows it: every iteration of a walk stays contiguous and aligned to the "
            "walk's order)",
            (("walk_on", "drop"),),
            (("ioremap", None), ("vmalloc", None), ("vmap", None)),
            equivalent=True,
        ),
        Mutant(
            "harmless_no_vm_shift_filter",
            "M8",
            "equivalent control: get_vmap_batch_order without the vm_shift(...) == PAGE_SHIFT filter: orders "
            "1-3 get shifts 13-15 < CONT_PTE_SHIFT, the hook returns one page, the result is the same",
            (("shift_filter", False),),
            (("ioremap", None), ("vmalloc", None), ("vmap", None)),
            equivalent=True,
        ),
    )
}


def apply(rev: Revision, name: str) -> Revision:
    """``rev`` with seeded bug ``name`` applied."""
    m = lookup(MUTANTS, name, "vmap mutant")
    out = rev
    for knob, value in m.knobs:
        change: dict[str, Any] = {knob.removeprefix("hook."): value}
        if knob.startswith("hook."):
            out = evolve(out, hook=evolve(out.hook, **change))
        else:
            out = evolve(out, **change)
    return out


def by_label(label: str) -> Mutant:
    """The mutant with label ``label`` (M1..M8, X1..X6)."""
    for m in MUTANTS.values():
        if m.label == label:
            return m
    raise KeyError(label)

"""The names the zone-device subject's options choose from: the revisions of the series
(``--revision``), the slow-path comparisons (``--compare``), the seeded bugs (``--mutant``),
the pgmap types (``--types``) and the page roles (``--obligation ROLE_equal``).  Imports
nothing, so the command line can offer and check them without loading the model.

The modules that say what each name means keep their own tables, keyed by these names in
this order (a test holds them to it): :data:`equiv.template_path.REVISIONS`,
:data:`equiv.slow_variants.COMPARISONS`, :data:`equiv.zone_device.mutants.MUTANTS`,
:class:`equiv.memmap.MemoryType` and :data:`equiv.zone_device.obligations.ROLES`.  The
configuration presets are named by :data:`equiv.config.PRESETS`, which the command line
loads anyway (attrs only)."""

from __future__ import annotations

#: the revisions of the series, in the order ``--list`` shows them
REVISIONS = ("v11", "v11-fix", "v1", "v2", "v3", "v4", "v5")
#: the revision of the series a run proves without --revision (the latest posted, v11 of
#: 2026-08-31)
DEFAULT_REVISION = "v11"

#: the slow-path variants ``--compare NAME`` puts in the fast path's place: refactors,
#: seeded slow-path bugs and the v6.12 slow path
COMPARISONS = ("v5-helper-split", "pre-section-helper", "slow-count-before-init",
               "slow-prep-tail-before-init", "slow-split-inverted", "slow-tail-loop-one-past",
               "slow-heads-loop-one-past", "v6.12")
#: the prefix of the revision name a comparison runs under (``compare:v6.12``): the name
#: its cells, cache keys and reports carry
COMPARE = "compare:"

#: the seeded-bug controls (``--mutant``, the self-test), in catalogue order
MUTANTS = (
    "mutant_slow_count_before_init", "mutant_slow_prep_tail_before_init",
    "mutant_slow_split_inverted", "mutant_slow_tail_loop_one_past",
    "mutant_slow_heads_loop_one_past", "harmless_slow_helper_split",
    "mutant_tail_seed_before_prep_compound_tail", "mutant_tail_seed_after_prep_compound_head",
    "mutant_tail_keeps_type_refcount", "mutant_no_virtual_refresh", "mutant_no_section_refresh",
    "harmless_no_refresh_real", "mutant_head_template_for_tails", "mutant_short_copy",
    "mutant_copy_one_byte_short", "mutant_tail_loop_one_short",
    "mutant_tail_template_across_compounds", "harmless_tail_template_across_compounds_mask",
    "harmless_head_snapshot_after_compound", "harmless_tail_loop_from_tail1",
    "harmless_refresh_after_copy", "mutant_refresh_after_copy_virtual",
    "mutant_no_prep_compound_head", "mutant_prep_compound_head_before_tail_loop",
    "mutant_set_head_after_prep_compound_head", "harmless_set_head_after_tails",
    "mutant_tail1_no_prep_compound_tail", "harmless_tail1_from_template",
    "mutant_tail_loop_skips_tail2", "harmless_tail_refresh_off_by_one",
    "mutant_tail_refresh_off_by_one_virtual", "mutant_head_snapshot_before_init",
    "mutant_first_compound_not_set_up", "harmless_heads_loop_from_first",
    "mutant_heads_loop_skips_second_compound", "mutant_heads_loop_one_short",
    "mutant_heads_loop_one_past_end", "mutant_tail_loop_one_past_end",
    "mutant_tail_loop_one_past_end_last_compound", "mutant_first_head_before_range",
    "mutant_tail_copy_to_next_page", "mutant_tail_loop_last_tail_over_head",
    "mutant_tail_loop_last_tail_over_tail1_virtual", "harmless_tail_loop_ne")

#: ``enum memory_type`` (include/linux/memremap.h) without its ``MEMORY_DEVICE_`` prefix, in
#: enum order
TYPES = ("PRIVATE", "COHERENT", "FS_DAX", "GENERIC", "PCI_P2PDMA")

#: the page roles, one page obligation ``<role>_equal`` each
ROLES = ("head", "tail1", "tail2", "tail", "outside", "pageblock")


def roles_at(order: int) -> tuple[str, ...]:
    """The roles that exist at compound order ``order`` (the lowest order of an order class:
    from order 2 on, every class has them all): tail 1 from order 1, tail 2 and the other
    tails from order 2.

    >>> roles_at(1)
    ('head', 'tail1', 'outside', 'pageblock')
    """
    tails = ("tail1",) * (order >= 1) + ("tail2", "tail") * (order >= 2)
    return ("head", *tails, "outside", "pageblock")


__all__ = ["COMPARE", "COMPARISONS", "DEFAULT_REVISION", "MUTANTS", "REVISIONS", "ROLES", "TYPES",
           "roles_at"]

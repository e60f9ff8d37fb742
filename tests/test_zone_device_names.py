"""The zone-device option names (equiv.zone_device.names) are the keys of the tables that
say what they mean, in the same order; a comparison is known by its resolved revision's
``comparison`` field, not by its name."""

from __future__ import annotations

import pytest

from equiv.engine.errors import InputError
from equiv.memmap import MemoryType
from equiv.slow_variants import COMPARISONS
from equiv.template_path import REVISIONS
from equiv.zone_device import names
from equiv.zone_device.cell import CellSpec, cell_paths, resolve
from equiv.zone_device.mutants import MUTANTS
from equiv.zone_device.obligations import ROLES, roles_for
from equiv.zone_device.selftest import specs


def test_the_names_are_the_tables_keys() -> None:
    assert tuple(REVISIONS) == names.REVISIONS
    assert names.DEFAULT_REVISION in names.REVISIONS
    assert tuple(COMPARISONS) == names.COMPARISONS
    assert tuple(MUTANTS) == names.MUTANTS
    assert tuple(MemoryType.__members__) == names.TYPES
    assert tuple(ROLES) == names.ROLES


@pytest.mark.parametrize("order", range(4))
def test_the_roles_at_an_order(order: int) -> None:
    want = ["head", *(["tail1"] if order >= 1 else []), *(["tail2", "tail"] if order >= 2 else []),
            "outside", "pageblock"]
    assert [r.name for r in roles_for(order)] == list(names.roles_at(order)) == want


def test_a_comparison_is_a_field_of_its_revision() -> None:
    rev, fast = resolve(names.COMPARE + "v6.12")
    assert (rev.name, rev.comparison) == ("compare:v6.12", "v6.12") and fast is not None
    assert all(resolve(n)[0].comparison is None for n in names.REVISIONS)
    slow_edit = next(n for n, m in MUTANTS.items() if m.compare is not None)
    _, rev, _ = cell_paths(CellSpec(config="x86_64-default", revision=names.DEFAULT_REVISION,
                                    ptype=MemoryType.GENERIC, order=0, mutant=slow_edit))
    assert rev.comparison == MUTANTS[slow_edit].compare


def test_a_cell_is_built_by_keyword() -> None:
    with pytest.raises(TypeError):
        CellSpec("x86_64-default", "v11", MemoryType.GENERIC, 0)  # type: ignore[misc]


def test_both_self_tests_name_every_unknown_seeded_bug() -> None:
    from equiv.vmap.selftest import self_test as vmap_self_test

    with pytest.raises(InputError, match=r"^unknown mutant\(s\) nope, nix; valid: "
                                         r"mutant_slow_count_before_init, "):
        specs(["nope", "mutant_short_copy", "nix"])
    with pytest.raises(InputError, match=r"^unknown vmap mutant\(s\) nope; valid: "):
        vmap_self_test(1, names=["nope"])

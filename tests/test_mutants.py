"""Negative controls: every seeded bug is REFUTED on the field it breaks, every harmless edit
stays PROVED.  A checker that cannot fail is not a checker."""

from __future__ import annotations

import pytest

from equiv.check import Verdict
from equiv.matrix import CellSpec, run_cell
from equiv.memmap import MemoryType
from equiv.mutants import MUTANTS

#: (type, order) cells each control is checked on: order 0/1 (no template tails), 2 (every
#: role), 9 (deduplicated vmemmap on 64-byte pages)
CELLS = [(MemoryType.GENERIC, 0), (MemoryType.GENERIC, 1), (MemoryType.FS_DAX, 2),
         (MemoryType.GENERIC, 2), (MemoryType.PRIVATE, 9)]


def test_catalogue_has_bugs_and_harmless_edits() -> None:
    """At least 8 bugs and 2 harmless edits, as the issue asks."""
    harmless = [m for m in MUTANTS.values() if m.name.startswith("harmless_")]
    assert len(MUTANTS) - len(harmless) >= 8
    assert len(harmless) >= 2


@pytest.mark.parametrize("name", sorted(MUTANTS))
@pytest.mark.parametrize(("ptype", "order"), CELLS, ids=[f"{t.name}-o{o}" for t, o in CELLS])
def test_control(name: str, ptype: MemoryType, order: int) -> None:
    """The control's verdict and, when refuted, a differing field it names."""
    m = MUTANTS[name]
    res = run_cell(CellSpec(m.config, "v11", ptype, order, mutant=name))
    want = m.expect(ptype, order)
    if want is None:
        assert res.verdict is Verdict.PROVED, [(o.name, o.verdict) for o in res.obligations]
        return
    assert res.verdict is Verdict.REFUTED
    named = {n for o in res.obligations if o.counterexample
             for d in o.counterexample.diffs for n in d.names}
    assert named & set(want), f"expected one of {want}, got {sorted(named)}"
    assert all(o.verdict is Verdict.PROVED for o in res.obligations if o.kind == "lemma")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, m in MUTANTS.items() if m.config == "x86_64-default"))
def test_control_at_pud_order(name: str) -> None:
    """Order 18 (262,144 struct pages per compound) decides every control the same way."""
    m = MUTANTS[name]
    res = run_cell(CellSpec(m.config, "v11", MemoryType.GENERIC, 18, mutant=name))
    want = m.expect(MemoryType.GENERIC, 18)
    assert res.verdict is (Verdict.PROVED if want is None else Verdict.REFUTED)


@pytest.mark.parametrize("ptype", [MemoryType.FS_DAX, MemoryType.PRIVATE, MemoryType.COHERENT,
                                   MemoryType.PCI_P2PDMA])
def test_type_refcount_bug_is_harmless_for_types_ending_at_zero(ptype: MemoryType) -> None:
    """Tails keep the type's refcount: harmless where the type's refcount is already 0."""
    res = run_cell(CellSpec("x86_64-default", "v11", ptype, 3,
                            mutant="mutant_tail_keeps_type_refcount"))
    assert res.verdict is Verdict.PROVED


def test_counterexample_names_role_and_provenance() -> None:
    """The report of a refuted control locates the page and the step that wrote the field."""
    res = run_cell(CellSpec("x86_64-default", "v11", MemoryType.GENERIC, 2,
                            mutant="mutant_tail_keeps_type_refcount"))
    tail1 = next(o for o in res.obligations if o.role == "tail1")
    assert tail1.verdict is Verdict.REFUTED and tail1.counterexample is not None
    d = tail1.counterexample.diffs[0]
    assert d.names[0] == "_refcount" and (d.slow, d.fast) == (0, 1)
    assert d.slow_origin == ("memmap_init_compound: set_page_count(page, 0)",)
    assert d.fast_origin == ("__init_single_page: init_page_count",)


class TestConfigMakesItReal:
    """The refresh exists for layouts with pfn-dependent fields: there, skipping it is a bug
    with a counterexample crossing a section boundary; on real kernels it is harmless."""

    def test_section_bits_counterexample_crosses_a_section(self) -> None:
        """Hypothetical section-in-flags: the copied head sits in another section than the seed."""
        res = run_cell(CellSpec("x86_64-section-in-flags", "v11", MemoryType.GENERIC, 0,
                                mutant="mutant_no_section_refresh"))
        cx = next(o.counterexample for o in res.obligations if o.counterexample)
        assert cx is not None and cx.pfn is not None and cx.seed_pfn is not None
        assert cx.pfn >> cx.section_shift != cx.seed_pfn >> cx.section_shift
        assert any("flags" in d.names for d in cx.diffs)

    def test_virtual_counterexample(self) -> None:
        """Hypothetical WANT_PAGE_VIRTUAL: `virtual` differs when the refresh is skipped."""
        res = run_cell(CellSpec("x86_64-want-page-virtual", "v11", MemoryType.FS_DAX, 2,
                                mutant="mutant_no_virtual_refresh"))
        assert res.verdict is Verdict.REFUTED

    @pytest.mark.parametrize("config", ["x86_64-default", "x86_64-maxsmp", "x86_64-kmsan",
                                        "arm64-4k-kasan-sw", "arm64-64k", "arm64-cpupid-outside"])
    def test_skipping_the_refresh_is_harmless_on_real_presets(self, config: str) -> None:
        """No refresh at all is PROVED equivalent on every real preset."""
        for order in (0, 3):
            res = run_cell(CellSpec(config, "v11", MemoryType.GENERIC, order,
                                    mutant="harmless_no_refresh_real"))
            assert res.verdict is Verdict.PROVED, (config, order)

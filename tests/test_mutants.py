"""Negative controls: every seeded bug is REFUTED on the field it breaks, every harmless edit
stays PROVED.  A checker that cannot fail is not a checker."""

from __future__ import annotations

import pytest
from attrs import evolve, fields

from equiv.config import PRESETS
from equiv.engine.errors import InputError
from equiv.engine.results import CellResult, ObligationResult
from equiv.engine.selftest import CellOutcome, MutantRow, Outcome, SelfTestResult
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.report import render_selftest
from equiv.template_path import REVISIONS, FastVariant
from equiv.zone_device.cell import CellSpec, run_cell, run_matrix
from equiv.zone_device.counterexample import Counterexample, FieldDiff, InitialMemory
from equiv.zone_device.mutants import MUTANTS
from equiv.zone_device.selftest import CELLS as SELFTEST_CELLS
from equiv.zone_device.selftest import caught, classify, self_test

#: (type, order) cells each control is checked on: order 0/1 (no template tails), 2 (every
#: role), 9 (deduplicated vmemmap on 64-byte pages)
CELLS = [(MemoryType.GENERIC, 0), (MemoryType.GENERIC, 1), (MemoryType.FS_DAX, 2),
         (MemoryType.GENERIC, 2), (MemoryType.PRIVATE, 9)]


def test_catalogue_has_bugs_and_harmless_edits() -> None:
    """At least 20 bugs and 8 equivalent-mutant controls (issue "Mutation self-test")."""
    harmless = [m for m in MUTANTS.values() if m.name.startswith("harmless_")]
    assert len(MUTANTS) - len(harmless) >= 20
    assert len(harmless) >= 8


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_is_a_real_named_edit(name: str) -> None:
    """Each entry is named mutant_* or harmless_*, targets a preset, is described, and changes
    at least one knob away from v11 (an entry equal to v11 would be a vacuous control)."""
    m = MUTANTS[name]
    assert name.startswith(("mutant_", "harmless_"))
    assert m.config in PRESETS and m.description
    if m.compare is not None:  # a slow-path edit: a registered comparison, no knobs
        from equiv.slow_variants import COMPARISONS

        assert m.compare in COMPARISONS and not m.knobs
        return
    v11 = REVISIONS["v11"].variant
    assert m.knobs and all(getattr(v11, k) != val for k, val in m.knobs.items())
    m.apply(REVISIONS["v11"])  # the knobs validate


def test_the_catalogue_is_the_self_test_cells() -> None:
    """tests and the self-test check the same cells."""
    assert tuple(CELLS) == SELFTEST_CELLS


def test_v11_is_the_default_variant() -> None:
    """The new knobs default to v11: the revision's variant is FastVariant() unchanged."""
    assert REVISIONS["v11"].variant == FastVariant()
    defaults = {a.name: a.default for a in fields(FastVariant)}
    assert defaults["prep_compound_head"] is True and defaults["set_head_when"] == "first"
    assert defaults["first_compound_setup"] is True and defaults["heads_loop_start"] == 1
    assert defaults["heads_loop_end_delta"] == 0 and defaults["tail_refresh_pfn_delta"] == 0
    assert defaults["tail1_from_template"] is False and defaults["tail1_prep_compound_tail"] is True
    assert defaults["prep_compound_head_when"] == "after_tails"


@pytest.mark.parametrize(("knobs", "match"), [
    ({"set_head_when": "never"}, "set_head_when"),
    ({"prep_compound_head_when": "before_head"}, "prep_compound_head_when"),
    ({"head_snapshot": "after_tail1"}, "head_snapshot"),
    ({"copy_len_delta": 1}, "copy_len_delta"),
    ({"heads_loop_start": 3}, "heads_loop_start"),
    ({"heads_loop_start": -1}, "heads_loop_start"),
    ({"heads_loop_end_delta": 2}, "heads_loop_end_delta"),
    ({"tail_loop_start": 0}, "tail_loop_start"),
    ({"tail_refresh_pfn_delta": "1"}, "tail_refresh_pfn_delta"),
    ({"first_compound_setup": False, "tail_template_per_compound": False}, "first_compound_setup"),
])
def test_bad_knobs_are_rejected(knobs: dict[str, object], match: str) -> None:
    """Knob values outside what the model can represent are input errors naming the knob."""
    with pytest.raises(InputError, match=match):
        FastVariant(**knobs)  # type: ignore[arg-type]


#: the cell every control is checked on in plain runs (every page role); --runslow: all
PLAIN_CELL = (MemoryType.GENERIC, 2)


@pytest.fixture(scope="module")
def controls(request: pytest.FixtureRequest) -> dict[tuple[str, MemoryType, int], CellResult]:
    """Every control on every cell (plain runs: on :data:`PLAIN_CELL`), run once as one
    matrix in worker processes (as the self-test runs them: counterexamples not minimised)
    rather than cell by cell."""
    cells = CELLS if request.config.getoption("--runslow") else [PLAIN_CELL]
    specs = [CellSpec(config=MUTANTS[n].config, revision="v11", ptype=t, order=o, mutant=n, minimise=False)
             for n in sorted(MUTANTS) for t, o in cells]
    results, _wall, _jobs = run_matrix(specs)
    return {(sp.mutant or "", sp.ptype, sp.order): r for sp, r in zip(specs, results, strict=True)}


@pytest.mark.parametrize("name", sorted(MUTANTS))
@pytest.mark.parametrize(("ptype", "order"), [
    pytest.param(t, o, id=f"{t.name}-o{o}", marks=() if (t, o) == PLAIN_CELL else pytest.mark.slow)
    for t, o in CELLS])
def test_control(controls: dict[tuple[str, MemoryType, int], CellResult], name: str,
                 ptype: MemoryType, order: int) -> None:
    """The control's verdict and, when refuted, a differing field it names."""
    m = MUTANTS[name]
    res = controls[(name, ptype, order)]
    want = m.expect(ptype, order)
    if want is None:
        assert res.verdict is Verdict.PROVED, [(o.name, o.verdict) for o in res.obligations]
        return
    assert res.verdict is Verdict.REFUTED
    named = {n for o in res.obligations if o.counterexample
             for d in o.counterexample.diffs for n in d.fields}
    assert named & set(want), f"expected one of {want}, got {sorted(named)}"
    lemmas = [o for o in res.obligations if o.kind == "lemma"]
    if any(o.verdict is not Verdict.PROVED for o in lemmas):
        # only a store outside the iteration's frame may break a lemma, and then it is
        # REFUTED on the frame lemma with the struct page, not left UNKNOWN
        assert m.page is not None or {"tail_write_delta", "tail_last_copy_to"} & set(m.knobs), name
        assert any(o.verdict is Verdict.REFUTED and o.name.endswith(("frame-write", "frame-bound"))
                   for o in lemmas), [(o.name, o.verdict) for o in lemmas]


#: the controls of the default config, checked at order 18 too
PUD_CONTROLS = sorted(n for n, m in MUTANTS.items() if m.config == "x86_64-default")


@pytest.fixture(scope="module")
def pud_controls() -> dict[str, CellResult]:
    """Each default-config control at order 18, run as one matrix in worker processes."""
    specs = [CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=18, mutant=n,
                      minimise=False)
             for n in PUD_CONTROLS]
    results, _wall, _jobs = run_matrix(specs)
    return dict(zip(PUD_CONTROLS, results, strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("name", PUD_CONTROLS)
def test_control_at_pud_order(pud_controls: dict[str, CellResult], name: str) -> None:
    """Order 18 (262,144 struct pages per compound) decides every control the same way."""
    m = MUTANTS[name]
    res = pud_controls[name]
    want = m.expect(MemoryType.GENERIC, 18)
    assert res.verdict is (Verdict.PROVED if want is None else Verdict.REFUTED)


@pytest.mark.parametrize("ptype", [MemoryType.FS_DAX, MemoryType.PRIVATE, MemoryType.COHERENT,
                                   MemoryType.PCI_P2PDMA])
def test_type_refcount_bug_is_harmless_for_types_ending_at_zero(ptype: MemoryType) -> None:
    """Tails keep the type's refcount: harmless where the type's refcount is already 0."""
    res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=ptype, order=3,
                            mutant="mutant_tail_keeps_type_refcount"))
    assert res.verdict is Verdict.PROVED


def test_counterexample_names_role_and_provenance() -> None:
    """The report of a refuted control locates the page and the step that wrote the field."""
    res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
                            mutant="mutant_tail_keeps_type_refcount"))
    tail1 = next(o for o in res.obligations if o.role == "tail1")
    assert tail1.verdict is Verdict.REFUTED and tail1.counterexample is not None
    d = tail1.counterexample.diffs[0]
    assert d.names[0] == "_refcount" and (d.slow, d.fast) == (0, 1)
    # the chain of steps on each side, oldest first (the last one is the value's writer)
    (slow,), (fast,) = d.slow_provenance, d.fast_provenance
    assert slow[-1] == "memmap_init_compound: set_page_count(page, 0)"
    assert fast[-1] == "__init_single_page: init_page_count"
    assert slow[:-1] == fast, "both start from __init_single_page's count"


def test_provenance_of_a_copied_field_names_the_template() -> None:
    """A tail past tail 1 is a copy: its chain goes through the tail template, seeded from
    tail 1 (issue 5: "copied from the tail template, which was seeded at tail 1")."""
    res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
                            mutant="mutant_tail_keeps_type_refcount", obligation="tail_equal"))
    (ob,) = [o for o in res.obligations if o.kind == "page"]
    assert ob.counterexample is not None
    (fast,) = ob.counterexample.diffs[0].fast_provenance
    assert fast[-2:] == ("tail 1 taken as the tail template", "memcpy from the tail template")


class TestConfigMakesItReal:
    """The refresh exists for layouts with pfn-dependent fields: there, skipping it is a bug
    with a counterexample crossing a section boundary; on real kernels it is harmless."""

    def test_section_bits_counterexample_crosses_a_section(self) -> None:
        """Hypothetical section-in-flags: the copied head sits in another section than the seed."""
        res = run_cell(CellSpec(config="x86_64-section-in-flags", revision="v11", ptype=MemoryType.GENERIC,
                                order=0, mutant="mutant_no_section_refresh"))
        cx = next(o.counterexample for o in res.obligations if o.counterexample)
        assert cx is not None and cx.pfn is not None and cx.seed_pfn is not None
        assert cx.pfn >> cx.section_shift != cx.seed_pfn >> cx.section_shift
        assert any("flags" in d.fields for d in cx.diffs)

    def test_virtual_counterexample(self) -> None:
        """Hypothetical WANT_PAGE_VIRTUAL: `virtual` differs when the refresh is skipped."""
        res = run_cell(CellSpec(config="x86_64-want-page-virtual", revision="v11", ptype=MemoryType.FS_DAX,
                                order=2, mutant="mutant_no_virtual_refresh"))
        assert res.verdict is Verdict.REFUTED

    @pytest.mark.parametrize("config", ["x86_64-default", "x86_64-maxsmp", "x86_64-kmsan",
                                        "arm64-4k-kasan-sw", "arm64-64k", "arm64-cpupid-outside"])
    def test_skipping_the_refresh_is_harmless_on_real_presets(self, config: str) -> None:
        """No refresh at all is PROVED equivalent on every real preset."""
        for order in (0, 3):
            res = run_cell(CellSpec(config=config, revision="v11", ptype=MemoryType.GENERIC, order=order,
                                    mutant="harmless_no_refresh_real"))
            assert res.verdict is Verdict.PROVED, (config, order)


class TestNewControls:
    """Where the new controls are caught, and why the equivalent ones stay proved elsewhere."""

    def test_no_prep_compound_head_is_caught_on_the_folio_overlay(self) -> None:
        """Order 2: page[1]'s folio fields and page[2]'s _deferred_list, under folio names."""
        res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.FS_DAX, order=2,
                                mutant="mutant_no_prep_compound_head"))
        by_role = {o.role: {n for d in o.counterexample.diffs for n in d.fields}
                   for o in res.obligations if o.counterexample}
        assert {"folio._large_mapcount", "folio._flags_1"} <= by_role["tail1"]
        assert "folio._deferred_list.next" in by_role["tail2"]
        assert set(by_role) == {"tail1", "tail2"}

    def test_heads_loop_past_end_is_caught_outside_the_range(self) -> None:
        """`pfn <= end_pfn` writes the compound after the range: the heads loop's frame-bound
        lemma and the outside role are REFUTED, both replayed, on a struct page of that
        compound; no page of the range differs."""
        res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=3,
                                mutant="mutant_heads_loop_one_past_end"))
        refuted = [o for o in res.obligations if o.verdict is Verdict.REFUTED]
        assert [o.name for o in refuted] == ["memmap_init_zone_device.template_heads:frame-bound",
                                             "outside_equal"]
        assert all(o.counterexample is not None and o.counterexample.role == "outside"
                   for o in refuted)

    def test_tail_refresh_off_by_one_is_a_bug_with_section_bits(self) -> None:
        """Hypothetical section-in-flags: pfn + 1 of the last tail lies in the next section."""
        res = run_cell(CellSpec(config="x86_64-section-in-flags", revision="v11", ptype=MemoryType.GENERIC,
                                order=2, mutant="harmless_tail_refresh_off_by_one"))
        assert res.verdict is Verdict.REFUTED

    @pytest.mark.parametrize("config", ["x86_64-want-page-virtual", "x86_64-section-in-flags",
                                        "x86_64-kmsan", "arm64-4k-kasan-sw", "arm64-cpupid-outside"])
    def test_tail1_from_template_is_equivalent_on_other_presets(self, config: str) -> None:
        """The refresh redoes the only pfn-dependent fields: equivalent on every layout."""
        res = run_cell(CellSpec(config=config, revision="v11", ptype=MemoryType.GENERIC, order=3,
                                mutant="harmless_tail1_from_template"))
        assert res.verdict is Verdict.PROVED


# ---- the self-test -------------------------------------------------------------------------


def _cell(verdict: Verdict, *names: str) -> CellResult:
    """A synthetic cell result whose one counterexample (if any) reports ``names``."""
    cx = None
    if names:
        cx = Counterexample("head", {}, {"c": 1, "t": 0}, 1, {},
                            (FieldDiff(0, 8, names, 0, 1, (("slow",),), (("fast",),)),),
                            InitialMemory((), 0, (), 0))
    ob = ObligationResult(name="head_equal", kind="page", role="head", verdict=verdict, seconds=0.0,
                          counterexample=cx)
    return CellResult(config="x86_64-default", revision="v11", ptype="GENERIC", order=0,
                      verdict=verdict, seconds=0.0, obligations=(ob,), assumptions=(), choices=(),
                      hypothetical=False)


@pytest.mark.parametrize(("expected", "equivalent", "res", "outcome"), [
    (("flags",), False, _cell(Verdict.REFUTED, "flags", "folio._flags_1"), Outcome.KILLED),
    (("mapping",), False, _cell(Verdict.REFUTED, "flags"), Outcome.WRONG_FIELD),
    (("flags",), False, _cell(Verdict.PROVED), Outcome.SURVIVED),
    (("flags",), False, _cell(Verdict.UNKNOWN), Outcome.SURVIVED),
    (None, False, _cell(Verdict.PROVED), Outcome.NOT_APPLICABLE),
    (None, False, _cell(Verdict.REFUTED, "flags"), Outcome.FALSE_REPORT),
    (None, True, _cell(Verdict.PROVED), Outcome.OK),
    (None, True, _cell(Verdict.REFUTED, "flags"), Outcome.FALSE_REPORT),
    (None, True, _cell(Verdict.UNKNOWN), Outcome.FALSE_REPORT),
], ids=["killed", "wrong-field", "survived", "survived-unknown", "not-applicable",
        "bug-refuted-where-harmless", "ok", "false-report", "false-report-unknown"])
def test_classify(expected: tuple[str, ...] | None, equivalent: bool, res: CellResult,
                  outcome: Outcome) -> None:
    """Each cell outcome of the kill matrix, from the verdict and the reported fields."""
    assert classify(expected, equivalent, res)[0] is outcome


def test_self_test_on_a_reduced_set() -> None:
    """Two bugs and a control on two cells: codes, kill rate and the rendered matrix."""
    names = ["mutant_no_prep_compound_head", "mutant_heads_loop_one_short",
             "harmless_set_head_after_tails"]
    res = self_test(jobs=1, names=names, cells=[(MemoryType.GENERIC, 0), (MemoryType.GENERIC, 2)])
    codes = {r.name: [c.outcome.value for c in r.cells] for r in res.rows}
    assert codes == {"mutant_no_prep_compound_head": ["-", "K"],
                     "mutant_heads_loop_one_short": ["K", "K"],
                     "harmless_set_head_after_tails": ["ok", "ok"]}
    assert res.ok and res.kill_rate == 1.0 and len(res.killed) == 2 and len(res.controls) == 1
    text = render_selftest(res)
    assert text.splitlines()[:2] == ["mutant [config]: result", "  GENERIC/0  GENERIC/2"]
    killed_on = text.split("killed on (the expected names its counterexamples report):\n")[1]
    assert "  mutant_no_prep_compound_head: " in killed_on and "(1 cell)" in killed_on
    assert "harmless_set_head_after_tails" not in killed_on
    assert text.rstrip().endswith("self-test: 2 mutants killed of 2 (100%), "
                                  "1 equivalent controls not reported (0 false reports)")


def test_a_caught_bug_stops_its_cell_with_the_same_outcome() -> None:
    """The self-test stops a bug's cell at the first obligation that catches it with a field
    it must name (``until_caught``): the obligations decided are the whole cell's first ones,
    with the same verdicts, and the outcome is the same KILLED.  A cell where the bug must not
    show (and every cell of an equivalent control) has nothing to stop at: checked whole.
    The cache keeps the two kinds of cell apart."""
    name, ptype, order = "mutant_heads_loop_one_short", MemoryType.GENERIC, 2
    spec = CellSpec(config=MUTANTS[name].config, revision="v11", ptype=ptype, order=order, mutant=name,
                    minimise=False)
    whole, early = run_cell(spec), run_cell(evolve(spec, until_caught=True))
    n = len(early.obligations)
    assert 0 < n < len(whole.obligations)
    assert [(o.name, o.verdict) for o in early.obligations] == \
        [(o.name, o.verdict) for o in whole.obligations[:n]]
    want = MUTANTS[name].expect(ptype, order)
    assert classify(want, False, early)[0] is classify(want, False, whole)[0] is Outcome.KILLED
    assert spec.description() != evolve(spec, until_caught=True).description()
    assert MUTANTS["mutant_tail_copy_to_next_page"].expect(MemoryType.GENERIC, 0) is None
    assert caught("mutant_tail_copy_to_next_page", MemoryType.GENERIC, 0) is None
    assert caught("harmless_set_head_after_tails", MemoryType.GENERIC, 2) is None


def test_a_self_test_group_with_an_expected_kill_skips_the_all_types_try(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two types of one order: the all-types try (pgmap->type symbolic, kept only if it
    proves everything) is skipped when the self-test expects the bug to show on one of
    them, and made otherwise; the per-type verdicts are the same."""
    import equiv.zone_device.cell

    calls: list[tuple[MemoryType | None, bool]] = []
    real = equiv.zone_device.cell.run_cell

    def spy(spec: CellSpec, *, probe: bool = False,
            lemmas_from: CellResult | None = None) -> CellResult:
        calls.append((spec.ptype, probe))
        return real(spec, probe=probe, lemmas_from=lemmas_from)

    monkeypatch.setattr(equiv.zone_device.cell, "run_cell", spy)
    name = "mutant_heads_loop_one_short"
    specs = [CellSpec(config=MUTANTS[name].config, revision="v11", ptype=t, order=2, mutant=name,
                      minimise=False, until_caught=True) for t in (MemoryType.FS_DAX, MemoryType.GENERIC)]
    early = equiv.zone_device.cell.run_group(specs)
    assert calls == [(MemoryType.FS_DAX, False), (MemoryType.GENERIC, False)]
    calls.clear()
    whole = equiv.zone_device.cell.run_group([evolve(sp, until_caught=False) for sp in specs])
    assert calls[0] == (None, True)
    assert [r.verdict for r in early] == [r.verdict for r in whole] == [Verdict.REFUTED] * 2


def test_render_names_failures() -> None:
    """A survived bug and a false report make the result not ok, and are spelled out."""
    g0 = ("GENERIC", 0)

    def row(name: str, eq: bool, outcome: Outcome, verdict: Verdict,
            want: tuple[str, ...] | None) -> MutantRow:
        return MutantRow(name, "x86_64-default", eq,
                         (CellOutcome(*g0, outcome, verdict, want, (), 0.0),))

    res = SelfTestResult((g0,), (
        row("mutant_a", False, Outcome.SURVIVED, Verdict.PROVED, ("flags",)),
        row("mutant_b", False, Outcome.KILLED, Verdict.REFUTED, ("flags",)),
        row("harmless_c", True, Outcome.FALSE_REPORT, Verdict.UNKNOWN, None)), 0.0, 1)
    assert not res.ok and res.kill_rate == 0.5
    assert [r.status for r in res.rows] == ["SURVIVED", "killed", "FALSE-REPORT"]
    lines = render_selftest(res).splitlines()
    assert "SURV mutant_a GENERIC/0: expected one of flags; got PROVED" in lines
    assert "FALSE harmless_c GENERIC/0: expected PROVED; got UNKNOWN" in lines
    assert lines[-1] == ("self-test: 1 mutants killed of 2 (50%), 0 equivalent controls not "
                         "reported (1 false reports); 1 survived cells; FAILED")


def test_self_test_rejects_unknown_mutants() -> None:
    """An unknown name is an input error listing the catalogue."""
    with pytest.raises(InputError, match="mutant_nonesuch"):
        self_test(jobs=1, names=["mutant_nonesuch"])


@pytest.mark.slow
def test_full_self_test() -> None:
    """Every bug in the catalogue is killed on its field, every control stays proved."""
    res = self_test()
    assert res.ok, render_selftest(res)
    assert len(res.bugs) >= 20 and res.kill_rate == 1.0
    assert res.count(Outcome.FALSE_REPORT) == 0
    assert "mutants killed of" in render_selftest(res).splitlines()[-1]


def test_first_roles_put_the_expected_page_first() -> None:
    """A seeded bug's cell checks first the roles its expected fields lie on (a folio field
    of page[1]: tail 1; of page[2]: tail 2) or, for a bug outside the range, ``outside``;
    nothing for a cell where it must not show or an equivalent control; and the cell still
    decides the same: killed with the field it must name (only fewer roles before it)."""
    from equiv.page_model import Layout
    from equiv.zone_device.mutants import first_roles

    L = Layout.from_config(PRESETS["x86_64-default"])
    assert first_roles("mutant_slow_count_before_init", MemoryType.GENERIC, 1, L) == ("tail1",)
    assert first_roles("mutant_prep_compound_head_before_tail_loop", MemoryType.GENERIC, 2,
                       L) == ("tail2",)
    assert first_roles("mutant_first_head_before_range", MemoryType.GENERIC, 2, L) == ("outside",)
    assert first_roles("mutant_slow_count_before_init", MemoryType.FS_DAX, 1, L) == ()
    assert first_roles("harmless_tail_loop_ne", MemoryType.GENERIC, 2, L) == ()
    spec = CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
                    mutant="mutant_prep_compound_head_before_tail_loop", minimise=False,
                    until_caught=True)
    res = run_cell(spec)
    pages = [o.role for o in res.obligations if o.kind == "page"]
    # tail 2 first (whether it alone catches the bug depends on the counterexample z3
    # gives, which may differ with what the process decided before)
    assert pages[0] == "tail2" and res.verdict is Verdict.REFUTED
    want = MUTANTS[spec.mutant or ""].expect(MemoryType.GENERIC, 2)
    assert classify(want, False, res)[0] is Outcome.KILLED

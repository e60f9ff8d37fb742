"""The page-table (vmap) subject's checker: verdicts on the unmodified revisions (the finding
pinned), vacuity, replayed counterexamples, every seeded bug killed on the right obligation,
the equivalent control not reported, and the benchmark script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import z3

from equiv.engine.errors import InputError
from equiv.engine.results import CellResult, ObligationResult
from equiv.engine.selftest import Outcome, SelfTestResult
from equiv.engine.verdict import Verdict
from equiv.vmap import MUTANTS, REVISIONS, VmapCounterexample, check
from equiv.vmap.cell import check_cell
from equiv.vmap.counterexample import replay
from equiv.vmap.mutants import apply
from equiv.vmap.selftest import CELLS, caught, first, self_test

ROOT = Path(__file__).resolve().parent.parent


def verdicts(r: CellResult) -> dict[str, Verdict]:
    return {o.name: o.verdict for o in r.obligations}


class TestUnmodified:
    def test_ioremap_proved(self) -> None:
        """ioremap on v8: every obligation and lemma proved (one contiguous range, any length)."""
        r = check("ioremap", 1, "v8")
        assert r.verdict is Verdict.PROVED, verdicts(r)
        assert r.config == "arm64-4k" and r.ptype == "ioremap" and r.order == 1
        assert any("pud_sect_supported" in c for c in r.choices)

    def test_vmalloc_proved(self) -> None:
        """vmalloc on v8 with up to 2 chunks: proved, e_enc (bit-identical entries) included."""
        r = check("vmalloc", 2, "v8")
        assert r.verdict is Verdict.PROVED, verdicts(r)
        assert verdicts(r)["e_enc"] is Verdict.PROVED

    @pytest.mark.slow
    def test_vmap_finding_is_pinned(self) -> None:
        """vmap on v8 (and mm-c1) is refuted on e_trans only: the multi-CONT step crosses from
        one run of a batch into the next (docs/findings/vmap-multi-cont-crosses-runs.md)."""
        for rev in ("v8", "mm-c1"):
            r = check("vmap", 2, rev)
            bad = {n for n, v in verdicts(r).items() if v is not Verdict.PROVED}
            assert bad == {"e_trans"}, (rev, verdicts(r))
            cx = next(o.counterexample for o in r.obligations if o.name == "e_trans")
            assert isinstance(cx, VmapCounterexample) and not cx.ub
            assert cx.fast is not None and cx.fast.cont and cx.fast.pfn != cx.expected_pfn
            assert replay(cx.case, REVISIONS[rev], "e_trans").violations  # it replays

    @pytest.mark.slow
    def test_vmap_fix_proved(self) -> None:
        """v8 with the proposed fix: every vmap obligation proved at bound 3."""
        r = check("vmap", 3, "v8-fix")
        assert r.verdict is Verdict.PROVED, verdicts(r)


class TestDiscipline:
    def test_contradictory_assumptions_are_vacuous(self) -> None:
        """Assumptions that cannot hold make every obligation VACUOUS, never PROVED."""
        r = check_cell(
            "ioremap", 1, REVISIONS["v8"], extra=lambda inp: [("contradiction", z3.ULT(inp.count, 1))]
        )
        assert r.verdict is Verdict.VACUOUS
        assert all(o.verdict is Verdict.VACUOUS for o in r.obligations)

    def test_bad_input_is_an_input_error(self) -> None:
        """Unknown paths, revisions, mutants and bounds below 1 are InputErrors."""
        for args in (
            ("vmapp", 1, "v8", None),
            ("vmap", 0, "v8", None),
            ("vmap", 1, "v9", None),
            ("vmap", 1, "v8", "mutant_nope"),
        ):
            with pytest.raises(InputError):
                check(*args)  # type: ignore[arg-type]

    def test_timeout_is_unknown_never_proved(self) -> None:
        """A query that runs out of time is UNKNOWN (a 1 ms budget)."""
        r = check("vmalloc", 2, "v8", None, 1, None)
        assert r.verdict is not Verdict.PROVED


class TestUntilCaught:
    """The self-test stops a bug's cell once it is caught (:func:`equiv.vmap.selftest.caught`)."""

    @staticmethod
    def _ob(name: str, verdict: Verdict) -> ObligationResult:
        return ObligationResult(name=name, kind="page", role=name, verdict=verdict, seconds=0.0)

    def test_it_waits_for_every_obligation_that_must_not_be_reported(self) -> None:
        """M7 (UB only): its expected ub_ffs0 stops the cell only once e_trans, wf_block and
        frame were decided unrefuted; a refuted one of those never stops it (the cell then
        says all of its WRONG_FIELD).  No stop where a bug must not show, nor for the
        equivalent controls."""
        m7 = MUTANTS["mutant_no_pfn0_guard"]
        enough = caught(m7, "vmap")
        assert enough is not None
        assert not enough(self._ob("ub_ffs0", Verdict.REFUTED))
        for name in ("e_trans", "wf_block"):
            assert not enough(self._ob(name, Verdict.PROVED))
        assert not enough(self._ob("frame", Verdict.PROVED))
        assert enough(self._ob("ub_ffs0", Verdict.REFUTED))
        again = caught(m7, "vmap")
        assert again is not None and not again(self._ob("e_trans", Verdict.REFUTED))
        assert caught(m7, "ioremap") is None
        assert caught(MUTANTS["harmless_no_vm_shift_filter"], "vmap") is None

    def test_a_caught_cell_is_the_whole_cells_first_obligations(self) -> None:
        """X2 on vmalloc stops at errors_agree, REFUTED: the obligations decided are the
        whole cell's first ones with the same verdicts, and the outcome is the same KILLED."""
        from equiv.vmap.cell import resolve
        from equiv.vmap.selftest import classify

        m = MUTANTS["mutant_pte_alloc_before_pmd"]
        rev = resolve("v8-fix", m.name)
        whole = check_cell("vmalloc", 2, rev, m.name)
        early = check_cell("vmalloc", 2, rev, m.name, enough=caught(m, "vmalloc"))
        n = len(early.obligations)
        assert early.obligations[-1].name == "errors_agree" and n < len(whole.obligations)
        assert verdicts(early) == {o.name: o.verdict for o in whole.obligations[:n]}
        assert classify(m, "vmalloc", early)[0] is classify(m, "vmalloc", whole)[0] \
            is Outcome.KILLED
        # as the self-test runs it: its expected obligation first, then stopped
        soon = check_cell("vmalloc", 2, rev, m.name, enough=caught(m, "vmalloc"),
                          first=first(m, "vmalloc"))
        assert first(m, "vmalloc") == ("errors_agree",)
        assert len(soon.obligations) < n and soon.obligations[-1].name == "errors_agree"
        assert verdicts(soon).items() <= verdicts(whole).items()
        assert classify(m, "vmalloc", soon)[0] is Outcome.KILLED


@pytest.fixture(scope="module")
def kill_matrix() -> SelfTestResult:
    """The vmap self-test, run while two busy loops occupy both cores: its verdicts must be
    the ones a quiet machine gives (every query's budget is deterministic, issue 17: with a
    wall-clock limit M1 on vmap came out UNKNOWN under load)."""
    from test_query_budget import busy_cores

    with busy_cores(2):
        return self_test(2)


@pytest.mark.slow
class TestSelfTest:
    def test_every_bug_killed_no_false_report(self, kill_matrix: SelfTestResult) -> None:
        """M1-M7 and X1-X5 killed, M8 and X6 (the equivalent controls) not reported, on every
        cell."""
        assert kill_matrix.ok, kill_matrix.render()
        assert len(kill_matrix.killed) == 12 and kill_matrix.count(Outcome.FALSE_REPORT) == 0
        assert kill_matrix.cells == CELLS

    @pytest.mark.parametrize("name", [n for n, m in MUTANTS.items() if not m.equivalent])
    def test_killed_on_the_right_obligation(self, kill_matrix: SelfTestResult, name: str) -> None:
        """Each bug is refuted on one of its expected obligations, where it can show."""
        row = next(r for r in kill_matrix.rows if r.name.endswith(name))
        assert row.killed, row
        m = MUTANTS[name]
        for c in row.cells:
            want = m.expected(c.ptype)
            if want is not None:
                assert set(want) & set(c.reported) and not set(m.not_reported) & set(c.reported), c

    def test_m6_only_wf_block_on_ioremap(self) -> None:
        """M6 on ioremap: the CONT group is misaligned (wf_block), E-trans still holds (the
        whole cell: the self-test's stops once wf_block is refuted)."""
        got = verdicts(check("ioremap", 1, "v8-fix", "mutant_no_cont_pfn_guard"))
        assert got["wf_block"] is Verdict.REFUTED and got["e_trans"] is Verdict.PROVED

    def test_m7_is_reported_as_undefined_behaviour(self, kill_matrix: SelfTestResult) -> None:
        """M7: __ffs(0) is reported as UB (ub_ffs0), not as a translation difference."""
        row = next(r for r in kill_matrix.rows if r.name.startswith("M7"))
        cell = next(c for c in row.cells if c.ptype == "vmap")
        assert cell.reported == ("ub_ffs0",)

    def test_m7_counterexample_is_flagged_ub(self) -> None:
        """The M7 counterexample says undefined behaviour and names pfn 0."""
        r = check("vmap", 2, "v8-fix", "mutant_no_pfn0_guard")
        ob = next(o for o in r.obligations if o.name == "ub_ffs0")
        assert ob.verdict is Verdict.REFUTED and ob.reason == "undefined behaviour"
        cx = ob.counterexample
        assert isinstance(cx, VmapCounterexample) and cx.ub and 0 in cx.case.pfns()


@pytest.mark.parametrize(
    ("name", "path", "bound", "obligation"),
    [
        ("mutant_max_steps_past_end", "vmap", 3, "index_bound"),
        ("mutant_pte_alloc_before_pmd", "vmalloc", 2, "errors_agree"),
    ],
)
def test_own_controls_refute_their_obligation(name: str, path: str, bound: int, obligation: str) -> None:
    """X1 / X2 (equiv's own controls) are refuted on the obligation no M1-M8 refutes, by a
    counterexample replayed on the twin."""
    r = check(path, bound, "v8-fix", name)
    ob = next(o for o in r.obligations if o.name == obligation)
    assert ob.verdict is Verdict.REFUTED, verdicts(r)
    assert isinstance(ob.counterexample, VmapCounterexample)


def test_m2_on_ioremap_is_refuted_on_every_obligation_it_shows_on() -> None:
    """M2 (``1UL << fls(size)``) on ioremap, every obligation decided (the command line's
    run, not the self-test's stopped one): REFUTED on its expected obligations and on
    wf_block (a CONT step past the range's end, in the first pmd slot), each by a
    counterexample that replays; no internal error (the exact model's wf_block
    counterexample lay in a slot the run never gets to, after a PTE loop that never ends)."""
    r = check("ioremap", 2, "v8", "mutant_fls_not_fls")
    refuted = {o.name: o for o in r.obligations if o.verdict is Verdict.REFUTED}
    want = MUTANTS["mutant_fls_not_fls"].expected("ioremap") or ()
    assert r.verdict is Verdict.REFUTED and set(want) & set(refuted), verdicts(r)
    assert "wf_block" in refuted, verdicts(r)
    rev = apply(REVISIONS["v8"], "mutant_fls_not_fls")
    for name, ob in refuted.items():
        assert isinstance(ob.counterexample, VmapCounterexample)
        assert replay(ob.counterexample.case, rev, name).violations, name


@pytest.mark.slow
def test_bench_prints_the_figures() -> None:
    """bench/vmap.py prints the exhaustive segment-shape check and the reach (small here)."""
    p = subprocess.run(
        [sys.executable, "bench/vmap.py", "--bound", "2", "--max-bound", "2", "--budget", "30",
         "--no-any", "--no-self-test"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "exhaustive segment shapes, bound 2: 110 shapes" in p.stdout
    assert "target < 60 s on 2 cores: met" in p.stdout
    assert "the bound reaches 2 segments" in p.stdout


#: (seeded bug, path, bound, lemma): a loop lemma of the local model that the bug breaks.
#: A lemma that fails leaves what rests on it UNKNOWN, never PROVED.
BROKEN_LEMMAS = [
    ("mutant_fls_not_fls", "ioremap", 1, "hook_tiles"),
    ("mutant_no_pfn_align_clamp", "vmap", 3, "batch_order_run"),
    ("mutant_batch_step_by_shift", "vmap", 3, "batch_lock_step"),
    ("mutant_batch_step_by_shift", "vmap", 3, "batch_runs"),
    ("mutant_batch_step_by_shift", "vmap", 2, "batch_walks_inside"),
    ("mutant_final_walk_to_batch_end", "vmap", 1, "batch_walks_tile"),
    ("mutant_flush_to_batch_end", "vmap", 1, "batch_flush_covers"),
    ("mutant_flush_from_map_addr", "vmap", 2, "batch_flush_covers"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("mutant", "path", "bound", "lemma"), BROKEN_LEMMAS)
def test_lemmas_can_fail(mutant: str, path: str, bound: int, lemma: str) -> None:
    """The lemmas the local model's facts rest on are real checks: a seeded bug that breaks
    the loop shape they describe makes them fail (not PROVED), with a reason."""
    r = check(path, bound, "v8-fix", mutant)
    ob = next(o for o in r.obligations if o.name == lemma)
    assert ob.kind == "lemma" and ob.verdict is Verdict.UNKNOWN and ob.reason
    assert r.verdict is not Verdict.PROVED

"""Second opinions: cvc5 and Bitwuzla decide the same SMT-LIB queries as z3."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import z3

from equiv.engine import query as check
from equiv.engine import solvers
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.proofs import main
from equiv.zone_device.cell import CellSpec, run_cell


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


@pytest.mark.parametrize("solver", [pytest.param("cvc5", marks=pytest.mark.slow), "bitwuzla",
                                    pytest.param("all", marks=pytest.mark.slow)])
def test_small_matrix_proved_by_each_solver(solver: str) -> None:
    """Orders 0-3 of the default matrix are proved by cvc5, by Bitwuzla and by all three."""
    code, out, _ = run("--solver", solver, "--orders", "0-3", "--jobs", "1")
    assert code == 0, out[-1500:]


@pytest.mark.parametrize("mutant", [pytest.param("mutant_short_copy", marks=pytest.mark.slow),
                                    "mutant_tail_keeps_type_refcount",
                                    pytest.param("harmless_head_snapshot_after_compound",
                                                 marks=pytest.mark.slow)])
def test_solvers_agree_on_controls(mutant: str) -> None:
    """All three solvers agree on refuted and on harmless controls (no disagreement)."""
    res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
                            mutant=mutant, solver="all"))
    alone = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
                              mutant=mutant))
    assert res.verdict is alone.verdict
    assert all("disagree" not in o.reason for o in res.obligations)


def test_disagreement_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """If another solver contradicts z3 the obligation is UNKNOWN, naming who said what."""
    monkeypatch.setattr(check, "decide", lambda name, terms, t: "sat")
    check.clear_answers()
    res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=1,
                            solver="all"))
    assert res.verdict is Verdict.UNKNOWN
    assert any("solvers disagree: z3 unsat, cvc5 sat, bitwuzla sat" in o.reason
               for o in res.obligations)
    check.clear_answers()


def test_dump_smt_writes_rerunnable_queries(tmp_path: Path) -> None:
    """--dump-smt writes one SMT-LIB file per query; each is unsat for a proved cell."""
    code, _, _ = run("--types", "GENERIC", "--orders", "2", "--dump-smt", str(tmp_path),
                     "--jobs", "1")
    assert code == 0
    files = sorted(tmp_path.glob("*.smt2"))
    names = {f.name.split("-o2-")[1] for f in files}
    assert {"lemmas.smt2", "role-head.smt2", "role-tail.smt2", "vacuity-head.smt2"} <= names
    from equiv.engine.solvers import check_bitwuzla

    for f in files:
        text = f.read_text().replace("(check-sat)\n", "")
        want = "sat" if ("vacuity" in f.name or "reach" in f.name) else "unsat"
        assert check_bitwuzla(text, 60_000) == want, f.name


def test_unknown_solver_is_input_error() -> None:
    """A solver name that is not offered: exit 3 listing the valid ones."""
    code, _, err = run("--solver", "yices")
    assert code == 3 and "valid: z3, cvc5, bitwuzla, all" in err


@pytest.mark.slow
def test_three_solvers_agree_on_default_matrix() -> None:
    """The whole default matrix: z3, cvc5 and Bitwuzla decide every query alike."""
    code, out, _ = run("--solver", "all", "--no-times")
    assert code == 0, out[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", sorted(__import__("equiv.zone_device.mutants", fromlist=["MUTANTS"]).MUTANTS))
def test_three_solvers_agree_on_every_mutant(name: str) -> None:
    """Each seeded-bug control gets the same verdict from z3 alone and from all three solvers
    together (a disagreement would be UNKNOWN)."""
    from equiv.zone_device.mutants import MUTANTS

    m = MUTANTS[name]
    alone = run_cell(CellSpec(config=m.config, revision="v11", ptype=MemoryType.GENERIC, order=2,
                              mutant=name))
    together = run_cell(CellSpec(config=m.config, revision="v11", ptype=MemoryType.GENERIC, order=2,
                                 mutant=name, solver="all"))
    assert together.verdict is alone.verdict
    assert all("solvers disagree" not in o.reason for o in together.obligations)


class TestFirstUnsat:
    """solvers.first_unsat: the second solver the C path's loop lemmas ask first."""

    x = z3.BitVec("x", 64)

    def test_an_unsatisfiable_query_is_proved(self) -> None:
        assert solvers.first_unsat([z3.ULT(self.x, 5), z3.Not(z3.ULT(self.x, 6))], 10_000)

    def test_a_satisfiable_query_is_not(self) -> None:
        """Seeded bug: x < 5 does not imply x < 4; Bitwuzla's SAT is no proof (z3 then
        gives the model)."""
        assert not solvers.first_unsat([z3.ULT(self.x, 5), z3.Not(z3.ULT(self.x, 4))], 10_000)

    def test_no_first_solver_asks_nothing(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(solvers, "FIRST_SOLVER", None)
        monkeypatch.setattr(solvers, "decide", lambda *a: pytest.fail("asked"))
        assert not solvers.first_unsat([z3.BoolVal(False)], 10_000)

    def test_a_query_it_cannot_read_goes_to_z3(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def unreadable(*_a: object) -> str:
            raise RuntimeError("parse error")

        monkeypatch.setattr(solvers, "decide", unreadable)
        assert not solvers.first_unsat([z3.BoolVal(False)], 10_000)

    def test_a_failing_lemma_fails_with_or_without_it(self, monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
        """A loop lemma whose conjunct does not hold: not proved with Bitwuzla asked first
        (z3 then names it), nor with z3 alone; one that holds is proved either way."""
        from equiv.loops import Lemma
        from equiv.zone_device.source.clemmas import ALONE_FAILED, prove_lemmas

        k, n = z3.BitVecs("k n", 64)
        bad = Lemma("loop", "no-wrap", z3.ULT(k, n), z3.ULT(k + 1, n))
        good = Lemma("loop", "no-wrap", z3.And(z3.ULT(k, n), z3.ULE(n, 100)), z3.ULE(k, k + 1))
        for first in ("bitwuzla", None):
            monkeypatch.setattr(solvers, "FIRST_SOLVER", first)
            ALONE_FAILED.clear()
            assert prove_lemmas([bad], [], 10_000).why.startswith("loop lemma no-wrap of loop")
            assert prove_lemmas([good], [], 10_000).why == ""


class TestLinuxSolverOption:
    """--solver with --linux chooses the C path's second solver (solvers.FIRST_SOLVER)."""

    def test_an_unoffered_solver_is_one_line_and_exit_3(self, tmp_path: Path) -> None:
        code, out, err = run("--linux", str(tmp_path), "--solver", "cvc5", "--orders", "0")
        assert code == 3 and out == ""
        assert err.strip().splitlines() == [
            "equiv: error: --solver 'cvc5' with --linux; valid: bitwuzla (the default: "
            "Bitwuzla first where z3 is slow, then z3); z3 (z3 alone)"]

    @pytest.mark.parametrize(("given", "first"), [(None, "bitwuzla"), ("bitwuzla", "bitwuzla"),
                                                   ("z3", None)])
    def test_the_choice_sets_the_second_solver(self, monkeypatch: pytest.MonkeyPatch,
                                               given: str | None, first: str | None) -> None:
        import argparse

        from equiv.zone_device.source.cli import second_solver
        from equiv.zone_device.source.patch_present import lemma_solvers

        monkeypatch.setattr(solvers, "FIRST_SOLVER", "bitwuzla")
        second_solver(argparse.Namespace(solver=given))
        assert solvers.FIRST_SOLVER == first
        assert lemma_solvers().startswith("each conjunct by " + ("bitwuzla" if first else "z3"))

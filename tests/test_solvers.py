"""Second opinions: cvc5 and Bitwuzla decide the same SMT-LIB queries as z3."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from equiv.engine import query as check
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

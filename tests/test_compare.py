"""Slow-path variants against the base: refactors claimed 'no functional change', and v6.12."""

from __future__ import annotations

import io

import pytest

from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.proofs import main
from equiv.slow_variants import COMPARISONS
from equiv.zone_device.cell import COMPARE, CellSpec, run_cell


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", [n for n, c in COMPARISONS.items() if c.claim == "no functional change"])
@pytest.mark.parametrize("config", ["x86_64-default", "x86_64-section-in-flags", "arm64-4k-kasan-sw",
                                    "x86_64-want-page-virtual"])
def test_no_functional_change(name: str, config: str) -> None:
    """The v5 helper split and the set_page_section_from_pfn refactor change nothing."""
    code, out, _ = run("--compare", name, "--config", config, "--orders", "0-3,9", "--jobs", "1")
    assert code == 0, out[-1500:]


def test_v612_differs_where_history_says() -> None:
    """v6.12 vs v7.3: FS_DAX heads keep refcount 1; at order >= 2 tail 2 re-initialisation
    clobbers the _deferred_list that prep_compound_head (inside the loop) had set."""
    head = run_cell(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12", ptype=MemoryType.FS_DAX,
                             order=0, solver="bitwuzla"))
    refuted = {o.role: o for o in head.obligations if o.verdict is Verdict.REFUTED}
    assert "head" in refuted and refuted["head"].counterexample is not None
    assert refuted["head"].counterexample.diffs[0].names[0] == "_refcount"
    tails = run_cell(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12", ptype=MemoryType.PRIVATE,
                              order=2, solver="bitwuzla"))
    tail2 = next(o for o in tails.obligations if o.role == "tail2")
    assert tail2.verdict is Verdict.REFUTED and tail2.counterexample is not None
    names = {n for d in tail2.counterexample.diffs for n in d.fields}
    assert "folio._deferred_list.next" in names
    # the pageblock obligation can fail too: 6.12 set migratetypes per page
    pageblock = next(o for o in tails.obligations if o.role == "pageblock")
    assert pageblock.verdict is Verdict.REFUTED


def test_unknown_comparison_is_input_error() -> None:
    """--compare with a name that does not exist lists the valid ones."""
    code, _, err = run("--compare", "v4.19")
    assert code == 3 and "valid: v5-helper-split, pre-section-helper, " in err and "v6.12" in err


def test_self_test_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """--self-test prints the kill matrix and exits 0 when every bug is killed (run here on
    two controls; the whole catalogue is tests/test_mutants.py::test_full_self_test)."""
    import equiv.zone_device.selftest

    whole = equiv.zone_device.selftest.self_test
    # the subject's self_test imports equiv.zone_device.selftest.self_test when called: patch it there
    # (patching equiv.zone_device.cli.self_test does not reach the registered subject, and
    # the whole catalogue ran here, five minutes)
    monkeypatch.setattr(equiv.zone_device.selftest, "self_test", lambda jobs, **_kw: whole(
        jobs, names=["mutant_short_copy", "harmless_head_snapshot_after_compound"]))
    code, out, _ = run("--self-test")
    assert code == 0, out
    assert "(100%)" in out and "0 false reports" in out

"""The zone-device self-test through the result cache: warm runs are served from it with
the same kill matrix, a changed mutant is never served stale, and ``--self-test`` honours
``--cache-dir`` and ``--no-cache`` (issues 17 and 18)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from attrs import evolve

import equiv.zone_device.selftest
from equiv.engine.cache import Cache
from equiv.engine.selftest import MutantRow, Outcome, SelfTestResult, describe_edit
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.proofs import main
from equiv.zone_device.cell import CellSpec, run_matrix
from equiv.zone_device.mutants import MUTANTS
from equiv.zone_device.selftest import self_test

#: one bug and one equivalent control, on one cheap cell
NAMES = ["mutant_heads_loop_one_short", "harmless_heads_loop_from_first"]
#: a bug whose cell is REFUTED with UNKNOWN obligations beside (the head's proof rests on
#: a refuted loop lemma): every query decided, so it is cached too
UNKNOWN_BESIDE = "mutant_heads_loop_one_past_end"
CELLS = [(MemoryType.GENERIC, 0)]


def _matrix(res: SelfTestResult) -> list[tuple[str, list[tuple[Outcome, str, tuple[str, ...]]]]]:
    """The kill matrix without the times: per mutant, each cell's outcome, verdict and the
    names its counterexamples report."""
    def cells(r: MutantRow) -> list[tuple[Outcome, str, tuple[str, ...]]]:
        return [(c.outcome, c.verdict.value, c.reported) for c in r.cells]

    return [(r.name, cells(r)) for r in res.rows]


class TestSelfTestCache:
    def test_a_warm_self_test_is_served_from_the_cache_with_the_same_kill_matrix(
            self, tmp_path: Path) -> None:
        """The second run decides nothing: every cell comes from the cache, and the kill
        matrix is the first run's."""
        cold_cache = Cache(str(tmp_path))
        cold = self_test(1, names=NAMES, cells=CELLS, cache=cold_cache)
        assert cold_cache.stores["cell"] == len(NAMES) * len(CELLS)
        warm_cache = Cache(str(tmp_path))
        warm = self_test(1, names=NAMES, cells=CELLS, cache=warm_cache)
        assert warm_cache.hits["cell"] == len(NAMES) * len(CELLS)
        assert warm_cache.stores["cell"] == 0
        assert _matrix(warm) == _matrix(cold)
        assert [r.status for r in warm.rows] == ["killed", "equivalent"] and warm.ok

    def test_a_cell_with_derived_unknowns_is_cached(self, tmp_path: Path) -> None:
        """A seeded-bug cell whose UNKNOWN obligations follow from decided queries (a
        refuted loop lemma) is stored, and served warm with the same verdicts; they are
        not promoted by the cache.  (Checked on the whole cell: the self-test's own cell
        stops once the bug is caught, before those obligations.)"""
        ((ptype, order),) = CELLS
        spec = CellSpec(config=MUTANTS[UNKNOWN_BESIDE].config, revision="v11", ptype=ptype,
                        order=order, mutant=UNKNOWN_BESIDE, minimise=False)
        [cold], _, _ = run_matrix([spec], 1, cache=Cache(str(tmp_path)))
        assert cold.verdict is Verdict.REFUTED
        [entry] = (tmp_path / "cell").rglob("*.json")
        stored = json.loads(entry.read_text())["payload"]["obligations"]
        assert "UNKNOWN" in {o["verdict"] for o in stored}
        warm_cache = Cache(str(tmp_path))
        [warm], _, _ = run_matrix([spec], 1, cache=warm_cache)
        assert warm_cache.hits["cell"] == 1
        assert [(o.name, o.verdict) for o in warm.obligations] == \
            [(o.name, o.verdict) for o in cold.obligations]
        early = self_test(1, names=[UNKNOWN_BESIDE], cells=CELLS, cache=Cache(str(tmp_path)))
        assert early.rows[0].cells[0].outcome is Outcome.KILLED

    def test_a_changed_mutant_is_not_served_stale(self, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
        """The same mutant name with another edit (here: none, so the bug is gone) is
        checked again, not answered with the killed cell of the old edit."""
        name = NAMES[0]
        first = self_test(1, names=[name], cells=CELLS, cache=Cache(str(tmp_path)))
        assert first.rows[0].cells[0].outcome is Outcome.KILLED
        monkeypatch.setitem(MUTANTS, name, evolve(MUTANTS[name], knobs={}))
        again_cache = Cache(str(tmp_path))
        again = self_test(1, names=[name], cells=CELLS, cache=again_cache)
        assert again_cache.hits["cell"] == 0
        assert again.rows[0].cells[0].outcome is Outcome.SURVIVED

    def test_the_edit_is_part_of_the_key(self) -> None:
        """Two edits that differ only in a knob's value, or in a function's code, differ as
        key data; the same edit is the same data."""
        def f(x: int) -> bool:
            return x in {1, 2}

        def g(x: int) -> bool:
            return x in {1, 3}

        assert describe_edit({"d": -1}) != describe_edit({"d": 1})
        assert describe_edit({"f": f})["f"]["code"] != describe_edit({"f": g})["f"]["code"]
        assert describe_edit(MUTANTS[NAMES[0]]) == describe_edit(MUTANTS[NAMES[0]])


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


class TestSelfTestCommandCache:
    @pytest.fixture(autouse=True)
    def _small(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The command on the two controls and one cell (the whole catalogue is a slow
        test)."""
        whole = equiv.zone_device.selftest.self_test
        monkeypatch.setattr(equiv.zone_device.selftest, "self_test", lambda jobs, **kw: whole(
            1, names=NAMES, cells=CELLS, **kw))

    def test_cache_dir_is_honoured(self, tmp_path: Path) -> None:
        """--self-test --cache-dir DIR stores its cells in DIR, and a second run prints the
        same kill matrix from there."""
        code, cold, _ = _run("--self-test", "--cache-dir", str(tmp_path))
        assert code == 0 and "(100%)" in cold
        cells = sorted((tmp_path / "cell").rglob("*.json"))
        assert len(cells) == 2
        stamps = [p.stat().st_mtime_ns for p in cells]
        code, warm, _ = _run("--self-test", "--cache-dir", str(tmp_path))
        assert code == 0 and warm == cold
        assert [p.stat().st_mtime_ns for p in cells] == stamps  # read, not written again

    def test_no_cache_writes_nothing(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                     ) -> None:
        """--self-test --no-cache neither reads nor writes the (default) cache."""
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        code, _, _ = _run("--self-test", "--no-cache")
        assert code == 0
        assert not list(tmp_path.rglob("*.json"))

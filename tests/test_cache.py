"""Issue 8: the result cache, the wall-clock backstop, and the Dask sweep."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest

from equiv.engine.cache import Cache, cell_key, query_key
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.proofs import main
from equiv.zone_device.cell import CellSpec, run_matrix

SMALL = ["--types", "GENERIC,FS_DAX", "--orders", "0-2", "--no-times", "--quiet"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def entries(root: Path, kind: str) -> list[Path]:
    return sorted((root / kind).rglob("*.json")) if (root / kind).exists() else []


class TestCache:
    def test_warm_run_is_the_cold_run(self, tmp_path: Path) -> None:
        cold = run(*SMALL, "--cache-dir", str(tmp_path))
        assert entries(tmp_path, "cell") and entries(tmp_path, "query")
        warm = run(*SMALL, "--cache-dir", str(tmp_path))
        assert warm == cold

    def test_cells_come_from_the_cache_only_when_warm(self, tmp_path: Path) -> None:
        specs = [CellSpec(config="x86_64-default", revision="v11", ptype=t, order=o) for o in (0, 1)
                 for t in (MemoryType.GENERIC, MemoryType.PRIVATE)]
        cold, _, _ = run_matrix(specs, 1, cache=Cache(str(tmp_path)))
        warm, _, _ = run_matrix(specs, 1, cache=Cache(str(tmp_path)))
        assert not any(c.cached for c in cold) and all(c.cached for c in warm)
        assert [c.verdict for c in warm] == [c.verdict for c in cold]
        assert all(c.query_keys for c in warm), "every cached cell names the queries behind it"

    def test_a_slow_path_comparison_comes_from_the_cache_when_warm(self, tmp_path: Path) -> None:
        """--compare v6.12's lemmas are tried under a small budget first; a try that runs
        out is no verdict's basis and is not listed, so the warm run is served (it was
        not: the cell listed a query whose unknown answer is never stored)."""
        specs = [CellSpec(config="x86_64-default", revision="compare:v6.12", ptype=MemoryType.GENERIC,
                          order=2)]
        cold, _, _ = run_matrix(specs, 1, cache=Cache(str(tmp_path)))
        warm, _, _ = run_matrix(specs, 1, cache=Cache(str(tmp_path)))
        assert not cold[0].cached and warm[0].cached
        assert warm[0].verdict == cold[0].verdict

    def test_refuted_results_are_cached_with_their_counterexample(self, tmp_path: Path) -> None:
        argv = ["--mutant", "mutant_tail_keeps_type_refcount", "--types", "GENERIC", "--orders",
                "2", "--no-times", "--jobs", "1", "--cache-dir", str(tmp_path)]
        cold, warm = run(*argv), run(*argv)
        assert cold[0] == 1 and warm == cold
        assert "field _refcount (offset 52, 4 bytes)" in warm[1]

    def test_unknown_is_never_cached(self, tmp_path: Path) -> None:
        code, out, _ = run("--types", "GENERIC", "--orders", "3", "--rlimit", "1", "--no-times",
                           "--cache-dir", str(tmp_path))
        assert code == 2 and "UNKNOWN" in out
        assert entries(tmp_path, "cell") == []
        answers = {json.loads(p.read_text())["payload"]["answer"] for p in entries(tmp_path, "query")}
        assert answers <= {"sat", "unsat"}

    def test_a_warm_cache_does_not_change_a_verdict_under_a_tiny_budget(self, tmp_path: Path) -> None:
        """The resource budget is part of every key: a run whose budget cannot decide says
        UNKNOWN whatever an earlier run with a larger budget cached."""
        assert run(*SMALL, "--cache-dir", str(tmp_path))[0] == 0
        code, out, _ = run(*SMALL, "--cache-dir", str(tmp_path), "--rlimit", "1")
        assert code == 2 and "UNKNOWN" in out

    def test_no_cache_writes_nothing(self, tmp_path: Path) -> None:
        run(*SMALL, "--cache-dir", str(tmp_path), "--no-cache")
        assert not any(tmp_path.iterdir())

    @pytest.mark.parametrize("damage", ["truncate", "foreign", "digest"])
    def test_corrupt_or_foreign_entries_are_ignored_and_reported(self, tmp_path: Path,
                                                                 damage: str) -> None:
        cold = run(*SMALL, "--cache-dir", str(tmp_path))
        for path in entries(tmp_path, "cell") + entries(tmp_path, "query")[:3]:
            doc = json.loads(path.read_text())
            if damage == "truncate":
                path.write_text(path.read_text()[:40])
            elif damage == "foreign":
                path.write_text(json.dumps({"format": "other-tool/9", "payload": doc["payload"]}))
            else:  # a payload changed behind the digest's back: e.g. a REFUTED turned PROVED
                doc["payload"] = {"answer": "unsat"} if "answer" in doc["payload"] else {}
                path.write_text(json.dumps(doc))
        code, out, err = run(*SMALL, "--cache-dir", str(tmp_path))
        assert (code, out) == cold[:2], "recomputed, same result"
        assert "equiv: cache: ignored corrupt or foreign cache entries" in err
        assert all(line.startswith("equiv: cache: ") for line in err.splitlines())

    def test_concurrent_writers(self, tmp_path: Path) -> None:
        """Many writers of one key, a reader all along: the reader sees a whole entry or
        none, never a torn one."""
        cache = Cache(str(tmp_path))
        payload = {"answer": "unsat", "pad": "x" * 50_000}
        stop = threading.Event()
        seen: list[object] = []
        r = Cache(str(tmp_path))

        def reader() -> None:  # reads until the writers are done, then once more
            while True:
                done = stop.is_set()
                seen.append(r.get("query", "ab" * 32))
                if done:
                    return

        def writer() -> None:
            for _ in range(50):
                cache.put("query", "ab" * 32, payload)

        t = threading.Thread(target=reader)
        t.start()
        ws = [threading.Thread(target=writer) for _ in range(4)]
        for w in ws:
            w.start()
        for w in ws:
            w.join()
        stop.set()
        t.join()
        assert not cache.problems and not r.problems, "no torn entry was ever read"
        assert all(x is None or x == payload for x in seen) and payload in seen
        assert [p.name for p in (tmp_path / "query").rglob("*")] == ["ab", f"{'ab' * 32}.json"]

    def test_two_processes_share_one_cache(self, tmp_path: Path) -> None:
        import subprocess
        import sys
        cmd = [sys.executable, "-m", "equiv.proofs", *SMALL, "--cache-dir", str(tmp_path)]
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        outs = [p.communicate() for p in procs]
        assert all(p.returncode == 0 for p in procs)
        assert outs[0][0] == outs[1][0] and not outs[0][1] and not outs[1][1]
        assert run(*SMALL, "--cache-dir", str(tmp_path))[1] == outs[0][0]

    def test_keys_name_the_query_solver_and_tool(self) -> None:
        q = "(assert false)"
        assert query_key(q, "z3") != query_key(q, "bitwuzla")
        assert query_key(q, "z3") != query_key(q + " ", "z3")
        a = CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2)
        assert cell_key(a.description()) == cell_key(CellSpec(
            config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
            timeout_ms=5).description())
        for other in (CellSpec(config="x86_64-lru-gen", revision="v11", ptype=MemoryType.GENERIC, order=2),
                      CellSpec(config="x86_64-default", revision="v5", ptype=MemoryType.GENERIC, order=2),
                      CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
                               solver="cvc5"),
                      CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
                               mutant="mutant_short_copy")):
            assert cell_key(other.description()) != cell_key(a.description())

    def test_tool_change_invalidates_cells(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        specs = [CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=0)]
        run_matrix(specs, 1, cache=Cache(str(tmp_path)))
        import equiv.engine.cache as cache_mod
        monkeypatch.setattr(cache_mod, "source_fingerprint", lambda: "edited sources")
        again, _, _ = run_matrix(specs, 1, cache=Cache(str(tmp_path)))
        assert not again[0].cached


class TestBackstop:
    def test_a_stuck_worker_is_killed_and_reported_unknown(self) -> None:
        specs = [CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=18)]
        cells, wall, _ = run_matrix(specs, 1, backstop_s=0.05)
        (cell,) = cells
        assert cell.verdict is Verdict.UNKNOWN
        assert "wall-clock backstop reached (0.05 s per group)" in cell.obligations[0].reason
        assert wall < 10

    def test_cli_reports_the_limit(self) -> None:
        code, out, _ = run("--types", "GENERIC", "--orders", "18", "--backstop-s", "0.05",
                           "--no-times", "--no-cache", "--quiet")
        assert code == 2
        assert "wall-clock backstop reached" in out

    def test_bad_backstop(self) -> None:
        code, _, err = run("--backstop-s", "0")
        assert code == 3 and "--backstop-s must be positive" in err


@pytest.mark.slow
class TestDask:
    def test_local_cluster_gives_the_same_results(self, tmp_path: Path) -> None:
        import distributed  # in the test extra: a missing install fails, never skips
        specs = [CellSpec(config="x86_64-default", revision="v11", ptype=t, order=o) for o in (0, 2)
                 for t in (MemoryType.GENERIC, MemoryType.PRIVATE)]
        local, _, _ = run_matrix(specs, 1)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster:
            remote, _, _ = run_matrix(specs, cache=Cache(str(tmp_path)),
                                      scheduler=cluster.scheduler_address)
        assert [(c.ptype, c.order, c.verdict) for c in remote] == \
            [(c.ptype, c.order, c.verdict) for c in local]
        warm, _, _ = run_matrix(specs, 1, cache=Cache(str(tmp_path)))
        assert all(c.cached for c in warm), "the cluster's results went into the same cache"

    def test_unreachable_scheduler_is_a_one_line_error(self) -> None:
        code, _, err = run("--types", "GENERIC", "--orders", "0", "--scheduler",
                           "tcp://127.0.0.1:9", "--no-cache", "--quiet")
        assert code == 3 and err.count("\n") == 1 and "cannot reach the Dask scheduler" in err

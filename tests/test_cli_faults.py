"""Issue 17: faults and options.  No input gives a traceback or exit 1 (the code for
"refuted"): bad input is one line and exit 3, a crash is one line and exit 4 with the
traceback written to a file, Ctrl-C is ``equiv: interrupted`` and exit 130, and a damaged
cache costs one line per run."""

from __future__ import annotations

import io
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from equiv.proofs import main

SMALL = ["--types", "GENERIC,FS_DAX", "--orders", "0-1", "--no-times", "--quiet"]



def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json"))


class TestCache:
    def test_random_bytes_in_entries_are_ignored_reported_once_and_recomputed(
            self, tmp_path: Path) -> None:
        """Non-UTF-8 bytes in every cell and query entry: no traceback, the same result,
        one line on stderr for the whole run (the query entries are read by workers)."""
        cold = run(*SMALL, "--cache-dir", str(tmp_path))
        assert cold[0] == 0
        rnd = random.Random(17)
        damaged = entries(tmp_path)
        assert len(damaged) > 4
        for path in damaged:
            path.write_bytes(b"\xff\xfe" + bytes(rnd.randrange(256) for _ in range(200)))
        code, out, err = run(*SMALL, "--cache-dir", str(tmp_path))
        assert (code, out) == cold[:2], "recomputed, same result"
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("equiv: cache: ignored corrupt or foreign cache entries")
        assert "Traceback" not in err

    def test_an_unwritable_cache_is_one_line_per_run(self, tmp_path: Path) -> None:
        """A cache whose entries cannot be written (here the kind directories are files,
        which fails for root too): one line, not one per cell or query."""
        (tmp_path / "cell").write_text("")
        (tmp_path / "query").write_text("")
        code, _, err = run(*SMALL, "--cache-dir", str(tmp_path))
        assert code == 0
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith(f"equiv: cache: cannot write to the cache {tmp_path} ")


class TestBadInput:
    """Every bad value is one line and exit 3, checked before any proof starts."""

    @pytest.mark.parametrize("option", ["--revision", "--solver", "--output", "--cache-dir",
                                        "--scheduler", "--dump-smt", "--config", "--mutant"])
    def test_empty_values_are_refused_alike(self, option: str) -> None:
        code, out, err = run(*SMALL, option, "")
        assert (code, out) == (3, "")
        assert err.startswith(f"equiv: error: {option} needs a value, got an empty one; give "
                              f"{option} ")
        assert len(err.splitlines()) == 1

    def test_dump_smt_existing_file(self, tmp_path: Path) -> None:
        f = tmp_path / "file"
        f.write_text("x")
        code, out, err = run(*SMALL, "--dump-smt", str(f))
        assert (code, out) == (3, "")
        assert err == f"equiv: error: --dump-smt {str(f)!r} is an existing file; give a directory\n"

    def test_dump_smt_missing_directory(self, tmp_path: Path) -> None:
        where = tmp_path / "no" / "dir"
        code, out, err = run(*SMALL, "--dump-smt", str(where))
        assert (code, out) == (3, "")
        assert err == (f"equiv: error: cannot write --dump-smt {str(where)!r}: no directory "
                       f"{str(where.parent)!r}\n")

    def test_dump_smt_under_a_file(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("")
        code, _, err = run(*SMALL, "--dump-smt", str(tmp_path / "file" / "dir"))
        assert code == 3 and err.startswith("equiv: error: cannot write --dump-smt ")
        assert len(err.splitlines()) == 1

    def test_dump_smt_read_only_directory(self, tmp_path: Path) -> None:
        """A directory nobody may write in (``/sys`` refuses new files even to root)."""
        target = "/sys" if os.geteuid() == 0 else str(tmp_path)
        if target == str(tmp_path):
            tmp_path.chmod(0o500)
        try:
            code, out, err = run(*SMALL, "--dump-smt", target)
        finally:
            tmp_path.chmod(0o700)
        assert (code, out) == (3, "")
        assert err.startswith(f"equiv: error: cannot write --dump-smt {target!r}: ")
        assert len(err.splitlines()) == 1

    def test_output_into_a_missing_directory_is_refused_before_the_run(self, tmp_path: Path
                                                                       ) -> None:
        code, out, err = run(*SMALL, "--output", str(tmp_path / "no" / "report.txt"))
        assert (code, out) == (3, "") and "no directory" in err

    def test_unknown_queries_go_to_the_cache_and_the_run_says_where(self, tmp_path: Path
                                                                    ) -> None:
        """An UNKNOWN query's SMT-LIB lands in ``<cache>/unknown`` (not in $TMPDIR), and
        one line says so."""
        code, _, err = run("--types", "GENERIC", "--orders", "0", "--rlimit", "20000", "--quiet",
                           "--cache-dir", str(tmp_path))
        assert code == 2
        files = sorted((tmp_path / "unknown").glob("equiv-unknown-*.smt2"))
        assert files
        assert f"equiv: wrote {len(files)} undecided queries as SMT-LIB to " \
               f"{tmp_path / 'unknown'}\n" in err

    def test_unknown_queries_go_where_dump_smt_says(self, tmp_path: Path) -> None:
        code, _, err = run("--types", "GENERIC", "--orders", "0", "--rlimit", "20000", "--quiet",
                           "--no-cache", "--dump-smt", str(tmp_path / "smt"))
        assert code == 2
        assert list((tmp_path / "smt").glob("equiv-unknown-*.smt2"))
        assert f"as SMT-LIB to {tmp_path / 'smt'}\n" in err


def _crash(*_: object, **__: object) -> object:
    raise RuntimeError("seeded crash in a worker")


class TestCrash:
    def test_a_crash_in_a_worker_is_exit_4_with_the_traceback_in_a_file(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A worker raising an unexpected exception: never exit 1 (refuted) nor a bare
        traceback, but one line naming the file that holds the worker's traceback."""
        import equiv.matrix

        monkeypatch.setattr(equiv.matrix, "run_cell", _crash)  # the forked workers inherit it
        code, out, err = run(*SMALL, "--jobs", "2", "--cache-dir", str(tmp_path))
        assert (code, out) == (4, "")
        assert len(err.splitlines()) == 1, err
        assert err.startswith("equiv: internal error: RuntimeError: seeded crash in a worker "
                              "(a bug in equiv; traceback in ")
        path = Path(err.rstrip().removesuffix(")").rsplit(" ", 1)[1])
        assert path.parent == tmp_path / "crash"
        text = path.read_text()
        assert "Traceback" in text and "_crash" in text and "run_group" in text

    def test_a_crash_in_the_parent_is_exit_4(self, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
        import equiv.proofs

        monkeypatch.setattr(equiv.proofs, "render_runs", _crash)
        code, out, err = run(*SMALL, "--jobs", "1", "--cache-dir", str(tmp_path))
        assert (code, out) == (4, "")
        assert err.startswith("equiv: internal error: RuntimeError: ")
        assert len(list((tmp_path / "crash").iterdir())) == 1

    def test_without_a_cache_the_traceback_goes_to_tmpdir(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        import equiv.proofs

        monkeypatch.setenv("TMPDIR", str(tmp_path))
        monkeypatch.setattr("tempfile.tempdir", None)
        monkeypatch.setattr(equiv.proofs, "render_runs", _crash)
        code, _, err = run(*SMALL, "--jobs", "1", "--no-cache")
        assert code == 4
        assert f"traceback in {tmp_path}/equiv-crash-" in err


class TestInterrupt:
    def test_sigint_stops_the_run_and_its_workers(self, tmp_path: Path) -> None:
        """A real SIGINT to the real entry point while workers prove: ``equiv:
        interrupted``, exit 130, no report, and no worker left behind."""
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "equiv.proofs", "--orders", "0-18", "--no-cache", "--jobs",
             "2", "--quiet", "--output", str(tmp_path / "report.txt")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            start_new_session=True)
        children: set[int] = set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(children) < 2:  # wait for the workers
            time.sleep(0.2)
            children = _children(proc.pid)
        assert children, "the workers never started"
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert (out, err) == ("", "equiv: interrupted\n")
        assert not (tmp_path / "report.txt").exists()
        time.sleep(0.5)
        assert not [pid for pid in children if Path(f"/proc/{pid}").exists()
                    and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]]


def _children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (from /proc)."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out

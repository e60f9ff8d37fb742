"""Issue 17: faults and options.  No input gives a traceback or exit 1 (the code for
"refuted"): bad input is one line and exit 3, a crash is one line and exit 4 with the
traceback written to a file, Ctrl-C is ``equiv: interrupted`` and exit 130, and a damaged
cache costs one line per run."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_linux_tree import linux612  # noqa: F401  (the fixture)

from equiv.proofs import main
from equiv.subjects import every

SMALL = ["--types", "GENERIC,FS_DAX", "--orders", "0-1", "--no-times", "--quiet"]
ROOT = Path(__file__).parent.parent



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


    @pytest.mark.parametrize("rlimit", ["1000", "20000"])
    def test_every_unknown_names_its_budget_and_its_query(self, tmp_path: Path, rlimit: str
                                                          ) -> None:
        """--rlimit 1000 leaves even the vacuity checks undecided: those wrote no .smt2,
        said nothing on stderr and gave z3's bare "canceled".  Every UNKNOWN obligation now
        says which budget ran out, the option that raises it, and a query file that is
        there; stderr says where they went."""
        code, out, err = run("--types", "GENERIC", "--orders", "0", "--rlimit", rlimit,
                             "--quiet", "--no-cache", "--dump-smt", str(tmp_path),
                             "--format", "json")
        unknown = [r for r in json.loads(out)["records"] if r["verdict"] != "PROVED"]
        assert code == 2 and unknown
        for r in unknown:
            assert r["verdict"] == "UNKNOWN"
            assert f"(its deterministic budget, --rlimit {rlimit}, ran out); raise it with " \
                   "--rlimit; query: " in r["reason"], r
            assert Path(r["reason"].rsplit("query: ", 1)[1]).is_file()
        assert f"equiv: wrote {len(unknown)} undecided quer" in err
        assert err.endswith(f"as SMT-LIB to {tmp_path}\n")

    def test_a_backstop_names_its_option(self, tmp_path: Path) -> None:
        """(A cell of seconds, never decided earlier in this process: a worker that
        answers from its inherited memos could finish before the limit is checked.)"""
        code, out, _ = run("--types", "FS_DAX", "--orders", "18", "--quiet", "--no-cache",
                           "--backstop-s", "0.001", "--format", "json")
        assert code == 2
        assert [r["reason"] for r in json.loads(out)["records"]] == [
            "wall-clock backstop reached (0.001 s per group): the worker was killed; raise it "
            "with --backstop-s"]


def _crash(*_: object, **__: object) -> object:
    raise RuntimeError("seeded crash in a worker")


class TestCrash:
    def test_a_crash_in_a_worker_is_exit_4_with_the_traceback_in_a_file(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A worker raising an unexpected exception: never exit 1 (refuted) nor a bare
        traceback, but one line naming the file that holds the worker's traceback."""
        import equiv.zone_device.cell

        monkeypatch.setattr(equiv.zone_device.cell, "run_cell", _crash)  # the forked workers inherit it
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
            start_new_session=True, preexec_fn=_sigint_default)
        children = _workers(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert (out, err) == ("", "equiv: interrupted\n")
        assert not (tmp_path / "report.txt").exists()
        time.sleep(0.5)
        assert not _alive(children)

    @pytest.mark.parametrize("to_group", [True, False], ids=["group", "process"])
    @pytest.mark.parametrize("mode", [["--config", "all"], ["--self-test"]],
                             ids=["config-all", "self-test"])
    def test_sigint_in_every_mode_is_130_and_one_line(self, tmp_path: Path, mode: list[str],
                                                     to_group: bool) -> None:
        """SIGINT while the workers of --config all or --self-test prove, to the process
        group (a terminal's Ctrl-C) or to the process alone (``kill -INT``): ``equiv:
        interrupted`` and 130.  Both used to die of SIGPIPE (141, no word): SIGPIPE's
        default disposition was restored, and the worker pool's pipes, written as its
        workers are stopped, killed the run."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "equiv.proofs", *mode, "--no-cache", "--jobs", "2",
             "--quiet", "--output", str(tmp_path / "report.txt")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            start_new_session=True, preexec_fn=_sigint_default)
        children = _workers(proc.pid)
        if to_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert (proc.returncode, out, err) == (130, "", "equiv: interrupted\n")
        assert not (tmp_path / "report.txt").exists()
        time.sleep(0.5)
        assert not _alive(children)

    @pytest.mark.parametrize("mode", [["--orders", "0-18"], ["--config", "all"]],
                             ids=["matrix", "config-all"])
    def test_sigterm_is_143_and_one_line(self, tmp_path: Path, mode: list[str]) -> None:
        """SIGTERM (``kill``, a CI job's time limit) while workers prove: ``equiv:
        terminated``, exit 143, no report, no worker left behind (Python's default would end
        the process at once, without a word, its workers orphaned)."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "equiv.proofs", *mode, "--no-cache", "--jobs", "2",
             "--quiet", "--output", str(tmp_path / "report.txt")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            start_new_session=True)
        children = _workers(proc.pid)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        assert (proc.returncode, out, err) == (143, "", "equiv: terminated\n")
        assert not (tmp_path / "report.txt").exists()
        time.sleep(0.5)
        assert not _alive(children)

    def test_a_closed_output_pipe_ends_quietly(self) -> None:
        """``equiv ... | head``: the reader gone, the run ends with 141 (as a command a
        closed pipe stops) and writes nothing to stderr, no traceback."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        read, write = os.pipe()
        os.close(read)
        with os.fdopen(write, "w") as closed:
            proc = subprocess.run([sys.executable, "-m", "equiv.proofs", "--list"],
                                  stdout=closed, stderr=subprocess.PIPE, text=True, env=env,
                                  timeout=60)
        assert (proc.returncode, proc.stderr) == (141, "")

    def test_kill_9_of_the_parent_takes_its_workers_along(self, tmp_path: Path) -> None:
        """``kill -9`` of equiv while workers prove: the workers die with it (Linux's
        parent-death signal), none solves on alone (it used to for about a minute)."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "equiv.proofs", "--orders", "0-18", "--no-cache", "--jobs",
             "2", "--quiet", "--output", str(tmp_path / "report.txt")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True)
        children = _workers(proc.pid)
        proc.kill()
        proc.wait(timeout=10)
        left = children
        deadline = time.monotonic() + 5
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = _alive(left)
        try:
            assert not left, f"workers {sorted(left)} outlived their parent"
        finally:
            for pid in left:
                os.kill(pid, signal.SIGKILL)

    def test_sigint_stops_the_workers_of_the_c_text_proofs(self, tmp_path: Path) -> None:
        """--linux and --patch run their cells with :func:`map_in_workers`: Ctrl-C stops
        its workers at once (they were waited for, each printing a traceback)."""
        script = tmp_path / "run.py"
        script.write_text(
            "import sys, time\n"
            "from equiv.engine.runner import map_in_workers\n"
            "def slow(x: int) -> int:\n"
            "    time.sleep(120)\n"
            "    return x\n"
            "try:\n"
            "    map_in_workers(slow, [(1,), (2,), (3,)], 2)\n"
            "except KeyboardInterrupt:\n"
            "    print('stopped', flush=True)\n"
            "    sys.exit(130)\n")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True, preexec_fn=_sigint_default)
        children = _workers(proc.pid)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert time.monotonic() - t0 < 30, "waited for the workers' cells"
        assert (proc.returncode, out, err) == (130, "stopped\n", "")
        time.sleep(0.5)
        assert not _alive(children)


def _sigint_default() -> None:
    """In the child, before exec: SIGINT handled as from a terminal, even when these tests
    run in a process that ignores it (a shell's background job does, and exec keeps an
    ignored signal ignored: Python then installs no KeyboardInterrupt handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _workers(pid: int) -> set[int]:
    """The children of ``pid`` once at least two (its workers) have started (a minute at
    most)."""
    children: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(children) < 2:
        time.sleep(0.2)
        children = _children(pid)
    assert len(children) >= 2, "the workers never started"
    return children


def _alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (not gone, not a zombie)."""
    out = set()
    for pid in pids:
        try:
            if "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]:
                out.add(pid)
        except OSError:
            continue
    return out


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


#: a value each subject's own options accept (the default where there is one: an own option
#: is refused for another subject whatever its value)
OWN_VALUES = {
    "config": ["--config", "x86_64-default"], "kconfig": ["--kconfig", "/proc/config.gz"],
    "compare": ["--compare", "v6.12"], "observe_events": ["--observe-events"],
    "copy_primitive": ["--copy-primitive"], "btf": ["--btf", "/sys/kernel/btf/vmlinux"],
    "linux": ["--linux", "/usr/src"], "types": ["--types", "all"], "orders": ["--orders", "all"],
    "explain": ["--explain", "_refcount"], "live": ["--live"], "live_from": ["--live-from", "/"],
    "live_out": ["--live-out", "/tmp"], "live_setup": ["--live-setup"],
    "live_kernel": ["--live-kernel", "all-types"],
    "paths": ["--paths", "all"], "bounds": ["--bounds", "1"],
    "trylock": ["--trylock", "succeeds"]}


class TestOptions:
    @pytest.mark.parametrize("subject", ["zone-device", "vmap"])
    def test_another_subjects_option_is_refused_whatever_its_value(self, subject: str) -> None:
        """--subject vmap --config x86_64-default ran arm64-4k without a word (the default
        value passed unnoticed): each option of one subject given to the other is one
        line, exit 3, naming the option and what the subject is chosen by."""
        other = next(s for s in every() if s.name != subject)
        mine = next(s for s in every() if s.name == subject)
        assert set(other.own_options) <= set(OWN_VALUES)
        for opt in other.own_options:
            code, out, err = run("--subject", subject, *OWN_VALUES[opt])
            assert (code, out) == (3, ""), opt
            assert err == (f"equiv: error: --{opt.replace('_', '-')} applies to --subject "
                           f"{other.name}, not to --subject {subject} (--subject {subject}: "
                           f"{mine.choices})\n")
        assert "arm64-4k" in next(s for s in every() if s.name == "vmap").choices

    def test_no_cache_and_cache_dir_contradict(self, tmp_path: Path) -> None:
        code, out, err = run(*SMALL, "--no-cache", "--cache-dir", str(tmp_path))
        assert (code, out) == (3, "")
        assert err == (f"equiv: error: --no-cache and --cache-dir {tmp_path} contradict each "
                       "other: give --cache-dir DIR to use a cache there, or --no-cache for "
                       "none\n")
        assert not list(tmp_path.iterdir())

    @pytest.mark.parametrize("argv", [["--config", "arm64-4k"], ["--types", "GENERIC"],
                                      ["--revision", "v5"], ["--timeout-ms", "5"],
                                      ["--solver", "z3"], ["--verbose"], ["--paths", "vmap"]])
    def test_self_test_refuses_what_it_does_not_read(self, argv: list[str]) -> None:
        """--self-test runs its fixed matrix of seeded bugs: a matrix, budget or solver
        option was ignored without a word."""
        subject = ["--subject", "vmap"] if argv[0] == "--paths" else []
        code, out, err = run("--self-test", *subject, *argv)
        assert (code, out) == (3, "")
        assert err == (f"equiv: error: {argv[0]} does not apply to --self-test, which takes "
                       "only --subject, --jobs, --cache-dir or --no-cache, --output and "
                       "--quiet\n")

    @pytest.mark.parametrize("argv", [["--mutant", "mutant_short_copy"], ["--revision", "v5"],
                                      ["--dump-smt", "smt"], ["--rlimit", "1000"],
                                      ["--obligation", "head"], ["--emit-tests", "t"],
                                      ["--cache-dir", "c"]])
    def test_linux_refuses_what_it_does_not_read(self, argv: list[str], tmp_path: Path) -> None:
        """--linux interprets the trees' C: a model's option (a mutant, a revision, an
        obligation), the model's budget or dumps, or a cache it does not keep was ignored
        without a word; refused before the tree is read."""
        code, out, err = run("--linux", str(tmp_path), *argv)
        assert (code, out) == (3, "")
        assert err == (f"equiv: error: {argv[0]} does not apply to --linux, which takes only "
                       "--patch, --against, --per-patch, --compare, --types, --orders, "
                       "--solver, --config or --kconfig, --timeout-ms, --backstop-s, --jobs "
                       "and the report's options\n")

    def test_list_refuses_what_it_does_not_read(self) -> None:
        code, out, err = run("--list", "--config", "arm64-4k")
        assert (code, out) == (3, "")
        assert err == ("equiv: error: --config does not apply to --list, which takes only "
                       "--subject\n")

    def test_dump_smt_is_refused_for_vmap_before_any_proof(self, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
        """--subject all --dump-smt DIR: refused before the zone-device runs (vmap writes
        only its undecided queries, to the cache's unknown/)."""
        monkeypatch.setattr("equiv.zone_device.cell.run_matrix", _crash)
        code, out, err = run("--subject", "all", "--dump-smt", str(tmp_path), *SMALL[:4])
        assert (code, out) == (3, "")
        assert err.startswith("equiv: error: --dump-smt does not apply to --subject vmap: ")

    def test_config_and_kconfig_conflict(self, tmp_path: Path) -> None:
        """--kconfig used to win silently over an explicit --config (even the default's)."""
        kc = tmp_path / ".config"
        kc.write_text("CONFIG_64BIT=y\nCONFIG_X86_64=y\nCONFIG_SMP=y\nCONFIG_NR_CPUS=64\n")
        for preset in ("arm64-64k", "x86_64-default"):
            code, out, err = run(*SMALL, "--config", preset, "--kconfig", str(kc))
            assert (code, out) == (3, "")
            assert err == (f"equiv: error: --config {preset} and --kconfig {kc} both give the "
                           "configuration: give one of them\n")

    @pytest.mark.parametrize("mode", [["--explain", "_refcount", "--types", "GENERIC",
                                       "--orders", "0"], ["--self-test"], ["--copy-primitive"]])
    @pytest.mark.parametrize("fmt", ["json", "sarif"])
    def test_text_only_modes_refuse_another_format(self, mode: list[str], fmt: str) -> None:
        code, out, err = run(*mode, "--format", fmt)
        assert (code, out) == (3, "")
        assert err == (f"equiv: error: {mode[0]} reports in text only, not --format {fmt!r}; "
                       "drop --format\n")

    def test_a_truncated_kconfig_says_what_is_missing(self, tmp_path: Path) -> None:
        kc = tmp_path / ".config"
        kc.write_text('CONFIG_CC_VERSION_TEXT="gcc (Debian 14.2.0-19) 14.2.0"\nCONFIG_CC_IS_GCC=y\n')
        code, _, err = run("--kconfig", str(kc))
        assert code == 3
        assert err == (f"equiv: error: --kconfig {str(kc)!r} has no CONFIG_X86_64 or "
                       "CONFIG_ARM64 line (truncated, or not a whole kernel .config?); the "
                       "modelled arches are x86_64 and arm64\n")

    def test_list_shows_every_subject_unless_one_is_named(self) -> None:
        """``--help`` says --list shows each subject's lines: without --subject, every one."""
        _, every, _ = run("--list")
        _, one, _ = run("--list", "--subject", "vmap")
        assert "subject zone-device: " in every and "subject vmap: " in every
        assert "subject vmap: " in one and "subject zone-device: " not in one


def _btf_of(arch_struct: str | None) -> bytes:
    """A small BTF blob: the x86_64-default struct page fields the test needs, and a struct
    only one arch defines."""
    from equiv.linux.btf import BtfBuilder

    b = BtfBuilder()
    ulong = b.int_type("unsigned long", 8)
    b.struct("page", 64, [("flags", ulong, 0)])
    b.struct("folio", 256, [("flags", ulong, 0)])
    if arch_struct is not None:
        b.struct(arch_struct, 8, [("x", ulong, 0)])
    return b.to_bytes()


class TestBtfArch:
    @pytest.mark.parametrize(("struct", "arch"), [("cpuinfo_x86", "x86_64"),
                                                  ("cpuinfo_arm64", "arm64")])
    def test_a_btf_of_another_arch_is_refused(self, tmp_path: Path, struct: str, arch: str
                                              ) -> None:
        blob = tmp_path / "vmlinux.btf"
        blob.write_bytes(_btf_of(struct))
        other = "arm64-64k" if arch == "x86_64" else "x86_64-default"
        code, out, err = run("--btf", str(blob), "--config", other)
        assert (code, out) == (3, "")
        assert err.startswith(f"equiv: error: --btf {blob} is the BTF of an {arch} kernel (it "
                              f"has struct {struct}), but the configuration {other} is ")

    def test_the_same_arch_is_compared(self, tmp_path: Path) -> None:
        blob = tmp_path / "vmlinux.btf"
        blob.write_bytes(_btf_of("cpuinfo_x86"))
        code, out, _ = run("--btf", str(blob), "--config", "x86_64-default")
        assert code == 1 and "MISSING" in out  # compared (the blob is tiny), not refused

    @pytest.mark.skipif(not os.path.exists("/sys/kernel/btf/vmlinux")
                        or not os.uname().machine == "x86_64", reason="needs an x86_64 vmlinux BTF")
    def test_this_machines_btf_against_arm64_64k(self) -> None:
        code, out, err = run("--btf", "/sys/kernel/btf/vmlinux", "--config", "arm64-64k")
        assert (code, out) == (3, "") and "MATCH" not in err


class TestEntryPoints:
    def test_version(self) -> None:
        from equiv.engine.cache import TOOL_VERSION

        for argv in (["-m", "equiv.proofs"], ["-m", "equiv"]):
            p = subprocess.run([sys.executable, *argv, "--version"], capture_output=True,
                               text=True, cwd=ROOT, check=False)
            assert (p.returncode, p.stdout, p.stderr) == (0, f"equiv {TOOL_VERSION}\n", "")

    def test_python_m_equiv_is_the_command(self) -> None:
        p = subprocess.run([sys.executable, "-m", "equiv", "--types", "GENERIC", "--orders", "0",
                            "--quiet", "--no-cache"], capture_output=True, text=True, cwd=ROOT,
                           check=False)
        assert p.returncode == 0 and "1 cell" in p.stdout, p.stderr

    def test_console_script(self) -> None:
        """pyproject.toml declares ``equiv``, and its target is the command."""
        import importlib
        import tomllib

        from equiv.proofs import console

        scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
        module, _, name = scripts["equiv"].partition(":")
        assert getattr(importlib.import_module(module), name) is console


class TestLinuxExit:
    """README: ``--linux`` exits 1 on drift or a counterexample; with an UNKNOWN obligation
    as well it stayed 2 (drift was only counted when everything else was proved)."""

    @pytest.mark.parametrize(("verdict", "drift_ok", "code"), [
        ("UNKNOWN", False, 1), ("VACUOUS", False, 1), ("PROVED", False, 1),
        ("REFUTED", True, 1), ("UNKNOWN", True, 2), ("PROVED", True, 0)])
    def test_drift_and_refuted_outrank_unknown(self, verdict: str, drift_ok: bool, code: int
                                               ) -> None:
        from equiv.engine.verdict import Verdict
        from equiv.zone_device.source.cli import linux_exit

        assert linux_exit(Verdict(verdict), drift_ok) == code


def _too_wide(text: str, width: int = 72) -> list[str]:
    return [line for line in text.splitlines() if len(line) > width]


class TestWidth:
    """Every text output fits 72 columns (a mail reply); tables wrap under their last
    column."""

    def test_list(self) -> None:
        code, out, _ = run("--list")
        assert code == 0 and not _too_wide(out)

    @pytest.mark.slow
    def test_copy_primitive(self) -> None:
        code, out, _ = run("--copy-primitive")
        assert code == 0 and out.startswith("byte equality with memcpy")
        assert not _too_wide(out)

    def test_btf(self, tmp_path: Path) -> None:
        blob = tmp_path / "vmlinux.btf"
        blob.write_bytes(_btf_of("cpuinfo_x86"))
        _, out, _ = run("--btf", str(blob), "--config", "x86_64-default")
        assert "sizeof(struct page)" in out and not _too_wide(out)

    @pytest.mark.skipif(not os.path.exists("/sys/kernel/btf/vmlinux")
                        or not os.uname().machine == "x86_64", reason="needs an x86_64 vmlinux BTF")
    def test_btf_of_this_machine(self) -> None:
        """Renamed fields show the kernel's name after ``=``."""
        _, out, _ = run("--btf", "/sys/kernel/btf/vmlinux")
        assert "compound_info = compound_head" in out and not _too_wide(out)

    def test_the_warm_summary_is_whole_on_the_first_line(self, tmp_path: Path) -> None:
        """`head -1` of a warm run gets the whole summary; the times follow."""
        argv = ["--types", "GENERIC", "--orders", "0", "--quiet", "--cache-dir", str(tmp_path)]
        run(*argv)
        code, out, _ = run(*argv)
        first, second = out.splitlines()[:2]
        assert code == 0
        assert first == "12 obligations (1 cell): 12 proved"
        assert second.startswith("  (wall ") and second.endswith(", 1 cell from the cache)")
        assert not _too_wide(out)

    def test_a_part_of_a_field_is_named_as_such(self) -> None:
        """memcg_data is 8 bytes; the 4 at offset 60 are its upper half."""
        code, out, _ = run("--types", "GENERIC", "--orders", "2", "--no-times", "--jobs", "1",
                           "--quiet", "--mutant", "mutant_short_copy")
        assert code == 1
        assert "field memcg_data[4..7] (offset 60, 4 bytes)" in out
        assert "memcg_data (offset 60" not in out

    @pytest.mark.slow
    def test_self_test(self) -> None:
        code, out, _ = run("--self-test")
        assert code == 0 and not _too_wide(out)

    @pytest.mark.slow
    def test_linux(self, linux612: Path) -> None:  # noqa: F811
        """The --linux report, a counterexample included: 72 columns, the inputs one per
        line with the pgmap type by name."""
        code, out, _ = run("--linux", str(linux612), "--compare", "v6.12", "--orders", "0",
                           "--types", "GENERIC", "--no-times", "--quiet")
        assert code == 1
        assert "pgmap->type                      MEMORY_DEVICE_GENERIC (4)" in out
        assert not _too_wide(out)


#: the attributes the strict JUnit schema (Jenkins' junit-10.xsd) allows on <testsuites>
TESTSUITES_ATTRIBUTES = {"name", "time", "tests", "failures", "disabled", "errors"}


def _check_junit(text: str) -> None:
    import xml.etree.ElementTree as ET

    root = ET.fromstring(text.encode())
    assert root.tag == "testsuites"
    assert set(root.attrib) <= TESTSUITES_ATTRIBUTES, set(root.attrib) - TESTSUITES_ATTRIBUTES
    suites = root.findall("testsuite")
    assert suites
    if "time" in root.attrib:
        assert all(float(root.attrib["time"]) >= float(s.attrib["time"]) for s in suites)
        assert float(root.attrib["time"]) == pytest.approx(
            sum(float(s.attrib["time"]) for s in suites), abs=0.002)


class TestJunit:
    def test_proof_run(self) -> None:
        """Several configurations run in parallel: the root time is not below a suite's
        (it was the wall time, below the sum of cell times of a parallel run)."""
        code, out, _ = run("--config", "all", "--types", "GENERIC,FS_DAX", "--orders", "0",
                           "--jobs", "2", "--quiet", "--no-cache", "--format", "junit")
        assert code == 0
        _check_junit(out)

    def test_patch_report(self) -> None:
        from test_patch_cli import _report

        from equiv.zone_device.source.patch_present import render_patch_junit

        _check_junit(render_patch_junit(_report()))


class TestModelDoc:
    """README, the docs and the reports point to docs/model.md, in the repository, not to a
    reference file a user of the repository does not have."""

    def test_no_pointer_outside_the_repository(self) -> None:
        files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "equiv").rglob("*.py"),
                 *(ROOT / "tests" / "data").rglob("*.md")]
        needle = "shared/" + "reference"
        assert [str(f) for f in files if needle in f.read_text()] == []

    def test_every_named_choice_is_in_the_doc(self) -> None:
        from equiv.slow_variants import COMPARISONS
        from equiv.template_path import REVISIONS
        from equiv.vmap.revisions import COMMON_CHOICES
        from equiv.vmap.revisions import REVISIONS as VMAP_REVISIONS

        doc = (ROOT / "docs" / "model.md").read_text()
        choices = [a for r in REVISIONS.values() for a in r.assumptions]
        choices += [a for c in COMPARISONS.values() for a in (*c.assumptions, *c.differences)]
        choices += [*COMMON_CHOICES, *(a for r in VMAP_REVISIONS.values() for a in r.choices)]
        names = [*REVISIONS, *(c.name for c in COMPARISONS.values()), *VMAP_REVISIONS]
        assert [c for c in choices if c not in doc] == []
        assert [n for n in names if f"`{n}`" not in doc] == []

    def test_the_model_functions_it_names_exist(self) -> None:
        """Each table's first column names functions of the module its section is about."""
        import importlib
        import re

        doc = (ROOT / "docs" / "model.md").read_text()
        sections = {"equiv/slow_path.py": ["equiv.slow_path"],
                    "equiv/template_path.py": ["equiv.template_path"],
                    "equiv/zone_device/source/slow_v612y.py": ["equiv.zone_device.source.slow_v612y"],
                    "equiv/vmap/": ["equiv.vmap.paths", "equiv.vmap.arch"]}
        for heading in re.split(r"\n## ", doc)[1:]:
            where = next((k for k in sections if f"`{k}`" in heading.splitlines()[0]), None)
            if where is None:
                continue
            modules = [importlib.import_module(m) for m in sections[where]]
            for row in re.findall(r"^\| (.*?) \|", heading, re.M)[1:]:
                for name in re.findall(r"`(\w+)`", row):
                    assert any(hasattr(m, name) for m in modules), (where, name)


def test_the_patch_report_names_the_pgmap_type() -> None:
    """--linux --patch counterexamples: ``pgmap_type=MEMORY_DEVICE_GENERIC``, not ``0x4``."""
    from attrs import evolve
    from test_patch_cli import _report

    from equiv.zone_device.source.patch_present import render_patch_text

    rep = _report()
    cell = rep.run.cells[0]
    head = evolve(cell.roles[1], inputs=(("nid", 0), ("pgmap_type", 4)), irrelevant=())
    rep = evolve(rep, run=evolve(rep.run, cells=(evolve(cell, roles=(
        cell.roles[0], head, cell.roles[2])),)))
    text = render_patch_text(rep, times=False)
    assert "inputs: nid=0x0, pgmap_type=MEMORY_DEVICE_GENERIC" in text
    assert not _too_wide(text.split("re-run:")[0])

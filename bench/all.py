"""Benchmark: every command of issue 18's table, timed from outside, with its target.

Each row is the real command (``python -m equiv.proofs ...`` or ``python -m pytest``) in a
fresh process, start-up included; "cold" rows get an empty cache directory of their own,
"warm" rows reuse the cold row's.  A row also checks the command's exit code (a faster
verdict must be the same verdict): a row whose command exits otherwise is FAILED whatever
its time.  Each row prints its wall time and the CPU time of the command and its worker
processes (on a shared machine the wall time grows with the load, the CPU time much less).
The table ends with the ratio of each wall time to its target (<= 1.00: met).

Usage::

    python bench/all.py                     # every row but the two test-suite ones
    python bench/all.py --suite             # also plain pytest and .ci/run's pytest --runslow
    python bench/all.py --only config-all,self-test-cold
    python bench/all.py --profile           # and where each command spends its time

``--profile`` runs each equiv command once more under cProfile (in the parent process of
the run; worker processes are not profiled, their share shows as waiting) and prints the
ten entries of largest cumulative time: term building (``equiv.*`` model and query
functions), the solver (``z3``/``bitwuzla`` calls), replay (``counterexample``/``twin``),
process start-up (``pebble``/``multiprocessing``, imports).

Targets (issue 18, 2 cores): ``--config all`` <= 20 s cold; zone-device ``--self-test``
<= 15 s cold, <= 2 s warm; ``--subject vmap --self-test`` <= 60 s; ``--compare v6.12``
orders 0..18 <= 30 s with no UNKNOWN (default solver; the Bitwuzla row is information
only, no target); ``--linux`` orders
0..18 <= 60 s; vmap: "any number of segments" in <= 60 s; plain pytest <= 3 min;
``.ci/run``'s pytest <= 20 min.
"""

from __future__ import annotations

import argparse
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from attrs import frozen

ROOT = Path(__file__).resolve().parent.parent
EQUIV = (sys.executable, "-m", "equiv.proofs", "--quiet")


@frozen
class Row:
    """One command of the table: its name, arguments, target seconds and the exit code(s)
    its verdict gives; ``cache`` is "cold", "warm" (the cold row named ``after``'s cache) or
    "none"; ``needs`` a check that it can run here (a reason when not)."""

    name: str
    argv: tuple[str, ...]
    target_s: float
    exits: tuple[int, ...] = (0,)
    cache: str = "cold"
    after: str = ""
    suite: bool = False
    expect: str = ""  # a text the output must hold (the vmap bound statement)
    #: what the command does not cover of the issue's row (the row is then not met)
    missing: str = ""
    #: why the row is shown for information only (its figure is no target of the issue)
    info: str = ""


def linux_tree() -> tuple[Path | None, str]:
    """An unpacked linux-source-6.12 the --linux row can read, or None and why not."""
    sys.path.insert(0, str(ROOT))
    from equiv.zone_device.live.ctext import source_tree

    return source_tree()


def rows(tree: Path | None) -> list[Row]:
    # --linux proves orders 0..18, the loops of both sides summarised
    linux = ("--linux", str(tree), "--orders", "0-18") if tree else ()
    return [
        Row("config-all", (*EQUIV, "--config", "all"), 20),
        Row("self-test-cold", (*EQUIV, "--self-test"), 15),
        Row("self-test-warm", (*EQUIV, "--self-test"), 2, cache="warm", after="self-test-cold"),
        Row("vmap-self-test", (*EQUIV, "--subject", "vmap", "--self-test"), 60),
        Row("compare-v6.12", (*EQUIV, "--compare", "v6.12", "--orders", "0-18"), 30, exits=(1,)),
        Row("compare-v6.12-bitwuzla", (*EQUIV, "--compare", "v6.12", "--orders", "0-18",
                                       "--solver", "bitwuzla"), 30, exits=(1,),
            info="the issue's target is the default solver; Bitwuzla shown beside it"),
        Row("linux-0-18", (*EQUIV, *linux), 60),
        Row("vmap-any-segments", (*EQUIV, "--subject", "vmap", "--revision", "v8-fix"), 60,
            expect="any number of segments"),
        Row("pytest", (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE"), 180,
            cache="none", suite=True),
        Row("ci-run-pytest", (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                              "--runslow", "--dist", "loadgroup"), 1200, cache="none", suite=True),
    ]


@frozen
class Measured:
    row: Row
    seconds: float | None
    code: int | None
    problem: str  # "" when the row's verdict is the expected one
    #: CPU seconds (user + system) of the command and its worker processes: on a shared
    #: machine the wall time grows with the load, this much less
    cpu: float | None = None


def run_row(row: Row, caches: dict[str, str], no_tree: str) -> Measured:
    if row.name == "linux-0-18" and "--linux" not in row.argv:
        return Measured(row, None, None, f"no kernel tree: {no_tree}")
    argv = list(row.argv)
    if row.cache == "cold":
        caches[row.name] = tempfile.mkdtemp(prefix=f"equiv-bench-{row.name}-")
        argv += ["--cache-dir", caches[row.name]]
    elif row.cache == "warm":
        if row.after not in caches:
            return Measured(row, None, None, f"needs the {row.after} row first")
        argv += ["--cache-dir", caches[row.after]]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    problem = ""
    if p.returncode not in row.exits:
        last = (p.stderr.strip() or p.stdout.strip()).splitlines()[-1:] or [""]
        problem = f"exit {p.returncode}, expected {'/'.join(map(str, row.exits))}: {last[0]}"
        failed = [ln.split()[1] for ln in p.stdout.splitlines() if ln.startswith(("FAILED ", "ERROR "))
                  and len(ln.split()) > 1]
        if failed:  # a test suite's row: which tests (pytest -rfE)
            problem += "; " + ", ".join(failed)
        fd, log = tempfile.mkstemp(prefix=f"equiv-bench-{row.name}-", suffix=".log")
        with open(fd, "w") as f:  # the whole output, to see why
            f.write(p.stdout + p.stderr)
        problem += f" (output: {log})"
    elif row.expect and row.expect not in p.stdout:
        problem = f"the report does not say {row.expect!r}"
    elif row.missing:
        problem = row.missing
    return Measured(row, dt, p.returncode, problem, cpu)


def profile(row: Row, top: int = 10) -> list[str]:
    """The cProfile summary of one more run of ``row`` (the parent process)."""
    if row.argv[:3] != EQUIV[:3]:
        return []
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "prof"
        argv = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "equiv.proofs",
                *row.argv[3:], "--cache-dir", str(Path(d) / "cache")]
        subprocess.run(argv, cwd=ROOT, capture_output=True, check=False)
        if not out.exists():
            return ["  (no profile written)"]
        stats = pstats.Stats(str(out))
        stats.sort_stats("cumulative")
        lines = []
        width = shutil.get_terminal_size((100, 20)).columns
        for func, (_cc, nc, _tt, ct, _callers) in sorted(
                stats.stats.items(), key=lambda kv: -kv[1][3])[:top]:  # type: ignore[attr-defined]
            file, line, name = func
            where = f"{Path(file).name}:{line}({name})" if line else name
            lines.append(f"  {ct:8.2f} s {nc:9d} calls  {where}"[:width])
        return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated row names")
    ap.add_argument("--suite", action="store_true", help="also time the test suites")
    ap.add_argument("--profile", action="store_true", help="print each command's profile")
    args = ap.parse_args(argv)
    tree, no_tree = linux_tree()
    table = rows(tree)
    names = [r.name for r in table]
    only = [n for n in args.only.split(",") if n]
    bad = [n for n in only if n not in names]
    if bad:
        print(f"bench/all.py: unknown row {bad[0]!r}; valid: {', '.join(names)}",
              file=sys.stderr)
        return 3
    chosen = [r for r in table if (r.name in only if only else (args.suite or not r.suite))]
    load = os.getloadavg()[0]
    print(f"issue 18 benchmark: {os.cpu_count()} cores, load {load:.2f} at the start")
    caches: dict[str, str] = {}
    results = []
    try:
        for row in chosen:
            m = run_row(row, caches, no_tree)
            results.append(m)
            secs = "-" if m.seconds is None else f"{m.seconds:.1f}"
            cpu = "" if m.cpu is None else f", {m.cpu:.1f} s CPU"
            print(f"  {row.name:24s} {secs:>8s} s{cpu}  (target {row.target_s:g} s)"
                  + (f"  {m.problem}" if m.problem else ""), flush=True)
            if args.profile:
                print("\n".join(profile(row)))
    finally:
        for d in caches.values():
            shutil.rmtree(d, ignore_errors=True)
    print(f"\n{'command':24s} {'seconds':>8s} {'target':>7s} {'ratio':>6s}  verdict")
    met = True
    for m in results:
        if m.seconds is None:
            met = False
            print(f"{m.row.name:24s} {'-':>8s} {m.row.target_s:7g} {'-':>6s}  {m.problem}")
            continue
        ratio = m.seconds / m.row.target_s
        ok = ratio <= 1 and not m.problem
        met &= ok or bool(m.row.info)
        verdict = "met" if ok else "NOT met"
        if m.row.info:
            verdict = f"info, {verdict.lower()} ({m.row.info})"
        print(f"{m.row.name:24s} {m.seconds:8.1f} {m.row.target_s:7g} {ratio:6.2f}  "
              f"{verdict}" + (f" ({m.problem})" if m.problem else ""))
    print(f"\nload {os.getloadavg()[0]:.2f} at the end; "
          f"{'every row met' if met else 'some rows NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

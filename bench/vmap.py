"""Benchmark of the page-table (vmap) subject: the exhaustive segment-shape check, and how far
the bound reaches within a time budget.

Usage: python bench/vmap.py [--jobs N] [--bound 8] [--budget 60] [--max-bound 32] [--quick]
                           [--no-any] [--no-self-test]

Figures to reach (issue 7): page arrays of up to 8 segments, each a physically contiguous run
of 2^k pages (k 0..9) at an arbitrary pfn (arrays of up to 4,096 pages), checked for every
segment shape - 111,111,110 shapes, every one covered by the symbolic segment orders and
count of one cell - in under 60 s on 2 cores.  Printed: the wall time of the vmap cell at the
bound on v8 (the latest revision: refuted, the finding of
docs/findings/vmap-multi-cont-crosses-runs.md) and on v8-fix (proved), run side by side on
two worker processes, the ioremap and vmalloc cells, and then, one cell at a time, the
largest bound whose vmap cell (v8-fix) is checked within the budget.

Figures of issue 18 (item 3): the cells of *any* number of segments (``--bounds any``: page
arrays of any length and any number of runs) - the wall time of v8-fix on the three paths
(ioremap, vmalloc, vmap) on two worker processes, target 60 s on 2 cores, and v8's finding
on that cell - and the wall time of ``python -m equiv.proofs --subject vmap --self-test``
(target 60 s), run as a command in a fresh process without the result cache.  Both also
print CPU seconds, which a machine busy with other work inflates far less than the wall
time.  Measured 2026-12-02 with other runs loading the 2 cores (load 7-14): the any cells
28.4 s CPU (vmap 13.8, vmalloc 9.6, ioremap 5.0; about 15 s on two free cores, 61-85 s
wall under that load); the self-test 150 s CPU (about 75 s on two free cores).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import z3

from equiv.engine.query import default_backend
from equiv.engine.results import CellResult
from equiv.engine.verdict import Verdict
from equiv.vmap import MAX_SEG_ORDER, bound_description, check
from equiv.vmap.names import ANY

ROOT = Path(__file__).resolve().parent.parent


def shapes(bound: int) -> int:
    """Segment shapes of 1..bound segments, each of order 0..MAX_SEG_ORDER."""
    k = MAX_SEG_ORDER + 1
    return sum(k**m for m in range(1, bound + 1))


def _cell(job: tuple[str, int, str]) -> CellResult:
    path, bound, rev = job
    return check(path, bound, rev, None, 60_000, None)


def _cell_cpu(job: tuple[str, int, str]) -> tuple[CellResult, float]:
    """The cell and the CPU seconds its worker spent on it (a figure a busy machine
    inflates less than the wall time)."""
    t0 = time.process_time()
    r = _cell(job)
    return r, time.process_time() - t0


def _summary(r: CellResult) -> str:
    counts: dict[str, int] = {}
    for o in r.obligations:
        counts[o.verdict.value.lower()] = counts.get(o.verdict.value.lower(), 0) + 1
    refuted = [o.name for o in r.obligations if o.verdict is Verdict.REFUTED]
    text = ", ".join(f"{n} {v}" for v, n in counts.items())
    return f"{len(r.obligations)} obligations: {text}" + (
        f"; refuted: {', '.join(refuted)}" if refuted else ""
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="worker processes for the figure (default 2)")
    ap.add_argument("--bound", type=int, default=8, help="segments of the exhaustive check (default 8)")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds a cell may take for the reach")
    ap.add_argument("--max-bound", type=int, default=32, help="stop the reach search at this bound")
    ap.add_argument("--quick", action="store_true", help="skip the reach search")
    ap.add_argument("--no-any", action="store_true", help="skip the cells of any number of segments")
    ap.add_argument("--no-self-test", action="store_true", help="skip timing --self-test")
    args = ap.parse_args()

    solver = default_backend()
    ver = z3.get_version_string()
    if solver == "bitwuzla":
        from importlib.metadata import version

        ver += f", Bitwuzla {version('bitwuzla')}"
    print(f"vmap subject (arm64-4k), solver {solver} (z3 {ver}), {args.jobs} jobs on {os.cpu_count()} cores")
    b = args.bound
    ok = True
    if not args.no_any:
        ok &= any_segments(args.jobs)
    if not args.no_self_test:
        ok &= self_test_time()
    print(f"exhaustive segment shapes, bound {b}: {shapes(b):,} shapes")
    print(f"  ({bound_description(b)})")
    jobs = [("vmap", b, "v8-fix"), ("vmap", b, "v8")]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(
        max_workers=max(1, args.jobs), mp_context=multiprocessing.get_context("fork")
    ) as pool:
        results = list(pool.map(_cell, jobs))
    wall = time.perf_counter() - t0
    for (path, _, rev), r in zip(jobs, results, strict=True):
        print(f"  {rev:7s} {path:7s} {r.verdict.value:8s} {r.seconds:6.1f} s  {_summary(r)}")
    met = "met" if wall < 60 else "NOT met"
    print(f"  wall {wall:.1f} s with {args.jobs} jobs (target < 60 s on 2 cores: {met})")
    others = []
    for path in ("ioremap", "vmalloc"):
        r = _cell((path, b, "v8"))
        others.append(f"{path} {r.verdict.value} {r.seconds:.1f} s")
    print(f"other paths at bound {b} (v8): {', '.join(others)}")
    ok &= wall < 60
    if args.quick:
        return 0 if ok else 1
    print(f"reach within {args.budget:.0f} s (vmap, v8-fix, one cell at a time, 1 job):")
    reached = 0
    bound = 1
    while bound <= args.max_bound:
        r = _cell(("vmap", bound, "v8-fix"))
        ok = r.verdict is Verdict.PROVED and r.seconds <= args.budget
        print(
            f"  bound {bound:3d} ({shapes(bound):.3g} shapes): {r.verdict.value} in {r.seconds:.1f} s"
            + ("" if ok else "  (over the budget)" if r.seconds > args.budget else "")
        )
        if not ok:
            break
        reached = bound
        bound += 1
    print(f"  -> within {args.budget:.0f} s the bound reaches {reached} segment{'s' * (reached != 1)}")
    return 0 if ok else 1


def any_segments(jobs: int) -> bool:
    """v8-fix on the three paths with any number of segments, side by side on ``jobs``
    worker processes (the vmap cell first: it is the longest), then v8's vmap cell."""
    print(f"bound any: {bound_description(ANY)}")
    cells = [("vmap", ANY, "v8-fix"), ("vmalloc", ANY, "v8-fix"), ("ioremap", ANY, "v8-fix")]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(
        max_workers=max(1, jobs), mp_context=multiprocessing.get_context("fork")
    ) as pool:
        timed = list(pool.map(_cell_cpu, cells))
    wall = time.perf_counter() - t0
    results = [r for r, _ in timed]
    for (path, _, rev), (r, cpu) in zip(cells, timed, strict=True):
        print(f"  {rev:7s} {path:7s} {r.verdict.value:8s} {r.seconds:6.1f} s (cpu {cpu:5.1f} s)  "
              f"{_summary(r)}")
    proved = all(r.verdict is Verdict.PROVED for r in results)
    met = "met" if wall <= 60 and proved else "NOT met"
    cpu = [c for _, c in timed]
    print(f"  v8-fix on all three paths: wall {wall:.1f} s with {jobs} jobs "
          f"(target <= 60 s on 2 cores: {met}); cpu {sum(cpu):.1f} s, on two free cores about "
          f"{max(cpu[0], sum(cpu[1:])):.1f} s")
    r = _cell(("vmap", ANY, "v8"))
    print(f"  v8      vmap    {r.verdict.value:8s} {r.seconds:6.1f} s  {_summary(r)}")
    return wall <= 60 and proved and r.verdict is Verdict.REFUTED


def self_test_time() -> bool:
    """``python -m equiv.proofs --subject vmap --self-test`` as a command (fresh process, no
    cache): its wall time and exit code."""
    cmd = [sys.executable, "-m", "equiv.proofs", "--subject", "vmap", "--self-test", "--no-cache"]

    def children_cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    c0, t0 = children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    met = "met" if wall <= 60 and done.returncode == 0 else "NOT met"
    print(f"--subject vmap --self-test: exit {done.returncode} in {wall:.1f} s (target <= 60 s: {met}); "
          f"cpu {cpu:.1f} s, on two free cores about {cpu / 2:.1f} s")
    for line in done.stdout.splitlines():
        if line.startswith(("equiv self-test", "self-test", "vmap")) or "killed" in line:
            print(f"  {line}")
            break
    return wall <= 60 and done.returncode == 0


if __name__ == "__main__":
    sys.exit(main())

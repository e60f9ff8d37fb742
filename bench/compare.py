"""Benchmark: ``--compare v6.12`` at every order 0..18 (issues 17 and 18).

Runs ``python -m equiv.proofs --compare v6.12 --no-cache --quiet --format json`` cold (no
result cache) with the default solver (z3 with its deterministic budget) and with
``--solver bitwuzla``, ``--repeat`` times each, and prints the median wall time against the
target (30 s on 2 cores), the ratio, the verdicts (an UNKNOWN cell fails the figure) and the
machine's load (``uptime``: the cores are shared, so wall times are noisy).

With ``--profile`` it also runs the same cells in this process (``--jobs 1``) under cProfile
and prints where the time goes: process start-up (importing equiv), building the terms of
both paths, the solver (z3's check), the concrete replay of counterexamples, steering and
explaining them, and the top functions.

With ``--resources`` it runs the cells in this process as :func:`equiv.zone_device.cell.run_matrix`
groups them and prints z3's resource count (deterministic, unlike seconds on a shared
machine) per group and per kind of query.

Usage: python bench/compare.py [--orders 0-18] [--jobs N] [--repeat N] [--solvers z3,bitwuzla]
                               [--profile] [--profile-orders LIST] [--resources]

Figures (2026-12-02, 2 cores shared with other work, load 5-8): before this work the
default solver left orders 0..18 UNKNOWN (pageblock and loop-lemma queries over z3's 60 s
wall-clock limit; 368 s for order 0 alone with one job) and ``--solver bitwuzla --orders
0-4`` took 538 s and ended UNKNOWN.  After (load 7-13, 2 jobs): orders 0..17 decided by the
default solver in 11 min CPU (32 min wall), order 18 past the 900 s backstop; ``--solver
bitwuzla`` decides order 2 in 38 s CPU.  Profile (one process): at orders 0..2 z3 and the
counterexample steering dominate (order 2, five types: 96 s -> 50 s after queries were
sliced and repeated tries memoised); from order 12 up the concrete replay of the tail
counterexample (every one of 2^order struct pages, in Python) does (71 % at order 15).

Issue 18 (2026-12-02; CPU seconds of each order's group of five types in one process, as
``run_group`` runs it; the machine's load was 5-11 before and 9-15 after, and a busier
machine costs more CPU per query: order 0 took 3.4 s at load 5 and 5.0 s at load 15 with
the same code).  Before: 3.4, 16.5, 23.6, 29.0, 26.5, 29.2, 31.2, 32.2, 38.1, 30.9, 17.6,
19.7, 20.2, 19.2, 27.6, 36.1, 56.4, 94.7 s for orders 0..17 (552 s), order 18 not decided
within the 900 s backstop (the replay doubles per order).  The replay now runs lazily
(equiv.loops._LazyLoop: only the iterations whose struct pages the observation reads;
order 15: 73 s -> 16 s under cProfile), steering and explaining run on sliced queries
shared between the types' cells.  After: 4.8, 5.2, 9.5, 12.4, 10.6, 13.8, 9.8, 10.8,
18.1, 14.9, 13.0, 11.0, 10.2, 9.6, 12.5, 10.0, 10.5, 12.5, 8.3 s for orders 0..18 (208 s;
every verdict and every refuted field as before, but one tail counterexample of order 11
whose initial memory the solver chose differently).  This script, 2 jobs, load 11-14: all
95 cells decided (3 PROVED, 92 REFUTED) in 223 s CPU, 750 s wall.  Where an order's time
goes now (order 4, one process, 9.6 s): z3 on the loop lemmas and role queries 4.4 s
(the tails loop's frame-read try under the first-try budget alone 1.1 s, then proved in
parts), steering 2.4 s (19 checks for the five types), explaining 1.2 s, building both
paths' terms, the replays and the rest 1.5 s.

Issue 18, second pass (2026-12-03 afternoon; the machine shared with two other agents, load
1-6, so CPU seconds are compared back to back and z3's resource count, which does not
depend on load, is the figure: ``--resources``).  Before: 372 M of z3's resource count
for orders 0..18 in one process (the 6.12 loops' lemmas of the class probes 2-7 and 8-18:
45.5 M and 98.6 M, each failed first try 2 M); ``python -m equiv.proofs --compare v6.12
--orders 0-18`` cold on 2 jobs took 93-114 s CPU (85 s at load 2.5; 74 s on idle cores in
the morning), its 8-18 class group alone half of it in one worker.  After: 315 M; 78-97 s
CPU back to back with 93-114 s before (-15 %).  What changed: the page roles read the 6.12
heads summary at ``c`` itself, not at ``extract(127, 64, concat(c, t))`` (the same value,
another term, which ran the body again with its own tails loop: two instantiations of the
6.12 tails loop's lemmas instead of four; order 12's probe 11.2 M -> 7.4 M); a probe's
first lemma tries on 20,000 instead of 2 M (they never succeed on the 6.12 loops); and
v6.12 (a comparison with known differences, whose class probe can never prove its class)
runs order by order: per-order probes prove the lemmas for about what the class did
(orders 8-18: 116 M order by order, 99 M as a class) and the 19 groups spread evenly over
the workers.  Where the 315 M go: the 6.12 loops' lemma conjuncts 106 M (the pageblock
index arithmetic: ``(b << 9) - head == t`` from ``b == (head + t) >> 9`` and alignment,
about 10x cheaper for z3 stated ``b << 9 == head + t``, which the lemma's form in
equiv.loops does not allow an owner to choose), steering counterexamples 97 M and
explaining them 44 M (20 checks that ran out of their 2 M budget: 40 M; a smaller budget
saved nothing, the preferences it drops cost as much later), the pageblock role's query
63 M (order 0's UNSAT pageblock proof alone 17 M).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from profiling import bucket_lines  # bench/profiling.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_S = 30.0


def _load() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "uptime unavailable"


def one_run(orders: str, jobs: int, solver: str) -> tuple[float, float, dict[str, int]]:
    """Wall and CPU seconds (the children's rusage: workers included) of one cold run and
    how many cells got each verdict."""
    cmd = [sys.executable, "-m", "equiv.proofs", "--compare", "v6.12", "--orders", orders,
           "--no-cache", "--quiet", "--format", "json", "--jobs", str(jobs)]
    if solver != "z3":
        cmd += ["--solver", solver]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    counts: dict[str, int] = {}
    try:
        data = json.loads(p.stdout)
        for run in data.get("runs", [data]):
            for cell in run.get("cells", []):
                v = cell.get("verdict", "?")
                counts[v] = counts.get(v, 0) + 1
    except json.JSONDecodeError:
        counts[f"unreadable output (exit {p.returncode})"] = 1
    return wall, cpu, counts


def startup_seconds() -> float:
    """Wall seconds of ``python -m equiv.proofs --version`` (interpreter and imports)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "equiv.proofs", "--version"], capture_output=True,
                   cwd=ROOT, check=False)
    return time.perf_counter() - t0


#: where profile time is attributed: (label, function-name fragments, any of which counts)
BUCKETS = (
    ("solver (z3 check)", ("Z3_solver_check_assumptions",)),
    ("bitwuzla / SMT-LIB export", ("check_bitwuzla", "smtlib")),
    ("building both paths' terms", ("build_cell",)),
    ("concrete replay of counterexamples", ("replay",)),
    ("steering counterexamples (prefer_small, sliced)", ("prefer_small", "steer_sliced")),
    ("explaining counterexamples (minimise)", ("minimise",)),
)


def profile(orders: list[int], solver: str) -> str:
    """Profile the cells of ``orders`` in this process; a text summary."""
    from equiv.engine.query import clear_answers
    from equiv.memmap import MemoryType
    from equiv.zone_device.cell import CellSpec, run_group

    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    for o in orders:
        run_group([CellSpec(config="x86_64-default", revision="compare:v6.12", ptype=t, order=o,
                            rlimit=1_000_000_000, solver=solver) for t in MemoryType])
    pr.disable()
    clear_answers()
    wall = time.perf_counter() - t0
    return "\n".join([f"profile ({solver}, orders {orders}, one process): {wall:.1f} s",
                      *bucket_lines(pr, BUCKETS, wall)])


def resources(orders: list[int]) -> str:
    """z3's resource count (``rlimit count``) of the cells of ``orders`` run in this process
    as the run groups them, per group and per kind of query (the query's name, or the
    function that asked it); a text summary."""
    import re
    from collections import Counter

    import z3

    from equiv.engine.solvers import DEFAULT_RLIMIT
    from equiv.memmap import MemoryType
    from equiv.zone_device.cell import CellSpec, order_groups, run_group

    kinds: Counter[str] = Counter()
    plain = z3.Solver.check

    def count(s: z3.Solver) -> int:
        try:
            return int(s.statistics().get_key_value("rlimit count"))
        except z3.Z3Exception:
            return 0

    def check(self: z3.Solver, *extra: z3.ExprRef) -> z3.CheckSatResult:
        caller = sys._getframe(1)
        name = caller.f_locals.get("name") if caller.f_code.co_name == "check" else None
        kind = re.sub(r"-\d+$", "", str(name)) if name else caller.f_code.co_name
        before = count(self)
        r = plain(self, *extra)
        kinds[f"{kind} ({r})"] += count(self) - before
        return r

    specs = [CellSpec(config="x86_64-default", revision="compare:v6.12", ptype=t, order=o,
                      rlimit=DEFAULT_RLIMIT)
             for o in orders for t in MemoryType]
    lines = []
    z3.Solver.check = check  # type: ignore[method-assign]
    try:
        for idx in order_groups(specs):
            before = sum(kinds.values())
            run_group([specs[i] for i in idx])
            got = sorted({specs[i].order for i in idx})
            lines.append(f"  orders {got[0]}-{got[-1]}: {(sum(kinds.values()) - before) / 1e6:.1f} M")
    finally:
        z3.Solver.check = plain  # type: ignore[method-assign]
    lines.append(f"  total {sum(kinds.values()) / 1e6:.1f} M; by kind of query:")
    lines += [f"    {n / 1e6:7.1f} M  {k}" for k, n in kinds.most_common(15)]
    return "\n".join([f"z3 resource count, orders {orders[0]}..{orders[-1]}, one process:", *lines])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", default="0-18")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--solvers", default="z3,bitwuzla")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--profile-orders", default="0,2,12")
    ap.add_argument("--resources", action="store_true",
                    help="only z3's resource count per group and kind of query (one process)")
    a = ap.parse_args()
    if a.resources:
        lo, _, hi = a.orders.partition("-")
        print(resources(list(range(int(lo), int(hi or lo) + 1))))
        return 0
    print(f"--compare v6.12, orders {a.orders}, cold (--no-cache), {a.jobs} jobs; "
          f"{os.cpu_count()} cores")
    print(f"load before: {_load()}")
    print(f"start-up (python -m equiv.proofs --version): {startup_seconds():.2f} s")
    rows = []
    for solver in a.solvers.split(","):
        walls, cpus, verdicts = [], [], {}
        for _ in range(a.repeat):
            w, c, counts = one_run(a.orders, a.jobs, solver)
            walls.append(w)
            cpus.append(c)
            verdicts = counts
            print(f"  {solver:9} wall {w:7.1f} s  cpu {c:7.1f} s  {counts}", flush=True)
        rows.append((solver, statistics.median(walls), statistics.median(cpus), verdicts))
    print(f"load after: {_load()}")
    print()
    cores = os.cpu_count() or 1
    print(f"{'figure':52} {'median':>8} {'target':>7} {'ratio':>6}  verdicts")
    for solver, med, cpu, counts in rows:
        label = f"--compare v6.12 orders {a.orders}, {solver}, wall"
        print(f"{label:52} {med:8.1f} {TARGET_S:7.0f} {med / TARGET_S:6.2f}  {counts}"
              + ("  UNKNOWN: figure not met" if counts.get("UNKNOWN") else ""))
        label = f"  the same, cpu / {cores} cores (a busy machine's wall aside)"
        print(f"{label:52} {cpu / cores:8.1f} {TARGET_S:7.0f} {cpu / cores / TARGET_S:6.2f}")
    if a.profile:
        print()
        orders = [int(x) for x in a.profile_orders.split(",")]
        print(profile(orders, a.solvers.split(",")[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

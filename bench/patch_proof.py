"""Benchmark: the source-level proof of the project's 6.12 backport (issue 15, point 6).

Applies ``tests/data/zone-device-backport-6.12/series/*.patch`` to a private copy of a
linux-source-6.12 tree and proves it equal to the tree's own C with the loops summarised
(:mod:`equiv.zone_device.source.patchproof`): all five pgmap types at once (``pgmap->type`` symbolic),
orders 0..18, the default configuration.  Then, for the ratio, the interpreter with its loops
unrolled (the ``--linux`` source-derived proof of :mod:`equiv.zone_device.source.fidelity`, bounded to four
compounds) on the same tree, order by order while an order takes under the limit.

Prints one row per order (seconds, verdict) and the table of figures: the whole proof's
wall and CPU time (this process and its workers) against the target (issue 32: 30 s on 2
cores, cold; goal 10 s) and its ratio to the figure before issue 32's work (:data:`BEFORE_S`),
and the unrolled interpreter's time at the largest order it finished against the summarised
proof's time at that order (``--no-unrolled``: skipped).

Usage: python bench/patch_proof.py [--tree PATH] [--orders 0-18]
                                   [--config NAME | --kconfig FILE]
                                   [--jobs N] [--unrolled-limit SECONDS] [--no-unrolled]
                                   [--classes] [--per-patch]
                                   [--profile [--profile-orders LIST]]

``--per-patch`` then proves the series patch by patch as ``--per-patch`` does
(:func:`~equiv.zone_device.source.patchproof.run_series_proof`: each tree interpreted once
per cell, the series by transitivity when every patch is proved) and prints its time
against the end-to-end proof's (issue 32: the per-patch report should cost little more).

``--profile`` then runs the cells of ``--profile-orders`` (default 9,10) again in this
process, one after another (the sides read once, as a worker does), and prints each cell's
CPU time and where z3's checks went (:func:`z3_buckets`): the interpreter's oracle,
``specialise``'s decisions, the role cases' presence checks, the role words, the loop
lemmas, and the rest; the first cell of a process also reads the trees, and the second
proves the order-free queries the later ones take (``clemmas.FREE_PROVED``).  Measured
2026-12-06 14:00 (idle, order 11 after 9 and 10): 3.6 s CPU, z3 2.9 s of it: decisions
1.1 s (63 checks), oracle 0.75 s (47), loop lemmas 0.7 s (60), words 0.1 s, presence
0.07 s (the same morning, before adaptive peeling: 11-12 s CPU).

``--tree`` defaults to the tests' cached tree (``$XDG_CACHE_HOME/equiv/linux-source-6.12``,
made by ``pytest tests/test_linux_tree.py``) or ``/usr/src/linux-source-6.12`` unpacked.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FuturesTimeout
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pebble import ProcessPool

if TYPE_CHECKING:
    from equiv.config import Config

ROOT = Path(__file__).resolve().parent.parent
SERIES = ROOT / "tests" / "data" / "zone-device-backport-6.12" / "series"
#: issue 32's target for orders 0..18 on 2 cores, cold (its goal: 10 s)
TARGET_S = 30.0
#: the whole proof, orders 0..18, 2 jobs, before issue 32's work (commit 7a33423: 79 s on an
#: idle 2-core machine, as issue 32 measured; 288 s wall, 205 s CPU at load ~5, docs/speed.md;
#: commit 600d8e5: 326 s wall, 201 s CPU at load 6-7)
BEFORE_S = 79.0


def _default_tree() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for cand in (Path(base) / "equiv" / "linux-source-6.12" / "linux-source-6.12",
                 Path(base) / "equiv" / "linux-source-6.12",  # (the tests' file subset)
                 Path("/usr/src/linux-source-6.12")):
        if (cand / "mm" / "mm_init.c").is_file():
            return cand
    raise SystemExit("bench/patch_proof.py: no linux-source-6.12 tree; give --tree PATH "
                     "(run `pytest tests/test_linux_tree.py` once to cache one)")


def _unrolled(tree: str, cfg_name: str, order: int) -> tuple[float, str]:
    from equiv.config import PRESETS
    from equiv.zone_device.source.fidelity import model_for, run_fidelity, setup
    from equiv.zone_device.source.files import load_tree

    t0 = time.perf_counter()
    kt = load_tree(tree)
    st = setup(kt, PRESETS[cfg_name], model_for(kt, None))
    run = run_fidelity(st, [None], [order])
    return time.perf_counter() - t0, run.verdict.value


def _per_patch(tree: Path, cfg: Config, orders: list[int], jobs: int,
               tmp: Path) -> tuple[float, float, str]:
    """The series proved patch by patch: wall and CPU seconds, and what it found."""
    from equiv.linux.patch import prepare_steps
    from equiv.zone_device.source.files import FILES
    from equiv.zone_device.source.patchproof import run_series_proof

    steps = prepare_steps(tree, FILES, sorted(SERIES.glob("*.patch")), tmp / "steps")
    t0, cpu0 = time.perf_counter(), _cpu()
    sr = run_series_proof([tree, *(s.root for s in steps)], cfg,
                          [None], orders, labels=[s.patches[-1].label for s in steps],
                          series_label="series", jobs=jobs)
    dt, cpu = time.perf_counter() - t0, _cpu() - cpu0
    by = sum(1 for c in sr.series.cells if c.by_steps)
    says = (f"patches: {', '.join(r.verdict.value for r in sr.steps)}; series "
            f"{sr.series.verdict.value}, {by} of {len(sr.series.cells)} cells by transitivity")
    return dt, cpu, says


def _print_per(per: tuple[float, float, str], total: float) -> None:
    dt, pcpu, says = per
    print(f"{'--per-patch (every patch, the series by transitivity) (s)':58} {dt:10.1f} "
          f"{'':>8} {dt / total:7.2f}")
    print(f"{'  CPU (s); the ratio: to the end-to-end proof':58} {pcpu:10.1f}")
    print(f"  {says}")


#: z3's checks by the first of these functions on the stack (innermost first), in order
BUCKETS = (("oracle (path feasibility)", ("_check", "constant_difference")),
           ("specialise's decisions", ("specialise",)),
           ("role cases' presence", ("present",)),
           ("role words", ("_case_words",)),
           ("loop lemmas", ("prove_lemmas",)))


#: the bucket of the second solver's queries (solvers.decide: the loop lemmas' conjuncts
#: Bitwuzla is asked first; they are not also in a z3 bucket)
SECOND = "Bitwuzla, asked first"


def z3_buckets(cells: list[tuple[int, Callable[[], str]]]) -> str:
    """Run each ``(order, thunk)`` in this process with every ``z3.Solver.check`` timed and
    put in the first :data:`BUCKETS` entry one of whose functions is on the stack, and every
    query of the second solver (:data:`SECOND`) timed; a text summary per cell."""
    import traceback

    import z3

    from equiv.engine import solvers

    rec: list[tuple[str, float, bool]] = []
    orig = z3.Solver.check
    orig_decide = solvers.decide

    def decide(name: str, assertions: list[z3.BoolRef], timeout_ms: int) -> str:
        t0 = time.perf_counter()
        r = orig_decide(name, assertions, timeout_ms)
        rec.append((SECOND, time.perf_counter() - t0, r == "unsat"))
        return r

    def check(self: z3.Solver, *a: z3.ExprRef) -> z3.CheckSatResult:
        t0 = time.perf_counter()
        r = orig(self, *a)
        dt = time.perf_counter() - t0
        names = {f.name for f in traceback.extract_stack(limit=12)}
        label = next((lb for lb, fns in BUCKETS if names & set(fns)), "other")
        rec.append((label, dt, r == z3.unsat))
        return r

    lines = []
    z3.Solver.check = check
    solvers.decide = decide
    try:
        for order, thunk in cells:
            rec.clear()
            c0, t0 = _cpu(), time.perf_counter()
            verdict = thunk()
            cpu, wall = _cpu() - c0, time.perf_counter() - t0
            z = sum(r[1] for r in rec)
            lines.append(f"  order {order:2}: {verdict} {wall:.1f} s wall, {cpu:.1f} s CPU; "
                         f"{len(rec)} checks (z3's and Bitwuzla's), {z:.1f} s")
            for label in [lb for lb, _ in BUCKETS] + ["other", SECOND]:
                mine = [r for r in rec if r[0] == label]
                if mine:
                    uns = sum(r[1] for r in mine if r[2])
                    lines.append(f"    {label:28} {len(mine):4} checks {sum(r[1] for r in mine):6.2f} s"
                                 f"  (UNSAT {uns:.2f} s)")
    finally:
        z3.Solver.check = orig
        solvers.decide = orig_decide
    return "\n".join(lines)


def _profile(tree: Path, patched: Path, cfg: Config, orders: list[int]) -> str:
    from equiv.zone_device.source.patchproof import _cell_worker

    def thunk(o: int) -> Callable[[], str]:
        return lambda: _cell_worker(str(tree), str(patched), cfg, None, o, 60_000).verdict.value

    return z3_buckets([(o, thunk(o)) for o in orders])


def _cpu() -> float:
    """CPU seconds of this process and of its ended children (the workers)."""
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def _unrolled_rows(tree: Path, cfg_name: str, limit: float) -> tuple[int, float] | None:
    """The unrolled interpreter's rows, orders 0.. while an order takes under ``limit``
    seconds; the largest order it finished and its time."""
    unrolled: tuple[int, float] | None = None
    with ProcessPool(max_workers=1) as pool:
        for order in range(5):
            fut = pool.schedule(_unrolled, args=(str(tree), cfg_name, order), timeout=limit)
            try:
                dt, verdict = fut.result()
            except (FuturesTimeout, TimeoutError):
                print(f"  unrolled interpreter, order {order}: over {limit:.0f} s")
                break
            print(f"  unrolled interpreter (base tree vs hand model, <= 4 compounds), order "
                  f"{order}: {verdict} {dt:.1f} s")
            unrolled = (order, dt)
    return unrolled


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=None)
    ap.add_argument("--orders", default="0-18")
    ap.add_argument("--config", default="x86_64-default")
    ap.add_argument("--kconfig", type=Path, default=None,
                    help="a kernel .config (e.g. Debian's 6.12 amd64 config) instead of --config")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--unrolled-limit", type=float, default=600.0)
    ap.add_argument("--no-unrolled", action="store_true",
                    help="skip the unrolled interpreter's rows (minutes)")
    ap.add_argument("--classes", action="store_true",
                    help="each order class first tried with one probe, the order symbolic "
                         "(run_patch_proof(..., classes=True); off by default: slower, "
                         "docs/speed.md)")
    ap.add_argument("--profile", action="store_true",
                    help="then run --profile-orders in this process and print where z3's "
                         "checks went")
    ap.add_argument("--profile-orders", default="9,10")
    ap.add_argument("--per-patch", action="store_true",
                    help="also prove the series patch by patch (--per-patch) and print its "
                         "time against the end-to-end proof's")
    a = ap.parse_args()

    from equiv.config import PRESETS
    from equiv.engine.errors import parse_ranges
    from equiv.linux.patch import prepare
    from equiv.zone_device.source.files import FILES
    from equiv.zone_device.source.patchproof import MAX_ORDER, run_patch_proof

    tree = a.tree or _default_tree()
    orders = parse_ranges(a.orders, 0, MAX_ORDER, "--orders", "order", "")
    if a.kconfig is not None:
        from equiv.config import from_kconfig

        cfg = from_kconfig(str(a.kconfig))
    else:
        cfg = PRESETS[a.config]
    with tempfile.TemporaryDirectory() as tmp:
        applied = prepare(tree, FILES, sorted(SERIES.glob("*.patch")), Path(tmp) / "patched")
        t0 = time.perf_counter()
        cpu0 = _cpu()
        run = run_patch_proof(tree, applied.root, cfg, [None], orders, label="series",
                              jobs=a.jobs, classes=a.classes)
        total = time.perf_counter() - t0
        cpu = _cpu() - cpu0
        per = _per_patch(tree, cfg, orders, a.jobs, Path(tmp)) if a.per_patch else None
        prof = _profile(tree, applied.root, cfg, [int(x) for x in a.profile_orders.split(",")]) \
            if a.profile else None
    print(f"source-level proof of the backport series, {cfg.name}, all five types, "
          f"{a.jobs} jobs")
    per_order: dict[int, float] = {}
    for c in run.cells:
        per_order[c.order] = c.seconds
        lemmas = sum(r.seconds for r in c.roles if r.name == "loop_summary_lemmas")
        by = "" if c.row_class is None else f"  [class {c.row_class[0]}..{c.row_class[1]}]"
        print(f"  order {c.order:2}: {c.verdict.value:8} {c.seconds:7.1f} s  "
              f"(loop lemmas {lemmas:5.1f} s){by}")
    print(f"  verdict: {run.verdict.value}")

    unrolled = None if a.no_unrolled else _unrolled_rows(tree, cfg.name, a.unrolled_limit)
    print()
    print(f"{'figure':58} {'this run':>10} {'target':>8} {'ratio':>7}")
    print(f"{'whole proof, orders ' + a.orders + ' (s)':58} {total:10.1f} {TARGET_S:8.0f} "
          f"{total / TARGET_S:7.2f}")
    print(f"{'  CPU, this process and its workers (s)':58} {cpu:10.1f}")
    print(f"{'  before issue 32 (s, idle 2 cores) / this run':58} {BEFORE_S:10.1f} {'':>8} "
          f"{BEFORE_S / total:7.2f}")
    print(f"{'  load average (1 min) at the end':58} {os.getloadavg()[0]:10.1f}")
    if per is not None:
        _print_per(per, total)
    if prof is not None:
        print(f"profile (orders {a.profile_orders}, one process, one after another):")
        print(prof)
    if unrolled is not None and unrolled[0] in per_order:
        o, dt = unrolled
        print(f"{f'unrolled / summarised at order {o} (largest unrolled)':58} "
              f"{dt / per_order[o]:10.2f} {'':>8} {'':>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the full default proof matrix (5 pgmap types x orders 0..18), wall time, and
the cost of order-18 cells against order-1 cells.

Usage: python bench/matrix.py [--jobs N]

Figure to reach (issue 2): the whole matrix in under 10 s wall on a 2-core machine, with
the order-18 / order-1 cell-time ratio near 1 (cost must not grow with the order: order 18
is proved with a symbolic page index and induction, not by enumerating 262,144 pages).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from equiv.engine.query import clear_answers
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.zone_device.cell import CellSpec, run_cell, run_matrix


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of the per-order timing")
    args = ap.parse_args()

    specs = [CellSpec(config="x86_64-default", revision="v11", ptype=t, order=o)
             for o in range(19) for t in MemoryType]
    results, wall, jobs = run_matrix(specs, args.jobs)
    bad = [r for r in results if r.verdict is not Verdict.PROVED]
    print(f"default matrix: {len(results)} cells, {len(results) - len(bad)} proved, "
          f"wall {wall:.2f} s with {jobs} jobs on {os.cpu_count()} cores "
          f"(target < 10 s on 2 cores: {'met' if wall < 10 else 'NOT met'})")

    # the matrix's own unit of work: one proof per order covering every type
    per_order = {r.order: r.seconds for r in results if r.all_types}
    if 1 in per_order and 18 in per_order:
        print(f"default matrix, proof of one order for every type (pgmap->type symbolic): "
              f"order 18 {per_order[18]:.2f} s, order 1 {per_order[1]:.2f} s, ratio "
              f"{per_order[18] / per_order[1]:.2f} (target <= 1.5: "
              f"{'met' if per_order[18] / per_order[1] <= 1.5 else 'NOT met'})")

    # per-order cost of one cell, measured cold (no shared answers)
    print(f"\nper-cell time, GENERIC, median of {args.repeat} (jobs=1, build + solve):")
    print("order  seconds  obligations  seconds/obligation")
    med: dict[int, float] = {}
    per_ob: dict[int, float] = {}
    for order in range(19):
        times = []
        for _ in range(args.repeat):
            clear_answers()  # a cold cell: no answer shared from an earlier run
            t0 = time.perf_counter()
            r = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC,
                                  order=order))
            times.append(time.perf_counter() - t0)
            assert r.verdict is Verdict.PROVED
        med[order] = statistics.median(times)
        per_ob[order] = med[order] / len(r.obligations)
        print(f"{order:5d}  {med[order]:7.3f}  {len(r.obligations):11d}  {per_ob[order]:.4f}")
    print(f"\norder-18 / order-1 cell time: {med[18] / med[1]:.2f}; per obligation: "
          f"{per_ob[18] / per_ob[1]:.2f}  (order 1 has no tail 2 / tail t >= 3 roles and no "
          "template tail loop, so fewer obligations)")
    print(f"order-18 / order-2 cell time: {med[18] / med[2]:.2f}  (order 2 is the first order "
          "with every page role: head, tail 1, tail 2, tail t >= 3)")
    print(f"order-18 / mean of orders 2..17: {med[18] / statistics.mean(med[o] for o in range(2, 18)):.2f}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())

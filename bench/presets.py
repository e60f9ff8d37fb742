"""Benchmark: every configuration preset x pgmap type x order (issues 3 and 8).

Usage: python bench/presets.py [--jobs N]

Figure to reach: all presets in under 60 s wall on 2 cores.  Prints the wall time of the
whole sweep, each preset's share of the CPU time, and the obligations decided per second
(no result cache: every query is decided).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from equiv.config import PRESETS
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.zone_device.cell import CellSpec, run_matrix


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    specs = [CellSpec(config=cfg, revision="v11", ptype=t, order=o) for cfg in PRESETS.values()
             for o in range(cfg.max_order + 1) for t in MemoryType]
    t0 = time.perf_counter()
    results, wall, jobs = run_matrix(specs, args.jobs)
    bad = [r for r in results if r.verdict is not Verdict.PROVED]
    print(f"{'preset':32s} {'cells':>5s} {'cpu s':>7s}")
    for name in PRESETS:
        mine = [r for r in results if r.config == name]
        # a proof for all types of an order is one piece of work shown in five cells
        shared = {r.order: r.seconds for r in mine if r.all_types}
        alone = sum(r.seconds for r in mine if not r.all_types)
        print(f"{name:32s} {len(mine):5d} {alone + sum(shared.values()):7.1f}")
    nob = sum(len(r.obligations) for r in results)
    print(f"\n{nob} obligations in {wall:.1f} s: {nob / wall:.0f} obligations per second "
          f"({jobs} jobs)")
    print(f"{len(results)} cells, {len(results) - len(bad)} proved; wall {wall:.1f} s with "
          f"{jobs} jobs on {os.cpu_count()} cores (target < 60 s: "
          f"{'met' if wall < 60 else 'NOT met'}); total {time.perf_counter() - t0:.1f} s")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())

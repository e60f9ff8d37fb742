"""Benchmark: the default matrix decided by each solver, side by side (issue 4's figure).

Usage: python bench/solvers.py [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from equiv.engine.solvers import SOLVERS
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.zone_device.cell import CellSpec, run_matrix


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    print(f"{'solver':10s} {'cells':>5s} {'proved':>6s} {'wall s':>7s}")
    verdicts: dict[str, list[Verdict]] = {}
    for solver in (*SOLVERS, "all"):
        specs = [CellSpec(config="x86_64-default", revision="v11", ptype=t, order=o, solver=solver)
                 for o in range(19) for t in MemoryType]
        res, wall, _ = run_matrix(specs, args.jobs)
        verdicts[solver] = [r.verdict for r in res]
        proved = sum(v is Verdict.PROVED for v in verdicts[solver])
        print(f"{solver:10s} {len(res):5d} {proved:6d} {wall:7.1f}")
    agree = len({tuple(v) for v in verdicts.values()}) == 1
    print(f"\nverdicts identical across z3, cvc5, bitwuzla and all: {agree}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())

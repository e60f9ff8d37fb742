"""Benchmark: the default matrix cold and warm (result cache), and 1 job against all cores.

Each run is the real command (``python -m equiv.proofs``) in a fresh process, timed from
outside, start-up included.

Usage: python bench/cache.py

Figures to reach (issue 8): cold under 5 s wall on 2 cores; warm (every cell cached) under
0.5 s including start-up.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(*argv: str) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "equiv.proofs", "--quiet", *argv], cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"run failed ({p.returncode}): {p.stderr.strip()}")
    return dt


def main() -> int:
    cores = os.cpu_count() or 1
    rows = []
    with tempfile.TemporaryDirectory() as d:
        rows.append((f"cold, {cores} jobs", timed("--cache-dir", d)))
        warm = [timed("--cache-dir", d) for _ in range(5)]
        rows.append((f"warm, {cores} jobs (best of 5)", min(warm)))
    rows.append(("no cache, 1 job", timed("--no-cache", "--jobs", "1")))
    rows.append((f"no cache, {cores} jobs", timed("--no-cache")))
    print(f"default matrix (95 cells), wall seconds including start-up, {cores} cores")
    for name, secs in rows:
        print(f"  {name:32s} {secs:6.2f}")
    cold, best_warm = rows[0][1], rows[1][1]
    one, many = rows[2][1], rows[3][1]
    print(f"cold under 5 s: {'met' if cold < 5 else 'NOT met'}; warm under 0.5 s: "
          f"{'met' if best_warm < 0.5 else 'NOT met'}; {cores} jobs vs 1: {one / many:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

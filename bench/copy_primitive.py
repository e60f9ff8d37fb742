"""Benchmark: the non-temporal copy primitive - byte equality with memcpy for every revision,
size and alignment, the seeded-bug controls, and the publication-order table.

Usage: python bench/copy_primitive.py [--frame all|window] [--witnesses]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from equiv.engine.verdict import Verdict
from equiv.zone_device.copy.ordering import SERIES_ARGUMENT, ordering_table
from equiv.zone_device.copy.present import render_copy_summary, render_ordering_table
from equiv.zone_device.copy.primitive import CHOICES, MUTANTS
from equiv.zone_device.copy.prover import FRAMES, copy_matrix, copy_summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frame", choices=FRAMES, default="all",
                    help="outside bytes checked: all (symbolic offset) or the 16 either side")
    ap.add_argument("--witnesses", action="store_true", help="print an interleaving per stale row")
    args = ap.parse_args()
    ok = True

    t0 = time.perf_counter()
    results = copy_matrix(frame=args.frame)
    t_bytes = time.perf_counter() - t0
    print(f"== byte equality with memcpy (frame={args.frame}): {len(results)} cells, "
          f"{t_bytes:.1f} s ==")
    print(render_copy_summary(copy_summary(results)))
    ok &= all(r.verdict is Verdict.PROVED for r in results)

    t0 = time.perf_counter()
    print("\n== seeded bugs (must be REFUTED where they bite, harmless_* PROVED) ==")
    print(f"{'mutant':38s} {'rev':5s} {'refuted':>7s} {'as expected':>11s}  first wrong byte / example")
    for name, m in MUTANTS.items():
        rs = copy_matrix([m.revision], mutant=name, frame=args.frame)
        expect = [m.first_wrong(r.cnt, r.dst_align, r.src_align) for r in rs]
        good = all(r.first_wrong == e for r, e in zip(rs, expect, strict=True))
        ok &= good
        bad = [r for r in rs if r.verdict is Verdict.REFUTED]
        ex = (f"cnt {bad[0].cnt} dst%8={bad[0].dst_align}: byte {bad[0].first_wrong}: "
              f"{bad[0].explanation}" if bad else "-")
        print(f"{name:38s} {m.revision:5s} {len(bad):3d}/{len(rs):<3d} {good!s:>11s}  {ex}")
    t_mut = time.perf_counter() - t0
    print(f"({t_mut:.1f} s)")

    t0 = time.perf_counter()
    rows = ordering_table()
    mis = ordering_table(["v11", "v5"], cnt=56, dst_align=3)
    t_ord = time.perf_counter() - t0
    print("\n== publication order: writer NT-copies a 64-byte page (4 chunks), [drain], publishes; "
          "reader reads flag then page ==")
    print(render_ordering_table(rows, witnesses=args.witnesses))
    print("\n-- same, 56-byte page at dst%8 == 3 (__memcpy_flushcache: cached head/tail + NT middle) --")
    print(render_ordering_table(mis, witnesses=args.witnesses))
    print(f"({t_ord:.2f} s)")
    ok &= all(r.stale_visible == (not r.drain and r.publication != "locked RMW"
                                  and r.revision != "memcpy") for r in (*rows, *mis))

    print("\nSeries argument: " + SERIES_ARGUMENT)
    print("Modelling choices:\n  " + "\n  ".join(CHOICES))
    print(f"\ntotal {t_bytes + t_mut + t_ord:.1f} s; all as expected: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the induction proof against the approaches a user would otherwise take.

For orders 0..18 of one GENERIC cell (x86_64-default, v11), each approach in a fresh process:

* **induction**: equiv's proof (symbolic page index, loop summaries justified by the
  frame / carry-step lemmas): every compound, every tail;
* **unrolling**: the same obligations, same memory encoding, with every loop unrolled to its
  bound instead of summarised (what a CBMC-style harness does), for ranges of at most two
  compounds (the bound is an assumption of the cell);
* **concrete**: both paths run concretely on one input of two compounds, every struct page
  compared (one input only: a test, not a proof).

An approach is not run at higher orders once it has passed the time limit (60 s).

Usage: python bench/unrolling.py [--limit SECONDS] [--max-order N]

Figures to reach (issue 8): at order 12 the induction proof at least 100x faster than bounded
unrolling of the same obligation; show where unrolling passes 60 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import TimeoutError as FuturesTimeout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pebble import ProcessPool


def _induction(order: int) -> tuple[float, str]:
    from equiv.memmap import MemoryType
    from equiv.zone_device.cell import CellSpec, run_cell

    t0 = time.perf_counter()
    r = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=order))
    return time.perf_counter() - t0, r.verdict.value


def _unrolled(order: int) -> tuple[float, str]:
    import threading

    sys.setrecursionlimit(10_000_000)  # reads go through one memory layer per iteration
    threading.stack_size(1 << 30)
    out: list[tuple[float, str]] = []

    def run() -> None:
        from equiv.memmap import MemoryType
        from equiv.zone_device.cell import CellSpec, cell_paths
        from equiv.zone_device.check import CheckRequest, check_cell
        from equiv.zone_device.obligations import build_cell

        sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision="v11",
                                            ptype=MemoryType.GENERIC, order=order))
        stride = 1 << order
        pageblock = 1 << sc.layout.config.PAGEBLOCK_ORDER

        def bound(loop: str) -> int:  # trip counts for ranges of at most two compounds
            if "heads" in loop:
                return 2
            if "tails" in loop:
                return stride
            return max(1, 2 * stride // pageblock) + 1  # pageblocks

        t0 = time.perf_counter()
        r = check_cell(CheckRequest(problem=build_cell(sc, rev, fast, unroll=bound),
                                    timeout_ms=600_000))
        out.append((time.perf_counter() - t0, r.verdict.value))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out[0]


def _concrete(order: int) -> tuple[float, str]:
    from equiv.config import preset
    from equiv.engine.bv import CBV
    from equiv.loops import Ctx
    from equiv.memmap import MemoryType, Scenario, concrete_inputs
    from equiv.page_model import Layout
    from equiv.slow_path import memmap_init_zone_device
    from equiv.template_path import fast_path, revision

    L = Layout.from_config(preset("x86_64-default"))
    sc = Scenario(L, MemoryType.GENERIC, order)
    n = 2 << order
    t0 = time.perf_counter()
    slow = memmap_init_zone_device(Ctx(False), sc, concrete_inputs(L, start_pfn=1 << 18, nr_pages=n))
    fast = fast_path(revision("v11"))(Ctx(False), sc,
                                        concrete_inputs(L, start_pfn=1 << 18, nr_pages=n))
    same = all(int(slow.read(CBV(c, 64), CBV(s, 64)).bits) ==  # type: ignore[call-overload]
               int(fast.read(CBV(c, 64), CBV(s, 64)).bits)  # type: ignore[call-overload]
               for c in range(2) for s in range(1 << order))
    return time.perf_counter() - t0, "equal" if same else "DIFFERENT"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=60.0, help="seconds per run (default 60)")
    ap.add_argument("--max-order", type=int, default=18)
    args = ap.parse_args()
    approaches = {"induction": _induction, "unrolling": _unrolled, "concrete": _concrete}
    passed: dict[str, int] = {}
    times: dict[tuple[str, int], float] = {}
    print(f"one GENERIC cell of x86_64-default, v11; each run in a fresh process, limit "
          f"{args.limit:g} s")
    print(f"{'order':>5}  {'induction':>12}  {'unrolling':>12}  {'concrete':>12}  unrolling/induction")
    for order in range(args.max_order + 1):
        row = []
        for name, fn in approaches.items():
            if name in passed:
                row.append(f"> {args.limit:g} s".rjust(12))
                continue
            with ProcessPool(max_workers=1) as pool:
                fut = pool.schedule(fn, args=(order,), timeout=args.limit)
                try:
                    secs, verdict = fut.result()
                except FuturesTimeout:
                    passed[name] = order
                    row.append(f"> {args.limit:g} s".rjust(12))
                    continue
            times[(name, order)] = secs
            row.append(f"{secs:9.2f} s{'' if verdict in ('PROVED', 'equal') else '!'}".rjust(12))
        ind = times.get(("induction", order))
        unr = times.get(("unrolling", order))
        ratio = (f"{unr / ind:8.0f}x" if ind and unr else
                 f"> {args.limit / ind:6.0f}x" if ind and "unrolling" in passed else "")
        print(f"{order:5d}  {'  '.join(row)}  {ratio}", flush=True)
    for name, order in passed.items():
        print(f"{name} passed {args.limit:g} s at order {order}")
    ind12 = times.get(("induction", 12))
    if ind12 and "unrolling" in passed and passed["unrolling"] <= 12:
        print(f"order 12: induction {ind12:.2f} s; unrolling did not finish in {args.limit:g} s: "
              f"induction at least {args.limit / ind12:.0f}x faster (target 100x: "
              f"{'met' if args.limit / ind12 >= 100 else 'NOT met'})")
    print("(induction covers every compound of any range; unrolling and concrete runs cover "
          "ranges of two compounds, concrete one input only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

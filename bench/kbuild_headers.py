"""Benchmark: a preset's generated headers (``equiv.zone_device.source.files.headers_for``).

Cold: :func:`equiv.linux.kbuild.prepare_headers` into a fresh cache whose ``src/`` is the
user cache's unpacked tree (so the one-time unpacking of the 1.7 GB tarball is not
counted: it is about a minute once per tarball): ``make defconfig``, the symbols,
``make olddefconfig``, ``make prepare0``.  Warm: the same call again (the cache answers).
Each ``--repeat`` times, median, with the machine's load; then one ``mm/mm_init.c`` parse
by clang with the headers, to show what the headers cost against the parse they serve.

Usage: python bench/kbuild_headers.py [--preset NAME] [--tree PATH] [--repeat N]

``--tree`` defaults to the tests' linux-source-6.12 files (``~/.cache/equiv/linux-source-6.12``).

Measured 2026-12-05 (2 cores shared with four other agents' work), x86_64-default on 6.12.117:
cold 12.3 s at load 1.6, 33.3 s (median of 3) at load 9.5; warm 19 ms; the parse 0.4-0.9 s
(docs/speed.md, "Benchmark history").
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from equiv.config import PRESETS  # noqa: E402  (after the path set-up)
from equiv.linux import cfront, kbuild  # noqa: E402
from equiv.zone_device.source import files  # noqa: E402

USER = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "equiv"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="x86_64-default")
    ap.add_argument("--tree", type=Path, default=USER / "linux-source-6.12")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cfg = PRESETS[args.preset]
    source = args.tree
    # the unpacked whole tree, made once in the user cache (not timed)
    whole = kbuild.full_tree(source, USER / "kbuild", kbuild.ARCHES[cfg.arch][0])
    cold, warm = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="equiv-bench-kbuild-") as tmp:
            cache = Path(tmp)
            (cache / "src").mkdir()
            (cache / "src" / whole.name).symlink_to(whole)
            t0 = time.monotonic()
            h = files.headers_for(source, cfg, cache)
            cold.append(time.monotonic() - t0)
            for _ in range(5):
                t0 = time.monotonic()
                again = files.headers_for(source, cfg, cache)
                warm.append(time.monotonic() - t0)
            assert again == h
            t0 = time.monotonic()
            unit = cfront.parse(source, "mm/mm_init.c", h)
            parse = time.monotonic() - t0
            size = cfront.struct_layout(unit, "page").size
            shutil.rmtree(cache / "headers", ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"{args.preset} on linux {kbuild.tree_version(whole)} (load {load:.1f}, "
          f"{os.cpu_count()} cores)")
    print(f"cold: median {statistics.median(cold):.1f} s (min {min(cold):.1f}, max "
          f"{max(cold):.1f}; {len(cold)} runs): defconfig, olddefconfig, {kbuild.PREPARE}")
    print(f"warm: median {statistics.median(warm) * 1000:.0f} ms ({len(warm)} calls): the cache")
    print(f"then mm/mm_init.c parsed by clang in {parse:.1f} s; sizeof(struct page) = {size}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: building the small all-types kernel (issue 33 point 2, ``equiv.zone_device.live.small``).

Cold: :func:`equiv.zone_device.live.small.build` of the unpacked linux-source-6.12 tree
(the kbuild cache's, ``~/.cache/equiv/kbuild/src/linux-source-6.12-*``; the one-time
unpacking is not counted) into a fresh cache, optionally with a patch series (copied tree,
patched), then the same call again (warm: the cache answers).  Prints the phases of
``build.json`` (copy and patch, make bzImage modules, total) and the machine's load.

Usage: python bench/small_kernel.py [--tree PATH] [--jobs N] [--cache DIR] [PATCH ...]

Measured 2026-12-05: see docs/speed.md, "Benchmark history".
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from equiv.zone_device.live import small  # noqa: E402  (after the path set-up)

USER = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "equiv"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="an unpacked whole kernel tree")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--cache", type=Path, help="the build cache (default: a fresh one)")
    ap.add_argument("patches", nargs="*", type=Path)
    a = ap.parse_args()
    tree = a.tree or next(iter(sorted((USER / "kbuild" / "src").glob("linux-source-6.12-*"))),
                          None)
    if tree is None or not (tree / "Makefile").is_file():
        print("bench/small_kernel.py: no unpacked linux-source-6.12 tree; give --tree PATH "
              "(pytest --runslow tests/test_kbuild_headers.py unpacks one)", file=sys.stderr)
        return 3
    cache = a.cache or Path(tempfile.mkdtemp(prefix="equiv-small-"))
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    b = small.build(tree, a.patches, cache, jobs=a.jobs)
    cold = time.monotonic() - t0
    t1 = time.monotonic()
    small.build(tree, a.patches, cache, jobs=a.jobs)
    warm = time.monotonic() - t1
    print(f"small kernel {b.release} ({len(a.patches)} patches), {a.jobs} jobs, load {load:.1f}"
          f" at start: {'cached' if b.cached else f'cold {cold:.0f} s'} "
          f"(build.json: {b.seconds:.0f} s, {b.info['phases']}); "
          f"warm {warm * 1000:.0f} ms; in {b.dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

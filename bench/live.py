"""Benchmark: the whole live check (issue 16), ``python -m equiv.proofs --live``.

Runs the command as a user would, in a fresh process, and prints the time of each stage
(fetch, module build, kernel source, each boot, the comparisons after the last boot), the
namespaces and what was compared, and the whole run's time against the target: under 10
minutes including downloads, on 2 cores without KVM.

``--cold`` uses an empty cache directory (a temporary ``XDG_CACHE_HOME``), so the packages
are downloaded, the module built and linux-source-6.12 unpacked as on a first run; without
it the user's cache is used (a re-run).  ``--live-kernel all-types`` boots the small
all-types kernel (its build, cold or cached, is the "kernel build" stage; a cold one takes
11-15 min on 2 cores), and ``--patch FILE...`` builds and boots it a second time with the
series: the stages of both kernels, each kernel's namespaces and the kernel pairs are
printed.

Usage: python bench/live.py [--cold] [--live-kernel debian|all-types] [--patch FILE...]
       [NAMESPACE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 600.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cold", action="store_true", help="start from an empty cache")
    ap.add_argument("--live-kernel", default="debian", help="debian or all-types")
    ap.add_argument("--patch", nargs="+", default=[], help="with all-types: the series")
    ap.add_argument("namespaces", nargs="*", help="MODE-ALIGN-MAP (default: --live's)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="equiv-bench-live-") as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        if args.cold:
            env["XDG_CACHE_HOME"] = tmp
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "equiv.proofs", "--live", *args.namespaces,
               "--live-kernel", args.live_kernel, *(["--patch", *args.patch] if args.patch
                                                    else []),
               "--live-out", str(out), "--format", "json"]
        t0 = time.monotonic()
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        took = time.monotonic() - t0
    if r.returncode not in (0, 1, 2):
        print(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
        return r.returncode
    doc = json.loads(r.stdout)
    k = doc["kernel"]
    print(f"kernel  {k['release']} ({k['package']} {k['package_version']}), "
          f"config sha256 {k['config_sha256'][:16]}, {doc['accelerator']}, "
          f"{'cold cache' if args.cold else 'warm cache'}")
    for name, s in doc["timings"].items():
        print(f"  {name:32} {s:8.1f} s")
    sides = [("", doc["namespaces"])]
    if "patched" in doc:
        sides.append(("patched ", doc["patched"]["namespaces"]))
    for label, rows in sides:
        for n in rows:
            ct = n.get("c_text", {})
            pages = n.get("struct_pages_compared", 0)
            print(f"  {label}{n['name']:15} {n['verdict']:13} {pages:>9,} struct pages "
                  f"{n.get('pageblocks_compared', 0):>6,} pageblocks; type "
                  f"{n.get('inputs', {}).get('pgmap_type', '-')}; C text "
                  f"{ct.get('struct_pages_compared', 0) if ct.get('run') else 'not run'}")
    for p in doc.get("kernel_pairs", []):
        print(f"  pair {p['name']:15} {p['verdict']:13} "
              f"{p.get('struct_pages_compared', 0):>9,} struct pages, "
              f"{p.get('differing_pages', 0)} differ")
    print(doc["summary"])
    print(f"{'figure':40} {'now':>9} {'target':>9} {'ratio':>6}")
    print(f"{'--live, whole run (s)':40} {took:9.1f} {TARGET_S:9.1f} {took / TARGET_S:6.2f}")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())

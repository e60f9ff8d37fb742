"""Benchmark: the whole live check (issue 16), ``python -m equiv.proofs --live``.

Runs the command as a user would, in a fresh process, and prints the time of each stage
(fetch, module build, kernel source, each boot, the comparisons after the last boot), the
namespaces and what was compared, and the whole run's time against the target: under 10
minutes including downloads, on 2 cores without KVM.

``--cold`` uses an empty cache directory (a temporary ``XDG_CACHE_HOME``), so the packages
are downloaded, the module built and linux-source-6.12 unpacked as on a first run; without
it the user's cache is used (a re-run).

Usage: python bench/live.py [--cold] [NAMESPACE ...]
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
    ap.add_argument("namespaces", nargs="*", help="MODE-ALIGN-MAP (default: --live's)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="equiv-bench-live-") as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        if args.cold:
            env["XDG_CACHE_HOME"] = tmp
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "equiv.proofs", "--live", *args.namespaces,
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
    for n in doc["namespaces"]:
        ct = n.get("c_text", {})
        print(f"  {n['name']:15} {n['verdict']:13} {n.get('struct_pages_compared', 0):>9,} "
              f"struct pages {n.get('pageblocks_compared', 0):>6,} pageblocks; C text "
              f"{ct.get('struct_pages_compared', 0) if ct.get('run') else 'not run'}")
    print(doc["summary"])
    print(f"{'figure':40} {'now':>9} {'target':>9} {'ratio':>6}")
    print(f"{'--live, whole run (s)':40} {took:9.1f} {TARGET_S:9.1f} {took / TARGET_S:6.2f}")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())

"""``python -m equiv.live``: fetch the pinned kernel, build the dump module, print the paths
and the host tools still missing for a boot.  Exit 0, or 3 with one line on an InputError."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from equiv.engine.errors import InputError
from equiv.live import build, host, packages


def main(out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Run the fetch and the build; print what they produced."""
    try:
        t0 = time.monotonic()
        files = packages.fetch()
        t1 = time.monotonic()
        ko = build.build_module(files)
        t2 = time.monotonic()
    except InputError as e:
        print(f"equiv: error: {e}", file=err)
        return 3
    print(f"kernel  {files.image}  ({t1 - t0:.1f} s)", file=out)
    print(f"headers {files.headers}", file=out)
    print(f"config  {files.config}", file=out)
    print(f"module  {ko}  ({t2 - t1:.1f} s)", file=out)
    gone = host.missing(host.BOOT_TOOLS)
    if gone:
        print(f"booting also needs: {host.install_command(gone)}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

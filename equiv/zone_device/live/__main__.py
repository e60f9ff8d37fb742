"""``python -m equiv.zone_device.live``: fetch the pinned kernel, build the dump module, print the paths
and the host tools still missing for a boot.  With ``--boot NAMESPACE...`` (``MODE-ALIGN-MAP``,
e.g. ``devdax-2M-dev fsdax-4K-mem``) also boot the kernel once, create and dump each namespace
(:func:`equiv.zone_device.live.boot.boot_and_dump`) and print each dump directory.
Exit 0, or 3 with one line on an InputError."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from equiv.engine.errors import InputError
from equiv.zone_device.live import boot, build, dump, host, packages


def main(argv: list[str] | None = None, out: TextIO = sys.stdout,
         err: TextIO = sys.stderr) -> int:
    """Run the fetch and the build (and the boot with ``--boot``); print what they produced."""
    ap = argparse.ArgumentParser(prog="python -m equiv.zone_device.live", description=__doc__)
    ap.add_argument("--boot", nargs="+", metavar="MODE-ALIGN-MAP", default=[],
                    help="namespaces to create and dump in one boot, e.g. devdax-2M-dev "
                         "(modes devdax/fsdax on pmem, coherent/private created by the dump "
                         "module; aligns 4K/2M/1G, maps dev/mem)")
    ap.add_argument("--out", type=Path, default=None,
                    help="directory of the dumps and logs (default: <cache>/equiv/live/dumps)")
    args = ap.parse_args(argv)
    try:
        namespaces = [boot.Namespace.parse(n) for n in args.boot]
        t0 = time.monotonic()
        files = packages.fetch()
        t1 = time.monotonic()
        ko = build.build_module(files)
        t2 = time.monotonic()
        print(f"kernel  {files.image}  ({t1 - t0:.1f} s)", file=out)
        print(f"headers {files.headers}", file=out)
        print(f"config  {files.config}", file=out)
        print(f"module  {ko}  ({t2 - t1:.1f} s)", file=out)
        if not namespaces:
            gone = host.missing(host.BOOT_TOOLS)
            if gone:
                print(f"booting also needs: {host.install_command(gone)}", file=out)
            return 0
        dirs = boot.boot_and_dump(files, ko, namespaces,
                                  args.out or packages.cache_dir() / "dumps",
                                  again=lambda why: print(f"again   {why}", file=out))
        t3 = time.monotonic()
        print(f"boot    {len(namespaces)} namespace(s)  ({t3 - t2:.1f} s)", file=out)
        for ns, d in dirs.items():
            parsed = dump.load(d)
            pg = parsed.pgmap
            what = "no pgmap" if pg is None else \
                f"pgmap type {pg.type}, vmemmap_shift {pg.vmemmap_shift}"
            print(f"dump    {ns.name:15} {d}  ({parsed.pages.nr_pages} pages, {what})", file=out)
    except InputError as e:
        print(f"equiv: error: {e}", file=err)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

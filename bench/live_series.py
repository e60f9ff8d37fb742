"""Bench (issue 16, item 4): both sides of the zone-device series on a real kernel.

Usage: python bench/live_series.py [--namespaces NS ...] [--build-both] [--control]
                                   [--jobs N] [--out DIR] [--no-model] [--reuse-dumps]

Builds Linux 6.12.117 from Debian's source package (/usr/src/linux-source-6.12.tar.xz) with
the project's v11 backport (tests/data/zone-device-backport-6.12/series/0001..0004) and
Debian's config (equiv.zone_device.live.kbuild: bzImage only, the prebuilt kernel's release, so Debian's
prebuilt modules load into it; cached under <cache>/equiv/live/builds/<key>), boots it and
Debian's prebuilt kernel of the same source and config (the side *without* the series)
with virtme-ng, creates and dumps the same pmem namespaces in each (equiv.zone_device.live.boot), and
compares:

* the two kernels' struct pages with each other, every byte of every struct page of the
  region (equiv.zone_device.live.crosscheck: 8-byte words equal, or pointers equal by meaning, since
  KASLR moves vmemmap_base and the pgmap between boots), and every pageblock cell;
* each kernel's dump with the model's prediction (equiv.zone_device.live.compare.compare, the 6.12.117
  hand model run concretely).

--build-both also builds the unpatched source with the same recipe and compares it with the
patched build too (both sides compiled here by the same gcc); --control boots the prebuilt
kernel a second time and compares the two boots (what identical kernels look like).
1G-aligned namespaces need a 2 GiB region and a 6 GiB guest: they get a boot of their own.

A re-run finds the builds in the cache ("cached"); the boots are always redone unless
--reuse-dumps finds a finished dump of the same kernel image.  Errors: one line, exit 3.

Measured (2 cores shared with other work, TCG, docs/live.md "Both sides of the series on a
real kernel"): builds 5,941 s with the series and 2,806 s without (one-time, then cached; all
11,245 vmlinux export CRCs equal to Debian's); with --build-both --control and the builds
cached, 654 s: 8 boots of 30-39 s, 20 kernel-pair and 20 model comparisons, all the same.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from equiv.config import Config, from_kconfig
from equiv.engine.errors import InputError
from equiv.zone_device.live import boot, build, compare, crosscheck, dump, kbuild, packages
from equiv.zone_device.live.packages import KernelFiles

SERIES = Path(__file__).resolve().parent.parent / "tests/data/zone-device-backport-6.12/series"
DEFAULT_NAMESPACES = ("devdax-4K-dev", "devdax-2M-dev", "devdax-2M-mem", "fsdax-4K-dev",
                      "devdax-1G-dev")


@dataclass
class Kernel:
    """One kernel to boot: a label, its files, and where it came from."""

    label: str
    files: KernelFiles
    origin: str
    banner: str = ""  #: the guest's "Linux version ..." line, after a boot
    boot_seconds: float = 0.0
    dumps: dict[str, Path] | None = None


def _series() -> tuple[Path, ...]:
    patches = tuple(sorted(SERIES.glob("000[1-4]-*.patch")))
    if len(patches) != 4:
        raise InputError(f"{SERIES}: expected the four series patches 0001..0004, found "
                         f"{len(patches)}")
    return patches


def _build(what: str, recipe: kbuild.Recipe, prebuilt: KernelFiles, jobs: int) -> kbuild.Build:
    """Build (or find) ``recipe`` and print one line about it."""
    t0 = time.monotonic()
    b = kbuild.build(recipe, prebuilt, jobs=jobs)
    if b.cached:
        print(f"  {what}: cached ({b.dir}; built in {b.seconds:.0f} s on "
              f"{b.info.get('finished', '?')})")
    else:
        print(f"  {what}: built in {time.monotonic() - t0:.0f} s ({b.dir})")
    print(f"    {b.info.get('symvers_compared')} vmlinux export CRCs equal to Debian's "
          f"Module.symvers; config: Debian's + {', '.join(b.info.get('config_changes', []))}")
    return b


def _banner(log: Path) -> str:
    """The ``Linux version ...`` line of a boot's console log."""
    try:
        m = re.search(r"Linux version (.*)", log.read_text(errors="replace"))
    except OSError:
        return "?"
    return m.group(1).strip() if m else "?"


def _series_code(files: KernelFiles) -> str:
    """Whether the kernel's System.map has the series' helper (a local symbol of
    mm/mm_init.c: kallsyms lists it when gcc kept it out of line, as it does here)."""
    smap = files.image.with_name(files.image.name.replace("vmlinuz-", "System.map-"))
    try:
        text = smap.read_text(errors="replace")
    except OSError:
        return "unknown (no System.map)"
    if len(text.splitlines()) < 2:
        return "unknown (Debian's System.map is a stub; the real one is in the -dbg package)"
    if re.search(r" zone_device_page_init_from_template(\.|$)", text, re.MULTILINE):
        return "yes: System.map has zone_device_page_init_from_template"
    return "no: System.map has no zone_device_page_init_from_template"


def _groups(names: Sequence[boot.Namespace]) -> list[list[boot.Namespace]]:
    """The boots: the namespaces of one region size together (1G ones need 2 GiB)."""
    small = [n for n in names if n.align != "1G"]
    big = [n for n in names if n.align == "1G"]
    return [g for g in (small, big) if g]


def _boot(k: Kernel, ko: Path, groups: list[list[boot.Namespace]], out: Path,
          reuse: bool) -> None:
    """Boot ``k`` once per group and record its dump directories."""
    k.dumps = {}
    for g in groups:
        d = out / k.label / ("region-2G" if g[0].align == "1G" else "region-512M")
        stamp = d / "image"
        image_id = f"{k.files.image.resolve()} {k.files.image.stat().st_mtime_ns}"
        if reuse and (d / boot.MARKER).exists() and stamp.exists() and \
                stamp.read_text() == image_id and all((d / n.name).is_dir() for n in g):
            got = {n: d / n.name for n in g}
            print(f"  {k.label}: reused {d}")
        else:
            t0 = time.monotonic()
            got = boot.boot_and_dump(k.files, ko, g, d,
                                     again=lambda why: print(f"  {k.label}: again: {why}"))
            took = time.monotonic() - t0
            k.boot_seconds += took
            stamp.write_text(image_id)
            print(f"  {k.label}: booted and dumped {', '.join(n.name for n in g)} in "
                  f"{took:.0f} s")
        k.banner = _banner(d / boot.VNG_LOG)
        k.dumps.update({n.name: p for n, p in got.items()})


def _model(d: dump.Dump, cfg: Config) -> str:
    """One line: the dump against the model, or why it was not compared."""
    try:
        r = compare.compare(d, cfg)
    except InputError as e:
        return f"model: not compared (pending): {e}"
    extra = "; ".join(x.describe() for x in (*r.diffs[:3], *r.pageblock_diffs[:3]))
    return (f"model: {'SAME' if r.clean else 'DIFFERENT'} ({r.pages_compared} struct pages, "
            f"{r.pageblocks_compared} pageblocks compared; {len(r.diffs)} field and "
            f"{len(r.pageblock_diffs)} pageblock differences)" + (f": {extra}" if extra else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--namespaces", nargs="+", default=list(DEFAULT_NAMESPACES),
                    metavar="MODE-ALIGN-MAP")
    ap.add_argument("--build-both", action="store_true",
                    help="also build the unpatched source with the same recipe")
    ap.add_argument("--control", action="store_true",
                    help="boot the prebuilt kernel twice and compare the two boots")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None,
                    help="dump directory (default <cache>/equiv/live/series-bench)")
    ap.add_argument("--no-model", action="store_true", help="skip the model comparisons")
    ap.add_argument("--reuse-dumps", action="store_true",
                    help="do not boot a kernel whose dumps of the same image are there")
    args = ap.parse_args(argv)
    t_all = time.monotonic()
    try:
        names = [boot.Namespace.parse(n) for n in args.namespaces]
        if len({n.name for n in names}) != len(names):
            raise InputError(f"a namespace is given twice: {' '.join(args.namespaces)}")
        prebuilt = packages.fetch()
        ko = build.build_module(prebuilt)
        out = (args.out or packages.cache_dir() / "series-bench").resolve()
        print(f"builds (make bzImage, nice 19, -j{args.jobs}):")
        with_series = _build("with the series (0001..0004)", kbuild.Recipe(_series()),
                             prebuilt, args.jobs)
        kernels = [
            Kernel("without", prebuilt, "Debian's prebuilt linux-image-"
                   f"{packages.RELEASE}-unsigned {packages.DEB_VERSION}"),
            Kernel("with", kbuild.kernel_files(with_series, prebuilt),
                   f"built here from {kbuild.SOURCE_TARBALL.name} + series 0001..0004"),
        ]
        if args.build_both:
            plain = _build("without the series", kbuild.Recipe(()), prebuilt, args.jobs)
            kernels.append(Kernel("without-built", kbuild.kernel_files(plain, prebuilt),
                                  f"built here from {kbuild.SOURCE_TARBALL.name}, no patch"))
        if args.control:
            kernels.append(Kernel("without-again", prebuilt, "Debian's prebuilt, second boot"))
        groups = _groups(names)
        print(f"boots ({len(groups)} per kernel; namespaces {' '.join(n.name for n in names)}):")
        for k in kernels:
            _boot(k, ko, groups, out, args.reuse_dumps)
        print("kernels:")
        for k in kernels:
            print(f"  {k.label:14} {k.origin}\n  {'':14} image {k.files.image}\n"
                  f"  {'':14} Linux version {k.banner}\n"
                  f"  {'':14} series code: {_series_code(k.files)}")
        pairs = [("without", "with")]
        if args.build_both:
            pairs += [("without-built", "with"), ("without", "without-built")]
        if args.control:
            pairs.append(("without", "without-again"))
        cfgs = {k.label: from_kconfig(str(k.files.config)) for k in kernels}
        loaded = {(k.label, n.name): dump.load(k.dumps[n.name])  # type: ignore[index]
                  for k in kernels for n in names}
        first = names[0].name
        for a, b in pairs:
            la, lb = loaded[(a, first)].layout, loaded[(b, first)].layout
            bad = crosscheck.layout_diffs(la, lb)
            keys = len(set(la.values) - crosscheck.ADDRESS_KEYS)
            print(f"layout constants ({first}'s dump), {a} vs {b}: "
                  + (f"{len(bad)} differ: {'; '.join(bad)}" if bad else
                     f"all {keys} equal (sizeof(struct page), page->flags fields, offsets, "
                     f"enums; {', '.join(sorted(crosscheck.ADDRESS_KEYS))} not compared)"))
        total_diff = 0
        print("namespaces:")
        for n in names:
            d0 = loaded[("without", n.name)]
            pg = d0.pgmap
            geo = "no pgmap" if pg is None else (
                f"pgmap type {pg.type}, vmemmap_shift {pg.vmemmap_shift}, "
                f"{'altmap' if pg.altmap_valid(d0.layout) else 'no altmap'}")
            print(f"  {n.name}: {len(d0.pages)} struct pages from pfn {d0.pages.start_pfn:#x}, "
                  f"{len(d0.pageblocks)} pageblocks ({geo})")
            for a, b in pairs:
                r = crosscheck.compare_dumps(loaded[(a, n.name)], loaded[(b, n.name)], n.name)
                total_diff += not r.same
                for line in r.summary(a, b).splitlines():
                    print(f"    {line.replace(n.name + ': ', '', 1)}")
            if not args.no_model:
                for k in kernels:
                    t0 = time.monotonic()
                    line = _model(loaded[(k.label, n.name)], cfgs[k.label])
                    print(f"    {k.label} vs {line} [{time.monotonic() - t0:.0f} s]")
        print(f"kernel pairs differing: {total_diff} of {len(pairs) * len(names)} "
              f"namespace comparisons")
        print("boot time: " + ", ".join(f"{k.label} {k.boot_seconds:.0f} s" for k in kernels))
    except InputError as e:
        print(f"equiv: error: {e}", file=sys.stderr)
        return 3
    print(f"total {time.monotonic() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

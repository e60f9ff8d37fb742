"""``python -m equiv.proofs --live [NAMESPACE ...]`` and ``--live-from DIR``: the options of the
live check, checked before anything runs, and its reports (:mod:`equiv.zone_device.live.present`).

Exit codes: 0 every namespace's struct pages and pageblocks are the model's; 1 a difference
(each one reported); 2 a namespace could not be compared (the reason is reported); 3 bad
input, a package the archive no longer serves, a missing host tool or a failed boot (one
line).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from equiv.engine.errors import InputError

#: options of the proof runs that mean nothing to the live check (it reads the booted
#: kernel's own .config and compares every namespace it dumps)
_NOT_WITH_LIVE = (("linux", "--linux"), ("btf", "--btf"), ("explain", "--explain"),
                  ("compare", "--compare"), ("kconfig", "--kconfig"))


def _check_kernel_and_patches(args: argparse.Namespace) -> None:
    """``--live-kernel`` only with ``--live`` and one of :data:`~equiv.zone_device.live.run.KERNELS`;
    ``--patch`` only with ``--live --live-kernel all-types``, each file there."""
    from equiv.zone_device.live.run import KERNELS

    option = "--live" if args.live is not None else "--live-from"
    kernel = getattr(args, "live_kernel", None)
    if kernel is not None and args.live is None:
        raise InputError("--live-kernel chooses the kernel --live boots; give --live too")
    if kernel is not None and kernel not in KERNELS:
        raise InputError(f"--live-kernel {kernel!r}: valid: {', '.join(KERNELS)}")
    patches = getattr(args, "patch", None) or []
    if patches and (args.live is None or kernel != "all-types"):
        raise InputError(f"{option} takes --patch only as --live --live-kernel all-types "
                         "--patch FILE... (the small kernel built with and without the "
                         "series)" if args.live is not None else
                         f"{option} does not take --patch: a recorded run of --live --patch "
                         "holds both kernels' dumps")
    for p in patches:
        if not Path(p).is_file():
            raise InputError(f"--patch {p!r}: no such file")


def check_live_options(args: argparse.Namespace) -> None:
    """Refuse the option combinations the live check cannot honour, each in one line."""
    from equiv.zone_device.live.present import LIVE_FORMATS

    if args.live is not None and args.live_from is not None:
        raise InputError("--live boots a kernel and --live-from DIR compares a recorded run: "
                         "give one")
    if args.live_out is not None and args.live is None:
        raise InputError("--live-out DIR is the run directory of --live; give --live too")
    _check_kernel_and_patches(args)
    option = "--live" if args.live is not None else "--live-from"
    for attr, name in _NOT_WITH_LIVE:
        if getattr(args, attr, None) is not None:
            raise InputError(f"{option} does not take {name}: the model reads the booted "
                             "kernel's own .config")
    if args.config != "x86_64-default":
        raise InputError(f"{option} does not take --config: the model reads the booted "
                         "kernel's own .config")
    if getattr(args, "kernel_tree", None) is not None:
        raise InputError(f"{option} locates its SARIF results in linux-source-6.12 itself; "
                         "drop --kernel-tree")
    if args.copy_primitive or getattr(args, "against", None) is not None:
        raise InputError(f"{option} does not take --copy-primitive or --against")
    if args.format not in LIVE_FORMATS:
        raise InputError(f"{option} reports in {', '.join(LIVE_FORMATS)}, not --format "
                         f"{args.format!r}")
    for spec in getattr(args, "report", []):
        fmt = spec.partition("=")[0]
        if fmt not in LIVE_FORMATS:
            raise InputError(f"--report {fmt}=...: {option} reports in "
                             f"{', '.join(LIVE_FORMATS)}")
    if args.live_from is not None and not Path(args.live_from).is_dir():
        raise InputError(f"--live-from {args.live_from!r}: not a directory")
    if args.live_out is not None:
        out = Path(args.live_out)
        if out.exists() and not out.is_dir():
            raise InputError(f"--live-out {args.live_out!r}: exists and is not a directory")
        parent = out.parent if not out.exists() else out
        if not os.access(parent if parent.exists() else Path("."), os.W_OK):
            raise InputError(f"--live-out {args.live_out!r}: cannot write there")


def run_live_cli(args: argparse.Namespace, emit: Callable[[str], None]) -> int:
    """Run ``--live`` or ``--live-from``, write the reports, return the exit code."""
    from equiv.zone_device.live import host
    from equiv.zone_device.live.present import render_live
    from equiv.zone_device.live.run import load_recorded, parse_namespaces, run_live

    check_live_options(args)
    quiet = getattr(args, "quiet", False)

    def progress(line: str) -> None:
        if not quiet:
            print(f"equiv: {line}", file=sys.stderr, flush=True)

    if args.live is not None:
        kernel = args.live_kernel or "debian"
        parse_namespaces(args.live, kernel)  # bad names fail before any download
        # every missing tool at once, with --live-setup
        host.require_all(host.LIVE_TOOLS if kernel == "debian"
                         else (*host.LIVE_TOOLS, *host.KERNEL_BUILD_TOOLS))
        run = run_live(args.live, Path(args.live_out) if args.live_out else None, progress,
                       kernel, [Path(p) for p in getattr(args, "patch", None) or []])
    else:
        run = load_recorded(Path(args.live_from), progress)
    times = not getattr(args, "no_times", False)
    for spec in getattr(args, "report", []):
        fmt, _, path = spec.partition("=")
        try:
            with open(path, "w") as f:
                f.write(render_live(fmt, run, times=times))
        except OSError as e:
            raise InputError(f"cannot write --report {fmt} {path!r}: {e.strerror}") from None
    emit(render_live(args.format, run, times=times))
    return run.exit_code


__all__ = ["check_live_options", "run_live_cli"]

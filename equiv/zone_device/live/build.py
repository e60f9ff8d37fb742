"""Building the project's dump module (``module/equiv_dump.c``) against the unpacked headers.

``make -C <headers> M=<build dir> modules`` with the headers of :mod:`equiv.zone_device.live.packages`;
Debian's headers name the kernel's compiler themselves (``x86_64-linux-gnu-gcc-12`` in their
``.kernelvariables``), and the module's BTF step runs ``pahole``.  For a kernel the live check
built itself (:mod:`equiv.zone_device.live.small`) the ``make -C`` directory is that build's
kbuild output directory instead (its own ``.config`` and ``Module.symvers``), with the compiler
the kernel was built with.  The result is cached under ``<cache>/module/<hash>/equiv_dump.ko``,
the hash covering the module's source files, the kernel release and the kernel build's cache
key: a second build of the same source for the same kernel returns the cached file at once.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from equiv.engine.errors import InputError
from equiv.zone_device.live import host
from equiv.zone_device.live.packages import RELEASE, KernelFiles, cache_dir

MODULE = "equiv_dump"
#: the files a build copies into its build directory
SOURCES = ("equiv_dump.c", "Kbuild")


def source_dir() -> Path:
    """The module's source directory in the package (``equiv/zone_device/live/module``)."""
    return Path(__file__).parent / "module"


def source_hash(files: KernelFiles | None = None) -> str:
    """SHA-256 (first 16 hex digits) of the module's source files and the kernel: its release
    (Debian's :data:`~equiv.zone_device.live.packages.RELEASE` without ``files``) and, for a
    kernel built here, its build key."""
    kernel = RELEASE if files is None else files.release
    if files is not None and files.build_key:
        kernel += f" build {files.build_key}"
    h = hashlib.sha256(kernel.encode())
    for name in SOURCES:
        h.update(b"\0" + name.encode() + b"\0" + (source_dir() / name).read_bytes())
    return h.hexdigest()[:16]


def build_module(files: KernelFiles, cache: Path | None = None) -> Path:
    """The path of ``equiv_dump.ko`` built against ``files.headers``: from the cache when this
    source was built before, else built now (in a temporary directory moved into place when
    the build succeeds, so a failed build leaves nothing that looks finished).

    Errors (:class:`InputError`): a missing tool (make, gcc-12, pahole), or a failed build,
    naming the log file with make's full output.
    """
    out = (cache or cache_dir()) / "module" / source_hash(files)
    ko = out / f"{MODULE}.ko"
    if ko.exists():
        return ko
    host.require(host.BUILD_TOOLS if files.build is None else host.BUILD_TOOLS[:1],
                 "building the dump module")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in SOURCES:
        shutil.copyfile(source_dir() / name, tmp / name)
    done = subprocess.run(["make", "-C", str(files.headers), f"M={tmp}", "modules"],
                          capture_output=True, text=True, check=False)
    log = out.with_name(out.name + ".log")
    log.write_text(done.stdout + done.stderr)
    if done.returncode != 0 or not (tmp / f"{MODULE}.ko").exists():
        lines = [ln for ln in done.stderr.splitlines() if "error" in ln.lower()] or \
            done.stderr.splitlines() or ["no output"]
        raise InputError(f"building {MODULE}.ko against {files.headers} failed: "
                         f"{lines[0].strip()} (full output: {log})")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return ko

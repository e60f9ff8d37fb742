"""Debian's prebuilt 6.12.117 kernel: the pinned packages, downloaded and unpacked once.

The live check runs a kernel it does not build: Debian bookworm-security's
``linux-image-6.12.117+deb12-amd64-unsigned`` (the same 6.12.117 as ``linux-source-6.12``),
with the headers and kbuild packages an out-of-tree module builds against.  They are
downloaded with ``apt-get download`` (no root needed, nothing installed) into
``<user cache>/equiv/live/debs`` (``$XDG_CACHE_HOME/equiv/live`` or ``~/.cache/equiv/live``)
and unpacked with ``dpkg-deb -x`` into ``.../root``.  A ``.deb`` already in ``debs/`` is not
downloaded again: when the archive has dropped the pinned version, the three files can be
fetched from snapshot.debian.org and put there by hand.

Unpacked, the headers are not usable as they are: the flavour's Makefile is one line,
``include /usr/src/linux-headers-6.12.117+deb12-common/Makefile``, an absolute path to the
installed common headers.  :func:`point_headers_makefile` rewrites it to the unpacked copy
(the kernel's top Makefile takes its source tree from its own location, so the rest
follows); the ``scripts`` and ``tools`` links are relative and already right.  The
``lib/modules/<release>/build`` and ``source`` links are made relative the same way.

A stamp file written last makes a second :func:`fetch` return without running anything.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from equiv.engine.errors import InputError
from equiv.zone_device.live import host

#: the kernel the live check runs, as Debian names it
UPSTREAM_VERSION = "6.12.117"
#: Debian's version of the four packages (bookworm-security)
DEB_VERSION = "6.12.117-1~deb12u1"
ABI = "6.12.117+deb12"
FLAVOUR = "amd64"
#: ``uname -r`` of the booted kernel, and the name of its modules directory
RELEASE = f"{ABI}-{FLAVOUR}"
PACKAGES = (
    f"linux-image-{RELEASE}-unsigned",
    f"linux-headers-{RELEASE}",
    f"linux-headers-{ABI}-common",
    f"linux-kbuild-{ABI}",
)
STAMP = "unpacked.stamp"
#: ``depmod`` writes the modules.dep the image package lacks (modprobe in the guest needs it)
DEPMOD_TOOL = host.Tool("depmod", "kmod")


@dataclass(frozen=True)
class KernelFiles:
    """A bootable kernel's files: Debian's unpacked packages (the default), or a kernel the
    live check built itself (:mod:`equiv.zone_device.live.small`), laid out the same way:
    ``root/boot/vmlinuz-<release>``, ``root/boot/config-<release>`` and
    ``root/lib/modules/<release>`` (where virtme-ng looks for the modules of an image it is
    given: the nearest ancestor of the image with ``lib/modules``)."""

    root: Path  #: where the four packages were unpacked (``dpkg-deb -x`` target)
    release: str = RELEASE  #: ``uname -r`` of the kernel
    #: the ``make -C`` directory of an out-of-tree module when not Debian's headers (a
    #: kernel's own kbuild output directory, with its ``Module.symvers``)
    build: Path | None = None
    #: what the kernel is, for reports: empty for Debian's prebuilt kernel, else e.g.
    #: ``small all-types build <key>``
    origin: str = ""
    build_key: str = ""  #: the build's cache key (its part of the dump module's cache key)

    @property
    def image(self) -> Path:
        """The bootable kernel image (``boot/vmlinuz-<release>``)."""
        return self.root / "boot" / f"vmlinuz-{self.release}"

    @property
    def config(self) -> Path:
        """The kernel's .config (``boot/config-<release>``), for ``--kconfig``."""
        return self.root / "boot" / f"config-{self.release}"

    @property
    def modules(self) -> Path:
        """The kernel's modules directory (``lib/modules/<release>``)."""
        return self.root / "lib" / "modules" / self.release

    @property
    def headers(self) -> Path:
        """The ``make -C`` directory of an out-of-tree module: :attr:`build`, else the
        flavour's unpacked headers."""
        if self.build is not None:
            return self.build
        return self.root / "usr" / "src" / f"linux-headers-{self.release}"


def cache_dir() -> Path:
    """``<user cache>/equiv/live``: ``$XDG_CACHE_HOME/equiv/live`` or ``~/.cache/equiv/live``
    on Linux (the result cache's directory, plus ``live``)."""
    return Path(platformdirs.user_cache_dir("equiv")) / "live"


def _stamp_text() -> str:
    return "".join(f"{p}={DEB_VERSION}\n" for p in PACKAGES)


def deb_name(package: str) -> str:
    """The file name ``apt-get download`` gives ``package`` at the pinned version (the
    version's ``:`` would be ``%3a``; these versions have none)."""
    arch = "all" if package.endswith("-common") else FLAVOUR
    return f"{package}_{DEB_VERSION}_{arch}.deb"


def point_headers_makefile(makefile: Path, root: Path) -> bool:
    """Rewrite every ``include /usr/src/...`` line of ``makefile`` whose target exists under
    ``root`` to include ``root``'s copy instead; True when a line was changed.

    An :class:`InputError` when the file has no such line and names no path under ``root``
    either (the package's layout has changed: the headers would include the host's files).
    """
    text = makefile.read_text()
    pattern = re.compile(r"^([ \t]*-?include[ \t]+)(/usr/src/\S+)[ \t]*$", re.MULTILINE)

    def swap(m: re.Match[str]) -> str:
        target = root / m.group(2).lstrip("/")
        return f"{m.group(1)}{target}" if target.exists() else m.group(0)

    new = pattern.sub(swap, text)
    if new != text:
        makefile.write_text(new)
        return True
    if str(root) not in text:
        raise InputError(f"{makefile}: no 'include /usr/src/...' line pointing into the "
                         f"unpacked packages ({text.strip()[:80]!r}); the Debian headers' layout "
                         f"has changed: delete {root} and report it")
    return False


def _relink(link: Path, root: Path) -> None:
    """Make the absolute symlink ``link`` (into /usr/src) relative to its copy under ``root``."""
    if link.is_symlink():
        target = os.readlink(link)
        if target.startswith("/"):
            link.unlink()
            link.symlink_to(os.path.relpath(root / target.lstrip("/"), link.parent))


def _unserved(package: str) -> InputError:
    """The error for a package ``apt-get download`` could not fetch: what ``apt-cache policy``
    offers instead, and where to put the file by hand."""
    versions: list[str] = []
    try:
        out = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True,
                             check=False).stdout
        versions = re.findall(r"^\s+(?:\*\*\*\s+)?(\S+) \d+$", out, re.MULTILINE)
    except OSError:
        pass
    offered = f"the archive offers {', '.join(versions)}" if versions else \
        "apt knows no version of it (run apt-get update; bookworm-security must be a source)"
    return InputError(f"cannot download {package}={DEB_VERSION}: {offered}; the live check is "
                      f"pinned to {DEB_VERSION}: put {deb_name(package)} (snapshot.debian.org) "
                      f"into {cache_dir() / 'debs'} or update equiv")


def apt_download(package: str, version: str, debs: Path) -> bool:
    """``apt-get download <package>=<version>`` into ``debs``; True when it worked.  A first
    failure, run as root, is retried once after ``apt-get update``: a clean CI image has no
    package lists (or lists older than the pinned version), and an installed package says
    nothing about what the archive serves."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for attempt in range(2):
        if attempt:
            if os.geteuid() != 0:
                return False
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True, env=env,
                           check=False)
        done = subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=debs,
                              capture_output=True, text=True, check=False, env=env)
        if done.returncode == 0:
            return True
    return False


def download(debs: Path) -> list[Path]:
    """Every pinned package's ``.deb`` in ``debs``, downloading those not there yet with
    ``apt-get download <package>=<version>`` (one at a time, so a failure names its package)."""
    debs.mkdir(parents=True, exist_ok=True)
    out = []
    for package in PACKAGES:
        deb = debs / deb_name(package)
        if not deb.exists():
            host.require(host.FETCH_TOOLS[:1], f"downloading {package}")
            if not apt_download(package, DEB_VERSION, debs) or not deb.exists():
                raise _unserved(package)
        out.append(deb)
    return out


def fetch(cache: Path | None = None) -> KernelFiles:
    """The pinned kernel's files, unpacked under ``cache`` (default :func:`cache_dir`):
    downloaded and unpacked the first time, then returned as they are (a stamp file records
    the packages and version unpacked; without it the unpacking is redone from scratch).

    Errors (:class:`InputError`): a missing host tool (``apt-get``, ``dpkg-deb``), a package
    the archive no longer serves, a ``.deb`` that does not unpack, headers whose Makefile no
    longer has the expected include.
    """
    cache = cache or cache_dir()
    files = KernelFiles(cache / "root")
    stamp = cache / STAMP
    if stamp.exists() and stamp.read_text() == _stamp_text() and files.image.exists():
        if files.modules.is_dir():  # a cache unpacked before the depmod step existed
            run_depmod(files)
        return files
    debs = download(cache / "debs")
    host.require(host.FETCH_TOOLS[1:], "unpacking the kernel packages")
    tmp = cache / "root.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for deb in debs:
        done = subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)], capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise InputError(f"dpkg-deb -x {deb} failed ({why}); delete it and run again")
    # the paths written into the Makefile are final ones: rewrite after the move
    stamp.unlink(missing_ok=True)
    shutil.rmtree(files.root, ignore_errors=True)
    tmp.rename(files.root)
    point_headers_makefile(files.headers / "Makefile", files.root)
    for name in ("build", "source"):
        _relink(files.modules / name, files.root)
    for path in (files.image, files.config, files.headers / ".config"):
        if not path.exists():
            raise InputError(f"{path} is missing after unpacking {', '.join(PACKAGES)}: the "
                             f"packages' layout has changed; delete {cache} and report it")
    run_depmod(files)
    stamp.write_text(_stamp_text())
    return files


def run_depmod(files: KernelFiles) -> None:
    """Write ``modules.dep`` (and the other indexes) of the unpacked modules with ``depmod -b
    <root> <release>`` unless it is there: the image package ships the modules without their
    index (Debian's postinst runs depmod), and the guest's ``modprobe`` needs it.

    InputError: depmod is missing (package kmod; it is in /usr/sbin, which must be on PATH)
    or fails.
    """
    if (files.modules / "modules.dep").exists():
        return
    host.require([DEPMOD_TOOL], "indexing the kernel's modules")
    done = subprocess.run(["depmod", "-b", str(files.root), RELEASE], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0 or not (files.modules / "modules.dep").exists():
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise InputError(f"depmod -b {files.root} {RELEASE} failed ({why})")

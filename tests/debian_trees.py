"""Debian's kernel source trees and configurations for the slow tests of the C path.

``tree(series)`` gives the files of ``/usr/src/linux-source-<series>.tar.xz`` the C path
reads (:data:`equiv.zone_device.source.files.FILES`, all of ``mm/`` for the ``.c`` files calls
are followed into, the top Makefile), unpacked once into the user's cache
(``equiv/debian-linux-source-<series>``) and stamped with
the tarball, so that the kbuild recipe unpacks the whole tree behind them to prepare a
configuration's headers.  ``config(series)`` gives Debian's own amd64 configuration of that
series (``linux-config-<series>``).  Both install the Debian package with apt-get first when
running as root (behind tests/host_lock.py) and skip the test, saying why, when they cannot.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from host_lock import host_lock

from equiv.linux.ktree import MAKEFILE
from equiv.zone_device.source.files import FILES


def _install(package: str) -> str | None:
    """Install ``package`` with apt-get; the reason it cannot be done, or None."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{package} is not installed and apt-get is not usable (not root or no apt-get)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", package]):
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if r.returncode != 0:
            return f"{' '.join(cmd)} failed: {r.stderr.strip()[-300:]}"
    return None


def _unpack(tarball: Path, root: Path) -> None:
    top = tarball.name.removesuffix(".tar.xz")
    names = {f"{top}/{f}" for f in (*FILES, MAKEFILE)}
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball, "r:xz") as tar:
        for m in tar:
            if m.name in names or (m.name.startswith(f"{top}/mm/") and m.isfile()):
                # into root, without the tarball's top folder (linux-source-<series>)
                m.name = m.name.removeprefix(f"{top}/")
                tar.extract(m, root, filter="data")
    st = tarball.stat()
    (root / ".equiv-tarball").write_text(f"{tarball} {st.st_size} {st.st_mtime_ns}\n")


def tree(series: str) -> Path:
    """The files of Debian's ``linux-source-<series>`` the C path reads (see the module)."""
    tarball = Path(f"/usr/src/linux-source-{series}.tar.xz")
    # not linux-source-<series>: the live check's source tree of the booted kernel's own
    # version (equiv.zone_device.live.ctext.source_tree) is unpacked there, and two tests
    # unpacking two versions into one folder removed each other's files mid-read
    root = Path(os.environ["EQUIV_TEST_USER_CACHE"]) / "equiv" / f"debian-linux-source-{series}"
    with host_lock():
        if not tarball.is_file():
            why = _install(f"linux-source-{series}")
            if why is not None or not tarball.is_file():
                pytest.skip(f"no {tarball}: {why or 'the package has no tarball'}")
        stamp = root / ".equiv-tarball"
        st = tarball.stat()
        if not (stamp.is_file() and stamp.read_text() == f"{tarball} {st.st_size} "
                                                          f"{st.st_mtime_ns}\n"
                and (root / "mm/page_alloc.c").is_file()):
            _unpack(tarball, root)
    return root


def config(series: str) -> Path:
    """Debian's own amd64 configuration of ``series`` (package ``linux-config-<series>``)."""
    path = Path(f"/usr/src/linux-config-{series}/config.amd64_none_amd64.xz")
    with host_lock():
        if not path.is_file():
            why = _install(f"linux-config-{series}")
            if why is not None or not path.is_file():
                pytest.skip(f"no {path}: {why or 'the package has no such file'}")
    return path

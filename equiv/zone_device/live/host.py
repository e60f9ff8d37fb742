"""The host tools the live check needs, and the one command that installs the missing ones.

Every tool is found on ``PATH`` (:func:`shutil.which`); nothing is installed here.  A missing
tool is an :class:`~equiv.engine.errors.InputError` naming the tool, its package and the
install command, so the command line prints it on one line and exits 3.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from equiv.engine.errors import InputError

#: the virtme-ng release the live check was written against (``vng``: boots a kernel with
#: the host's root file system read-only over 9p)
VIRTME_NG_VERSION = "1.42"


@dataclass(frozen=True)
class Tool:
    """One host executable: its name on PATH, the package that ships it, and the installer
    (``"apt"`` for Debian packages, ``"pip"`` for PyPI)."""

    command: str
    package: str
    installer: str = "apt"


#: fetching the kernel packages (packages.py)
FETCH_TOOLS = (Tool("apt-get", "apt"), Tool("dpkg-deb", "dpkg"))
#: building the dump module (build.py): Debian's kernel names its compiler in the headers'
#: .kernelvariables (x86_64-linux-gnu-gcc-12), and modpost's BTF step runs pahole
BUILD_TOOLS = (Tool("make", "make"), Tool("x86_64-linux-gnu-gcc-12", "gcc-12"),
               Tool("pahole", "dwarves"))
#: booting the kernel and creating namespaces in the guest (the host's root is the guest's)
BOOT_TOOLS = (Tool("qemu-system-x86_64", "qemu-system-x86"), Tool("ndctl", "ndctl"),
              Tool("daxctl", "daxctl"), Tool("busybox", "busybox-static"), Tool("cpio", "cpio"),
              Tool("vng", f"virtme-ng=={VIRTME_NG_VERSION}", "pip"))


def missing(tools: Iterable[Tool]) -> list[Tool]:
    """The tools of ``tools`` that are not on PATH, in order."""
    return [t for t in tools if shutil.which(t.command) is None]


def install_command(tools: Iterable[Tool]) -> str:
    """The shell command that installs the packages of ``tools`` (apt first, then pip), or
    ``""`` when there is nothing to install.

    >>> install_command([Tool("ndctl", "ndctl"), Tool("vng", "virtme-ng==1.42", "pip"),
    ...                  Tool("daxctl", "daxctl")])
    "apt-get install -y ndctl daxctl && pip install 'virtme-ng==1.42'"
    """
    apt = list(dict.fromkeys(t.package for t in tools if t.installer == "apt"))
    pip = list(dict.fromkeys(t.package for t in tools if t.installer == "pip"))
    parts = []
    if apt:
        parts.append("apt-get install -y " + " ".join(apt))
    if pip:
        parts.append("pip install " + " ".join(f"'{p}'" for p in pip))
    return " && ".join(parts)


def require(tools: Iterable[Tool], purpose: str) -> None:
    """Raise an :class:`InputError` naming every tool of ``tools`` missing from PATH and the
    command that installs them; ``purpose`` says what they are needed for."""
    gone = missing(tools)
    if gone:
        names = ", ".join(f"{t.command} ({t.package})" for t in gone)
        raise InputError(f"{purpose} needs {names}, not found on PATH; install with: "
                         f"{install_command(gone)}")


def install_missing(tools: Iterable[Tool]) -> None:
    """Install the missing ``tools`` when running as root: apt-get for Debian packages, this
    interpreter's pip for PyPI ones (the tests use it on a clean CI machine).  Not root, or
    an install that fails: nothing is raised here, and the step that needs a tool names it
    (:func:`require`)."""
    gone = missing(tools)
    if not gone or os.geteuid() != 0:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    apt = list(dict.fromkeys(t.package for t in gone if t.installer == "apt"))
    pip = [t.package for t in gone if t.installer == "pip"]
    if apt and shutil.which("apt-get"):
        for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *apt]):
            subprocess.run(cmd, capture_output=True, env=env, check=False)
    if pip:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *pip],
                       capture_output=True, check=False)

"""The host tools the live check needs, and the one command that installs the missing ones.

Every tool is found on ``PATH`` (:func:`shutil.which`) or, for a tool pip installs (``vng``),
in the scripts directory of the Python environment equiv runs in (:func:`which`), so a
``pip install`` into a virtual environment needs no change to ``PATH``.  A missing tool is an
:class:`~equiv.engine.errors.InputError` naming the tool, its package and the install
command, so the command line prints it on one line and exits 3.  :func:`require_all` names
every tool ``--live`` needs that is missing at once, with ``--live-setup``, which
:func:`setup` implements: as root it installs them (apt-get, then this interpreter's pip with
the pinned virtme-ng), otherwise it prints the commands to run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterable
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
#: virtme-ng's command (pip installs it into this Python's environment: :func:`which`)
VNG = Tool("vng", f"virtme-ng=={VIRTME_NG_VERSION}", "pip")
BOOT_TOOLS = (Tool("qemu-system-x86_64", "qemu-system-x86"), Tool("ndctl", "ndctl"),
              Tool("daxctl", "daxctl"), Tool("busybox", "busybox-static"), Tool("cpio", "cpio"),
              VNG)


#: every tool ``--live`` needs, fetching, building and booting (the kernel build of
#: :mod:`equiv.zone_device.live.kbuild` needs a few more, named where it runs)
LIVE_TOOLS = (*FETCH_TOOLS, *BUILD_TOOLS, *BOOT_TOOLS, Tool("depmod", "kmod"))
#: host tools of a kernel build beyond make and the compiler of :data:`BUILD_TOOLS`: the
#: Debian-config build (:mod:`equiv.zone_device.live.kbuild`) and the small all-types kernel
#: (``--live-kernel all-types``, :mod:`equiv.zone_device.live.small`, built with the host's
#: ``gcc``).  objtool's libelf headers come with libelf-dev, which has no command: a build
#: without them names it in its log
KERNEL_BUILD_TOOLS = (Tool("gcc", "gcc"), Tool("tar", "tar"), Tool("xz", "xz-utils"),
                      Tool("patch", "patch"), Tool("flex", "flex"), Tool("bison", "bison"),
                      Tool("bc", "bc"), Tool("openssl", "openssl"), Tool("perl", "perl"))
#: what ``--live-setup`` installs: every kernel's tools
SETUP_TOOLS = (*LIVE_TOOLS, *KERNEL_BUILD_TOOLS)


def tool_path() -> str:
    """``PATH`` for a tool's subprocess: the environment's scripts directories
    (:func:`_env_dirs`) after the caller's own ``PATH`` (vng runs virtme-ng's helpers)."""
    return os.pathsep.join([os.environ.get("PATH", ""), *_env_dirs()])


def _env_dirs() -> list[str]:
    """The scripts directories of the Python environment equiv runs in: where ``pip
    install`` puts ``vng`` (sysconfig's, and the interpreter's own directory)."""
    return list(dict.fromkeys([sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]))


def which(tool: Tool) -> str | None:
    """Where ``tool`` is: on PATH, or for a pip tool in this environment's scripts
    directory (:func:`_env_dirs`); None if nowhere."""
    found = shutil.which(tool.command)
    if found is None and tool.installer == "pip":
        found = shutil.which(tool.command, path=os.pathsep.join(_env_dirs()))
    return found


def command(tool: Tool) -> str:
    """The path to run ``tool`` by (:func:`which`), or its bare name if it is nowhere (the
    caller has checked it with :func:`require`)."""
    return which(tool) or tool.command


def missing(tools: Iterable[Tool]) -> list[Tool]:
    """The tools of ``tools`` that are not found (:func:`which`), in order."""
    return [t for t in tools if which(t) is None]


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


#: the option that installs every tool of :data:`SETUP_TOOLS`
SETUP_OPTION = "python -m equiv.proofs --live-setup"


def require_all(tools: Iterable[Tool] = LIVE_TOOLS, purpose: str = "--live") -> None:
    """Raise an :class:`InputError` naming every tool of ``tools`` that is missing, at once,
    with the one command that installs them all (:data:`SETUP_OPTION`) and what it runs."""
    gone = missing(tools)
    if gone:
        names = ", ".join(f"{t.command} ({t.package})" for t in gone)
        raise InputError(f"{purpose} needs {names}, not found; install them all with: "
                         f"{SETUP_OPTION} (as root; it runs {install_command(gone)})")


def setup_commands(tools: Iterable[Tool]) -> list[list[str]]:
    """The commands that install the missing ``tools``: apt-get update and install for the
    Debian packages, this interpreter's pip (pinned versions) for the PyPI ones."""
    gone = missing(tools)
    apt = list(dict.fromkeys(t.package for t in gone if t.installer == "apt"))
    pip = list(dict.fromkeys(t.package for t in gone if t.installer == "pip"))
    out: list[list[str]] = []
    if apt:
        out += [["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *apt]]
    if pip:
        out.append([sys.executable, "-m", "pip", "install", "-q", *pip])
    return out


def setup(tools: Iterable[Tool] = SETUP_TOOLS, say: Callable[[str], None] = print,
          run: Callable[[list[str]], int] | None = None, root: bool | None = None) -> int:
    """``--live-setup``: install the missing ``tools`` and say what was done, one line per
    command; returns the exit code (0: every tool present afterwards; 3: not root, the
    commands printed to run as root; 1: a command failed or a tool is still missing, named).
    ``run`` runs one command and returns its exit status (default: :mod:`subprocess`, its
    output kept off the terminal unless it fails)."""
    tools = tuple(tools)
    cmds = setup_commands(tools)
    if not cmds:
        say(f"equiv: every tool --live needs is installed ({len(tools)} tools)")
        return 0
    if root is None:
        root = os.geteuid() == 0
    shown = [" ".join(c) for c in cmds]
    if not root:
        say("equiv: --live-setup installs system packages and needs root; run as root:")
        for c in shown:
            say(f"  {c}")
        return 3
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}

    def default_run(cmd: list[str]) -> int:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if r.returncode:
            say(f"equiv: {' '.join(cmd)} failed (exit {r.returncode}): "
                f"{(r.stderr or r.stdout).strip().splitlines()[-1:] or ''}")
        return r.returncode

    for cmd, text in zip(cmds, shown, strict=True):
        say(f"equiv: running {text}")
        if (run or default_run)(cmd):
            return 1
    gone = missing(tools)
    if gone:
        say("equiv: still missing after the install: "
            + ", ".join(f"{t.command} ({t.package})" for t in gone))
        return 1
    say(f"equiv: every tool --live needs is installed ({len(tools)} tools)")
    return 0


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

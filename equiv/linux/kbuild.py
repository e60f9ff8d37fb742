"""The generated headers of one kernel configuration, made by the kernel's own build system.

:mod:`equiv.linux.cfront` preprocesses ``mm/mm_init.c`` as Kbuild would, which needs what
``make prepare`` generates for a ``.config``: ``include/generated/autoconf.h`` (the
``CONFIG_*`` macros), ``bounds.h`` (``NR_PAGEFLAGS``, ``MAX_NR_ZONES``, ``NR_CPUS_BITS``),
``asm-offsets.h``, ``arch/<arch>/include/generated/`` and ``include/config/``.  Debian ships
them for its own kernel (``linux-headers-<abi>-<flavour>``:
:meth:`equiv.linux.cfront.Headers.debian`); for any other configuration
:func:`prepare_headers` makes them:

1. the tree: the kernel tree given when it has the build system (``Makefile``, ``Kconfig``,
   ``scripts/``, ``arch/<arch>/Makefile``) and is clean (no ``.config``: Kbuild refuses
   ``O=`` on a tree configured in place); else the tarball it was unpacked from (its
   ``.equiv-tarball`` stamp, written by :func:`equiv.zone_device.live.ctext.source_tree`;
   without one, as for a copy of a few files such as a patched tree, a tree of the same
   version unpacked before, else Debian's ``/usr/src/linux-source-<major>.<minor>.tar.xz``
   of the tree's own version, read from its Makefile first: no other series' tarball is
   unpacked), unpacked
   whole once under
   ``<cache>/src/<top>-<hash of the tarball's stamp>`` (about 1.7 GB), and it must be the
   same kernel version;
2. a whole ``.config`` given (``--kconfig``) is copied to ``<dir>/.config`` as it is; a
   preset's fragment is merged the kernel's way: ``make -C <tree> O=<dir> ARCH=<arch>
   [CROSS_COMPILE=...] [CC=clang] defconfig``, the fragment's symbols written over it
   (:func:`equiv.linux.kconfig.edit`); then ``make olddefconfig``;
3. nothing is forced: every symbol asked (the fragment's, or the given ``.config``'s) that
   came out otherwise is recorded as ``changed`` (name, asked, got), and a symbol the
   tree's Kconfig does not define at all (``CONFIG_MM_ID`` in 6.12: a later kernel's
   option) as ``left_out``; the report prints both.  A configuration is refused only when
   a step fails (one line naming the step, its last error lines and the log);
4. ``make V=1 prepare0``: ``archprepare`` (``autoconf.h``, the arch's generated headers,
   ``utsrelease.h``) and the top ``Kbuild`` (``bounds.h``, ``asm-offsets.h``), the part of
   ``make prepare`` headers need (``prepare`` adds the objtool and resolve_btfids host
   tools, which build objects, not headers).  Its compile of ``asm-offsets.c`` is printed
   with the flags Kbuild gives every C file of this configuration: those that decide what
   the C means (:func:`c_flags`: ``-std``, ``-funsigned-char``, ``-O2``, ...) are kept in
   the record, and the C front end compiles with them (:attr:`Headers.cflags`).

The result is cached under ``<cache>/headers/<key>`` (:func:`request_key`: the tree's
version and identity, the arch, the make variables, the asked symbols and
:data:`RECIPE_VERSION`), with ``equiv-kbuild.json`` recording what was asked, what was left
out and the times; the make log stays beside it as ``<key>.log``.  A file lock per key
(``flock`` on ``<key>.lock``) makes a second process wait for the first one's build and
then take it from the cache.  A missing host tool is an :class:`InputError` naming the
Debian packages to install (:data:`APT_PACKAGES`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from attrs import frozen

from equiv.engine.errors import InputError
from equiv.linux import kconfig
from equiv.linux.cfront import Headers
from equiv.linux.ktree import makefile_version

#: bump when the recipe changes in a way :func:`request_key` does not see
RECIPE_VERSION = 3
#: Debian's ``linux-source-<major>.<minor>`` tarball of a kernel version, the default full
#: tree of a files-only one (:func:`tarball_for`)
TARBALL = "/usr/src/linux-source-{series}.tar.xz"


def tarball_for(version: str) -> Path:
    """Debian's ``linux-source`` tarball of the series of kernel ``version`` (``6.1.192``:
    ``/usr/src/linux-source-6.1.tar.xz``); the version is the tree's Makefile's, known
    before anything is unpacked."""
    series = ".".join(version.split(".")[:2])
    return Path(TARBALL.format(series=series))
#: the stamp of a tree unpacked from a tarball: ``<tarball> <size> <mtime_ns>``
STAMP = ".equiv-tarball"
#: the record of a finished preparation, in its directory
RECORD = "equiv-kbuild.json"
#: the make target run after olddefconfig (see the module docstring)
PREPARE = "prepare0"
#: equiv's arch -> (the kernel's ``SRCARCH``, clang's target, ``CROSS_COMPILE`` from an
#: x86_64 host)
ARCHES: dict[str, tuple[str, str, str]] = {
    "x86_64": ("x86", "x86_64-linux-gnu", ""),
    "arm64": ("arm64", "aarch64-linux-gnu", "aarch64-linux-gnu-"),
}
#: make's jobs (the machines equiv runs on have two cores or more)
JOBS = 2
#: what :func:`prepare_headers` makes, relative to the build directory (``{a}``: SRCARCH)
GENERATED = ("include/generated/autoconf.h", "include/generated/bounds.h",
             "include/generated/asm-offsets.h", "include/config/auto.conf",
             "arch/{a}/include/generated")
#: the Debian packages a preparation needs (the ``.ci/run`` apt-get line installs them)
APT_PACKAGES = ("make", "gcc", "flex", "bison", "bc", "libelf-dev", "gcc-aarch64-linux-gnu",
                "clang")  # clang: the kernel's compiler for KMSAN (CC=clang)
#: (command, Debian package) of the host tools every preparation runs
TOOLS = (("make", "make"), ("gcc", "gcc"), ("flex", "flex"), ("bison", "bison"), ("bc", "bc"))
#: the words of a make log that name a missing tool -> its Debian package
_MISSING_IN_LOG = (
    (re.compile(r"\bflex: (?:not found|No such file)"), "flex"),
    (re.compile(r"\bbison: (?:not found|No such file)"), "bison"),
    (re.compile(r"\bbc: (?:not found|No such file)"), "bc"),
    (re.compile(r"\bgelf\.h: No such file|\blibelf\.h: No such file"), "libelf-dev"),
    (re.compile(r"aarch64-linux-gnu-gcc: (?:not found|No such file|command not found)"),
     "gcc-aarch64-linux-gnu"),
    (re.compile(r"\bgcc: (?:not found|No such file|command not found)"), "gcc"),
    (re.compile(r"\bclang: (?:not found|No such file|command not found)"), "clang"),
)

#: runs one command (argv, the log to append its output to, what it is for) or raises
Runner = Callable[[Sequence[str], Path, str], None]


@frozen
class Request:
    """One configuration to prepare: the full tree, its arch and make variables, and the
    asked symbols (whole names, ``"n"`` for not set) in a stable order."""

    tree: Path
    version: str
    identity: str  #: the tree's stamp (the tarball it came from), or its path and date
    arch: str
    make_vars: tuple[str, ...]
    symbols: tuple[tuple[str, str], ...]
    #: a whole ``.config`` to start from, as given (None: the arch's ``make defconfig``)
    config: str | None = None

    @property
    def srcarch(self) -> str:
        return ARCHES[self.arch][0]

    @property
    def key(self) -> str:
        """16 hex digits of SHA-256 over everything the generated headers depend on."""
        h = hashlib.sha256(f"equiv-kbuild-headers {RECIPE_VERSION} {PREPARE}\n".encode())
        h.update(f"version {self.version}\ntree {self.identity}\narch {self.arch}\n".encode())
        for var in self.make_vars:
            h.update(f"make {var}\n".encode())
        for name, value in self.symbols:
            h.update(f"{kconfig.line(name, value)}\n".encode())
        if self.config is not None:
            h.update(b"config\n" + self.config.encode())
        return h.hexdigest()[:16]

    def make(self, work: Path) -> list[str]:
        """make's command line up to the target, building into ``work``."""
        return ["make", "-C", str(self.tree), f"O={work}", *self.make_vars]


def tree_version(tree: Path) -> str:
    """``VERSION.PATCHLEVEL.SUBLEVEL[EXTRAVERSION]`` of the tree's top Makefile.

    Raises:
        InputError: no readable Makefile with a version.
    """
    version = makefile_version(tree)
    if version is None:
        raise InputError(f"{tree}/Makefile: not readable, or names no kernel VERSION and "
                         "PATCHLEVEL")
    return version


def has_build_system(tree: Path, srcarch: str) -> bool:
    """Does ``tree`` hold what ``make defconfig prepare`` reads (not just the files a reader
    parses)?"""
    return all((tree / f).exists() for f in ("Makefile", "Kconfig", "scripts/Makefile.build",
                                             "scripts/kconfig", f"arch/{srcarch}/Makefile",
                                             f"arch/{srcarch}/Kconfig"))


def _identity(tree: Path) -> str:
    stamp = tree / STAMP
    if stamp.is_file():
        return stamp.read_text().strip()
    return f"{tree.resolve()} {(tree / 'Makefile').stat().st_mtime_ns}"


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the ``with`` block;
    the kernel drops it when the holder dies, so a killed build leaves no stale lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _stamp_of(tarball: Path) -> str:
    st = tarball.stat()
    return f"{tarball} {st.st_size} {st.st_mtime_ns}"


def full_tree(source: Path, cache: Path, srcarch: str, tarball: Path | None = None) -> Path:
    """A tree with the build system for ``source`` (see the module docstring, step 1).

    Raises:
        InputError: ``source`` is configured in place, no tarball to unpack, the tarball
            is not of ``source``'s version, or unpacking failed.
    """
    if has_build_system(source, srcarch):
        if (source / ".config").exists() or (source / "include" / "config").exists():
            raise InputError(f"{source} is configured in place (it has a .config): Kbuild "
                             "builds into another directory only from a clean tree; run "
                             "make mrproper there, or give a clean tree")
        return source
    stamp = source / STAMP
    if tarball is None and stamp.is_file() and stamp.read_text().split():
        tarball = Path(stamp.read_text().split()[0])
    if tarball is None:  # a copy of a few files (a patched tree): a tree unpacked before
        same = _unpacked_of(cache, tree_version(source), srcarch)
        if same is not None:
            return same
    want = tree_version(source)
    tarball = tarball or tarball_for(want)
    if not tarball.is_file():
        pkg = tarball.name.removesuffix(".tar.xz")
        raise InputError(f"{source} (linux {want}) lacks the kernel's build system and "
                         f"{tarball} is missing (apt-get install {pkg}, or give a whole "
                         f"linux {want} tree)")
    top = tarball.name.removesuffix(".xz").removesuffix(".tar")
    # one directory per tarball (by its path, size and date): two packages' trees side by side
    stamp_text = _stamp_of(tarball)
    root = cache / "src" / f"{top}-{hashlib.sha256(stamp_text.encode()).hexdigest()[:8]}"
    with locked(cache / "src.lock"):
        made = root / STAMP
        if not (made.is_file() and made.read_text().strip() == stamp_text):
            _unpack(tarball, root)
    got = tree_version(root)
    if want != got:
        raise InputError(f"{source} is linux {want} and lacks the build system; {tarball} is "
                         f"linux {got}: give a whole {want} tree")
    return root


def _unpacked(cache: Path) -> list[Path]:
    """The trees unpacked under ``<cache>/src`` (stamped), newest first."""
    found = [d for d in (cache / "src").glob("*") if (d / STAMP).is_file()]
    return sorted(found, key=lambda d: (d / STAMP).stat().st_mtime_ns, reverse=True)


def _unpacked_of(cache: Path, version: str, srcarch: str) -> Path | None:
    """A tree unpacked under ``<cache>/src`` of kernel ``version`` with the build system."""
    for d in _unpacked(cache):
        if has_build_system(d, srcarch) and tree_version(d) == version:
            return d
    return None


def _unpack(tarball: Path, root: Path) -> None:
    """``tarball`` unpacked into ``root`` (its one top directory), stamped."""
    if shutil.which("tar") is None or shutil.which("xz") is None:
        raise InputError(f"unpacking {tarball} needs tar and xz; install with: "
                         "apt-get install tar xz-utils")
    tmp = root.with_name(root.name + ".unpack")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    tmp.mkdir(parents=True)
    done = subprocess.run(["tar", "-xJf", str(tarball), "-C", str(tmp)], capture_output=True,
                          text=True, check=False)
    tops = [d for d in tmp.iterdir() if d.is_dir()]
    if done.returncode != 0 or len(tops) != 1:
        shutil.rmtree(tmp, ignore_errors=True)
        why = done.stderr.strip().splitlines()[-1:] or [f"{len(tops)} top directories"]
        raise InputError(f"cannot unpack {tarball}: {why[0]}")
    tops[0].rename(root)
    tmp.rmdir()
    (root / STAMP).write_text(_stamp_of(tarball) + "\n")


def tools_for(arch: str, cc: str | None) -> list[tuple[str, str]]:
    """(command, Debian package) of every host tool a preparation for ``arch`` with the
    compiler ``cc`` (None: the arch's gcc) runs."""
    cross = ARCHES[arch][2]
    out = list(TOOLS)
    if cc is not None:
        out.append((cc, cc))
    elif cross:
        out.append((f"{cross}gcc", f"gcc-{cross.removesuffix('-')}"))
    return out


def require_tools(arch: str, cc: str | None) -> None:
    """Raise an :class:`InputError` naming the Debian packages of every missing tool.

    Raises:
        InputError: one line: what is missing and the apt-get command that installs it.
    """
    gone = [(c, p) for c, p in tools_for(arch, cc) if shutil.which(c) is None]
    if gone:
        names = ", ".join(c for c, _ in gone)
        pkgs = " ".join(dict.fromkeys(p for _, p in gone))
        raise InputError(f"preparing a kernel configuration's headers needs {names}, not found "
                         f"on PATH; install with: apt-get install {pkgs}")


def run(cmd: Sequence[str], log: Path, what: str) -> None:
    """The default :data:`Runner`: ``cmd`` under ``nice``, its output appended to ``log``.

    Raises:
        InputError: the command failed: a missing tool named with its Debian package when
            the log says so, else the last error lines and the log's path.
    """
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        try:
            rc = subprocess.run(["nice", "-n", "10", *cmd], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, check=False,
                                env={**os.environ, "LC_ALL": "C"}).returncode
        except OSError as e:
            raise InputError(f"{what}: cannot run {cmd[0]}: {e.strerror}") from None
    if rc != 0:
        text = log.read_text(errors="replace")
        pkgs = [p for pat, p in _MISSING_IN_LOG if pat.search(text)]
        if pkgs:
            raise InputError(f"{what} failed: a host tool is missing; install with: apt-get "
                             f"install {' '.join(dict.fromkeys(pkgs))} (log: {log})")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        errs = [ln for ln in lines if "error" in ln.lower()] or lines
        raise InputError(f"{what} failed (exit {rc}): {' | '.join(errs[-3:])} (log: {log})")


def request(source: Path, symbols: Mapping[str, str], cache: Path, *, arch: str = "x86_64",
            cc: str | None = None, tarball: Path | None = None,
            config: str | None = None) -> Request:
    """The :class:`Request` of ``symbols`` on ``source``'s kernel (finding, or unpacking,
    the full tree: :func:`full_tree`).

    Raises:
        InputError: an unknown arch, a symbol not named ``CONFIG_*``, or as :func:`full_tree`.
    """
    if arch not in ARCHES:
        raise InputError(f"arch {arch!r}: no kernel build recipe; valid: {', '.join(ARCHES)}")
    bad = [n for n in symbols if not re.fullmatch(r"CONFIG_\w+", n)]
    if bad:
        raise InputError(f"not Kconfig symbols: {', '.join(bad)} (names are CONFIG_*)")
    srcarch, _, cross = ARCHES[arch]
    tree = full_tree(source, cache, srcarch, tarball)
    make_vars = [f"ARCH={srcarch}"]
    if cross:
        make_vars.append(f"CROSS_COMPILE={cross}")
    if cc is not None:
        make_vars.append(f"CC={cc}")
    return Request(tree, tree_version(tree), _identity(tree), arch, tuple(make_vars),
                   tuple(sorted(symbols.items())), config)


def _headers(req: Request, out: Path) -> Headers:
    rec = out / RECORD
    flags = json.loads(rec.read_text()).get("cflags", []) if rec.is_file() else []
    return Headers(req.tree, out, req.srcarch, ARCHES[req.arch][1], tuple(flags))


def prepare_headers(source: Path, symbols: Mapping[str, str] | str, cache: Path, *,
                    arch: str = "x86_64", cc: str | None = None, tarball: Path | None = None,
                    what: str = "", runner: Runner = run) -> Headers:
    """The generated headers of ``source``'s kernel configured with ``symbols``: a fragment
    (whole names -> ``y``, ``n`` or a number) merged over the arch's ``defconfig`` (as
    ``make defconfig <fragment>.config`` merges one), or a ``str``, a whole ``.config``
    taken as given; from the cache or made as the module docstring says.  ``what`` names
    the configuration in messages (a preset's name); ``cc`` is the kernel's compiler when
    not the arch's gcc (``clang``: KMSAN depends on ``CC_IS_CLANG``).

    Nothing is forced: what ``make olddefconfig`` changed (an asked symbol that came out
    otherwise, a symbol of the given ``.config`` the tree's Kconfig sets another way) is
    recorded (:func:`record`: ``changed``, ``left_out``), for the report to print.

    Raises:
        InputError: a step of the preparation failed (naming the step and the log), a
            missing host tool (with the apt-get line), or as :func:`request`.
    """
    given, fragment = (symbols, {}) if isinstance(symbols, str) else (None, symbols)
    req = request(source, fragment, cache, arch=arch, cc=cc, tarball=tarball, config=given)
    headers = cache / "headers"
    out = headers / req.key
    with locked(headers / f"{req.key}.lock"):
        if (out / RECORD).is_file():
            return _headers(req, out)
        require_tools(arch, cc)
        try:
            _prepare(req, out, runner)
        except InputError as e:
            raise InputError(f"{what or 'the configuration asked for'} cannot be prepared on "
                             f"linux {req.version} ({' '.join(req.make_vars)}): {e}") from None
    return _headers(req, out)


def configure(make: Sequence[str], work: Path, asked: Mapping[str, str], log: Path,
              runner: Runner, given: str | None = None) -> str:
    """``make defconfig`` with the ``asked`` symbols written in, or the ``given`` whole
    ``.config`` as it is, then ``make olddefconfig`` (``make``: the command line up to the
    target, building into ``work``): the ``.config`` text."""
    config = work / ".config"
    if given is None:
        runner([*make, "defconfig"], log, "make defconfig")
        config.write_text(kconfig.edit(config.read_text(), asked))
    else:
        config.write_text(given)
    runner([*make, "olddefconfig"], log, "make olddefconfig")
    return config.read_text()


def unmet_reasons(tree: Path, failed: Sequence[tuple[str, str, str]], srcarch: str) -> list[str]:
    """One phrase per symbol that did not hold (:func:`kconfig.unmet`), with the Kconfig
    lines that decide it."""
    out = []
    for n, a, g in failed:
        where = kconfig.explain(tree, n, srcarch)
        out.append(f"{n}: asked {a}, {g} after make olddefconfig"
                   + (f" (Kconfig: {where})" if where else ""))
    return out


def _prepare(req: Request, out: Path, runner: Runner) -> None:
    work = out.with_name(out.name + ".work")
    log = out.with_name(out.name + ".log")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log.write_text(f"equiv kbuild headers {req.key}: linux {req.version} ({req.identity}) "
                   f"{' '.join(req.make_vars)}\n")
    make = req.make(work)
    t0 = time.monotonic()
    asked = dict(req.symbols) if req.config is None else kconfig.values(req.config)
    failed = kconfig.unmet(asked, configure(make, work, asked, log, runner, req.config))
    known = kconfig.defined(req.tree, [n for n, _, _ in failed]) if failed else set()
    left_out = sorted(n for n, _, _ in failed if n not in known)
    changed = [[n, a, g] for n, a, g in failed if n in known]
    configured = time.monotonic() - t0
    runner([*make, "V=1", f"-j{JOBS}", PREPARE], log, f"make {PREPARE}")
    gone = [g for g in (f.format(a=req.srcarch) for f in GENERATED) if not (work / g).exists()]
    if gone:
        raise InputError(f"make {PREPARE} made no {', '.join(gone)} (log: {log})")
    record = {
        "key": req.key, "version": req.version, "tree": str(req.tree), "identity": req.identity,
        "arch": req.arch, "make": list(req.make_vars), "target": PREPARE,
        "symbols": dict(req.symbols), "left_out": left_out, "changed": changed,
        "cflags": c_flags(log.read_text(errors="replace"), req.srcarch),
        "given": None if req.config is None else hashlib.sha256(req.config.encode()).hexdigest(),
        "configure_seconds": round(configured, 1),
        "seconds": round(time.monotonic() - t0, 1),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (work / RECORD).write_text(json.dumps(record, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    work.rename(out)


#: the compiler flags of a build's command line that decide what C means to the front end:
#: the language and its dialect, char's signedness, wchar_t's size, the optimisation level
#: (``__OPTIMIZE__``: the kernel's compile-time asserts), and the macros defined on it
_KEEP = re.compile(r"-std=\S+|-f(un)?signed-char|-fshort-wchar|-fms-extensions|-O\w*|"
                   r"-[DU]\w+(=.*)?")


def c_flags(log: str, srcarch: str) -> list[str]:
    """The flags of ``log``'s command that compiled ``arch/<srcarch>/kernel/asm-offsets.c``
    during ``make V=1 prepare0`` (Kbuild's ``c_flags`` of every C file of the kernel:
    ``KBUILD_CFLAGS``, ``KBUILD_CPPFLAGS``, ``NOSTDINC_FLAGS``, ``LINUXINCLUDE``) that
    :data:`_KEEP` selects, the per-file ``KBUILD_*`` names left out; [] when the log holds
    no such command.

    >>> c_flags("  gcc -Wp,-MMD,x -nostdinc -D__KERNEL__ -std=gnu11 -funsigned-char -O2 "
    ...         "-DKBUILD_BASENAME=kmod_a -Wall -c -S -o arch/x86/kernel/asm-offsets.s "
    ...         "arch/x86/kernel/asm-offsets.c", "x86")
    ['-D__KERNEL__', '-std=gnu11', '-funsigned-char', '-O2']
    """
    src = f"arch/{srcarch}/kernel/asm-offsets.c"
    for line in log.splitlines():
        words = line.split()
        if not words or not words[-1].endswith(src) or "-S" not in words:
            continue
        try:
            args = shlex.split(line)
        except ValueError:
            continue
        return [a for a in args if _KEEP.fullmatch(a)
                and not re.match(r"-D_*KBUILD_", a)]
    return []


def record(headers: Headers) -> dict[str, object]:
    """The record of a preparation (:data:`RECORD`), ``{}`` for headers it did not make."""
    path = headers.build / RECORD
    return json.loads(path.read_text()) if path.is_file() else {}


__all__ = ["APT_PACKAGES", "ARCHES", "GENERATED", "PREPARE", "Request", "Runner", "full_tree",
           "has_build_system", "locked", "prepare_headers", "record", "request",
           "require_tools", "run", "tools_for", "tree_version"]

"""Building Debian's 6.12.117 kernel from its source package, with or without patches.

The live check normally boots Debian's prebuilt kernel (:mod:`equiv.zone_device.live.packages`).  To run
a *changed* ``mm/mm_init.c`` on real memory (both sides of the series), this module
builds ``bzImage`` from the same source Debian built it from
(``/usr/src/linux-source-6.12.tar.xz``, package ``linux-source-6.12``), with Debian's
configuration (the prebuilt package's ``boot/config-6.12.117+deb12-amd64``) and the
kernel release of the prebuilt kernel, so that the prebuilt package's modules (the 9p and
virtio modules virtme-ng needs, nd_e820, nd_pmem, dax_pmem, device_dax) and the dump module
built against Debian's headers load into it.

The recipe (:class:`Recipe`):

1. unpack the tarball, apply each patch with ``patch -p1 -F0`` (no fuzz: a patch that does
   not apply exactly is an error);
2. ``.config`` = Debian's config with the few lines of :data:`CONFIG_CHANGES` edited (the
   signing-key options Debian strips from the packaged config and which would otherwise
   name files of Debian's build machine, or generate a key), then ``make olddefconfig``; every
   other symbol must keep Debian's value (:func:`config_drift`), else the build stops;
3. ``make bzImage`` with Debian's compiler (``CC=x86_64-linux-gnu-gcc-12``, the
   ``CONFIG_CC_VERSION_TEXT`` of Debian's config), ``KERNELRELEASE`` set to the prebuilt
   kernel's, and ``RUSTC`` pointed at nothing (Debian's config was made without rustc:
   ``CONFIG_RUSTC_VERSION=0``); no module is built;
4. checks: the kernel release, and every CRC of ``vmlinux.symvers`` against Debian's
   ``Module.symvers`` (:func:`symvers_mismatches`): a difference means the prebuilt modules
   would not load (``disagrees about version of symbol``).

Debug info and BTF stay on although they change no mm code: ``CONFIG_DEBUG_INFO_BTF_MODULES``
adds two fields to ``struct module``, and every exported symbol that reaches ``struct
module`` (through ``struct file_operations.owner``: nearly all of mm's) changes its CRC.

The result is cached under ``<cache>/builds/<key>`` (:func:`Recipe.key`: the tarball's,
patches' and config's contents, the config changes, the make variables and
:data:`RECIPE_VERSION`): ``root/boot/vmlinuz-<release>``, ``root/boot/config-<release>``,
``System.map``, ``vmlinux.symvers`` and ``build.json`` (times, patches, checks).  The work
tree (several GB) is deleted after a successful build; the make log stays beside the
result as ``<key>.log``.  :func:`kernel_files` links the prebuilt kernel's modules next to
the image, as virtme-ng expects them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from equiv.engine.errors import InputError
from equiv.linux import kconfig
from equiv.zone_device.live import host
from equiv.zone_device.live.packages import RELEASE, KernelFiles, cache_dir

#: bump when the recipe changes in a way the key does not see
RECIPE_VERSION = 1
#: Debian's ``linux-source-6.12`` tarball: the source of the prebuilt kernel
SOURCE_TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
#: the only ``.config`` lines changed from Debian's, with why (None: ``is not set``)
CONFIG_CHANGES: tuple[tuple[str, str | None, str], ...] = (
    ("CONFIG_SYSTEM_TRUSTED_KEYS", '""',
     "stripped from the packaged config; Debian's value names a file of its build"),
    ("CONFIG_MODULE_SIG_KEY", '""',
     "stripped from the packaged config; empty: no key generated, nothing signed"),
    ("CONFIG_MODULE_SIG_ALL", None,
     "stripped from the packaged config; only modules_install signs"),
    ("CONFIG_BUILD_SALT", '""',
     "stripped from the packaged config; only the build-id ELF note"),
)
#: make's variables for every step (besides KERNELRELEASE)
MAKE_VARS: tuple[tuple[str, str], ...] = (
    ("CC", "x86_64-linux-gnu-gcc-12"),
    ("RUSTC", "/nonexistent/rustc"),
)
TARGET = "bzImage"
#: host tools of a kernel build (beyond make and the compiler of host.BUILD_TOOLS)
KBUILD_TOOLS = host.KERNEL_BUILD_TOOLS
BUILD_INFO = "build.json"


# ---- pure helpers (tested without a build) ---------------------------------------------


def parse_config(text: str) -> dict[str, str]:
    """A ``.config``'s symbols and values; ``# CONFIG_X is not set`` is ``"n"``
    (:func:`equiv.linux.kconfig.values`).

    >>> parse_config('CONFIG_A=y\\n# CONFIG_B is not set\\nCONFIG_C=""\\n# comment\\n')
    {'CONFIG_A': 'y', 'CONFIG_B': 'n', 'CONFIG_C': '""'}
    """
    return kconfig.values(text)


def config_line(name: str, value: str | None) -> str:
    """The ``.config`` line of ``name`` (None: not set).

    >>> config_line("CONFIG_X", None), config_line("CONFIG_Y", '""')
    ('# CONFIG_X is not set', 'CONFIG_Y=""')
    """
    return f"# {name} is not set" if value is None else f"{name}={value}"


def edit_config(text: str, changes: Sequence[tuple[str, str | None]]) -> str:
    """``text`` with every line of a changed symbol removed and the changes appended.

    >>> edit_config("CONFIG_A=y\\nCONFIG_B=m\\n", [("CONFIG_A", None), ("CONFIG_Z", '""')])
    'CONFIG_B=m\\n# CONFIG_A is not set\\nCONFIG_Z=""\\n'
    """
    names = {n for n, _ in changes}
    kept = [ln for ln in text.splitlines()
            if not ((m := kconfig.SET.match(ln) or kconfig.NOT_SET.match(ln)) and m.group(1) in names)]
    return "\n".join(kept + [config_line(n, v) for n, v in changes]) + "\n"


def config_drift(base: str, final: str, changes: Sequence[tuple[str, str | None]]) -> list[str]:
    """The symbols whose value in ``final`` (after olddefconfig) is not ``base``'s, other than
    ``changes`` (which must hold as asked); absent and ``n`` are the same.

    >>> config_drift("CONFIG_A=y\\n# CONFIG_B is not set\\n", "CONFIG_A=m\\n", [])
    ['CONFIG_A: y in the base config, m after olddefconfig']
    >>> config_drift("CONFIG_A=y\\n", 'CONFIG_A=y\\nCONFIG_K=""\\n', [("CONFIG_K", '""')])
    []
    """
    b, f = parse_config(base), parse_config(final)
    asked = {n: ("n" if v is None else v) for n, v in changes}
    out = []
    for name in sorted(set(b) | set(f) | set(asked)):
        want = asked.get(name, b.get(name, "n"))
        got = f.get(name, "n")
        if got != want:
            where = "asked" if name in asked else "in the base config"
            out.append(f"{name}: {want} {where}, {got} after olddefconfig")
    return out


def parse_symvers(text: str, module: str = "vmlinux") -> dict[str, str]:
    """``symbol -> crc`` of the exports of ``module`` in a ``Module.symvers`` text (lines
    ``CRC<TAB>symbol<TAB>module<TAB>export type[<TAB>namespace]``).

    >>> parse_symvers("0x1\\tfoo\\tvmlinux\\tEXPORT_SYMBOL\\t\\n0x2\\tbar\\tdax\\tEXPORT_SYMBOL\\t\\n")
    {'foo': '0x1'}
    """
    out = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[2] == module:
            out[parts[1]] = parts[0]
    return out


def symvers_mismatches(ours: str, theirs: str) -> tuple[int, list[str]]:
    """Compare the vmlinux exports of two ``Module.symvers`` texts: the number of symbols
    compared and one line per symbol whose CRC differs or that only one of them exports.

    >>> symvers_mismatches("0x1\\ta\\tvmlinux\\tE\\n0x2\\tb\\tvmlinux\\tE\\n",
    ...                    "0x1\\ta\\tvmlinux\\tE\\n0x3\\tb\\tvmlinux\\tE\\n0x4\\tc\\tvmlinux\\tE\\n")
    (3, ['b: crc 0x2, prebuilt 0x3', 'c: not exported (prebuilt 0x4)'])
    """
    a, b = parse_symvers(ours), parse_symvers(theirs)
    bad = []
    for sym in sorted(set(a) | set(b)):
        if sym not in a:
            bad.append(f"{sym}: not exported (prebuilt {b[sym]})")
        elif sym not in b:
            bad.append(f"{sym}: crc {a[sym]}, not exported by the prebuilt kernel")
        elif a[sym] != b[sym]:
            bad.append(f"{sym}: crc {a[sym]}, prebuilt {b[sym]}")
    return len(set(a) | set(b)), bad


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class Recipe:
    """What to build: the source tarball, the patches in order, the base config, the kernel
    release and the config changes."""

    patches: tuple[Path, ...] = ()
    config: Path | None = None  #: Debian's config (default: the prebuilt package's)
    tarball: Path = SOURCE_TARBALL
    release: str = RELEASE
    changes: tuple[tuple[str, str | None], ...] = field(
        default=tuple((n, v) for n, v, _ in CONFIG_CHANGES))

    def make_vars(self) -> list[str]:
        """make's command-line variables."""
        return [f"{k}={v}" for k, v in MAKE_VARS] + [f"KERNELRELEASE={self.release}"]

    def key(self, digest: Callable[[Path], str] = _file_digest) -> str:
        """16 hex digits of SHA-256 over everything the build depends on (file contents, not
        names or dates, except that a patch's name is part of it)."""
        if self.config is None:
            raise InputError("Recipe.key: no base config")
        h = hashlib.sha256(f"equiv-kbuild {RECIPE_VERSION} {TARGET}\n".encode())
        h.update(f"tarball {digest(self.tarball)}\nconfig {digest(self.config)}\n".encode())
        for p in self.patches:
            h.update(f"patch {p.name} {digest(p)}\n".encode())
        h.update(f"release {self.release}\n".encode())
        for n, v in self.changes:
            h.update(f"change {config_line(n, v)}\n".encode())
        for var in self.make_vars():
            h.update(f"make {var}\n".encode())
        return h.hexdigest()[:16]


@dataclass(frozen=True)
class Build:
    """A finished build: where it is, whether it came from the cache, and its record."""

    dir: Path
    cached: bool
    info: Mapping[str, object]

    @property
    def root(self) -> Path:
        """The ``dpkg-deb -x``-like root: ``boot/vmlinuz-<release>`` and ``boot/config-...``."""
        return self.dir / "root"

    @property
    def seconds(self) -> float:
        """Wall-clock seconds the build took when it was made (also when cached)."""
        return float(self.info.get("seconds", 0.0))  # type: ignore[arg-type]


def build_dir(recipe: Recipe, cache: Path | None = None) -> Path:
    """``<cache>/builds/<key>``."""
    return (cache or cache_dir()) / "builds" / recipe.key()


def cached(recipe: Recipe, cache: Path | None = None) -> Build | None:
    """The finished build of ``recipe`` if the cache holds it."""
    out = build_dir(recipe, cache)
    info = out / BUILD_INFO
    if info.exists() and (out / "root" / "boot" / f"vmlinuz-{recipe.release}").exists():
        return Build(out, True, json.loads(info.read_text()))
    return None


# ---- the build -------------------------------------------------------------------------


def _run(cmd: list[str], cwd: Path, log: Path, what: str) -> float:
    """Run ``cmd`` in ``cwd`` appending its output to ``log``; seconds taken; an InputError
    naming ``what`` and the log's last lines when it fails."""
    t0 = time.monotonic()
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        rc = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                            stderr=subprocess.STDOUT, check=False).returncode
    if rc != 0:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
        errs = [ln for ln in lines if "error" in ln.lower()] or lines
        raise InputError(f"{what} failed (exit {rc}): {' | '.join(errs[-3:])} (log: {log})")
    return time.monotonic() - t0


def build(recipe: Recipe, prebuilt: KernelFiles, cache: Path | None = None, jobs: int = 2,
          niceness: int = 19, keep_tree: bool = False) -> Build:
    """Build ``recipe`` (see the module docstring), or return the cached build.

    ``prebuilt`` is the unpacked Debian kernel: its config is the default base config and its
    headers' ``Module.symvers`` the reference for the CRC check.  make runs under
    ``nice -n niceness`` with ``-j jobs``.

    Errors (:class:`InputError`): a missing tool or tarball, a patch that does not apply, a
    config that drifts from Debian's, a failed make, a release or CRC mismatch.
    """
    if recipe.config is None:
        recipe = Recipe(recipe.patches, prebuilt.config, recipe.tarball, recipe.release,
                        recipe.changes)
    config = recipe.config
    assert config is not None
    for p in (recipe.tarball, config, *recipe.patches):
        if not p.is_file():
            raise InputError(f"{p}: no such file (kernel build input)")
    hit = cached(recipe, cache)
    if hit is not None:
        return hit
    host.require([*host.BUILD_TOOLS[:2], *KBUILD_TOOLS], "building the kernel")
    out = build_dir(recipe, cache)
    log = out.with_name(out.name + ".log")
    work = out.with_name(out.name + ".work")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log.write_text(f"equiv kbuild {out.name}: {recipe}\n")
    times: dict[str, float] = {}
    t_all = time.monotonic()
    times["unpack"] = _run(["tar", "-xJf", str(recipe.tarball), "-C", str(work)], work, log,
                           f"unpacking {recipe.tarball}")
    tops = [d for d in work.iterdir() if d.is_dir()]
    if len(tops) != 1:
        raise InputError(f"{recipe.tarball}: expected one top directory, found {len(tops)}")
    src = tops[0]
    for p in recipe.patches:
        _run(["patch", "-p1", "-F0", "--forward", "--batch", "-i", str(p.resolve())], src, log,
             f"applying {p.name}")
    base = config.read_text()
    (src / ".config").write_text(edit_config(base, recipe.changes))
    make = ["make", *recipe.make_vars()]
    _run([*make, "olddefconfig"], src, log, "make olddefconfig")
    drift = config_drift(base, (src / ".config").read_text(), recipe.changes)
    if drift:
        raise InputError(f"make olddefconfig changed Debian's config: {'; '.join(drift[:5])}"
                         f"{' ...' if len(drift) > 5 else ''} ({len(drift)} symbols; tree {src})")
    times["make"] = _run(["nice", "-n", str(niceness), *make, f"-j{jobs}", TARGET], src, log,
                         f"make {TARGET}")
    release = (src / "include/config/kernel.release").read_text().strip()
    if release != recipe.release:
        raise InputError(f"the built kernel's release is {release!r}, not {recipe.release!r}")
    ours = (src / "vmlinux.symvers").read_text()
    ref = prebuilt.headers / "Module.symvers"
    compared, bad = symvers_mismatches(ours, ref.read_text())
    if bad:
        raise InputError(f"{len(bad)} of {compared} vmlinux exports differ from {ref}: "
                         f"{'; '.join(bad[:3])}: the prebuilt modules would not load (tree {src})")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    boot = tmp / "root" / "boot"
    boot.mkdir(parents=True)
    shutil.copyfile(src / "arch/x86/boot/bzImage", boot / f"vmlinuz-{recipe.release}")
    shutil.copyfile(src / ".config", boot / f"config-{recipe.release}")
    shutil.copyfile(src / "System.map", boot / f"System.map-{recipe.release}")
    shutil.copyfile(src / "vmlinux.symvers", tmp / "vmlinux.symvers")
    info = {
        "key": out.name, "release": release, "target": TARGET,
        "tarball": str(recipe.tarball), "config": str(config),
        "patches": [str(p.resolve()) for p in recipe.patches],
        "config_changes": [config_line(n, v) for n, v in recipe.changes],
        "make": make, "jobs": jobs, "compiler": _compiler_version(),
        "symvers_compared": compared, "symvers_mismatches": 0,
        "unpack_seconds": round(times["unpack"], 1), "make_seconds": round(times["make"], 1),
        "seconds": round(time.monotonic() - t_all, 1),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (tmp / BUILD_INFO).write_text(json.dumps(info, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    if not keep_tree:
        shutil.rmtree(work, ignore_errors=True)
    return Build(out, False, info)


def _compiler_version() -> str:
    """The first line of ``x86_64-linux-gnu-gcc-12 --version``."""
    try:
        done = subprocess.run([MAKE_VARS[0][1], "--version"], capture_output=True, text=True,
                              check=False)
    except OSError:
        return "unknown"
    return (done.stdout.splitlines() or ["unknown"])[0]


def link_modules(src: Path, dst: Path) -> None:
    """Copy the directory tree ``src`` to ``dst`` with hard links (symlinks copied as links),
    falling back to copies across file systems; nothing is done when ``dst`` exists."""
    if dst.exists():
        return
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)

    def link(s: str, d: str) -> None:
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    shutil.copytree(src, tmp, symlinks=True, copy_function=link)
    tmp.rename(dst)


def kernel_files(built: Build, prebuilt: KernelFiles) -> KernelFiles:
    """The built kernel as :class:`KernelFiles`: its image and config, the prebuilt kernel's
    modules (hard-linked into ``root/lib/modules/<release>``, where virtme-ng looks for the
    modules of ``root/boot/vmlinuz-<release>``) and headers (a symlink: the dump module is
    built against Debian's headers, whose CRCs the build checked)."""
    files = KernelFiles(built.root)
    if not prebuilt.modules.is_dir():
        raise InputError(f"{prebuilt.modules}: no prebuilt modules to link")
    files.modules.parent.mkdir(parents=True, exist_ok=True)
    link_modules(prebuilt.modules, files.modules)
    files.headers.parent.mkdir(parents=True, exist_ok=True)
    if not files.headers.exists():
        files.headers.symlink_to(prebuilt.headers.resolve())
    return files


def main(argv: list[str] | None = None) -> int:
    """``python -m equiv.zone_device.live.kbuild [PATCH...]``: build (or find) the kernel with these
    patches; print the build directory.  Exit 3 with one line on an InputError."""
    import argparse
    import sys

    from equiv.zone_device.live import packages

    ap = argparse.ArgumentParser(prog="python -m equiv.zone_device.live.kbuild", description=main.__doc__)
    ap.add_argument("patches", nargs="*", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep-tree", action="store_true")
    args = ap.parse_args(argv)
    try:
        prebuilt = packages.fetch()
        b = build(Recipe(tuple(args.patches)), prebuilt, jobs=args.jobs,
                  keep_tree=args.keep_tree)
    except InputError as e:
        print(f"equiv: error: {e}", file=sys.stderr)
        return 3
    print(f"{b.dir} ({'cached' if b.cached else f'built in {b.seconds:.0f} s'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

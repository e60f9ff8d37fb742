"""The whole live check: fetch, build, boot, dump, compare; and the record of a run.

:func:`run_live` is what ``python -m equiv.proofs --live`` runs:

1. :func:`equiv.zone_device.live.packages.fetch`: the pinned Debian 6.12.117 packages, unpacked once
   into the user's cache;
2. :func:`equiv.zone_device.live.build.build_module`: the project's dump module, built against them;
3. :func:`equiv.zone_device.live.boot.boot_and_dump`, once per memory plan (:func:`boot_groups`: the
   1G-aligned namespaces need a 2 GiB region and a 6 GiB guest, the others are compared on
   a 512 MiB region, four times fewer struct pages);
4. :func:`equiv.zone_device.live.compare.compare` of every namespace's dump with the model's concrete
   prediction under the kernel's own ``.config`` (and :func:`equiv.zone_device.live.ctext.ctext_compare`
   with the C text's on its first compound), in worker processes while the next boot runs.

The run directory (``--live-out``, default ``<cache>/equiv/live/runs/last``) keeps the
kernel's ``config``, one directory per boot (``boot-1``, ...) with the guest's logs and one
dump directory per namespace, and :data:`RECORD` (``run.json``): the kernel's release,
package and config hash, the accelerator, and where each namespace's dump is.
:func:`load_recorded` reads such a directory back (``--live-from DIR``): the comparison
is re-run on the recorded dumps without a boot (the committed ``tests/data/live`` is one,
cut small).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from attrs import frozen

from equiv.config import from_kconfig
from equiv.engine.errors import InputError
from equiv.engine.runner import die_with_parent
from equiv.zone_device.live import boot, build, dump, packages
from equiv.zone_device.live.boot import Namespace
from equiv.zone_device.live.compare import LiveComparison, compare
from equiv.zone_device.live.ctext import CTextResult, ctext_compare, source_tree

#: the namespaces ``--live`` creates when none are named: devdax at each alignment with the
#: memmap in the device and in RAM, fsdax with both maps, and a MEMORY_DEVICE_COHERENT pgmap
#: the dump module creates (2M, with an altmap and with a deduplicated vmemmap)
DEFAULT_NAMESPACES = ("devdax-4K-dev", "devdax-4K-mem", "devdax-2M-dev", "devdax-2M-mem",
                      "fsdax-2M-dev", "fsdax-2M-mem", "coherent-2M-dev", "coherent-2M-mem",
                      "devdax-1G-dev", "devdax-1G-mem")
#: the record of a run, in its directory
RECORD = "run.json"
#: the kernel's .config, copied into the run directory
CONFIG = "config"
RECORD_VERSION = 1


@frozen
class KernelInfo:
    """The kernel a run booted: ``uname -r``, the Debian package and its version, and the
    SHA-256 of its ``.config`` (the model's configuration is read from that file)."""

    release: str
    package: str
    package_version: str
    config_sha256: str


@frozen(eq=False)
class NamespaceResult:
    """One namespace: its dump directory and the comparison, or why it was not compared."""

    name: str
    dump: str
    comparison: LiveComparison | None
    error: str | None = None
    seconds: float = 0.0  #: the comparison's time
    ctext: CTextResult | None = None  #: the C text's prediction (second opinion), if run

    @property
    def differs(self) -> bool:
        """The dump differs from the model's or the C text's prediction somewhere."""
        c, t = self.comparison, self.ctext
        model = c is not None and bool(c.diffs or c.pageblock_diffs)
        return model or (t is not None and bool(t.diffs))


@frozen(eq=False)
class LiveRun:
    """A live check: the kernel, how it ran (``TCG``, ``KVM`` or ``recorded``), each
    namespace's result, the run directory and the time of each stage (seconds)."""

    kernel: KernelInfo
    accelerator: str
    namespaces: tuple[NamespaceResult, ...]
    directory: str
    timings: tuple[tuple[str, float], ...]

    @property
    def exit_code(self) -> int:
        """1 if any namespace differs from the model, else 2 if any was not compared or
        compared nothing (not everything was checked: never success), else 0."""
        if any(r.differs for r in self.namespaces):
            return 1
        if not self.namespaces or any(r.comparison is None or not r.comparison.clean
                                      for r in self.namespaces):
            return 2
        return 0


def boot_groups(namespaces: Sequence[Namespace]) -> list[list[Namespace]]:
    """The boots a run needs, in order: the namespaces without 1G alignment (one boot, a 512
    MiB region), then the 1G-aligned ones (one boot, a 2 GiB region); empty groups dropped.

    >>> [[n.name for n in g] for g in boot_groups(
    ...     [Namespace.parse("devdax-1G-dev"), Namespace.parse("fsdax-2M-mem")])]
    [['fsdax-2M-mem'], ['devdax-1G-dev']]
    """
    small = [n for n in namespaces if n.align != "1G"]
    large = [n for n in namespaces if n.align == "1G"]
    return [g for g in (small, large) if g]


def parse_namespaces(names: Sequence[str]) -> list[Namespace]:
    """``--live`` values (none: :data:`DEFAULT_NAMESPACES`); a name twice is an error."""
    out = [Namespace.parse(n) for n in (names or DEFAULT_NAMESPACES)]
    seen: set[str] = set()
    for n in out:
        if n.name in seen:
            raise InputError(f"--live: namespace {n.name} is named twice")
        seen.add(n.name)
    return out


def sha256(path: Path) -> str:
    """The SHA-256 of a file, hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _release(log: Path) -> str:
    """``uname -r`` as the guest script logged it (``equiv-guest: kernel X``)."""
    try:
        m = re.search(r"equiv-guest: kernel (\S+)", log.read_text(errors="replace"))
    except OSError:
        m = None
    return m.group(1) if m else "unknown"


Compared = tuple[LiveComparison | None, str | None, float, CTextResult | None]


def _compare_dir(directory: str, config: str, tree: str | None, why_no_tree: str) -> Compared:
    """Compare one dump directory (in a worker process) with the model and, when ``tree``
    is given, with the C text's prediction (:mod:`equiv.zone_device.live.ctext`): the comparison or the
    one-line reason it could not be made, the seconds it took, the C text's result."""
    t0 = time.monotonic()
    try:
        d = dump.load(Path(directory))
        cfg = from_kconfig(config)
        cmp = compare(d, cfg)
    except InputError as e:
        return None, str(e), time.monotonic() - t0, None
    ct = ctext_compare(d, cfg, Path(tree)) if tree else CTextResult(reason=why_no_tree)
    return cmp, None, time.monotonic() - t0, ct


def _write_record(out: Path, kernel: KernelInfo, accelerator: str,
                  dirs: Sequence[tuple[str, str]]) -> None:
    rec = {"record_version": RECORD_VERSION, "release": kernel.release,
           "package": kernel.package, "package_version": kernel.package_version,
           "config_sha256": kernel.config_sha256, "accelerator": accelerator,
           "namespaces": [{"name": n, "dump": d} for n, d in dirs]}
    (out / RECORD).write_text(json.dumps(rec, indent=2) + "\n")


def run_live(names: Sequence[str], out: Path | None = None,
             progress: Callable[[str], None] = lambda _s: None) -> LiveRun:
    """Fetch, build, boot, dump and compare the namespaces ``names`` (``MODE-ALIGN-MAP``;
    none: :data:`DEFAULT_NAMESPACES`) into the run directory ``out``; ``progress`` gets a
    line per stage.

    InputError: a bad namespace name, a package the archive no longer serves, a missing
    host tool, a module that does not build, a boot that fails (each one line)."""
    namespaces = parse_namespaces(names)
    out = (out or packages.cache_dir() / "runs" / "last").resolve()
    if out.exists() and not out.is_dir():
        raise InputError(f"--live-out {out}: not a directory")
    timings: list[tuple[str, float]] = []
    t0 = time.monotonic()
    files = packages.fetch()
    timings.append(("fetch", time.monotonic() - t0))
    progress(f"kernel   {files.image.name} (fetched in {timings[-1][1]:.1f} s)")
    t0 = time.monotonic()
    ko = build.build_module(files)
    timings.append(("build", time.monotonic() - t0))
    progress(f"module   {ko.name} (built in {timings[-1][1]:.1f} s)")
    for sub in [*(f"boot-{i}" for i in range(1, 3)), RECORD, CONFIG]:
        p = out / sub
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(files.config, out / CONFIG)
    t0 = time.monotonic()
    tree, why_no_tree = source_tree()
    timings.append(("kernel source", time.monotonic() - t0))
    progress(f"source   {tree or why_no_tree}")
    kvm = boot.kvm_usable(files, out)
    accel = "KVM" if kvm else "TCG"
    results: dict[str, Future[Compared]] = {}
    dirs: list[tuple[str, str]] = []
    release = "unknown"
    # compares beside the next boot (which keeps one core busy under TCG), then on every core
    with ProcessPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)),
                             initializer=die_with_parent) as pool:
        for i, group in enumerate(boot_groups(namespaces), 1):
            t0 = time.monotonic()
            bdir = out / f"boot-{i}"
            progress(f"boot {i}   {', '.join(n.name for n in group)} ({accel})")
            got = boot.boot_and_dump(files, ko, group, bdir)
            timings.append((f"boot {i}", time.monotonic() - t0))
            release = _release(bdir / boot.GUEST_LOG)
            for ns, d in got.items():
                rel = str(d.relative_to(out))
                dirs.append((ns.name, rel))
                results[ns.name] = pool.submit(_compare_dir, str(d), str(out / CONFIG),
                                               None if tree is None else str(tree), why_no_tree)
        t0 = time.monotonic()
        done = {n: f.result() for n, f in results.items()}
        timings.append(("compare (after the last boot)", time.monotonic() - t0))
    kernel = KernelInfo(release, packages.PACKAGES[0], packages.DEB_VERSION,
                        sha256(out / CONFIG))
    _write_record(out, kernel, accel, dirs)
    rows = tuple(NamespaceResult(n, str(out / d), *done[n]) for n, d in dirs)
    return LiveRun(kernel, accel, rows, str(out), tuple(timings))


def load_recorded(directory: Path, progress: Callable[[str], None] = lambda _s: None,
                  c_text: bool = True) -> LiveRun:
    """Re-run the comparison on a recorded run directory (:data:`RECORD`, :data:`CONFIG` and
    the dumps it names), without a boot; with ``c_text``, the C text's prediction too.

    InputError: no record, a malformed one, a config whose hash is not the recorded one, or
    a dump directory that is missing."""
    rec_path = directory / RECORD
    try:
        rec = json.loads(rec_path.read_text())
        kernel = KernelInfo(str(rec["release"]), str(rec["package"]),
                            str(rec["package_version"]), str(rec["config_sha256"]))
        entries = [(str(e["name"]), str(e["dump"])) for e in rec["namespaces"]]
        accel = str(rec["accelerator"])
    except FileNotFoundError:
        raise InputError(f"--live-from {directory}: no {RECORD} (a run directory of --live "
                         "--live-out DIR)") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"--live-from {rec_path}: not a record of a live run ({e})") from None
    config = directory / CONFIG
    if not config.is_file():
        raise InputError(f"--live-from {directory}: no {CONFIG} (the kernel's .config)")
    if sha256(config) != kernel.config_sha256:
        raise InputError(f"--live-from {directory}: {CONFIG} is not the recorded one "
                         f"(sha256 {kernel.config_sha256[:12]}...)")
    rows = []
    t0 = time.monotonic()
    tree, why_no_tree = source_tree() if c_text else (None, "not asked for")
    for name, rel in entries:
        progress(f"compare  {name}")
        rows.append(NamespaceResult(name, str(directory / rel),
                                    *_compare_dir(str(directory / rel), str(config),
                                                  None if tree is None else str(tree),
                                                  why_no_tree)))
    return LiveRun(kernel, f"recorded ({accel})", tuple(rows), str(directory),
                   (("compare", time.monotonic() - t0),))


__all__ = ["CONFIG", "DEFAULT_NAMESPACES", "RECORD", "KernelInfo", "LiveRun", "NamespaceResult",
           "boot_groups", "load_recorded", "parse_namespaces", "run_live"]

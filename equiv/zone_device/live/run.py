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
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from attrs import frozen

from equiv.config import from_kconfig
from equiv.engine.errors import InputError
from equiv.engine.runner import die_with_parent
from equiv.zone_device.live import boot, build, dump, packages
from equiv.zone_device.live.boot import Namespace
from equiv.zone_device.live.compare import LiveComparison, compare
from equiv.zone_device.live.crosscheck import DumpComparison, compare_dumps
from equiv.zone_device.live.ctext import CTextResult, ctext_compare, source_tree

#: the namespaces ``--live`` creates when none are named: devdax at each alignment with the
#: memmap in the device and in RAM, fsdax with both maps, and a MEMORY_DEVICE_COHERENT pgmap
#: the dump module creates (2M, with an altmap and with a deduplicated vmemmap)
DEFAULT_NAMESPACES = ("devdax-4K-dev", "devdax-4K-mem", "devdax-2M-dev", "devdax-2M-mem",
                      "fsdax-2M-dev", "fsdax-2M-mem", "coherent-2M-dev", "coherent-2M-mem",
                      "devdax-1G-dev", "devdax-1G-mem")
#: ``--live-kernel``: Debian's prebuilt 6.12.117 (the default), or the small all-types kernel
#: built from linux-source-6.12 (:mod:`equiv.zone_device.live.small`)
KERNELS = ("debian", "all-types")
#: the namespaces of ``--live --live-kernel all-types`` when none are named: every pgmap
#: type, orders 0, 9 and 18 where the type allows them, ``--map dev`` and ``mem`` where they
#: apply.  GENERIC (devdax) and COHERENT (the dump module's) at every order and both maps;
#: FS_DAX (its pgmap is never compound in 6.12: order 0) with both maps; PRIVATE (the dump
#: module's, memmap in RAM only) at every order, and test_hmm.ko's dmirror chunk; PCI_P2PDMA
#: from the NVMe controller memory buffer (order 0, memmap in RAM: the driver's choice)
ALL_TYPES_NAMESPACES = (
    "devdax-4K-dev", "devdax-4K-mem", "devdax-2M-dev", "devdax-2M-mem",
    "fsdax-2M-dev", "fsdax-2M-mem",
    "coherent-4K-dev", "coherent-4K-mem", "coherent-2M-dev", "coherent-2M-mem",
    "private-4K-mem", "private-2M-mem", "hmm-4K-mem", "p2pdma-4K-mem",
    "devdax-1G-dev", "devdax-1G-mem", "coherent-1G-dev", "coherent-1G-mem", "private-1G-mem")
#: the record of a run, in its directory
RECORD = "run.json"
#: the kernel's .config, copied into the run directory
CONFIG = "config"
RECORD_VERSION = 1


@frozen
class KernelInfo:
    """The kernel a run booted: ``uname -r``, the Debian package and its version (for a
    kernel built here, the source package it was built from), the SHA-256 of its
    ``.config`` (the model's configuration is read from that file), which ``--live-kernel``
    it is, and for a kernel built here what it is (``small all-types build <key>``), its
    build's cache key and the patches applied (file names)."""

    release: str
    package: str
    package_version: str
    config_sha256: str
    kind: str = "debian"
    origin: str = ""
    build_key: str = ""
    patches: tuple[str, ...] = ()


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
    #: the same namespaces on the kernel built with ``--patch``, when asked for
    patched: LiveRun | None = None
    #: each namespace's unpatched and patched dumps compared with each other
    pairs: tuple[PairResult, ...] = ()
    #: what a reader of the run should know that is not a result: a boot repeated, and why
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """1 if any namespace differs from the model (on either kernel) or the two kernels'
        dumps differ, else 2 if any was not compared or compared nothing (not everything
        was checked: never success), else 0."""
        runs = [self, *([self.patched] if self.patched else [])]
        if any(r.differs for run in runs for r in run.namespaces) or any(
                p.comparison is not None and not p.same for p in self.pairs):
            return 1
        if any(not run.namespaces or any(r.comparison is None or not r.comparison.clean
                                         for r in run.namespaces) for run in runs):
            return 2
        if self.patched is not None and (len(self.pairs) != len(self.namespaces) or any(
                p.comparison is None for p in self.pairs)):
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


def parse_namespaces(names: Sequence[str], kernel: str = "debian") -> list[Namespace]:
    """``--live`` values (none: :data:`DEFAULT_NAMESPACES`, or :data:`ALL_TYPES_NAMESPACES`
    for the all-types kernel); a name twice is an error, and so is a driver's pgmap (hmm,
    p2pdma) on Debian's kernel, which has neither driver."""
    if kernel not in KERNELS:
        raise InputError(f"--live-kernel {kernel!r}: valid: {', '.join(KERNELS)}")
    default = ALL_TYPES_NAMESPACES if kernel == "all-types" else DEFAULT_NAMESPACES
    out = [Namespace.parse(n) for n in (names or default)]
    for n in out:
        if kernel == "debian" and n.mode in boot.DRIVER_MODES:
            raise InputError(f"--live: {n.name} needs --live-kernel all-types (Debian's "
                             "6.12.117 has neither CONFIG_TEST_HMM nor CONFIG_PCI_P2PDMA)")
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


def kernel_fields(kernel: KernelInfo, kind_key: str = "kernel") -> dict[str, Any]:
    """``kernel`` as JSON, for the run's record (``run.json``, read back by
    :func:`_kernel_of`) and for the reports: ``kind_key`` names its ``--live-kernel`` kind
    (``kernel`` in the record, ``live_kernel`` in a report)."""
    return {"release": kernel.release, "package": kernel.package,
            "package_version": kernel.package_version, "config_sha256": kernel.config_sha256,
            kind_key: kernel.kind, "origin": kernel.origin, "build_key": kernel.build_key,
            "patches": list(kernel.patches)}


def _kernel_of(rec: Mapping[str, object]) -> KernelInfo:
    patches = rec.get("patches") or []
    assert isinstance(patches, list)
    return KernelInfo(str(rec["release"]), str(rec["package"]), str(rec["package_version"]),
                      str(rec["config_sha256"]), str(rec.get("kernel", "debian")),
                      str(rec.get("origin", "")), str(rec.get("build_key", "")),
                      tuple(str(p) for p in patches))


def _write_record(out: Path, kernel: KernelInfo, accelerator: str,
                  dirs: Sequence[tuple[str, str]], notes: Sequence[str]) -> None:
    rec = {"record_version": RECORD_VERSION, **kernel_fields(kernel),
           "accelerator": accelerator, "namespaces": [{"name": n, "dump": d} for n, d in dirs],
           "notes": list(notes)}
    (out / RECORD).write_text(json.dumps(rec, indent=2) + "\n")


@frozen(eq=False)
class PairResult:
    """One namespace dumped by the unpatched and the patched kernel, compared with each
    other (:func:`equiv.zone_device.live.crosscheck.compare_dumps`), or why it was not."""

    name: str
    comparison: DumpComparison | None
    error: str | None = None

    @property
    def same(self) -> bool:
        """Compared, and no difference of any kind."""
        return self.comparison is not None and self.comparison.same


def _pair(name: str, a: str, b: str) -> PairResult:
    """Compare two kernels' dumps of ``name`` (in a worker process)."""
    try:
        return PairResult(name, compare_dumps(dump.load(Path(a)), dump.load(Path(b)), name))
    except InputError as e:
        return PairResult(name, None, str(e))


def _prepare(kind: str, patches: Sequence[Path], label: str,
             timings: list[tuple[str, float]],
             progress: Callable[[str], None]) -> tuple[packages.KernelFiles, Path]:
    """The kernel's files (fetched, or built: :func:`equiv.zone_device.live.small.kernel`) and
    the dump module built against it."""
    t0 = time.monotonic()
    if kind == "debian":
        files = packages.fetch()
        timings.append(("fetch", time.monotonic() - t0))
        progress(f"kernel   {files.image.name} (fetched in {timings[-1][1]:.1f} s)")
    else:
        from equiv.zone_device.live import small

        progress(f"kernel   building the small all-types kernel{label} (cached after the "
                 "first time; about 11-15 min on 2 cores)")
        b, files = small.kernel(patches)
        timings.append((f"kernel build{label}", time.monotonic() - t0))
        how = "cached" if b.cached else f"built in {timings[-1][1]:.0f} s"
        progress(f"kernel   {files.release}: {files.origin} ({how})")
    t0 = time.monotonic()
    ko = build.build_module(files)
    timings.append((f"module build{label}", time.monotonic() - t0))
    progress(f"module   {ko.name} (built in {timings[-1][1]:.1f} s)")
    return files, ko


def _clean(out: Path) -> None:
    for sub in [*(f"boot-{i}" for i in range(1, 3)), RECORD, CONFIG, PATCHED]:
        p = out / sub
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)


def _kernel_info(kind: str, files: packages.KernelFiles, config: Path, release: str,
                 patches: Sequence[Path]) -> KernelInfo:
    if kind == "debian":
        return KernelInfo(release, packages.PACKAGES[0], packages.DEB_VERSION, sha256(config))
    return KernelInfo(release, "linux-source-6.12", packages.DEB_VERSION, sha256(config),
                      kind, files.origin, files.build_key, tuple(p.name for p in patches))


def _noter(notes: list[str], name: str, label: str,
           progress: Callable[[str], None]) -> Callable[[str], None]:
    """What a boot's ``again`` line does: a note of the run (``name: why``) and a progress
    line."""
    def again(why: str) -> None:
        notes.append(f"{name}: {why}")
        progress(f"{name}{label}   again: {why}")
    return again


#: the patched kernel's run directory, inside the unpatched one's
PATCHED = "patched"


def run_live(names: Sequence[str], out: Path | None = None,
             progress: Callable[[str], None] = lambda _s: None, kernel: str = "debian",
             patches: Sequence[Path] = ()) -> LiveRun:
    """Fetch or build, boot, dump and compare the namespaces ``names`` (``MODE-ALIGN-MAP``;
    none: the kernel's defaults, :func:`parse_namespaces`) into the run directory ``out``;
    ``progress`` gets a line per stage.  ``kernel`` is a ``--live-kernel`` value
    (:data:`KERNELS`).  With ``patches`` (the all-types kernel only) the small kernel is
    built a second time with them applied, booted with the same namespaces into
    ``out/patched``, compared with the model too, and each namespace's two dumps are
    compared with each other (:attr:`LiveRun.pairs`).

    InputError: a bad namespace name or kernel, patches with Debian's kernel, a package the
    archive no longer serves, a missing host tool, a kernel or module that does not build,
    a boot that fails (each one line)."""
    namespaces = parse_namespaces(names, kernel)
    if patches and kernel != "all-types":
        raise InputError("--live --patch builds the patched kernel beside the unpatched one: "
                         "give --live-kernel all-types (Debian's kernel is prebuilt)")
    out = (out or packages.cache_dir() / "runs" / "last").resolve()
    if out.exists() and not out.is_dir():
        raise InputError(f"--live-out {out}: not a directory")
    timings: list[tuple[str, float]] = []
    sides: list[tuple[str, Path, Sequence[Path]]] = [("", out, ())]
    if patches:
        sides.append((" (patched)", out / PATCHED, patches))
    prepared = [_prepare(kernel, p, label, timings, progress) for label, _, p in sides]
    _clean(out)
    t0 = time.monotonic()
    tree, why_no_tree = source_tree()
    timings.append(("kernel source", time.monotonic() - t0))
    progress(f"source   {tree or why_no_tree}")
    kvm = boot.kvm_usable(prepared[0][0], out)
    accel = "KVM" if kvm else "TCG"
    results: list[dict[str, Future[Compared]]] = []
    dirs: list[list[tuple[str, str]]] = []
    notes: list[list[str]] = []
    releases: list[str] = []
    pair_futures: dict[str, Future[PairResult]] = {}
    # compares beside the next boot (which keeps one core busy under TCG), then on every core
    with ProcessPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)),
                             initializer=die_with_parent) as pool:
        for (label, kout, _), (files, ko) in zip(sides, prepared, strict=True):
            kout.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(files.config, kout / CONFIG)
            res: dict[str, Future[Compared]] = {}
            kd: list[tuple[str, str]] = []
            kn: list[str] = []
            release = "unknown"
            for i, group in enumerate(boot_groups(namespaces), 1):
                t0 = time.monotonic()
                bdir = kout / f"boot-{i}"
                progress(f"boot {i}{label}   {', '.join(n.name for n in group)} ({accel})")
                got = boot.boot_and_dump(files, ko, group, bdir,
                                         again=_noter(kn, f"boot {i}", label, progress))
                timings.append((f"boot {i}{label}", time.monotonic() - t0))
                release = _release(bdir / boot.GUEST_LOG)
                for ns, d in got.items():
                    kd.append((ns.name, str(d.relative_to(kout))))
                    res[ns.name] = pool.submit(_compare_dir, str(d), str(kout / CONFIG),
                                               None if tree is None else str(tree),
                                               why_no_tree)
                    if dirs:  # the patched kernel: its dump against the unpatched one's
                        base = dict(dirs[0])[ns.name]
                        pair_futures[ns.name] = pool.submit(_pair, ns.name, str(out / base),
                                                            str(d))
            results.append(res)
            dirs.append(kd)
            notes.append(kn)
            releases.append(release)
        t0 = time.monotonic()
        done = [{n: f.result() for n, f in res.items()} for res in results]
        pairs = tuple(pair_futures[n.name].result() for n in namespaces if n.name in pair_futures)
        timings.append(("compare (after the last boot)", time.monotonic() - t0))
    runs: list[LiveRun] = []
    for (_, kout, p), (files, _), kd, dn, release, kn in zip(sides, prepared, dirs, done,
                                                             releases, notes, strict=True):
        info = _kernel_info(kernel, files, kout / CONFIG, release, p)
        _write_record(kout, info, accel, kd, kn)
        rows = tuple(NamespaceResult(n, str(kout / d), *dn[n]) for n, d in kd)
        runs.append(LiveRun(info, accel, rows, str(kout), (), notes=tuple(kn)))
    if len(runs) > 1:
        rec = json.loads((out / RECORD).read_text())
        rec["patched"] = {"dir": PATCHED, "record": f"{PATCHED}/{RECORD}"}
        (out / RECORD).write_text(json.dumps(rec, indent=2) + "\n")
    return LiveRun(runs[0].kernel, accel, runs[0].namespaces, str(out), tuple(timings),
                   runs[1] if len(runs) > 1 else None, pairs, runs[0].notes)


def load_recorded(directory: Path, progress: Callable[[str], None] = lambda _s: None,
                  c_text: bool = True) -> LiveRun:
    """Re-run the comparison on a recorded run directory (:data:`RECORD`, :data:`CONFIG` and
    the dumps it names), without a boot; with ``c_text``, the C text's prediction too.

    A run of ``--live --patch`` (its record names the ``patched`` directory) is re-run
    whole: both kernels' dumps against the model, and against each other.

    InputError: no record, a malformed one, a config whose hash is not the recorded one, or
    a dump directory that is missing."""
    rec_path = directory / RECORD
    try:
        rec = json.loads(rec_path.read_text())
        kernel = _kernel_of(rec)
        entries = [(str(e["name"]), str(e["dump"])) for e in rec["namespaces"]]
        accel = str(rec["accelerator"])
        recorded_notes = tuple(str(n) for n in rec.get("notes", []))
        patched_dir = str(rec["patched"]["dir"]) if "patched" in rec else None
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
    patched = None
    pairs: list[PairResult] = []
    if patched_dir is not None:
        patched = load_recorded(directory / patched_dir, progress, c_text)
        theirs = {r.name: r.dump for r in patched.namespaces}
        for r in rows:
            progress(f"compare  {r.name} (unpatched against patched)")
            pairs.append(_pair(r.name, r.dump, theirs[r.name]) if r.name in theirs else
                         PairResult(r.name, None, "not dumped by the patched kernel"))
    return LiveRun(kernel, f"recorded ({accel})", tuple(rows), str(directory),
                   (("compare", time.monotonic() - t0),), patched, tuple(pairs), recorded_notes)


__all__ = ["ALL_TYPES_NAMESPACES", "CONFIG", "DEFAULT_NAMESPACES", "KERNELS", "PATCHED",
           "RECORD", "KernelInfo", "LiveRun", "NamespaceResult", "PairResult", "boot_groups",
           "kernel_fields", "load_recorded", "parse_namespaces", "run_live"]

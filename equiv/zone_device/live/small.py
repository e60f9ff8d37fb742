"""The small all-types kernel configuration of issue 33 (first step: the configuration only).

Debian's prebuilt 6.12.117 (:mod:`equiv.zone_device.live.packages`) has
``CONFIG_DEVICE_PRIVATE`` and ``CONFIG_PCI_P2PDMA`` off, so ``MEMORY_DEVICE_PRIVATE`` and
``MEMORY_DEVICE_PCI_P2PDMA`` pgmaps never exist in it.  The small kernel is x86_64's
``defconfig`` (``arch/x86/configs/x86_64_defconfig``) plus :data:`SYMBOLS`, each with the
reason it is there: what virtme-ng needs to boot it (9p root, virtio console), the five
pgmap types (ZONE_DEVICE; PRIVATE through ``test_hmm.ko``'s dmirror devices, which call
``memremap_pages()``; PCI_P2PDMA through an NVMe controller memory buffer, which the nvme
driver registers with ``pci_p2pdma_add_resource()``; devdax and fsdax through pmem; COHERENT
is made by the dump module itself), and what the dump module needs (modules, debugfs).

:func:`configure` writes the ``.config`` with ``make defconfig``, the symbols and ``make
olddefconfig``, and checks that every symbol holds afterwards (a symbol Kconfig turned off
is an error naming the Kconfig line that decides it, as for the C front end's headers,
:mod:`equiv.linux.kbuild`).  :func:`build` makes ``bzImage`` and the modules from a tree
(with patches applied to a copy of it), cached by :func:`key`.  :func:`source_tree` is the
whole 6.12.117 tree it is built from (the pinned ``linux-source-6.12`` tarball of
:func:`equiv.zone_device.live.ctext.tarball`, unpacked once into ``<user cache>/equiv/kbuild``,
shared with the C front end's headers); :func:`kernel` builds or finds the kernel in
:func:`cache_root` and gives its :class:`~equiv.zone_device.live.packages.KernelFiles`
(``python -m equiv.proofs --live --live-kernel all-types`` boots it).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from equiv.engine.errors import InputError
from equiv.linux import kconfig
from equiv.linux.kbuild import STAMP, Runner, locked, tree_version, unmet_reasons
from equiv.linux.kbuild import configure as configure_tree
from equiv.zone_device.live.kbuild import Build
from equiv.zone_device.live.packages import KernelFiles

#: bump when :func:`build` changes in a way :func:`key` does not see
RECIPE_VERSION = 2  # 2: build.json "seconds" is the total, "phases" the parts
#: the record a finished build leaves in its directory
BUILD_INFO = "build.json"

#: (symbol, value, why): the small kernel's symbols on top of x86_64 ``defconfig``
SYMBOLS: tuple[tuple[str, str, str], ...] = (
    # booting under virtme-ng (9p root file system, virtio console, overlays of /etc etc.)
    ("CONFIG_VIRTIO_PCI", "y", "virtme-ng: virtio devices"),
    ("CONFIG_VIRTIO_CONSOLE", "y", "virtme-ng: the guest's stdin/stdout ports"),
    ("CONFIG_NET_9P", "y", "virtme-ng: the host's root over 9p"),
    ("CONFIG_NET_9P_VIRTIO", "y", "virtme-ng: 9p over virtio"),
    ("CONFIG_9P_FS", "y", "virtme-ng: the root file system"),
    ("CONFIG_OVERLAY_FS", "y", "virtme-ng: writable overlays of /etc, /tmp, ..."),
    ("CONFIG_DEVTMPFS", "y", "virtme-ng: /dev"),
    # the dump module (equiv/zone_device/live/module/equiv_dump.c)
    ("CONFIG_MODULES", "y", "the dump module and test_hmm.ko are modules"),
    ("CONFIG_MODULE_UNLOAD", "y", "the dump module's module_exit (equiv_dump_exit)"),
    ("CONFIG_DEBUG_FS", "y", "the dump module answers in debugfs"),
    # the mm the model is about
    ("CONFIG_SPARSEMEM_VMEMMAP", "y", "struct pages in the vmemmap, as on Debian"),
    ("CONFIG_MEMORY_HOTPLUG", "y", "ZONE_DEVICE depends on it"),
    ("CONFIG_MEMORY_HOTREMOVE", "y", "ZONE_DEVICE depends on it"),
    ("CONFIG_ZONE_DEVICE", "y", "every pgmap type"),
    ("CONFIG_TRANSPARENT_HUGEPAGE", "y", "2M devdax and fsdax mappings"),
    ("CONFIG_HUGETLBFS", "y", "as Debian: HUGETLB_PAGE and its vmemmap optimisation"),
    # MEMORY_DEVICE_PRIVATE
    ("CONFIG_DEVICE_PRIVATE", "y", "MEMORY_DEVICE_PRIVATE (off in Debian's kernel)"),
    ("CONFIG_TEST_HMM", "m", "test_hmm.ko: dmirror devices with PRIVATE pgmaps"),
    # MEMORY_DEVICE_PCI_P2PDMA
    ("CONFIG_PCI_P2PDMA", "y", "MEMORY_DEVICE_PCI_P2PDMA (off in Debian's kernel)"),
    ("CONFIG_BLK_DEV_NVME", "y", "QEMU's nvme device with a controller memory buffer"),
    # MEMORY_DEVICE_FS_DAX and MEMORY_DEVICE_GENERIC (devdax) on emulated pmem
    ("CONFIG_LIBNVDIMM", "y", "pmem namespaces (memmap=nn!ss regions)"),
    ("CONFIG_X86_PMEM_LEGACY", "y", "e820 type-12 regions as pmem (nd_e820)"),
    ("CONFIG_BLK_DEV_PMEM", "y", "fsdax on /dev/pmem*"),
    ("CONFIG_FS_DAX", "y", "MEMORY_DEVICE_FS_DAX"),
    ("CONFIG_DEV_DAX", "y", "devdax (MEMORY_DEVICE_GENERIC)"),
    ("CONFIG_DEV_DAX_PMEM", "y", "devdax on pmem namespaces"),
    ("CONFIG_EXT4_FS", "y", "fsdax: a file system mounted -o dax"),
)

def _run(cmd: Sequence[str], log: Path, what: str) -> None:
    with log.open("a") as out:
        done = subprocess.run(list(cmd), stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode:
        raise InputError(f"{what} failed (exit {done.returncode}): see {log}")


def configure(tree: Path, work: Path, runner: Runner = _run) -> dict[str, str]:
    """Write ``work/.config`` for the small kernel from the source ``tree`` (out of tree:
    ``make O=work``) and return its values.

    Raises:
        InputError: make failed, or a symbol of :data:`SYMBOLS` does not hold after
            ``make olddefconfig`` (with the Kconfig lines that decide it).
    """
    work.mkdir(parents=True, exist_ok=True)
    log = work / "configure.log"
    make = ["make", "-C", str(tree), f"O={work}", "ARCH=x86_64"]
    asked = {n: v for n, v, _ in SYMBOLS}
    text = configure_tree(make, work, asked, log, runner)
    failed = kconfig.unmet(asked, text)
    if failed:
        why = unmet_reasons(tree, failed, "x86")
        raise InputError(f"the small all-types kernel cannot be configured from {tree}: "
                         + " | ".join(why))
    return kconfig.values(text)


@dataclass(frozen=True)
class SmallBuild(Build):
    """A finished small-kernel build (:class:`~equiv.zone_device.live.kbuild.Build`:
    ``root`` holds ``boot/vmlinuz-<release>`` and ``lib/modules/<release>``, from ``make
    modules_install``); ``dir/build`` is the kbuild output (``.config``, ``Module.symvers``:
    the dump module is built against it with ``M=``)."""

    @property
    def build(self) -> Path:
        return self.dir / "build"

    @property
    def release(self) -> str:
        return str(self.info["release"])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def key(tree: Path, patches: Sequence[Path] = ()) -> str:
    """16 hex digits of SHA-256 over what the build depends on: :data:`RECIPE_VERSION`, the
    tree (the tarball it was unpacked from, :data:`~equiv.linux.kbuild.STAMP`, else its path
    and version), each patch's name and contents, and :data:`SYMBOLS`."""
    stamp = tree / STAMP
    ident = stamp.read_text().strip() if stamp.is_file() else f"{tree.resolve()} {tree_version(tree)}"
    h = hashlib.sha256(f"equiv-small {RECIPE_VERSION}\ntree {ident}\n".encode())
    for p in patches:
        h.update(f"patch {p.name} {_digest(p)}\n".encode())
    for n, v, _ in SYMBOLS:
        h.update(f"symbol {kconfig.line(n, v)}\n".encode())
    return h.hexdigest()[:16]


def build(tree: Path, patches: Sequence[Path], cache: Path, jobs: int = 2,
          runner: Runner = _run) -> SmallBuild:
    """The small kernel of ``tree`` with ``patches`` applied in order (``patch -p1 -F0``, to
    a copy of the tree: the tree itself is never changed), cached under
    ``<cache>/small/<key>``: configured (:func:`configure`), ``make bzImage modules``,
    ``make modules_install``; the times and the release in ``build.json``.

    Raises:
        InputError: a patch missing or not applying, a symbol Kconfig turns off, make failing.
    """
    for p in patches:
        if not p.is_file():
            raise InputError(f"{p}: no such patch (small kernel build input)")
    out = cache / "small" / key(tree, patches)
    out.parent.mkdir(parents=True, exist_ok=True)
    with locked(out.with_name(out.name + ".lock")):
        if (out / BUILD_INFO).is_file():
            return SmallBuild(out, True, json.loads((out / BUILD_INFO).read_text()))
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        log = out / "build.log"
        times: dict[str, float] = {}
        t0 = time.monotonic()
        src = tree
        if patches:
            src = out / "src"
            runner(["cp", "-a", f"{tree}/.", str(src)], log, f"copying {tree}")
            for p in patches:
                runner(["patch", "-d", str(src), "-p1", "-F0", "--forward", "--batch", "-i",
                        str(p.resolve())], log, f"applying {p.name}")
        times["copy_and_patch"] = time.monotonic() - t0
        work = out / "build"
        configure(src, work, runner)
        make = ["make", "-C", str(src), f"O={work}", "ARCH=x86_64"]
        t1 = time.monotonic()
        runner([*make, f"-j{jobs}", "bzImage", "modules"], log, "make bzImage modules")
        times["make"] = time.monotonic() - t1
        runner([*make, f"INSTALL_MOD_PATH={out / 'root'}", "modules_install"], log,
               "make modules_install")
        release = (work / "include" / "config" / "kernel.release").read_text().strip()
        boot = out / "root" / "boot"
        boot.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / "arch" / "x86" / "boot" / "bzImage", boot / f"vmlinuz-{release}")
        shutil.copyfile(work / ".config", boot / f"config-{release}")
        info: dict[str, object] = {
            "key": out.name, "release": release, "tree": str(tree),
            "patches": [str(p.resolve()) for p in patches], "jobs": jobs,
            "seconds": round(time.monotonic() - t0, 1),
            "phases": {k: round(v, 1) for k, v in times.items()},
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        (out / BUILD_INFO).write_text(json.dumps(info, indent=1) + "\n")
        return SmallBuild(out, False, info)


def cache_root() -> Path:
    """Where the live check keeps its small-kernel builds (``build(..., cache_root())`` puts
    each under ``<user cache>/equiv/small/small/<key>``, as ``bench/small_kernel.py --cache
    ~/.cache/equiv/small`` does)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("equiv")) / "small"


def source_tree() -> Path:
    """The whole linux-source-6.12 tree at the pinned 6.12.117 (the tarball of
    :func:`equiv.zone_device.live.ctext.tarball`), unpacked once under the kbuild cache's
    ``src`` (:func:`equiv.zone_device.source.files.kbuild_cache`: ``$EQUIV_KBUILD_CACHE``, else
    ``<user cache>/equiv/kbuild``; :func:`equiv.linux.kbuild.full_tree`), where the C front
    end's headers unpack it too.

    Raises:
        InputError: no tarball of 6.12.117 (neither installed nor downloadable), or it does
            not unpack.
    """
    from equiv.linux.kbuild import full_tree
    from equiv.zone_device.live import ctext
    from equiv.zone_device.source.files import kbuild_cache

    partial, why = ctext.source_tree()
    if partial is None:
        raise InputError(f"the small all-types kernel is built from linux-source-6.12 "
                         f"6.12.117: {why}")
    return full_tree(partial, kbuild_cache(), "x86", tarball=ctext.tarball())


def kernel_files(b: SmallBuild) -> KernelFiles:
    """The built kernel as :class:`KernelFiles`: its image, config and installed modules
    under ``b.root``, the dump module built against ``b.build`` (its ``Module.symvers``)."""
    what = "small all-types build" + (" with patches" if b.info.get("patches") else "")
    return KernelFiles(b.root, release=b.release, build=b.build, origin=f"{what} {b.dir.name}",
                       build_key=b.dir.name)


def kernel(patches: Sequence[Path] = (), jobs: int | None = None,
           cache: Path | None = None) -> tuple[SmallBuild, KernelFiles]:
    """The small kernel of :func:`source_tree` with ``patches`` (built now, or found in
    ``cache``, default :func:`cache_root`) and its :class:`KernelFiles`."""
    import os

    b = build(source_tree(), patches, cache or cache_root(), jobs or os.cpu_count() or 2)
    return b, kernel_files(b)


__all__ = ["SYMBOLS", "SmallBuild", "build", "cache_root", "configure", "kernel",
           "kernel_files", "key", "source_tree"]

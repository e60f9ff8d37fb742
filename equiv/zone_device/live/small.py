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
:mod:`equiv.linux.kbuild`).  Building and booting it are not done yet (issue 33 point 2).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from equiv.engine.errors import InputError
from equiv.linux import kconfig

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

#: runs one make command (arguments, the log file, what it is for)
Runner = Callable[[list[str], Path, str], None]


def _run(cmd: list[str], log: Path, what: str) -> None:
    with log.open("a") as out:
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False)
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
    runner([*make, "defconfig"], log, "make defconfig")
    config = work / ".config"
    asked = {n: v for n, v, _ in SYMBOLS}
    config.write_text(kconfig.edit(config.read_text(), asked))
    runner([*make, "olddefconfig"], log, "make olddefconfig")
    text = config.read_text()
    failed = kconfig.unmet(asked, text)
    if failed:
        why = [f"{n}: asked {a}, {g} after make olddefconfig"
               + (f" (Kconfig: {w})" if (w := kconfig.explain(tree, n, "x86")) else "")
               for n, a, g in failed]
        raise InputError(f"the small all-types kernel cannot be configured from {tree}: "
                         + " | ".join(why))
    return kconfig.values(text)


__all__ = ["SYMBOLS", "configure"]

"""The small all-types kernel in the live check (``--live --live-kernel all-types``, issue 33):
the two driver kinds (``hmm``: test_hmm.ko's PRIVATE dmirror chunk; ``p2pdma``: the nvme
driver's PCI_P2PDMA pgmap over QEMU's NVMe controller memory buffer), the guest script and
vng command they need, test_hmm's free list on top of the model, the kernel's files and the
dump module's cache key.  No boot here: the slow tests that build and boot are at the end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from equiv.engine.bv import CBV
from equiv.engine.errors import InputError
from equiv.page_model import Layout, PageState
from equiv.zone_device.live import boot, build, packages, run
from equiv.zone_device.live.compare import TEST_HMM_STEP, driver_step
from equiv.zone_device.live.small import SmallBuild, kernel_files


def test_the_driver_kinds() -> None:
    assert boot.Namespace.parse("hmm-4K-mem").mode == "hmm"
    assert not boot.Namespace.parse("p2pdma-4K-mem").own
    for bad in ("hmm-2M-mem", "hmm-4K-dev", "p2pdma-1G-mem"):
        with pytest.raises(InputError, match="order 0 and its memmap in RAM"):
            boot.Namespace.parse(bad)


def test_the_all_types_defaults_cover_five_types() -> None:
    names = run.parse_namespaces([], "all-types")
    modes = {n.mode for n in names}
    assert modes == {"devdax", "fsdax", "coherent", "private", "hmm", "p2pdma"}
    assert {n.align for n in names if n.mode in ("devdax", "coherent", "private")} == \
        {"4K", "2M", "1G"}
    assert {n.map for n in names if n.mode in ("devdax", "fsdax", "coherent")} == {"dev", "mem"}
    assert [n.name for n in run.parse_namespaces([], "debian")] == list(run.DEFAULT_NAMESPACES)
    with pytest.raises(InputError, match="valid: debian, all-types"):
        run.parse_namespaces([], "fedora")


def test_the_guest_script_of_driver_pgmaps(tmp_path: Path) -> None:
    nss = [boot.Namespace.parse("hmm-4K-mem"), boot.Namespace.parse("p2pdma-4K-mem")]
    text = boot.guest_script(tmp_path / "equiv_dump.ko", nss, tmp_path)
    assert "modprobe test_hmm" in text and "/proc/iomem" in text
    assert "echo test_hmm >" in text and "echo nvme >" in text
    assert "/sys/bus/pci/devices/*/p2pmem" in text
    assert "memmap=" not in text and "memremap" not in text  # no region, no own pgmap
    assert boot.plan(nss).append == ""


def test_the_vng_command_adds_the_nvme_device(tmp_path: Path) -> None:
    files = packages.KernelFiles(tmp_path, release="6.12.117", build=tmp_path / "build")
    cmd = boot.vng_command(files, tmp_path, "3G", "", False, tmp_path / "g.sh",
                           boot.nvme_qemu_opts(tmp_path / "nvme.img"))
    assert cmd[-2] == "--qemu-opts" and "cmb_size_mb=64" in cmd[-1]
    assert str(tmp_path / "boot" / "vmlinuz-6.12.117") in cmd


def test_the_small_kernels_files(tmp_path: Path) -> None:
    b = SmallBuild(tmp_path / "0123456789abcdef", False, {"release": "6.12.117", "patches": []})
    files = kernel_files(b)
    assert files.image == b.root / "boot" / "vmlinuz-6.12.117"
    assert files.modules == b.root / "lib" / "modules" / "6.12.117"
    assert files.headers == b.build  # the dump module: make -C <build dir> M=...
    assert files.origin == "small all-types build 0123456789abcdef"
    debian = packages.KernelFiles(tmp_path)
    assert debian.headers.name == f"linux-headers-{packages.RELEASE}"
    # the dump module's cache: one per kernel build
    assert build.source_hash(debian) == build.source_hash()
    other = kernel_files(SmallBuild(tmp_path / "fedcba9876543210", False,
                                    {"release": "6.12.117", "patches": ["x.patch"]}))
    assert len({build.source_hash(), build.source_hash(files), build.source_hash(other)}) == 3
    assert other.origin.startswith("small all-types build with patches")


def test_test_hmms_free_list() -> None:
    from equiv.config import PRESETS

    L = Layout.from_config(PRESETS["x86_64-default"])
    page = PageState(bits=CBV(0, 8 * L.size), origin=((),) * L.size)
    base, start = 0xffffea0000000000, 0x3f0000
    first = driver_step("test_hmm", page, L, start, start, base, L.size)
    second = driver_step("test_hmm", page, L, start + 5, start, base, L.size)
    assert int(first.get(L, "zone_device_data")) == 0
    assert int(second.get(L, "zone_device_data")) == base + (start + 4) * L.size
    assert TEST_HMM_STEP in second.origin[16][-1]
    assert driver_step("nvme", page, L, start + 5, start, base, L.size) is page

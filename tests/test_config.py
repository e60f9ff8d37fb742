"""Configurations: presets, .config input, and the BTF layout check against real artefacts."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from equiv.config import PRESETS, from_kconfig
from equiv.engine.errors import InputError
from equiv.linux import kconfig
from equiv.linux.btf import BtfBuilder
from equiv.page_model import Layout
from equiv.proofs import main
from equiv.zone_device.source.layout_check import check_layout

LIVE_BTF = "/sys/kernel/btf/vmlinux"
LIVE_CONFIG = "/proc/config.gz"
#: the config Debian ships for its amd64 6.12 kernel (package linux-config-6.12), xz
DEBIAN_XZ = "/usr/src/linux-config-6.12/config.amd64_none_amd64.xz"

X86_CONFIG = """\
CONFIG_64BIT=y
CONFIG_X86_64=y
CONFIG_SMP=y
CONFIG_NR_CPUS=256
CONFIG_NUMA=y
CONFIG_NODES_SHIFT=10
CONFIG_NUMA_BALANCING=y
CONFIG_SPARSEMEM_VMEMMAP=y
CONFIG_MEMCG=y
CONFIG_SLAB_OBJ_EXT=y
CONFIG_MMU=y
CONFIG_PAGE_IDLE_FLAG=y
CONFIG_PAGE_MAPCOUNT=y
CONFIG_MM_ID=y
CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP=y
CONFIG_ARCH_WANT_OPTIMIZE_DAX_VMEMMAP=y
CONFIG_HAVE_ALIGNED_STRUCT_PAGE=y
CONFIG_ZONE_DMA=y
CONFIG_ZONE_DMA32=y
CONFIG_ZONE_DEVICE=y
CONFIG_ILLEGAL_POINTER_VALUE=0xdead000000000000
# CONFIG_KMSAN is not set
CONFIG_CMDLINE="quiet splash"
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


class TestPresets:
    @pytest.mark.parametrize(("name", "size"), [
        ("x86_64-default", 64), ("x86_64-kmsan", 80), ("x86_64-kmsan-cpupid-outside", 96),
        ("x86_64-no-memcg", 64), ("x86_64-want-page-virtual", 80), ("arm64-4k", 64),
        ("arm64-cpupid-outside", 72)])
    def test_sizes(self, name: str, size: int) -> None:
        """sizeof(struct page) of each preset (KMSAN 80, KMSAN + cpupid outside 96)."""
        assert Layout.from_config(PRESETS[name]).size == size

    def test_arm64_cpupid_really_leaves_flags(self) -> None:
        """On arm64 with tag-based KASAN the formulas push the cpupid into _last_cpupid."""
        L = Layout.from_config(PRESETS["arm64-cpupid-outside"])
        assert L.flags.last_cpupid_not_in_page_flags and not PRESETS["arm64-cpupid-outside"].hypothetical

    def test_pud_orders(self) -> None:
        """Orders run to the PUD order of the page size."""
        assert [PRESETS[n].max_order for n in ("arm64-4k", "arm64-16k", "arm64-64k")] == [18, 22, 26]

    def test_hypothetical_presets_are_labelled(self) -> None:
        """Every hypothetical preset says so in the text report."""
        code, out, _ = run("--config", "x86_64-section-in-flags", "--orders", "0", "--types",
                           "GENERIC", "--jobs", "1")
        assert code == 0 and "HYPOTHETICAL" in out

    @pytest.mark.slow
    def test_every_preset_proves_the_whole_matrix(self) -> None:
        """--config all: every preset x type x order is PROVED."""
        code, out, _ = run("--config", "all", "--no-times")
        assert code == 0, out[-2000:]
        # a line per preset first (wrapped to mail width), then each preset's report
        head, _, reports = out.partition("\n\n")
        assert head.startswith(f"equiv PROVED: {len(PRESETS)} runs\n")
        assert sum(ln.startswith("  PROVED   zone-device ") for ln in head.splitlines()) \
            == len(PRESETS)
        assert reports.count(" cells): ") == len(PRESETS)  # one summary line per preset


class TestKconfig:
    def test_plain_and_gzip(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        """A .config, plain or gzip, gives the same configuration; header constants are assumed."""
        plain, gz = tmp_path / "config", tmp_path / "config.gz"
        plain.write_text(X86_CONFIG)
        gz.write_bytes(gzip.compress(X86_CONFIG.encode()))
        a, b = from_kconfig(str(plain)), from_kconfig(str(gz))
        assert (a.NODES_SHIFT, a.NR_CPUS, a.PAGE_IDLE_FLAG, a.MEMORY_FAILURE, a.KMSAN) == \
            (10, 256, True, False, False)
        assert a.assumed and any("SECTION_SIZE_BITS" in x for x in a.assumed)
        assert Layout.from_config(a).flags.nr_pageflags == 23
        assert (b.NODES_SHIFT, b.NR_CPUS) == (10, 256)

    @pytest.mark.parametrize(("text", "msg"), [
        ("hello\n", "has no CONFIG_ lines"),
        ("CONFIG_64BIT=y\nCONFIG_RISCV=y\n", "arch RISCV is not modelled; valid: x86_64, arm64"),
        (X86_CONFIG.replace("CONFIG_ZONE_DEVICE=y\n", ""), "CONFIG_ZONE_DEVICE is not set"),
        (X86_CONFIG.replace("CONFIG_NODES_SHIFT=10", "CONFIG_NODES_SHIFT=ten"), "is not a number"),
        (X86_CONFIG.replace("CONFIG_NODES_SHIFT=10", "CONFIG_NODES_SHIFT=60"), "does not fit"),
    ])
    def test_bad_config_is_a_one_line_error(self, tmp_path, text: str, msg: str) -> None:  # type: ignore[no-untyped-def]
        """Unusable .config files: exit 3 with the reason."""
        path = tmp_path / "config"
        path.write_text(text)
        code, out, err = run("--kconfig", str(path), "--orders", "0", "--types", "GENERIC")
        assert code == 3 and out == "" and err.count("\n") == 1
        assert msg in err

    def test_unreadable_and_corrupt(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        """Missing file and corrupt gzip are input errors."""
        with pytest.raises(InputError, match="cannot read"):
            from_kconfig(str(tmp_path / "missing"))
        bad = tmp_path / "bad.gz"
        bad.write_bytes(b"\x1f\x8b\x08garbage")
        with pytest.raises(InputError, match="corrupt gzip"):
            from_kconfig(str(bad))

    @pytest.mark.parametrize(("name", "compress"), [("xz", lzma.compress), ("bzip2", bz2.compress)])
    def test_xz_and_bzip2(self, tmp_path: Path, name: str, compress: Callable[[bytes], bytes]
                          ) -> None:
        """Debian ships its kernels' configs as xz (linux-config-6.12): read like gzip, not
        refused as "not UTF-8"; a truncated one is corrupt data of that compression."""
        path = tmp_path / "config.packed"
        data = compress(X86_CONFIG.encode())
        path.write_bytes(data)
        assert kconfig.read(str(path)) == kconfig.parse(X86_CONFIG)
        code, out, _ = run("--kconfig", str(path), "--orders", "0", "--types", "GENERIC",
                           "--quiet", "--no-times")
        assert code == 0 and "12 proved" in out
        path.write_bytes(data[: len(data) // 2])
        with pytest.raises(InputError, match=f"corrupt {name} data"):
            kconfig.read_text(str(path))

    def test_zstd_without_a_reader_says_how_to_decompress(self, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
        """zstd data (a frame's magic bytes): read by Python's own reader where it has one,
        else one line naming the compression and the command."""
        path = tmp_path / "config.zst"
        path.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 16)
        monkeypatch.setitem(sys.modules, "compression", None)
        code, out, err = run("--kconfig", str(path), "--orders", "0", "--types", "GENERIC")
        assert (code, out) == (3, "")
        assert err == (f"equiv: error: --kconfig {str(path)!r} is zstd-compressed and this "
                       "Python has no zstd reader; decompress it first (unzstd "
                       f"{path}) and give the text .config\n")

    def test_other_binary_data_names_the_compressions_read(self, tmp_path: Path) -> None:
        path = tmp_path / "config.lz4"
        path.write_bytes(b"\x04\x22\x4d\x18\xff\xfe")
        with pytest.raises(InputError, match="not UTF-8, nor gzip, xz, bzip2 or zstd data"):
            kconfig.read_text(str(path))

    @pytest.mark.skipif(not os.path.exists(DEBIAN_XZ), reason=f"needs {DEBIAN_XZ} "
                        "(Debian's linux-config-6.12)")
    def test_debians_shipped_config(self) -> None:
        cfg = from_kconfig(DEBIAN_XZ)
        assert cfg.arch == "x86_64" and cfg.NODES_SHIFT == 10


def btf_from_layout(L: Layout, shift: dict[str, int] | None = None) -> bytes:
    """A BTF blob whose struct page / folio have exactly the model's layout (plus ``shift``
    bytes added to the named fields, to make a kernel that differs)."""
    shift = shift or {}
    b = BtfBuilder()
    u64, u32 = b.int_type("unsigned long", 8), b.int_type("unsigned int", 4)
    lh_ptr = b.ptr(b.next_id + 1)
    lh = b.struct("list_head", 16, [("next", lh_ptr, 0), ("prev", lh_ptr, 64)])
    rcu = b.struct("rcu_head", 16, [("next", u64, 0), ("func", u64, 64)])
    arr = b.array(u32, 2)
    page: list[tuple[str, int, int]] = []
    folio: list[tuple[str, int, int]] = []
    for v in L.views:
        top, _, sub = v.name.partition(".")
        if v.page is None and top == "folio":
            folio.append((sub, u64, 8 * (v.offset + shift.get(v.name, 0))))
            continue
        if v.name.startswith("_mm_id_mapcount"):
            if v.name.endswith("[0]"):
                folio.append(("_mm_id_mapcount", arr, 8 * (L.size + v.offset)))
            continue
        ty = lh if top in ("lru", "buddy_list", "_deferred_list") else rcu if top == "rcu_head" \
            else u32 if v.size == 4 else u64
        off = v.offset - (8 if sub in ("prev", "func") else 0) + shift.get(v.name, 0)
        entry = (top, ty, 8 * (off + (v.page or 0) * L.size))
        (page if v.page is None else folio).append(entry)
    b.struct("page", L.size, list(dict.fromkeys(page)))
    b.struct("folio", 4 * L.size, list(dict.fromkeys(folio)))
    return b.to_bytes()


class TestBtfLayoutCheck:
    @pytest.mark.parametrize("name", sorted(PRESETS))
    def test_model_matches_its_own_btf(self, name: str) -> None:
        """A BTF blob built from the model's layout matches it field for field."""
        L = Layout.from_config(PRESETS[name])
        from equiv.linux.btf import Btf

        rep = check_layout(L, Btf.from_bytes(btf_from_layout(L)))
        assert rep.ok, [r for r in rep.rows if r.verdict != "MATCH"]
        assert len(rep.rows) == len(L.views) + 1

    def test_mismatch_exits_1(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        """A kernel whose _refcount moved is reported as MISMATCH, exit 1."""
        L = Layout.from_config(PRESETS["x86_64-default"])
        path = tmp_path / "vmlinux.btf"
        path.write_bytes(btf_from_layout(L, {"_refcount": 4}))
        code, out, _ = run("--btf", str(path), "--config", "x86_64-default")
        assert code == 1
        assert "_refcount" in out and "MISMATCH" in out

    @pytest.mark.parametrize(("data", "msg"), [
        (b"", "is empty"), (b"\x7fELF" + bytes(40), "not a BTF blob"),
    ])
    def test_bad_blobs_exit_3(self, tmp_path, data: bytes, msg: str) -> None:  # type: ignore[no-untyped-def]
        """Empty, wrong-kind and truncated blobs: one-line error, exit 3."""
        path = tmp_path / "x.btf"
        path.write_bytes(data)
        code, _, err = run("--btf", str(path))
        assert code == 3 and err.count("\n") == 1 and msg in err

    def test_truncated_blob_exits_3(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        """A blob cut short is rejected with the reason."""
        blob = btf_from_layout(Layout.from_config(PRESETS["x86_64-default"]))
        path = tmp_path / "t.btf"
        path.write_bytes(blob[: len(blob) // 2])
        code, _, err = run("--btf", str(path))
        assert code == 3 and "truncated" in err

    def test_btf_needs_one_config(self) -> None:
        """--btf with --config all is a usage error."""
        code, _, err = run("--btf", "x", "--config", "all")
        assert code == 3 and "one configuration" in err

    @pytest.mark.skipif(not (os.path.exists(LIVE_BTF) and os.path.exists(LIVE_CONFIG)),
                        reason="no running-kernel BTF and config on this machine")
    def test_running_kernel(self) -> None:
        """The running kernel's struct page and folio match the model built from its .config."""
        code, out, _ = run("--btf", LIVE_BTF, "--kconfig", LIVE_CONFIG)
        assert code == 0, out
        assert "0 differ" in out

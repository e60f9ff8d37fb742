"""The live check's second layer (equiv/zone_device/live): parsing equiv_dump.ko's files, the guest script
and the boot.

The fast tests build small dumps in the test and replace the boot.  What a real boot dumped
is checked by :func:`check_dump_facts`, which tests/test_live_cli.py's whole live check (a
slow test: Debian's 6.12.117 booted under virtme-ng, QEMU's software emulation where KVM does
not run ordinary guests) calls on its devdax 2M ``--map dev`` and devdax 4K ``--map mem``
dumps.  Missing host tools are installed when running as root; otherwise the test fails
naming them, never skips.
"""

from __future__ import annotations

import errno
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from equiv.engine.errors import InputError
from equiv.zone_device.live import boot, dump, host, packages

PAGE = 64  # sizeof(struct page) on 6.12 x86_64

LAYOUT = {
    "sizeof_struct_page": PAGE, "sizeof_struct_folio": 4 * PAGE,
    "vmemmap_base": "0xffffea0000000000", "page_offset_base": "0xffff888000000000",
    "PAGE_SHIFT": 12, "NR_PAGEFLAGS": 24, "SECTIONS_PGSHIFT": 0, "SECTIONS_WIDTH": 0,
    "NODES_PGSHIFT": 54, "NODES_WIDTH": 10, "NODES_SHIFT": 10, "ZONES_PGSHIFT": 51,
    "ZONES_WIDTH": 3, "LAST_CPUPID_PGSHIFT": 30, "LAST_CPUPID_WIDTH": 21,
    "KASAN_TAG_PGSHIFT": 0, "KASAN_TAG_WIDTH": 0, "ZONE_DEVICE": 4, "MAX_NR_ZONES": 5,
    "MAX_PAGE_ORDER": 10, "pageblock_order": 9, "NR_PAGEBLOCK_BITS": 4, "MIGRATE_MOVABLE": 1,
    "PAGES_PER_SECTION": 32768, "SECTION_SIZE_BITS": 27, "PG_reserved": 10, "PG_head": 6,
    "TAIL_MAPPING": "0xdead000000000400", "MEMORY_DEVICE_PRIVATE": 1,
    "MEMORY_DEVICE_COHERENT": 2, "MEMORY_DEVICE_FS_DAX": 3, "MEMORY_DEVICE_GENERIC": 4,
    "MEMORY_DEVICE_PCI_P2PDMA": 5, "PGMAP_ALTMAP_VALID": 1, "offsetof_page_flags": 0,
    "offsetof_page_compound_head": 8, "offsetof_page_pgmap": 8, "offsetof_page_mapcount": 48,
    "offsetof_page_refcount": 52, "offsetof_folio_nr_pages": 96,
}

START = 0x100000  # 4 GiB


def _layout_text(**changes: Any) -> str:
    values = {**LAYOUT, **changes}
    return "".join(f"{k} {v}\n" for k, v in values.items() if v is not None)


def _pgmap_text(pfn: int = START, flags: int = 1, nr_range: int = 1) -> str:
    return (f"pfn {pfn}\npgmap 0xffff888100a3c000\ntype 4\nflags 0x{flags:x}\n"
            "vmemmap_shift 9\nops 0xffffffffc0a01000\nowner 0x0\n"
            f"altmap.base_pfn {START}\naltmap.end_pfn {START + 0x1ffff}\naltmap.reserve 2\n"
            "altmap.free 2046\naltmap.align 0\naltmap.alloc 2046\naltmap.inaccessible 0\n"
            f"nr_range {nr_range}\nrange0 0x100000000 0x11fffffff\n")


def _record(pfn: int, status: int = 0, flags: int = 0) -> bytes:
    body = flags.to_bytes(8, "little") + bytes(PAGE - 8) if status == 0 else bytes(PAGE)
    return pfn.to_bytes(8, "little") + status.to_bytes(8, "little", signed=True) + body


def _pages_bytes(start: int = START, nr: int = 4, records: bytes | None = None,
                 header: str | None = None) -> bytes:
    head = header or (f"equiv_dump pages 1 start_pfn={start} nr_pages={nr} page_size={PAGE} "
                      f"record={16 + PAGE}")
    raw = head.encode().ljust(127) + b"\n"
    if records is None:
        flags = 4 << 51 | 1 << 10
        records = b"".join(_record(start + i, 0 if i else -errno.EFAULT, flags) for i in range(nr))
    return raw + records


def _write_dump(d: Path, **files: str | bytes) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    defaults: dict[str, str | bytes] = {
        "layout": _layout_text(), "pgmap": _pgmap_text(), "pages": _pages_bytes(),
        "pageblocks": f"{START} 1\n"}
    for name, content in {**defaults, **files}.items():
        if isinstance(content, bytes):
            (d / name).write_bytes(content)
        else:
            (d / name).write_text(content)
    return d


# --- parsing ------------------------------------------------------------------------------

def test_a_synthetic_dump_loads(tmp_path: Path) -> None:
    d = dump.load(_write_dump(tmp_path / "ns"))
    assert d.layout["NR_PAGEFLAGS"] == 24 and d.layout["vmemmap_base"] == 0xffffea0000000000
    assert d.layout.page_size == PAGE
    assert d.pgmap is not None and d.pgmap.type == 4 and d.pgmap.vmemmap_shift == 9
    assert d.pgmap.altmap_valid(d.layout)
    assert d.pgmap.first_device_pfn(d.layout) == START + 2 + 2046
    assert d.pgmap.ranges == ((0x100000000, 0x11fffffff),)
    assert len(d.pages) == 4 and START + 3 in d.pages and START + 4 not in d.pages
    first, second = d.pages[START], d.pages[START + 1]
    assert first.status == -errno.EFAULT and not first.read and first.raw == bytes(PAGE)
    assert second.read and second.pfn == START + 1
    assert d.layout.field("ZONES", second.u64(0)) == 4
    assert second.u64(0) >> d.layout["PG_reserved"] & 1
    assert [r.pfn for r in d.pages] == [START + i for i in range(4)]
    assert d.pageblocks == (dump.Pageblock(START, 1),) and d.pageblocks[0].migratetype == 1
    with pytest.raises(KeyError):
        d.pages[START - 1]


def test_record_words() -> None:
    raw = (5).to_bytes(8, "little") + (-1).to_bytes(4, "little", signed=True) + bytes(PAGE - 12)
    r = dump.PageRecord(7, 0, raw)
    assert r.u64(0) == 5 and r.s32(8) == -1 and r.u32(8) == 0xffffffff


def test_a_pfn_without_pgmap(tmp_path: Path) -> None:
    d = dump.load(_write_dump(tmp_path / "ns", pgmap=f"pfn {START}\npgmap 0x0\n"))
    assert d.pgmap is None


def test_no_altmap_means_the_range_start(tmp_path: Path) -> None:
    d = dump.load(_write_dump(tmp_path / "ns", pgmap=_pgmap_text(flags=0)))
    assert d.pgmap is not None and d.pgmap.first_device_pfn(d.layout) == START


def test_pageblocks_without_usemap() -> None:
    blocks = dump.parse_pageblocks("512 -1\n1024 9\n")
    assert blocks[0].bits is None and blocks[0].migratetype is None
    assert blocks[1].migratetype == 1


@pytest.mark.parametrize(("name", "content", "message"), [
    ("layout", _layout_text(NR_PAGEFLAGS=None), "missing NR_PAGEFLAGS"),
    ("layout", _layout_text() + "PG_head 6\n", "PG_head is given twice"),
    ("layout", _layout_text(PG_head="six"), "'six' is not a number"),
    ("layout", _layout_text() + "lonely\n", "has a name but no value"),
    ("pgmap", _pgmap_text(nr_range=2), "nr_range 2 but ranges"),
    ("pgmap", _pgmap_text().replace("vmemmap_shift 9\n", ""), "missing vmemmap_shift"),
    ("pgmap", _pgmap_text(pfn=START + 1), "pgmap of pfn"),
    ("pages", _pages_bytes()[:-1], "a truncated copy"),
    ("pages", _pages_bytes()[:100], "shorter than the 128-byte header"),
    ("pages", _pages_bytes(header="equiv_dump pages 2 start_pfn=1"), "is not 'equiv_dump pages 1"),
    ("pages", _pages_bytes(header=f"equiv_dump pages 1 start_pfn={START} nr_pages=4 "
                                  f"page_size={PAGE} record=64"), "record=64 does not fit"),
    ("pages", _pages_bytes(records=b"".join(_record(START + i) for i in (0, 2, 1, 3))),
     "record 1 has pfn 0x100002, expected 0x100001"),
    ("pages", _pages_bytes(records=b"".join(_record(START + i, -5 if i == 2 else 0)
                                            for i in range(4))), "unknown record status -5"),
    ("pages", _pages_bytes(header=f"equiv_dump pages 1 start_pfn={START} nr_pages=1 "
                                  f"page_size=56 record=72",
                           records=START.to_bytes(8, "little") + bytes(64)),
     "page_size=56 but the layout says sizeof_struct_page 64"),
    ("pageblocks", f"{START} 1\n{START} 1\n", "after"),
    ("pageblocks", f"{START} 1 2\n", "expected 'PFN BITS'"),
    ("pageblocks", f"{START + 512} 1\n", "pageblocks do not cover"),
])
def test_a_malformed_dump_is_an_input_error(tmp_path: Path, name: str, content: str | bytes,
                                            message: str) -> None:
    d = _write_dump(tmp_path / "ns", **{name: content})
    with pytest.raises(InputError, match=re.escape(message)) as e:
        dump.load(d)
    assert "\n" not in str(e.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    d = _write_dump(tmp_path / "ns")
    (d / "pageblocks").unlink()
    with pytest.raises(InputError, match="no 'pageblocks' file"):
        dump.load(d)


# --- the guest script and the boot (no boot) ----------------------------------------------

def test_namespaces() -> None:
    ns = boot.Namespace.parse("devdax-2M-dev")
    assert ns == boot.Namespace("devdax", "2M", "dev") and ns.name == "devdax-2M-dev"
    with pytest.raises(InputError, match="namespace align '8K': valid: 4K, 2M, 1G"):
        boot.Namespace("fsdax", "8K", "mem")
    with pytest.raises(InputError, match="expected MODE-ALIGN-MAP"):
        boot.Namespace.parse("devdax")
    assert boot.memory_plan([ns, boot.Namespace("devdax", "1G", "dev")]) == ("6G", "memmap=2G!4G")


def test_the_guest_script(tmp_path: Path) -> None:
    nss = [boot.Namespace("devdax", "2M", "dev"), boot.Namespace("fsdax", "4K", "mem")]
    text = boot.guest_script(tmp_path / "equiv_dump.ko", nss, tmp_path)
    assert "modprobe -a nd_e820 nd_pmem dax_pmem device_dax" in text
    assert 'insmod "$out/equiv_dump.ko"' in text
    assert "ndctl create-namespace -f -e namespace0.0 -m devdax --align 2M --map dev" in text
    assert "ndctl create-namespace -f -e namespace0.0 -m fsdax --align 4K --map mem" in text
    assert text.index("devdax-2M-dev") < text.index("fsdax-4K-mem") < text.index('"$out/done"')
    for f in boot.DUMP_FILES:
        assert f'cat {boot.DEBUGFS}/{f} > "$out/fsdax-4K-mem"/{f}' in text
    # the script is valid sh
    subprocess.run(["sh", "-n"], input=text, text=True, check=True)


def test_the_vng_command(tmp_path: Path) -> None:
    files = packages.KernelFiles(tmp_path / "root")
    cmd = boot.vng_command(files, tmp_path, "3G", "memmap=512M!4G", False, tmp_path / "g.sh")
    assert cmd[:2] == [host.command(host.VNG), "--disable-kvm"]
    assert cmd[cmd.index("--append") + 1] == "memmap=512M!4G"
    assert cmd[cmd.index("--run") + 1] == str(files.image)
    assert cmd[cmd.index("--rwdir") + 1] == str(tmp_path)
    assert cmd[-1] == f"sh {tmp_path}/g.sh"
    assert "--disable-kvm" not in boot.vng_command(files, tmp_path, "1G", "", True, tmp_path)


def _fake_boot(monkeypatch: pytest.MonkeyPatch, guest: str | None, marker: bool) -> list[Any]:
    calls: list[Any] = []
    monkeypatch.setattr(shutil, "which", lambda c, path=None: f"/usr/bin/{c}")
    monkeypatch.setenv("EQUIV_LIVE_KVM", "0")

    def run(cmd: list[str], log: Path, timeout: float) -> tuple[int | None, float]:
        calls.append(cmd)
        out = Path(cmd[cmd.index("--rwdir") + 1])
        log.write_text("[    0.000000] Linux version 6.12.117\nqemu: console tail\n")
        if guest is not None:
            (out / boot.GUEST_LOG).write_text(guest)
        if marker:
            (out / boot.MARKER).write_text("ok\n")
        return 255, 21.0

    monkeypatch.setattr(boot, "_run", run)
    return calls


def test_the_marker_decides_not_the_exit_status(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    calls = _fake_boot(monkeypatch, "equiv-guest: done\n", True)
    ko = tmp_path / "equiv_dump.ko"
    ko.write_bytes(b"\x7fELF")
    ns = boot.Namespace("devdax", "2M", "dev")
    out = boot.boot_and_dump(packages.KernelFiles(tmp_path / "root"), ko, [ns], tmp_path / "o")
    assert out == {ns: (tmp_path / "o" / "devdax-2M-dev").resolve()}
    assert "--disable-kvm" in calls[0] and (tmp_path / "o" / "equiv_dump.ko").exists()


def test_a_failed_guest_names_its_log_tail(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_boot(monkeypatch, "equiv-guest: namespace devdax-1G-dev\n"
                            "equiv-guest: FAILED: ndctl create-namespace devdax-1G-dev\n", False)
    ko = tmp_path / "equiv_dump.ko"
    ko.write_bytes(b"")
    with pytest.raises(InputError) as e:
        boot.boot_and_dump(packages.KernelFiles(tmp_path / "root"), ko,
                           [boot.Namespace("devdax", "1G", "dev")], tmp_path / "o")
    msg = str(e.value)
    assert "\n" not in msg
    assert "vng exited 255 after 21 s (TCG) without the guest's marker" in msg
    assert msg.endswith(f"FAILED: ndctl create-namespace devdax-1G-dev (logs in {tmp_path / 'o'})")


def test_a_guest_that_never_ran_names_the_console(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    _fake_boot(monkeypatch, None, False)
    ko = tmp_path / "equiv_dump.ko"
    ko.write_bytes(b"")
    with pytest.raises(InputError, match=r"the guest script never ran; vng.log: .*console tail"):
        boot.boot_and_dump(packages.KernelFiles(tmp_path / "root"), ko,
                           [boot.Namespace("devdax", "4K", "mem")], tmp_path / "o")


#: a console's oops as the kernel prints one; CI's message kept only the registers (CR2
#: ff175563fffff000) and the panic line, so the BUG and RIP lines here are made up
CRASH = ("[    0.556742] BUG: unable to handle page fault for address: ff175563fffff000\n"
         "[    0.556742] RIP: 0010:native_write_msr+0x4/0x20\n"
         "[    0.556742] R13: 0000000000000cc0 R14: 0000000000000018\n"
         "[    0.556742] Kernel panic - not syncing: Fatal exception in interrupt\n")


def _boots(monkeypatch: pytest.MonkeyPatch, outcomes: list[str]) -> list[Any]:
    """A fake vng whose n-th boot is ``outcomes[n]``: ``crash`` (the console's oops, the
    script never ran), ``ok`` (the script ran and wrote its marker), ``fail`` (the script
    ran and failed), ``silent`` (no script, no oops)."""
    calls: list[Any] = []
    monkeypatch.setattr(shutil, "which", lambda c, path=None: f"/usr/bin/{c}")
    monkeypatch.setenv("EQUIV_LIVE_KVM", "0")

    def run(cmd: list[str], log: Path, timeout: float) -> tuple[int | None, float]:
        what = outcomes[len(calls)]
        calls.append(cmd)
        out = Path(cmd[cmd.index("--rwdir") + 1])
        log.write_text("[    0.000000] Linux version 6.12.117\n" +
                       (CRASH if what == "crash" else "qemu: console tail\n"))
        if what in ("ok", "fail"):
            (out / boot.GUEST_LOG).write_text("equiv-guest: started\n" +
                                              ("" if what == "ok" else "FAILED: ndctl\n"))
        if what == "ok":
            (out / boot.MARKER).write_text("ok\n")
        return 255, 11.0

    monkeypatch.setattr(boot, "_run", run)
    return calls


def _boot_1g(tmp_path: Path, again: Callable[[str], None] = lambda _s: None,
             ) -> dict[boot.Namespace, Path]:
    ko = tmp_path / "equiv_dump.ko"
    ko.write_bytes(b"")
    return boot.boot_and_dump(packages.KernelFiles(tmp_path / "root"), ko,
                              [boot.Namespace("devdax", "1G", "dev")], tmp_path / "o",
                              again=again)


def test_a_guest_kernel_crash_before_the_script_is_booted_once_more(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The crash seen once in CI (the Debian kernel's oops 0.56 s into a TCG boot): booted
    again, the reason reported with the oops's lines and the first console kept."""
    calls = _boots(monkeypatch, ["crash", "ok"])
    said: list[str] = []
    got = _boot_1g(tmp_path, said.append)
    assert len(calls) == 2 and list(got) == [boot.Namespace("devdax", "1G", "dev")]
    assert len(said) == 1
    assert "crashed 11 s into the boot (TCG), before the guest script ran" in said[0]
    assert "BUG: unable to handle page fault for address: ff175563fffff000 | RIP: " in said[0]
    assert "R13" not in said[0] and said[0].endswith(str(tmp_path / "o" / boot.FIRST_VNG_LOG))
    assert "BUG: unable" in (tmp_path / "o" / boot.FIRST_VNG_LOG).read_text()
    assert "BUG: unable" not in (tmp_path / "o" / boot.VNG_LOG).read_text()


def test_a_second_crash_is_the_error_naming_the_oops(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    calls = _boots(monkeypatch, ["crash", "crash"])
    with pytest.raises(InputError) as e:
        _boot_1g(tmp_path)
    msg = str(e.value)
    assert len(calls) == 2 and "\n" not in msg
    assert ("the guest script never ran; vng.log: BUG: unable to handle page fault for "
            "address: ff175563fffff000 | RIP: 0010:native_write_msr+0x4/0x20 | Kernel panic - "
            "not syncing: Fatal exception in interrupt (logs in") in msg


@pytest.mark.parametrize("outcome", ["fail", "silent"])
def test_no_second_boot_without_a_crash_before_the_script(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, outcome: str) -> None:
    """A guest script that ran and failed (the failure may be this tool's), or a console
    with no oops: one boot, the error at once."""
    calls = _boots(monkeypatch, [outcome, "ok"])
    said: list[str] = []
    with pytest.raises(InputError):
        _boot_1g(tmp_path, said.append)
    assert len(calls) == 1 and said == []


def test_a_namespace_twice_is_refused(tmp_path: Path) -> None:
    ns = boot.Namespace("devdax", "4K", "mem")
    with pytest.raises(InputError, match="requested twice"):
        boot.boot_and_dump(packages.KernelFiles(tmp_path), tmp_path, [ns, ns], tmp_path)


def test_depmod_runs_once_after_unpacking(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    files = packages.KernelFiles(tmp_path / "root")
    files.modules.mkdir(parents=True)
    calls: list[list[str]] = []

    def run(args: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        (files.modules / "modules.dep").write_text("")
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(shutil, "which", lambda c, path=None: f"/usr/sbin/{c}")
    packages.run_depmod(files)
    packages.run_depmod(files)
    assert calls == [["depmod", "-b", str(files.root), packages.RELEASE]]


def test_a_failed_depmod_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    files = packages.KernelFiles(tmp_path / "root")
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: subprocess.CompletedProcess(
        args, 1, "", "depmod: ERROR: could not open directory"))
    monkeypatch.setattr(shutil, "which", lambda c, path=None: f"/usr/sbin/{c}")
    with pytest.raises(InputError, match=r"depmod -b .* failed \(depmod: ERROR"):
        packages.run_depmod(files)
    monkeypatch.setattr(shutil, "which", lambda c, path=None: None)
    with pytest.raises(InputError, match=r"needs depmod \(kmod\)"):
        packages.run_depmod(files)


def test_the_command_line_rejects_a_bad_namespace() -> None:
    import io

    from equiv.zone_device.live.__main__ import main

    err = io.StringIO()
    assert main(["--boot", "devdax-3M-dev"], out=io.StringIO(), err=err) == 3
    assert err.getvalue() == "equiv: error: namespace align '3M': valid: 4K, 2M, 1G\n"


def test_the_doctests_of_boot() -> None:
    import doctest

    assert doctest.testmod(boot).failed == 0


# --- what a real boot dumped ----------------------------------------------------------------

def check_dump_facts(files: packages.KernelFiles, d2: dump.Dump, d4: dump.Dump) -> None:
    """The basic facts of a devdax 2M ``--map dev`` dump (``d2``) and a devdax 4K ``--map
    mem`` dump (``d4``) of 6.12.117 (run by tests/test_live_cli.py's whole live check, which
    boots the kernel once for every default namespace)."""
    from equiv.config import from_kconfig
    from equiv.page_model import OLDER_ALWAYS_PAGEFLAGS, FlagsLayout

    # the layout constants are the model's for Debian's config, with 6.12's page flags
    model = FlagsLayout.from_config(from_kconfig(str(files.config)), OLDER_ALWAYS_PAGEFLAGS["6.12"])
    L = d2.layout
    assert L["NR_PAGEFLAGS"] == model.nr_pageflags == 24
    for f in model.fields:
        if f.width:
            # the kernel has LRU_GEN_PGOFF / LRU_REFS_PGOFF, no *_PGSHIFT, for these two
            off = "PGOFF" if f.name.startswith("LRU_") else "PGSHIFT"
            assert (L[f"{f.name}_{off}"], L[f"{f.name}_WIDTH"]) == (f.pgshift, f.width), f.name
    assert (L["ZONES_PGSHIFT"], L["NODES_PGSHIFT"], L["LAST_CPUPID_PGSHIFT"]) == (51, 54, 30)
    assert L.page_size == 64 and L["ZONE_DEVICE"] == 4
    assert d4.layout.values == L.values

    for d, shift, altmap in ((d2, 9, True), (d4, 0, False)):
        pg = d.pgmap
        assert pg is not None
        assert pg.type == L["MEMORY_DEVICE_GENERIC"] == 4
        assert pg.vmemmap_shift == shift and pg.altmap_valid(L) is altmap
        assert d.pages.start_pfn == pg.ranges[0][0] >> 12
        first = d.pages[pg.first_device_pfn(L)]
        assert first.read
        flags = first.u64(L["offsetof_page_flags"])
        assert L.field("ZONES", flags) == L["ZONE_DEVICE"]
        assert flags >> L["PG_reserved"] & 1
        assert first.u64(L["offsetof_page_pgmap"]) == pg.pointer
    # 2M: the first device page is a compound head, its next page a tail pointing at it
    pg2 = d2.pgmap
    assert pg2 is not None
    head_pfn = pg2.first_device_pfn(L)
    head = d2.pages[head_pfn]
    assert head.u64(0) >> L["PG_head"] & 1
    tail = d2.pages[head_pfn + 2]
    head_addr = L["vmemmap_base"] + head_pfn * L.page_size
    assert tail.u64(L["offsetof_page_compound_head"]) == head_addr | 1
    assert tail.u64(24) == L["TAIL_MAPPING"]
    # --map dev: the info block's two pfns are never initialised
    assert not d2.pages[d2.pages.start_pfn].u64(0) & (7 << L["ZONES_PGSHIFT"])
    # pageblocks: --map dev leaves the first one at migratetype 0 (its init starts at an
    # unaligned pfn), --map mem marks every one MIGRATE_MOVABLE
    movable = L["MIGRATE_MOVABLE"]
    assert d2.pageblocks[0].migratetype == 0
    assert {b.migratetype for b in d2.pageblocks[1:]} == {movable}
    assert {b.migratetype for b in d4.pageblocks} == {movable}

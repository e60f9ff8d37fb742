"""The pgmap types no driver of Debian's 6.12.117 kernel provides: MEMORY_DEVICE_COHERENT
(created by the dump module's ``memremap`` file and compared with the model) and
MEMORY_DEVICE_PRIVATE (refused by that kernel: ``# CONFIG_DEVICE_PRIVATE is not set``).
docs/live.md, "Other pgmap types", says which types are reached and why.

``tests/data/live/coherent-*`` are dumps of a real boot of Debian's 6.12.117 kernel
(``python -m equiv.zone_device.live --boot devdax-2M-dev coherent-4K-mem coherent-2M-dev coherent-4K-dev
coherent-2M-mem --out DIR``: the pmem region at 4 GiB puts the reserved one at 0x120000000),
cut down by ``test_live_compare.cut_dump`` and regenerated with::

    PYTHONPATH=. python tests/test_live_other_types.py DIR

    coherent-4K-mem   the first 1100 struct pages of a 512 MiB COHERENT pgmap, vmemmap_shift
                      0, memmap in System RAM (three pageblocks, the last one partial)
    coherent-2M-dev   the first 3 compounds of a COHERENT pgmap with vmemmap_shift 9 and its
                      memmap in the range (altmap reserve 0, free 2048), from the first pfn
                      memmap_init_zone_device() writes
    coherent-2M-mem   the first 2 compounds of a COHERENT pgmap with vmemmap_shift 9 and a
                      deduplicated vmemmap (tails 128.. read through the aliased vmemmap)

The slow tests boot for real (missing host tools are installed when running as root;
otherwise the test fails naming them, never skips).
"""

from __future__ import annotations

import gzip
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from host_lock import host_lock
from test_live_boot import _fake_boot

from equiv.config import Config, from_kconfig
from equiv.engine.errors import InputError
from equiv.zone_device.live import boot, build, host, packages
from equiv.zone_device.live.compare import compare
from equiv.zone_device.live.dump import HEADER_SIZE, Dump, load

DATA = Path(__file__).parent / "data" / "live"
#: the recorded COHERENT dumps: (first pfn or None for the first device pfn, struct pages)
CUTS: dict[str, tuple[int | None, int]] = {"coherent-4K-mem": (0x120000, 1100),
                                           "coherent-2M-dev": (None, 3 * 512),
                                           "coherent-2M-mem": (0x120000, 2 * 512)}
#: the recorded boot reserved 0x120000000 + 512 MiB (after a 512 MiB pmem region)
RANGE = (0x120000000, 0x13FFFFFFF)


@pytest.fixture(scope="module")
def cfg() -> Config:
    """The Debian 6.12.117 configuration (the cut in tests/data/live/config)."""
    return from_kconfig(str(DATA / "config"))


def copy(name: str, tmp: Path, pgmap: dict[str, str] | None = None,
         flip: tuple[int, int, int] | None = None) -> Path:
    """The recorded dump ``name`` under ``tmp``, with ``pgmap`` lines replaced (name to value)
    and ``flip`` = (pfn, offset, xor) applied to one byte of one struct page."""
    out = tmp / name
    shutil.copytree(DATA / name, out)
    if pgmap:
        text = (out / "pgmap").read_text()
        for key, value in pgmap.items():
            text = re.sub(rf"(?m)^{re.escape(key)} .*$", f"{key} {value}", text)
        (out / "pgmap").write_text(text)
    if flip:
        pfn, offset, xor = flip
        data = bytearray(gzip.decompress((out / "pages.gz").read_bytes()))
        m = re.search(rb"start_pfn=(\d+) .* record=(\d+)", bytes(data[:HEADER_SIZE]))
        assert m
        data[HEADER_SIZE + (pfn - int(m.group(1))) * int(m.group(2)) + 16 + offset] ^= xor
        (out / "pages.gz").unlink()
        (out / "pages").write_bytes(bytes(data))
    return out


def refcounts(d: Dump, first: int) -> set[int]:
    """The _refcount of every read struct page from ``first``."""
    off = d.layout["offsetof_page_refcount"]
    return {r.s32(off) for r in d.pages if r.pfn >= first and r.read}


# --- the recorded dumps -------------------------------------------------------------------

def test_the_recorded_data_is_small() -> None:
    size = sum(f.stat().st_size for n in CUTS for f in (DATA / n).iterdir())
    assert size < 30_000


@pytest.mark.parametrize(("name", "roles", "altmap"), [
    ("coherent-4K-mem", {"page": 1100}, False),
    ("coherent-2M-dev", {"head": 3, "tail 1": 3, "tail 2": 3, "tail >= 3": 3 * 509}, True),
    ("coherent-2M-mem", {"head": 2, "tail 1": 2, "tail 2": 2, "tail >= 3": 2 * 125,
                         "aliased tail": 2 * 384}, False)])
def test_a_recorded_coherent_dump_is_the_model(cfg: Config, name: str, roles: dict[str, int],
                                               altmap: bool) -> None:
    d = load(DATA / name)
    pg = d.pgmap
    assert pg is not None and pg.type == d.layout["MEMORY_DEVICE_COHERENT"] == 2
    assert pg.ranges == (RANGE,) and pg.altmap_valid(d.layout) is altmap
    r = compare(d, cfg)
    assert r.clean, r.summary()
    assert {x.role: x.compared for x in r.roles} == roles
    assert r.inputs["pgmap_type"] == 2 and r.pageblocks_compared >= 2
    # __init_zone_device_page() sets the count of a PRIVATE or COHERENT page to 0 (a devdax
    # or fsdax page keeps the 1 of __init_single_page())
    assert refcounts(d, r.first_pfn) == {0}


def test_the_altmap_of_the_modules_own_pgmap(cfg: Config) -> None:
    r = compare(load(DATA / "coherent-2M-dev"), cfg)
    assert (r.inputs["altmap_reserve"], r.inputs["altmap_free"]) == (0, 2048)
    assert r.first_pfn == 0x120000 + 2048 and r.end_pfn == 0x140000


def test_the_type_is_seen(cfg: Config, tmp_path: Path) -> None:
    """The same pages read as MEMORY_DEVICE_GENERIC: the model keeps the count at 1, so
    every page differs in _refcount and in nothing else."""
    r = compare(load(copy("coherent-4K-mem", tmp_path, pgmap={"type": "4"})), cfg)
    assert not r.clean and len(r.diffs) == 1100
    assert {(d.offset, d.live, d.model) for d in r.diffs} == {(52, 0, 1)}
    assert all("_refcount" in "/".join(d.names) for d in r.diffs)


@pytest.mark.parametrize(("name", "pfn", "offset", "field"), [
    ("coherent-4K-mem", 0x120000 + 5, 8, "pgmap"),
    ("coherent-2M-dev", 0x120800 + 512 + 7, 8, "compound_head"),  # 6.12's name
    ("coherent-2M-dev", 0x120800, 52, "_refcount")])
def test_a_seeded_difference_is_named(cfg: Config, tmp_path: Path, name: str, pfn: int,
                                      offset: int, field: str) -> None:
    r = compare(load(copy(name, tmp_path, flip=(pfn, offset, 0x10))), cfg)
    assert len(r.diffs) == 1, r.summary()
    d = r.diffs[0]
    assert d.pfn == pfn and any(field in n for n in d.names), d.names
    assert d.live ^ d.model == 0x10 << (8 * (offset - d.offset))


# --- the namespace kinds, the memory plan and the guest script (no boot) ------------------

def test_the_kinds() -> None:
    ns = boot.Namespace.parse("coherent-2M-dev")
    assert not ns.pmem and ns.vmemmap_shift == 9 and ns.name == "coherent-2M-dev"
    assert boot.Namespace.parse("devdax-1G-mem").vmemmap_shift == 18
    assert boot.Namespace.parse("private-4K-mem").vmemmap_shift == 0
    with pytest.raises(InputError, match="valid: devdax, fsdax, coherent, private"):
        boot.Namespace.parse("generic-4K-mem")
    with pytest.raises(InputError) as e:
        boot.Namespace.parse("private-4K-dev")
    assert str(e.value) == ("namespace private-4K-dev: MEMORY_DEVICE_PRIVATE memory is not CPU "
                            "addressable, so its memmap cannot live in it: use map mem")


@pytest.mark.parametrize(("names", "memory", "append", "own"), [
    (["coherent-4K-mem"], "3584M", "memmap=512M$4G", 0x100000000),
    (["devdax-2M-dev", "coherent-2M-dev"], "3584M", "memmap=512M!4G memmap=512M$4608M",
     0x120000000),
    (["fsdax-4K-mem", "coherent-1G-dev"], "8G", "memmap=2G!4G memmap=2G$6G", 0x180000000),
    (["devdax-4K-mem"], "3G", "memmap=512M!4G", None)])
def test_the_memory_plan(names: list[str], memory: str, append: str, own: int | None) -> None:
    p = boot.plan([boot.Namespace.parse(n) for n in names])
    assert (p.memory, p.append) == (memory, append)
    assert (p.own.start if p.own else None) == own
    assert boot.memory_plan([boot.Namespace.parse(n) for n in names]) == (memory, append)


def test_the_guest_script_of_own_pgmaps(tmp_path: Path) -> None:
    nss = [boot.Namespace.parse(n) for n in ("coherent-4K-mem", "coherent-2M-dev")]
    text = boot.guest_script(tmp_path / "equiv_dump.ko", nss, tmp_path)
    assert "modprobe" not in text and "ndctl" not in text and "region0" not in text
    mem = text.index("/bin/echo 'coherent 0x100000000 0x20000000 0 0' > "
                     f"{boot.DEBUGFS}/memremap")
    dev = text.index(f"/bin/echo 'coherent 0x100000000 0x20000000 9 1' > {boot.DEBUGFS}/memremap")
    remove = f"/bin/echo remove > {boot.DEBUGFS}/memremap"
    # each pgmap is dumped, then removed before the next one is created
    assert mem < text.index('"$out/coherent-4K-mem"/pages') < text.index(remove) < dev
    assert text.count(remove) == 2 and f"ownpfn={(0x100000000 + 0x10000000) >> 12}" in text
    assert text.index(remove, dev) < text.index('"$out/done"')
    subprocess.run(["sh", "-n"], input=text, text=True, check=True)


def test_a_refused_pgmap_is_one_line_with_the_kernels_words(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    """The boot fails when memremap_pages() refuses, and the error carries the kernel's
    message (these guest.log lines are the ones Debian's 6.12.117 wrote)."""
    calls = _fake_boot(monkeypatch, (
        "equiv-guest: namespace private-4K-mem\n/bin/echo: write error: Invalid argument\n"
        "[   17.085524] Device private memory not supported\n"
        "[   17.113138] equiv_dump: memremap_pages(private, 0x100000000-0x11fffffff, "
        "vmemmap_shift 0, altmap 0) failed: -22\n"
        "equiv-guest: FAILED: memremap_pages private-4K-mem\n"), marker=False)
    ko = tmp_path / "equiv_dump.ko"
    ko.write_bytes(b"")
    with pytest.raises(InputError) as e:
        boot.boot_and_dump(packages.KernelFiles(tmp_path / "root"), ko,
                           [boot.Namespace.parse("private-4K-mem")], tmp_path / "o")
    msg = str(e.value)
    assert "\n" not in msg and "Device private memory not supported" in msg
    assert "FAILED: memremap_pages private-4K-mem" in msg
    # the reservation reaches the kernel command line as one argument, '$' and all
    assert calls[0][calls[0].index("--append") + 1] == "memmap=512M$4G"
    assert calls[0][calls[0].index("--memory") + 1] == "3584M"


def test_the_command_line_rejects_a_private_memmap_in_the_device() -> None:
    from equiv.zone_device.live.__main__ import main

    err = io.StringIO()
    assert main(["--boot", "private-2M-dev"], out=io.StringIO(), err=err) == 3
    assert err.getvalue().startswith("equiv: error: namespace private-2M-dev: ")
    assert err.getvalue().count("\n") == 1


def test_the_module_offers_what_the_script_writes() -> None:
    """The guest script's words are the ones equiv_dump.c's memremap file parses."""
    src = (build.source_dir() / "equiv_dump.c").read_text()
    assert 'debugfs_create_file("memremap"' in src
    assert '"%15s %lli %lli %lu %d"' in src
    for word in ('"coherent"', '"private"', '"remove"'):
        assert word in src
    assert "memunmap_pages(own_pgmap)" in src and "MEMORY_DEVICE_COHERENT" in src


# --- the real thing -------------------------------------------------------------------------

def _kernel() -> tuple[packages.KernelFiles, Path]:
    with host_lock():  # dpkg's lock: tests/host_lock.py
        host.install_missing([*host.FETCH_TOOLS, *host.BUILD_TOOLS, *host.BOOT_TOOLS,
                             packages.DEPMOD_TOOL])
    files = packages.fetch()
    return files, build.build_module(files)


def check_coherent(dump_dir: Path, ns: boot.Namespace, first_pfn: int) -> None:
    """The facts of a real COHERENT dump the comparison does not look at: the pgmap the
    dump module's ``memremap`` file made (type, vmemmap_shift, altmap, one 512 MiB range,
    the file's own record of it) and every struct page's refcount 0 from ``first_pfn``.
    Called by tests/test_live_cli.py's whole live check for its coherent namespaces (one
    boot serves both; the comparison with the model is that run's)."""
    d = load(dump_dir)
    pg = d.pgmap
    altmap = ns.map == "dev"
    assert pg is not None and pg.type == d.layout["MEMORY_DEVICE_COHERENT"]
    assert pg.vmemmap_shift == ns.vmemmap_shift and pg.altmap_valid(d.layout) is altmap
    ((start, end),) = pg.ranges
    assert end - start + 1 == 0x20000000
    assert (dump_dir / "memremap").read_text().startswith(
        f"coherent {start:#x} 0x20000000 {ns.vmemmap_shift} {int(altmap)} pgmap ")
    assert refcounts(d, first_pfn) == {0}


@pytest.mark.slow
@pytest.mark.xdist_group("host")  # boots/installs: tests/conftest.py
def test_private_is_refused_by_debians_kernel(tmp_path: Path) -> None:
    """Debian's config lacks DEVICE_PRIVATE, PCI_P2PDMA and TEST_HMM; memremap_pages()
    refuses a PRIVATE pgmap with its warning (one boot, about 35 s under TCG)."""
    files, ko = _kernel()
    config = files.config.read_text()
    for line in ("# CONFIG_DEVICE_PRIVATE is not set", "# CONFIG_PCI_P2PDMA is not set",
                 "CONFIG_ZONE_DEVICE=y", "CONFIG_HMM_MIRROR=y"):
        assert re.search(rf"(?m)^{re.escape(line)}$", config), line
    assert "CONFIG_TEST_HMM" not in config
    with pytest.raises(InputError) as e:
        boot.boot_and_dump(files, ko, [boot.Namespace("private", "4K", "mem")],
                           tmp_path / "boot")
    msg = str(e.value)
    assert "Device private memory not supported" in msg, msg
    assert "memremap_pages(private, 0x100000000-0x11fffffff, vmemmap_shift 0, altmap 0) " \
           "failed: -22" in msg, msg
    assert "FAILED: memremap_pages private-4K-mem" in msg


if __name__ == "__main__":
    from test_live_compare import cut_dump

    boot_out = Path(sys.argv[1])
    for n, (first, nr) in CUTS.items():
        shutil.rmtree(DATA / n, ignore_errors=True)
        cut_dump(boot_out / n, DATA / n, first, nr)

"""The small all-types kernel in the live check (``--live --live-kernel all-types``, issue 33):
the two driver kinds (``hmm``: test_hmm.ko's PRIVATE dmirror chunk; ``p2pdma``: the nvme
driver's PCI_P2PDMA pgmap over QEMU's NVMe controller memory buffer), the guest script and
vng command they need, test_hmm's free list on top of the model, the kernel's files and the
dump module's cache key; and a recorded run of both kernels replayed without a boot.  The
slow tests that build and boot are at the end.

``tests/data/live-all-types`` is the run directory of a real ``python -m equiv.proofs --live
--live-kernel all-types --patch tests/data/zone-device-backport-6.12/series/*.patch
--live-out RUN`` (5 December 2026, TCG: 19 namespaces on each kernel, all the same as the
model and as each other), cut down with::

    PYTHONPATH=.:tests python tests/test_live_all_types.py RUN

to :data:`CUT_PAGES` struct pages per dump, without :data:`NOT_RECORDED`; ``patched/`` is the
patched kernel's side.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from host_lock import host_lock

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
    assert cmd[-1].startswith("--qemu-opts=-drive ") and "cmb_size_mb=64" in cmd[-1]
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


# --- the recorded run: all five types, both kernels, no boot ----------------------------------

DATA = Path(__file__).parent / "data" / "live-all-types"


@pytest.fixture(scope="module")
def recorded() -> run.LiveRun:
    """The recorded run compared again (the hand model; the C text is checked on two dumps
    below, as it costs about a second a dump)."""
    return run.load_recorded(DATA, c_text=False)


def test_the_recorded_data_is_small() -> None:
    size = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    assert size < 400_000, size


def test_the_recorded_run_has_all_five_types_the_same_on_both_kernels(
        recorded: run.LiveRun) -> None:
    assert recorded.exit_code == 0
    assert recorded.kernel.kind == "all-types" and recorded.kernel.build_key
    assert recorded.patched is not None and len(recorded.patched.kernel.patches) == 4
    for side in (recorded, recorded.patched):
        assert all(r.comparison is not None and r.comparison.clean for r in side.namespaces)
        types = {r.comparison.inputs["pgmap_type"] for r in side.namespaces if r.comparison}
        assert types == {1, 2, 3, 4, 5}  # PRIVATE, COHERENT, FS_DAX, GENERIC, PCI_P2PDMA
    assert [p.name for p in recorded.pairs] == [r.name for r in recorded.namespaces]
    assert all(p.same for p in recorded.pairs)
    orders = {(r.comparison.inputs["pgmap_type"], r.comparison.inputs["order"])
              for r in recorded.namespaces if r.comparison}
    assert {(4, 0), (4, 9), (4, 18), (2, 0), (2, 9), (2, 18), (1, 0), (1, 9), (1, 18)} <= orders


def test_the_recorded_json(recorded: run.LiveRun) -> None:
    from equiv.zone_device.live.present import live_json

    doc = live_json(recorded, times=False)
    assert doc["kernel"]["live_kernel"] == "all-types"
    for ns in [*doc["namespaces"], *doc["patched"]["namespaces"]]:
        assert ns["verdict"] == "SAME" and ns["struct_pages_compared"] > 0
        assert ns["inputs"]["pgmap_type"] in (1, 2, 3, 4, 5)
    assert {p["verdict"] for p in doc["kernel_pairs"]} == {"SAME"}


def test_the_c_text_on_the_driver_pgmaps() -> None:
    import os

    from equiv.config import from_kconfig
    from equiv.zone_device.live import ctext, dump

    tree, why = ctext.source_tree(Path(os.environ["EQUIV_TEST_USER_CACHE"]) / "equiv")
    if tree is None:
        pytest.skip(why)
    cfg = from_kconfig(str(DATA / run.CONFIG))
    for name in ("hmm-4K-mem", "p2pdma-4K-mem"):
        t = ctext.ctext_compare(dump.load(DATA / name), cfg, tree)
        assert t.reason is None and t.compared == 64 and not t.diffs, (name, t)


def test_test_hmm_pages_without_its_free_list_differ(tmp_path: Path) -> None:
    """The model alone (no driver step) and the live hmm pages differ in zone_device_data
    only: every page but the first holds the struct page of the pfn before it."""
    import shutil

    from equiv.config import from_kconfig
    from equiv.zone_device.live import dump
    from equiv.zone_device.live.compare import compare

    d = tmp_path / "hmm"
    shutil.copytree(DATA / "hmm-4K-mem", d)
    (d / "driver").unlink()
    c = compare(dump.load(d), from_kconfig(str(DATA / run.CONFIG)))
    assert {(x.offset, x.names[1]) for x in c.diffs} == {(16, "zone_device_data"),
                                                          (20, "zone_device_data")}
    assert c.roles[0].differing == c.roles[0].compared - 1
    assert all(x.model == 0 and "struct page of pfn" in x.live_meaning for x in c.diffs
               if x.offset == 16)


def test_a_kernel_pair_difference_names_pfn_field_and_both_values(tmp_path: Path) -> None:
    import gzip
    import re
    import shutil

    from equiv.zone_device.live.dump import HEADER_SIZE
    from equiv.zone_device.live.present import render_live_text

    out = tmp_path / "run"
    shutil.copytree(DATA, out)
    pages = out / "patched" / "fsdax-2M-dev" / "pages.gz"
    data = bytearray(gzip.decompress(pages.read_bytes()))
    m = re.search(rb"start_pfn=(\d+) .* record=(\d+)", bytes(data[:HEADER_SIZE]))
    assert m
    pfn = int(m.group(1)) + 3
    data[HEADER_SIZE + 3 * int(m.group(2)) + 16 + 52] ^= 0x02  # _refcount of pfn + 3
    pages.write_bytes(gzip.compress(bytes(data)))
    r = run.load_recorded(out, c_text=False)
    assert r.exit_code == 1
    (bad,) = [p for p in r.pairs if not p.same]
    assert bad.name == "fsdax-2M-dev" and bad.comparison is not None
    (w,) = bad.comparison.word_diffs
    assert (w.pfn, w.offset) == (pfn, 48) and w.a ^ w.b == 0x02 << 32
    text = render_live_text(r, times=False)
    assert f"pfn {pfn:#x} +48: unpatched " in text and "patched 0x" in text
    from equiv.zone_device.live.present import live_sarif, render_live_junit

    junit = render_live_junit(r, times=False)
    assert 'name="pair/fsdax-2M-dev"' in junit and 'name="patched/hmm-4K-mem"' in junit
    assert junit.count("<failure") == 2  # the pair, and the patched dump against the model
    results = live_sarif(r, times=False)["runs"][0]["results"]
    assert sorted(x["ruleId"] for x in results) == ["live-field", "live-kernel-pair"]
    (pair,) = [x for x in results if x["ruleId"] == "live-kernel-pair"]
    assert f"pfn {pfn:#x} +48" in pair["message"]["text"]


# --- the real thing: build (cached) and boot ---------------------------------------------------

#: one pgmap of every type, in one boot (the slow test's share of ALL_TYPES_NAMESPACES)
ONE_OF_EACH = ("devdax-2M-mem", "fsdax-2M-dev", "coherent-2M-dev", "private-2M-mem",
               "hmm-4K-mem", "p2pdma-4K-mem")
#: the project's backport series (tests/data/zone-device-backport-6.12)
SERIES = sorted((Path(__file__).parent / "data" / "zone-device-backport-6.12" / "series")
                .glob("*.patch"))


def _user_cache(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the live check at the user's cache (tests/conftest.py gives each run a fresh
    one): the small kernel's build (11-15 min cold on 2 cores) is shared by every test that
    boots it, by the command line and by later runs."""
    import os

    user = Path(os.environ["EQUIV_TEST_USER_CACHE"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(user))
    return user


def _install_the_tools() -> None:
    """The small kernel's build and boot tools, installed when running as root (as
    test_live_cli.py's whole live check does); a tool still missing makes the run fail
    naming it, never a skip.  The 6.12.117 source is fetched by the run itself
    (:func:`equiv.zone_device.live.ctext.source_tree`)."""
    from equiv.zone_device.live import host

    with host_lock():  # dpkg's lock: tests/host_lock.py
        host.install_missing([*host.FETCH_TOOLS, *host.BUILD_TOOLS, *host.KERNEL_BUILD_TOOLS,
                              *host.BOOT_TOOLS, packages.DEPMOD_TOOL])


@pytest.mark.slow
@pytest.mark.xdist_group("host")  # boots: tests/conftest.py
def test_all_five_types_on_the_small_kernel(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    """``--live --live-kernel all-types`` with one pgmap of each type: every one the same as
    the model, the five enum memory_type values all seen, the run recorded with the
    kernel's build key."""
    import json

    _user_cache(monkeypatch)
    _install_the_tools()
    monkeypatch.setenv("EQUIV_LIVE_KVM", "0")  # KVM fails at cmpxchg16b here; TCG everywhere
    r = run.run_live(list(ONE_OF_EACH), tmp_path / "run", kernel="all-types")
    verdicts = {x.name: (x.comparison is not None and x.comparison.clean, x.error)
                for x in r.namespaces}
    assert all(ok for ok, _ in verdicts.values()), verdicts
    types = {x.name: x.comparison.inputs["pgmap_type"] for x in r.namespaces if x.comparison}
    assert sorted(set(types.values())) == [1, 2, 3, 4, 5], types  # PRIVATE .. PCI_P2PDMA
    assert r.exit_code == 0
    rec = json.loads((tmp_path / "run" / run.RECORD).read_text())
    assert rec["kernel"] == "all-types" and rec["build_key"] and rec["origin"]
    assert r.kernel.release.startswith("6.12.117")


@pytest.mark.slow
@pytest.mark.xdist_group("host")
def test_patched_and_unpatched_small_kernels(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    """``--live --live-kernel all-types --patch series/*.patch``: both kernels the same as the
    model and as each other, for one pgmap of each type.  Runs only when the patched
    kernel's build is cached (a second cold build is another 11-15 min on 2 cores, which
    .ci/run's 60 minutes do not leave): ``python bench/small_kernel.py --cache
    ~/.cache/equiv/small tests/data/zone-device-backport-6.12/series/*.patch`` builds it."""
    from equiv.zone_device.live import small

    _user_cache(monkeypatch)
    _install_the_tools()
    done = small.cache_root() / "small" / small.key(small.source_tree(), SERIES) / "build.json"
    if not done.is_file():
        pytest.skip(f"the patched small kernel is not built ({done.parent}): kept out of CI's "
                    "critical path; build it with bench/small_kernel.py (see the docstring)")
    monkeypatch.setenv("EQUIV_LIVE_KVM", "0")
    r = run.run_live(list(ONE_OF_EACH), tmp_path / "run", kernel="all-types", patches=SERIES)
    assert r.patched is not None
    assert r.patched.kernel.patches == tuple(p.name for p in SERIES)
    for side in (r, r.patched):
        bad = [(x.name, x.error) for x in side.namespaces
               if x.comparison is None or not x.comparison.clean]
        assert not bad, bad
    assert [p.name for p in r.pairs] == list(ONE_OF_EACH)
    assert all(p.same for p in r.pairs), [(p.name, p.error) for p in r.pairs if not p.same]
    assert r.exit_code == 0


# --- recording a run for tests/data --------------------------------------------------------

#: struct pages kept per recorded dump, by order: order 0 two pageblocks and a bit (the
#: first device pfn on: test_hmm's NULL-ended free list), order 9 two compounds, order 18
#: the head, tails 1..127 and tails read through the deduplicated vmemmap
CUT_PAGES = {0: 1100, 9: 2 * 512, 18: 300}
#: dumps a live run compares but the recording leaves out: at order 18 with an altmap the
#: model has to run a whole 262,144-page compound whatever the cut (15 s each on 2 cores),
#: too slow for the quick suite; the 1G ``mem`` kinds (deduplicated vmemmap) stay
NOT_RECORDED = ("devdax-1G-dev", "coherent-1G-dev")


def cut_run(src: Path, dst: Path) -> None:
    """Write ``dst`` (``tests/data/live-all-types``) from the run directory ``src`` of
    ``--live --live-kernel all-types [--patch ...] --live-out SRC``: each dump cut to
    :data:`CUT_PAGES` struct pages from its first device pfn (``test_live_compare.cut_dump``,
    its ``driver`` file kept), the config cut to what the model reads, the records
    rewritten to name the cut config's hash; the patched kernel's side likewise."""
    import json
    import shutil

    from test_live_compare import cut_config, cut_dump

    from equiv.zone_device.live.dump import DRIVER_FILE, load

    rec = json.loads((src / run.RECORD).read_text())
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    rec["namespaces"] = [e for e in rec["namespaces"] if e["name"] not in NOT_RECORDED]
    for e in rec["namespaces"]:
        d = load(src / e["dump"])
        assert d.pgmap is not None
        cut_dump(src / e["dump"], dst / e["name"], None, CUT_PAGES[d.pgmap.vmemmap_shift])
        if (src / e["dump"] / DRIVER_FILE).is_file():
            shutil.copy(src / e["dump"] / DRIVER_FILE, dst / e["name"] / DRIVER_FILE)
    cut_config(src / run.CONFIG, dst / run.CONFIG)
    rec["config_sha256"] = run.sha256(dst / run.CONFIG)
    rec["namespaces"] = [{"name": e["name"], "dump": e["name"]} for e in rec["namespaces"]]
    if "patched" in rec:
        cut_run(src / rec["patched"]["dir"], dst / rec["patched"]["dir"])
    (dst / run.RECORD).write_text(json.dumps(rec, indent=2) + "\n")


if __name__ == "__main__":
    import sys

    cut_run(Path(sys.argv[1]), Path(__file__).parent / "data" / "live-all-types")

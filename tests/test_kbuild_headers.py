"""equiv.linux.kbuild: a configuration's generated headers by the tree's own build system, and
equiv.zone_device.source.files.headers_for, which chooses them for a preset.

The quick tests run :func:`kbuild.prepare_headers` on a fake tree with a fake ``make`` (a
:data:`kbuild.Runner` written here: ``defconfig`` writes a small ``.config``,
``olddefconfig`` keeps what a tiny "Kconfig" allows, ``prepare0`` writes the generated
files), for the cache key, the cache, the lock, the refusals and the missing tools.

The slow tests prepare the real 6.12 tree (``<user cache>/equiv/kbuild``, kept across runs:
about 15 s per configuration the first time) and parse ``mm/mm_init.c`` with clang.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from attrs import evolve

from equiv.config import PRESETS
from equiv.engine.errors import InputError
from equiv.linux import cfront, kbuild, kconfig
from equiv.page_model import Layout
from equiv.zone_device.source import files, prepared

# ---- a fake tree and a fake make ------------------------------------------------------------

MAKEFILE = "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 117\nEXTRAVERSION =\nNAME = Baby Opossum\n"
#: the fake tree's Kconfig: A is free, B is selected by the arch (always y), C does not exist
KCONFIG = "config A\n\tbool \"a\"\n\nconfig B\n\tbool\n"
ARCH_KCONFIG = "config X86\n\tdef_bool y\n\tselect B\n"


def fake_tree(root: Path) -> Path:
    """A clean tree with what :func:`kbuild.has_build_system` looks for."""
    for f, text in (("Makefile", MAKEFILE), ("Kconfig", KCONFIG), ("scripts/Makefile.build", ""),
                    ("arch/x86/Makefile", ""), ("arch/x86/Kconfig", ARCH_KCONFIG),
                    ("arch/arm64/Makefile", ""), ("arch/arm64/Kconfig", "")):
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(text)
    (root / "scripts/kconfig").mkdir()
    return root


class FakeMake:
    """make's three targets as the recipe runs them; counts its calls."""

    def __init__(self, delay: float = 0.0) -> None:
        self.calls: list[list[str]] = []
        self.delay = delay

    def __call__(self, cmd: Sequence[str], log: Path, what: str) -> None:
        self.calls.append(list(cmd))
        out = Path(next(a for a in cmd if a.startswith("O=")).removeprefix("O="))
        target = cmd[-1]
        config = out / ".config"
        if target == "defconfig":
            config.write_text("CONFIG_X86=y\nCONFIG_B=y\n# CONFIG_A is not set\n")
        elif target == "olddefconfig":  # B is selected, C is no symbol of this tree
            v = kconfig.values(config.read_text())
            a = kconfig.line("CONFIG_A", v.get("CONFIG_A", "n"))
            config.write_text(f"CONFIG_X86=y\nCONFIG_B=y\n{a}\n")
        elif target == kbuild.PREPARE:
            time.sleep(self.delay)
            for g in kbuild.GENERATED:
                p = out / g.format(a="x86")
                if g.startswith("arch/"):
                    p.mkdir(parents=True, exist_ok=True)
                else:
                    p.parent.mkdir(parents=True, exist_ok=True)
                    p.write_text("/* generated */\n")
        else:
            raise AssertionError(cmd)

    def targets(self) -> list[str]:
        return [c[-1] for c in self.calls]


@pytest.fixture
def tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every host tool present (the fake make runs none)."""
    monkeypatch.setattr(kbuild.shutil, "which", lambda c: f"/usr/bin/{c}")


def test_prepare_runs_the_recipe_and_caches(tmp_path: Path, tools: None) -> None:
    tree, make = fake_tree(tmp_path / "linux"), FakeMake()
    h = kbuild.prepare_headers(tree, {"CONFIG_A": "y", "CONFIG_B": "y"}, tmp_path / "cache",
                               runner=make)
    assert make.targets() == ["defconfig", "olddefconfig", kbuild.PREPARE]
    assert f"-j{kbuild.JOBS}" in make.calls[2]
    assert make.calls[0][:4] == ["make", "-C", str(tree), make.calls[0][3]]
    assert "ARCH=x86" in make.calls[0] and not any(a.startswith("CROSS_COMPILE") for a in make.calls[0])
    assert (h.source, h.arch, h.target) == (tree, "x86", "x86_64-linux-gnu")
    assert (h.build / "include/generated/autoconf.h").is_file()
    rec = kbuild.record(h)
    assert rec["version"] == "6.12.117" and rec["symbols"] == {"CONFIG_A": "y", "CONFIG_B": "y"}
    assert rec["left_out"] == []
    # the second time from the cache: make is not run
    again = kbuild.prepare_headers(tree, {"CONFIG_B": "y", "CONFIG_A": "y"}, tmp_path / "cache",
                                   runner=make)
    assert again == h and len(make.calls) == 3


def test_key_is_version_arch_compiler_and_symbols(tmp_path: Path) -> None:
    tree, cache = fake_tree(tmp_path / "linux"), tmp_path / "cache"
    base = kbuild.request(tree, {"CONFIG_A": "y"}, cache)
    assert base.key == kbuild.request(tree, {"CONFIG_A": "y"}, cache).key
    others = [kbuild.request(tree, {"CONFIG_A": "n"}, cache),
              kbuild.request(tree, {"CONFIG_A": "y", "CONFIG_B": "y"}, cache),
              kbuild.request(tree, {"CONFIG_A": "y"}, cache, arch="arm64"),
              kbuild.request(tree, {"CONFIG_A": "y"}, cache, cc="clang")]
    assert len({base.key, *(o.key for o in others)}) == 5
    assert others[2].make_vars == ("ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-")
    (tree / "Makefile").write_text(MAKEFILE.replace("117", "118"))
    assert kbuild.request(tree, {"CONFIG_A": "y"}, cache).key != base.key


def test_a_symbol_that_does_not_hold_is_recorded_not_forced(tmp_path: Path, tools: None) -> None:
    """A preset's symbol the tree's Kconfig sets otherwise (B, selected by the arch) is not
    forced and does not refuse the configuration: the headers are prepared as olddefconfig
    leaves it, and the record says what changed, for the report."""
    tree, make = fake_tree(tmp_path / "linux"), FakeMake()
    h = kbuild.prepare_headers(tree, {"CONFIG_A": "y", "CONFIG_B": "n"}, tmp_path / "cache",
                               what="config test-preset", runner=make)
    assert make.targets() == ["defconfig", "olddefconfig", kbuild.PREPARE]
    assert kbuild.record(h)["changed"] == [["CONFIG_B", "n", "y"]]
    assert "CONFIG_B=y" in (h.build / ".config").read_text()
    notes = files.prepared_notes(h)
    assert any("CONFIG_B n -> y" in n for n in notes), notes


def test_a_given_config_is_taken_as_it_is(tmp_path: Path, tools: None) -> None:
    """A whole .config (--kconfig) is not laid over defconfig: it is the .config make
    olddefconfig starts from; its own key; what olddefconfig changed is recorded."""
    tree, make = fake_tree(tmp_path / "linux"), FakeMake()
    given = "CONFIG_X86=y\nCONFIG_A=y\n# CONFIG_B is not set\n"
    h = kbuild.prepare_headers(tree, given, tmp_path / "cache", runner=make)
    assert make.targets() == ["olddefconfig", kbuild.PREPARE]
    rec = kbuild.record(h)
    assert rec["changed"] == [["CONFIG_B", "n", "y"]] and rec["given"]
    assert "CONFIG_A=y" in (h.build / ".config").read_text()
    frag = kbuild.request(tree, {"CONFIG_A": "y"}, tmp_path / "cache")
    assert kbuild.request(tree, {}, tmp_path / "cache", config=given).key != frag.key
    assert files.prepared_notes(h)[0].startswith("headers: the --kconfig .config as given")


def test_a_failed_step_refuses_naming_it(tmp_path: Path, tools: None) -> None:
    """A configuration is refused only when a step fails: one line naming the
    configuration, the step and the error."""
    tree = fake_tree(tmp_path / "linux")

    def failing(cmd: Sequence[str], log: Path, what: str) -> None:
        if cmd[-1] == "olddefconfig":
            raise InputError(f"{what} failed (exit 2): .config:3: syntax error (log: {log})")
        FakeMake()(cmd, log, what)

    with pytest.raises(InputError) as e:
        kbuild.prepare_headers(tree, {"CONFIG_A": "y"}, tmp_path / "cache",
                               what="config test-preset", runner=failing)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("config test-preset cannot be prepared on linux "
                                              "6.12.117 (ARCH=x86): make olddefconfig failed")


def test_a_symbol_the_tree_lacks_is_left_out(tmp_path: Path, tools: None) -> None:
    tree = fake_tree(tmp_path / "linux")
    h = kbuild.prepare_headers(tree, {"CONFIG_A": "y", "CONFIG_C": "y"}, tmp_path / "cache",
                               runner=FakeMake())
    assert kbuild.record(h)["left_out"] == ["CONFIG_C"]


def test_missing_tools_name_the_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree, make = fake_tree(tmp_path / "linux"), FakeMake()
    have = {"make", "gcc"}
    monkeypatch.setattr(kbuild.shutil, "which", lambda c: f"/usr/bin/{c}" if c in have else None)
    with pytest.raises(InputError) as e:
        kbuild.prepare_headers(tree, {"CONFIG_A": "y"}, tmp_path / "cache", arch="arm64",
                               runner=make)
    msg = str(e.value)
    assert "\n" not in msg and msg.endswith(
        "install with: apt-get install flex bison bc gcc-aarch64-linux-gnu")
    assert make.calls == []


def test_a_tool_missing_in_the_log_names_its_package(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text("")
    script = tmp_path / "make"
    script.write_text("#!/bin/sh\necho '/bin/sh: 1: flex: not found'\nexit 2\n")
    script.chmod(0o755)
    with pytest.raises(InputError, match=r"make defconfig failed: a host tool is missing; "
                                         r"install with: apt-get install flex \(log: "):
        kbuild.run([str(script)], log, "make defconfig")


def test_the_lock_lets_one_process_build(tmp_path: Path, tools: None) -> None:
    tree, make = fake_tree(tmp_path / "linux"), FakeMake(delay=0.3)
    got: list[cfront.Headers] = []

    def ask() -> None:
        got.append(kbuild.prepare_headers(tree, {"CONFIG_A": "y"}, tmp_path / "cache",
                                          runner=make))

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3 and len(set(got)) == 1
    assert make.targets().count("defconfig") == 1


def test_a_tree_configured_in_place_is_refused(tmp_path: Path, tools: None) -> None:
    tree = fake_tree(tmp_path / "linux")
    (tree / ".config").write_text("CONFIG_A=y\n")
    with pytest.raises(InputError, match=r"configured in place.*make mrproper"):
        kbuild.prepare_headers(tree, {}, tmp_path / "cache", runner=FakeMake())


def test_a_files_only_tree_takes_its_tarball(tmp_path: Path) -> None:
    whole = fake_tree(tmp_path / "pack" / "linux-source-6.12")
    tarball = tmp_path / "linux-source-6.12.tar.xz"
    shutil.make_archive(str(tarball).removesuffix(".tar.xz"), "xztar", whole.parent)
    few = tmp_path / "few"
    (few / "mm").mkdir(parents=True)
    (few / "Makefile").write_text(MAKEFILE)
    got = kbuild.full_tree(few, tmp_path / "cache", "x86", tarball)
    assert got.parent == tmp_path / "cache" / "src" and got.name.startswith("linux-source-6.12-")
    assert kbuild.has_build_system(got, "x86") and (got / ".equiv-tarball").is_file()
    # a copy of a few files without a stamp (a patched tree) takes the tree unpacked before
    copy = tmp_path / "patched"
    (copy / "mm").mkdir(parents=True)
    (copy / "Makefile").write_text(MAKEFILE)
    assert kbuild.full_tree(copy, tmp_path / "cache", "x86") == got
    (few / "Makefile").write_text(MAKEFILE.replace("117", "118"))
    with pytest.raises(InputError, match=r"is linux 6\.12\.118 .* is linux 6\.12\.117"):
        kbuild.full_tree(few, tmp_path / "cache", "x86", tarball)


def test_an_unknown_arch_and_a_bad_symbol(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "linux")
    with pytest.raises(InputError, match=r"arch 'riscv'.*valid: x86_64, arm64"):
        kbuild.request(tree, {}, tmp_path, arch="riscv")
    with pytest.raises(InputError, match="not Kconfig symbols: NUMA"):
        kbuild.request(tree, {"NUMA": "y"}, tmp_path)


def test_ci_installs_the_tools() -> None:
    """.ci/run's apt-get line installs every package a preparation needs."""
    run = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    line = next(ln for ln in run.splitlines() if "apt-get install" in ln)
    assert set(kbuild.APT_PACKAGES) <= set(line.split("apt-get install", 1)[1].split())


# ---- the preset's symbols ------------------------------------------------------------------


def test_kconfig_symbols_of_the_presets() -> None:
    d = files.kconfig_symbols(PRESETS["x86_64-default"])
    assert d["CONFIG_NR_CPUS"] == "64" and d["CONFIG_NODES_SHIFT"] == "6"
    assert d["CONFIG_ZONE_DEVICE"] == "y" and d["CONFIG_KMSAN"] == "n"
    r = files.kconfig_requests(PRESETS["x86_64-default"])
    assert "CONFIG_MAXSMP" not in r and r["CONFIG_X86_PAT"] == "y" and "CONFIG_EXPERT" not in r
    assert d["CONFIG_ARCH_USES_PG_ARCH_2"] == "y" and d["CONFIG_ARCH_USES_PG_ARCH_3"] == "n"
    assert set(d) < set(r) and "CONFIG_X86_PAT" not in d
    m = files.kconfig_requests(PRESETS["x86_64-maxsmp"])
    assert m["CONFIG_MAXSMP"] == "y" and m["CONFIG_NR_CPUS"] == "8192"
    a = files.kconfig_symbols(PRESETS["arm64-16k"])
    assert (a["CONFIG_ARM64_16K_PAGES"], a["CONFIG_ARM64_4K_PAGES"]) == ("y", "n")
    # every CONFIG_ symbol the preprocessor environment decides is one the build asks
    env = files.macro_env(PRESETS["x86_64-default"])
    assert {k for k in env.known if k.startswith("CONFIG_")} <= set(d)


def test_a_hypothetical_preset_has_no_headers(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="hypothetical"):
        files.headers_for(tmp_path, PRESETS["x86_64-want-page-virtual"], tmp_path)


def test_debian_headers_only_for_their_own_configuration(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "linux")
    usr_src = tmp_path / "usr" / "src"
    build = usr_src / "linux-headers-6.12.117+deb12-amd64"
    (build / "include/generated").mkdir(parents=True)
    (build / "include/generated/autoconf.h").write_text("")
    (usr_src / "linux-headers-6.12.117+deb12-common").mkdir()
    cfg = PRESETS["x86_64-default"]
    asked = files.kconfig_symbols(cfg)
    (build / ".config").write_text("".join(f"{kconfig.line(n, v)}\n" for n, v in asked.items()
                                           if n not in ("CONFIG_MM_ID", "CONFIG_PAGE_MAPCOUNT")))
    h = files.debian_headers(tree, cfg, usr_src)
    assert h is not None and h.build == build and h.arch == "x86"
    # the options that lead to the decided symbols do not matter (Debian's PAGE_IDLE_FLAG
    # comes from DAMON, not IDLE_PAGE_TRACKING)
    assert "CONFIG_X86_PAT" not in (build / ".config").read_text()
    assert files.debian_headers(tree, PRESETS["x86_64-maxsmp"], usr_src) is None
    (tree / "Makefile").write_text(MAKEFILE.replace("117", "118"))
    assert files.debian_headers(tree, cfg, usr_src) is None


def test_debian_headers_of_61_by_their_makefile(tmp_path: Path) -> None:
    """6.1's packages are named by abi (linux-headers-6.1.0-42-amd64), not by version: the
    -common package's Makefile says which kernel they are; a --kconfig .config matches the
    package whose .config sets every symbol alike (the toolchain's symbols aside)."""
    tree = fake_tree(tmp_path / "linux")
    (tree / "Makefile").write_text(MAKEFILE.replace("12", "1").replace("117", "192"))
    usr_src = tmp_path / "usr" / "src"
    build = usr_src / "linux-headers-6.1.0-42-amd64"
    (build / "include/generated").mkdir(parents=True)
    (build / "include/generated/autoconf.h").write_text("")
    common = usr_src / "linux-headers-6.1.0-42-common"
    common.mkdir()
    (common / "Makefile").write_text(MAKEFILE.replace("12", "1").replace("117", "192"))
    text = ("CONFIG_X86_64=y\nCONFIG_64BIT=y\nCONFIG_SPARSEMEM_VMEMMAP=y\nCONFIG_ZONE_DEVICE=y\n"
            "CONFIG_A=y\nCONFIG_CC_VERSION_TEXT=\"gcc 12\"\n")
    (build / ".config").write_text(text)
    from equiv.config import from_kconfig_text

    mine = from_kconfig_text(text.replace("gcc 12", "gcc 14"), "mine")
    h = files.debian_headers(tree, mine, usr_src)
    assert h is not None and h.build == build and h.source == common
    other = from_kconfig_text(text.replace("CONFIG_A=y", "# CONFIG_A is not set"), "other")
    assert files.debian_headers(tree, other, usr_src) is None


# ---- the real tree -------------------------------------------------------------------------


def _source() -> Path:
    """The files of linux-source-6.12 the readers need, as tests/test_linux_tree.py's
    ``linux612`` has them (the whole tree behind them is unpacked by the kbuild recipe)."""
    from host_lock import host_lock

    from equiv.zone_device.live.ctext import source_tree

    with host_lock():  # one process unpacks, the others wait: tests/host_lock.py
        root, why = source_tree(Path(os.environ["EQUIV_TEST_USER_CACHE"]) / "equiv")
    if root is None:
        pytest.skip(f"no linux-source-6.12 tree: {why}")
    return root


def _cache() -> Path:
    """The user's kbuild cache, kept across sessions (not a result: conftest.py)."""
    return Path(os.environ["EQUIV_KBUILD_CACHE"])


def _need(*tools: str) -> None:
    gone = [t for t in tools if shutil.which(t) is None]
    if gone:
        pytest.skip(f"{', '.join(gone)} not installed (apt-get install "
                    f"{' '.join(kbuild.APT_PACKAGES)})")


X86_BUILDABLE = ("x86_64-default", "x86_64-maxsmp", "x86_64-lru-gen", "x86_64-no-memcg",
                 "x86_64-debug-page-ref", "x86_64-kmsan")


@pytest.mark.slow
@pytest.mark.parametrize("name", X86_BUILDABLE)
def test_x86_preset_prepared_and_mm_init_parsed(name: str) -> None:
    _need("make", "gcc", "flex", "bison", "bc", *(["clang"] if PRESETS[name].KMSAN else []))
    source, cfg = _source(), PRESETS[name]
    h = files.headers_for(source, cfg, _cache())
    rec = kbuild.record(h)
    if rec:  # made here, not Debian's
        assert set(rec["left_out"]) <= {"CONFIG_MM_ID", "CONFIG_PAGE_MAPCOUNT"}  # type: ignore[arg-type]
    unit = cfront.parse(source, "mm/mm_init.c", h)  # raises on any clang error
    page = cfront.struct_layout(unit, "page")
    assert page.size == Layout.from_config(cfg).size


@pytest.mark.slow
def test_x86_preset_prepared_as_the_tree_builds_it() -> None:
    """6.12 has HUGETLB_PAGE_OPTIMIZE_VMEMMAP follow HUGETLB_PAGE (fs/Kconfig): the preset
    that models it off with hugetlb pages on is prepared as the tree builds it, nothing
    forced; the record and the report say what olddefconfig set otherwise, and the model
    follows the prepared configuration."""
    _need("make", "gcc", "flex", "bison", "bc")
    cfg = PRESETS["x86_64-compound-info-head"]
    h = files.headers_for(_source(), cfg, _cache())
    assert ["CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP", "n", "y"] in kbuild.record(h)["changed"]
    got, notes = prepared.as_prepared(files.load_tree(_source()), evolve(cfg, headers=h))
    assert got.HUGETLB_PAGE_OPTIMIZE_VMEMMAP
    text = " ".join(notes)
    assert "CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP n -> y" in text
    assert "the model follows the prepared configuration: HUGETLB_PAGE_OPTIMIZE_VMEMMAP=y" in text


@pytest.mark.slow
def test_arm64_preset_prepared() -> None:
    """linux 6.12's arch/arm64/Kconfig selects HAVE_ALIGNED_STRUCT_PAGE, which the arm64
    presets model off, and selects no ARCH_WANT_OPTIMIZE_DAX_VMEMMAP, which they model on:
    prepared all the same (cross headers), the model following the tree, and the
    deduplicated-vmemmap rule read from the tree's vmemmap_can_optimize()."""
    _need("make", "gcc", "flex", "bison", "bc", "aarch64-linux-gnu-gcc")
    h = files.headers_for(_source(), PRESETS["arm64-4k"], _cache())
    assert h.arch == "arm64" and h.target == "aarch64-linux-gnu"
    changed = {n: g for n, _, g in kbuild.record(h)["changed"]}
    assert changed["CONFIG_HAVE_ALIGNED_STRUCT_PAGE"] == "y"
    got, notes = prepared.as_prepared(files.load_tree(_source()), evolve(PRESETS["arm64-4k"], headers=h))
    assert got.HAVE_ALIGNED_STRUCT_PAGE and not got.ARCH_WANT_OPTIMIZE_DAX_VMEMMAP
    assert "no, every struct page its own" in " ".join(notes)


# ---- issue 33: the small all-types kernel's configuration ----------------------------------


def test_small_kernel_symbols_each_have_a_reason(tmp_path: Path) -> None:
    """Every symbol of the small kernel says why it is there; a symbol Kconfig turns off is
    refused naming it (a fake make: olddefconfig drops DEVICE_PRIVATE)."""
    from equiv.zone_device.live import small

    names = [n for n, _, _ in small.SYMBOLS]
    assert len(names) == len(set(names)) and all(why for _, _, why in small.SYMBOLS)
    for want in ("CONFIG_DEVICE_PRIVATE", "CONFIG_PCI_P2PDMA", "CONFIG_TEST_HMM",
                 "CONFIG_ZONE_DEVICE", "CONFIG_DEV_DAX", "CONFIG_FS_DAX", "CONFIG_BLK_DEV_NVME"):
        assert want in names
    tree = fake_tree(tmp_path / "linux")

    def make(cmd: Sequence[str], log: Path, what: str) -> None:
        config = tmp_path / "work" / ".config"
        if cmd[-1] == "defconfig":
            config.write_text("CONFIG_64BIT=y\n")
        else:
            config.write_text(config.read_text().replace("CONFIG_DEVICE_PRIVATE=y\n", ""))

    with pytest.raises(InputError, match=r"CONFIG_DEVICE_PRIVATE: asked y, n after make "
                                         r"olddefconfig") as e:
        small.configure(tree, tmp_path / "work", make)
    assert "\n" not in str(e.value)


def test_small_kernel_build_recipe_and_cache(tmp_path: Path) -> None:
    """The small kernel's build with a fake make: a patched build copies the tree and patches
    the copy, configures, builds bzImage and modules, installs the modules; the second call
    is the cache's; another patch is another key."""
    from equiv.zone_device.live import small

    tree = fake_tree(tmp_path / "linux")
    patch = tmp_path / "0001-x.patch"
    patch.write_text("--- a/x\n+++ b/x\n")
    ran: list[str] = []

    def make(cmd: Sequence[str], log: Path, what: str) -> None:
        ran.append(what)
        work = next((Path(c[2:]) for c in cmd if c.startswith("O=")), None)
        if cmd[0] == "cp":
            Path(cmd[-1]).mkdir(parents=True)
        elif work is not None and cmd[-1] == "defconfig":
            (work / ".config").write_text("")
        elif work is not None and cmd[-1] == "olddefconfig":
            (work / ".config").write_text("".join(f"{kconfig.line(n, v)}\n"
                                                  for n, v, _ in small.SYMBOLS))
        elif work is not None and "bzImage" in cmd:
            (work / "include/config").mkdir(parents=True)
            (work / "include/config/kernel.release").write_text("6.12.117\n")
            (work / "arch/x86/boot").mkdir(parents=True)
            (work / "arch/x86/boot/bzImage").write_text("image")

    b = small.build(tree, [patch], tmp_path / "cache", runner=make)
    assert ran == [f"copying {tree}", "applying 0001-x.patch", "make defconfig",
                   "make olddefconfig", "make bzImage modules", "make modules_install"]
    assert not b.cached and b.release == "6.12.117"
    assert (b.root / "boot/vmlinuz-6.12.117").read_text() == "image"
    again = small.build(tree, [patch], tmp_path / "cache", runner=make)
    assert again.cached and again.dir == b.dir and len(ran) == 6
    assert small.key(tree) != small.key(tree, [patch])
    with pytest.raises(InputError, match="no such patch"):
        small.build(tree, [tmp_path / "gone.patch"], tmp_path / "cache", runner=make)


@pytest.mark.slow
def test_small_kernel_configures_every_type_on_6_12(tmp_path: Path) -> None:
    """x86_64 defconfig plus the small kernel's symbols holds on linux-source-6.12 (about
    6 s): DEVICE_PRIVATE, PCI_P2PDMA and TEST_HMM on, unlike Debian's kernel."""
    from equiv.zone_device.live import small

    _need("make", "gcc", "flex", "bison", "bc")
    tree = kbuild.full_tree(_source(), _cache(), "x86")
    got = small.configure(tree, tmp_path / "work")
    assert (got["CONFIG_DEVICE_PRIVATE"], got["CONFIG_PCI_P2PDMA"],
            got["CONFIG_TEST_HMM"]) == ("y", "y", "m")

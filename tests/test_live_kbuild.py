"""Building the 6.12.117 kernel from source (equiv/zone_device/live/kbuild.py) and comparing two kernels'
dumps (equiv/zone_device/live/crosscheck.py): the logic that does not boot or compile a kernel.

The build tests run :func:`kbuild.build` end to end on a fake source tarball whose Makefile
stands in for the kernel's (``olddefconfig`` and ``bzImage`` write what the real ones would:
``.config``, the image, ``System.map``, ``vmlinux.symvers``, ``include/config/kernel.release``);
make, tar, xz, patch and nice are real.  The real build is ``bench/live_series.py``'s.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from equiv.engine.errors import InputError
from equiv.zone_device.live import crosscheck, host, kbuild
from equiv.zone_device.live.dump import Dump, KernelLayout, Pageblock, Pages, Pgmap
from equiv.zone_device.live.packages import RELEASE, KernelFiles

# ---- config and symvers helpers ---------------------------------------------------------------

BASE = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_S=\"x\"\nCONFIG_M=m\n"


def test_edit_config_replaces_and_appends() -> None:
    text = kbuild.edit_config(BASE, [("CONFIG_B", "y"), ("CONFIG_S", None), ("CONFIG_N", '""')])
    assert kbuild.parse_config(text) == {"CONFIG_A": "y", "CONFIG_M": "m", "CONFIG_B": "y",
                                         "CONFIG_S": "n", "CONFIG_N": '""'}
    assert text.count("CONFIG_B") == 1 and text.count("CONFIG_S") == 1


def test_config_drift_absent_is_not_set() -> None:
    # a symbol olddefconfig drops while Debian had it "not set" is no drift, nor a new one off
    assert kbuild.config_drift(BASE, "CONFIG_A=y\nCONFIG_S=\"x\"\nCONFIG_M=m\n"
                               "# CONFIG_NEW is not set\n", []) == []


def test_config_drift_names_every_change() -> None:
    final = "CONFIG_A=m\nCONFIG_B=y\nCONFIG_S=\"x\"\nCONFIG_NEW=y\n"
    drift = kbuild.config_drift(BASE, final, [("CONFIG_B", "y")])
    assert drift == ["CONFIG_A: y in the base config, m after olddefconfig",
                     "CONFIG_M: m in the base config, n after olddefconfig",
                     "CONFIG_NEW: n in the base config, y after olddefconfig"]


def test_config_drift_checks_the_asked_values() -> None:
    assert kbuild.config_drift(BASE, BASE, [("CONFIG_K", '""')]) == \
        ['CONFIG_K: "" asked, n after olddefconfig']


def test_debian_changes_are_the_stripped_key_lines() -> None:
    names = [n for n, _, _ in kbuild.CONFIG_CHANGES]
    assert names == ["CONFIG_SYSTEM_TRUSTED_KEYS", "CONFIG_MODULE_SIG_KEY",
                     "CONFIG_MODULE_SIG_ALL", "CONFIG_BUILD_SALT"]
    # nothing that changes code: debug info and BTF stay (struct module's layout)
    assert not any("DEBUG_INFO" in n for n in names)


SYMVERS = ("0x11111111\tmemremap_pages\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"
           "0x22222222\tget_dev_pagemap\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"
           "0x33333333\tdax_alloc\tdrivers/dax/dax\tEXPORT_SYMBOL_GPL\t\n")


def test_symvers_equal() -> None:
    assert kbuild.symvers_mismatches(SYMVERS, SYMVERS) == (2, [])


def test_symvers_mismatch_and_missing() -> None:
    ours = SYMVERS.replace("0x22222222", "0x2222222f") + \
        "0x4\tnew_export\tvmlinux\tEXPORT_SYMBOL\t\n"
    n, bad = kbuild.symvers_mismatches(ours, SYMVERS)
    assert n == 3
    assert bad == ["get_dev_pagemap: crc 0x2222222f, prebuilt 0x22222222",
                   "new_export: crc 0x4, not exported by the prebuilt kernel"]


# ---- the recipe's key ------------------------------------------------------------------------


def _recipe(tmp_path: Path, patches: tuple[Path, ...] = (), **kw: object) -> kbuild.Recipe:
    cfg = tmp_path / "config"
    if not cfg.exists():
        cfg.write_text(BASE)
    tar = tmp_path / "src.tar.xz"
    if not tar.exists():
        tar.write_bytes(b"not really a tarball")
    return kbuild.Recipe(patches, cfg, tar, **kw)  # type: ignore[arg-type]


def test_key_follows_contents(tmp_path: Path) -> None:
    p1, p2 = tmp_path / "0001-a.patch", tmp_path / "0002-b.patch"
    p1.write_text("one\n")
    p2.write_text("two\n")
    k0 = _recipe(tmp_path).key()
    k12 = _recipe(tmp_path, (p1, p2)).key()
    assert len(k0) == 16 and k0 != k12
    assert _recipe(tmp_path, (p2, p1)).key() != k12  # order matters
    assert _recipe(tmp_path, (p1, p2)).key() == k12  # deterministic
    p2.write_text("two, edited\n")
    assert _recipe(tmp_path, (p1, p2)).key() != k12
    assert _recipe(tmp_path, changes=(("CONFIG_X", None),)).key() != k0
    assert _recipe(tmp_path, release="6.12.117-other").key() != k0
    (tmp_path / "config").write_text(BASE + "CONFIG_Z=y\n")
    assert _recipe(tmp_path).key() != k0


def test_key_needs_a_config(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no base config"):
        kbuild.Recipe().key()


# ---- a build with a fake kernel tree ---------------------------------------------------------

FAKE_MAKEFILE = """\
olddefconfig:
\tgrep -q '^CONFIG_DRIFT_ME=y' .config && sed -i 's/^CONFIG_DRIFT_ME=y/CONFIG_DRIFT_ME=m/' \
.config || true
bzImage:
\tmkdir -p arch/x86/boot include/config
\techo "image of $(KERNELRELEASE) built by $(CC)" > arch/x86/boot/bzImage
\techo "ffffffff81000000 T _text" > System.map
\tcp symvers.in vmlinux.symvers
\techo "$(KERNELRELEASE)$(EXTRA_RELEASE)" > include/config/kernel.release
"""


def _fake(tmp_path: Path, symvers: str = SYMVERS, config: str = BASE,
          makefile: str = FAKE_MAKEFILE) -> tuple[kbuild.Recipe, KernelFiles]:
    src = tmp_path / "src" / "linux-source-6.12"
    src.mkdir(parents=True)
    (src / "Makefile").write_text(makefile)
    (src / "symvers.in").write_text(symvers)
    (src / "mm").mkdir()
    (src / "mm" / "mm_init.c").write_text("int slow;\n")
    tar = tmp_path / "linux-source-6.12.tar.xz"
    with tarfile.open(tar, "w:xz") as t:
        t.add(src, arcname="linux-source-6.12")
    shutil.rmtree(tmp_path / "src")
    root = tmp_path / "prebuilt"
    files = KernelFiles(root)
    files.config.parent.mkdir(parents=True)
    files.config.write_text(config)
    files.headers.mkdir(parents=True)
    (files.headers / "Module.symvers").write_text(SYMVERS)
    files.modules.mkdir(parents=True)
    (files.modules / "kernel").mkdir()
    (files.modules / "kernel" / "nd_pmem.ko.xz").write_bytes(b"ko")
    (files.modules / "modules.dep").write_text("kernel/nd_pmem.ko.xz:\n")
    return kbuild.Recipe((), None, tar), files


@pytest.fixture(autouse=False)
def tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake build needs make, tar, xz, patch and nice, not a compiler or flex."""
    for t in ("make", "tar", "xz", "patch", "nice"):
        if shutil.which(t) is None:
            pytest.fail(f"{t} is missing: install it (apt-get install make tar xz-utils patch "
                        "coreutils)")
    monkeypatch.setattr(host, "require", lambda tools, purpose: None)


def test_fake_build_then_cached(tmp_path: Path, tools: None) -> None:
    patch = tmp_path / "0001-fast.patch"
    patch.write_text("--- a/mm/mm_init.c\n+++ b/mm/mm_init.c\n@@ -1 +1 @@\n-int slow;\n"
                     "+int fast;\n")
    recipe, pre = _fake(tmp_path)
    recipe = kbuild.Recipe((patch,), None, recipe.tarball)
    cache = tmp_path / "cache"
    b = kbuild.build(recipe, pre, cache=cache, jobs=1)
    assert not b.cached and b.dir.parent == cache / "builds"
    image = b.root / "boot" / f"vmlinuz-{RELEASE}"
    assert image.read_text() == f"image of {RELEASE} built by x86_64-linux-gnu-gcc-12\n"
    config = (b.root / "boot" / f"config-{RELEASE}").read_text()
    assert 'CONFIG_MODULE_SIG_KEY=""' in config and "CONFIG_A=y" in config
    info = json.loads((b.dir / kbuild.BUILD_INFO).read_text())
    assert info["symvers_compared"] == 2 and info["release"] == RELEASE
    assert info["patches"] == [str(patch)]
    assert not b.dir.with_name(b.dir.name + ".work").exists()  # the tree is deleted
    assert b.dir.with_name(b.dir.name + ".log").exists()
    again = kbuild.build(recipe, pre, cache=cache)
    assert again.cached and again.dir == b.dir and again.info == b.info
    # the key includes the prebuilt config the recipe defaulted to
    assert b.dir.name == kbuild.Recipe((patch,), pre.config, recipe.tarball).key()


def test_kernel_files_links_the_prebuilt_modules(tmp_path: Path, tools: None) -> None:
    recipe, pre = _fake(tmp_path)
    b = kbuild.build(recipe, pre, cache=tmp_path / "cache")
    files = kbuild.kernel_files(b, pre)
    assert files.image.exists() and files.config.exists()
    ko = files.modules / "kernel" / "nd_pmem.ko.xz"
    assert ko.read_bytes() == b"ko"
    assert ko.stat().st_ino == (pre.modules / "kernel" / "nd_pmem.ko.xz").stat().st_ino
    assert (files.headers / "Module.symvers").read_text() == SYMVERS
    assert kbuild.kernel_files(b, pre) == files  # idempotent


def test_a_patch_that_does_not_apply(tmp_path: Path, tools: None) -> None:
    patch = tmp_path / "0001-bad.patch"
    patch.write_text("--- a/mm/mm_init.c\n+++ b/mm/mm_init.c\n@@ -1 +1 @@\n-int other;\n"
                     "+int fast;\n")
    recipe, pre = _fake(tmp_path)
    with pytest.raises(InputError, match=r"applying 0001-bad\.patch failed"):
        kbuild.build(kbuild.Recipe((patch,), None, recipe.tarball), pre,
                     cache=tmp_path / "cache")


def test_config_drift_stops_the_build(tmp_path: Path, tools: None) -> None:
    recipe, pre = _fake(tmp_path, config=BASE + "CONFIG_DRIFT_ME=y\n")
    with pytest.raises(InputError, match="CONFIG_DRIFT_ME: y in the base config, m after"):
        kbuild.build(recipe, pre, cache=tmp_path / "cache")


def test_crc_mismatch_stops_the_build(tmp_path: Path, tools: None) -> None:
    recipe, pre = _fake(tmp_path, symvers=SYMVERS.replace("0x11111111", "0x11111112"))
    with pytest.raises(InputError, match=r"1 of 2 vmlinux exports differ.*memremap_pages"):
        kbuild.build(recipe, pre, cache=tmp_path / "cache")
    assert kbuild.cached(kbuild.Recipe((), pre.config, recipe.tarball),
                         tmp_path / "cache") is None


def test_wrong_release_stops_the_build(tmp_path: Path, tools: None) -> None:
    recipe, pre = _fake(tmp_path, makefile=FAKE_MAKEFILE.replace("$(EXTRA_RELEASE)", "-dirty"))
    with pytest.raises(InputError, match=r"release is .*-dirty"):
        kbuild.build(recipe, pre, cache=tmp_path / "cache")


def test_missing_input_is_one_line(tmp_path: Path) -> None:
    _, pre = _fake(tmp_path)
    with pytest.raises(InputError, match="no such file"):
        kbuild.build(kbuild.Recipe((tmp_path / "nope.patch",), None, tmp_path / "x.tar.xz"),
                     pre, cache=tmp_path / "cache")


# ---- two kernels' dumps --------------------------------------------------------------------

PAGE = 64
START = 0x100000
VMEMMAP_A, VMEMMAP_B = 0xFFD4648680000000, 0xFFE1000000000000
PGMAP_A, PGMAP_B = 0xFF299565E2671D80, 0xFF11000012345600
TAIL_MAPPING = 0xDEAD000000000400


def _layout(vmemmap: int, **extra: int) -> KernelLayout:
    return KernelLayout({"sizeof_struct_page": PAGE, "PAGE_SHIFT": 12, "vmemmap_base": vmemmap,
                         "page_offset_base": vmemmap ^ 0xFF00000000, "NR_PAGEFLAGS": 24,
                         "TAIL_MAPPING": TAIL_MAPPING, **extra})


def _pgmap(pointer: int, shift: int = 1) -> Pgmap:
    from equiv.zone_device.live.dump import Altmap
    return Pgmap(START, pointer, 4, 0, shift, 0, 0, Altmap(0, 0, 0, 0, 0, 0, 0),
                 ((START << 12, ((START + 4) << 12) - 1),))


def _page(words: list[int]) -> bytes:
    return b"".join(w.to_bytes(8, "little") for w in words + [0] * (PAGE // 8 - len(words)))


def _dump(vmemmap: int, pgmap: int, tweak: dict[int, list[int]] | None = None,
          status: dict[int, int] | None = None, blocks: tuple[int, ...] = (1,),
          layout: dict[int, int] | None = None, shift: int = 1) -> Dump:
    """Four struct pages of two order-1 compounds: head (flags, pgmap), tail
    (compound_head = head's struct page | 1, TAIL_MAPPING)."""
    recs = []
    for i in range(4):
        pfn = START + i
        head = START + i - i % 2
        words = [1 << 6, pgmap, 0, 0, 0, 0, 1 << 32] if i % 2 == 0 else \
            [0, vmemmap + PAGE * head + 1, TAIL_MAPPING, 0, 0, 0, 0xFFFFFFFF]
        words = (tweak or {}).get(i, words)
        st = (status or {}).get(i, 0)
        recs.append(pfn.to_bytes(8, "little") + st.to_bytes(8, "little", signed=True) +
                    (_page(words) if st == 0 else bytes(PAGE)))
    return Dump(Path("ns"), _layout(vmemmap, **(layout or {})),  # type: ignore[arg-type]
                _pgmap(pgmap, shift), Pages(START, 4, PAGE, b"".join(recs)),
                tuple(Pageblock(START + 512 * j, b) for j, b in enumerate(blocks)))


def test_identical_dumps_are_byte_equal() -> None:
    r = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A), _dump(VMEMMAP_A, PGMAP_A))
    assert r.same and r.pages == 4 and r.raw_equal == 4 and r.by_meaning == 0
    assert "SAME (4 struct pages: 4 byte-equal" in r.summary()


def test_kaslr_pointers_are_equal_by_meaning() -> None:
    r = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A), _dump(VMEMMAP_B, PGMAP_B))
    assert r.same and r.raw_equal == 0 and r.by_meaning == 4
    assert dict(r.meanings) == {"compound_head (head struct page | 1)": 2, "the pgmap": 2}


def test_a_real_difference_is_named() -> None:
    bad = {1: [0, VMEMMAP_B + PAGE * START + 1, TAIL_MAPPING, 0, 0, 0, 1]}  # refcount 0 -> 1
    r = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A), _dump(VMEMMAP_B, PGMAP_B, bad))
    assert not r.same and r.differing_pages == 1 and r.by_meaning == 3
    (d,) = r.word_diffs
    assert (d.pfn, d.offset, d.a, d.b) == (START + 1, 48, 0xFFFFFFFF, 1)
    assert "pfn 0x100001 +48: A 0x00000000ffffffff, B 0x0000000000000001" in r.summary()


def test_a_pointer_to_another_page_differs() -> None:
    # compound_head naming the wrong head: both are struct page pointers, but not the same
    bad = {3: [0, VMEMMAP_B + PAGE * START + 1, TAIL_MAPPING, 0, 0, 0, 0xFFFFFFFF]}
    r = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A), _dump(VMEMMAP_B, PGMAP_B, bad))
    (d,) = r.word_diffs
    assert d.offset == 8 and d.a_meaning == "struct page of pfn 0x100002 | 1"
    assert d.b_meaning == "struct page of pfn 0x100000 | 1"


def test_a_pointer_one_kernel_only_explains_differs() -> None:
    bad = {0: [1 << 6, 0xFFFF888000001234, 0, 0, 0, 0, 1 << 32]}  # not this kernel's pgmap
    r = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A), _dump(VMEMMAP_B, PGMAP_B, bad))
    (d,) = r.word_diffs
    assert d.a_meaning == "the pgmap" and d.b_meaning == ""


def test_status_and_pageblock_differences() -> None:
    r = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A, status={2: -14}, blocks=(1, 1)),
                                 _dump(VMEMMAP_A, PGMAP_A, blocks=(1, 0)))
    assert r.status_diffs == (START + 2,) and r.pages == 3 and not r.same
    assert r.pageblock_diffs == (f"pageblock of pfn {START + 512:#x}: bits 1, 0",)
    both = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A, status={2: -14}),
                                    _dump(VMEMMAP_A, PGMAP_A, status={2: -14}))
    assert both.same and both.unread == 1 and both.pages == 3


def test_layout_or_geometry_differences_stop_the_comparison() -> None:
    r = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A, layout={"NR_PAGEFLAGS": 25}),
                                 _dump(VMEMMAP_B, PGMAP_B))
    assert r.layout_diffs == ("NR_PAGEFLAGS: 25, 24",) and r.pages == 0 and not r.same
    g = crosscheck.compare_dumps(_dump(VMEMMAP_A, PGMAP_A), _dump(VMEMMAP_A, PGMAP_A, shift=2))
    assert g.pgmap_diffs == ("vmemmap_shift: 1, 2",) and not g.same


def test_layout_addresses_are_not_compared() -> None:
    assert crosscheck.layout_diffs(_layout(VMEMMAP_A), _layout(VMEMMAP_B)) == []
    assert crosscheck.layout_diffs(_layout(VMEMMAP_A, X=1), _layout(VMEMMAP_A)) == \
        ["X: 1, missing"]

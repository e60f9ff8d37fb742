"""The files and macros the zone-device source tooling reads.

:data:`FILES` lists the files of a kernel tree the zone-device model mirrors (handed to
:meth:`equiv.linux.ktree.KernelTree.load`); :func:`macro_env` is the preprocessor
environment of one zone-device :class:`~equiv.config.Config` (its ``CONFIG_*`` symbols, the
arch macros and the derived macros of page-flags-layout.h / mm.h), against which the
reader resolves ``#if``/``#ifdef`` chains.

:func:`kconfig_symbols` is the same configuration as Kconfig symbols to build, and
:func:`headers_for` the generated headers the C front end (:mod:`equiv.linux.cfront`)
preprocesses ``mm/mm_init.c`` with: Debian's packaged ones when they configure exactly what
the preset decides, else the tree's own ``make defconfig``, the symbols, ``make
olddefconfig prepare0`` (:func:`equiv.linux.kbuild.prepare_headers`, cached).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from equiv.config import Config
from equiv.engine.errors import InputError
from equiv.linux import kbuild, kconfig
from equiv.linux.cfront import DEBIAN_ARCHES, Headers
from equiv.linux.ktree import KernelTree, MacroEnv, makefile_version
from equiv.page_model import FlagsLayout

#: The files the model mirrors, relative to the tree's root.
FILES = (
    "mm/mm_init.c",
    "mm/internal.h",
    "include/linux/mm.h",
    "include/linux/mm_types.h",
    "include/linux/page_ref.h",
    "include/linux/page-flags.h",
    "include/linux/memremap.h",
    "include/linux/string.h",
    # small helpers interpreted from their text rather than trusted
    "include/linux/list.h",  # INIT_LIST_HEAD
    "include/linux/log2.h",  # is_power_of_2
    "include/linux/align.h",  # IS_ALIGNED, ALIGN
    "include/uapi/linux/const.h",  # __ALIGN_KERNEL, __ALIGN_KERNEL_MASK
    "include/linux/pageblock-flags.h",  # pageblock_align
    "include/linux/mmzone.h",  # zone_idx, pfn_to_section_nr, is_highmem_idx
    "include/linux/types.h",  # ATOMIC_INIT
    "include/asm-generic/rwonce.h",  # WRITE_ONCE, __WRITE_ONCE
)


#: the function the C path runs, from the tree's text
ENTRY = "memmap_init_zone_device"
#: the first kernel with compound ZONE_DEVICE pages (``pgmap->vmemmap_shift``,
#: ``memmap_init_compound``, 5.17): the code the template series replaces
OLDEST = (5, 17)


def load_tree(root: str | Path) -> KernelTree:
    """The tree at ``root`` with the files the model mirrors (:data:`FILES`) parsed.

    Raises:
        InputError: ``root`` is not a directory, holds none of :data:`FILES`, or is a
            kernel older than :data:`OLDEST` (its Makefile's version, read first).
    """
    check_version(root)
    return KernelTree.load(root, FILES)


def check_version(root: str | Path) -> None:
    """Refuse a tree older than :data:`OLDEST` by its Makefile's version, before anything
    of it is read or unpacked.

    Raises:
        InputError: one line naming the version and why.
    """
    version = makefile_version(Path(root))
    nums = re.match(r"(\d+)\.(\d+)", version or "")
    if nums and (int(nums.group(1)), int(nums.group(2))) < OLDEST:
        raise InputError(f"--linux {root} is linux {version}, older than "
                         f"{'.'.join(map(str, OLDEST))}: it has no compound ZONE_DEVICE pages "
                         "(pgmap->vmemmap_shift, memmap_init_compound), the code the "
                         "template series replaces; give a 5.17 or later tree")


def macro_env(cfg: Config) -> MacroEnv:
    """The macros the model's configuration decides (CONFIG_* symbols, arch macros, and the
    derived macros of page-flags-layout.h / mm.h such as ``SECTION_IN_PAGE_FLAGS``)."""
    fl = FlagsLayout.from_config(cfg)
    flags = {
        "CONFIG_64BIT": cfg.BITS_PER_LONG == 64, "CONFIG_MMU": cfg.MMU,
        "CONFIG_SPARSEMEM": True, "CONFIG_SPARSEMEM_VMEMMAP": cfg.SPARSEMEM_VMEMMAP,
        "CONFIG_SPARSEMEM_CLASSIC": not cfg.SPARSEMEM_VMEMMAP,
        "CONFIG_NUMA": cfg.NUMA, "CONFIG_NUMA_BALANCING": cfg.NUMA_BALANCING,
        "CONFIG_KASAN_SW_TAGS": cfg.KASAN_SW_TAGS, "CONFIG_KASAN_HW_TAGS": cfg.KASAN_HW_TAGS,
        "CONFIG_KMSAN": cfg.KMSAN, "CONFIG_MEMCG": cfg.MEMCG, "CONFIG_SLAB_OBJ_EXT": cfg.SLAB_OBJ_EXT,
        "CONFIG_LRU_GEN": cfg.LRU_GEN, "CONFIG_MEMORY_FAILURE": cfg.MEMORY_FAILURE,
        "CONFIG_PAGE_IDLE_FLAG": cfg.PAGE_IDLE_FLAG, "CONFIG_PAGE_MAPCOUNT": cfg.PAGE_MAPCOUNT,
        "CONFIG_MM_ID": cfg.MM_ID, "CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP":
            cfg.HUGETLB_PAGE_OPTIMIZE_VMEMMAP,
        "CONFIG_ARCH_WANT_OPTIMIZE_DAX_VMEMMAP": cfg.ARCH_WANT_OPTIMIZE_DAX_VMEMMAP,
        "CONFIG_HAVE_ALIGNED_STRUCT_PAGE": cfg.HAVE_ALIGNED_STRUCT_PAGE,
        "CONFIG_DEBUG_PAGE_REF": cfg.DEBUG_PAGE_REF, "CONFIG_ZONE_DMA": cfg.ZONE_DMA,
        "CONFIG_ZONE_DMA32": cfg.ZONE_DMA32, "CONFIG_ZONE_DEVICE": cfg.ZONE_DEVICE,
        "CONFIG_MEMORY_HOTPLUG": True, "CONFIG_HIGHMEM": False,
        "WANT_PAGE_VIRTUAL": cfg.WANT_PAGE_VIRTUAL,
        "SECTION_IN_PAGE_FLAGS": cfg.section_in_page_flags,
        "LAST_CPUPID_NOT_IN_PAGE_FLAGS": fl.last_cpupid_not_in_page_flags,
        "NODE_NOT_IN_PAGE_FLAGS": fl.node_not_in_page_flags,
        "CONFIG_DEBUG_VM": False, "CONFIG_DEBUG_VM_PGFLAGS": False,
        "CONFIG_TRANSPARENT_HUGEPAGE": True,
        "CONFIG_ARCH_USES_PG_ARCH_2": cfg.ARCH_USES_PG_ARCH_2,
        "CONFIG_ARCH_USES_PG_ARCH_3": cfg.ARCH_USES_PG_ARCH_3,
        "CONFIG_ARCH_USES_PG_UNCACHED": False,
        "CONFIG_DEFERRED_STRUCT_PAGE_INIT": False, "CONFIG_HUGETLB_PAGE": True,
        "CONFIG_MEMORY_HOTREMOVE": True, "CONFIG_DEVICE_PRIVATE": True,
        "CONFIG_PCI_P2PDMA": True, "CONFIG_FS_DAX": True,
        "__GENERATING_BOUNDS_H": False, "__ASSEMBLY__": False, "__KERNEL__": True,
    }
    values = {k: 1 for k, on in flags.items() if on}
    values["BITS_PER_LONG"] = cfg.BITS_PER_LONG
    values["MAX_NR_ZONES"] = cfg.MAX_NR_ZONES
    return MacroEnv(values=values, known=frozenset(flags) | {"BITS_PER_LONG", "MAX_NR_ZONES"})


def _yn(on: bool) -> str:
    return "y" if on else "n"


#: the x86_64 NR_CPUS past which Kconfig needs CPUMASK_OFFSTACK, which MAXSMP selects
#: (arch/x86/Kconfig: ``NR_CPUS_RANGE_END``)
X86_NR_CPUS_ONSTACK = 512


def kconfig_symbols(cfg: Config) -> dict[str, str]:
    """The ``CONFIG_*`` symbols the preset ``cfg`` decides, as a ``.config`` would set them
    (``y``, ``n`` or a number): those of :func:`macro_env` that are Kconfig symbols (its
    fields, and the choices the model fixes for every preset: ``DEVICE_PRIVATE`` and
    ``PCI_P2PDMA`` on, ``DEFERRED_STRUCT_PAGE_INIT`` and the ``PG_arch_2``/``PG_arch_3``
    flags off, ...), the numbers (``NR_CPUS``, ``NODES_SHIFT``) and the arm64 page size.
    Symbols of later kernels (``CONFIG_MM_ID``, ``CONFIG_PAGE_MAPCOUNT``) are decided too: a
    tree whose Kconfig lacks them leaves them out
    (:func:`equiv.linux.kbuild.prepare_headers`).  Not here: the hypothetical presets'
    forcings (``WANT_PAGE_VIRTUAL``, the section or cpupid moved by hand), which no
    ``.config`` sets, and the options that only lead there (:func:`kconfig_requests`)."""
    s: dict[str, str] = {
        "CONFIG_64BIT": _yn(cfg.BITS_PER_LONG == 64), "CONFIG_MMU": _yn(cfg.MMU),
        "CONFIG_SMP": "y", "CONFIG_NR_CPUS": str(cfg.NR_CPUS), "CONFIG_NUMA": _yn(cfg.NUMA),
        "CONFIG_NUMA_BALANCING": _yn(cfg.NUMA_BALANCING),
        "CONFIG_SPARSEMEM": "y", "CONFIG_SPARSEMEM_VMEMMAP": _yn(cfg.SPARSEMEM_VMEMMAP),
        "CONFIG_SPARSEMEM_CLASSIC": _yn(not cfg.SPARSEMEM_VMEMMAP),
        "CONFIG_KASAN_SW_TAGS": _yn(cfg.KASAN_SW_TAGS),
        "CONFIG_KASAN_HW_TAGS": _yn(cfg.KASAN_HW_TAGS), "CONFIG_KMSAN": _yn(cfg.KMSAN),
        "CONFIG_MEMCG": _yn(cfg.MEMCG), "CONFIG_SLAB_OBJ_EXT": _yn(cfg.SLAB_OBJ_EXT),
        "CONFIG_LRU_GEN": _yn(cfg.LRU_GEN), "CONFIG_MEMORY_FAILURE": _yn(cfg.MEMORY_FAILURE),
        "CONFIG_PAGE_IDLE_FLAG": _yn(cfg.PAGE_IDLE_FLAG),
        "CONFIG_PAGE_MAPCOUNT": _yn(cfg.PAGE_MAPCOUNT), "CONFIG_MM_ID": _yn(cfg.MM_ID),
        "CONFIG_HUGETLB_PAGE": "y",
        "CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP": _yn(cfg.HUGETLB_PAGE_OPTIMIZE_VMEMMAP),
        "CONFIG_ARCH_WANT_OPTIMIZE_DAX_VMEMMAP": _yn(cfg.ARCH_WANT_OPTIMIZE_DAX_VMEMMAP),
        "CONFIG_HAVE_ALIGNED_STRUCT_PAGE": _yn(cfg.HAVE_ALIGNED_STRUCT_PAGE),
        "CONFIG_DEBUG_PAGE_REF": _yn(cfg.DEBUG_PAGE_REF),
        "CONFIG_ZONE_DMA": _yn(cfg.ZONE_DMA), "CONFIG_ZONE_DMA32": _yn(cfg.ZONE_DMA32),
        "CONFIG_ZONE_DEVICE": _yn(cfg.ZONE_DEVICE), "CONFIG_MEMORY_HOTPLUG": "y",
        "CONFIG_MEMORY_HOTREMOVE": "y", "CONFIG_DEVICE_PRIVATE": "y", "CONFIG_PCI_P2PDMA": "y",
        "CONFIG_FS_DAX": "y", "CONFIG_TRANSPARENT_HUGEPAGE": "y", "CONFIG_HIGHMEM": "n",
        "CONFIG_DEBUG_VM": "n", "CONFIG_DEBUG_VM_PGFLAGS": "n",
        "CONFIG_DEFERRED_STRUCT_PAGE_INIT": "n",
        "CONFIG_ARCH_USES_PG_ARCH_2": _yn(cfg.ARCH_USES_PG_ARCH_2),
        "CONFIG_ARCH_USES_PG_ARCH_3": _yn(cfg.ARCH_USES_PG_ARCH_3),
        "CONFIG_ARCH_USES_PG_UNCACHED": "n",
    }
    if cfg.NUMA:
        s["CONFIG_NODES_SHIFT"] = str(cfg.NODES_SHIFT)
    if cfg.arch == "arm64":
        for size, shift in (("4K", 12), ("16K", 14), ("64K", 16)):
            s[f"CONFIG_ARM64_{size}_PAGES"] = _yn(cfg.PAGE_SHIFT == shift)
    return s


def kconfig_requests(cfg: Config) -> dict[str, str]:
    """What ``make olddefconfig`` is given to build ``cfg``: :func:`kconfig_symbols` and
    the user-visible options that the invisible ones follow in 6.12's Kconfig:
    ``HUGETLBFS`` for ``HUGETLB_PAGE``; ``IDLE_PAGE_TRACKING`` for ``PAGE_IDLE_FLAG`` (and
    DAMON's address-space monitors off when it is off: they select it too); ``KASAN`` for
    its tag modes; ``MAXSMP`` and ``DEBUG_KERNEL`` for an x86_64 ``NR_CPUS`` past 512
    (``NR_CPUS_RANGE_END``); ``DEBUG_KERNEL`` for KMSAN and ``DEBUG_PAGE_REF``; ``X86_PAT``
    and ``ARM64_MTE``, which select ``PG_arch_2``/``PG_arch_3`` (on in every preset, as in
    the arches' defaults).  Each must hold after ``olddefconfig`` as the decided symbols
    must."""
    s = kconfig_symbols(cfg)
    s["CONFIG_HUGETLBFS"] = "y"
    s["CONFIG_IDLE_PAGE_TRACKING"] = _yn(cfg.PAGE_IDLE_FLAG)
    if not cfg.PAGE_IDLE_FLAG:
        s["CONFIG_DAMON_VADDR"] = "n"
        s["CONFIG_DAMON_PADDR"] = "n"
    s["CONFIG_KASAN"] = _yn(cfg.KASAN_SW_TAGS or cfg.KASAN_HW_TAGS)
    if cfg.KMSAN or cfg.DEBUG_PAGE_REF:
        s["CONFIG_DEBUG_KERNEL"] = "y"
    if cfg.arch == "x86_64" and cfg.NR_CPUS > X86_NR_CPUS_ONSTACK:
        s["CONFIG_DEBUG_KERNEL"] = "y"
        s["CONFIG_MAXSMP"] = "y"
    if cfg.arch == "x86_64":
        s["CONFIG_X86_PAT"] = _yn(cfg.ARCH_USES_PG_ARCH_2)
    if cfg.arch == "arm64":
        s["CONFIG_ARM64_MTE"] = _yn(cfg.ARCH_USES_PG_ARCH_2 and cfg.ARCH_USES_PG_ARCH_3)
    return s


def _user_cache() -> Path:
    return Path(platformdirs.user_cache_dir("equiv"))


#: the environment variable naming the kbuild cache (default ``<user cache>/equiv/kbuild``)
KBUILD_CACHE_ENV = "EQUIV_KBUILD_CACHE"


def kbuild_cache() -> Path:
    """Where :func:`headers_for` keeps the prepared headers and the unpacked tree:
    ``$EQUIV_KBUILD_CACHE``, else ``<user cache>/equiv/kbuild``."""
    env = os.environ.get(KBUILD_CACHE_ENV)
    return Path(env) if env else _user_cache() / "kbuild"


#: ``.config`` symbols that describe the compiler a configuration was made with (Kbuild
#: writes them from the toolchain it runs: ``CC_VERSION_TEXT``, ``GCC_VERSION``,
#: ``CC_HAS_*``, ...), left out when a given ``.config`` is matched with a package's
_TOOLCHAIN = re.compile(r"CONFIG_(CC|AS|LD|RUSTC|BINDGEN|PAHOLE|GCC|CLANG|TOOLS)_\w*|"
                        r"CONFIG_\w*_VERSION(_TEXT)?|CONFIG_BUILD_SALT")


def _same_config(given: str, packaged: str) -> bool:
    """Do two ``.config`` texts set every symbol alike, toolchain symbols aside?"""
    a, b = kconfig.values(given), kconfig.values(packaged)
    names = {n for n in a.keys() | b.keys() if not _TOOLCHAIN.fullmatch(n)}
    return all(a.get(n, "n") == b.get(n, "n") for n in names)


def _debian_builds(usr_src: Path, version: str, target: str) -> list[tuple[Path, str, str]]:
    """Debian's unpacked ``linux-headers-<abi>-<flavour>`` directories under ``usr_src``
    of kernel ``version`` (read from the ``-common`` package's Makefile, so that 6.1's
    ``6.1.0-NN`` names match as 6.12's ``6.12.117+deb12`` do; without one, from an abi
    that names the version) for clang's ``target``:
    (the directory, its abi, its flavour)."""
    out = []
    for word, (_, tgt) in DEBIAN_ARCHES.items():
        if tgt != target:
            continue
        for build in sorted(usr_src.glob(f"linux-headers-*-{word}")):
            if build.name.endswith("-common"):
                continue
            rest = build.name.removeprefix("linux-headers-")
            # the flavour is the last word (amd64) or two (cloud-amd64); the abi the rest
            for flavour in (word, *(f"{f}-{word}" for f in ("cloud", "rt"))):
                abi = rest.removesuffix(f"-{flavour}")
                common = usr_src / f"linux-headers-{abi}-common"
                named = abi.split("+", 1)[0] == version  # 6.12.117+deb12
                if abi != rest and common.is_dir() and (
                        makefile_version(common) == version
                        or (named and makefile_version(common) is None)):
                    out.append((build, abi, flavour))
                    break
    return out


def debian_headers(source: Path, cfg: Config, usr_src: Path | None = None) -> Headers | None:
    """Debian's packaged headers (``linux-headers-<abi>-common`` and ``-<flavour>``, as
    :func:`equiv.zone_device.live.packages.fetch` unpacks them under
    ``<user cache>/equiv/live/root/usr/src``) of ``source``'s kernel version for ``cfg``'s
    arch whose ``.config`` is ``cfg``'s: for a ``.config`` given (``cfg.kconfig``) the same
    symbols set alike (toolchain symbols aside); for a preset, every symbol of
    :func:`kconfig_symbols` that it knows set as the preset decides it.  Else None."""
    usr_src = usr_src or _user_cache() / "live" / "root" / "usr" / "src"
    version = kbuild.tree_version(source)
    asked = kconfig_symbols(cfg)
    for build, abi, flavour in _debian_builds(usr_src, version, kbuild.ARCHES[cfg.arch][1]):
        config = build / ".config"
        if not (config.is_file() and (build / "include/generated/autoconf.h").is_file()):
            continue
        text = config.read_text(errors="replace")
        if cfg.kconfig is not None:
            if _same_config(cfg.kconfig, text):
                return Headers.debian(usr_src, abi, flavour)
            continue
        known = kconfig.values(text)
        # a symbol the .config has no line for may be one this kernel lacks (MM_ID): it
        # matches when absent means what the preset asks ("n"), else it must be absent
        # from the tree's Kconfig too
        wrong = [n for n, a, _ in kconfig.unmet(asked, known) if n in known or a != "n"]
        if any(n in known for n in wrong):
            continue
        common = build.parent / f"linux-headers-{abi}-common"
        if not (wrong and kconfig.defined(common, wrong)):
            return Headers.debian(usr_src, abi, flavour)
    return None


#: one tree's headers looked for or built at a time (patchproof types trees in threads)
_HEADERS_LOCK = threading.Lock()


def headers_for(source: Path, cfg: Config, cache: Path | None = None) -> Headers:
    """The generated headers ``mm/mm_init.c`` of the tree ``source`` is preprocessed with
    under ``cfg``: Debian's packaged ones where they configure exactly what ``cfg`` decides
    (:func:`debian_headers`), else the tree's own build system's
    (:func:`equiv.linux.kbuild.prepare_headers` under ``cache``, default
    :func:`kbuild_cache`): the ``.config`` of ``--kconfig`` (``cfg.kconfig``) as given, or
    a preset's symbols (:func:`kconfig_requests`) merged over the arch's ``defconfig`` as
    ``make defconfig <fragment>.config`` does (a ``--kconfig`` fragment, a file Kconfig did
    not write, is the preset built from it, its own symbols over the preset's);
    then ``make olddefconfig prepare0``, nothing forced (what olddefconfig changed is in
    the record: :func:`prepared_notes`).  clang is the kernel's compiler for KMSAN and
    where the ``.config`` says ``CC_IS_CLANG``.

    Raises:
        InputError: a hypothetical preset (no ``.config`` builds it), a step of the
            preparation that failed (naming it), or a missing host tool.
    """
    if isinstance(cfg.headers, Headers):  # prepared before (:func:`as_prepared`)
        return cfg.headers
    if cfg.hypothetical:
        raise InputError(f"config {cfg.name} is hypothetical ({cfg.hypothetical_note}): no "
                         ".config builds it, so there are no generated headers to "
                         "preprocess the kernel's C with")
    with _HEADERS_LOCK:  # trees are typed in threads; a first run may build the headers
        found = debian_headers(source, cfg)
        if found is not None:
            return found
        preset = kconfig_requests(cfg)
        asked: Mapping[str, str] | str = preset
        clang, what = cfg.KMSAN, f"config {cfg.name}"
        if cfg.kconfig is not None:  # the .config as given, nothing forced
            clang = clang or "CONFIG_CC_IS_CLANG=y" in cfg.kconfig.splitlines()
            # a fragment (a file Kconfig did not write): as a preset built from it, its own
            # symbols over the ones that preset asks
            asked = (cfg.kconfig if kconfig.is_whole(cfg.kconfig)
                     else {**preset, **kconfig.values(cfg.kconfig)})
            what = f"--kconfig {cfg.name}"
        return kbuild.prepare_headers(source, asked, cache or kbuild_cache(), arch=cfg.arch,
                                      cc="clang" if clang else None, what=what)


def prepared_notes(headers: Headers) -> tuple[str, ...]:
    """What a report says of how ``headers`` were made: Debian's package, or the tree's
    ``make olddefconfig prepare0`` with every symbol it set otherwise than asked."""
    from equiv.linux.cfront import DEFAULT_FLAGS, TYPE_FLAGS

    rec = kbuild.record(headers)
    if not rec:
        return (f"headers: Debian's packaged {headers.build.name} (its .config is the one "
                "asked for)", "compiler flags: equiv's, the build's not known from packaged "
                f"headers: {' '.join((*TYPE_FLAGS, *DEFAULT_FLAGS))}")
    base = ("the --kconfig .config as given" if rec.get("given") else
            "the symbols asked (a preset's, or a --kconfig fragment's) merged over make "
            "defconfig")
    make = rec.get("make") or []
    assert isinstance(make, list)
    out = [f"headers: {base}, make olddefconfig {kbuild.PREPARE} on linux "
           f"{rec.get('version')} ({' '.join(map(str, make))})"]
    changed = rec.get("changed") or []
    assert isinstance(changed, list)
    kernel = [c for c in changed if not _TOOLCHAIN.fullmatch(c[0])]
    tools = [c[0] for c in changed if _TOOLCHAIN.fullmatch(c[0])]
    if kernel:
        out.append(f"make olddefconfig set {len(kernel)} symbol(s) otherwise than asked "
                   "(the proof is of the configuration as prepared): "
                   + ", ".join(f"{n} {a} -> {g}" for n, a, g in kernel))
    if tools:
        out.append(f"{len(tools)} symbol(s) that describe the compiler differ from the "
                   f"given .config's (this machine's toolchain): {', '.join(tools)}")
    flags = [f for f in headers.cflags if not f.startswith("-D")]
    out.append("compiler flags: " + (f"the tree's build's (make V=1): {' '.join(flags)}"
                                     if headers.cflags else
                                     f"equiv's: {' '.join((*TYPE_FLAGS, *DEFAULT_FLAGS))}"))
    left = rec.get("left_out") or []
    assert isinstance(left, list)
    if left:
        out.append("asked but not symbols of this tree's Kconfig: " + ", ".join(left))
    return tuple(out)


__all__ = [
    "ENTRY",
    "FILES",
    "OLDEST",
    "check_version",
    "debian_headers",
    "headers_for",
    "kbuild_cache",
    "kconfig_requests",
    "kconfig_symbols",
    "load_tree",
    "macro_env",
    "prepared_notes",
]

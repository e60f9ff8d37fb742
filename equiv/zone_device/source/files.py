"""The files and macros the zone-device source tooling reads.

:data:`FILES` lists the files of a kernel tree the zone-device model mirrors (handed to
:meth:`equiv.linux.ktree.KernelTree.load`); :func:`macro_env` is the preprocessor
environment of one zone-device :class:`~equiv.config.Config` (its ``CONFIG_*`` symbols, the
arch macros and the derived macros of page-flags-layout.h / mm.h), against which the
reader resolves ``#if``/``#ifdef`` chains.
"""

from __future__ import annotations

import os
from pathlib import Path

from equiv.config import Config
from equiv.engine.errors import InputError
from equiv.linux.cfront import Headers
from equiv.linux.ktree import KernelTree, MacroEnv
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
)


def load_tree(root: str | Path) -> KernelTree:
    """The tree at ``root`` with the files the model mirrors (:data:`FILES`) parsed.

    Raises:
        InputError: ``root`` is not a directory or holds none of :data:`FILES`.
    """
    return KernelTree.load(root, FILES)


#: the environment variable naming the cache :func:`headers_for` reads by default
HEADERS_ENV = "EQUIV_HEADERS_CACHE"
#: a tree of the whole 6.12 source (``mm/``, ``include/``, ``arch/``) in the user cache,
#: where one is unpacked: the provisional headers' ``$(srctree)``
_FULL_TREES = ("kbuild-src/linux-source-6.12", "cfront/linux-source-6.12")


def headers_for(source: Path, cfg: Config, cache: Path | None = None) -> Headers:
    """The generated headers clang parses ``source``'s ``mm/mm_init.c`` with for ``cfg``
    (:func:`equiv.linux.cfront.clang_args`).

    PROVISIONAL (to be replaced by headers prepared per preset): every preset gets Debian's
    6.12.117 amd64 headers (``linux-headers-6.12.117+deb12-amd64`` as
    :func:`equiv.zone_device.live.packages.fetch` unpacks it under ``<cache>/live/root/usr/src``),
    so a preset whose configuration differs from Debian's is typed as Debian's.  Their
    ``$(srctree)`` is a whole 6.12 tree of the user cache where one is unpacked (it holds
    ``mm/``, whose headers a tree of the mirrored files alone lacks), else Debian's
    ``-common`` package.  ``cache`` is the ``equiv`` directory of a user cache (default:
    ``$EQUIV_HEADERS_CACHE`` if set, else this user's: the tests keep their result cache
    apart and read the headers from the user's).

    Raises:
        InputError: the headers are not unpacked (one line saying how to get them).
    """
    from equiv.zone_device.live import packages

    del source, cfg
    env = os.environ.get(HEADERS_ENV)
    root = cache if cache is not None else Path(env) if env else packages.cache_dir().parent
    usr_src = root / "live" / "root" / "usr" / "src"
    h = Headers.debian(usr_src, packages.ABI, packages.FLAVOUR)
    if not (h.build / "include" / "generated" / "autoconf.h").is_file():
        raise InputError(f"no generated kernel headers to type the C with: {h.build} is missing "
                         f"(run python -c 'from equiv.zone_device.live import packages; "
                         f"packages.fetch()' once: Debian's {packages.ABI} headers)")
    for sub in _FULL_TREES:
        full = root / sub
        if (full / "mm" / "vma.h").is_file() and (full / "include" / "linux" / "mm.h").is_file():
            return Headers(full, h.build, h.arch, h.target)
    return h


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
        "CONFIG_TRANSPARENT_HUGEPAGE": True, "CONFIG_ARCH_USES_PG_ARCH_2": False,
        "CONFIG_ARCH_USES_PG_ARCH_3": False, "CONFIG_ARCH_USES_PG_UNCACHED": False,
        "CONFIG_DEFERRED_STRUCT_PAGE_INIT": False, "CONFIG_HUGETLB_PAGE": True,
        "CONFIG_MEMORY_HOTREMOVE": True, "CONFIG_DEVICE_PRIVATE": True,
        "CONFIG_PCI_P2PDMA": True, "CONFIG_FS_DAX": True,
        "__GENERATING_BOUNDS_H": False, "__ASSEMBLY__": False, "__KERNEL__": True,
    }
    values = {k: 1 for k, on in flags.items() if on}
    values["BITS_PER_LONG"] = cfg.BITS_PER_LONG
    values["MAX_NR_ZONES"] = cfg.MAX_NR_ZONES
    return MacroEnv(values=values, known=frozenset(flags) | {"BITS_PER_LONG", "MAX_NR_ZONES"})


__all__ = ["FILES", "HEADERS_ENV", "headers_for", "load_tree", "macro_env"]

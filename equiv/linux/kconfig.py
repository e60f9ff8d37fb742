"""Reading a kernel ``.config`` (plain or gzip, e.g. /proc/config.gz) into a :class:`Config`.

The symbols a .config settles (``CONFIG_NUMA``, ``CONFIG_NODES_SHIFT``, ``CONFIG_NR_CPUS``, the
KASAN/KMSAN/MEMCG/LRU_GEN/... switches, the page size, ``CONFIG_ILLEGAL_POINTER_VALUE``) are
read; arch constants that live in headers, not in Kconfig (``SECTION_SIZE_BITS``,
``MAX_PHYSMEM_BITS``, ``pageblock_order``, ``KASAN_TAG_KERNEL``, ``WANT_PAGE_VIRTUAL``) come from
the arch preset and are listed in :attr:`Config.assumed`, which every report prints.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from attrs import evolve

from equiv.config import ARM64_4K, DEFAULT, Config
from equiv.engine.errors import InputError

#: Boolean symbols read as-is (``=y`` or ``=m`` is true; absent or "is not set" is false).
BOOL_SYMBOLS = (
    "SPARSEMEM_VMEMMAP", "NUMA", "NUMA_BALANCING", "KASAN_SW_TAGS", "KASAN_HW_TAGS", "KMSAN",
    "MEMCG", "SLAB_OBJ_EXT", "LRU_GEN", "MMU", "MEMORY_FAILURE", "PAGE_IDLE_FLAG",
    "PAGE_MAPCOUNT", "MM_ID", "HUGETLB_PAGE_OPTIMIZE_VMEMMAP", "ARCH_WANT_OPTIMIZE_DAX_VMEMMAP",
    "HAVE_ALIGNED_STRUCT_PAGE", "DEBUG_PAGE_REF", "ZONE_DMA", "ZONE_DMA32", "ZONE_DEVICE",
)

_LINE = re.compile(r"^CONFIG_([A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# CONFIG_([A-Za-z0-9_]+) is not set$")


def parse(text: str) -> dict[str, str]:
    """Symbol -> value (``y``, ``m``, a number or a string without quotes); unset symbols omitted."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2).strip().strip('"')
    return out


def _read(path: str) -> str:
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read --kconfig {path!r}: {e.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise InputError(f"--kconfig {path!r}: corrupt gzip data ({e})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"--kconfig {path!r} is not a text .config (not UTF-8)") from None


def _int(sym: dict[str, str], name: str, path: str) -> int | None:
    v = sym.get(name)
    if v is None:
        return None
    try:
        return int(v, 0)
    except ValueError:
        raise InputError(f"--kconfig {path!r}: CONFIG_{name}={v!r} is not a number") from None


def _page_shift(sym: dict[str, str], path: str) -> int:
    shift = _int(sym, "PAGE_SHIFT", path)
    if shift is not None:
        return shift
    for size, shift in (("4KB", 12), ("16KB", 14), ("64KB", 16)):
        if f"PAGE_SIZE_{size}" in sym:
            return shift
    for size, shift in (("4K", 12), ("16K", 14), ("64K", 16)):
        if f"ARM64_{size}_PAGES" in sym:
            return shift
    return 12


def from_kconfig(path: str) -> Config:
    """Build the configuration of the kernel whose .config is at ``path``.

    Raises:
        InputError: unreadable file, not a .config, an unsupported arch, or a configuration
            the model rejects (see :meth:`Config.validate`).
    """
    sym = parse(_read(path))
    if not sym:
        raise InputError(f"--kconfig {path!r} has no CONFIG_ lines; pass a kernel .config "
                         "(plain or gzip, e.g. /proc/config.gz)")
    if "X86_64" in sym:
        base = DEFAULT
    elif "ARM64" in sym:
        base = ARM64_4K
    else:
        arch = next((a for a in ("X86_32", "ARM", "RISCV", "PPC64", "S390") if a in sym), "unknown")
        raise InputError(f"--kconfig {path!r}: arch {arch} is not modelled; valid: x86_64, arm64")
    shift = _page_shift(sym, path)
    values: dict[str, object] = {s: s in sym and sym[s] in ("y", "m") for s in BOOL_SYMBOLS}
    values["BITS_PER_LONG"] = 64 if "64BIT" in sym else 32
    values["PAGE_SHIFT"] = shift
    values["NODES_SHIFT"] = (_int(sym, "NODES_SHIFT", path) or 0) if values["NUMA"] else 0
    values["NR_CPUS"] = (_int(sym, "NR_CPUS", path) or 1) if "SMP" in sym else 1
    values["POISON_POINTER_DELTA"] = _int(sym, "ILLEGAL_POINTER_VALUE", path) or 0
    assumed = list(base.assumed)
    if base.arch == "arm64":
        values["PAGEBLOCK_ORDER"] = shift - 3
        values["SECTION_SIZE_BITS"] = 29 if shift == 16 else 27
    if base.arch == "x86_64" and _int(sym, "PGTABLE_LEVELS", path) == 5:
        assumed = [a for a in assumed if not a.startswith("MAX_PHYSMEM_BITS")]
        assumed.append("MAX_PHYSMEM_BITS=52 when 5-level paging is enabled at boot (unused: "
                       "section bits are not in page->flags under VMEMMAP) [M]")
    cfg = evolve(base, name=path, description=f"from {path} (arch {base.arch})",
                 assumed=tuple(assumed), **values)  # type: ignore[arg-type]
    try:
        return cfg.validate()
    except InputError as e:
        raise InputError(f"--kconfig {path!r}: {e}") from None

"""Reading what ``equiv_dump.ko`` wrote: the layout constants, the pgmap and its altmap, the raw
struct pages and the pageblock cells of one range (one directory per namespace).

The files are the module's debugfs files (``/sys/kernel/debug/equiv_dump/``, see the header
comment of ``module/equiv_dump.c``) copied as they are by the guest script of
:mod:`equiv.zone_device.live.boot`:

    layout      "name value" lines: sizeof(struct page), vmemmap_base, NR_PAGEFLAGS, the
                *_PGSHIFT / *_WIDTH of include/linux/page-flags-layout.h, ZONE_DEVICE, the
                MEMORY_DEVICE_* values of enum memory_type, PG_reserved, PG_head, offsets
    pgmap       "name value" lines: the struct dev_pagemap (include/linux/memremap.h) that
                get_dev_pagemap() returns for the range's first pfn, its struct vmem_altmap
                and its ranges; only "pfn" and "pgmap 0x0" when the pfn has none
    pages       binary: a 128-byte ASCII header, then one record per pfn: u64 pfn, s64
                status (0 read, -EFAULT copy_from_kernel_nofault() failed, -ENOENT
                !pfn_valid()), the raw bytes of the struct page; little-endian
    pageblocks  "PFN BITS" lines: the NR_PAGEBLOCK_BITS bits of each pageblock's usemap
                cell (mm/page_alloc.c get_pfnblock_flags_mask()), -1 without a usemap

A recorded dump may keep ``pages`` gzipped as ``pages.gz``.

Every parser raises :class:`~equiv.engine.errors.InputError` naming the file and what is wrong
with it; :func:`load` also checks that the four files describe the same range.
"""

from __future__ import annotations

import errno
import gzip
import re
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path

from attrs import frozen

from equiv.engine.errors import InputError

#: the pages file's header size and first word (module/equiv_dump.c HDR_SIZE)
HEADER_SIZE = 128
HEADER_MAGIC = "equiv_dump pages 1"
#: the bytes of a record before the struct page: u64 pfn, s64 status
RECORD_PREFIX = 16
#: the files one dump directory holds
FILES = ("layout", "pgmap", "pages", "pageblocks")
#: the optional file naming the driver that created the pgmap and may have written its
#: struct pages after ``memremap_pages()`` returned (the guest script writes it: ``test_hmm``
#: for test_hmm.ko's dmirror chunk, ``nvme`` for an NVMe CMB's p2pdma pgmap)
DRIVER_FILE = "driver"
#: layout names every dump must have (the LRU_GEN ones only with CONFIG_LRU_GEN)
REQUIRED_LAYOUT = (
    "sizeof_struct_page", "vmemmap_base", "PAGE_SHIFT", "NR_PAGEFLAGS",
    "SECTIONS_PGSHIFT", "SECTIONS_WIDTH", "NODES_PGSHIFT", "NODES_WIDTH",
    "ZONES_PGSHIFT", "ZONES_WIDTH", "LAST_CPUPID_PGSHIFT", "LAST_CPUPID_WIDTH",
    "ZONE_DEVICE", "pageblock_order", "NR_PAGEBLOCK_BITS", "PG_reserved", "PG_head",
    "MEMORY_DEVICE_GENERIC", "MEMORY_DEVICE_FS_DAX", "PGMAP_ALTMAP_VALID",
    "offsetof_page_flags", "offsetof_page_compound_head", "offsetof_page_pgmap",
    "offsetof_page_mapcount", "offsetof_page_refcount",
)
#: migratetype bits of a pageblock cell (include/linux/pageblock-flags.h: PB_migrate 0..2)
MIGRATETYPE_BITS = 3


def _int(text: str, where: str) -> int:
    """A decimal or 0x-hex integer (the module prints both), else an InputError."""
    try:
        return int(text, 0)
    except ValueError:
        raise InputError(f"{where}: {text!r} is not a number") from None


def _pairs(text: str, where: str) -> Iterator[tuple[str, list[str]]]:
    """The ``name value...`` lines of a text file; blank lines are skipped."""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, *values = line.split()
        if not values:
            raise InputError(f"{where} line {n}: {line!r} has a name but no value")
        yield name, values


@frozen(eq=False)
class KernelLayout:
    """The ``layout`` file: every ``name value`` pair, as integers (pointers included)."""

    values: Mapping[str, int]

    def __getitem__(self, name: str) -> int:
        try:
            return self.values[name]
        except KeyError:
            raise InputError(f"the dump's layout has no {name!r}") from None

    @property
    def page_size(self) -> int:
        """``sizeof(struct page)``."""
        return self.values["sizeof_struct_page"]

    def field(self, name: str, flags: int) -> int:
        """The ``name`` field (``ZONES``, ``NODES``, ``LAST_CPUPID``, ...) of a page->flags
        word: ``(flags >> name_PGSHIFT) & ((1 << name_WIDTH) - 1)``."""
        return (flags >> self[f"{name}_PGSHIFT"]) & ((1 << self[f"{name}_WIDTH"]) - 1)


def parse_layout(text: str, where: str = "layout") -> KernelLayout:
    """Parse the ``layout`` file; an InputError for a malformed line, a name given twice or a
    missing required name."""
    values: dict[str, int] = {}
    for name, rest in _pairs(text, where):
        if len(rest) != 1:
            raise InputError(f"{where}: {name} has {len(rest)} values, expected one")
        if name in values:
            raise InputError(f"{where}: {name} is given twice")
        values[name] = _int(rest[0], f"{where}: {name}")
    gone = [n for n in REQUIRED_LAYOUT if n not in values]
    if gone:
        raise InputError(f"{where}: missing {', '.join(gone)} (not written by equiv_dump.ko?)")
    return KernelLayout(values)


@frozen
class Altmap:
    """struct vmem_altmap (include/linux/memremap.h): the pfns that hold the memmap of a
    ``--map dev`` namespace.  Meaningful only when the pgmap's flags have PGMAP_ALTMAP_VALID."""

    base_pfn: int
    end_pfn: int
    reserve: int
    free: int
    align: int
    alloc: int
    inaccessible: int


@frozen
class Pgmap:
    """struct dev_pagemap (include/linux/memremap.h) of the dumped range's first pfn."""

    pfn: int  #: the pfn get_dev_pagemap() was asked about
    pointer: int  #: its address in the guest (only for telling pgmaps apart)
    type: int  #: enum memory_type: MEMORY_DEVICE_GENERIC, MEMORY_DEVICE_FS_DAX, ...
    flags: int
    vmemmap_shift: int
    ops: int
    owner: int
    altmap: Altmap
    ranges: tuple[tuple[int, int], ...]  #: struct range: physical start, end (inclusive)

    def altmap_valid(self, layout: KernelLayout) -> bool:
        """``pgmap->flags & PGMAP_ALTMAP_VALID``: the memmap lives in the device."""
        return bool(self.flags & layout["PGMAP_ALTMAP_VALID"])

    def first_device_pfn(self, layout: KernelLayout) -> int:
        """The first pfn memmap_init_zone_device() initialises (mm/mm_init.c): the range's
        first pfn, or with an altmap ``base_pfn + reserve + free`` (vmem_altmap_offset())."""
        if self.altmap_valid(layout):
            a = self.altmap
            return a.base_pfn + a.reserve + a.free
        return self.ranges[0][0] >> layout["PAGE_SHIFT"]


_ALTMAP = tuple(f"altmap.{f}" for f in ("base_pfn", "end_pfn", "reserve", "free", "align",
                                          "alloc", "inaccessible"))
_PGMAP = ("type", "flags", "vmemmap_shift", "ops", "owner", "nr_range", *_ALTMAP)


def parse_pgmap(text: str, where: str = "pgmap") -> Pgmap | None:
    """Parse the ``pgmap`` file: None when the pfn has no dev_pagemap (``pgmap 0x0``), an
    InputError when a field is missing or the ranges do not match ``nr_range``."""
    scalars: dict[str, int] = {}
    ranges: dict[int, tuple[int, int]] = {}
    for name, rest in _pairs(text, where):
        m = re.fullmatch(r"range(\d+)", name)
        if m:
            if len(rest) != 2:
                raise InputError(f"{where}: {name} needs a start and an end")
            ranges[int(m.group(1))] = (_int(rest[0], f"{where}: {name}"),
                                       _int(rest[1], f"{where}: {name}"))
        else:
            scalars[name] = _int(rest[0], f"{where}: {name}")
    for name in ("pfn", "pgmap"):
        if name not in scalars:
            raise InputError(f"{where}: no {name!r} line")
    if scalars["pgmap"] == 0:
        return None
    gone = [n for n in _PGMAP if n not in scalars]
    if gone:
        raise InputError(f"{where}: missing {', '.join(gone)}")
    if sorted(ranges) != list(range(scalars["nr_range"])):
        raise InputError(f"{where}: nr_range {scalars['nr_range']} but ranges "
                         f"{sorted(ranges) or 'none'}")
    return Pgmap(pfn=scalars["pfn"], pointer=scalars["pgmap"], type=scalars["type"],
                 flags=scalars["flags"], vmemmap_shift=scalars["vmemmap_shift"],
                 ops=scalars["ops"], owner=scalars["owner"],
                 altmap=Altmap(*(scalars[n] for n in _ALTMAP)),
                 ranges=tuple(ranges[i] for i in range(scalars["nr_range"])))


@frozen
class PageRecord:
    """One struct page of the ``pages`` file: its pfn, the read status and the raw bytes."""

    pfn: int
    status: int  #: 0 read, -EFAULT (unmapped memmap), -ENOENT (!pfn_valid)
    raw: bytes  #: sizeof(struct page) bytes, zeros unless status is 0

    @property
    def read(self) -> bool:
        """The struct page was read (status 0)."""
        return self.status == 0

    def u64(self, offset: int) -> int:
        """The little-endian unsigned 64-bit word at ``offset``."""
        return int.from_bytes(self.raw[offset:offset + 8], "little")

    def u32(self, offset: int) -> int:
        """The little-endian unsigned 32-bit word at ``offset``."""
        return int.from_bytes(self.raw[offset:offset + 4], "little")

    def s32(self, offset: int) -> int:
        """The little-endian signed 32-bit word at ``offset`` (atomic_t: _mapcount, _refcount)."""
        return int.from_bytes(self.raw[offset:offset + 4], "little", signed=True)


@frozen(eq=False)
class Pages:
    """The ``pages`` file: ``nr_pages`` records from ``start_pfn``, kept as the file's bytes
    (a 512M namespace is 131,072 records); index by pfn."""

    start_pfn: int
    nr_pages: int
    page_size: int
    data: bytes  #: the records, without the header

    @property
    def record_size(self) -> int:
        """``16 + sizeof(struct page)``."""
        return RECORD_PREFIX + self.page_size

    def __len__(self) -> int:
        return self.nr_pages

    def __contains__(self, pfn: object) -> bool:
        return isinstance(pfn, int) and self.start_pfn <= pfn < self.start_pfn + self.nr_pages

    def __getitem__(self, pfn: int) -> PageRecord:
        if pfn not in self:
            raise KeyError(f"pfn {pfn:#x} is outside the dump "
                           f"({self.start_pfn:#x} + {self.nr_pages})")
        off = (pfn - self.start_pfn) * self.record_size
        got, status = struct.unpack_from("<Qq", self.data, off)
        return PageRecord(got, status, self.data[off + RECORD_PREFIX:off + self.record_size])

    def __iter__(self) -> Iterator[PageRecord]:
        for pfn in range(self.start_pfn, self.start_pfn + self.nr_pages):
            yield self[pfn]


_HEADER = re.compile(re.escape(HEADER_MAGIC) +
                     r" start_pfn=(\d+) nr_pages=(\d+) page_size=(\d+) record=(\d+)")


def parse_pages(data: bytes, where: str = "pages") -> Pages:
    """Parse the ``pages`` file; an InputError for a bad header, a size that is not header +
    nr_pages records, a record whose pfn is out of order or whose status is unknown."""
    if len(data) < HEADER_SIZE:
        raise InputError(f"{where}: {len(data)} bytes, shorter than the {HEADER_SIZE}-byte header")
    head = data[:HEADER_SIZE].decode("ascii", errors="replace")
    m = _HEADER.match(head)
    if not m or not head.endswith("\n"):
        raise InputError(f"{where}: header {head.strip()[:60]!r} is not "
                         f"'{HEADER_MAGIC} start_pfn=... nr_pages=... page_size=... record=...'")
    start, nr, size, rec = (int(g) for g in m.groups())
    if rec != RECORD_PREFIX + size or size % 8:
        raise InputError(f"{where}: record={rec} does not fit page_size={size} "
                         f"(expected {RECORD_PREFIX} + page_size, a multiple of 8)")
    body = data[HEADER_SIZE:]
    if len(body) != nr * rec:
        raise InputError(f"{where}: {len(body)} bytes of records, expected nr_pages={nr} x "
                         f"{rec} = {nr * rec} (a truncated copy?)")
    words = memoryview(body).cast("q")
    step = rec // 8
    pfns = words[0::step]
    for i, pfn in enumerate(pfns):
        if pfn != start + i:
            raise InputError(f"{where}: record {i} has pfn {pfn:#x}, expected {start + i:#x}")
    bad = {s for s in words[1::step]} - {0, -errno.EFAULT, -errno.ENOENT}
    if bad:
        raise InputError(f"{where}: unknown record status {sorted(bad)[0]} (0, -EFAULT or "
                         "-ENOENT expected)")
    return Pages(start, nr, size, body)


@frozen
class Pageblock:
    """One pageblock's usemap cell: the pfn of its first page and its NR_PAGEBLOCK_BITS bits
    (None when the section has no usemap)."""

    pfn: int
    bits: int | None

    @property
    def migratetype(self) -> int | None:
        """The migratetype bits (``get_pageblock_migratetype()``: PB_migrate, 3 bits)."""
        return None if self.bits is None else self.bits & ((1 << MIGRATETYPE_BITS) - 1)


def parse_pageblocks(text: str, where: str = "pageblocks") -> tuple[Pageblock, ...]:
    """Parse the ``pageblocks`` file; an InputError for a malformed line or pfns that do not
    increase."""
    out: list[Pageblock] = []
    for name, rest in _pairs(text, where):
        if len(rest) != 1:
            raise InputError(f"{where}: {name} {' '.join(rest)!r}: expected 'PFN BITS'")
        pfn = _int(name, where)
        bits = _int(rest[0], f"{where}: pfn {pfn}")
        if bits < -1:
            raise InputError(f"{where}: pfn {pfn} has bits {bits}")
        if out and pfn <= out[-1].pfn:
            raise InputError(f"{where}: pfn {pfn} after {out[-1].pfn}")
        out.append(Pageblock(pfn, None if bits == -1 else bits))
    return tuple(out)


@frozen(eq=False)
class Dump:
    """One dump directory: the four files of one range, parsed and checked to agree."""

    path: Path
    layout: KernelLayout
    pgmap: Pgmap | None
    pages: Pages
    pageblocks: tuple[Pageblock, ...]
    driver: str = ""  #: the :data:`DRIVER_FILE`'s word; empty when there is none


def load(directory: Path) -> Dump:
    """Read and parse the four files of a dump directory.

    InputError: a missing file, a malformed one, or files that disagree (the pages' struct
    page size against the layout's, the pgmap's pfn or the pageblocks against the pages'
    range).
    """
    for name in FILES:
        if not (directory / name).is_file() and not (
                name == "pages" and (directory / "pages.gz").is_file()):
            raise InputError(f"dump {directory}: no {name!r} file")
    layout = parse_layout((directory / "layout").read_text(), f"{directory}/layout")
    pgmap = parse_pgmap((directory / "pgmap").read_text(), f"{directory}/pgmap")
    if (directory / "pages").is_file():
        raw = (directory / "pages").read_bytes()
    else:  # a recorded dump keeps its pages gzipped
        try:
            raw = gzip.decompress((directory / "pages.gz").read_bytes())
        except (OSError, EOFError) as e:
            raise InputError(f"dump {directory}/pages.gz: not gzip ({e})") from None
    pages = parse_pages(raw, f"{directory}/pages")
    blocks = parse_pageblocks((directory / "pageblocks").read_text(), f"{directory}/pageblocks")
    if pages.page_size != layout.page_size:
        raise InputError(f"dump {directory}: pages has page_size={pages.page_size} but the "
                         f"layout says sizeof_struct_page {layout.page_size}")
    if pgmap is not None and pgmap.pfn != pages.start_pfn:
        raise InputError(f"dump {directory}: pgmap of pfn {pgmap.pfn}, pages from "
                         f"{pages.start_pfn}")
    nr_block = 1 << layout["pageblock_order"]
    want = list(range(pages.start_pfn - pages.start_pfn % nr_block,
                      pages.start_pfn + pages.nr_pages, nr_block))
    if [b.pfn for b in blocks] != want:
        raise InputError(f"dump {directory}: pageblocks do not cover pfns {pages.start_pfn:#x} + "
                         f"{pages.nr_pages} in steps of {nr_block}")
    drv = directory / DRIVER_FILE
    driver = drv.read_text().strip() if drv.is_file() else ""
    return Dump(directory, layout, pgmap, pages, blocks, driver)

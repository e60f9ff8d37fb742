"""Two kernels' dumps of the same namespace, compared with each other (both sides
of the series on a real kernel).

:func:`compare_dumps` takes two dump directories (:mod:`equiv.zone_device.live.dump`) of the same
namespace (same mode, align and map, same region) written by two different kernels - e.g.
Debian's prebuilt 6.12.117 and the same source built with the v11 backport - and compares
everything the dump module read:

* the **layout** constants (sizeof(struct page), the page->flags field positions, the enum
  values, the offsets): all must be equal, except the two randomised bases
  (``vmemmap_base``, ``page_offset_base``: KASLR) and :data:`ADDRESS_KEYS`;
* the **pgmap**'s geometry (type, flags, vmemmap_shift, the altmap, the ranges): equal, or
  the two kernels did not build the same namespace and nothing else is compared; its
  pointers (the pgmap itself, ``ops``, ``owner``) are addresses and are not compared;
* **every struct page** of the dump, 8-byte word by 8-byte word: equal bytes, or equal
  meaning (:func:`equiv.zone_device.live.compare.meaning`: a struct page address, ``| 1`` for an encoded
  compound head, ``+ k`` inside a struct page, the pgmap, TAIL_MAPPING) under each kernel's
  own ``vmemmap_base`` and pgmap pointer.  A word that differs in its bytes and means nothing
  known (or two different things) is a difference;
* **every pageblock** cell's bits.

A struct page read by one kernel and not the other (status) is a difference too.
"""

from __future__ import annotations

from collections import Counter

from attrs import frozen

from equiv.zone_device.live.compare import meaning
from equiv.zone_device.live.dump import Dump, KernelLayout

#: layout keys that are addresses (randomised per boot by KASLR), not compared
ADDRESS_KEYS = frozenset({"vmemmap_base", "page_offset_base"})
#: pgmap fields compared (its pointer, ops and owner are addresses)
PGMAP_FIELDS = ("type", "flags", "vmemmap_shift", "altmap", "ranges")
WORD = 8


@frozen
class WordDiff:
    """One 8-byte word of one struct page that differs between kernel A and kernel B."""

    pfn: int
    offset: int
    a: int
    b: int
    a_meaning: str
    b_meaning: str

    def describe(self, a: str = "A", b: str = "B") -> str:
        """One line, the two kernels named ``a`` and ``b``."""
        def val(v: int, m: str) -> str:
            return f"{v:#018x}" + (f" ({m})" if m else "")
        return f"pfn {self.pfn:#x} +{self.offset}: {a} {val(self.a, self.a_meaning)}, " \
               f"{b} {val(self.b, self.b_meaning)}"


@frozen(eq=False)
class DumpComparison:
    """The result of :func:`compare_dumps`."""

    name: str
    layout_diffs: tuple[str, ...]
    pgmap_diffs: tuple[str, ...]
    pages: int  #: struct pages compared (read by both)
    unread: int  #: struct pages read by neither kernel
    status_diffs: tuple[int, ...]  #: pfns read by one kernel only
    raw_equal: int  #: struct pages whose bytes are equal
    by_meaning: int  #: struct pages equal only through pointer meanings
    word_diffs: tuple[WordDiff, ...]
    meanings: tuple[tuple[str, int], ...]  #: kinds of pointer matched by meaning, counted
    pageblocks: int
    pageblock_diffs: tuple[str, ...]

    @property
    def differing_pages(self) -> int:
        """Struct pages with at least one differing word, or read by one kernel only."""
        return len({d.pfn for d in self.word_diffs}) + len(self.status_diffs)

    @property
    def same(self) -> bool:
        """No difference of any kind, and struct pages were compared."""
        return (not self.layout_diffs and not self.pgmap_diffs and not self.status_diffs
                and not self.word_diffs and not self.pageblock_diffs and self.pages > 0)

    def summary(self, a: str = "A", b: str = "B", limit: int = 10) -> str:
        """A few lines for a terminal."""
        lines = [f"{self.name}: {a} vs {b}: {'SAME' if self.same else 'DIFFERENT'} "
                 f"({self.pages} struct pages: {self.raw_equal} byte-equal, {self.by_meaning} "
                 f"equal by pointer meaning, {self.differing_pages} differ; {self.pageblocks} "
                 f"pageblocks, {len(self.pageblock_diffs)} differ)"]
        if self.meanings:
            lines.append("  pointers matched by meaning: " +
                         ", ".join(f"{k} x{n}" for k, n in self.meanings))
        lines += [f"  layout: {d}" for d in self.layout_diffs]
        lines += [f"  pgmap: {d}" for d in self.pgmap_diffs]
        lines += [f"  pfn {p:#x} read by one kernel only" for p in self.status_diffs[:limit]]
        lines += [f"  {d.describe(a, b)}" for d in self.word_diffs[:limit]]
        if len(self.word_diffs) > limit:
            lines.append(f"  ... {len(self.word_diffs) - limit} more differing words")
        lines += [f"  {d}" for d in self.pageblock_diffs[:limit]]
        return "\n".join(lines)


def layout_diffs(a: KernelLayout, b: KernelLayout,
                 skip: frozenset[str] = ADDRESS_KEYS) -> list[str]:
    """``name: A value, B value`` for each layout key the two dumps do not agree on (one
    missing counts), other than ``skip``."""
    out = []
    for k in sorted(set(a.values) | set(b.values)):
        if k in skip:
            continue
        va, vb = a.values.get(k), b.values.get(k)
        if va != vb:
            out.append(f"{k}: {'missing' if va is None else va}, "
                       f"{'missing' if vb is None else vb}")
    return out


def _kind(m: str) -> str:
    """A meaning without its pfn: ``struct page of pfn 0x1 | 1`` -> ``compound_head``."""
    if m.endswith("| 1"):
        return "compound_head (head struct page | 1)"
    if " + " in m:
        return "pointer into a struct page"
    if m.startswith("struct page"):
        return "struct page pointer"
    return m


def compare_dumps(a: Dump, b: Dump, name: str = "") -> DumpComparison:
    """Compare the dumps of one namespace by two kernels (see the module docstring)."""
    name = name or a.path.name
    lay = tuple(layout_diffs(a.layout, b.layout))
    pg: list[str] = []
    if (a.pgmap is None) != (b.pgmap is None):
        pg.append(f"pgmap: {'none' if a.pgmap is None else 'present'}, "
                  f"{'none' if b.pgmap is None else 'present'}")
    elif a.pgmap is not None and b.pgmap is not None:
        pg += [f"{f}: {getattr(a.pgmap, f)}, {getattr(b.pgmap, f)}" for f in PGMAP_FIELDS
               if getattr(a.pgmap, f) != getattr(b.pgmap, f)]
    pa, pb = a.pages, b.pages
    if (pa.start_pfn, len(pa), pa.page_size) != (pb.start_pfn, len(pb), pb.page_size):
        pg.append(f"pages: {pa.start_pfn:#x}+{len(pa)} x {pa.page_size} B, "
                  f"{pb.start_pfn:#x}+{len(pb)} x {pb.page_size} B")
    if lay or pg:
        return DumpComparison(name, lay, tuple(pg), 0, 0, (), 0, 0, (), (), 0, ())
    ptr_a = a.pgmap.pointer if a.pgmap else 0
    ptr_b = b.pgmap.pointer if b.pgmap else 0
    words = pa.page_size // WORD
    compared = unread = raw_equal = by_meaning = 0
    status: list[int] = []
    diffs: list[WordDiff] = []
    kinds: Counter[str] = Counter()
    rec = pa.record_size
    for i in range(len(pa)):
        ra, rb = pa.data[i * rec:(i + 1) * rec], pb.data[i * rec:(i + 1) * rec]
        pfn = pa.start_pfn + i
        sa, sb = int.from_bytes(ra[8:16], "little", signed=True), \
            int.from_bytes(rb[8:16], "little", signed=True)
        if sa != sb:
            status.append(pfn)
            continue
        if sa != 0:
            unread += 1
            continue
        compared += 1
        if ra == rb:
            raw_equal += 1
            continue
        page_diff = False
        for w in range(words):
            lo = 16 + w * WORD
            va = int.from_bytes(ra[lo:lo + WORD], "little")
            vb = int.from_bytes(rb[lo:lo + WORD], "little")
            if va == vb:
                continue
            ma = meaning(va, WORD, a.layout, ptr_a)
            mb = meaning(vb, WORD, b.layout, ptr_b)
            if ma and ma == mb:
                kinds[_kind(ma)] += 1
                continue
            page_diff = True
            diffs.append(WordDiff(pfn, w * WORD, va, vb, ma, mb))
        by_meaning += not page_diff
    pbd = [f"pageblock of pfn {x.pfn:#x}: bits {x.bits}, {y.bits}"
           for x, y in zip(a.pageblocks, b.pageblocks, strict=False) if x != y]
    if len(a.pageblocks) != len(b.pageblocks):
        pbd.append(f"pageblock cells: {len(a.pageblocks)}, {len(b.pageblocks)}")
    return DumpComparison(name, lay, tuple(pg), compared, unread, tuple(status), raw_equal,
                          by_meaning, tuple(diffs), tuple(sorted(kinds.items())),
                          min(len(a.pageblocks), len(b.pageblocks)), tuple(pbd))

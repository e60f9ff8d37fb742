"""What a counterexample looks like, as data for the pictures of the reports.

A subject's :class:`~equiv.engine.results.Presenter` turns one of its counterexamples into a
:class:`Picture`: the bytes of the object where the difference shows (initial, slow and
fast, with every name of every byte range, the union views overlapping), strips that show
where that object lies among its neighbours (a compound's pages, the pageblocks), and every
differing field with the chains of steps that wrote it.  The text report prints the bytes
as a hexdump (:func:`equiv.report.text.hexdump_lines`); the HTML report
(:mod:`equiv.report.html`) draws all of it.  Nothing here knows a subject.
"""

from __future__ import annotations

from attrs import frozen


@frozen
class Box:
    """One name of a byte range of the object: a field, a union member, an overlay."""

    name: str
    offset: int
    size: int


@frozen
class ObjectBytes:
    """The object a counterexample observes, byte by byte in memory order: its initial
    contents and what the slow and the fast path left, with every name of its bytes."""

    #: what the object is, e.g. "struct page of pfn 0x1 (compound 0, tail 1)"
    title: str
    initial: bytes
    slow: bytes
    fast: bytes
    #: every name of every byte range (the union views overlap); bytes no box covers are
    #: padding
    boxes: tuple[Box, ...]
    #: the names of the boxes whose bytes differ (the reported fields)
    differing: tuple[str, ...] = ()
    #: bytes per row of the diagram and of the hexdump (a machine word)
    row: int = 8

    def __attrs_post_init__(self) -> None:
        if not len(self.initial) == len(self.slow) == len(self.fast):
            raise ValueError("initial, slow and fast bytes of different lengths")

    @property
    def size(self) -> int:
        return len(self.slow)

    @property
    def diff_offsets(self) -> frozenset[int]:
        """The offsets of the bytes in which the slow and the fast path differ."""
        return frozenset(i for i, (s, f) in enumerate(zip(self.slow, self.fast, strict=True))
                         if s != f)


@frozen
class Segment:
    """One piece of a :class:`Strip`: a page, a run of pages, a pageblock."""

    label: str
    #: where it is, e.g. "pfn 0x3" or "pfns 0x4..0x1ff"
    detail: str = ""
    #: the segment holds what the strip locates
    marked: bool = False
    #: "in" (inside the range checked), "out" (outside it) or "gap" (a run not drawn)
    kind: str = "in"
    #: what a marked segment holds, as the reports label it
    mark: str = "the difference is here"


@frozen
class Strip:
    """A row of segments with the one holding the difference marked."""

    title: str
    segments: tuple[Segment, ...]
    note: str = ""


@frozen
class Change:
    """One differing field: its names, where its bytes are, both values, and for each side
    the chains of steps that wrote them (oldest step first; ``()``: never written)."""

    names: tuple[str, ...]
    offset: int
    size: int
    slow: str
    fast: str
    slow_chains: tuple[tuple[str, ...], ...]
    fast_chains: tuple[tuple[str, ...], ...]


@frozen
class Picture:
    """Everything the pictures of one counterexample show."""

    #: one line: where the difference is and which fields differ
    summary: str
    bytes: ObjectBytes | None = None
    strips: tuple[Strip, ...] = ()
    changes: tuple[Change, ...] = ()


__all__ = ["Box", "Change", "ObjectBytes", "Picture", "Segment", "Strip"]

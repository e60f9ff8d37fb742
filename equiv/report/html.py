"""HTML report of a proof run: one self-contained page to look at rather than read.

The page holds, for every run (one per configuration and subject): the matrix (one verdict
per cell, each cell not proved linked to its details), what was checked, and for every
obligation not proved its reason or counterexample.  A counterexample the subject can
draw (:meth:`~equiv.engine.results.Presenter.picture`) gets:

* a diagram of the object (for the zone-device subject: the struct page), one row per
  machine word, every field a box at its offset and size, the union views stacked in
  layers, the boxes and bytes that differ marked;
* a hexdump of its initial, slow and fast bytes side by side, the differing bytes marked;
* strips showing where it lies (the compound: pages below the range, head, tail 1, tail 2,
  the other tails, the pages from end_pfn on; and the pageblocks), the difference marked;
* the provenance chains of every differing field, slow beside fast;

one card for the obligations of a cell that one finding refutes (:func:`finding_key`: the same
inputs and the same differing fields and values, seen on several struct pages), naming them all;

and, for every counterexample, its text (the inputs) and the command that re-runs it.

The page is built with Jinja2 from ``templates/report.html.j2`` with autoescaping on.  It
loads nothing: the CSS is inline, there are no scripts, images, fonts or links outside the
page (only ``#`` anchors within it), so it opens offline, from a CI artifact or a mail
attachment, and reads the same without JavaScript.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

import jinja2
from attrs import evolve, frozen

from equiv.engine.picture import Box, ObjectBytes, Picture
from equiv.engine.results import CellResult, ObligationResult, RunResult
from equiv.engine.verdict import Verdict, worst
from equiv.report.machine import reproduce
from equiv.report.text import WIDTH, row_classes, summary_line, title


@cache
def _environment() -> jinja2.Environment:
    """The template environment: the package's templates, autoescaping on for everything,
    undefined names an error (a template typo fails the tests, not the reader)."""
    return jinja2.Environment(loader=jinja2.PackageLoader("equiv.report", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def anchor(*parts: object) -> str:
    """An HTML id from ``parts`` (letters, digits, ``-`` and ``_`` only).

    >>> anchor(0, "MEMORY_DEVICE_GENERIC", 2, "loop.tails:frame-write")
    'r0-MEMORY_DEVICE_GENERIC-2-loop-tails-frame-write'
    """
    return "r" + "-".join(re.sub(r"[^A-Za-z0-9_]+", "-", str(p)) for p in parts).strip("-")


@frozen
class Placed:
    """A box of the diagram in one row: its first column (byte within the row), width in
    bytes, and whether one of its bytes differs."""

    box: Box
    column: int
    width: int
    differs: bool


@frozen
class DiagramRow:
    """One row (machine word) of the diagram: its offset, its layers of boxes (each layer a
    list of boxes and gaps, ``None`` for a gap of one byte), and its bytes."""

    offset: int
    layers: tuple[tuple[Placed | None, ...], ...]
    #: (offset, differs) of every byte of the row
    bytes: tuple[tuple[int, bool], ...]


def diagram(obj: ObjectBytes) -> list[DiagramRow]:
    """The rows of the struct diagram: each box cut at row ends, the boxes of a row laid
    greedily into layers (a box goes into the first layer it does not overlap, larger
    boxes first, so the union views stack)."""
    diff = obj.diff_offsets
    rows: list[DiagramRow] = []
    covered = {i for b in obj.boxes for i in range(b.offset, b.offset + b.size)}
    extra = tuple(Box("<padding>", i, 1) for i in range(obj.size) if i not in covered)
    for lo in range(0, obj.size, obj.row):
        hi = min(lo + obj.row, obj.size)
        pieces = sorted(((b, max(b.offset, lo), min(b.offset + b.size, hi))
                         for b in (*obj.boxes, *extra) if b.offset < hi and b.offset + b.size > lo),
                        key=lambda p: (-(p[2] - p[1]), p[1]))
        layers: list[dict[int, Placed]] = []
        for box, a, z in pieces:
            placed = Placed(box, a - lo, z - a, any(i in diff for i in range(a, z)))
            for layer in layers:
                if all(p.column + p.width <= a - lo or p.column >= z - lo for p in layer.values()):
                    layer[a - lo] = placed
                    break
            else:
                layers.append({a - lo: placed})
        out_layers: list[tuple[Placed | None, ...]] = []
        for layer in layers:
            cells: list[Placed | None] = []
            col = 0
            while col < hi - lo:
                p = layer.get(col)
                cells.append(p)
                col += p.width if p is not None else 1
            out_layers.append(tuple(cells))
        rows.append(DiagramRow(lo, tuple(out_layers), tuple((i, i in diff) for i in range(lo, hi))))
    return rows


@frozen
class HexRow:
    """One row of the hexdump: its offset and, per side (initial, slow, fast), its bytes as
    (two hex digits, differs)."""

    offset: int
    sides: tuple[tuple[tuple[str, bool], ...], ...]


def hexdump(obj: ObjectBytes) -> list[HexRow]:
    """The hexdump rows of ``obj``: initial, slow and fast side by side; a byte of the slow
    or fast side is marked where the two differ."""
    diff = obj.diff_offsets
    rows = []
    for lo in range(0, obj.size, obj.row):
        hi = min(lo + obj.row, obj.size)
        rows.append(HexRow(lo, tuple(
            tuple((f"{data[i]:02x}", side > 0 and i in diff) for i in range(lo, hi))
            for side, data in enumerate((obj.initial, obj.slow, obj.fast)))))
    return rows


@frozen
class Also:
    """An obligation refuted by the finding of another card: its name and anchor, where its
    difference shows (its picture's one-line summary) and the command that re-runs it."""

    name: str
    id: str
    where: str
    reproduce: str | None


@frozen
class Detail:
    """One obligation not proved, as the page shows it."""

    id: str
    ob: ObligationResult
    cell: CellResult
    about: str
    picture: Picture | None
    diagram: tuple[DiagramRow, ...]
    hexdump: tuple[HexRow, ...]
    #: the counterexample in the subject's words (inputs, page, fields), or ()
    lines: tuple[str, ...]
    reproduce: str | None
    #: the other obligations of the cell refuted by the same finding (:func:`finding_key`)
    also: tuple[Also, ...] = ()


def finding_key(ob: ObligationResult, pic: Picture | None) -> tuple[object, ...] | None:
    """What makes two refuted obligations of one cell the same finding: the same inputs
    and the same differing fields with the same slow and fast values (the objects observed,
    e.g. tail 1 and tail 2 of a compound, may differ).  None (never grouped) without a
    counterexample or a picture of its differences."""
    if ob.counterexample is None or pic is None or not pic.changes:
        return None
    inputs = ob.counterexample.to_json().get("inputs")
    return (ob.verdict, repr(inputs),
            tuple((ch.names[0], ch.offset, ch.size, ch.slow, ch.fast) for ch in pic.changes))


def _details(run: RunResult, index: int) -> list[Detail]:
    out: list[Detail] = []
    for c in run.cells:
        first: dict[tuple[object, ...], int] = {}
        for ob in c.obligations:
            if ob.verdict is Verdict.PROVED:
                continue
            pic = run.presenter.picture(run, c, ob) if ob.counterexample is not None else None
            ident = anchor(index, c.ptype, c.order, ob.name)
            key = finding_key(ob, pic)
            if key is not None and key in first:
                i = first[key]
                more = Also(ob.name, ident, pic.summary if pic else "", reproduce(run, c, ob))
                out[i] = evolve(out[i], also=(*out[i].also, more))
                continue
            if key is not None:
                first[key] = len(out)
            obj = pic.bytes if pic is not None else None
            lines = (run.presenter.counterexample_lines(ob.counterexample, WIDTH)
                     if ob.counterexample is not None else [])
            out.append(Detail(
                ident, ob, c, run.presenter.about(ob), pic,
                tuple(diagram(obj)) if obj is not None else (),
                tuple(hexdump(obj)) if obj is not None else (), tuple(lines),
                reproduce(run, c, ob)))
    return out


def _matrix(run: RunResult, index: int) -> dict[str, Any]:
    """The matrix of one run: column names, and rows of (order, cells); a cell is None
    (not run) or (verdict, all_types, link to its first detail or None)."""
    types = list(dict.fromkeys(c.ptype for c in run.cells))
    orders = sorted({c.order for c in run.cells})
    by = {(c.ptype, c.order): c for c in run.cells}
    rows = []
    for o in orders:
        cells: list[tuple[str, bool, str | None] | None] = []
        for t in types:
            c = by.get((t, o))
            if c is None:
                cells.append(None)
                continue
            bad = [ob for ob in c.obligations if ob.verdict is not Verdict.PROVED]
            link = "#" + anchor(index, c.ptype, c.order, bad[0].name) if bad else None
            cells.append((c.verdict.value, c.all_types, link))
        rows.append((o, cells))
    return {"columns": [run.presenter.column_name(t) for t in types], "rows": rows}


def render_html(runs: Sequence[RunResult], *, times: bool = True) -> str:
    """One self-contained HTML page for ``runs`` (one run, or ``--config all`` /
    ``--subject all``): the matrices first, then each run's details."""
    views = []
    for i, run in enumerate(runs):
        views.append({
            "run": run, "id": anchor(i), "title": title(run), "summary": summary_line(run),
            "matrix": _matrix(run, i), "details": _details(run, i),
            "all_types_note": run.presenter.all_columns_note("text", False)
            if any(c.all_types for c in run.cells) else "",
            "row_class_note": run.presenter.row_class_note(row_classes(run), "text", False)
            if row_classes(run) else "",
            "smallest": min((c.order for c in run.cells if c.verdict is Verdict.REFUTED),
                            default=None)})
    verdict = worst([r.verdict for r in runs]) if runs else Verdict.PROVED
    return _environment().get_template("report.html.j2").render(
        runs=views, verdict=verdict.value, times=times)


__all__ = ["anchor", "diagram", "finding_key", "hexdump", "render_html"]

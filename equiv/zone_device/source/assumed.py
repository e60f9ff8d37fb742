"""The assumptions a source-derived run made about its inputs, as its reports print them.

Each cell of ``--linux`` (:mod:`equiv.zone_device.source.fidelity`) and of ``--patch`` /
``--against`` (:mod:`equiv.zone_device.source.patchproof`) asserts, in every query, the
terms of :func:`equiv.memmap.input_assumptions` (and, in the search with the loops unrolled,
:func:`bounded_search`); the cell keeps the :class:`~equiv.memmap.Stated` part of each (what
it says, where it comes from).  :func:`locate` gathers them over a run's cells and finds
each kernel line they rest on in the trees the run read: ``mm/mm_init.c:1099`` is then the
line of the tree read (both trees' lines with ``--patch`` when they differ), and a line of a
file the run did not read keeps its line in :data:`equiv.memmap.SITES_READ_IN`, marked ``[6.12.117]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import z3
from attrs import frozen

from equiv.engine import bv
from equiv.linux.ktree import KernelTree
from equiv.memmap import (
    SITES_VERSION,
    SOURCE_KINDS,
    Assumption,
    Inputs,
    Scenario,
    Site,
    Source,
    Stated,
    assumption_name,
)

#: the source of the bound of the search with the loops unrolled
BOUNDED_SOURCE = Source(
    "choice", "U",
    "only when a loop-summary lemma fails, a search with the loops "
    "unrolled looks for a difference on ranges this small; one it finds is replayed and "
    "reported, none found proves nothing (the roles stay UNKNOWN)")


def bounded_search(sc: Scenario, inp: Inputs, compounds: int, altmap: bool = False
                   ) -> Assumption:
    """The bound of the search with the loops unrolled: at most ``compounds`` compounds;
    with ``altmap`` also an altmap (so no deduplicated vmemmap, whose aliased tails a loop
    summary of a loop that writes past a compound may not follow)."""
    bound = z3.ULE(inp.nr_pages, compounds * sc.stride)
    if not altmap:
        return Assumption(
            Stated("bounded-search", f"nr_pages <= {compounds} compounds of 2^order pages "
                   "(the search with the loops unrolled only)", BOUNDED_SOURCE), bound)
    return Assumption(
        Stated("bounded-search-altmap", f"nr_pages <= {compounds} compounds of 2^order "
               "pages and an altmap, so no deduplicated vmemmap (the second search with the "
               "loops over compounds unrolled only)", BOUNDED_SOURCE),
        z3.And(bound, bv.as_z3_bool(inp.altmap_valid)))


@frozen
class Located:
    """An assumption of a run as its reports print it: what it says (``text``), the kind of
    its source (a key of :data:`equiv.memmap.SOURCE_KINDS`) and reading tag, why it holds,
    the lines of the function checked that rely on it and the lines that guarantee it
    (each located in the trees read, :func:`site_text`), what it claims beyond the
    kernel's guarantee, and the cells it was asserted in (empty: every cell)."""

    key: str
    text: str
    kind: str
    tag: str
    why: str
    relied_on: tuple[str, ...]
    guaranteed_by: tuple[str, ...]
    beyond: str = ""
    cells: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The line the model's reports print for the same assumption
        (:attr:`equiv.memmap.Stated.name`)."""
        return assumption_name(self.text, self.tag, self.kind, self.why, self.beyond)

    @property
    def kind_label(self) -> str:
        return SOURCE_KINDS[self.kind]

    def as_json(self) -> dict[str, Any]:
        """The JSON form (``equiv.patch/1`` and ``equiv.linux/1``: ``assumptions[]``)."""
        return {"id": self.key, "text": self.text, "kind": self.kind, "tag": self.tag,
                "why": self.why, "relied_on": list(self.relied_on),
                "guaranteed_by": list(self.guaranteed_by), "beyond": self.beyond or None,
                "cells": list(self.cells) or None}


def _file_lines(tree: KernelTree, file: str, memo: dict[tuple[int, str], list[str] | None]
                ) -> list[str] | None:
    """The lines of ``file`` in ``tree``: a file it parsed, else one on disk under its root
    (a full tree), else None."""
    key = (id(tree), file)
    if key not in memo:
        raw = tree.sources.get(file)
        if raw is None:
            path = Path(tree.root) / file
            try:
                raw = path.read_bytes() if path.is_file() else None
            except OSError:
                raw = None
        memo[key] = None if raw is None else raw.decode("utf-8", "replace").splitlines()
    return memo[key]


def _find(site: Site, tree: KernelTree, lines: list[str]) -> int | None:
    """The line of ``site``'s text in ``lines`` (whitespace-insensitive): within its
    function's definition if the tree indexes it in that file, else the occurrence closest
    to the line it had where it was read; None if the text is not there."""
    want = " ".join(site.text.split())
    hits = [i + 1 for i, ln in enumerate(lines) if want in " ".join(ln.split())]
    if not hits:
        return None
    spans = [(d.line, d.node.end_point[0] + 1) for d in tree.defs.get(site.function, ())
             if d.file == site.file]
    inside = [h for h in hits if any(lo <= h <= hi for lo, hi in spans)]
    return min(inside or hits, key=lambda h: abs(h - site.line))


def site_text(site: Site, trees: Sequence[tuple[str, KernelTree]],
              memo: dict[tuple[int, str], list[str] | None] | None = None) -> str:
    """Where ``site`` is, for a report: its file:line in the trees read (``(label, tree)``
    pairs; one line when they agree, else each tree's), or, in a file none of them holds,
    its line in :data:`~equiv.memmap.SITES_READ_IN`, marked ``[6.12.117]``."""
    memo = {} if memo is None else memo
    found: list[tuple[str, int | None]] = []
    for label, tree in trees:
        lines = _file_lines(tree, site.file, memo)
        if lines is not None:
            found.append((label, _find(site, tree, lines)))
    where = f"({site.function})"
    if not found:
        return f"{site.file}:{site.line} {where} [{SITES_VERSION}]"
    seen = {ln for _, ln in found}
    if None not in seen and len(seen) == 1 and len(found) == len(trees):
        return f"{site.file}:{found[0][1]} {where}"
    if seen == {None}:
        return (f"{site.file}:{site.line} {where} [{SITES_VERSION}; not in the "
                f"{'trees' if len(found) > 1 else 'tree'} read]")
    parts = [f"line {ln} in {label}" if ln is not None else f"not in {label}"
             for label, ln in found]
    return f"{site.file} {where}: {', '.join(parts)}"


def locate(cells: Sequence[tuple[str, Sequence[Stated]]],
           trees: Sequence[tuple[str, KernelTree]]) -> tuple[Located, ...]:
    """The assumptions of a run's cells (``(cell label, the cell's assumptions)`` pairs),
    each once, in the order the cells first assert them, with the cells it was asserted in
    when not all of them, and its lines located in ``trees`` (:func:`site_text`)."""
    order: dict[str, Stated] = {}
    where: dict[str, list[str]] = {}
    for label, stated in cells:
        for s in stated:
            order.setdefault(s.key, s)
            where.setdefault(s.key, []).append(label)
    memo: dict[tuple[int, str], list[str] | None] = {}
    every = [label for label, _ in cells]
    out = []
    for key, s in order.items():
        src = s.source
        mine = where[key]
        out.append(Located(
            key=key, text=s.text, kind=src.kind, tag=src.tag, why=src.why,
            relied_on=tuple(site_text(x, trees, memo) for x in src.relied_on),
            guaranteed_by=tuple(site_text(x, trees, memo) for x in src.guaranteed_by),
            beyond=src.beyond, cells=() if mine == every else tuple(mine)))
    return tuple(out)


__all__ = ["BOUNDED_SOURCE", "Located", "bounded_search", "locate", "site_text"]

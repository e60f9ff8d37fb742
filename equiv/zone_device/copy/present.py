"""The copy primitive's tables as text: the byte-equality summary and the publication-order
table.

Renders the data of :mod:`equiv.zone_device.copy.prover` (:func:`~equiv.zone_device.copy.prover.copy_summary`:
does each revision of the series' non-temporal copy of a ``struct page`` write exactly the
bytes memcpy writes, docs/model.md) and of
:mod:`equiv.zone_device.copy.ordering` (:func:`~equiv.zone_device.copy.ordering.ordering_table`:
can a reader see the
published flag but a stale page, in a simplified x86-TSO model with non-temporal stores).
Rendering only: every function takes rows and returns a string; nothing prints
(``--copy-primitive`` and ``bench/copy_primitive.py`` print).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from equiv.zone_device.copy.ordering import OrderingRow
    from equiv.zone_device.copy.prover import CopySummaryRow

__all__ = ["render_copy_summary", "render_ordering_table"]


def render_copy_summary(rows: Iterable[CopySummaryRow]) -> str:
    """The byte-equality table as text."""
    lines = [f"{'rev':6s} {'cnt':>3s} {'verdict':8s} {'proved':>7s}  paths"]
    for r in rows:
        head = f"{r.revision:6s} {r.cnt:3d} {r.verdict.value:8s} {r.proved:3d}/{r.cells:<3d}  "
        for k, p in enumerate(r.paths):
            lines.append((head if k == 0 else " " * len(head)) + p)
        if r.first_wrong:
            lines.append(" " * len(head) + f"first wrong byte(s): {list(r.first_wrong)}")
    return "\n".join(lines)


def render_ordering_table(rows: Iterable[OrderingRow], *, witnesses: bool = True) -> str:
    """The ordering table as text, with each row's explanation and (optionally) a witness."""
    lines = [f"{'rev':6s} {'drain':6s} {'publication':14s} {'stale page visible':19s} states  page"]
    for r in rows:
        vis = "YES " + ",".join(r.stale_locations) if r.stale_visible else "no"
        lines.append(f"{r.revision:6s} {'sfence' if r.drain else '-':6s} {r.publication:14s} "
                     f"{vis:19s} {r.states:6d}  {r.page}")
        lines.append(f"{'':8s}{r.explanation}")
        if witnesses and r.witness:
            lines.append(f"{'':8s}witness: " + "; ".join(r.witness))
    return "\n".join(lines)

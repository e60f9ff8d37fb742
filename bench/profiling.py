"""The profile summary the bench scripts print (issue 18: say where the time goes): the
cumulative seconds of named functions, grouped under labels (solver, term building,
replay, ...), with their share of the wall time, then cProfile's own top entries."""

from __future__ import annotations

import cProfile
import io
import pstats
from collections.abc import Sequence


def bucket_lines(pr: cProfile.Profile, buckets: Sequence[tuple[str, Sequence[str]]],
                 wall: float, *, width: int = 44, top: int = 20) -> list[str]:
    """One line per (label, function names) bucket: the largest cumulative time of a
    function of that name (nested calls are not added twice), and its share of ``wall``;
    then cProfile's ``top`` entries by cumulative time."""
    stats = pstats.Stats(pr).stats  # type: ignore[attr-defined]
    lines = []
    for label, names in buckets:
        cum = max((v[3] for (_, _, fn), v in stats.items() if fn in names), default=0.0)
        lines.append(f"  {label:{width}} {cum:7.1f} s  {100 * cum / max(wall, 1e-9):5.1f} %")
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("cumulative").print_stats(top)
    lines.append(buf.getvalue())
    return lines

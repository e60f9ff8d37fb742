"""How long a run will take, said before it starts (issue 17).

A run that takes minutes announces itself with one line on stderr, before the first cell
starts::

    equiv: about 2 min (95 cells, 0 cached; 2 jobs)
    equiv: about 1 min (self-test: 210 cells, 0 cached; 2 jobs)

The figure is not a guess: it is the sum, over the groups of cells the cache cannot serve,
of the cold seconds each group took on the 2-core development machine with every other
cell of the run beside it (:data:`GROUP_SECONDS`, written down from ``bench/compare.py`` and
``bench/matrix.py``; :data:`MUTANT_CELL_SECONDS` for a seeded-bug cell, from the
self-test's row of ``bench/all.py``), divided among the jobs.  (The vmap subject's self-test
has one figure for the whole run: ``equiv.vmap.selftest.COLD_CPU_SECONDS``.)  The line is
written by :func:`equiv.report.progress.announce`.  A run it has no figure for, or one it
expects to take under :data:`NOTICE_S`, prints nothing; so does a run served by the cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from equiv.engine.cache import Cache, cell_key
from equiv.matrix import CellSpec
from equiv.report.progress import NOTICE_S, Estimate, announce

#: Cold seconds of one group of cells (one configuration, revision and order: the five
#: pgmap types, or one) by revision, then order; the last figure stands for every larger
#: order.  ``--compare v6.12``: each order's group CPU time in one process
#: (``bench/compare.py``, 2026-12-02 12:00-12:50, after the lazy replay of counterexamples),
#: scaled by 1.08 to the 223 s of CPU the whole 2-job run of orders 0..18 took.
GROUP_SECONDS: dict[str, tuple[float, ...]] = {
    # v11 (the default revision): --config all, 16 presets x 19 orders, took 256 s of CPU
    # cold (bench/zone_device.py, 2026-12-02): 0.84 s per group, flat in the order (the
    # orders are proved by a symbolic page index, not by enumerating pages)
    "v11": (0.84,),
    # --compare v6.12: every cell is refuted somewhere, so each order runs the all-types
    # try and all five types, with counterexamples steered, replayed and explained
    "compare:v6.12": (5.0, 5.5, 10.0, 13.5, 11.5, 15.0, 10.5, 11.5, 19.5, 16.0, 14.0, 12.0,
                      11.0, 10.5, 13.5, 11.0, 11.5, 13.5, 9.0),
}


#: Cold seconds of one zone-device seeded-bug cell (revision v11, one pgmap type, the
#: self-test's orders 0, 1, 2 and 9): ``--self-test`` (42 bugs x 5 cells) took 61 s wall on
#: 2 jobs cold (``bench/all.py``, 2026-12-02, load 1.4 to 2), i.e. 122 s of the cores for
#: 210 cells, before a bug's cell stopped once caught; in one process 104 s of CPU before
#: that and 72 s after (same day): 0.58 s x 72 / 104.
MUTANT_CELL_SECONDS = 0.40


def estimate_seconds(specs: Sequence[CellSpec], jobs: int, cache: Cache | None,
                     what: str = "") -> Estimate | None:
    """The estimate of the cells still to run, or None when there is no measured figure
    for some cell (its revision, or a seeded bug on a revision other than v11)."""
    groups: dict[tuple[str, str, str | None, int], list[CellSpec]] = {}
    for sp in specs:
        cfg = sp.config if isinstance(sp.config, str) else sp.config.name
        groups.setdefault((cfg, sp.revision, sp.mutant, sp.order), []).append(sp)
    total = 0.0
    cached = 0
    for (_, rev, mutant, order), cells in groups.items():
        figures = GROUP_SECONDS.get(rev)
        if figures is None or (mutant is not None and rev != "v11"):
            return None
        if cache is not None and all(
                cache.get("cell", cell_key(sp.description())) is not None for sp in cells):
            cached += len(cells)
            continue
        if mutant is not None:  # each type its own cell (a bug is seldom proved at once)
            total += MUTANT_CELL_SECONDS * len(cells)
        else:
            total += figures[min(order, len(figures) - 1)] * (len(cells) / 5 if len(cells) < 5
                                                                   else 1)
    return Estimate(total / max(1, min(jobs, len(groups))), len(specs), len(groups), cached,
                    what)


def self_test_notice(jobs: int, cache: Cache | None, err: TextIO) -> None:
    """Print the zone-device self-test's estimate on ``err`` if it will take minutes."""
    from equiv.selftest import specs

    announce(estimate_seconds(specs(), jobs, cache, "self-test"), jobs, err)


def notice(specs: Sequence[CellSpec], jobs: int, cache: Cache | None, err: TextIO) -> None:
    """Print the one-line estimate of a proof matrix on ``err`` if it will take minutes."""
    announce(estimate_seconds(specs, jobs, cache), jobs, err)


__all__ = ["GROUP_SECONDS", "MUTANT_CELL_SECONDS", "NOTICE_S", "estimate_seconds", "notice",
           "self_test_notice"]

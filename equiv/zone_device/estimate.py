"""How long a run will take, said before it starts.

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
from equiv.report.progress import NOTICE_S, Estimate, announce
from equiv.zone_device.cell import CellSpec, order_groups

#: Cold seconds of one group of cells of one order (one configuration, revision and order:
#: the five pgmap types, or one) by revision, then order; the last figure stands for every
#: larger order.  A group of an order class (:func:`equiv.zone_device.cell.order_groups`) costs
#: :data:`CLASS_SECONDS`, plus, for a revision whose class proof never proves everything
#: (``--compare v6.12``: differences at every order), each of its orders' figure here.
GROUP_SECONDS: dict[str, tuple[float, ...]] = {
    # v11 (the default revision): orders 0 and 1 of --config all (bench/all.py, 2026-12-03,
    # 16 presets: 25 s of CPU in all with the classes below)
    "v11": (0.35,),
    # --compare v6.12: every order but 0 is refuted on every type: the all-types try and
    # five cells with counterexamples steered, replayed and explained, each order its own
    # group with its own loop lemmas (a comparison with known differences has no order
    # classes): 49.5 s of CPU for orders 0..18 (bench/all.py's command, 2026-12-03 19:00;
    # one process: orders 0 and 1 about 2 s, the others 2.5-3.5 s)
    "compare:v6.12": (1.9, 2.0, 2.7),
}
#: Cold seconds of the one proof of an order class (the type and the order symbolic), by
#: revision: it proves the class (v11).
CLASS_SECONDS: dict[str, float] = {"v11": 1.2}


#: Cold seconds of one zone-device seeded-bug cell (revision v11, one pgmap type, the
#: self-test's orders 0, 1, 2 and 9): ``--self-test`` (42 bugs x 5 cells) took 25.6 s of
#: CPU on 2 jobs cold (bench/all.py, 2026-12-03 19:00), i.e. 0.12 s a cell; under a
#: minute on one job, so it is not announced.
MUTANT_CELL_SECONDS = 0.12


def estimate_seconds(specs: Sequence[CellSpec], jobs: int, cache: Cache | None,
                     what: str = "") -> Estimate | None:
    """The estimate of the cells still to run, or None when there is no measured figure
    for some cell (its revision, or a seeded bug on a revision other than v11)."""
    groups = [[specs[i] for i in idx] for idx in order_groups(list(specs))]
    total = 0.0
    cached = 0
    for cells in groups:
        rev, mutant = cells[0].revision, cells[0].mutant
        figures = GROUP_SECONDS.get(rev)
        if figures is None or (mutant is not None and rev != "v11"):
            return None
        if cache is not None and all(
                cache.get("cell", cell_key(sp.description())) is not None for sp in cells):
            cached += len(cells)
            continue
        if mutant is not None:  # each type its own cell (a bug is seldom proved at once)
            total += MUTANT_CELL_SECONDS * len(cells)
            continue
        orders = sorted({sp.order for sp in cells})
        share = min(1.0, len(cells) / len(orders) / 5)  # fewer types than five: a share
        if len(orders) > 1:  # an order class
            total += CLASS_SECONDS.get(rev, 0.0) * share
            if rev == "v11":
                continue
        total += sum(figures[min(o, len(figures) - 1)] for o in orders) * share
    return Estimate(total / max(1, min(jobs, len(groups))), len(specs), len(groups), cached,
                    what)


def self_test_notice(jobs: int, cache: Cache | None, err: TextIO) -> None:
    """Print the zone-device self-test's estimate on ``err`` if it will take minutes."""
    from equiv.zone_device.selftest import specs

    announce(estimate_seconds(specs(), jobs, cache, "self-test"), jobs, err)


def notice(specs: Sequence[CellSpec], jobs: int, cache: Cache | None, err: TextIO) -> None:
    """Print the one-line estimate of a proof matrix on ``err`` if it will take minutes."""
    announce(estimate_seconds(specs, jobs, cache), jobs, err)


__all__ = ["CLASS_SECONDS", "GROUP_SECONDS", "MUTANT_CELL_SECONDS", "NOTICE_S", "estimate_seconds", "notice",
           "self_test_notice"]

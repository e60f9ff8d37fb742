"""Mutation self-test of the page-table subject: every seeded bug (M1-M8, X1-X6) of
:data:`equiv.vmap.mutants.MUTANTS` on every cell of :data:`CELLS`, scored like the first
subject's self-test (the result types of :mod:`equiv.engine.selftest`).

The base revision is ``v8-fix`` (the latest revision with the fix of
docs/findings/vmap-multi-cont-crosses-runs.md): on ``v8`` itself the vmap path is already
refuted (the finding), so a "kill" on vmap would mean nothing.  A cell is classified against
the mutant's expectation for the cell's path (:class:`equiv.engine.selftest.Outcome`): a bug must be
REFUTED on one of its expected obligations and on none of its ``not_reported`` ones (M7: the
undefined behaviour, not a translation difference); a path where it cannot show, and every
path of the equivalent controls M8 and X6, must be PROVED.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from equiv.engine.errors import lookup_all
from equiv.engine.results import CellResult, ObligationResult
from equiv.engine.runner import run_groups
from equiv.engine.selftest import CellOutcome, MutantRow, Outcome, SelfTestResult
from equiv.engine.verdict import Verdict
from equiv.report.progress import Estimate
from equiv.vmap.cell import check_cell, resolve, stopped_cell
from equiv.vmap.mutants import MUTANTS, Mutant

#: the base revision the seeded bugs are applied to
BASE = "v8-fix"


#: (path, bound) cells every mutant is checked on: vmap needs 3 segments for M5 (two runs
#: after the first batch), vmalloc 2 chunks for M3 (a PMD block, then a later slot)
CELLS: tuple[tuple[str, int], ...] = (("ioremap", 1), ("vmalloc", 2), ("vmap", 3))

#: CPU seconds of the whole self-test, cold (its cells are never cached), on the 2-core
#: development machine: 150 s before each bug's cell stopped once caught (``bench/all.py``,
#: 2026-12-02: 59.9 s wall on 2 jobs); in one process, the same day at load 10-13, 122 s
#: before and 42 s after (expected obligations first, stopped once caught): 150 x 42 / 122.
#: Under a minute even on one job, so no estimate is printed; the hook stays for a slower
#: catalogue.
COLD_CPU_SECONDS = 52.0


def estimate(jobs: int) -> Estimate:
    """What the whole self-test is expected to take on ``jobs`` workers (cold)."""
    cells = len(MUTANTS) * len(CELLS)
    return Estimate(COLD_CPU_SECONDS / max(1, min(jobs, cells)), cells, cells, 0, "self-test")


def classify(m: Mutant, path: str, res: CellResult) -> tuple[Outcome, tuple[str, ...]]:
    """The outcome of one cell, and the obligations it refuted."""
    reported = tuple(sorted(o.name for o in res.obligations if o.verdict is Verdict.REFUTED))
    want = m.expected(path)
    if want is None:
        if res.verdict is not Verdict.PROVED:
            return Outcome.FALSE_REPORT, reported
        return (Outcome.OK if m.equivalent else Outcome.NOT_APPLICABLE), reported
    if res.verdict is not Verdict.REFUTED or not set(want) & set(reported):
        return (Outcome.SURVIVED if not reported else Outcome.WRONG_FIELD), reported
    if set(m.not_reported) & set(reported):
        return Outcome.WRONG_FIELD, reported
    return Outcome.KILLED, reported


def caught(m: Mutant, path: str) -> Callable[[ObligationResult], bool] | None:
    """When a cell of bug ``m`` on ``path`` has shown what the self-test asks of it: one of
    its expected obligations REFUTED, after every obligation it must not report was
    decided without being refuted.  :func:`classify` scores such a cell KILLED whatever the
    obligations after it say, so the cell stops there (:func:`equiv.vmap.cell.check_cell`'s
    ``enough``).  None where the bug must not show (the cell is checked whole) and for the
    equivalent controls."""
    want = m.expected(path)
    if want is None or m.equivalent:
        return None
    wanted, forbidden = set(want), set(m.not_reported)
    seen: set[str] = set()

    def enough(o: ObligationResult) -> bool:
        if o.verdict is Verdict.REFUTED and o.name in forbidden:
            return False  # WRONG_FIELD whatever follows: the cell says all of it
        seen.add(o.name)
        return o.verdict is Verdict.REFUTED and o.name in wanted and forbidden <= seen

    return enough


def _group(jobs: list[tuple[str, str, int, int]]) -> list[CellResult]:
    """Check the cells of one group (in a worker of :func:`equiv.engine.runner.run_groups`),
    each stopped once its bug is caught (:func:`caught`)."""
    return [check_cell(path, bound, resolve(BASE, name), name, timeout_ms=timeout_ms,
                       enough=caught(MUTANTS[name], path), first=first(MUTANTS[name], path))
            for name, path, bound, timeout_ms in jobs]


def first(m: Mutant, path: str) -> tuple[str, ...]:
    """The obligations a cell of ``m`` on ``path`` decides first: those it must not report,
    then those of which one must be refuted (so :func:`caught` can stop it soon: on
    ioremap, M2 is refuted on ``terminates`` at once, where ``e_trans`` takes its whole
    budget to end UNKNOWN).  Nothing where it must not show: the cell is checked whole,
    in the report's order."""
    want = m.expected(path)
    return () if want is None or m.equivalent else (*m.not_reported, *want)


def _stopped(job: tuple[str, str, int, int], seconds: float, why: str) -> CellResult:
    name, path, bound, _ = job
    return stopped_cell(path, bound, BASE, name, seconds, why)


def self_test(
    jobs: int | None = None,
    *,
    names: list[str] | None = None,
    cells: tuple[tuple[str, int], ...] = CELLS,
    timeout_ms: int = 60_000,
) -> SelfTestResult:
    """Run the mutation self-test.

    Args:
        jobs: worker processes (default: all cores); 1 runs in this process.
        names: the mutants to run (default: all, in catalogue order).
        cells: the (path, bound) cells to check each mutant on.
        timeout_ms: time limit of each query.

    Raises:
        InputError: an unknown mutant name.
    """
    chosen = list(MUTANTS) if names is None else list(names)
    mutants = lookup_all(MUTANTS, chosen, "vmap mutant")
    work = [(n, p, b, timeout_ms) for n in chosen for p, b in cells]
    jobs = max(1, jobs or os.cpu_count() or 1)
    t0 = time.perf_counter()
    done: list[CellResult | None] = [None] * len(work)

    def finish(idx: list[int], res: list[CellResult]) -> None:
        for i, r in zip(idx, res, strict=True):
            done[i] = r

    run_groups(work, [[i] for i in range(len(work))], _group, _stopped, finish, jobs=jobs)
    results = [r for r in done if r is not None]
    wall = time.perf_counter() - t0
    rows: list[MutantRow] = []
    it = iter(results)
    for n, m in zip(chosen, mutants, strict=True):
        outs = []
        for p, b in cells:
            res = next(it)
            outcome, reported = classify(m, p, res)
            outs.append(
                CellOutcome(
                    p,
                    b,
                    outcome,
                    res.verdict,
                    m.expected(p),
                    reported,
                    res.seconds,
                )
            )
        rows.append(MutantRow(f"{m.label} {n}", "arm64-4k", m.equivalent, tuple(outs)))
    return SelfTestResult(cells, tuple(rows), wall, jobs)


__all__ = ["BASE", "CELLS", "COLD_CPU_SECONDS", "caught", "classify", "estimate", "first",
           "self_test"]

"""Mutation self-test: run every seeded-bug control of :data:`equiv.zone_device.mutants.MUTANTS` and
score the checker on it.

Each mutant is checked on its own preset, revision v11, on a few (type, order) cells (order 0
and 1: no template tail loop; order 2: every page role; order 9: the deduplicated vmemmap on
64-byte struct pages).  A cell is classified against the mutant's ``expect`` as
:mod:`equiv.engine.selftest` describes (killed, wrong-field, survived, not-applicable, ok,
false-report); a bug mutant is killed if it is killed on at least one cell and survives on
none.  Returns data; it prints nothing (:func:`equiv.report.render_selftest` renders it).
"""

from __future__ import annotations

from collections.abc import Iterable

from equiv.engine.cache import Cache
from equiv.engine.errors import lookup_all
from equiv.engine.results import CellResult
from equiv.engine.selftest import CellOutcome, MutantRow, Outcome, SelfTestResult
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.zone_device.cell import CellSpec, run_matrix
from equiv.zone_device.counterexample import counterexample_of
from equiv.zone_device.mutants import MUTANTS, caught, is_equivalent, names_page
from equiv.zone_device.names import DEFAULT_REVISION

#: the (type, order) cells every mutant is checked on
CELLS: tuple[tuple[MemoryType, int], ...] = (
    (MemoryType.GENERIC, 0), (MemoryType.GENERIC, 1), (MemoryType.FS_DAX, 2),
    (MemoryType.GENERIC, 2), (MemoryType.PRIVATE, 9))


def classify(expected: tuple[str, ...] | None, equivalent: bool,
             res: CellResult, page: str | None = None) -> tuple[Outcome, tuple[str, ...]]:
    """The outcome of one cell, and the field names its counterexamples report.  With
    ``page``, a kill must also name that struct page outside the range (a counterexample of
    the ``outside`` role at that pfn)."""
    cxs = [cx for o in res.obligations if (cx := counterexample_of(o)) is not None]
    # a part of a field (memcg_data[4..7]) counts as the field
    reported = tuple(sorted({n for cx in cxs for d in cx.diffs for n in d.fields}))
    if expected is None:
        if res.verdict is not Verdict.PROVED:
            return Outcome.FALSE_REPORT, reported
        return (Outcome.OK if equivalent else Outcome.NOT_APPLICABLE), reported
    if res.verdict is not Verdict.REFUTED:
        return Outcome.SURVIVED, reported
    if page is not None and not any(names_page(cx, page) for cx in cxs):
        return Outcome.WRONG_FIELD, reported
    return (Outcome.KILLED if set(expected) & set(reported) else Outcome.WRONG_FIELD), reported


def specs(names: Iterable[str] | None = None,
          cells: Iterable[tuple[MemoryType, int]] = CELLS) -> list[CellSpec]:
    """The self-test's cells: each mutant of ``names`` (default: all) on each of ``cells``,
    mutant by mutant.

    Raises:
        InputError: an unknown mutant name.
    """
    chosen = list(MUTANTS) if names is None else list(names)
    mutants = lookup_all(MUTANTS, chosen, "mutant")
    cell_list = tuple(cells)
    return [CellSpec(config=m.config, revision=DEFAULT_REVISION, ptype=t, order=o, mutant=n,
                     minimise=False, until_caught=True)
            for n, m in zip(chosen, mutants, strict=True) for t, o in cell_list]


def self_test(jobs: int | None = None, *, names: Iterable[str] | None = None,
              cells: Iterable[tuple[MemoryType, int]] = CELLS,
              cache: Cache | None = None) -> SelfTestResult:
    """Run the mutation self-test.

    Args:
        jobs: worker processes (default: all cores).
        names: the mutants to run (default: the whole catalogue, in catalogue order).
        cells: the (type, order) cells to check each mutant on.
        cache: the result cache (:mod:`equiv.engine.cache`), or None: each cell is looked
            up and stored like a proof cell, keyed by its description (the mutant's edit
            included) and the tool's source fingerprint, and used only when every query
            answer it rests on is cached too.

    Raises:
        InputError: an unknown mutant name.
    """
    chosen = list(MUTANTS) if names is None else list(names)
    cell_list = tuple(cells)
    results, wall, used = run_matrix(specs(chosen, cell_list), jobs, cache=cache)
    rows: list[MutantRow] = []
    it = iter(results)
    for n in chosen:
        m = MUTANTS[n]
        eq = is_equivalent(m)
        outs = []
        for t, o in cell_list:
            res = next(it)
            want = m.expect(t, o)
            outcome, reported = classify(want, eq, res, m.page if want is not None else None)
            outs.append(CellOutcome(t.name, o, outcome, res.verdict, want, reported, res.seconds))
        rows.append(MutantRow(n, m.config, eq, tuple(outs)))
    return SelfTestResult(tuple((t.name, o) for t, o in cell_list), tuple(rows), wall, used)


__all__ = ["CELLS", "CellOutcome", "MutantRow", "Outcome", "SelfTestResult", "caught",
           "classify", "is_equivalent", "names_page", "self_test", "specs"]

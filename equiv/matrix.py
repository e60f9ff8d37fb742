"""Running a matrix of cells, in worker processes, with deterministic result order."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed

import z3
from attrs import evolve, frozen

from equiv.check import CellResult, Verdict, check_cell, worst
from equiv.config import Config, preset
from equiv.memmap import MemoryType, Scenario
from equiv.mutants import MUTANTS
from equiv.obligations import FastFn, build_cell
from equiv.page_model import Layout
from equiv.slow_path import compound_info_has_mask
from equiv.slow_variants import comparison
from equiv.template_path import Revision, fast_path, revision

TOOL_VERSION = "0.1.0"


@frozen
class CellSpec:
    """One cell (picklable, so it can be sent to a worker process)."""

    config: Config | str  # a Config, or a preset name
    revision: str
    ptype: MemoryType | None  # None: one cell for every type (pgmap->type symbolic)
    order: int
    mutant: str | None = None
    timeout_ms: int = 60_000
    rlimit: int | None = None
    solver: str = "z3"
    dump_smt: str | None = None
    #: check only this page obligation (and the loop lemmas), e.g. ``tail1_equal``
    obligation: str | None = None
    #: explain counterexamples (irrelevant inputs, uniqueness); the self-test skips it
    minimise: bool = True


@frozen
class RunResult:
    """A whole run: what was asked, the environment, and every cell in matrix order."""

    config: Config
    revision: str
    mutant: str | None
    cells: tuple[CellResult, ...]
    wall_seconds: float
    jobs: int
    layout_note: str
    choices: tuple[str, ...]
    assumptions: tuple[str, ...]
    #: the budget options of the run, repeated in reproduce commands ("" for defaults)
    budget_args: str = ""
    #: how the configuration was chosen on the command line (for reproduce commands)
    config_arg: str = ""
    revision_summary: str = ""
    z3_version: str = z3.get_version_string()
    tool_version: str = TOOL_VERSION

    @property
    def verdict(self) -> Verdict:
        return worst([c.verdict for c in self.cells])


def cell_paths(spec: CellSpec) -> tuple[Scenario, Revision, FastFn]:
    """What a cell compares: its scenario, the revision (a seeded bug applied) and the fast
    path function (the slow path is always :func:`equiv.slow_path.memmap_init_zone_device`)."""
    cfg = spec.config if isinstance(spec.config, Config) else preset(spec.config)
    layout = Layout.from_config(cfg)
    rev, fast = resolve(spec.revision)
    if spec.mutant is not None:
        m = MUTANTS[spec.mutant]
        if m.compare is not None:  # a slow-path edit: edited slow path vs the base slow path
            rev, fast = resolve(COMPARE + m.compare)
        else:
            rev = m.apply(rev)
    return Scenario(layout, spec.ptype, spec.order), rev, fast or fast_path(rev)


def run_cell(spec: CellSpec) -> CellResult:
    """Build and check one cell (in whichever process calls it)."""
    sc, rev, fast = cell_paths(spec)
    t0 = time.perf_counter()
    problem = build_cell(sc, rev, fast)
    res = check_cell(problem, timeout_ms=spec.timeout_ms, rlimit=spec.rlimit, solver=spec.solver,
                     dump_smt=spec.dump_smt, only=spec.obligation, minimise=spec.minimise)
    # a cell's time includes running both paths symbolically, not only the solver
    return evolve(res, seconds=time.perf_counter() - t0)


COMPARE = "compare:"


def resolve(name: str) -> tuple[Revision, FastFn | None]:
    """A revision of the series, or ``compare:NAME``: a slow-path variant (refactor or older
    kernel, :mod:`equiv.slow_variants`) put in the fast path's place."""
    if not name.startswith(COMPARE):
        return revision(name), None
    cmp = comparison(name.removeprefix(COMPARE))
    rev = evolve(revision("v11"), name=name, summary=f"{cmp.summary} ({cmp.claim})",
                 assumptions=cmp.assumptions + tuple(f"known difference: {d}" for d in cmp.differences))
    return rev, cmp.path


def layout_note(cfg: Config) -> str:
    """One line describing the struct page layout a config gives."""
    L = Layout.from_config(cfg)
    enc = "order mask" if compound_info_has_mask(L) else "head | 1"
    fl = L.flags
    fields = ", ".join(f"{f.name} {f.pgshift}+{f.width}" for f in fl.fields if f.width)
    return (f"struct page {L.size} bytes; NR_PAGEFLAGS {fl.nr_pageflags}; flags: {fields}; "
            f"compound_info: {enc}")


def run_group(specs: list[CellSpec]) -> list[CellResult]:
    """Run the cells of one (config, revision, mutant, order), which differ only in the type.

    First one proof with ``pgmap->type`` symbolic (any of the five types): if it proves
    everything, it proves every type's cell.  Otherwise each type is checked alone, so
    verdicts and counterexamples are per type (cells that pose the same query, e.g. FS_DAX and
    PRIVATE, then share the answer: see ``equiv.check._ANSWERS``).
    """
    if len(specs) > 1:
        shared = run_cell(evolve(specs[0], ptype=None))
        if shared.verdict is Verdict.PROVED:
            return [evolve(shared, ptype=s.ptype.kname if s.ptype else "ALL", all_types=True)
                    for s in specs]
    return [run_cell(s) for s in specs]


def run_matrix(specs: list[CellSpec], jobs: int | None = None,
               on_done: Callable[[int], None] | None = None) -> tuple[list[CellResult], float, int]:
    """Run ``specs`` with ``jobs`` worker processes (default: all cores); results in order.

    The cells of one (config, revision, mutant, order) go to the same worker.  Groups finish
    in any order; the results are always in the order of ``specs``.

    Args:
        specs: the cells to run.
        jobs: worker processes (default: all cores); 1 runs everything in this process.
        on_done: called in this process with the number of cells of each group as that group
            finishes (e.g. to advance a progress display).

    Returns:
        The cell results in the order of ``specs``, the wall time in seconds, and the number
        of jobs used.
    """
    jobs = max(1, jobs or os.cpu_count() or 1)
    t0 = time.perf_counter()
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, sp in enumerate(specs):
        cfg = sp.config if isinstance(sp.config, str) else sp.config.name
        groups.setdefault((cfg, sp.revision, sp.mutant, sp.order), []).append(i)
    indices = list(groups.values())
    results: list[CellResult | None] = [None] * len(specs)

    def finish(idx: list[int], res: list[CellResult]) -> None:
        for i, r in zip(idx, res, strict=True):
            results[i] = r
        if on_done is not None:
            on_done(len(idx))

    if jobs == 1 or len(indices) == 1:
        for idx in indices:
            finish(idx, run_group([specs[i] for i in idx]))
    else:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures: dict[Future[list[CellResult]], list[int]] = {
                pool.submit(run_group, [specs[i] for i in idx]): idx for idx in indices}
            try:
                for fut in as_completed(futures):
                    finish(futures[fut], fut.result())
            except BaseException:  # a failed group or ^C: do not start the groups still queued
                for fut in futures:
                    fut.cancel()
                raise
    return [r for r in results if r is not None], time.perf_counter() - t0, jobs

"""Running a matrix of cells: in worker processes or on a Dask cluster, through the result
cache, with a wall-clock backstop, and always with deterministic result order."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures import as_completed
from typing import TypeVar

import z3
from attrs import asdict, evolve, frozen

from equiv.cache import TOOL_VERSION, Cache, cell_key
from equiv.check import CellResult, ObligationResult, Verdict, check_cell, worst
from equiv.config import Config, preset
from equiv.errors import InputError
from equiv.memmap import MemoryType, Scenario
from equiv.mutants import MUTANTS
from equiv.obligations import FastFn, build_cell
from equiv.page_model import Layout
from equiv.slow_path import compound_info_has_mask
from equiv.slow_variants import comparison
from equiv.template_path import Revision, fast_path, revision

S = TypeVar("S")  # a cell's description, whatever the subject


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
    #: directory of the result cache (:mod:`equiv.cache`), or None for no cache
    cache_dir: str | None = None

    def description(self) -> dict[str, object]:
        """What the cell's result depends on, for its cache key: the configuration's every
        field, the revision, type, order, seeded bug, obligation filter, solver and the
        deterministic resource budget.  (The wall-clock timeout is not part of it: it only
        decides whether an answer is UNKNOWN, which is never cached.)"""
        cfg = self.config if isinstance(self.config, Config) else preset(self.config)
        return {"config": asdict(cfg), "revision": self.revision,
                "ptype": None if self.ptype is None else self.ptype.name, "order": self.order,
                "mutant": self.mutant, "obligation": self.obligation, "minimise": self.minimise,
                "solver": self.solver, "rlimit": self.rlimit}


@frozen
class SubjectConfig:
    """What a report says about the configuration of a subject without kernel configs (the
    same attributes of :class:`~equiv.config.Config` the reports read)."""

    name: str
    description: str = ""
    assumed: tuple[str, ...] = ()
    hypothetical: bool = False
    tracks_events: bool = False


@frozen
class RunResult:
    """A whole run of one subject and configuration: what was asked, the environment, and
    every cell in matrix order.  The reports read only this (and the cells)."""

    config: Config | SubjectConfig
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
    #: the subject (:mod:`equiv.subjects`), and what its runs compare
    subject: str = "zone-device"
    title: str = "ZONE_DEVICE memmap init, slow path (v7.3-rc1) vs fast path"
    mutant_description: str = ""
    #: the matrix's columns and rows, and the options that select one of each
    column_label: str = "pgmap type"
    row_label: str = "order"
    column_option: str = "--types"
    row_option: str = "--orders"
    #: who decided the queries (``--solver``: z3, cvc5, bitwuzla or all)
    solver: str = "z3"
    #: where another subject's obligations are located in SARIF: the kernel file, and the
    #: function of each matrix column (zone-device locates each role itself, in mm/mm_init.c)
    kernel_file: str = "mm/mm_init.c"
    #: the kernel tree the locations refer to (SARIF's base directory)
    kernel_base: str = "v7.3-rc1 (the series' base)"
    column_functions: tuple[tuple[str, str], ...] = ()
    z3_version: str = z3.get_version_string()
    tool_version: str = TOOL_VERSION

    @property
    def solver_version(self) -> str:
        """The solver(s) with versions, as reports print them."""
        from equiv.solvers import version

        return version(self.solver)

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
                     dump_smt=spec.dump_smt, only=spec.obligation, minimise=spec.minimise,
                     cache=_cache(spec.cache_dir))
    # a cell's time includes running both paths symbolically, not only the solver
    return evolve(res, seconds=time.perf_counter() - t0)


_CACHES: dict[str, Cache] = {}


def _cache(directory: str | None) -> Cache | None:
    """This process's :class:`Cache` of ``directory`` (one per directory and process)."""
    if directory is None:
        return None
    if directory not in _CACHES:
        _CACHES[directory] = Cache(directory)
    return _CACHES[directory]


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


def backstop_cell(spec: CellSpec, seconds: float, why: str) -> CellResult:
    """The result of a cell whose worker was stopped: UNKNOWN, saying which limit."""
    cfg = spec.config if isinstance(spec.config, Config) else preset(spec.config)
    ob = ObligationResult("cell", "cell", "cell", Verdict.UNKNOWN, seconds, reason=why)
    return CellResult(cfg.name, spec.revision, spec.ptype.kname if spec.ptype else "ALL",
                      spec.order, Verdict.UNKNOWN, seconds, (ob,), (), (), cfg.hypothetical)


def _cached_cells(cache: Cache, specs: list[CellSpec]) -> list[CellResult] | None:
    """Every cell of a group from the cache, or None.  A cell entry counts only if every
    query answer it lists is in the cache too, and valid."""
    out = []
    for sp in specs:
        got = cache.get("cell", cell_key(sp.description()))
        if got is None:
            return None
        try:
            cell = CellResult.from_cache(got)
        except (KeyError, TypeError, ValueError):
            cache.problems.append(f"ignored a cache entry of another shape for {sp.description()}")
            return None
        answers = [cache.get("query", k) for k in cell.query_keys]
        if not answers or any(not isinstance(a, dict) or a.get("answer") not in ("sat", "unsat")
                              for a in answers):
            return None
        out.append(cell)
    return out


def run_matrix(specs: list[CellSpec], jobs: int | None = None,
               on_done: Callable[[int], None] | None = None, *, cache: Cache | None = None,
               backstop_s: float | None = None, scheduler: str | None = None
               ) -> tuple[list[CellResult], float, int]:
    """Run ``specs``; results in the order of ``specs`` whatever order groups finish in.

    The cells of one (config, revision, mutant, order) go to the same worker.

    Args:
        specs: the cells to run.
        jobs: worker processes (default: all cores); 1 runs everything in this process
            (unless a backstop is asked for).
        on_done: called in this process with the number of cells of each group as that group
            finishes (e.g. to advance a progress display).
        cache: the result cache: groups whose every cell is cached are not run; cells
            without an UNKNOWN obligation are stored after the run (by this process only).
            Workers look up and store single query answers in the same directory.
        backstop_s: wall-clock limit per group; a worker past it is killed and its cells
            are UNKNOWN, naming the limit (needs worker processes).
        scheduler: address of a Dask distributed scheduler to run the groups on instead of
            local workers (``pip install 'equiv[distributed]'``).

    Returns:
        The cell results in the order of ``specs``, the wall time in seconds, and the number
        of jobs used.
    """
    jobs = max(1, jobs or os.cpu_count() or 1)
    t0 = time.perf_counter()
    if cache is not None:
        specs = [evolve(sp, cache_dir=str(cache.root)) if sp.dump_smt is None else sp
                 for sp in specs]
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, sp in enumerate(specs):
        cfg = sp.config if isinstance(sp.config, str) else sp.config.name
        groups.setdefault((cfg, sp.revision, sp.mutant, sp.order), []).append(i)
    results: list[CellResult | None] = [None] * len(specs)

    def finish(idx: list[int], res: list[CellResult]) -> None:
        for i, r in zip(idx, res, strict=True):
            results[i] = r
            if cache is not None and not r.cached and specs[i].cache_dir is not None and \
                    all(o.verdict is not Verdict.UNKNOWN for o in r.obligations):
                cache.put("cell", cell_key(specs[i].description()), r.to_cache())
        if on_done is not None:
            on_done(len(idx))

    pending: list[list[int]] = []
    for idx in groups.values():
        hit = _cached_cells(cache, [specs[i] for i in idx]) if cache is not None else None
        if hit is None or any(specs[i].cache_dir is None for i in idx):
            pending.append(idx)
        else:
            finish(idx, hit)
    run_groups(specs, pending, run_group, backstop_cell, finish, jobs=jobs,
               backstop_s=backstop_s, scheduler=scheduler)
    return [r for r in results if r is not None], time.perf_counter() - t0, jobs


def run_groups(specs: Sequence[S], pending: list[list[int]],
               group: Callable[[list[S]], list[CellResult]],
               stopped: Callable[[S, float, str], CellResult],
               finish: Callable[[list[int], list[CellResult]], None], *, jobs: int,
               backstop_s: float | None = None, scheduler: str | None = None) -> None:
    """Run groups of cells of any subject: here, in local workers, or on a Dask cluster.

    Args:
        specs: every cell's description (anything ``group`` takes; picklable for workers).
        pending: the groups to run, as index lists into ``specs``.
        group: runs one group's cells (in a worker), results in the group's order.
        stopped: the result of a cell whose worker was killed at the backstop.
        finish: called in this process with each group's indices and results.
        jobs: worker processes; one job (or one group) without a backstop runs here.
        backstop_s: wall-clock limit per group (needs worker processes).
        scheduler: a Dask distributed scheduler's address.
    """
    if scheduler is not None:
        _run_dask(scheduler, specs, pending, finish, group)
    elif (jobs == 1 or len(pending) == 1) and backstop_s is None:
        for idx in pending:
            finish(idx, group([specs[i] for i in idx]))
    elif pending:
        _run_pool(specs, pending, finish, jobs, backstop_s, group, stopped)


def _run_pool(specs: Sequence[S], pending: list[list[int]],
              finish: Callable[[list[int], list[CellResult]], None], jobs: int,
              backstop_s: float | None, group: Callable[[list[S]], list[CellResult]],
              stopped: Callable[[S, float, str], CellResult]) -> None:
    """Local worker processes (pebble: a worker past its group's backstop is killed)."""
    from pebble import ProcessPool

    ctx = multiprocessing.get_context("fork")
    with ProcessPool(max_workers=min(jobs, len(pending)), context=ctx) as pool:
        futures = {pool.schedule(group, args=([specs[i] for i in idx],),
                                 timeout=backstop_s): idx for idx in pending}
        try:
            for fut in as_completed(futures):
                idx = futures[fut]
                try:
                    res = fut.result()
                except FuturesTimeout:
                    why = (f"wall-clock backstop reached ({backstop_s:g} s per group): the "
                           "worker was killed")
                    res = [stopped(specs[i], backstop_s or 0.0, why) for i in idx]
                finish(idx, res)
        except BaseException:  # a failed group or ^C: do not start the groups still queued
            for fut in futures:
                fut.cancel()
            raise


def _run_dask(address: str, specs: Sequence[S], pending: list[list[int]],
              finish: Callable[[list[int], list[CellResult]], None],
              group: Callable[[list[S]], list[CellResult]]) -> None:
    """The groups as tasks on a Dask distributed cluster; results come back to this process
    (which alone writes cell entries to the cache)."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise InputError("--scheduler needs the distributed extra: pip install "
                         "'equiv[distributed]'") from None
    try:
        client = Client(address, timeout="10s")
    except OSError as e:
        raise InputError(f"cannot reach the Dask scheduler at {address!r}: {e}") from None
    try:
        futures = {client.submit(group, [specs[i] for i in idx], pure=False): tuple(idx)
                   for idx in pending}
        for fut in dask_completed(list(futures)):
            finish(list(futures[fut]), fut.result())
    finally:
        client.close()

"""Running a matrix of cells, in worker processes, with deterministic result order."""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

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
from equiv.template_path import Revision, revision

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


def run_cell(spec: CellSpec) -> CellResult:
    """Build and check one cell (in whichever process calls it)."""
    cfg = spec.config if isinstance(spec.config, Config) else preset(spec.config)
    layout = Layout.from_config(cfg)
    rev, fast = resolve(spec.revision)
    if spec.mutant is not None:
        m = MUTANTS[spec.mutant]
        if m.compare is not None:  # a slow-path edit: edited slow path vs the base slow path
            rev, fast = resolve(COMPARE + m.compare)
        else:
            rev = m.apply(rev)
    t0 = time.perf_counter()
    problem = build_cell(Scenario(layout, spec.ptype, spec.order), rev, fast)
    res = check_cell(problem, timeout_ms=spec.timeout_ms, rlimit=spec.rlimit, solver=spec.solver,
                     dump_smt=spec.dump_smt)
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


def run_matrix(specs: list[CellSpec], jobs: int | None = None) -> tuple[list[CellResult], float, int]:
    """Run ``specs`` with ``jobs`` worker processes (default: all cores); results in order.

    The cells of one (config, revision, mutant, order) go to the same worker.
    """
    jobs = max(1, jobs or os.cpu_count() or 1)
    t0 = time.perf_counter()
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, sp in enumerate(specs):
        cfg = sp.config if isinstance(sp.config, str) else sp.config.name
        groups.setdefault((cfg, sp.revision, sp.mutant, sp.order), []).append(i)
    batches = [[specs[i] for i in idx] for idx in groups.values()]
    if jobs == 1 or len(batches) == 1:
        done = [run_group(b) for b in batches]
    else:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            done = list(pool.map(run_group, batches, chunksize=1))
    results: list[CellResult | None] = [None] * len(specs)
    for idx, res in zip(groups.values(), done, strict=True):
        for i, r in zip(idx, res, strict=True):
            results[i] = r
    return [r for r in results if r is not None], time.perf_counter() - t0, jobs

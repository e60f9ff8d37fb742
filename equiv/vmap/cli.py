"""The vmap subject's front: its options, its proof runs and its registration
(:data:`SUBJECT`, named in :mod:`equiv.subjects`).  The model is :mod:`equiv.vmap`; this
module only turns parsed options into cells (:class:`VmapCellSpec`, checked by
:func:`equiv.vmap.cell`) and :class:`~equiv.engine.results.RunResult` runs.  Importing it
loads no model (only :mod:`equiv.vmap.names`); the functions below import what they run.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any, TextIO

from attrs import evolve, frozen

from equiv.engine.errors import InputError, lookup, parse_ranges
from equiv.engine.results import CellResult, RunResult, SubjectConfig
from equiv.engine.selftest import SelfTestResult
from equiv.engine.subject import RunContext, Subject
from equiv.engine.verdict import worst
from equiv.vmap.names import ANY, PATHS, TRYLOCKS, is_any

#: the options only this subject has, with their defaults (other subjects refuse them)
OWN_OPTIONS: dict[str, object] = {"paths": "all", "bounds": None, "trylock": None}
#: bounds (maximal number of segments of the page array) of a default run, and the range of
#: the numbers; ``any`` (:data:`~equiv.vmap.names.ANY`): any number of segments
DEFAULT_BOUNDS = (1, 2, ANY)
MIN_BOUND, MAX_BOUND = 1, 32
#: the --solver choices, the default first: Bitwuzla decides this subject's bit-vector
#: queries in seconds where z3 takes minutes (bench/vmap.py)
SOLVERS = ("bitwuzla", "z3")

__all__ = ["OWN_OPTIONS", "SOLVERS", "SUBJECT", "VmapCellSpec", "add_arguments", "list_lines",
           "runs", "self_test", "self_test_notice", "special"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The vmap options."""
    g = p.add_argument_group("vmap subject (--subject vmap)")
    g.add_argument(
        "--paths", default="all", help=f"mapping paths: {', '.join(PATHS)} (comma list) or all"
    )
    g.add_argument(
        "--bounds",
        default=None,
        metavar="N|N-M|any|LIST",
        help="the bound of each cell: the maximal number of physically "
        "contiguous segments of the page array, or any (any number: pages[] of any length "
        f"and shape; see --list; default {_fmt(DEFAULT_BOUNDS)})",
    )
    g.add_argument(
        "--trylock",
        default=None,
        metavar="|".join(TRYLOCKS),
        help="POST-C1's mmap_read_trylock(&init_mm) before freeing a present page table: "
        "succeeds (default: no concurrent ptdump) or oracle (may fail per table slot, "
        "then the fast path maps that slot one level down)",
    )


def _fmt(bounds: tuple[int, ...]) -> str:
    return ",".join(map(str, bounds))  # ANY prints as "any"


def _paths(spec: str) -> list[str]:
    if spec == "all":
        return list(PATHS)
    out = []
    for name in spec.split(","):
        if name.strip() not in PATHS:
            raise InputError(f"unknown path {name.strip()!r}; valid: {', '.join(PATHS)}, all")
        out.append(name.strip())
    return list(dict.fromkeys(out))


def _bounds(spec: str | None) -> list[int]:
    if spec is None:
        return list(DEFAULT_BOUNDS)
    parts = [p.strip() for p in spec.split(",")]
    numbers = ",".join(p for p in parts if p != "any")
    out = parse_ranges(numbers, MIN_BOUND, MAX_BOUND, "--bounds", "bound", words=("any",)) if numbers else []
    return out + ([ANY] if "any" in parts else [])


def list_lines() -> list[str]:
    """``--list`` for this subject."""
    from equiv import vmap

    out = ["revisions:"]
    out += [f"  {name}: {rev.summary}" for name, rev in vmap.REVISIONS.items()]
    out.append("paths: " + ", ".join(PATHS))
    out.append(
        f"bounds (--bounds B, {MIN_BOUND}..{MAX_BOUND} or any; default {_fmt(DEFAULT_BOUNDS)}): "
        f"B = {vmap.bound_description(None)}; any = {vmap.bound_description(ANY)}"
    )
    out.append("obligations (--obligation): " + ", ".join(vmap.OBLIGATIONS))
    out.append("mutants (seeded-bug controls):")
    out += [f"  {name} ({m.label}): {m.description}" for name, m in vmap.MUTANTS.items()]
    return out


def special(args: argparse.Namespace, err: TextIO, emit: Callable[[str], None]) -> int | None:
    """No modes besides the proof matrix."""
    return None


def self_test(jobs: int | None) -> SelfTestResult:
    """The seeded-bug controls M1-M8 and X1-X6 (:func:`equiv.vmap.self_test`)."""
    from equiv import vmap

    return vmap.self_test(jobs)


def self_test_notice(jobs: int, cache: object, err: TextIO) -> None:
    """The self-test's estimate, printed if it will take minutes (it is never cached, so
    ``cache`` does not change it)."""
    from equiv.report.progress import announce
    from equiv.vmap.selftest import estimate

    announce(estimate(jobs), jobs, err)


@frozen(kw_only=True)
class VmapCellSpec:
    """One cell of a vmap run (picklable, so it can be sent to a worker process)."""

    path: str
    bound: int
    revision: str
    mutant: str | None
    timeout_ms: int
    rlimit: int | None
    #: check only this obligation (and the lemmas it rests on)
    obligation: str | None
    solver: str
    #: the named trylock choice, or None for the revision's default
    trylock: str | None

    def description(self) -> dict[str, object]:
        """What the cell's cached result is keyed by (with the tool's source fingerprint)."""
        from equiv.engine.solvers import version

        return {"subject": "vmap", "path": self.path, "bound": self.bound,
                "revision": self.revision, "mutant": self.mutant, "timeout_ms": self.timeout_ms,
                "rlimit": self.rlimit, "obligation": self.obligation,
                "solver": version(self.solver), "trylock": self.trylock}


def _cell(spec: VmapCellSpec) -> CellResult:
    from equiv import vmap

    res = vmap.check(spec.path, spec.bound, spec.revision, spec.mutant, spec.timeout_ms,
                     spec.rlimit, spec.solver, spec.trylock)
    if spec.obligation is not None:  # the obligation and the lemmas it rests on
        kept = tuple(o for o in res.obligations if o.name == spec.obligation or o.kind == "lemma")
        res = evolve(res, obligations=kept, verdict=worst(o.verdict for o in kept))
    return res


def _load(spec: VmapCellSpec, payload: dict[str, Any]) -> CellResult:
    """A cached cell, its counterexamples replayed again."""
    from equiv.vmap.cell import load_counterexample, resolve

    rev = resolve(spec.revision, spec.mutant, spec.trylock)
    res = CellResult.from_cache(payload, load_counterexample(rev, spec.mutant))
    return evolve(res, order=spec.bound) if is_any(spec.bound) else res  # prints as "any" again


def _group(specs: list[VmapCellSpec]) -> list[CellResult]:
    """The cells of one group, in a worker (:func:`equiv.engine.runner.run_groups`)."""
    return [_cell(sp) for sp in specs]


def _stopped(spec: VmapCellSpec, seconds: float, why: str) -> CellResult:
    """A cell whose worker was killed at the backstop (:func:`~equiv.vmap.cell.stopped_cell`)."""
    from equiv.vmap.cell import stopped_cell

    return stopped_cell(spec.path, spec.bound, spec.revision, spec.mutant, seconds, why)


def runs(args: argparse.Namespace, ctx: RunContext) -> list[RunResult]:
    """The vmap matrix (path x bound) the options ask for: one run."""
    from equiv import vmap
    from equiv.engine.runner import run_cached
    from equiv.report.progress import progress
    from equiv.vmap.present import PRESENTER

    rev = lookup(vmap.REVISIONS, args.revision or vmap.DEFAULT_REVISION, "vmap revision")
    if args.mutant is not None:
        lookup(vmap.MUTANTS, args.mutant, "vmap mutant")
    if args.obligation is not None:
        lookup(vmap.OBLIGATIONS, args.obligation, "vmap obligation")
    paths, bounds = _paths(args.paths), _bounds(args.bounds)
    solver = args.solver or SOLVERS[0]
    if args.trylock is not None:
        lookup(dict.fromkeys(TRYLOCKS), args.trylock, "--trylock choice")
    specs = [VmapCellSpec(path=p, bound=b, revision=rev.name, mutant=args.mutant,
                          timeout_ms=args.timeout_ms, rlimit=args.rlimit,
                          obligation=args.obligation, solver=solver, trylock=args.trylock)
             for b in bounds for p in paths]
    jobs = min(max(1, args.jobs or os.cpu_count() or 1), len(specs))
    with progress(len(specs), ctx.err, enabled=not ctx.quiet) as advance:
        cells, wall = run_cached(specs, [[i] for i in range(len(specs))], group=_group,
                                 stopped=_stopped, describe=VmapCellSpec.description,
                                 load=_load, cache=ctx.cache, jobs=jobs, on_done=advance,
                                 backstop_s=args.backstop_s, scheduler=args.scheduler)
    cfg = SubjectConfig(
        name=vmap.CONFIG,
        description="arm64, 4K granule: CONT_PTE 16 x 4K, PMD 2M, PUD 1G "
        "(arch/arm64 pgtable-hwdef.h; docs/model.md)",
    )
    return [
        RunResult(
            subject="vmap",
            presenter=PRESENTER,
            config=cfg,
            revision=rev.name,
            mutant=args.mutant,
            cells=tuple(cells),
            wall_seconds=wall,
            jobs=jobs,
            layout_note=_layout_note(tuple(bounds)),
            choices=next((c.choices for c in cells if c.choices), tuple(rev.choices)),
            budget_args=ctx.budget_args,
            assumptions=_assumptions(cells),
            revision_summary=rev.summary,
            mutant_description=vmap.MUTANTS[args.mutant].description if args.mutant else "",
            config_arg="--subject vmap" + (f" --trylock {args.trylock}" if args.trylock else ""),
            title="vmap/vmalloc/ioremap page tables (arm64 4K), per-page slow path vs batched fast path",
            column_label="path",
            row_label="bound",
            column_option="--paths",
            row_option="--bounds",
            solver=solver,
            kernel_base="the 2026 mm tree the vmalloc series applies to (BASE-C, 00cc00cd1fb6)",
        )
    ]


def _assumptions(cells: list[CellResult]) -> tuple[str, ...]:
    """The first cell's assumptions, then what a cell of any number of segments assumes
    besides (the shape of its page array)."""
    first = next((c.assumptions for c in cells if c.assumptions), ())
    extra = (a for c in cells if is_any(c.order) for a in c.assumptions if a not in first)
    return tuple(dict.fromkeys((*first, *extra)))


def _layout_note(bounds: tuple[int, ...]) -> str:
    """What the run's bounds mean, for the report's header."""
    from equiv import vmap

    finite = tuple(b for b in bounds if not is_any(b))
    parts = [f"bound B = {_fmt(finite)}: " + vmap.bound_description(None)] if finite else []
    if len(finite) < len(bounds):
        parts.append("bound any: " + vmap.bound_description(ANY))
    return "; ".join(parts)


SUBJECT = Subject(
    name="vmap",
    summary="batched vmap/vmalloc/ioremap page-table mapping (arm64 CONT_PTE / PMD) against "
            "the per-page and per-chunk paths",
    add_arguments=add_arguments, run=runs, self_test=self_test, list_lines=list_lines,
    special=special, own_options=OWN_OPTIONS, solvers=SOLVERS, rlimit_solvers=("z3",),
    self_test_notice=self_test_notice,
    choices="one configuration, arm64-4k; cells chosen by --paths, --bounds and --trylock",
    refuses={"dump_smt": "it writes a query to a file only when it comes out UNKNOWN (in "
                         "the cache's unknown/ directory, named in the report)"})

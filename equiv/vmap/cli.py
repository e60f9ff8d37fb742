"""The vmap subject on the command line: its options and its proof runs (registered in
:mod:`equiv.subjects`).  The model is :mod:`equiv.vmap`; this module only turns parsed
options into cells (:func:`equiv.vmap.check`) and :class:`~equiv.matrix.RunResult` runs."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any, TextIO

from attrs import evolve

from equiv import vmap
from equiv.cache import Cache, cell_key
from equiv.check import CellResult, Verdict, worst
from equiv.errors import InputError, lookup, parse_ranges
from equiv.matrix import RunResult, SubjectConfig, run_groups
from equiv.report.progress import progress
from equiv.solvers import version
from equiv.subjects import RunContext
from equiv.vmap.check import from_cache, resolve, stopped_cell, to_cache
from equiv.vmap.revisions import TRYLOCKS

#: the options only this subject has, with their defaults (other subjects refuse them)
OWN_OPTIONS: dict[str, object] = {"paths": "all", "bounds": None, "trylock": None}
#: bounds (maximal number of segments of the page array) of a default run, and the range
DEFAULT_BOUNDS = (1, 2)
MIN_BOUND, MAX_BOUND = 1, 32
#: the --solver choices, the default first: Bitwuzla decides this subject's bit-vector
#: queries in seconds where z3 takes minutes (bench/vmap.py)
SOLVERS = ("bitwuzla", "z3")

__all__ = ["OWN_OPTIONS", "add_arguments", "list_lines", "runs", "self_test", "special"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The vmap options."""
    g = p.add_argument_group("vmap subject (--subject vmap)")
    g.add_argument(
        "--paths", default="all", help=f"mapping paths: {', '.join(vmap.PATHS)} (comma list) or all"
    )
    g.add_argument(
        "--bounds",
        default=None,
        metavar="N|N-M|LIST",
        help="the bound of each cell: the maximal number of physically "
        "contiguous segments of the page array (see --list; default "
        f"{_fmt(DEFAULT_BOUNDS)})",
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
    return ",".join(map(str, bounds))


def _paths(spec: str) -> list[str]:
    if spec == "all":
        return list(vmap.PATHS)
    out = []
    for name in spec.split(","):
        if name.strip() not in vmap.PATHS:
            raise InputError(f"unknown path {name.strip()!r}; valid: {', '.join(vmap.PATHS)}, all")
        out.append(name.strip())
    return list(dict.fromkeys(out))


def _bounds(spec: str | None) -> list[int]:
    if spec is None:
        return list(DEFAULT_BOUNDS)
    return parse_ranges(spec, MIN_BOUND, MAX_BOUND, "--bounds", "bound")


def list_lines() -> list[str]:
    """``--list`` for this subject."""
    out = ["revisions:"]
    out += [f"  {name}: {rev.summary}" for name, rev in vmap.REVISIONS.items()]
    out.append("paths: " + ", ".join(vmap.PATHS))
    out.append(
        f"bounds (--bounds B, {MIN_BOUND}..{MAX_BOUND}; default {_fmt(DEFAULT_BOUNDS)}): "
        f"B = {vmap.bound_description(None)}"
    )
    out.append("obligations (--obligation): " + ", ".join(vmap.OBLIGATIONS))
    out.append("mutants (seeded-bug controls):")
    out += [f"  {name} ({m.label}): {m.description}" for name, m in vmap.MUTANTS.items()]
    return out


def special(args: argparse.Namespace, out: TextIO, emit: Callable[[str], None]) -> int | None:
    """No modes besides the proof matrix."""
    return None


def self_test(jobs: int | None) -> Any:
    """The seeded-bug controls M1-M8 and X1-X6 (:func:`equiv.vmap.self_test`)."""
    return vmap.self_test(jobs)


#: one cell: path, bound, revision, mutant, timeout (ms), rlimit, obligation filter, solver,
#: trylock choice
Job = tuple[str, int, str, str | None, int, int | None, str | None, str, str | None]


def _cell(job: Job) -> CellResult:
    path, bound, rev, mutant, timeout_ms, rlimit, obligation, solver, trylock = job
    res = vmap.check(path, bound, rev, mutant, timeout_ms, rlimit, solver, trylock)
    if obligation is not None:  # the obligation and the lemmas it rests on
        kept = tuple(o for o in res.obligations if o.name == obligation or o.kind == "lemma")
        res = evolve(res, obligations=kept, verdict=worst([o.verdict for o in kept]))
    return res


def _description(job: Job) -> dict[str, object]:
    """What a cell's cached result is keyed by (with the tool's source fingerprint)."""
    path, bound, rev, mutant, timeout_ms, rlimit, obligation, solver, trylock = job
    return {"subject": "vmap", "path": path, "bound": bound, "revision": rev, "mutant": mutant,
            "timeout_ms": timeout_ms, "rlimit": rlimit, "obligation": obligation,
            "solver": version(solver), "trylock": trylock}


def _cached(cache: Cache, job: Job) -> CellResult | None:
    """The cell from the cache, its counterexamples replayed again; None if absent or stale."""
    got = cache.get("cell", cell_key(_description(job)))
    if got is None:
        return None
    try:
        return from_cache(got, resolve(job[2], job[3], job[8]), job[3])
    except (KeyError, TypeError, ValueError) as e:
        cache.problems.append(f"ignored a vmap cell entry ({e})")
        return None


def _group(jobs: list[Job]) -> list[CellResult]:
    """The cells of one group, in a worker (:func:`equiv.matrix.run_groups`)."""
    return [_cell(j) for j in jobs]


def _stopped(job: Job, seconds: float, why: str) -> CellResult:
    """A cell whose worker was killed at the backstop (:func:`~equiv.vmap.check.stopped_cell`)."""
    path, bound, rev, mutant = job[:4]
    return stopped_cell(path, bound, rev, mutant, seconds, why)


def runs(args: argparse.Namespace, ctx: RunContext) -> list[RunResult]:
    """The vmap matrix (path x bound) the options ask for: one run."""
    rev = lookup(vmap.REVISIONS, args.revision or vmap.DEFAULT_REVISION, "vmap revision")
    if args.mutant is not None:
        lookup(vmap.MUTANTS, args.mutant, "vmap mutant")
    if args.obligation is not None:
        lookup(vmap.OBLIGATIONS, args.obligation, "vmap obligation")
    paths, bounds = _paths(args.paths), _bounds(args.bounds)
    solver = args.solver or SOLVERS[0]
    if args.trylock is not None:
        lookup(dict.fromkeys(TRYLOCKS), args.trylock, "--trylock choice")
    if args.dump_smt is not None:
        raise InputError("--dump-smt serves --subject zone-device; the vmap subject writes a "
                         "query to a file only when it comes out UNKNOWN (named in the report)")
    jobs_list = [
        (p, b, rev.name, args.mutant, args.timeout_ms, args.rlimit, args.obligation, solver,
         args.trylock)
        for b in bounds
        for p in paths
    ]
    jobs = min(max(1, args.jobs or os.cpu_count() or 1), len(jobs_list))
    t0 = time.perf_counter()
    results: list[CellResult | None] = [None] * len(jobs_list)
    cache = ctx.cache
    with progress(len(jobs_list), ctx.err, enabled=not ctx.quiet) as advance:

        def finish(idx: list[int], res: list[CellResult]) -> None:
            for i, r in zip(idx, res, strict=True):
                results[i] = r
                if cache is not None and not r.cached and \
                        all(o.verdict is not Verdict.UNKNOWN for o in r.obligations):
                    cache.put("cell", cell_key(_description(jobs_list[i])), to_cache(r))
            advance(len(idx))

        pending = []
        for i, job in enumerate(jobs_list):
            hit = _cached(cache, job) if cache is not None else None
            if hit is None:
                pending.append([i])
            else:
                finish([i], [hit])
        run_groups(jobs_list, pending, _group, _stopped, finish,
                   jobs=jobs, backstop_s=args.backstop_s, scheduler=args.scheduler)
    cells = [r for r in results if r is not None]
    wall = time.perf_counter() - t0
    cfg = SubjectConfig(
        vmap.CONFIG,
        "arm64, 4K granule: CONT_PTE 16 x 4K, PMD 2M, PUD 1G (../shared/reference/vmalloc.md section 1)",
    )
    return [
        RunResult(
            config=cfg,
            revision=rev.name,
            mutant=args.mutant,
            cells=tuple(cells),
            wall_seconds=wall,
            jobs=jobs,
            layout_note=f"bound B = {_fmt(tuple(bounds))}: " + vmap.bound_description(None),
            choices=next((c.choices for c in cells if c.choices), tuple(rev.choices)),
            budget_args=ctx.budget_args,
            assumptions=next((c.assumptions for c in cells if c.assumptions), ()),
            revision_summary=rev.summary,
            mutant_description=vmap.MUTANTS[args.mutant].description if args.mutant else "",
            subject="vmap",
            config_arg="--subject vmap" + (f" --trylock {args.trylock}" if args.trylock else ""),
            title="vmap/vmalloc/ioremap page tables (arm64 4K), per-page slow path vs batched fast path",
            column_label="path",
            row_label="bound",
            column_option="--paths",
            row_option="--bounds",
            solver=solver,
            kernel_file="mm/vmalloc.c",
            kernel_base="the 2026 mm tree the vmalloc series applies to (BASE-C, 00cc00cd1fb6)",
            column_functions=(("ioremap", "vmap_page_range"),
                              ("vmalloc", "__vmap_pages_range_noflush"),
                              ("vmap", "vmap_pages_range_batched")),
        )
    ]

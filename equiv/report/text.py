"""Plain-text report of a proof run: the matrix and reviewer-readable counterexamples."""

from __future__ import annotations

from typing import Any

from equiv.check import CellResult, ObligationResult, Verdict
from equiv.counterexample import Counterexample
from equiv.matrix import RunResult
from equiv.mutants import MUTANTS
from equiv.obligations import ROLES
from equiv.template_path import REVISIONS


def summary_line(run: RunResult) -> str:
    counts = {v: 0 for v in Verdict}
    for c in run.cells:
        counts[c.verdict] += 1
    nob = sum(len(c.obligations) for c in run.cells)
    parts = [f"{counts[v]} {v.value.lower()}" for v in Verdict if counts[v] or v is Verdict.PROVED]
    return f"{len(run.cells)} cells ({nob} obligations): " + ", ".join(parts)


def repro_command(run: RunResult, cell: CellResult) -> str:
    """A command line that re-runs exactly this cell."""
    ptype = cell.ptype.removeprefix("MEMORY_DEVICE_")
    cfg = run.config_arg or f"--config {run.config.name}"
    what = (f"--compare {run.revision.split(':')[1]}" if run.revision.startswith("compare:")
            else f"--revision {run.revision}")
    cmd = (f"python -m equiv.proofs {cfg} {what} "
           f"--types {ptype} --orders {cell.order}")
    return cmd + (f" --mutant {run.mutant}" if run.mutant else "") + run.budget_args


def render_text(run: RunResult, *, times: bool = True, verbose: bool = False) -> str:
    """The matrix (type x order) and every non-proved obligation in detail."""
    out: list[str] = []
    w = out.append
    head = f"equiv {run.tool_version} (z3 {run.z3_version})" if times else "equiv"
    if run.revision.startswith("compare:"):
        w(f"{head}: ZONE_DEVICE memmap init, slow path (v7.3-rc1) vs {run.revision.split(':')[1]}")
    else:
        w(f"{head}: ZONE_DEVICE memmap init, slow path (v7.3-rc1) vs fast path {run.revision}")
    hyp = " [HYPOTHETICAL: no ZONE_DEVICE kernel builds this]" if run.config.hypothetical else ""
    ev = " (+ page_ref_set events observed)" if run.config.tracks_events else ""
    w(f"config {run.config.name}{hyp}{ev}")
    if run.config.description:
        w(f"  {run.config.description}")
    w(f"  {run.layout_note}")
    for a in run.config.assumed:
        w(f"  assumed: {a}")
    summary = run.revision_summary or REVISIONS[run.revision].summary
    w(f"revision {run.revision}: {summary}")
    for ch in run.choices:
        w(f"  {ch}" if ch.startswith("known difference") else f"  choice: {ch}")
    if run.mutant:
        w(f"seeded bug {run.mutant}: {MUTANTS[run.mutant].description}")
    w("assumptions:")
    for a in run.assumptions:
        w(f"  - {a}")
    w("")
    types = list(dict.fromkeys(c.ptype for c in run.cells))
    orders = sorted({c.order for c in run.cells})
    by = {(c.ptype, c.order): c for c in run.cells}
    width = 17 if times else 9
    w("order  " + "".join(t.removeprefix("MEMORY_DEVICE_").ljust(width) for t in types).rstrip())
    for o in orders:
        row = []
        for t in types:
            c = by.get((t, o))
            mark = "=" if c is not None and c.all_types else \
                "*" if c is not None and c.shared_queries else " "
            cell = "-" if c is None else c.verdict.value + (f" {c.seconds:5.2f}s{mark}" if times else "")
            row.append(cell.ljust(width))
        w(f"{o:5d}  " + "".join(row).rstrip())
    w("")
    tail = f"  (wall {run.wall_seconds:.1f} s, {run.jobs} jobs)" if times else ""
    w(summary_line(run) + tail)
    if any(c.all_types for c in run.cells):
        w("= proved once for every pgmap type of the order (pgmap->type a symbolic input); "
          "the time is that proof's" if times else
          "cells proved once for every pgmap type of their order (pgmap->type symbolic)")
    if times and any(c.shared_queries and not c.all_types for c in run.cells):
        w("* some queries of the cell were the same formula as one already decided for another "
          "pgmap type (same refcount policy), and took its answer")
    for c in run.cells:
        bad = [ob for ob in c.obligations if ob.verdict is not Verdict.PROVED]
        if verbose or bad:
            w("")
            hyp = ", hypothetical" if run.config.hypothetical else ""
            w(f"{c.verdict.value}  {c.ptype} order {c.order} (config {run.config.name}{hyp}, "
              f"revision {run.revision}{', ' + run.mutant if run.mutant else ''})")
            for ob in (c.obligations if verbose else bad):
                _obligation(w, ob, times)
            if bad:
                w(f"  reproduce: {repro_command(run, c)}")
    return "\n".join(out) + "\n"


def _obligation(w: Any, ob: ObligationResult, times: bool) -> None:
    t = f" {ob.seconds:.3f}s" if times else ""
    role = ROLES.get(ob.role)
    desc = f" ({role.description})" if role else ""
    w(f"  {ob.verdict.value} {ob.name}{desc}{t}")
    if ob.reason:
        w(f"    {ob.reason}")
    if ob.coverage:
        w(f"    shown satisfiable first: {'; '.join(ob.coverage)}")
    if ob.counterexample is not None:
        for line in counterexample_lines(ob.counterexample):
            w("    " + line)


def counterexample_lines(cx: Counterexample) -> list[str]:
    """A replayed counterexample as report lines (no indentation): inputs, the page, and
    for each differing field its slow and fast values and provenance."""
    out: list[str] = []
    w = out.append
    inp = cx.inputs

    def h(name: str) -> str:
        v = inp[name]
        return str(v).lower() if isinstance(v, bool) else hex(v)

    altmap = (f"reserve={h('altmap_reserve')} free={h('altmap_free')}" if inp["altmap_valid"]
              else "none")
    w(f"inputs: start_pfn={h('start_pfn')} nr_pages={h('nr_pages')} nid={h('nid')} "
      f"pgmap={h('pgmap')}")
    w(f"        altmap: {altmap}; vmemmap_base={h('vmemmap_base')} "
      f"page_offset={h('page_offset')}")
    flags = [f"page_group_by_mobility_disabled={h('mobility_disabled')}"]
    if cx.early_sections:
        flags.append("early sections: " + ", ".join(
            f"{s:#x}={'yes' if e else 'no'}" for s, e in sorted(cx.early_sections.items())))
    w("        " + "; ".join(flags))
    if cx.pfn is None:
        w(f"pageblock {cx.index['b']:#x}")
    else:
        what = "head" if cx.index["t"] == 0 else f"tail {cx.index['t']}"
        w(f"page: compound {cx.index['c']}, {what} (pfn {cx.pfn:#x})")
        if cx.seed_pfn is not None:
            sh = cx.section_shift
            w(f"sections: this pfn {cx.pfn:#x} is in section {cx.pfn >> sh:#x}; the first head "
              f"{cx.seed_pfn:#x} (template seed) in section {cx.seed_pfn >> sh:#x}")
    w(f"{'field':38s} {'offset':>7s}  {'slow':18s}  fast")
    for d in cx.diffs:
        names = d.names[0] + (f" ({', '.join(d.names[1:])})" if len(d.names) > 1 else "")
        where = "events" if d.size == 0 else f"{d.offset}+{d.size}"
        w(f"{names:38s} {where:>7s}  {d.slow:#018x}  {d.fast:#018x}")
        w(f"    slow last written by: {'; '.join(d.slow_origin)}")
        w(f"    fast last written by: {'; '.join(d.fast_origin)}")
    w("replayed concretely through both paths: the difference reproduces")
    return out



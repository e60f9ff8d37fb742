"""Rendering results: the only module that formats output.  Checks return data; this turns a
:class:`~equiv.matrix.RunResult` into text (a matrix plus reviewer-readable counterexamples)
or JSON (one record per obligation).  ``times=False`` drops every volatile field (timings,
versions) so golden files can pin the format."""

from __future__ import annotations

import json
from typing import Any

from equiv.check import CellResult, ObligationResult, Verdict
from equiv.counterexample import Counterexample
from equiv.layout_check import LayoutReport
from equiv.matrix import RunResult
from equiv.memmap import MemoryType
from equiv.mutants import MUTANTS
from equiv.obligations import ROLES
from equiv.selftest import Outcome, SelfTestResult
from equiv.template_path import REVISIONS

JSON_SCHEMA = "equiv.proofs/1"
SUBJECT = "zone-device-memmap"


def _summary(run: RunResult) -> str:
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
    w(_summary(run) + tail)
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
        _counterexample(w, ob.counterexample)


def _counterexample(w: Any, cx: Counterexample) -> None:
    inp = cx.inputs

    def h(name: str) -> str:
        v = inp[name]
        return str(v).lower() if isinstance(v, bool) else hex(v)

    altmap = (f"reserve={h('altmap_reserve')} free={h('altmap_free')}" if inp["altmap_valid"]
              else "none")
    w(f"    inputs: start_pfn={h('start_pfn')} nr_pages={h('nr_pages')} nid={h('nid')} "
      f"pgmap={h('pgmap')}")
    w(f"            altmap: {altmap}; vmemmap_base={h('vmemmap_base')} "
      f"page_offset={h('page_offset')}")
    flags = [f"page_group_by_mobility_disabled={h('mobility_disabled')}"]
    if cx.early_sections:
        flags.append("early sections: " + ", ".join(
            f"{s:#x}={'yes' if e else 'no'}" for s, e in sorted(cx.early_sections.items())))
    w("            " + "; ".join(flags))
    if cx.pfn is None:
        w(f"    pageblock {cx.index['b']:#x}")
    else:
        what = "head" if cx.index["t"] == 0 else f"tail {cx.index['t']}"
        w(f"    page: compound {cx.index['c']}, {what} (pfn {cx.pfn:#x})")
        if cx.seed_pfn is not None:
            sh = cx.section_shift
            w(f"    sections: this pfn {cx.pfn:#x} is in section {cx.pfn >> sh:#x}; the first head "
              f"{cx.seed_pfn:#x} (template seed) in section {cx.seed_pfn >> sh:#x}")
    w(f"    {'field':38s} {'offset':>7s}  {'slow':18s}  fast")
    for d in cx.diffs:
        names = d.names[0] + (f" ({', '.join(d.names[1:])})" if len(d.names) > 1 else "")
        where = "events" if d.size == 0 else f"{d.offset}+{d.size}"
        w(f"    {names:38s} {where:>7s}  {d.slow:#018x}  {d.fast:#018x}")
        w(f"        slow last written by: {'; '.join(d.slow_origin)}")
        w(f"        fast last written by: {'; '.join(d.fast_origin)}")
    w("    replayed concretely through both paths: the difference reproduces")


def render_layout_text(rep: LayoutReport) -> str:
    """The BTF layout check as a table: model vs kernel offset and size, verdict per field."""
    out = [f"layout check: model config {rep.config} vs BTF {rep.btf}",
           f"{'struct':6s} {'field (model name)':40s} {'kernel name':22s} {'model':>9s} "
           f"{'kernel':>9s}  verdict"]
    for r in rep.rows:
        k = "-" if r.kernel_offset is None else f"{r.kernel_offset}+{r.kernel_size}"
        out.append(f"{r.struct:6s} {r.model_name:40s} {(r.kernel_name or '-'):22s} "
                   f"{f'{r.model_offset}+{r.model_size}':>9s} {k:>9s}  {r.verdict}")
    bad = [r for r in rep.rows if r.verdict != "MATCH"]
    if rep.unnamed:
        out.append("kernel views of struct page the model does not name (same bytes, other "
                   "union members): " + ", ".join(f"{m.path}@{m.offset}" for m in rep.unnamed))
    for m in rep.uncovered:
        out.append(f"UNCOVERED kernel field {m.path}@{m.offset}+{m.size}: beyond the model's "
                   "struct page")
    out.append(f"{len(rep.rows)} fields checked: {len(rep.rows) - len(bad)} match, "
               f"{len(bad)} differ" + (f", {len(rep.uncovered)} uncovered" if rep.uncovered else ""))
    return "\n".join(out) + "\n"


def render_layout_json(rep: LayoutReport) -> str:
    """The BTF layout check as JSON."""
    doc = {"schema": "equiv.layout/1", "config": rep.config, "btf": rep.btf, "ok": rep.ok,
           "fields": [{"struct": r.struct, "model_name": r.model_name,
                       "kernel_name": r.kernel_name, "model_offset": r.model_offset,
                       "model_size": r.model_size, "kernel_offset": r.kernel_offset,
                       "kernel_size": r.kernel_size, "verdict": r.verdict} for r in rep.rows],
           "unnamed_kernel_views": [m.path for m in rep.unnamed],
           "uncovered": [m.path for m in rep.uncovered]}
    return json.dumps(doc, indent=2) + "\n"


def selftest_summary(st: SelfTestResult) -> str:
    """The self-test's one-line summary."""
    n_bugs, n_killed = len(st.bugs), len(st.killed)
    clean = sum(not any(c.outcome is Outcome.FALSE_REPORT for c in r.cells)
                for r in st.controls)
    line = (f"self-test: {n_killed} mutants killed of {n_bugs} ({100 * st.kill_rate:.0f}%), "
            f"{clean} equivalent controls not reported "
            f"({st.count(Outcome.FALSE_REPORT)} false reports)")
    bad = [f"{n} {o.name.lower().replace('_', '-')}" for o in (Outcome.SURVIVED, Outcome.WRONG_FIELD)
           if (n := st.count(o))]
    if bad:
        line += f"; {', '.join(bad)} cells"
    return line + ("" if st.ok else "; FAILED")


def render_selftest(st: SelfTestResult) -> str:
    """The kill matrix (mutant rows x cell columns, one code per cell) and the summary."""
    heads = [f"{t.name}/{o}" for t, o in st.cells]
    name_w = max([len("mutant"), *(len(r.name) for r in st.rows)])
    widths = [max(len(h), len("FALSE")) for h in heads]
    cfg_w = max([len("config"), *(len(r.config) for r in st.rows)])

    def line(name: str, cells: list[str], cfg: str, status: str) -> str:
        mid = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        return f"{name.ljust(name_w)}  {mid}  {cfg.ljust(cfg_w)}  {status}".rstrip()

    out = [line("mutant", heads, "config", "result")]
    out += [line(r.name, [c.outcome.value for c in r.cells], r.config, r.status)
            for r in st.rows]
    fails = [(r, c) for r in st.rows for c in r.failures]
    if fails:
        out.append("")
        for r, c in fails:
            want = "PROVED" if c.expected is None else "one of " + ", ".join(c.expected)
            got = c.verdict.value + (f" on {', '.join(c.reported)}" if c.reported else "")
            out.append(f"{c.outcome.value} {r.name} {c.ptype.name}/{c.order}: "
                       f"expected {want}; got {got}")
    out.append("")
    out.append(selftest_summary(st))
    return "\n".join(out) + "\n"


def records(run: RunResult, *, times: bool = True) -> list[dict[str, Any]]:
    """One JSON record per obligation."""
    out = []
    for c in run.cells:
        for ob in c.obligations:
            rec = {
                "subject": SUBJECT, "revision": run.revision, "config": run.config.name,
                "hypothetical_config": run.config.hypothetical, "mutant": run.mutant,
                "pgmap_type": c.ptype, "order": c.order, **ob.to_json(),
            }
            if not times:
                rec.pop("seconds")
            out.append(rec)
    return out


def render_json_many(runs: list[RunResult], *, times: bool = True) -> str:
    """Several configurations: ``{"schema", "runs": [one run document per config]}``."""
    doc = {"schema": JSON_SCHEMA, "runs": [json.loads(render_json(r, times=times)) for r in runs]}
    return json.dumps(doc, indent=2) + "\n"


def render_json(run: RunResult, *, times: bool = True) -> str:
    """The whole run as JSON: header, per-cell verdicts and one record per obligation."""
    doc: dict[str, Any] = {
        "schema": JSON_SCHEMA,
        "subject": SUBJECT,
        "config": run.config.name,
        "hypothetical_config": run.config.hypothetical,
        "config_assumed": list(run.config.assumed),
        "layout": run.layout_note,
        "revision": run.revision,
        "choices": list(run.choices),
        "assumptions": list(run.assumptions),
        "mutant": run.mutant,
        "verdict": run.verdict.value,
        "summary": _summary(run),
        "cells": [{"pgmap_type": c.ptype, "order": c.order, "verdict": c.verdict.value,
                   "all_types_proof": c.all_types,
                   **({"seconds": round(c.seconds, 4), "shared_queries": c.shared_queries}
                      if times else {})} for c in run.cells],
        "records": records(run, times=times),
    }
    if times:
        doc.update(tool_version=run.tool_version, z3_version=run.z3_version,
                   wall_seconds=round(run.wall_seconds, 3), jobs=run.jobs)
    return json.dumps(doc, indent=2) + "\n"


__all__ = ["JSON_SCHEMA", "MemoryType", "records", "render_json", "render_text", "repro_command"]

"""Rendering of the zone-device source tooling, as text or JSON: ``--linux`` (the drift
report, the layout from clang and the source-derived proof; the drift report always comes
first, so a tree that moved away from the model says so before any proof result) and
``--btf`` (the layout check against a kernel's BTF, :mod:`equiv.zone_device.source.layout_check`)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

from equiv.memmap import INPUT_NAMES, SITES_VERSION, MemoryType
from equiv.report.text import WIDTH, fit, wrap
from equiv.zone_device.source.assumed import Located
from equiv.zone_device.source.cinterp import TRUSTED
from equiv.zone_device.source.drift import DriftReport
from equiv.zone_device.source.fidelity import FidelityRun
from equiv.zone_device.source.layout_check import LayoutReport
from equiv.zone_device.source.src_layout import SrcLayoutReport


def render_linux_text(drift: DriftReport, layout: SrcLayoutReport, run: FidelityRun | None,
                      *, times: bool = True) -> str:
    """The compiler-style text report of a ``--linux`` run."""
    out = [f"kernel tree {drift.tree} (version {drift.version}), model {drift.model}, "
           f"config {drift.config}"]
    out += [f"  {n}" for n in drift.kbuild]
    if drift.missing_files:
        out.append("missing files: " + ", ".join(drift.missing_files))
    out.append("drift (the tree's text against what the model mirrors):")
    width = max(len(r.name) for r in drift.rows) if drift.rows else 10
    for r in drift.rows:
        out.append(f"  {r.verdict:8} {r.name:{width}}  {r.where or '-'}")
        if r.verdict == "differs":
            out.append(f"           model: {r.model_stmt}")
            where = f"  ({r.where.split(':')[0]}:{r.tree_line})" if r.tree_line and r.where else ""
            out.append(f"           tree:  {r.tree_stmt}{where}")
    bad = [r for r in drift.rows if r.verdict != "matches"]
    if bad:
        out.append(f"DRIFT: the tree differs from the modelled {drift.model} in {len(bad)} of "
                   f"{len(drift.rows)} definitions; the proofs below are about the tree's text.")
    else:
        out.append(f"no drift: all {len(drift.rows)} modelled definitions match {drift.model}.")
    if drift.assumed_undefined:
        out.append("macros assumed undefined (not decided by the config model): "
                   + ", ".join(drift.assumed_undefined))
    nbad = sum(r.verdict != "matches" for r in layout.rows)
    out.append(f"layout from clang ({layout.where[0]}, {layout.where[1]}): sizeof(struct page) "
               f"model {layout.page_size[0]}, tree {layout.page_size[1]}; "
               f"{len(layout.rows) - nbad} of {len(layout.rows)} model views match")
    for lr in layout.rows:
        if lr.verdict != "matches":
            tree = f"@{lr.tree[0]} size {lr.tree[1]}" if lr.tree else "absent"
            out.append(f"  {lr.verdict:8} {lr.struct} {lr.view}: model @{lr.model[0]} size "
                       f"{lr.model[1]}, tree {tree}")
    if run is None:
        return fit("\n".join(out)) + "\n"
    out.append(f"source-derived proof: the tree's memmap_init_zone_device() interpreted vs the "
               f"hand-written {run.model}, loops summarised on both sides (any number of "
               "compounds), symbolic pfn, nid, pgmap, altmap and initial memory:")
    for c in run.cells:
        t = f"  {c.seconds:6.2f}s" if times else ""
        cls = f"  (one proof for orders {c.row_class[0]}-{c.row_class[1]})" if c.row_class else ""
        out.append(f"  order {c.order}  {c.ptype:26} {c.verdict.value}{t}{cls}")
        for rr in c.roles:
            if rr.verdict.value == "PROVED":
                continue
            out.append(f"    {rr.name}: {rr.verdict.value}{' - ' + rr.reason if rr.reason else ''}")
            if rr.lemma_cex is not None:
                out.append(f"      counterexample: {rr.lemma_cex.text()}")
            if rr.diffs:
                idx = ", ".join(f"{k}={v}" for k, v in rr.index)
                pfn = f", pfn {rr.pfn:#x}" if rr.pfn is not None else ""
                out.append(f"      page {idx}{pfn}; inputs:")
                out += [f"        {INPUT_NAMES.get(k, k):32s} {_input_value(k, v)}"
                        for k, v in rr.inputs]
                for d in rr.diffs:
                    out.append(f"      {'/'.join(d.names)} @{d.offset}: hand {d.slow:#x}, "
                               f"tree {d.fast:#x}")
                    last = [ch[-1] for ch in d.fast_provenance if ch]
                    if last:
                        out.append(f"        tree wrote it at {last[0]}")
    out.append(f"interpreted from the tree's text ({len(run.interpreted)}): "
               + ", ".join(f"{n} ({w})" for n, w in run.interpreted))
    given = assumption_lines(run.assumptions)
    rest = [f"trusted helpers, not interpreted ({len(run.trusted)}):"]
    rest += [f"  {n}: {TRUSTED[n].model}" for n in run.trusted]
    tt = f" in {run.seconds:.1f}s" if times else ""
    rest.append(f"verdict: {run.verdict.value}{tt}")
    return "\n".join([fit("\n".join(out)), *given, fit("\n".join(rest))]) + "\n"


def assumption_lines(assumptions: Sequence[Located]) -> list[str]:
    """The text reports' list of a run's assumptions about its inputs (``--linux`` and
    ``--patch``/``--against``, at most 72 columns but for a word longer than that): each
    with what it says, its tag, the kind of its source and why it holds, the lines that
    rely on it and those that guarantee it, what it claims beyond the kernel's guarantee,
    and the cells it was asserted in when not all."""

    def fill(text: str, indent: str, more: str) -> list[str]:
        return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=more,
                             break_on_hyphens=False, break_long_words=False)

    out = fill(f"assumptions about the inputs ({len(assumptions)}), asserted in every query "
               "of the cells (each cell checks first that they can hold together: VACUOUS "
               f"otherwise); a line marked [{SITES_VERSION}] is in a file the run did not "
               f"read, at its line in Linux {SITES_VERSION}:", "", "  ")
    for a in assumptions:
        out += fill(f"{a.text} [{a.tag}]", "  - ", "    ")
        out += fill(f"{a.kind_label}: {a.why}", "    ", "      ")
        for label, sites in (("relied on", a.relied_on), ("guaranteed by", a.guaranteed_by)):
            if sites:
                out += fill(f"{label}: {'; '.join(sites)}", "    ", "      ")
        if a.beyond:
            out += fill(f"beyond the kernel's guarantee: {a.beyond}", "    ", "      ")
        if a.cells:
            out += fill(f"only in the cells: {', '.join(a.cells)}", "    ", "      ")
    return out


def linux_json(drift: DriftReport, layout: SrcLayoutReport, run: FidelityRun | None,
               *, times: bool = True) -> dict[str, Any]:
    """The same report as data (schema ``equiv.linux/1``)."""
    doc: dict[str, Any] = {
        "schema": "equiv.linux/1", "tree": drift.tree, "version": drift.version,
        "model": drift.model, "config": drift.config, "kbuild": list(drift.kbuild),
        "drift": [{"name": r.name, "kind": r.kind, "where": r.where, "verdict": r.verdict,
                   "model": r.model_stmt or None, "tree": r.tree_stmt or None,
                   "tree_line": r.tree_line or None} for r in drift.rows],
        "layout": {"sizeof_page": {"model": layout.page_size[0], "tree": layout.page_size[1]},
                   "rows": [{"struct": r.struct, "view": r.view, "verdict": r.verdict,
                             "model": list(r.model), "tree": list(r.tree) if r.tree else None}
                            for r in layout.rows]},
        "assumed_undefined": list(drift.assumed_undefined),
    }
    if run is not None:
        doc["proof"] = {
            "verdict": run.verdict.value, "max_compounds": None,
            "cells": [{"order": c.order, "type": c.ptype, "verdict": c.verdict.value,
                       **({"order_class": list(c.row_class)} if c.row_class else {}),
                       **({"seconds": round(c.seconds, 3)} if times else {}),
                       "assumptions": [a.key for a in c.assumptions],
                       "obligations": [{"name": r.name, "verdict": r.verdict.value,
                                        **({"seconds": round(r.seconds, 3)} if times else {}),
                                        "reason": r.reason or None,
                                        "index": dict(r.index) or None,
                                        "inputs": {k: (v if isinstance(v, bool) else hex(v))
                                                   for k, v in r.inputs} or None,
                                        "fields": [{"names": list(d.names), "offset": d.offset,
                                                    "hand": hex(d.slow), "tree": hex(d.fast)}
                                                   for d in r.diffs]}
                                       for r in c.roles]} for c in run.cells],
            "interpreted": [{"name": n, "where": w} for n, w in run.interpreted],
            "assumptions": [a.as_json() for a in run.assumptions],
            "trusted": [{"name": n, "model": TRUSTED[n].model} for n in run.trusted],
        }
        if times:
            doc["proof"]["seconds"] = round(run.seconds, 3)
    return doc


def render_linux_json(drift: DriftReport, layout: SrcLayoutReport, run: FidelityRun | None,
                      *, times: bool = True) -> str:
    """:func:`linux_json` as indented JSON."""
    return json.dumps(linux_json(drift, layout, run, times=times), indent=2) + "\n"


# ---- --btf: the layout check ----------------------------------------------------------


def _input_value(name: str, v: int | bool) -> str:
    """An input of a counterexample as the report shows it: enums by name."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if name == "pgmap_type":
        names = {t.value: t.kname for t in MemoryType}
        return f"{names[v]} ({v})" if v in names else f"{v} (not a memory type)"
    return hex(v)


def render_layout_text(rep: LayoutReport) -> str:
    """The BTF layout check as a table (72 columns): model vs kernel offset+size and the
    verdict per field; a kernel name other than the model's follows ``=``."""
    out = [*wrap(f"layout check: model config {rep.config} vs BTF {rep.btf}"),
           f"{'struct':6s} {'field (= kernel name)':36s} {'model':>7s} {'kernel':>7s}  verdict"]
    for r in rep.rows:
        k = "-" if r.kernel_offset is None else f"{r.kernel_offset}+{r.kernel_size}"
        name = r.model_name
        if r.kernel_name is not None and r.kernel_name != name.split(" (page[")[0]:
            name += f" = {r.kernel_name}"
        out.append(fit(f"{r.struct:6s} {name:36s} {f'{r.model_offset}+{r.model_size}':>7s} "
                       f"{k:>7s}  {r.verdict}"))
    bad = [r for r in rep.rows if r.verdict != "MATCH"]
    if rep.unnamed:
        out += wrap("kernel views of struct page the model does not name (same bytes, other "
                    "union members): " + ", ".join(f"{m.path}@{m.offset}" for m in rep.unnamed))
    for m in rep.uncovered:
        out += wrap(f"UNCOVERED kernel field {m.path}@{m.offset}+{m.size}: beyond the model's "
                    "struct page")
    out += wrap(f"{len(rep.rows)} fields checked: {len(rep.rows) - len(bad)} match, "
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


__all__ = ["assumption_lines", "linux_json", "render_layout_json", "render_layout_text", "render_linux_json",
           "render_linux_text"]

"""Machine-readable reports of a proof run: JSON, JUnit XML and SARIF 2.1.0.

* **JSON** (:func:`render_json`, :func:`render_json_many`): the whole run, one record per
  obligation; tagged ``"schema": "equiv.proofs/2"`` and described field by field by the JSON
  Schema (draft 2020-12) ``schemas/equiv.proofs-2.schema.json``.
* **JUnit XML** (:func:`render_junit`), built with ``junitparser`` (Apache Ant's JUnit
  format): one ``<testsuite>`` per run (configuration x revision), one ``<testcase>`` per
  obligation; REFUTED is a ``<failure>``, UNKNOWN and VACUOUS are an ``<error>``.
* **SARIF** (:func:`render_sarif`): OASIS *Static Analysis Results Interchange Format (SARIF)
  Version 2.1.0* (errata 01), as plain dicts: one SARIF run per run, one rule per obligation
  kind (the subject's rules), one result per obligation not proved, located at the kernel
  function the subject names (for zone-device: the function of ``mm/mm_init.c``, v7.3-rc1,
  that initialises the page in question).

``times=False`` drops every volatile field (timings, versions) so that the output of two runs
can be compared byte for byte.
"""

from __future__ import annotations

import json
import xml.dom.minidom
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen
from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

from equiv.engine.results import CellResult, ObligationResult, RunResult
from equiv.engine.verdict import Verdict, worst
from equiv.report.text import WIDTH, repro_command, summary_line

JSON_SCHEMA = "equiv.proofs/2"


def _subject_id(run: RunResult) -> str:
    """The subject's name in machine-readable output (its presenter's ``report_id``, or its
    registry name)."""
    return run.presenter.report_id or run.subject


def reproduce(run: RunResult, cell: CellResult, ob: ObligationResult) -> str | None:
    """The command that re-runs a non-proved obligation (None for a proved one): a page
    obligation alone (with the lemmas it rests on), a loop lemma with its whole cell."""
    if ob.verdict is Verdict.PROVED:
        return None
    own = run.presenter.reproduce_command(run, cell, ob)
    if own is not None:
        return own
    one = run.presenter.repro_alone(ob)
    return repro_command(run, cell, ob.name) if one else repro_command(run, cell)


def _where(run: RunResult, cell: CellResult) -> str:
    hyp = ", hypothetical config" if run.config.hypothetical else ""
    mut = f", seeded bug {run.mutant}" if run.mutant else ""
    return (f"{cell.ptype} {run.row_label} {cell.order} (config {run.config.name}{hyp}, revision "
            f"{run.revision}{mut})")


# --- JSON -----------------------------------------------------------------------------------

def records(run: RunResult, *, times: bool = True) -> list[dict[str, Any]]:
    """One JSON record per obligation."""
    out = []
    for c in run.cells:
        for ob in c.obligations:
            rec = {
                "subject": _subject_id(run), "revision": run.revision, "config": run.config.name,
                "hypothetical_config": run.config.hypothetical, "mutant": run.mutant,
                "pgmap_type": c.ptype, "order": c.order, **ob.to_json(),
                "reproduce": reproduce(run, c, ob),
            }
            if not times:
                rec.pop("seconds")
            out.append(rec)
    return out


def run_document(run: RunResult, *, times: bool = True) -> dict[str, Any]:
    """The JSON document of one run (see ``schemas/equiv.proofs-2.schema.json``)."""
    doc: dict[str, Any] = {
        "schema": JSON_SCHEMA,
        "subject": _subject_id(run),
        "config": run.config.name,
        "hypothetical_config": run.config.hypothetical,
        "config_assumed": list(run.config.assumed),
        "layout": run.layout_note,
        "revision": run.revision,
        "choices": list(run.choices),
        "assumptions": list(run.assumptions),
        "mutant": run.mutant,
        "verdict": run.verdict.value,
        "summary": summary_line(run),
        "cells": [{"pgmap_type": c.ptype, "order": c.order, "verdict": c.verdict.value,
                   "all_types_proof": c.all_types,
                   "order_class": None if c.row_class is None else list(c.row_class),
                   **({"seconds": round(c.seconds, 4), "shared_queries": c.shared_queries,
                       "cached": c.cached}
                      if times else {})} for c in run.cells],
        "records": records(run, times=times),
    }
    if times:
        doc.update(tool_version=run.tool_version, z3_version=run.z3_version,
                   solver=run.solver_version,
                   wall_seconds=round(run.wall_seconds, 3), jobs=run.jobs)
    return doc


def render_json(run: RunResult, *, times: bool = True) -> str:
    """The whole run as JSON: header, per-cell verdicts and one record per obligation."""
    return json.dumps(run_document(run, times=times), indent=2) + "\n"


def render_json_many(runs: Sequence[RunResult], *, times: bool = True) -> str:
    """Several configurations: ``{"schema", "verdict", "runs": [one run document each]}``."""
    doc = {"schema": JSON_SCHEMA, "verdict": worst([r.verdict for r in runs]).value,
           "runs": [run_document(r, times=times) for r in runs]}
    return json.dumps(doc, indent=2) + "\n"


# --- JUnit XML ------------------------------------------------------------------------------

def _junit_name(part: str) -> str:
    """A classname component: dots and colons would add levels to the JUnit hierarchy."""
    return "".join("_" if ch in ".: /" else ch for ch in part)


def junit_classname(run: RunResult, cell: CellResult) -> str:
    """``equiv.<config>.<revision>.<pgmap type>.order<N>`` (the mutant, if any, after the
    revision; another subject's column and row, e.g. ``vmap.bound2``)."""
    parts = ["equiv", run.config.name, run.revision, *([run.mutant] if run.mutant else []),
             run.presenter.column_name(cell.ptype), f"{run.row_label}{cell.order}"]
    return ".".join(_junit_name(p) for p in parts)


def _testcase(run: RunResult, cell: CellResult, ob: ObligationResult, times: bool) -> TestCase:
    case = TestCase(ob.name, junit_classname(run, cell), round(ob.seconds, 4) if times else None)
    cmd = reproduce(run, cell, ob)
    if ob.verdict is Verdict.REFUTED:
        cx = ob.counterexample
        msg = run.presenter.one_line(cx) if cx is not None else "refuted"
        res: Failure | Error = Failure(f"{ob.name} refuted: {msg}", "REFUTED")
        lines = run.presenter.counterexample_lines(cx, WIDTH) if cx is not None else []
    elif ob.verdict is not Verdict.PROVED:
        reason = ob.reason or ob.verdict.value.lower()
        res = Error(f"{ob.name} {ob.verdict.value.lower()}: {reason}", ob.verdict.value)
        lines = [reason]
    else:
        return case
    res.text = "\n".join([*lines, *([f"reproduce: {cmd}"] if cmd else [])]) + "\n"
    case.result = [res]
    return case


def render_junit(runs: Sequence[RunResult], *, times: bool = True) -> str:
    """JUnit XML: one ``<testsuite>`` per run, named ``equiv <config> <revision>``, one
    ``<testcase>`` per obligation (classname :func:`junit_classname`, name the obligation);
    REFUTED is a ``<failure>`` whose text is the counterexample and the reproduce command,
    UNKNOWN and VACUOUS an ``<error>`` with the reason.  Times only with ``times``."""
    # junitparser's Element.append and tostring carry no annotations: the ignores below
    root = JUnitXml("equiv")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for run in runs:
        suite = TestSuite(f"equiv {run.config.name} {run.revision}"
                          + (f" {run.mutant}" if run.mutant else ""))
        for key, val in (("config", run.config.name), ("revision", run.revision),
                         *((("mutant", run.mutant),) if run.mutant else ()),
                         ("hypothetical_config", str(run.config.hypothetical).lower()),
                         ("verdict", run.verdict.value), ("summary", summary_line(run)),
                         ("subject", run.subject), ("layout", run.layout_note),
                         *((("tool_version", run.tool_version), ("z3_version", run.z3_version),
                            ("solver", run.solver_version))
                           if times else ())):
            suite.add_property(key, val)
        obs = [(c, ob) for c in run.cells for ob in c.obligations]
        for c, ob in obs:
            suite.append(_testcase(run, c, ob, times))
        # counted here rather than by junitparser's update_statistics, which would also
        # write a total time of 0 when times are off
        counts = {"tests": len(obs),
                  "failures": sum(ob.verdict is Verdict.REFUTED for _, ob in obs),
                  "errors": sum(ob.verdict in (Verdict.UNKNOWN, Verdict.VACUOUS) for _, ob in obs),
                  "skipped": 0}
        for key, n in counts.items():
            setattr(suite, key, n)
            if key in totals:
                totals[key] += n
        if times:
            suite.time = round(sum(c.seconds for c in run.cells), 3)
        root.append(suite)
    # <testsuites> carries no "skipped" in the strict JUnit schema (Jenkins' junit-10.xsd:
    # name, time, tests, failures, disabled, errors); its time is the sum of its suites'
    for key, n in totals.items():
        setattr(root, key, n)
    if times and runs:
        root.time = round(sum(suite.time for suite in root), 3)
    raw = root.tostring()
    pretty = xml.dom.minidom.parseString(raw).toprettyxml(indent="  ", encoding="UTF-8")
    return pretty.decode()


# --- SARIF 2.1.0 ----------------------------------------------------------------------------

SARIF_VERSION = "2.1.0"
#: The OASIS SARIF 2.1.0 (errata 01) schema, the value of a log's ``$schema``.
SARIF_SCHEMA_URI = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                    "sarif-schema-2.1.0.json")
#: SARIF's conventional base for paths in the analysed source checkout: GitHub code scanning
#: (and other SARIF viewers) resolve a ``%SRCROOT%``-relative path against the root of the
#: repository the log is uploaded from, here a kernel tree.
KERNEL_URI_BASE = "%SRCROOT%"


@frozen(eq=False)
class SourceLines:
    """Where the kernel functions findings are located at lie in one kernel tree
    (``--kernel-tree DIR``): the tree's root and the line of each (file, function)
    definition found there."""

    root: Path
    lines: Mapping[tuple[str, str], int]


def _sarif_message(run: RunResult, cell: CellResult, ob: ObligationResult) -> str:
    what = run.presenter.about(ob)
    head = f"{ob.name} {ob.verdict.value} for {_where(run, cell)}: {what}."
    cx = ob.counterexample
    body = (f" Differs at {run.presenter.one_line(cx)}." if cx is not None
            else f" {ob.reason}." if ob.reason else "")
    cmd = reproduce(run, cell, ob)
    return head + body + (f" Reproduce: {cmd}" if cmd else "")


def _sarif_location(file: str, function: str, src: SourceLines | None) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": file, "uriBaseId": KERNEL_URI_BASE}}
    line = None if src is None else src.lines.get((file, function))
    if line is not None:
        phys["region"] = {"startLine": line}
    return {"physicalLocation": phys,
            "logicalLocations": [{"name": function, "kind": "function"}]}


def _sarif_run(run: RunResult, rules: list[dict[str, Any]], *, times: bool,
               exit_code: int | None, automation: bool,
               src: SourceLines | None) -> dict[str, Any]:
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for c in run.cells:
        for ob in c.obligations:
            if ob.verdict is Verdict.PROVED:
                continue
            rid = run.presenter.rule_id(ob)
            file, function = run.presenter.location(c, ob)
            results.append({
                "ruleId": rid,
                "ruleIndex": index[rid],
                "level": "error" if ob.verdict is Verdict.REFUTED else "warning",
                "message": {"text": _sarif_message(run, c, ob)},
                "locations": [_sarif_location(file, function, src)],
                "partialFingerprints": {
                    "equivObligation/v1": "/".join([run.config.name, run.revision,
                                                    run.mutant or "-", c.ptype, str(c.order),
                                                    ob.name])},
                "properties": {"verdict": ob.verdict.value, "pgmap_type": c.ptype,
                               "order": c.order, "obligation": ob.name,
                               "reproduce": reproduce(run, c, ob)},
            })
    driver: dict[str, Any] = {"name": "equiv", "rules": rules}
    if times:
        driver["version"] = run.tool_version
    invocation: dict[str, Any] = {
        # the analysis completed: every obligation was decided (UNKNOWN: the solver gave up;
        # VACUOUS: the assumptions cannot hold, so nothing was analysed)
        "executionSuccessful": all(ob.verdict in (Verdict.PROVED, Verdict.REFUTED)
                                   for c in run.cells for ob in c.obligations)}
    if exit_code is not None:
        invocation["exitCode"] = exit_code
    out: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "originalUriBaseIds": {KERNEL_URI_BASE: _sarif_base(run, src)},
        "results": results,
        "properties": {"config": run.config.name, "hypothetical_config": run.config.hypothetical,
                       "revision": run.revision, "mutant": run.mutant,
                       "verdict": run.verdict.value, "summary": summary_line(run),
                       "subject": run.subject, "layout": run.layout_note},
    }
    if automation:  # several runs in one log: code scanning needs a category for each
        out["automationDetails"] = {"id": f"equiv/{run.config.name}/{run.revision}/"}
    return out


def _sarif_base(run: RunResult, src: SourceLines | None) -> dict[str, Any]:
    if src is None:
        return {"description": {"text": (
            f"root of the Linux kernel source tree the log is uploaded from (the model "
            f"mirrors {run.kernel_base}); no line numbers: give --kernel-tree DIR to locate "
            "findings at that tree's lines")}}
    return {"uri": src.root.resolve().as_uri() + "/", "description": {"text": (
        f"root of the kernel tree given by --kernel-tree (the model mirrors "
        f"{run.kernel_base}); lines are that tree's function definitions")}}


def sarif_log(runs: Sequence[RunResult], *, times: bool = True,
              exit_code: int | None = None, src: SourceLines | None = None) -> dict[str, Any]:
    """The SARIF 2.1.0 log (a dict) of ``runs``: one SARIF run each, a result for every
    obligation not proved (level ``error`` for REFUTED, ``warning`` for UNKNOWN and VACUOUS).

    Args:
        runs: the proof runs (one per configuration).
        times: include the tool version (volatile).
        exit_code: the process exit code, recorded in each run's invocation (or omitted).
        src: the kernel tree whose lines locate results (``region``), or None (no lines).
    """
    rules: list[dict[str, Any]] = []
    by_presenter: dict[int, tuple[Any, list[RunResult]]] = {}
    for r in runs:  # each subject's rules once, in the order the runs come
        by_presenter.setdefault(id(r.presenter), (r.presenter, []))[1].append(r)
    for presenter, its_runs in by_presenter.values():
        ids = {rule["id"] for rule in rules}
        rules += [rule for rule in presenter.sarif_rules(its_runs) if rule["id"] not in ids]
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION,
            "runs": [_sarif_run(r, rules, times=times, exit_code=exit_code,
                                automation=len(runs) > 1, src=src) for r in runs]}


def render_sarif(runs: Sequence[RunResult], *, times: bool = True,
                 exit_code: int | None = None, src: SourceLines | None = None) -> str:
    """:func:`sarif_log` as JSON text."""
    return json.dumps(sarif_log(runs, times=times, exit_code=exit_code, src=src),
                      indent=2) + "\n"

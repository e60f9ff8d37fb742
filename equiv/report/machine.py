"""Machine-readable reports of a proof run (JSON; its schema is ``schemas/``)."""

from __future__ import annotations

import json
from typing import Any

from equiv.matrix import RunResult
from equiv.report.text import summary_line

JSON_SCHEMA = "equiv.proofs/1"
SUBJECT = "zone-device-memmap"


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
        "summary": summary_line(run),
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



"""Markdown report of a proof run, for a pull-request comment or a CI job summary.

GitHub-flavoured Markdown: a heading naming the verdict, configuration and revision; the
summary line; the matrix (order x pgmap type, one verdict per cell) as a table; what was
assumed (configuration constants, the revision's modelling choices, the assumptions) in a
collapsible ``<details>``; and for every obligation not proved a ``<details>`` block with the
counterexample (or the reason) in a code block and the command that reproduces it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from equiv.engine.results import RunResult
from equiv.engine.verdict import Verdict, worst
from equiv.report.machine import reproduce
from equiv.report.text import WIDTH, row_classes, summary_line, title

#: At most this many non-proved obligations are detailed per run (a GitHub comment holds
#: 65,536 characters); the rest are counted, and are all in the text and JSON reports.
MAX_DETAILS = 20


def _code(s: str) -> str:
    return f"<code>{html.escape(s)}</code>"


def _verdict(v: Verdict) -> str:
    return v.value if v is Verdict.PROVED else f"**{v.value}**"


def _title(run: RunResult) -> str:
    hyp = " (hypothetical)" if run.config.hypothetical else ""
    mut = f", seeded bug `{run.mutant}`" if run.mutant else ""
    return f"{run.verdict.value}: config `{run.config.name}`{hyp}, revision `{run.revision}`{mut}"


def _matrix(run: RunResult) -> list[str]:
    types = list(dict.fromkeys(c.ptype for c in run.cells))
    orders = sorted({c.order for c in run.cells})
    by = {(c.ptype, c.order): c for c in run.cells}
    out = [f"| {run.row_label} | " + " | ".join(run.presenter.column_name(t) for t in types)
           + " |",
           "| ---: |" + " :---: |" * len(types)]
    for o in orders:
        row = []
        for t in types:
            c = by.get((t, o))
            row.append("-" if c is None else _verdict(c.verdict) + ("\\*" if c.all_types else ""))
        out.append(f"| {o} | " + " | ".join(row) + " |")
    if any(c.all_types for c in run.cells):
        out += ["", "\\* " + run.presenter.all_columns_note("markdown", True)]
    if row_classes(run):
        out += ["", run.presenter.row_class_note(row_classes(run), "markdown", True)]
    return out


def _assumed(run: RunResult) -> list[str]:
    out = ["<details>", "<summary>Configuration, modelling choices and assumptions</summary>", ""]
    hyp = (f" **hypothetical: {run.config.hypothetical_note}**" if run.config.hypothetical
           else "")
    desc = f": {run.config.description}" if run.config.description else ""
    out.append(f"- config `{run.config.name}`{hyp}{desc}")
    if run.layout_note:
        out.append(f"  - {run.layout_note}")
    out += [f"  - assumed: {a}" for a in run.config.assumed]
    out.append(f"- revision `{run.revision}`: {run.revision_summary}" if run.revision_summary
               else f"- revision `{run.revision}`")
    out += [f"  - {ch}" if ch.startswith("known difference") else f"  - choice: {ch}"
            for ch in run.choices]
    if run.mutant:
        out.append(f"- seeded bug `{run.mutant}`: {run.mutant_description}")
    out.append("- assumptions:")
    out += [f"  - {a}" for a in run.assumptions]
    out += ["", "</details>"]
    return out


def _details(run: RunResult, *, max_details: int) -> list[str]:
    bad = [(c, ob) for c in run.cells for ob in c.obligations if ob.verdict is not Verdict.PROVED]
    if not bad:
        return []
    out = ["", f"#### Not proved ({len(bad)})"]
    for c, ob in bad[:max_details]:
        what = run.presenter.about(ob)
        out += ["", "<details>",
                f"<summary><b>{ob.verdict.value}</b> {_code(ob.name)}: "
                f"{html.escape(c.ptype)} {run.row_label} {c.order} ({html.escape(what)})</summary>",
                ""]
        lines = (run.presenter.counterexample_lines(ob.counterexample, WIDTH)
                 if ob.counterexample is not None
                 else [ob.reason or ob.verdict.value.lower()])
        out += ["```text", *lines, "```"]
        cmd = reproduce(run, c, ob)
        if cmd:
            out += ["", "Reproduce:", "", "```sh", cmd, "```"]
        out += ["", "</details>"]
    if len(bad) > max_details:
        out += ["", f"... and {len(bad) - max_details} more not detailed here (see the text or "
                    "JSON report)."]
    return out


def render_markdown(run: RunResult, *, times: bool = True, level: int = 2,
                    max_details: int = MAX_DETAILS) -> str:
    """One run as Markdown; the heading is of ``level`` (``##`` by default)."""
    out = [f"{'#' * level} equiv {_title(run)}", "",
           f"**{summary_line(run)}**", "",
           f"{title(run)}.", ""]
    out += _matrix(run)
    out.append("")
    out += _assumed(run)
    out += _details(run, max_details=max_details)
    if times:
        out += ["", f"<sub>equiv {run.tool_version}, {run.solver_version}; wall "
                    f"{run.wall_seconds:.1f} s, {run.jobs} job{'s' * (run.jobs != 1)}</sub>"]
    return "\n".join(out) + "\n"


def render_markdown_many(runs: Sequence[RunResult], *, times: bool = True,
                         max_details: int = MAX_DETAILS) -> str:
    """Several runs (``--config all``): one heading and a line per run, then each run."""
    if len(runs) == 1:
        return render_markdown(runs[0], times=times, max_details=max_details)
    verdict = worst([r.verdict for r in runs])
    out = [f"## equiv {verdict.value}: {len(runs)} runs", ""]
    out += [f"- {_verdict(r.verdict)} {r.subject} `{r.config.name}`"
            f"{' (hypothetical)' if r.config.hypothetical else ''}: {summary_line(r)}"
            for r in runs]
    parts = ["\n".join(out) + "\n"]
    parts += [render_markdown(r, times=times, level=3, max_details=max_details) for r in runs]
    return "\n".join(parts)

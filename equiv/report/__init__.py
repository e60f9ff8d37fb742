"""Rendering results: the only package that formats output.  Checks return data; these
modules turn it into text for a mail or a log (:mod:`.text`), Markdown for a pull request
(:mod:`.markdown`), machine-readable formats - JSON, JUnit XML, SARIF 2.1.0 (:mod:`.machine`)
- and the tables of the auxiliary checks (:mod:`.tables`).  ``times=False`` drops every
volatile field (timings, versions) so golden files can pin the format."""

from __future__ import annotations

from collections.abc import Sequence

from equiv.errors import InputError
from equiv.matrix import RunResult
from equiv.report.machine import (
    JSON_SCHEMA,
    SUBJECT,
    records,
    render_json,
    render_json_many,
    render_junit,
    render_sarif,
    reproduce,
    sarif_log,
)
from equiv.report.markdown import render_markdown, render_markdown_many
from equiv.report.tables import (
    render_layout_json,
    render_layout_text,
    render_selftest,
    selftest_summary,
)
from equiv.report.text import (
    render_explain,
    render_text,
    render_text_many,
    repro_command,
    summary_line,
)

#: The report formats of a proof run (``--format``, ``--report FORMAT=FILE``).
FORMATS = ("text", "json", "markdown", "junit", "sarif")


def render_runs(fmt: str, runs: Sequence[RunResult], *, times: bool = True,
                verbose: bool = False, exit_code: int | None = None) -> str:
    """The report of one or several runs (``--config all``) in format ``fmt``.

    Args:
        fmt: one of :data:`FORMATS`.
        runs: the runs, one per configuration.
        times: include timings and versions (off for golden files).
        verbose: text only: detail every obligation, not only those not proved.
        exit_code: SARIF only: the process exit code, recorded in the invocation.

    Raises:
        InputError: ``fmt`` is not one of :data:`FORMATS`.
    """
    if fmt == "text":
        return render_text_many(runs, times=times, verbose=verbose)
    if fmt == "json":
        return (render_json(runs[0], times=times) if len(runs) == 1
                else render_json_many(runs, times=times))
    if fmt == "markdown":
        return render_markdown_many(runs, times=times)
    if fmt == "junit":
        return render_junit(runs, times=times)
    if fmt == "sarif":
        return render_sarif(runs, times=times, exit_code=exit_code)
    raise InputError(f"unknown report format {fmt!r}; valid: {', '.join(FORMATS)}")


__all__ = ["FORMATS", "JSON_SCHEMA", "SUBJECT", "records", "render_explain", "render_json",
           "render_json_many", "render_junit", "render_layout_json", "render_layout_text", "render_markdown",
           "render_markdown_many", "render_runs", "render_sarif", "render_selftest",
           "render_text", "repro_command", "reproduce", "sarif_log", "selftest_summary",
           "summary_line"]

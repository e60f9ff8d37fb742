"""Rendering results: the only package that formats output.  Checks return data; these
modules turn it into text for a mail or a log (:mod:`.text`), Markdown for a pull request
(:mod:`.markdown`), machine-readable formats - JSON, JUnit XML, SARIF 2.1.0 (:mod:`.machine`)
-, a self-contained HTML page with pictures of every counterexample (:mod:`.html`) and the
self-test's kill matrix (:mod:`.tables`).  Subject-free: whatever is a subject's
own (counterexamples, rule ids, locations, emitted tests) comes from the run's
:class:`~equiv.engine.results.Presenter`.  ``times=False`` drops every
volatile field (timings, versions) so golden files can pin the format."""

from __future__ import annotations

import os
from collections.abc import Sequence

from equiv.engine.errors import InputError
from equiv.engine.results import RunResult
from equiv.report.machine import (
    JSON_SCHEMA,
    SourceLines,
    records,
    render_json,
    render_json_many,
    render_junit,
    render_sarif,
    reproduce,
    sarif_log,
)
from equiv.report.markdown import render_markdown, render_markdown_many
from equiv.report.tables import render_selftest, selftest_summary
from equiv.report.text import (
    render_text,
    render_text_many,
    repro_command,
    summary_line,
)

#: The report formats of a proof run (``--format``, ``--report FORMAT=FILE``).
FORMATS = ("text", "json", "markdown", "junit", "sarif", "html")


def render_runs(fmt: str, runs: Sequence[RunResult], *, times: bool = True,
                verbose: bool = False, exit_code: int | None = None,
                src: SourceLines | None = None) -> str:
    """The report of one or several runs (``--config all``) in format ``fmt``.

    Args:
        fmt: one of :data:`FORMATS`.
        runs: the runs, one per configuration.
        times: include timings and versions (off for golden files).
        verbose: text only: detail every obligation, not only those not proved.
        exit_code: SARIF only: the process exit code, recorded in the invocation.
        src: SARIF only: the kernel tree whose lines locate the results (``--kernel-tree``).

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
        return render_sarif(runs, times=times, exit_code=exit_code, src=src)
    if fmt == "html":
        from equiv.report.html import render_html  # Jinja2 is loaded for this format only

        return render_html(runs, times=times)
    raise InputError(f"unknown report format {fmt!r}; valid: {', '.join(FORMATS)}")


def write_tests(run: RunResult, directory: str) -> list[str]:
    """Write the tests of every counterexample of ``run`` (``--emit-tests``: the files its
    subject's presenter makes) into ``directory`` (created if missing).

    Returns:
        The paths written, in matrix order.

    Raises:
        InputError: ``directory`` cannot be created or written; the message names it.
    """
    files = run.presenter.emitted_files(run)
    paths: list[str] = []
    try:
        os.makedirs(directory, exist_ok=True)
        for name, text in files:
            path = os.path.join(directory, name)
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
    except OSError as e:
        raise InputError(f"cannot write --emit-tests {directory!r}: "
                         f"{e.strerror or e}") from None
    return paths


__all__ = [
    "FORMATS",
    "JSON_SCHEMA",
    "SourceLines",
    "records",
    "render_json",
    "render_json_many",
    "render_junit",
    "render_markdown",
    "render_markdown_many",
    "render_runs",
    "render_sarif",
    "render_selftest",
    "render_text",
    "repro_command",
    "reproduce",
    "sarif_log",
    "selftest_summary",
    "summary_line",
    "write_tests",
]

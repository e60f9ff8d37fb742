"""Rendering results: the only package that formats output.  Checks return data; these
modules turn it into text for a mail or a log (:mod:`.text`), machine-readable formats
(:mod:`.machine`) and the tables of the auxiliary checks (:mod:`.tables`).  ``times=False``
drops every volatile field (timings, versions) so golden files can pin the format."""

from equiv.report.machine import JSON_SCHEMA, SUBJECT, records, render_json, render_json_many
from equiv.report.tables import (
    render_layout_json,
    render_layout_text,
    render_selftest,
    selftest_summary,
)
from equiv.report.text import render_text, repro_command, summary_line

__all__ = ["JSON_SCHEMA", "SUBJECT", "records", "render_json", "render_json_many",
           "render_layout_json", "render_layout_text", "render_selftest", "render_text",
           "repro_command", "selftest_summary", "summary_line"]

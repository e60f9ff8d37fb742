"""What a subject gives the engine: its registration (:class:`Subject`) and how its details
appear in reports (:class:`Presenter`).

A subject is a pair of kernel paths (slow and fast) with its own model, obligations and
seeded bugs.  Its package exposes one :class:`Subject` (named in :mod:`equiv.subjects`):
its options, how it turns them into runs (:class:`~equiv.engine.results.RunResult`, whose
cells are :class:`~equiv.engine.results.CellResult`), its self-test and its lines for
``--list``.  Every report format reads a run's subject-specific detail through the run's
:class:`Presenter`; the reports themselves name no subject.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from attrs import frozen

from equiv.engine.cache import Cache
from equiv.engine.errors import InputError
from equiv.engine.picture import Picture
from equiv.engine.results import CellResult, Counterexample, ObligationResult, RunResult
from equiv.engine.selftest import SelfTestResult
from equiv.engine.solvers import SOLVERS


@frozen
class RunContext:
    """What every subject's runs share: the error stream, the cache, whether to show
    progress, and the budget options to repeat in reproduce commands."""

    err: TextIO
    cache: Cache | None
    quiet: bool
    #: the budget options of the run, for reproduce commands ("" for the defaults)
    budget_args: str = ""


@frozen(kw_only=True)
class Subject:
    """One subject's registration (the ``SUBJECT`` of its front module)."""

    name: str
    summary: str
    #: adds the subject's own options to the parser (or nothing); imports nothing heavy
    add_arguments: Callable[[argparse.ArgumentParser], None]
    #: the subject's runs for the parsed options
    run: Callable[[argparse.Namespace, RunContext], list[RunResult]]
    #: the subject's seeded-bug self-test (worker processes)
    self_test: Callable[[int | None], SelfTestResult]
    #: lines for ``--list``
    list_lines: Callable[[], list[str]]
    #: modes that are not a proof matrix: run one and return its exit code, or None
    special: Callable[[argparse.Namespace, TextIO, Callable[[str], None]], int | None]
    #: the subject's own options with their defaults (refused for other subjects)
    own_options: dict[str, object]
    #: the ``--solver`` choices of this subject, its default first
    solvers: tuple[str, ...]
    #: the solver choices under which ``--rlimit`` (a z3 budget) takes effect
    rlimit_solvers: tuple[str, ...] = (*SOLVERS, "all")
    #: the self-test through the run's result cache (jobs, cache or None), if the subject
    #: has one: ``--self-test`` then honours ``--cache-dir`` and ``--no-cache``.  Its cells
    #: must be keyed like proof cells (:func:`equiv.engine.runner.run_cached`), with the
    #: seeded bug's edit in the key (:func:`equiv.engine.selftest.describe_edit`), so a
    #: changed mutant or model is never served stale.
    cached_self_test: Callable[[int | None, Cache | None], SelfTestResult] | None = None
    #: prints the self-test's estimate before it starts (jobs, cache or None, stderr), if
    #: the subject has measured figures for it (:func:`equiv.report.progress.announce`:
    #: one line, only for a self-test that will take minutes)
    self_test_notice: Callable[[int, Cache | None, TextIO], None] | None = None

    def run_self_test(self, jobs: int | None, cache: Cache | None) -> SelfTestResult:
        """The self-test, through ``cache`` when the subject's self-test can use one."""
        if self.cached_self_test is not None:
            return self.cached_self_test(jobs, cache)
        return self.self_test(jobs)

    def solver(self, args: argparse.Namespace) -> str:
        """The solver the run uses: ``--solver`` or the subject's default; a choice the
        subject does not offer, a solver not installed, or an ``--rlimit`` the solver would
        ignore is an input error (checked before any subject runs)."""
        from equiv.engine.solvers import require

        name: str = args.solver or self.solvers[0]
        require(name, self.solvers, self.name)
        if args.rlimit is not None and name not in self.rlimit_solvers:
            raise InputError(f"--rlimit is a z3 budget; the {self.name} subject decides with "
                             f"{name} (add --solver {self.rlimit_solvers[0]}, or leave "
                             "--rlimit out)")
        return name


class Presenter:
    """How one subject's results read in every report format.  Each method returns data
    (lines, ids, dicts) and writes nothing; :mod:`equiv.report` asks it and formats.

    The defaults are what a subject without wording of its own gets: obligations are their
    own SARIF rules, located at :attr:`kernel_file` and the function of the cell's column
    (:attr:`column_functions`); a counterexample prints as its JSON.
    """

    #: the subject's name in machine-readable output (JSON); "" for its registry name
    report_id: str = ""
    #: the kernel file SARIF results point into (relative to the kernel tree's root)
    kernel_file: str = ""
    #: the kernel function of each matrix column, for SARIF locations
    column_functions: tuple[tuple[str, str], ...] = ()

    def column_name(self, column: str) -> str:
        """A column as the matrix, JUnit and reproduce commands print it."""
        return column

    def counterexample_lines(self, cx: Counterexample, width: int) -> list[str]:
        """A replayed counterexample as report lines of at most ``width`` columns."""
        return json.dumps(cx.to_json(), indent=2).splitlines()

    def one_line(self, cx: Counterexample) -> str:
        """A counterexample in one line (JUnit failure message, SARIF message)."""
        return " ".join(line.strip() for line in self.counterexample_lines(cx, 10_000)[:4])

    def role_description(self, ob: ObligationResult) -> str:
        """What an obligation is about, in words ("" when there is nothing to add)."""
        return ""

    def about(self, ob: ObligationResult) -> str:
        """What an obligation is about, never empty (Markdown and SARIF messages)."""
        return self.role_description(ob) or ob.kind

    def repro_alone(self, ob: ObligationResult) -> bool:
        """Can the obligation be re-run alone (``--obligation NAME``)?  Otherwise its
        reproduce command re-runs its whole cell."""
        return ob.kind != "lemma"

    def all_columns_note(self, fmt: str, times: bool) -> str:
        """The note under a matrix with cells proved once for every column of their row
        (``fmt`` "text" or "markdown")."""
        return "proved once for every column of the row"

    def row_class_note(self, classes: Sequence[tuple[int, int]], fmt: str, times: bool) -> str:
        """The note under a matrix with rows proved by one proof per class of rows
        (``classes``: first and last row of each; ``fmt`` "text" or "markdown")."""
        spans = ", ".join(f"{a}-{b}" for a, b in classes)
        return f"rows {spans}: one proof per class of rows, the row a symbolic input"

    def rule_id(self, ob: ObligationResult) -> str:
        """The SARIF rule of an obligation."""
        return ob.name

    def sarif_rules(self, runs: Sequence[RunResult]) -> list[dict[str, Any]]:
        """The SARIF rules (``reportingDescriptor``\\ s) of this subject's obligations in
        ``runs``: by default one per obligation name."""
        seen: dict[str, dict[str, Any]] = {}
        for run in runs:
            for c in run.cells:
                for ob in c.obligations:
                    seen.setdefault(self.rule_id(ob), {
                        "id": self.rule_id(ob), "name": ob.name,
                        "shortDescription": {"text": f"{run.subject}: {ob.name} ({ob.kind})"},
                        "defaultConfiguration": {"level": "error"},
                        "properties": {"kind": ob.kind, "subject": run.subject}})
        return list(seen.values())

    def location(self, cell: CellResult, ob: ObligationResult) -> tuple[str, str]:
        """(kernel file, function) a SARIF result is located at."""
        return self.kernel_file, dict(self.column_functions).get(cell.ptype, cell.ptype)

    def emitted_files(self, run: RunResult) -> list[tuple[str, str]]:
        """(file name, contents) of the tests ``--emit-tests`` writes for ``run``."""
        return []

    def picture(self, run: RunResult, cell: CellResult, ob: ObligationResult) -> Picture | None:
        """What the counterexample of ``ob`` looks like (the text report's hexdump, the
        HTML report's diagrams), or None when the subject draws none: then the reports show
        :meth:`counterexample_lines` alone."""
        return None


__all__ = ["Presenter", "RunContext", "Subject"]

"""What a subject gives the engine: its registration (:class:`Subject`).  How its details
appear in reports is its :class:`~equiv.engine.results.Presenter`, beside the results it reads.

A subject is a pair of kernel paths (slow and fast) with its own model, obligations and
seeded bugs.  Its package exposes one :class:`Subject` (named in :mod:`equiv.subjects`):
its options, how it turns them into runs (:class:`~equiv.engine.results.RunResult`, whose
cells are :class:`~equiv.engine.results.CellResult`), its self-test and its lines for
``--list``.  Every report format reads a run's subject-specific detail through the run's
:class:`~equiv.engine.results.Presenter`; the reports themselves name no subject.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TextIO

from attrs import Factory, frozen

from equiv.engine.cache import Cache
from equiv.engine.errors import InputError
from equiv.engine.results import RunResult
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
    #: modes that are not a proof matrix: run one and return its exit code, or None; called
    #: with the options, the error stream (for progress) and the report's writer
    special: Callable[[argparse.Namespace, TextIO, Callable[[str], None]], int | None]
    #: the subject's own options with their defaults (refused for other subjects, whatever
    #: the value given)
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
    #: what the subject's runs are chosen by, for the line refusing another subject's
    #: option (e.g. "one configuration, arm64-4k; cells chosen by --paths and --bounds")
    choices: str = ""
    #: the shared options the subject cannot honour, each with why (refused before any
    #: subject runs)
    refuses: dict[str, str] = Factory(dict)

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


__all__ = ["RunContext", "Subject"]

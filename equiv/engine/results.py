"""Result records, shared by every subject: one obligation, one matrix cell, one run.

A subject's checks return :class:`CellResult`\\ s (each a tuple of
:class:`ObligationResult`); its command-line front puts them into a :class:`RunResult`
together with what the reports need to say about it (titles, labels, the configuration's
:class:`ConfigSummary` and the subject's :class:`Presenter`, how its details read in
every report format).  The
reports (:mod:`equiv.report`) read only these records.

A cell sits in a matrix of columns x rows: for the zone-device subject the pgmap type and
the compound order, for vmap the mapping path and the bound.  The fields keep their first
subject's names (``ptype``, ``order``; in JSON ``pgmap_type`` and ``order``) so that the
JSON schema stays as it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import z3
from attrs import field, frozen

from equiv.engine.cache import TOOL_VERSION
from equiv.engine.picture import Picture
from equiv.engine.verdict import Verdict, worst


class Counterexample(Protocol):
    """What the engine needs of a subject's counterexample: its JSON (the report schema's
    ``counterexample`` object) and its cache payload (enough to rebuild and replay it)."""

    def to_json(self) -> dict[str, Any]: ...

    def to_cache(self) -> dict[str, Any]: ...


@frozen(kw_only=True)
class ObligationResult:
    """Result of one obligation (a page role, a loop lemma, or another subject's claim)."""

    name: str
    kind: str  # "page", "lemma", or another subject's kind ("cell" for a stopped cell)
    role: str
    verdict: Verdict
    seconds: float
    counterexample: Counterexample | None = None
    reason: str = ""
    #: what was shown satisfiable before PROVED was claimed (assumptions with this role,
    #: each path reaching its end)
    coverage: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"obligation": self.name, "kind": self.kind, "role": self.role,
                "verdict": self.verdict.value, "seconds": round(self.seconds, 4),
                "reason": self.reason or None, "coverage": list(self.coverage),
                "counterexample": None if self.counterexample is None
                else self.counterexample.to_json()}


#: Rebuilds a counterexample from its cache payload, given the obligation's cache record
#: (for its name) and the cell's; raises KeyError, TypeError or ValueError when it cannot.
CounterexampleLoader = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], Counterexample]


@frozen(kw_only=True)
class CellResult:
    """Result of one matrix cell (column ``ptype``, row ``order``)."""

    config: str
    revision: str
    ptype: str
    order: int
    verdict: Verdict
    seconds: float
    obligations: tuple[ObligationResult, ...]
    assumptions: tuple[str, ...]
    choices: tuple[str, ...]
    hypothetical: bool
    #: queries answered by an identical query decided earlier in this process
    shared_queries: int = 0
    #: proved by one proof with the column symbolic, covering every column of the row
    all_types: bool = False
    #: proved by one proof with the row symbolic, covering every row from the first to the
    #: second (an order class of the zone-device subject), or None
    row_class: tuple[int, int] | None = None
    #: keys of the cached query answers the verdicts rest on (with a cache only)
    query_keys: tuple[str, ...] = ()
    #: taken from the result cache instead of being decided in this run
    cached: bool = False
    #: problems the worker met with the result cache (:data:`equiv.engine.cache.Problem`),
    #: reported by the process that started the run; never stored
    cache_problems: tuple[tuple[str, str], ...] = ()
    #: every query the cell posed was decided (none came out unknown, on any budget): an
    #: UNKNOWN obligation of the cell then follows from decided answers (a loop lemma
    #: refuted, a replay without a difference), not from a budget, and the cell may be
    #: cached like any other (:func:`equiv.engine.runner.run_cached`); never stored
    decided: bool = False

    def to_cache(self) -> dict[str, Any]:
        """Everything needed to rebuild this result (the cache's cell payload); each
        counterexample as its own :meth:`Counterexample.to_cache`."""
        obs = []
        for ob in self.obligations:
            d = ob.to_json()
            if ob.counterexample is not None:
                d["counterexample"] = ob.counterexample.to_cache()
            obs.append(d)
        return {"config": self.config, "revision": self.revision, "ptype": self.ptype,
                "order": self.order, "verdict": self.verdict.value, "seconds": self.seconds,
                "obligations": obs, "assumptions": list(self.assumptions),
                "choices": list(self.choices), "hypothetical": self.hypothetical,
                "all_types": self.all_types, "query_keys": list(self.query_keys),
                "row_class": None if self.row_class is None else list(self.row_class)}

    @classmethod
    def from_cache(cls, d: dict[str, Any], load: CounterexampleLoader) -> CellResult:
        """The inverse of :meth:`to_cache`, marked ``cached``; ``load`` rebuilds each
        counterexample (the subject's own: it may replay it again)."""
        obs = tuple(ObligationResult(
            name=o["obligation"], kind=o["kind"], role=o["role"],
            verdict=Verdict(o["verdict"]), seconds=o["seconds"],
            counterexample=None if o["counterexample"] is None
            else load(o["counterexample"], o, d),
            reason=o["reason"] or "", coverage=tuple(o["coverage"])) for o in d["obligations"])
        return cls(config=d["config"], revision=d["revision"], ptype=d["ptype"],
                   order=d["order"], verdict=Verdict(d["verdict"]), seconds=d["seconds"],
                   obligations=obs, assumptions=tuple(d["assumptions"]),
                   choices=tuple(d["choices"]), hypothetical=d["hypothetical"],
                   all_types=d["all_types"],
                   row_class=None if d.get("row_class") is None else tuple(d["row_class"]),
                   query_keys=tuple(d["query_keys"]), cached=True)


class ConfigSummary(Protocol):
    """What a report says about a run's configuration (a subject's kernel configuration
    class provides these attributes, or the subject uses :class:`SubjectConfig`)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def assumed(self) -> tuple[str, ...]: ...
    @property
    def hypothetical(self) -> bool: ...
    #: what "hypothetical" means for this subject, e.g. "no ZONE_DEVICE kernel builds this"
    @property
    def hypothetical_note(self) -> str: ...
    #: a note after the configuration's name in the text header ("" for none)
    @property
    def header_note(self) -> str: ...


@frozen(kw_only=True)
class SubjectConfig:
    """A :class:`ConfigSummary` for a subject without kernel configurations."""

    name: str
    description: str = ""
    assumed: tuple[str, ...] = ()
    hypothetical: bool = False
    hypothetical_note: str = "a hypothetical configuration"
    header_note: str = ""


@frozen(kw_only=True)
class RunResult:
    """A whole run of one subject and configuration: what was asked, the environment, and
    every cell in matrix order.  The reports read only this (and the cells); every field
    that names the subject's terms is given by the subject (no defaults)."""

    #: the subject's registry name (:mod:`equiv.subjects`)
    subject: str
    #: how the subject's details are shown (counterexamples, rules, locations, tests)
    presenter: Presenter = field(repr=False)
    config: ConfigSummary
    revision: str
    mutant: str | None
    cells: tuple[CellResult, ...]
    wall_seconds: float
    jobs: int
    layout_note: str
    choices: tuple[str, ...]
    assumptions: tuple[str, ...]
    #: what the run compares, e.g. "ZONE_DEVICE memmap init, slow path (v7.3-rc1) vs fast path"
    title: str
    #: the matrix's columns and rows, and the options that select one of each
    column_label: str
    row_label: str
    column_option: str
    row_option: str
    #: how the configuration is chosen on the command line (for reproduce commands)
    config_arg: str
    #: who decided the queries (``--solver``)
    solver: str
    #: the kernel tree the SARIF locations refer to (SARIF's base directory)
    kernel_base: str
    #: the budget options of the run, repeated in reproduce commands ("" for defaults)
    budget_args: str = ""
    revision_summary: str = ""
    mutant_description: str = ""
    z3_version: str = z3.get_version_string()
    tool_version: str = TOOL_VERSION

    @property
    def solver_version(self) -> str:
        """The solver(s) with versions, as reports print them."""
        from equiv.engine.solvers import version

        return version(self.solver)

    @property
    def verdict(self) -> Verdict:
        return worst(c.verdict for c in self.cells)


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
    #: what the two sides compared are called in the pictures (the HTML hexdump, the
    #: provenance table), and both in words
    sides: tuple[str, str] = ("slow", "fast")
    sides_what: str = "the slow and the fast path"

    def reproduce_command(self, run: RunResult, cell: CellResult,
                          ob: ObligationResult) -> str | None:
        """The command that re-runs a non-proved obligation, when the subject writes its
        own (None: :func:`equiv.report.machine.reproduce` builds it from the run)."""
        return None

    def column_name(self, column: str) -> str:
        """A column as the matrix, JUnit and reproduce commands print it."""
        return column

    def revision_option(self, revision: str) -> str:
        """The option that selects the run's ``revision`` again, for reproduce commands."""
        return f"--revision {revision}"

    def title(self, run: RunResult) -> str:
        """What the run compares, e.g. "ZONE_DEVICE memmap init, slow path (v7.3-rc1) vs
        fast path v11"."""
        return f"{run.title} {run.revision}"

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


__all__ = ["CellResult", "ConfigSummary", "Counterexample", "CounterexampleLoader",
           "ObligationResult", "Presenter", "RunResult", "SubjectConfig"]

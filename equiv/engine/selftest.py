"""The result of a seeded-bug self-test, whatever the subject: every mutant on every cell,
scored.  The subjects' self-tests (:mod:`equiv.selftest`, :mod:`equiv.vmap.selftest`) build
it; :mod:`equiv.report.tables` renders it.

A cell is classified against the mutant's expectation:

========  ================  =====================================================
code      outcome           meaning
========  ================  =====================================================
``K``     killed            REFUTED, and one of the expected names is reported
``WRONG`` wrong-field       REFUTED, but none of the expected names is reported
``SURV``  survived          a difference was expected; PROVED, UNKNOWN or VACUOUS
``-``     not-applicable    a bug that cannot show at this cell (expect None): PROVED
``ok``    ok                an equivalent control: PROVED
``FALSE`` false-report      the cell is expected PROVED (control, or a bug where it
                            cannot show) but the checker did not prove it
========  ================  =====================================================

A bug mutant is *killed* if it is killed on at least one cell and survives on none.  The
self-test is ``ok`` when no cell survived, was caught on the wrong field, or was falsely
reported.
"""

from __future__ import annotations

import enum

from attrs import frozen

from equiv.engine.verdict import Verdict


class Outcome(enum.Enum):
    """How one cell of one mutant came out; the value is the code in the kill matrix."""

    KILLED = "K"
    WRONG_FIELD = "WRONG"
    SURVIVED = "SURV"
    NOT_APPLICABLE = "-"
    OK = "ok"
    FALSE_REPORT = "FALSE"

    @property
    def failure(self) -> bool:
        return self in (Outcome.WRONG_FIELD, Outcome.SURVIVED, Outcome.FALSE_REPORT)


@frozen
class CellOutcome:
    """One (column, row) cell of one mutant (a pgmap type or a path; an order or a bound)."""

    ptype: str
    order: int
    outcome: Outcome
    verdict: Verdict
    #: the fields of which one must be reported, or None (must be PROVED)
    expected: tuple[str, ...] | None
    #: every field name the counterexamples of the cell report (sorted)
    reported: tuple[str, ...]
    seconds: float


@frozen
class MutantRow:
    """One mutant: its cells, in the order of :attr:`SelfTestResult.cells`."""

    name: str
    config: str
    equivalent: bool
    cells: tuple[CellOutcome, ...]

    @property
    def killed(self) -> bool:
        """A bug mutant killed on at least one cell and surviving on none."""
        outs = [c.outcome for c in self.cells]
        return (not self.equivalent and Outcome.KILLED in outs
                and Outcome.SURVIVED not in outs)

    @property
    def failures(self) -> tuple[CellOutcome, ...]:
        return tuple(c for c in self.cells if c.outcome.failure)

    @property
    def status(self) -> str:
        """One word for the row: killed / SURVIVED / equivalent / FALSE-REPORT / WRONG-FIELD."""
        outs = {c.outcome for c in self.cells}
        if Outcome.FALSE_REPORT in outs:
            return "FALSE-REPORT"
        if Outcome.SURVIVED in outs or (not self.equivalent and Outcome.KILLED not in outs):
            return "SURVIVED"
        if Outcome.WRONG_FIELD in outs:
            return "WRONG-FIELD"
        return "equivalent" if self.equivalent else "killed"


@frozen
class SelfTestResult:
    """The kill matrix of a self-test run."""

    #: the (column, row) cells every mutant was checked on, by name
    cells: tuple[tuple[str, int], ...]
    rows: tuple[MutantRow, ...]
    wall_seconds: float
    jobs: int

    @property
    def bugs(self) -> tuple[MutantRow, ...]:
        return tuple(r for r in self.rows if not r.equivalent)

    @property
    def controls(self) -> tuple[MutantRow, ...]:
        return tuple(r for r in self.rows if r.equivalent)

    @property
    def killed(self) -> tuple[MutantRow, ...]:
        return tuple(r for r in self.bugs if r.killed)

    @property
    def kill_rate(self) -> float:
        """Killed bug mutants over all bug mutants (1.0 when there are none)."""
        return len(self.killed) / len(self.bugs) if self.bugs else 1.0

    def count(self, outcome: Outcome) -> int:
        """How many cells (over every mutant) came out ``outcome``."""
        return sum(c.outcome is outcome for r in self.rows for c in r.cells)

    @property
    def ok(self) -> bool:
        """No cell survived, was caught on the wrong field, or was falsely reported."""
        return not any(r.failures for r in self.rows)


__all__ = ["CellOutcome", "MutantRow", "Outcome", "SelfTestResult"]

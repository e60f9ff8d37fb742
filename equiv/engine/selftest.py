"""The result of a seeded-bug self-test, whatever the subject: every mutant on every cell,
scored.  The subjects' self-tests (:mod:`equiv.zone_device.selftest`, :mod:`equiv.vmap.selftest`) build
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

A self-test's cells go through the result cache like any proof cell
(:func:`equiv.engine.runner.run_cached`): a cell's key is its description and the tool's
source fingerprint, and a cached cell is used only when every query answer it rests on is
cached too.  A mutant's *name* is not enough for the key (a test, or a catalogue edited
at run time, can give one name another edit): :func:`describe_edit` turns the edit itself
into data for the key.
"""

from __future__ import annotations

import enum
import hashlib
import types
from typing import Any

import attrs
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


def describe_edit(edit: object) -> Any:
    """A seeded bug's edit as plain data for a cache key: attrs instances and dicts field
    by field, enums by name, functions by qualified name and a digest of their code (so an
    edit that is a function changed at run time gets another key).

    >>> describe_edit({"tail_loop_end_delta": -1, "where": Outcome.KILLED})
    {'tail_loop_end_delta': -1, 'where': 'Outcome.KILLED'}
    >>> describe_edit(describe_edit)["function"]
    'equiv.engine.selftest.describe_edit'
    """
    if attrs.has(type(edit)):
        fields: tuple[attrs.Attribute[Any], ...] = attrs.fields(type(edit))  # type: ignore[arg-type]
        return {"type": type(edit).__qualname__,
                **{f.name: describe_edit(getattr(edit, f.name)) for f in fields}}
    if isinstance(edit, dict):
        return {str(k): describe_edit(v) for k, v in edit.items()}
    if isinstance(edit, (list, tuple)):
        return [describe_edit(v) for v in edit]
    if isinstance(edit, enum.Enum):
        return f"{type(edit).__name__}.{edit.name}"
    code = getattr(edit, "__code__", None)
    if isinstance(code, types.CodeType):
        return {"function": f"{getattr(edit, '__module__', '?')}.{getattr(edit, '__qualname__', '?')}",
                "code": hashlib.sha256(_code_bytes(code)).hexdigest()}
    if edit is None or isinstance(edit, (bool, int, float, str)):
        return edit
    return repr(edit)


def _code_bytes(code: types.CodeType) -> bytes:
    """A code object's bytecode, names and constants, the same in every process (a
    frozenset constant is sorted: ``marshal`` would follow the string hash seed)."""
    parts = [code.co_code, repr(code.co_names).encode()]
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            parts.append(_code_bytes(c))
        elif isinstance(c, frozenset):
            parts.append(repr(sorted(map(repr, c))).encode())
        else:
            parts.append(repr(c).encode())
    return b"\0".join(parts)


__all__ = ["CellOutcome", "MutantRow", "Outcome", "SelfTestResult", "describe_edit"]

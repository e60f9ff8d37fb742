"""Error hierarchy.  Every error says what went wrong and what to do about it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")


class EquivError(Exception):
    """Root of all equiv errors."""


class InputError(EquivError):
    """Bad user input (option value, config).  The CLI prints it on one line and exits 3."""


class ConfigError(InputError):
    """A configuration the kernel would not build (e.g. NODES bits do not fit page->flags)."""


class WidthError(EquivError):
    """A term of the wrong bit width was put into a state; a modelling bug, not a user error."""


class InternalMismatch(EquivError):
    """A solver counterexample did not reproduce in the concrete replay.

    This means the symbolic and concrete evaluations of the model disagree: a bug in equiv,
    never a finding about the kernel.  Report it with the command line that produced it.
    """


def lookup(table: Mapping[str, T], name: str, what: str, more: str = "") -> T:
    """``table[name]``, or an :class:`InputError` naming ``what`` and every valid key.

    >>> lookup({"a": 1}, "b", "thing")
    Traceback (most recent call last):
    ...
    equiv.errors.InputError: unknown thing 'b'; valid: a
    """
    try:
        return table[name]
    except KeyError:
        raise InputError(f"unknown {what} {name!r}; valid: {', '.join(table)}{more}") from None

"""Error hierarchy.  Every error says what went wrong and what to do about it."""

from __future__ import annotations


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

"""Error hierarchy.  Every error says what went wrong and what to do about it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
    equiv.engine.errors.InputError: unknown thing 'b'; valid: a
    """
    try:
        return table[name]
    except KeyError:
        raise InputError(f"unknown {what} {name!r}; valid: {', '.join(table)}{more}") from None


def lookup_all(table: Mapping[str, T], names: Iterable[str], what: str) -> list[T]:
    """``table[n]`` for each name of ``names``, in order, or one :class:`InputError` naming
    every unknown name (``what`` in the plural) and every valid key.

    >>> lookup_all({"a": 1, "b": 2}, ["b", "a"], "thing")
    [2, 1]
    >>> lookup_all({"a": 1, "b": 2}, ["c", "a", "d"], "thing")
    Traceback (most recent call last):
    ...
    equiv.engine.errors.InputError: unknown thing(s) c, d; valid: a, b
    """
    chosen = list(names)
    unknown = [n for n in chosen if n not in table]
    if unknown:
        raise InputError(f"unknown {what}(s) {', '.join(unknown)}; valid: {', '.join(table)}")
    return [table[n] for n in chosen]


def parse_ranges(spec: str, lo: int, hi: int, option: str, what: str, why: str = "",
                 words: tuple[str, ...] = ()) -> list[int]:
    """The integers of ``spec`` ("N", "N-M" or a comma list of those), in order, without
    repeats; an :class:`InputError` naming ``option`` and the valid range otherwise.

    Args:
        spec: the option's value.
        lo, hi: the valid range (inclusive).
        option: the option's name, e.g. "--orders".
        what: what one number is, e.g. "order" (for the out-of-range message).
        why: where the range comes from, appended to the out-of-range message.
        words: other values the option takes (handled by the caller), for the message.

    >>> parse_ranges("1-3,2,5", 0, 8, "--bounds", "bound")
    [1, 2, 3, 5]
    >>> parse_ranges("9", 0, 8, "--bounds", "bound")
    Traceback (most recent call last):
    ...
    equiv.engine.errors.InputError: bound 9 out of range; valid: 0..8
    """
    out: list[int] = []
    try:
        for part in spec.split(","):
            first, _, last = part.strip().partition("-")
            a, b = int(first), int(last) if last else int(first)
            if a > b:
                raise ValueError
            out += range(a, b + 1)
    except ValueError:
        raise InputError(f"bad {option} {spec!r}; valid: {''.join(w + ', ' for w in words)}"
                         "N, N-M or a comma list of those, "
                         f"with {lo} <= N <= {hi}") from None
    bad = [n for n in out if not lo <= n <= hi]
    if bad:
        raise InputError(f"{what} {bad[0]} out of range; valid: {lo}..{hi}{why}")
    return list(dict.fromkeys(out))

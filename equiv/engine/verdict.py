"""Verdicts, their severity order and the exit codes: the one copy of each.

Every obligation of every subject ends in one :class:`Verdict`.  Only PROVED is success:
UNKNOWN (a solver gave up, a budget ran out) and VACUOUS (the assumptions cannot hold, so
nothing was checked) are failures that are not counterexamples.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Verdict(enum.Enum):
    """Outcome of an obligation.  Only PROVED is success."""

    PROVED = "PROVED"
    REFUTED = "REFUTED"
    UNKNOWN = "UNKNOWN"
    VACUOUS = "VACUOUS"


#: Severity order used to summarise several verdicts into one (higher is worse).
RANK = {Verdict.PROVED: 0, Verdict.VACUOUS: 1, Verdict.UNKNOWN: 2, Verdict.REFUTED: 3}


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The summary verdict: REFUTED > UNKNOWN > VACUOUS > PROVED (PROVED when empty).

    >>> worst([Verdict.PROVED, Verdict.VACUOUS, Verdict.UNKNOWN]).value
    'UNKNOWN'
    >>> worst([]).value
    'PROVED'
    """
    return max(verdicts, key=RANK.__getitem__, default=Verdict.PROVED)


#: The process exit code of a run whose summary verdict is the key.
EXIT = {Verdict.PROVED: 0, Verdict.REFUTED: 1, Verdict.UNKNOWN: 2, Verdict.VACUOUS: 2}
#: Exit code of bad input or a usage error (one line on stderr).
EXIT_INPUT = 3
#: Exit code of an internal error (a bug in equiv; the traceback goes to a file).
EXIT_CRASH = 4
#: Exit code of a run stopped by Ctrl-C (SIGINT): 128 + SIGINT, as shells report it.
EXIT_INTERRUPTED = 130
#: Exit code of a run whose output's reader went away (``... | head``): 128 + SIGPIPE, the
#: status shells show for a command killed by a closed pipe; nothing more is written.
EXIT_CLOSED_OUTPUT = 141
#: Exit code of a run stopped by SIGTERM (``kill``, a CI job's timeout): 128 + SIGTERM.
EXIT_TERMINATED = 143


def exit_code(verdicts: Iterable[Verdict]) -> int:
    """The exit code of a run with these verdicts (that of the worst).

    >>> exit_code([Verdict.PROVED, Verdict.REFUTED])
    1
    """
    return EXIT[worst(verdicts)]


__all__ = ["EXIT", "EXIT_CLOSED_OUTPUT", "EXIT_CRASH", "EXIT_INPUT", "EXIT_INTERRUPTED",
           "EXIT_TERMINATED", "RANK", "Verdict", "exit_code", "worst"]

"""What a long run says while it runs: its estimate first, then a progress display.

* :func:`announce`: the one line a run that will take minutes prints on stderr before it
  starts, from an :class:`Estimate` its subject computed from measured figures
  (``equiv/zone_device/estimate.py`` for the zone-device subject, ``equiv.vmap.selftest`` for vmap's
  self-test).
* :func:`progress`: a thin wrapper around tqdm: the display appears only once a run has
  taken more than :data:`DELAY_SECONDS`, only on a stream that is a terminal, and is erased
  when the run ends, so it never reaches a report, a log or a golden file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from attrs import frozen
from tqdm import tqdm

if TYPE_CHECKING:
    from typing import Never, TypeAlias

    _Counter: TypeAlias = tqdm[Never]  # a bar without an iterable, as the stubs type it
else:
    _Counter = tqdm  # not subscriptable at run time

__all__ = ["DELAY_SECONDS", "NOTICE_S", "Estimate", "announce", "progress"]

#: runs shorter than this show no progress display at all
DELAY_SECONDS = 1.0

#: runs estimated below this many seconds print no estimate
NOTICE_S = 60.0


@frozen
class Estimate:
    """What a run is expected to cost, computed before it starts from measured figures."""

    #: wall seconds on the run's jobs: the cold figures of the cells still to run, shared
    seconds: float
    cells: int
    #: the units the jobs share (groups of cells a worker runs together)
    groups: int
    #: cells the cache will serve (not counted in ``seconds``)
    cached: int
    #: what is run when it is not a proof matrix ("self-test"), else ""
    what: str = ""


def announce(got: Estimate | None, jobs: int, err: TextIO) -> None:
    """Print the one-line estimate on ``err`` if the run will take minutes (at most 72
    columns; where the figures come from is in the subject's docs)::

        equiv: about 2 min (95 cells, 0 cached; 2 jobs)
        equiv: about 1 min (self-test: 210 cells, 0 cached; 2 jobs)
    """
    if got is None or got.seconds < NOTICE_S:
        return
    what = f"{got.what}: " if got.what else ""
    err.write(f"equiv: about {max(1, round(got.seconds / 60))} min ({what}{got.cells} cells, "
              f"{got.cached} cached; {jobs} job{'s' if jobs != 1 else ''})\n")
    err.flush()


class _Bar(_Counter):
    """tqdm without its monitor thread: a live thread in the parent when the matrix forks its
    worker processes is what ``fork()`` warns about (and may deadlock on).  The monitor only
    tunes ``miniters``, which a bar advanced once per group does not need."""

    monitor_interval = 0


@contextmanager
def progress(total: int, stream: TextIO, enabled: bool, *,
             delay: float | None = None) -> Iterator[Callable[[int], None]]:
    """Show how many of ``total`` cells are done, on ``stream``, while the block runs.

    Args:
        total: the number of cells of the run.
        stream: where the display goes (the command's error stream).  Nothing is written
            unless ``stream.isatty()``.
        enabled: ``False`` turns the display off (``--quiet``).
        delay: seconds before anything is shown (default :data:`DELAY_SECONDS`); a run that
            ends sooner shows nothing.

    Returns:
        A context manager yielding ``advance(n)``: call it with the number of cells just
        finished (e.g. as ``run_matrix``'s ``on_done``).  On exit the display is erased.
    """
    show = enabled and stream.isatty()
    with _Bar(total=total, file=stream, disable=not show,
              delay=DELAY_SECONDS if delay is None else delay, leave=False,
              desc="proving", unit="cell", dynamic_ncols=True) as bar:

        def advance(n: int) -> None:
            bar.update(n)

        yield advance

"""A progress display for long matrix runs, on a terminal only.

A thin wrapper around tqdm: the display appears only once a run has taken more than
:data:`DELAY_SECONDS`, only on a stream that is a terminal, and is erased when the run ends,
so it never reaches a report, a log or a golden file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from tqdm import tqdm

if TYPE_CHECKING:
    from typing import Never, TypeAlias

    _Counter: TypeAlias = tqdm[Never]  # a bar without an iterable, as the stubs type it
else:
    _Counter = tqdm  # not subscriptable at run time

__all__ = ["DELAY_SECONDS", "progress"]

#: runs shorter than this show no progress display at all
DELAY_SECONDS = 1.0


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

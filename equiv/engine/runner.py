"""Running cells of any subject: here, in local worker processes or on a Dask cluster,
through the result cache, with a wall-clock backstop, and always with deterministic result
order.

A subject describes each cell by a picklable spec and gives three functions: one that runs
a group of cells (in a worker), one that makes the result of a cell whose worker was killed
at the backstop, and, for the cache, the spec's description (its cache key) and a loader of
a cached cell.  :func:`run_cached` is the one cache-then-run loop every subject uses;
:func:`run_groups` runs what the cache did not answer.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, as_completed
from concurrent.futures import TimeoutError as FuturesTimeout
from contextlib import contextmanager
from typing import Any, TypeVar

from equiv.engine.cache import Cache, cell_key
from equiv.engine.errors import InputError
from equiv.engine.results import CellResult
from equiv.engine.verdict import Verdict

S = TypeVar("S")  # a cell's description, whatever the subject
R = TypeVar("R")  # what a worker returns


def _cached_group(cache: Cache, specs: Sequence[S], describe: Callable[[S], dict[str, object]],
                  load: Callable[[S, dict[str, Any]], CellResult]) -> list[CellResult] | None:
    """Every cell of a group from the cache, or None.  A cell entry counts only if it loads
    and every query answer it lists is in the cache too, and valid."""
    out = []
    for sp in specs:
        got = cache.get("cell", cell_key(describe(sp)))
        if got is None:
            return None
        try:
            cell = load(sp, got)
        except (KeyError, TypeError, ValueError) as e:
            cache.problems.append((f"ignored cell entries that do not load ({e or type(e).__name__})",
                                   cell_key(describe(sp))))
            return None
        answers = [cache.get("query", k) for k in cell.query_keys]
        if any(not isinstance(a, dict) or a.get("answer") not in ("sat", "unsat")
               for a in answers):
            return None
        out.append(cell)
    return out


def run_cached(specs: Sequence[S], groups: list[list[int]], *,
               group: Callable[[list[S]], list[CellResult]],
               stopped: Callable[[S, float, str], CellResult],
               describe: Callable[[S], dict[str, object] | None],
               load: Callable[[S, dict[str, Any]], CellResult],
               cache: Cache | None, jobs: int,
               on_done: Callable[[int], None] | None = None,
               backstop_s: float | None = None, scheduler: str | None = None
               ) -> tuple[list[CellResult], float]:
    """Run ``specs`` through the result cache; results in the order of ``specs``.

    Args:
        specs: every cell's description (picklable for workers).
        groups: index lists into ``specs``: the cells of a group run together (in one
            worker), and are taken from the cache only all together.
        group: runs one group's cells (in a worker), results in the group's order.
        stopped: the result of a cell whose worker was killed at the backstop.
        describe: what a cell's result depends on (its cache key), or None for a cell that
            is neither looked up nor stored.
        load: rebuilds a cell from its cache payload (raising KeyError, TypeError or
            ValueError on another shape, which is reported and recomputed).
        cache: the result cache, or None.  Cells without an UNKNOWN obligation, or whose
            every query was decided (``CellResult.decided``), are stored after the run, by
            this process only.
        jobs: worker processes.
        on_done: called here with the number of cells of each group as that group finishes.
        backstop_s: wall-clock limit per group; a worker past it is killed and its cells
            come from ``stopped`` (needs worker processes).
        scheduler: a Dask distributed scheduler's address.

    Returns:
        The cell results in the order of ``specs`` and the wall time in seconds.
    """
    t0 = time.perf_counter()
    results: list[CellResult | None] = [None] * len(specs)
    keys = [describe(sp) for sp in specs]

    def finish(idx: list[int], res: list[CellResult]) -> None:
        for i, r in zip(idx, res, strict=True):
            results[i] = r
            if cache is not None:  # what the worker's own handle of the cache met
                cache.problems.extend(r.cache_problems)
            key = keys[i]
            if cache is not None and key is not None and not r.cached and (r.decided or all(
                    o.verdict is not Verdict.UNKNOWN for o in r.obligations)):
                cache.put("cell", cell_key(key), r.to_cache())
        if on_done is not None:
            on_done(len(idx))

    pending: list[list[int]] = []
    for idx in groups:
        hit = None
        if cache is not None and all(keys[i] is not None for i in idx):
            hit = _cached_group(cache, [specs[i] for i in idx],
                                lambda sp: describe(sp) or {}, load)
        if hit is None:
            pending.append(idx)
        else:
            finish(idx, hit)
    run_groups(specs, pending, group, stopped, finish, jobs=jobs, backstop_s=backstop_s,
               scheduler=scheduler)
    return [r for r in results if r is not None], time.perf_counter() - t0


def run_groups(specs: Sequence[S], pending: list[list[int]],
               group: Callable[[list[S]], list[CellResult]],
               stopped: Callable[[S, float, str], CellResult],
               finish: Callable[[list[int], list[CellResult]], None], *, jobs: int,
               backstop_s: float | None = None, scheduler: str | None = None) -> None:
    """Run groups of cells of any subject: here, in local workers, or on a Dask cluster.

    Args:
        specs: every cell's description (anything ``group`` takes; picklable for workers).
        pending: the groups to run, as index lists into ``specs``.
        group: runs one group's cells (in a worker), results in the group's order.
        stopped: the result of a cell whose worker was killed at the backstop.
        finish: called in this process with each group's indices and results.
        jobs: worker processes; one job (or one group) without a backstop runs here.
        backstop_s: wall-clock limit per group (needs worker processes).
        scheduler: a Dask distributed scheduler's address.
    """
    if scheduler is not None:
        _run_dask(scheduler, specs, pending, finish, group)
    elif (jobs == 1 or len(pending) == 1) and backstop_s is None:
        for idx in pending:
            finish(idx, group([specs[i] for i in idx]))
    elif pending:
        _run_pool(specs, pending, finish, jobs, backstop_s, group, stopped)


@contextmanager
def _workers(jobs: int) -> Iterator[Any]:
    """Up to ``jobs`` forked pebble worker processes that leave Ctrl-C to this one
    (:func:`_ignore_sigint`); a call past its ``timeout`` has its worker killed.  On any
    exception in the block (a failed call, ^C) the workers are stopped, nothing more is
    started, and the exception goes on."""
    from pebble import ProcessPool

    ctx = multiprocessing.get_context("fork")
    with ProcessPool(max_workers=max(1, jobs), context=ctx, initializer=_ignore_sigint) as pool:
        try:
            yield pool
        except BaseException:
            pool.stop()  # type: ignore[no-untyped-call]
            pool.join(timeout=10)
            raise


def _backstop_reason(backstop_s: float | None, per: str) -> str:
    """Why a call whose worker :func:`_workers` killed at the backstop has no result."""
    return (f"wall-clock backstop reached ({backstop_s:g} s per {per}): the worker was "
            "killed; raise it with --backstop-s")


def _run_pool(specs: Sequence[S], pending: list[list[int]],
              finish: Callable[[list[int], list[CellResult]], None], jobs: int,
              backstop_s: float | None, group: Callable[[list[S]], list[CellResult]],
              stopped: Callable[[S, float, str], CellResult]) -> None:
    """Local worker processes (:func:`_workers`: a worker past its group's backstop is
    killed), each group's result as it completes."""
    with _workers(min(jobs, len(pending))) as pool:
        futures: dict[Future[list[CellResult]], list[int]] = {
            pool.schedule(group, args=([specs[i] for i in idx],), timeout=backstop_s): idx
            for idx in pending}
        for fut in as_completed(futures):
            idx = futures[fut]
            try:
                res = fut.result()
            except FuturesTimeout:
                why = _backstop_reason(backstop_s, "group")
                res = [stopped(specs[i], backstop_s or 0.0, why) for i in idx]
            finish(idx, res)


def map_in_workers(fn: Callable[..., R], calls: Sequence[tuple[Any, ...]], jobs: int,
                   order: Sequence[int] | None = None,
                   on_done: Callable[[int], None] | None = None, *,
                   backstop_s: float | None = None,
                   stopped: Callable[[int, str], R] | None = None) -> list[R]:
    """``fn(*args)`` for every ``args`` of ``calls`` in up to ``jobs`` forked worker processes
    (started in ``order``, default as given); the results in the order of ``calls``;
    ``on_done(1)`` as each result is collected (in ``order``).  With ``backstop_s``, a call
    still running after that many seconds (wall clock) has its worker killed and
    ``stopped(i, why)`` as its result (``why`` names the limit and ``--backstop-s``).

    Ctrl-C reaches only this process, which stops the workers and re-raises
    ``KeyboardInterrupt``; an exception in a worker stops the others and is raised here
    (with the worker's traceback as its cause).
    """
    results: dict[int, R] = {}
    with _workers(min(jobs, len(calls))) as pool:
        futures: dict[int, Future[R]] = {
            i: pool.schedule(fn, args=calls[i], timeout=backstop_s)
            for i in (range(len(calls)) if order is None else order)}
        for i, fut in futures.items():
            try:
                results[i] = fut.result()
            except FuturesTimeout:
                if stopped is None:
                    raise
                results[i] = stopped(i, _backstop_reason(backstop_s, "cell"))
            if on_done is not None:
                on_done(1)
    return [results[i] for i in range(len(calls))]


def map_calls(fn: Callable[..., R], calls: Sequence[tuple[Any, ...]], jobs: int, *,
              local: Callable[..., R] | None = None, order: Sequence[int] | None = None,
              on_done: Callable[[int], None] | None = None,
              backstop_s: float | None = None,
              stopped: Callable[[int, str], R] | None = None) -> list[R]:
    """:func:`map_in_workers`, or, when one job or one call is enough and no backstop is
    asked (a backstop needs a worker to kill), in this process one call after another by
    ``local(*args)`` (default ``fn``: ``local`` may use what this process already holds),
    ``on_done(1)`` after each; the results in the order of ``calls`` either way."""
    if (jobs <= 1 or len(calls) <= 1) and backstop_s is None:
        out: list[R] = []
        for args in calls:
            out.append((local or fn)(*args))
            if on_done is not None:
                on_done(1)
        return out
    return map_in_workers(fn, calls, jobs, order, on_done, backstop_s=backstop_s,
                          stopped=stopped)


def _ignore_sigint() -> None:
    """In a worker: Ctrl-C reaches the whole process group, but only the parent handles it
    (it stops the workers), so no worker prints a traceback of its own.  And a worker dies
    with its parent: :func:`die_with_parent`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()


#: prctl(2) option: the signal a process gets when its parent dies (linux/prctl.h)
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a worker process: have Linux send it SIGKILL when the process that forked it dies
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), so a ``kill -9`` of equiv leaves no worker
    solving on for the rest of its query; if the parent is already gone (reparented before
    the call), exit now.  Elsewhere than Linux nothing is done: the worker ends when it next
    talks to its gone parent."""
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != parent or parent == 1:
        os._exit(1)


def _run_dask(address: str, specs: Sequence[S], pending: list[list[int]],
              finish: Callable[[list[int], list[CellResult]], None],
              group: Callable[[list[S]], list[CellResult]]) -> None:
    """The groups as tasks on a Dask distributed cluster; results come back to this process
    (which alone writes cell entries to the cache)."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise InputError("--scheduler needs the distributed extra: pip install "
                         "'equiv[distributed]'") from None
    try:
        client = Client(address, timeout="10s")
    except OSError as e:
        raise InputError(f"cannot reach the Dask scheduler at {address!r}: {e}") from None
    try:
        futures = {client.submit(group, [specs[i] for i in idx], pure=False): tuple(idx)
                   for idx in pending}
        for fut in dask_completed(list(futures)):
            finish(list(futures[fut]), fut.result())
    finally:
        client.close()


__all__ = ["die_with_parent", "map_calls", "map_in_workers", "run_cached", "run_groups"]

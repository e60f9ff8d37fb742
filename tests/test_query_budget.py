"""The vmap subject's queries have a deterministic budget (issue 17): Bitwuzla is stopped
after a number of terminator polls (:data:`equiv.engine.query.BITWUZLA_STEPS_PER_MS` per
millisecond of the query's budget), not after a wall-clock time, so a verdict cannot flip
because the machine is busy.  The whole vmap self-test runs with both cores busy in
tests/test_vmap_check.py (slow), through :func:`busy_cores`."""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections.abc import Iterator

import z3

from equiv.engine.query import BITWUZLA_STEPS_PER_MS, SAT, UNKNOWN, Query


def _factoring(bits: int, n: int) -> list[z3.BoolRef]:
    x, y = z3.BitVecs("x y", 2 * bits)
    return [x * y == n, z3.UGT(x, 1), z3.UGT(y, 1), z3.ULT(x, 1 << bits), z3.ULT(y, 1 << bits)]


def test_a_small_budget_is_unknown_after_exactly_its_steps() -> None:
    q = Query(_factoring(16, 0x7FFFFFFF ^ 0x12345), timeout_ms=3)
    assert q.check() == UNKNOWN
    assert q.steps == 3 * BITWUZLA_STEPS_PER_MS and q.steps_used == q.steps + 1
    assert "deterministic budget: 300 terminator polls for 3 ms" in q.reason


def test_the_steps_a_query_takes_do_not_depend_on_the_clock() -> None:
    """The same query twice, once while this process also burns time in between: the same
    answer after the same number of polls."""
    used = []
    for pause in (0.0, 0.3):
        q = Query(_factoring(12, 3989 * 4001), timeout_ms=60_000)
        time.sleep(pause)
        assert q.check() == SAT
        used.append(q.steps_used)
        x, y = (q.value(z3.BitVec(n, 24)) for n in "xy")
        assert isinstance(x, int) and isinstance(y, int) and x * y == 3989 * 4001
    assert used[0] == used[1] > 0


def _spin(stop: float) -> None:
    while time.monotonic() < stop:
        pass


@contextlib.contextmanager
def busy_cores(n: int) -> Iterator[None]:
    """``n`` processes spinning on the CPU for the duration of the block.  The vmap
    self-test runs inside it (tests/test_vmap_check.py, the slow ``kill_matrix`` fixture):
    every mutant still killed and every harmless variant still proved with the cores busy
    (it FAILED this way when Bitwuzla had a wall-clock limit)."""
    ctx = multiprocessing.get_context("spawn")
    stop = time.monotonic() + 3600
    spinners = [ctx.Process(target=_spin, args=(stop,), daemon=True) for _ in range(n)]
    for p in spinners:
        p.start()
    try:
        yield
    finally:
        for p in spinners:
            p.kill()
            p.join()


def test_busy_cores_spin_and_stop() -> None:
    t0 = time.process_time()
    with busy_cores(1):
        time.sleep(0.5)
    assert time.process_time() - t0 < 0.5  # the spinning is in another process

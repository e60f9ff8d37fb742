"""The vmap subject's queries have a deterministic budget (issue 17): Bitwuzla is stopped
after a number of terminator polls (:data:`equiv.engine.query.BITWUZLA_STEPS_PER_MS` per
millisecond of the query's budget), not after a wall-clock time, so a verdict cannot flip
because the machine is busy."""

from __future__ import annotations

import io
import multiprocessing
import time

import pytest
import z3

from equiv.engine.query import BITWUZLA_STEPS_PER_MS, SAT, UNKNOWN, Query
from equiv.proofs import main


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


@pytest.mark.slow
def test_vmap_self_test_passes_with_the_cores_busy() -> None:
    """``--subject vmap --self-test`` while two busy loops occupy both cores: every mutant is
    still killed, every harmless variant still proved (it FAILED this way when Bitwuzla had
    a wall-clock limit)."""
    ctx = multiprocessing.get_context("spawn")
    stop = time.monotonic() + 3600
    spinners = [ctx.Process(target=_spin, args=(stop,), daemon=True) for _ in range(2)]
    for p in spinners:
        p.start()
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(["--subject", "vmap", "--self-test", "--no-cache"], out=out, err=err)
    finally:
        for p in spinners:
            p.kill()
    assert code == 0, out.getvalue()[-3000:] + err.getvalue()[-1000:]

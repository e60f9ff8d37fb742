"""The progress display of long runs, and the per-group callback of the matrix that drives it."""

from __future__ import annotations

import io
import time

import pytest

from equiv.engine.results import CellResult
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.proofs import main
from equiv.report import progress as progress_module
from equiv.report.progress import DELAY_SECONDS, progress
from equiv.zone_device import cell as matrix
from equiv.zone_device.cell import CellSpec, run_matrix

SMALL = ["--no-cache", "--types", "GENERIC", "--orders", "0-1", "--jobs", "1"]

_run_group = matrix.run_group


class Terminal(io.StringIO):
    """An error stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _slow_group(specs: list[CellSpec]) -> list[CellResult]:
    """``run_group`` taking at least 0.1 s (module level, so worker processes can unpickle it)."""
    time.sleep(0.1)
    return _run_group(specs)


def _order0_last(specs: list[CellSpec]) -> list[CellResult]:
    """``run_group`` whose order-0 group finishes after the others."""
    if specs[0].order == 0:
        time.sleep(2.0)
    return _run_group(specs)


def run(argv: list[str], err: io.StringIO) -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, out=out, err=err)
    return code, out.getvalue()


@pytest.fixture
def slow_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every group take 0.1 s and the display appear after 0.05 s: a run 'over the delay'
    without a test that takes over a second."""
    monkeypatch.setattr(matrix, "run_group", _slow_group)
    monkeypatch.setattr(progress_module, "DELAY_SECONDS", 0.05)


class TestProgressDisplay:
    def test_default_delay_is_one_second(self) -> None:
        """Runs under a second show nothing."""
        assert 1.0 == DELAY_SECONDS

    @pytest.mark.usefixtures("slow_run")
    def test_shown_on_a_terminal_past_the_delay(self) -> None:
        """A run longer than the delay shows cells done out of the total on a terminal's
        error stream, then erases it; the report is unchanged."""
        err = Terminal()
        code, out = run([*SMALL, "--no-times"], err)
        assert 0 == code
        assert "proving:" in err.getvalue() and "/2" in err.getvalue()
        assert err.getvalue().endswith("\r")  # leave=False: the line is blanked at the end
        assert run([*SMALL, "--no-times", "--quiet"], Terminal())[1] == out

    @pytest.mark.usefixtures("slow_run")
    def test_quiet(self) -> None:
        """--quiet: no display even on a terminal."""
        err = Terminal()
        code, _ = run([*SMALL, "--quiet"], err)
        assert 0 == code
        assert "" == err.getvalue()

    @pytest.mark.usefixtures("slow_run")
    def test_not_a_terminal(self) -> None:
        """No display when the error stream is not a terminal (a file, a pipe, CI logs)."""
        err = io.StringIO()
        code, _ = run(SMALL, err)
        assert 0 == code
        assert "" == err.getvalue()

    def test_nothing_for_a_short_run(self) -> None:
        """A run under a second shows nothing, even on a terminal."""
        err = Terminal()
        code, _ = run(["--types", "GENERIC", "--orders", "0", "--jobs", "1"], err)
        assert 0 == code
        assert "" == err.getvalue()

    def test_advance_counts_cells(self) -> None:
        """``advance(n)`` adds n cells to the count shown."""
        err = Terminal()
        with progress(5, err, enabled=True, delay=0) as advance:
            advance(2)
            time.sleep(0.11)  # past tqdm's minimum refresh interval
            advance(3)
        assert "5/5" in err.getvalue()


def _specs() -> list[CellSpec]:
    return [CellSpec(config="x86_64-default", revision="v11", ptype=t, order=o)
            for o in (0, 1, 2) for t in (MemoryType.GENERIC, MemoryType.PRIVATE)]


class TestOnDone:
    @pytest.mark.parametrize("jobs", [1, 2])
    def test_called_per_group_with_its_cells(self, jobs: int) -> None:
        """``on_done`` gets the cell count of each group (one per order), adding up to all
        the cells; results are in spec order."""
        specs = _specs()
        calls: list[int] = []
        cells, _, _ = run_matrix(specs, jobs, on_done=calls.append)
        assert [2, 2, 2] == calls
        assert len(specs) == sum(calls)
        assert [(s.ptype.kname, s.order) for s in specs] == [(c.ptype, c.order) for c in cells]

    def test_order_kept_when_groups_finish_out_of_order(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The order-0 group (three cells, interleaved with the others in the specs) finishes
        last in the worker pool; its cells still keep their places in the results."""
        monkeypatch.setattr(matrix, "run_group", _order0_last)
        cell = [(0, MemoryType.GENERIC), (1, MemoryType.GENERIC), (0, MemoryType.PRIVATE),
                (2, MemoryType.GENERIC), (0, MemoryType.COHERENT)]
        specs = [CellSpec(config="x86_64-default", revision="v11", ptype=t, order=o) for o, t in cell]
        finished: list[int] = []
        cells, _, jobs = run_matrix(specs, 3, on_done=finished.append)
        assert 3 == jobs
        assert [1, 1, 3] == finished  # the one-cell groups of orders 1 and 2 came first
        assert [(t.kname, o) for o, t in cell] == [(c.ptype, c.order) for c in cells]
        assert all(c.verdict is Verdict.PROVED for c in cells)

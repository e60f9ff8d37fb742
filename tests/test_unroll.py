"""The bounded-unrolling baseline of bench/unrolling.py is a real check: it proves what the
induction proves on small ranges and refutes a seeded bug the same way."""

from __future__ import annotations

from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.zone_device.cell import CellSpec, cell_paths
from equiv.zone_device.check import CheckRequest, check_cell
from equiv.zone_device.obligations import build_cell


def _unrolled(order: int, mutant: str | None = None) -> tuple[Verdict, list[str], list[str]]:
    sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC,
                                        order=order, mutant=mutant))

    def bound(loop: str) -> int:
        return 2 if "heads" in loop else (1 << order) if "tails" in loop else 2

    problem = build_cell(sc, rev, fast, unroll=bound)
    res = check_cell(CheckRequest(problem=problem, minimise=False))
    refuted = [o.name for o in res.obligations if o.verdict is Verdict.REFUTED]
    return res.verdict, refuted, [n for n, _ in problem.assumptions]


def test_unrolled_cell_is_proved_with_its_bounds_assumed() -> None:
    verdict, _, assumed = _unrolled(2)
    assert verdict is Verdict.PROVED
    assert "loop memmap_init_compound.tails runs at most 4 times [U: bounded unrolling]" in assumed


def test_unrolled_cell_refutes_a_seeded_bug() -> None:
    verdict, refuted, _ = _unrolled(2, "mutant_tail_keeps_type_refcount")
    assert verdict is Verdict.REFUTED
    assert set(refuted) == {"tail1_equal", "tail2_equal", "tail_equal"}

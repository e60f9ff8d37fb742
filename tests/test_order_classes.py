"""Order classes (equiv.memmap.order_classes, equiv.zone_device.cell.run_group): one proof with the
compound order a symbolic input stands for every order of its class only when it proves
everything, and a bug at any one order of a class keeps it from doing so.

The controls here are the catalogue's seeded bugs (each expected to show from some order
on: the class probe must fail wherever one order of the class has a kill) and one bug
nothing lists: a store that is wrong at order 12 only, in the middle of a class.
"""

from __future__ import annotations

import pytest
import z3

from equiv.config import preset
from equiv.engine import bv
from equiv.engine.verdict import Verdict
from equiv.loops import Ctx
from equiv.memmap import Inputs, MemoryType, Scenario, SymbolicOrder, order_classes
from equiv.page_model import Layout, Memory, ite_page
from equiv.template_path import fast_path, revision
from equiv.zone_device.cell import CellSpec, cell_paths, run_cell, run_matrix
from equiv.zone_device.check import CheckRequest, check_cell
from equiv.zone_device.mutants import MUTANTS
from equiv.zone_device.obligations import build_cell

L = Layout.from_config(preset("x86_64-default"))


class TestClasses:
    def test_cut_where_a_static_decision_changes(self) -> None:
        """x86_64-default deduplicates vmemmap from order 8 on; arm64-64k (1024 struct
        pages per vmemmap page) from 12; kmsan's 80-byte struct page never (one class)."""
        assert [(2, 7), (8, 18)] == order_classes(L, range(19))
        assert [(2, 11), (12, 18)] == order_classes(Layout.from_config(preset("arm64-64k")),
                                                    range(19))
        assert [(2, 18)] == order_classes(Layout.from_config(preset("x86_64-kmsan")), range(19))

    def test_only_runs_of_two_or_more_asked_orders(self) -> None:
        assert [] == order_classes(L, [0, 1, 2, 9])
        assert [(3, 4), (8, 9)] == order_classes(L, [1, 3, 4, 6, 8, 9])
        assert [(6, 7), (8, 9)] == order_classes(L, [6, 7, 8, 9])  # cut at 8 though asked

    def test_a_class_has_no_concrete_order(self) -> None:
        sc = Scenario(L, None, 2, order_hi=7)
        with pytest.raises(SymbolicOrder):
            _ = sc.order
        with pytest.raises(SymbolicOrder):
            _ = sc.stride
        assert sc.order_at_least(2) and not Scenario(L, None, 1).order_at_least(2)
        with pytest.raises(ValueError, match="static decision"):
            Scenario(L, None, 7, order_hi=8)
        with pytest.raises(ValueError, match="lo < hi"):
            Scenario(L, None, 1, order_hi=3)


def _probe(name: str | None, lo: int, hi: int) -> Verdict:
    spec = CellSpec(config="x86_64-default", revision="v11", ptype=None, order=lo, mutant=name, order_hi=hi)
    return run_cell(spec, probe=True).verdict


# a few of the catalogue's kinds of bug: a loop one past its end (a frame lemma fails), a
# write to the wrong page, a missing step, and two harmless edits; every one in the slow
# test
SOME = ("mutant_tail_loop_one_past_end", "mutant_tail_copy_to_next_page",
        "mutant_no_prep_compound_head", "harmless_tail_loop_ne", "harmless_set_head_after_tails")


@pytest.mark.parametrize("name", SOME)
def test_class_probe_fails_exactly_where_an_order_of_it_has_a_kill(name: str) -> None:
    _class_probe_agrees(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(MUTANTS) - set(SOME)))
def test_every_control_class_probe_agrees(name: str) -> None:
    _class_probe_agrees(name)


def _class_probe_agrees(name: str) -> None:
    m = MUTANTS[name]
    layout = cell_paths(CellSpec(config=m.config, revision="v11", ptype=None, order=0, mutant=name))[0].layout
    for lo, hi in order_classes(layout, range(19)):
        spec = CellSpec(config=m.config, revision="v11", ptype=None, order=lo, mutant=name, order_hi=hi)
        proved = run_cell(spec, probe=True).verdict is Verdict.PROVED
        kill = any(m.expect(t, o) is not None for t in MemoryType for o in range(lo, hi + 1))
        assert proved != kill, (name, lo, hi, proved)


def _wrong_at_order_12(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
    """v11, then the head of the first compound gets a wrong ``index`` at order 12 only."""
    mem = fast_path(revision("v11"))(ctx, sc, inp)
    zero = bv.const_like(inp.start_pfn, 0)
    page = mem.read(zero, zero)
    bad = page.set(L, "index", page.get(L, "index") ^ 1, "seeded: index ^= 1 at order 12")
    at12 = (z3.simplify(sc.order_v == 12) if not isinstance(sc.order_v, int)
            else sc.order_v == 12)
    return mem.write(zero, zero, ite_page(at12, bad, page))


def test_a_bug_at_one_order_in_the_middle_of_a_class() -> None:
    """Nothing lists it: wrong at order 12 alone.  The class 8-18 is not proved by its one
    proof; order 12 is REFUTED naming ``index``, orders 11 and 13 are PROVED."""
    rev = revision("v11")
    cls = build_cell(Scenario(L, MemoryType.GENERIC, 8, order_hi=18), rev, _wrong_at_order_12,
                     first_form=True)
    assert check_cell(CheckRequest(problem=cls, probe=True)).verdict is not Verdict.PROVED
    for order, want in ((11, Verdict.PROVED), (12, Verdict.REFUTED), (13, Verdict.PROVED)):
        res = check_cell(CheckRequest(problem=build_cell(Scenario(L, MemoryType.GENERIC, order),
                                                         rev, _wrong_at_order_12)))
        assert want is res.verdict, order
        if want is Verdict.REFUTED:
            fields = {f for ob in res.obligations if ob.counterexample is not None
                      for d in ob.counterexample.diffs for f in d.fields}
            assert "index" in fields


def test_matrix_class_rows_match_per_order_rows() -> None:
    """The matrix over orders 2-4 and 8-9: one proof per class, marked; the same verdicts
    as each order's own cells (checked without classes: one order per run)."""
    specs = [CellSpec(config="x86_64-default", revision="v11", ptype=t, order=o) for o in (2, 3, 4, 8, 9)
             for t in (MemoryType.FS_DAX, MemoryType.GENERIC)]
    cells, _, _ = run_matrix(specs, jobs=1)
    assert {(2, 4), (8, 9)} == {c.row_class for c in cells}
    alone = [run_matrix([s], jobs=1)[0][0] for s in specs[::4]]
    assert all(c.verdict is Verdict.PROVED for c in cells + alone)
    assert all(c.row_class is None for c in alone)


def test_refuted_class_falls_back_to_each_order() -> None:
    """A seeded bug refuted at every order of a class: each order's cells are run and
    refuted on their own, with their own counterexample, as without classes."""
    specs = [CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=o,
                      mutant="mutant_no_prep_compound_head", minimise=False) for o in (2, 3)]
    cells, _, _ = run_matrix(specs, jobs=1)
    assert [Verdict.REFUTED, Verdict.REFUTED] == [c.verdict for c in cells]
    assert [2, 3] == [c.order for c in cells]
    assert all(c.row_class is None for c in cells)
    assert all(any(ob.counterexample is not None for ob in c.obligations) for c in cells)


def test_an_order_of_the_class_left_vacuous_stops_the_probe() -> None:
    """A seeded vacuity nothing lists: an assumption that no input has order 12.  The one
    proof over 8-18 would hold (it only drops inputs), so the per-order coverage check
    (equiv.zone_device.check.order_not_covered) must name order 12; without the seed it passes."""
    from attrs import evolve

    sc = Scenario(L, MemoryType.GENERIC, 8, order_hi=18)
    cls = build_cell(sc, revision("v11"), first_form=True)
    assert check_cell(CheckRequest(problem=cls, probe=True)).verdict is Verdict.PROVED
    seeded = evolve(cls, assumptions=[*cls.assumptions,
                                      ("seeded: no order 12", sc.order_v != 12)])
    res = check_cell(CheckRequest(problem=seeded, probe=True))
    assert res.verdict is not Verdict.PROVED
    assert any("order 12's vacuity or reach check" in (o.reason or "")
               for o in res.obligations), [o.reason for o in res.obligations]

"""One name per struct page (issue: a loop one past the end of the range was PROVED).

The model's memory names each struct page once (equiv.page_model.Memory), every struct page
outside the range's compounds is observed (the ``outside`` role), and each loop's frame is
bounded by the range, so a store outside the range is REFUTED with the struct page it
corrupts named: ``end_pfn``, the compound after the range, or ``start_pfn - 1``."""

from __future__ import annotations

import pytest

from equiv.engine.results import CellResult
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.zone_device.cell import CellSpec, run_cell
from equiv.zone_device.selftest import names_page


def _cell(mutant: str, order: int, ptype: MemoryType = MemoryType.GENERIC) -> CellResult:
    return run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=ptype, order=order,
                             mutant=mutant, minimise=False))


def _named(res: CellResult, page: str) -> list[str]:
    """The obligations whose counterexample names ``page``."""
    return [o.name for o in res.obligations
            if o.counterexample is not None and names_page(o.counterexample, page)]


@pytest.mark.parametrize("order", [1, 2, 9])
def test_tail_loop_past_the_range_is_refuted_naming_end_pfn(order: int) -> None:
    """The template tail loop runs one page past the end in the last compound: REFUTED,
    on the tail loop's frame lemma, with the struct page of end_pfn, the loop and the
    iteration named (order 9: the solver has to leave the deduplicated vmemmap, where the
    extra store lands on a tail of the same compound, for an altmap or early section)."""
    res = _cell("mutant_tail_loop_one_past_end_last_compound", order)
    assert res.verdict is Verdict.REFUTED
    assert _named(res, "end_pfn") == ["memmap_init_compound.template_tails:frame-write"]
    (ob,) = [o for o in res.obligations if o.verdict is Verdict.REFUTED]
    cx = ob.counterexample
    assert cx is not None and cx.frame is not None
    assert f"iteration {1 << order} of memmap_init_compound.template_tails" in cx.frame
    assert "end_pfn: the struct page right after the device range" in cx.frame
    assert {"flags", "compound_info"} <= {n for d in cx.diffs for n in d.fields}
    assert all(d.slow_provenance == ((),) for d in cx.diffs)  # the slow path never wrote it


@pytest.mark.slow
@pytest.mark.parametrize("order", range(1, 19))
def test_tail_loop_past_the_range_is_refuted_at_every_order(order: int) -> None:
    """Orders 1..18 (at order 0 there is no tail loop: the heads loop's overrun is the
    case there, below)."""
    res = _cell("mutant_tail_loop_one_past_end_last_compound", order)
    assert res.verdict is Verdict.REFUTED
    assert _named(res, "end_pfn")


@pytest.mark.parametrize("order", [8, 9])
def test_the_tail_loop_knob_is_refuted_where_dedup_made_it_unknown(order: int) -> None:
    """FastVariant(tail_loop_end_delta=1) came out UNKNOWN from order 8 (a deduplicated
    compound broke a frame lemma by luck); now REFUTED with end_pfn named."""
    res = _cell("mutant_tail_loop_one_past_end", order)
    assert res.verdict is Verdict.REFUTED and _named(res, "end_pfn")


@pytest.mark.parametrize("order", [0, 2])
def test_heads_loop_past_the_range_names_the_next_compound(order: int) -> None:
    res = _cell("mutant_heads_loop_one_past_end", order)
    assert res.verdict is Verdict.REFUTED and _named(res, "past_end")


@pytest.mark.parametrize("order", [0, 9])
def test_a_head_before_the_range_is_refuted_on_the_outside_role(order: int) -> None:
    """A straight-line store at start_pfn - 1 (no loop involved): the outside role sees it."""
    res = _cell("mutant_first_head_before_range", order, MemoryType.PRIVATE)
    assert res.verdict is Verdict.REFUTED
    assert "outside_equal" in _named(res, "before_start")


def test_the_slow_path_tail_loop_past_its_compound_is_refuted() -> None:
    """The same overrun in the base slow path's memmap_init_compound (a slow-path edit
    checked against the slow path)."""
    res = _cell("mutant_slow_tail_loop_one_past", 2)
    assert res.verdict is Verdict.REFUTED and _named(res, "end_pfn")


@pytest.mark.parametrize("order", [2, 9])
def test_a_loop_bound_written_ne_is_proved(order: int) -> None:
    """The harmless control: `pfn != end` for `pfn < end` runs the same iterations."""
    assert _cell("harmless_tail_loop_ne", order).verdict is Verdict.PROVED


def test_an_overrun_that_is_overwritten_later_is_never_proved() -> None:
    """The tail loop runs one page past every compound: in all but the last the extra store
    is the next head, initialised again after.  The frame lemma fails there too; where the
    replay finds no difference it says UNKNOWN (and here the last compound's store is found
    and refuted)."""
    res = _cell("mutant_tail_loop_one_past_end", 2)
    lemma = next(o for o in res.obligations
                 if o.name == "memmap_init_compound.template_tails:frame-write")
    assert lemma.verdict is not Verdict.PROVED

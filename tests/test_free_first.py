"""When a query is tried under the order-free assumptions first
(:func:`equiv.zone_device.source.clemmas.free_first`): only a speed matter, so the test
pins the policy, not a verdict."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import z3

from equiv.zone_device.source import clemmas


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    saved = (dict(clemmas.FREE_PROVED), set(clemmas.FREE_FAILED), dict(clemmas.FREE_SEEN))
    clemmas.FREE_PROVED.clear()
    clemmas.FREE_FAILED.clear()
    clemmas.FREE_SEEN.clear()
    yield
    clemmas.FREE_PROVED.clear()
    clemmas.FREE_FAILED.clear()
    clemmas.FREE_SEEN.clear()
    clemmas.FREE_PROVED.update(saved[0])
    clemmas.FREE_FAILED.update(saved[1])
    clemmas.FREE_SEEN.update(saved[2])


def _query(name: str) -> tuple[tuple[int, ...], list[z3.ExprRef]]:
    t = z3.BitVec(name, 64) == 0
    return (t.get_id(),), [t]


def test_a_query_is_tried_there_only_when_the_next_cell_asks_it_again() -> None:
    key, terms = _query("q")
    assert not clemmas.free_first(("lemma", "0"), key, terms)  # first sight: every assumption
    assert clemmas.free_first(("lemma", "0"), key, terms)  # the same query again: try it
    clemmas.FREE_PROVED[key] = terms
    assert clemmas.free_first(("lemma", "0"), key, terms)  # proved: taken


def test_a_query_the_order_enters_is_never_tried_there() -> None:
    k1, t1 = _query("at_order_9")
    k2, t2 = _query("at_order_10")
    assert not clemmas.free_first(("lemma", "1"), k1, t1)
    assert not clemmas.free_first(("lemma", "1"), k2, t2)  # the name's query changed
    assert ("lemma", "1") in clemmas.FREE_FAILED
    assert not clemmas.free_first(("lemma", "1"), k2, t2)


def test_a_conjunct_not_valid_alone_is_not_tried_alone_again() -> None:
    """:data:`~equiv.zone_device.source.clemmas.ALONE_FAILED`: a conjunct that needs the
    assumptions is named there after its first try alone; one valid alone is not; both are
    proved each time (the policy changes which solver answers, never the answer)."""
    from equiv.loops import Lemma

    x = z3.BitVec("alone.x", 64)
    needs = Lemma(loop="test loop", kind="bound", premise=z3.BoolVal(True),
                  claim=z3.And(z3.ULT(x, 10), x + 1 != x))  # the first needs x < 5
    saved = set(clemmas.ALONE_FAILED)
    clemmas.ALONE_FAILED.clear()
    try:
        for _ in range(2):
            assert clemmas.prove_lemmas([needs], [z3.ULT(x, 5)], 10_000).why == ""
            assert clemmas.ALONE_FAILED == {("0", "test loop", "bound", "0")}
        wrong = Lemma(loop="test loop", kind="bound", premise=z3.BoolVal(True),
                      claim=z3.And(z3.ULT(x, 4), x + 1 != x))
        assert "bound of test loop: sat" in clemmas.prove_lemmas([wrong], [z3.ULT(x, 5)],
                                                                  10_000).why
    finally:
        clemmas.ALONE_FAILED.clear()
        clemmas.ALONE_FAILED.update(saved)


def test_the_oracle_leaves_its_solvers_as_it_found_them() -> None:
    """:meth:`~equiv.zone_device.source.cstate.Oracle._check` asserts a condition in a scope
    of its own: after a check the case solvers hold their assertions only, and a condition
    asked once does not constrain the next."""
    from equiv.zone_device.source.cstate import Oracle

    x = z3.BitVec("oracle.x", 64)
    o = Oracle([z3.ULT(x, 100)], [(x == 7, []), (x != 7, [])], timeout_ms=10_000)
    sizes = [len(s.assertions()) for s, _ in o.cases]
    assert o.feasible(x == 3) and not o.feasible(z3.UGT(x, 200)) and o.feasible(x != 3)
    assert [len(s.assertions()) for s, _ in o.cases] == sizes

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

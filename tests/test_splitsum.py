"""The split-sum rewrite (:mod:`equiv.engine.splitsum`): exact, and it folds a loop
summary's owner and block arithmetic on a pfn ``first + (c << w) + t``."""

from __future__ import annotations

import itertools

import pytest
import z3

from equiv.engine.splitsum import split_sums


def _valid(f: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(f))
    return s.check() == z3.unsat


def _same(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    return _valid(a == b)


@pytest.mark.parametrize("w", [1, 2, 9, 18])
def test_owner_and_block_fold(w: int) -> None:
    """The iteration owning tail ``t`` of compound ``c`` of a loop starting at compound 3,
    and whether the pfn lies in that iteration's block, as the summaries ask it."""
    c, first = z3.BitVec("c", 64), z3.BitVec("first", 64)
    t = z3.ZeroExt(64 - w, z3.BitVec("t", w))
    n = first + (c << w) + t
    q0 = first + (3 << w)
    k = z3.LShR(n - q0, w)
    block = z3.ULT(n - (q0 + (k << w)), 1 << w)
    inner = n - (q0 + (k << w) + 2)
    for e in (k, block, inner):
        e = z3.simplify(e)
        r = split_sums(e)
        assert _same(e, r), (e, r)
    assert z3.is_true(split_sums(z3.simplify(block)))
    assert _same(split_sums(z3.simplify(inner)), t - 2)
    # the owner is c - 3 in the high bits: no division left in the term
    assert "Extract(63" not in str(split_sums(z3.simplify(k)))


def test_exact_on_mixed_sums() -> None:
    """Sums the rule applies to and sums it must leave alone (two non-zero low parts, a
    term that is not a concatenation), each equal to its rewrite for all values."""
    a, b = z3.BitVec("a", 56), z3.BitVec("b", 56)
    x, y = z3.BitVec("x", 8), z3.BitVec("y", 8)
    z = z3.BitVec("z", 64)
    terms = [z3.Concat(a, x), z3.Concat(b, z3.BitVecVal(0, 8)), z3.Concat(a, y),
             z3.BitVecVal(0x1FF, 64), z3.BitVecVal(-0x300, 64), z, z3.ZeroExt(56, x)]
    for k in (2, 3):
        for combo in itertools.combinations(terms, k):
            e = z3.simplify(z3.Sum(*combo))
            r = split_sums(e)
            assert _same(e, r), (e, r)
    e = z3.simplify(z3.Concat(a, x) - z3.Concat(a, z3.BitVecVal(0, 8)) + 5)
    assert _same(split_sums(e), z3.ZeroExt(56, x) + 5)
    assert "a" not in {str(v) for v in z3.z3util.get_vars(split_sums(e))}


def test_leaves_other_terms() -> None:
    z = z3.BitVec("z", 64)
    e = z3.simplify(z * 3 + 7)
    assert split_sums(e).eq(e)

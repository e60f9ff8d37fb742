"""Dual-domain helpers the page-table subject needs beyond :mod:`equiv.engine.bv`.

Every helper takes and returns values of one domain: z3 terms (symbolic run) or
:class:`equiv.engine.bv.CBV` / Python ``bool`` (concrete run of the same model).  Pure functions,
no subject knowledge; the kernel bit tricks they implement (``__ffs``, ``__fls``,
``ilog2``, ``IS_ALIGNED``) are named after their ``include/linux`` counterparts.

>>> from equiv.engine.bv import CBV
>>> ffs(CBV(0x30, 36), CBV(0, 32))[0].value, fls(CBV(0x30, 36), 36).value
(4, 5)
>>> is_aligned(CBV(0x40, 36), 4), is_aligned(CBV(0x48, 36), 4)
(True, False)
>>> umin(CBV(3, 8), CBV(5, 8)).value, pow2(CBV(3, 32), 36).value
(3, 8)
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from equiv.engine import bv
from equiv.engine.bv import CBV, Cond, Val


def zext(x: Val, width: int) -> Val:
    """Zero-extend (or keep) ``x`` to ``width`` bits."""
    w = x.size()
    if w == width:
        return x
    if w > width:
        return bv.extract(x, width - 1, 0)
    if isinstance(x, CBV):
        return CBV(x.value, width)
    return z3.ZeroExt(width - w, x)


def trunc(x: Val, width: int) -> Val:
    """The low ``width`` bits of ``x`` (C's cast to a narrower unsigned type)."""
    return x if x.size() == width else bv.extract(x, width - 1, 0)


def bit(x: Val, b: int) -> Cond:
    """Bit ``b`` of ``x`` is set."""
    return bv.eq(bv.extract(x, b, b), 1)


def is_aligned(x: Val, nbits: int) -> Cond:
    """The kernel's ``IS_ALIGNED(x, 1 << nbits)``: the low ``nbits`` bits are zero."""
    if nbits <= 0:
        return True
    return bv.eq(bv.extract(x, nbits - 1, 0), 0)


def is_aligned_dyn(x: Val, k: Val) -> Cond:
    """``IS_ALIGNED(x, 1 << k)`` for a run-time ``k`` (0 <= k < 32)."""
    mask = pow2(k, x.size(), 31) - 1
    return bv.eq(x & mask, 0)


def umin(a: Val, b: Val) -> Val:
    """Unsigned ``min(a, b)``."""
    return bv.ite(bv.ult(a, b), a, b)


def umax(a: Val, b: Val) -> Val:
    """Unsigned ``max(a, b)``."""
    return bv.ite(bv.ult(a, b), b, a)


def pow2(k: Val, width: int, kmax: int | None = None) -> Val:
    """``1 << k`` in ``width`` bits (0 when ``k >= width``, like z3's ``bvshl``).

    With ``kmax``, a decoder of the values 0..kmax (cheaper than a barrel shifter); any
    larger ``k`` then yields 0, so pass ``kmax`` only where the caller bounds ``k`` (or
    where ``k >= width`` anyway).
    """
    top = width - 1 if kmax is None else min(kmax, width - 1)
    if isinstance(k, CBV):
        return CBV(1 << k.value if k.value <= top else 0, width)
    out: Val = z3.BitVecVal(0, width)
    for b in range(top, -1, -1):
        out = bv.ite(bv.eq(k, b), z3.BitVecVal(1 << b, width), out)
    return out


def pow2floor(x: Val, nbits: int, twice: bool = False) -> Val:
    """``1 << __fls(x)`` (``rounddown_pow_of_two``) looking at the low ``nbits`` bits (the
    caller states that higher bits are zero); ``twice``: ``1 << fls(x)``, twice that; 0 for
    ``x == 0``."""
    w = x.size()
    out: Val = bv.const_like(x, 0, w)
    for b in range(min(nbits, w)):
        v = (1 << (b + 1)) if twice else (1 << b)
        out = bv.ite(bit(x, b), bv.const_like(x, v & ((1 << w) - 1), w), out)
    return out


def shl(x: Val, k: Val) -> Val:
    """``x << k`` with ``k`` of any width (bits shifted out are lost)."""
    w = x.size()
    if isinstance(x, CBV) and isinstance(k, CBV):
        return CBV(x.value << k.value if k.value < w else 0, w)
    xs = bv._z(x, w)
    ks = zext(k, w) if k.size() <= w else trunc(k, w)
    out: Val = xs << bv._z(ks, w)
    return out


def select(cases: Sequence[tuple[Cond, Val]], default: Val) -> Val:
    """The value of the first case whose condition holds, else ``default``."""
    out = default
    for c, v in reversed(cases):
        out = bv.ite(c, v, out)
    return out


def select_cond(cases: Sequence[tuple[Cond, Cond]], default: Cond) -> Cond:
    """:func:`select` for conditions."""
    out = default
    for c, v in reversed(cases):
        out = bv.or_(bv.and_(c, v), bv.and_(bv.not_(c), out))
    return out


def ffs(x: Val, undefined: Val) -> tuple[Val, Cond]:
    """The kernel's ``__ffs(x)``: index of the lowest set bit, as a value of the width of
    ``undefined``; for ``x == 0`` (undefined behaviour in C) the result is ``undefined``.

    Returns:
        the index, and whether ``x == 0`` (the undefined case was taken).
    """
    w = undefined.size()
    out: Val = undefined
    for b in reversed(range(x.size())):
        out = bv.ite(bit(x, b), bv.const_like(undefined, b, w), out)
    return out, bv.eq(x, 0)


def fls(x: Val, nbits: int, width: int = 32) -> Val:
    """The kernel's ``__fls(x)`` (= ``ilog2(x)``): index of the highest set bit, looking at
    the low ``nbits`` bits only (the caller states that higher bits are zero); 0 for 0."""
    out: Val = bv.const_like(x, 0, width)
    for b in range(min(nbits, x.size())):
        out = bv.ite(bit(x, b), bv.const_like(x, b, width), out)
    return out


def cond_eq(a: Cond, b: Cond) -> Cond:
    """``a == b`` for conditions."""
    return bv.or_(bv.and_(a, b), bv.and_(bv.not_(a), bv.not_(b)))


def implies(a: Cond, b: Cond) -> Cond:
    """``a -> b``."""
    return bv.or_(bv.not_(a), b)


def to_bool(c: Cond) -> bool:
    """A concrete condition as a Python bool (raises on a z3 term)."""
    if isinstance(c, bool):
        return c
    raise TypeError("symbolic condition where a concrete one was expected")


def to_int(x: Val) -> int:
    """A concrete value as a Python int (raises on a z3 term)."""
    if isinstance(x, CBV):
        return x.value
    raise TypeError("symbolic value where a concrete one was expected")

"""Bit-vector values in two domains: symbolic (z3) and concrete (plain ints).

The kernel paths in :mod:`equiv.slow_path` and :mod:`equiv.template_path` are written once
against the helpers here, and run either on z3 terms (to build proof obligations) or on
:class:`CBV` concrete values (to replay a counterexample without z3).  This is the
claripy idea of one program with two evaluators; the property tests check that both
evaluators agree.

Conventions: ``>>`` is never used on values (z3's ``>>`` is arithmetic); use :func:`lshr`.
Comparisons are unsigned (:func:`ult`, :func:`ule`).  Conditions are ``bool`` in the
concrete domain and ``z3.BoolRef`` in the symbolic domain; :func:`ite` with a Python
``bool`` picks a branch without building a term.

Every dual-domain operation of the models (the card's and the page-table subject's) is
defined here once: the primitives (z3's operators, :func:`extract`, :func:`concat`,
:func:`ite`, ...), the kernel bit tricks built from them (:func:`ffs`, :func:`fls`,
:func:`pow2floor`, :func:`is_aligned`, named after their ``include/linux`` counterparts)
and C's integer semantics on 64-bit values (:func:`c_convert`, :func:`c_shl`,
:func:`c_shr`, :func:`c_slt`), which the C interpreter applies to the kernel's own text.

>>> x = CBV(0xF0, 8)
>>> (x | 0x0F).value, (~x).value, lshr(x, 4).value
(255, 15, 15)
>>> extract(CBV(0x1234, 16), 15, 8).value
18
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import z3

# z3 ships no type information: to the checker both are Any
BV: TypeAlias = z3.BitVecRef
Bool: TypeAlias = z3.BoolRef


class CBV:
    """A concrete bit-vector: ``value`` is kept in ``[0, 2**width)``.  Immutable.

    A plain ``__slots__`` class rather than an attrs class: the concrete replay of an
    order-18 compound creates millions of these.
    """

    __slots__ = ("value", "width")
    value: int
    width: int

    def __init__(self, value: int, width: int) -> None:
        if not 0 <= value < (1 << width):
            value &= (1 << width) - 1
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "width", width)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("CBV is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CBV) and (self.value, self.width) == (other.value, other.width)

    def __hash__(self) -> int:
        return hash((self.value, self.width))

    def _o(self, other: object) -> int:
        if isinstance(other, CBV):
            if other.width != self.width:
                raise TypeError(f"width mismatch {self.width} vs {other.width}")
            return other.value
        if isinstance(other, int):
            return other & ((1 << self.width) - 1)
        raise TypeError(f"cannot combine CBV with {type(other).__name__}")

    def _new(self, v: int) -> CBV:
        return CBV(v & ((1 << self.width) - 1), self.width)

    def __and__(self, o: object) -> CBV:
        return self._new(self.value & self._o(o))

    __rand__ = __and__

    def __or__(self, o: object) -> CBV:
        return self._new(self.value | self._o(o))

    __ror__ = __or__

    def __xor__(self, o: object) -> CBV:
        return self._new(self.value ^ self._o(o))

    def __invert__(self) -> CBV:
        return self._new(~self.value)

    def __add__(self, o: object) -> CBV:
        return self._new(self.value + self._o(o))

    __radd__ = __add__

    def __sub__(self, o: object) -> CBV:
        return self._new(self.value - self._o(o))

    def __rsub__(self, o: object) -> CBV:
        return self._new(self._o(o) - self.value)

    def __mul__(self, o: object) -> CBV:
        return self._new(self.value * self._o(o))

    __rmul__ = __mul__

    def __lshift__(self, n: int) -> CBV:
        return self._new(self.value << int(n))

    def __int__(self) -> int:
        return self.value

    def size(self) -> int:
        """Width in bits (same name as z3's ``BitVecRef.size``)."""
        return self.width

    def __repr__(self) -> str:
        return f"CBV({self.value:#x}, {self.width})"


Val: TypeAlias = BV | CBV
Cond: TypeAlias = Bool | bool


def is_sym(x: object) -> bool:
    """True for z3 terms."""
    return isinstance(x, z3.ExprRef)


# Thin wrappers over z3's C API for the hottest constructors: the same terms z3.And, z3.If,
# z3.Extract, ... build, without the Python API's per-call coercion and sort checks (the
# symbolic run of a cell builds tens of thousands of terms).
_ctx = z3.main_ctx()


def _unchecked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The ctypes function under one of z3core's wrappers, which checks the context's error
    state after every call (z3core keeps it as its ``_elems.f`` default); the wrapper
    itself when it has no such default.  Only for calls that cannot fail on a live,
    well-sorted term (reading a term's width)."""
    defaults = getattr(fn, "__defaults__", None) or ()
    raw = getattr(defaults[0], "f", None) if defaults else None
    return raw if callable(raw) else fn


_get_sort = _unchecked(z3.Z3_get_sort)
_get_bv_sort_size = _unchecked(z3.Z3_get_bv_sort_size)
_get_ast_kind = _unchecked(z3.Z3_get_ast_kind)
_get_app_decl = _unchecked(z3.Z3_get_app_decl)
_get_decl_kind = _unchecked(z3.Z3_get_decl_kind)
_get_app_num_args = _unchecked(z3.Z3_get_app_num_args)
_get_app_arg = _unchecked(z3.Z3_get_app_arg)
_is_numeral = _unchecked(z3.Z3_is_numeral_ast)
_APP = z3.Z3_APP_AST
_inc_ref = _unchecked(z3.Z3_inc_ref)
#: the main context's C pointer (fixed for the process, forked workers included)
_REF = _ctx.ref()


def _wrap(cls: type[Any], ast: z3.Ast) -> Any:
    """``cls(ast, main context)`` as ``AstRef.__init__`` makes it (the term and its context,
    one reference taken, which ``AstRef.__del__`` gives back), without its context lookup
    and error check: ``ast`` is a term a z3 constructor just returned.  A NULL (a
    constructor that failed) goes through ``cls`` itself, which raises z3's error."""
    if not ast:
        return cls(ast, _ctx)
    r = object.__new__(cls)
    r.ast = ast
    r.ctx = _ctx
    _inc_ref(_REF, ast)
    return r


def _bool(ast: z3.Ast) -> Bool:
    b: Bool = _wrap(z3.BoolRef, ast)
    return b


def _bv(ast: z3.Ast) -> BV:
    v: BV = _wrap(z3.BitVecRef, ast)
    return v


def _args(xs: Sequence[z3.ExprRef]) -> tuple[int, z3.Ast]:
    arr = (z3.Ast * len(xs))()
    for i, x in enumerate(xs):
        arr[i] = x.as_ast()
    return len(xs), arr


#: z3 numerals by (value, width): a symbolic run asks for the same few constants (field
#: values, masks, indices) hundreds of thousands of times, and ``z3.BitVecVal`` builds a
#: sort and a Python term object each time.  The terms are hash-consed by z3 anyway: the
#: cached one is the same term.  Bounded: cleared when it reaches :data:`_NUMS_MAX`.
_NUMS: dict[tuple[int, int], BV] = {}
_NUMS_MAX = 1 << 14


def num(v: int, w: int) -> BV:
    """The z3 numeral ``v`` of ``w`` bits (``v`` taken modulo ``2**w``, as z3 does)."""
    key = (v, w)
    hit = _NUMS.get(key)
    if hit is None:
        if len(_NUMS) >= _NUMS_MAX:
            _NUMS.clear()
        hit = _NUMS[key] = z3.BitVecVal(v, w)
    return hit


def _z(x: Val | int, width: int) -> BV:
    if isinstance(x, CBV):
        return num(x.value, x.width)
    if isinstance(x, int):
        return num(x, width)
    return x


def const_like(x: Val | Cond, v: int, w: int = 64) -> Val:
    """The constant ``v`` (``w`` bits) in the domain of ``x``: a folded z3 numeral for
    symbolic ``x``, a :class:`CBV` otherwise."""
    return num(v, w) if is_sym(x) else CBV(v, w)


def width(x: Val) -> int:
    """Width in bits of a value of either domain (of a z3 term straight from the C API:
    ``BitVecRef.size()`` wraps the sort in two Python objects first)."""
    if isinstance(x, CBV):
        return x.width
    w: int = _get_bv_sort_size(_REF, _get_sort(_REF, x.ast))
    return w


def lshr(x: Val, n: int | BV) -> Val:
    """Logical shift right by a constant (or, for a symbolic ``x``, by a term: the
    symbolic order of an order class)."""
    if isinstance(x, CBV):
        assert isinstance(n, int), "a concrete value shifted by a term"
        return CBV(x.value >> n, x.width)
    return z3.LShR(x, n)


def extract(x: Val, hi: int, lo: int) -> Val:
    """Bits ``hi..lo`` of ``x`` (inclusive), like ``z3.Extract``; of a concatenation,
    those bits of the one part that holds them all (the part itself when they are all of
    it: ``extract(127, 64, concat(c, t))`` is ``c``), the same value as a smaller term.
    A storage key ``concat(c, t)`` then gives back the very terms ``c`` and ``t``, which a
    loop's summary recognises as the index its lemmas are stated for (one instantiation of
    the body, not two) and a store recognises as the key it wrote."""
    if isinstance(x, CBV):
        return CBV((x.value >> lo) & ((1 << (hi - lo + 1)) - 1), hi - lo + 1)
    a = x.as_ast()
    while _get_ast_kind(_REF, a) == _APP:
        d = _get_app_decl(_REF, a)
        if _get_decl_kind(_REF, d) != z3.Z3_OP_CONCAT:
            break
        top = _get_bv_sort_size(_REF, _get_sort(_REF, a))
        inner = None
        for i in range(_get_app_num_args(_REF, a)):
            arg = _get_app_arg(_REF, a, i)
            w = _get_bv_sort_size(_REF, _get_sort(_REF, arg))
            top -= w  # the arg holds bits top + w - 1 .. top
            if top <= lo and hi < top + w:
                inner = arg
                break
        if inner is None:
            break
        hi, lo, a = hi - top, lo - top, inner
        if lo == 0 and hi == _get_bv_sort_size(_REF, _get_sort(_REF, a)) - 1:
            # a numeral keeps its own class (its value readable, as z3 would give it)
            part: BV = _wrap(z3.BitVecNumRef if _is_numeral(_REF, a) else z3.BitVecRef, a)
            return part
    return _bv(z3.Z3_mk_extract(_ctx.ref(), hi, lo, a))


def concat(*parts: Val) -> Val:
    """Concatenate, most significant first."""
    if all(isinstance(p, CBV) for p in parts):
        v, w = 0, 0
        for p in parts:
            assert isinstance(p, CBV)
            v = (v << p.width) | p.value
            w += p.width
        return CBV(v, w)
    zs = [num(p.value, p.width) if isinstance(p, CBV) else p for p in parts]
    acc = zs[0].as_ast()
    for p in zs[1:]:
        acc = z3.Z3_mk_concat(_ctx.ref(), acc, p.as_ast())
    return _bv(acc)


def eq(a: Val, b: Val | int) -> Cond:
    """``a == b`` in the domain of ``a`` (or ``b``)."""
    if isinstance(a, CBV) and not is_sym(b):
        return a.value == a._o(b)
    if isinstance(a, z3.BitVecRef) and isinstance(b, z3.BitVecRef):
        return _bool(z3.Z3_mk_eq(_ctx.ref(), a.as_ast(), b.as_ast()))
    w = a.size()
    return _z(a, w) == _z(b, w)


def ne(a: Val, b: Val | int) -> Cond:
    """``a != b``."""
    return not_(eq(a, b))


def ult(a: Val, b: Val | int) -> Cond:
    """Unsigned ``a < b``."""
    if isinstance(a, CBV) and not is_sym(b):
        return a.value < a._o(b)
    w = width(b) if isinstance(a, int) and not isinstance(b, int) else width(a)
    return _bool(z3.Z3_mk_bvult(_ctx.ref(), _z(a, w).as_ast(), _z(b, w).as_ast()))


def ule(a: Val, b: Val | int) -> Cond:
    """Unsigned ``a <= b``."""
    if isinstance(a, CBV) and not is_sym(b):
        return a.value <= a._o(b)
    w = width(b) if isinstance(a, int) and not isinstance(b, int) else width(a)
    return _bool(z3.Z3_mk_bvule(_ctx.ref(), _z(a, w).as_ast(), _z(b, w).as_ast()))


def not_(c: Cond) -> Cond:
    """Boolean negation."""
    return (not c) if isinstance(c, bool) else _bool(z3.Z3_mk_not(_ctx.ref(), c.as_ast()))


def and_(*cs: Cond) -> Cond:
    """Conjunction; folds Python bools away."""
    rest = [c for c in cs if not (isinstance(c, bool) and c)]
    if any(isinstance(c, bool) and not c for c in rest):
        return False
    if not rest:
        return True
    return rest[0] if len(rest) == 1 else _bool(z3.Z3_mk_and(_ctx.ref(), *_args(rest)))


def or_(*cs: Cond) -> Cond:
    """Disjunction; folds Python bools away."""
    rest = [c for c in cs if not (isinstance(c, bool) and not c)]
    if any(isinstance(c, bool) and c for c in rest):
        return True
    if not rest:
        return False
    return rest[0] if len(rest) == 1 else _bool(z3.Z3_mk_or(_ctx.ref(), *_args(rest)))


def ite(c: Cond, a: Val, b: Val) -> Val:
    """``c ? a : b``; with a Python bool no term is built."""
    if isinstance(c, bool):
        return a if c else b
    if isinstance(a, z3.BitVecRef) and isinstance(b, z3.BitVecRef):
        return _bv(z3.Z3_mk_ite(_ctx.ref(), c.as_ast(), a.as_ast(), b.as_ast()))
    w = width(a) if not isinstance(a, int) else width(b)
    return _bv(z3.Z3_mk_ite(_ctx.ref(), c.as_ast(), _z(a, w).as_ast(), _z(b, w).as_ast()))


def as_z3_bool(c: Cond) -> z3.BoolRef:
    """A condition of either domain as a z3 term (``True``/``False`` as z3's constants).

    >>> as_z3_bool(True), as_z3_bool(z3.Bool("c"))
    (True, c)
    """
    return z3.BoolVal(c) if isinstance(c, bool) else c


def ite_cond(c: Cond, a: Cond, b: Cond) -> Cond:
    """``c ? a : b`` for conditions, as ``(c && a) || (!c && b)``; folds Python bools.

    >>> ite_cond(True, False, True), ite_cond(False, False, True)
    (False, True)
    >>> ite_cond(z3.Bool("c"), z3.Bool("a"), False)
    And(c, a)
    """
    return or_(and_(c, a), and_(not_(c), b))


def cond_eq(a: Cond, b: Cond) -> Cond:
    """``a == b`` for conditions.

    >>> cond_eq(True, True), cond_eq(True, False)
    (True, False)
    """
    return or_(and_(a, b), and_(not_(a), not_(b)))


def implies(a: Cond, b: Cond) -> Cond:
    """``a -> b``.

    >>> implies(False, False), implies(True, False)
    (True, False)
    >>> implies(z3.Bool("a"), True)
    True
    """
    return or_(not_(a), b)


def to_int(x: Val) -> int:
    """A concrete value as a Python int (raises on a z3 term).

    >>> to_int(CBV(7, 8))
    7
    """
    if isinstance(x, CBV):
        return x.value
    raise TypeError("symbolic value where a concrete one was expected")


def zext(x: Val, w: int) -> Val:
    """Zero-extend (or keep) ``x`` to ``w`` bits; a wider ``x`` keeps its low ``w`` bits.

    >>> zext(CBV(0xF0, 8), 16), zext(CBV(0x1F0, 12), 8)
    (CBV(0xf0, 16), CBV(0xf0, 8))
    >>> zext(z3.BitVec("x", 8), 16)
    ZeroExt(8, x)
    """
    size = x.size()
    if size == w:
        return x
    if size > w:
        return extract(x, w - 1, 0)
    if isinstance(x, CBV):
        return CBV(x.value, w)
    return z3.ZeroExt(w - size, x)


def bit(x: Val, b: int) -> Cond:
    """Bit ``b`` of ``x`` is set.

    >>> bit(CBV(0b100, 8), 2), bit(CBV(0b100, 8), 1)
    (True, False)
    """
    return eq(extract(x, b, b), 1)


def is_aligned(x: Val, nbits: int) -> Cond:
    """The kernel's ``IS_ALIGNED(x, 1 << nbits)`` (include/linux/align.h): the low
    ``nbits`` bits are zero.

    >>> is_aligned(CBV(0x40, 36), 4), is_aligned(CBV(0x48, 36), 4), is_aligned(CBV(1, 8), 0)
    (True, False, True)
    """
    if nbits <= 0:
        return True
    return eq(extract(x, nbits - 1, 0), 0)


def is_aligned_dyn(x: Val, k: Val) -> Cond:
    """``IS_ALIGNED(x, 1 << k)`` for a run-time ``k`` (0 <= k < 32).

    >>> is_aligned_dyn(CBV(0x40, 36), CBV(6, 32)), is_aligned_dyn(CBV(0x40, 36), CBV(7, 32))
    (True, False)
    """
    mask = pow2(k, x.size(), 31) - 1
    return eq(x & mask, 0)


def umin(a: Val, b: Val) -> Val:
    """Unsigned ``min(a, b)``.

    >>> umin(CBV(3, 8), CBV(5, 8)).value, umin(CBV(0xFF, 8), CBV(1, 8)).value
    (3, 1)
    """
    return ite(ult(a, b), a, b)


def umax(a: Val, b: Val) -> Val:
    """Unsigned ``max(a, b)``.

    >>> umax(CBV(3, 8), CBV(5, 8)).value
    5
    """
    return ite(ult(a, b), b, a)


def pow2(k: Val, w: int, kmax: int | None = None) -> Val:
    """``1 << k`` in ``w`` bits (0 when ``k >= w``, like z3's ``bvshl``).

    With ``kmax``, a decoder of the values 0..kmax (cheaper than a barrel shifter); any
    larger ``k`` then yields 0, so pass ``kmax`` only where the caller bounds ``k`` (or
    where ``k >= w`` anyway).

    >>> pow2(CBV(3, 32), 36).value, pow2(CBV(40, 32), 36).value, pow2(CBV(5, 32), 36, 4).value
    (8, 0, 0)
    """
    top = w - 1 if kmax is None else min(kmax, w - 1)
    if isinstance(k, CBV):
        return CBV(1 << k.value if k.value <= top else 0, w)
    out: Val = z3.BitVecVal(0, w)
    for b in range(top, -1, -1):
        out = ite(eq(k, b), z3.BitVecVal(1 << b, w), out)
    return out


def pow2floor(x: Val, nbits: int, twice: bool = False) -> Val:
    """``1 << __fls(x)`` (``rounddown_pow_of_two``, include/linux/log2.h) looking at the
    low ``nbits`` bits (the caller states that higher bits are zero); ``twice``: ``1 <<
    fls(x)``, twice that; 0 for ``x == 0``.

    >>> pow2floor(CBV(48, 16), 9).value, pow2floor(CBV(48, 16), 9, twice=True).value
    (32, 64)
    >>> pow2floor(CBV(0, 16), 9).value
    0
    """
    w = x.size()
    out: Val = const_like(x, 0, w)
    for b in range(min(nbits, w)):
        v = (1 << (b + 1)) if twice else (1 << b)
        out = ite(bit(x, b), const_like(x, v & ((1 << w) - 1), w), out)
    return out


def select(cases: Sequence[tuple[Cond, Val]], default: Val) -> Val:
    """The value of the first case whose condition holds, else ``default``.

    >>> select([(False, CBV(1, 8)), (True, CBV(2, 8)), (True, CBV(3, 8))], CBV(0, 8)).value
    2
    """
    out = default
    for c, v in reversed(cases):
        out = ite(c, v, out)
    return out


def select_cond(cases: Sequence[tuple[Cond, Cond]], default: Cond) -> Cond:
    """:func:`select` for conditions.

    >>> select_cond([(False, True), (True, False)], True)
    False
    """
    out = default
    for c, v in reversed(cases):
        out = ite_cond(c, v, out)
    return out


def ffs(x: Val, undefined: Val) -> tuple[Val, Cond]:
    """The kernel's ``__ffs(x)`` (include/asm-generic/bitops/__ffs.h): index of the lowest
    set bit, as a value of the width of ``undefined``; for ``x == 0`` (undefined behaviour
    in C) the result is ``undefined``.

    Returns:
        the index, and whether ``x == 0`` (the undefined case was taken).

    >>> i, zero = ffs(CBV(0x30, 36), CBV(0, 32)); i.value, zero
    (4, False)
    >>> i, zero = ffs(CBV(0, 36), CBV(9, 32)); i.value, zero
    (9, True)
    """
    w = undefined.size()
    out: Val = undefined
    for b in reversed(range(x.size())):
        out = ite(bit(x, b), const_like(undefined, b, w), out)
    return out, eq(x, 0)


def fls(x: Val, nbits: int, w: int = 32) -> Val:
    """The kernel's ``__fls(x)`` (= ``ilog2(x)``, include/asm-generic/bitops/__fls.h):
    index of the highest set bit as a ``w``-bit value, looking at the low ``nbits`` bits
    only (the caller states that higher bits are zero); 0 for 0.

    >>> fls(CBV(0x30, 36), 36).value, fls(CBV(0, 36), 36).value
    (5, 0)
    """
    out: Val = const_like(x, 0, w)
    for b in range(min(nbits, x.size())):
        out = ite(bit(x, b), const_like(x, b, w), out)
    return out


def c_convert(x: Val, w: int, signed: bool) -> Val:
    """C's conversion of a 64-bit value to a ``w``-bit integer type, the result held in 64
    bits again: the low ``w`` bits, sign-extended for a signed type, zero-extended for an
    unsigned one (C11 6.3.1.3: modulo ``2**w`` for an unsigned type; for a signed type out
    of range, GCC's implementation-defined two's complement wrap; then the value widened
    back to 64 bits, as the C interpreter keeps every integer).  An ``x`` narrower than 64
    bits is zero-extended to 64 first; ``w >= 64`` keeps it as is.

    >>> c_convert(CBV(0x1FF, 64), 8, False).value, hex(c_convert(CBV(0xFF, 64), 8, True).value)
    (255, '0xffffffffffffffff')
    >>> c_convert(z3.BitVec("x", 64), 32, True)
    SignExt(32, Extract(31, 0, x))
    """
    if width(x) != 64:
        x = concat(const_like(x, 0, 64 - width(x)), x)
    if w >= 64:
        return x
    low = extract(x, w - 1, 0)
    if isinstance(low, CBV):
        v = low.value
        if signed and v >> (w - 1):
            v -= 1 << w
        return CBV(v, 64)
    return z3.SignExt(64 - w, low) if signed else z3.ZeroExt(64 - w, low)


def c_shl(x: Val, y: Val) -> Val:
    """C's ``x << y`` on 64-bit values: the bits shifted out are lost; a concrete count of
    64 or more gives 0 (undefined in C, C11 6.5.7p3; z3's ``bvshl`` gives 0 too, so both
    domains agree); a z3 numeral count is shifted by as a Python int.

    >>> c_shl(CBV(3, 64), CBV(4, 64)).value, c_shl(CBV(3, 64), CBV(64, 64)).value
    (48, 0)
    >>> c_shl(z3.BitVec("x", 64), CBV(4, 64))
    x << 4
    """
    if isinstance(y, CBV):
        return x << y.value if y.value < 64 else const_like(x, 0)
    if z3.is_bv_value(y):
        return x << y.as_long()
    return x << y


def c_shr(x: Val, y: Val, signed: bool) -> Val:
    """C's ``x >> y`` on 64-bit values: arithmetic for a ``signed`` left operand (the
    value of a negative one is implementation-defined, C11 6.5.7p5: GCC shifts in the sign
    bit), logical otherwise.  A concrete ``x`` needs a concrete count.

    >>> top = CBV(1 << 63, 64)
    >>> c_shr(top, CBV(62, 64), False).value, hex(c_shr(top, CBV(62, 64), True).value)
    (2, '0xfffffffffffffffe')
    >>> c_shr(z3.BitVec("x", 64), z3.BitVecVal(2, 64), False)
    LShR(x, 2)
    """
    if isinstance(x, CBV):
        n = int(y)
        v = x.value - (1 << 64) if signed and x.value >> 63 else x.value
        return CBV(v >> n, 64)
    return x >> y if signed else z3.LShR(x, y)


def c_slt(a: Val, b: Val) -> Cond:
    """C's ``a < b`` of two signed 64-bit values (``long``), in two's complement (z3's
    ``<`` on bit-vectors is this signed comparison).  Both in one domain: a concrete and a
    symbolic operand are not compared.

    >>> c_slt(CBV(1 << 63, 64), CBV(0, 64)), c_slt(CBV(1, 64), CBV(0, 64))
    (True, False)
    >>> c_slt(z3.BitVec("a", 64), z3.BitVec("b", 64))
    a < b
    """
    if isinstance(a, CBV) and isinstance(b, CBV):
        def s(v: int) -> int:
            return v - (1 << 64) if v >> 63 else v
        return s(a.value) < s(b.value)
    assert not isinstance(a, CBV), "signed comparison across the two domains"
    return a < b


def order_base_2(n: int) -> int:
    """The kernel's ``order_base_2()``: ceil(log2(n)), 0 for n <= 1.

    >>> order_base_2(64), order_base_2(80), order_base_2(1)
    (6, 7, 0)
    """
    return 0 if n <= 1 else (n - 1).bit_length()


def ilog2(n: int) -> int:
    """The kernel's ``ilog2()`` for n >= 1: floor(log2(n)).

    >>> ilog2(64), ilog2(8192), ilog2(100)
    (6, 13, 6)
    """
    return n.bit_length() - 1

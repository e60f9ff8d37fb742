"""C's integer rules as the C interpreter (:mod:`equiv.zone_device.source.cinterp`) applies
them: the type of an integer constant, the integer promotions, the usual arithmetic
conversions and the conversion of a value between types.  The width and signedness of a
type *name* are clang's (:class:`equiv.zone_device.source.ctyped.TypedTree`), as is the type
a binary operator of a function's text computes in; the rules here serve operations clang
did not type where the interpreter evaluates them (a macro's body).

The kernel's data model is LP64 on every architecture the configurations name (x86_64,
arm64): ``char`` 8 bits, ``short`` 16, ``int`` 32, ``long`` and ``long long`` 64.  ``char``
is unsigned: the kernel builds with ``-funsigned-char`` (6.12's top-level Makefile:574).
Signed arithmetic wraps in two's complement: the kernel builds with
``-fno-strict-overflow`` (Makefile:1020), which in GCC implies ``-fwrapv``, so an
overflow that C11 6.5p5 leaves undefined is the wrap modulo ``2**w`` here.

A value is held as a 64-bit bit-vector of either domain of :mod:`equiv.engine.bv` together
with its type ``(bits, signed)``: the low ``bits`` bits hold it, sign-extended for a signed
type and zero-extended for an unsigned one (:class:`~equiv.zone_device.source.cstate.CInt`).
"""

from __future__ import annotations

from equiv.engine import bv
from equiv.engine.bv import Val

#: an integer type: (width in bits, signed)
IntType = tuple[int, bool]

INT: IntType = (32, True)
UNSIGNED_LONG: IntType = (64, False)
LONG: IntType = (64, True)

def promote(t: IntType) -> IntType:
    """The integer promotions (C11 6.3.1.1p2): a type narrower than ``int`` becomes ``int``
    (which represents all its values); any other is unchanged.

    >>> promote((8, False)), promote((32, False)), promote((64, True))
    ((32, True), (32, False), (64, True))
    """
    return INT if t[0] < 32 else t


def common_type(a: IntType, b: IntType) -> IntType:
    """The usual arithmetic conversions of two integer operands (C11 6.3.1.8p1): both
    promoted; the same signedness: the wider; else the unsigned one if its rank is not
    lower; else the signed one if it represents every value of the unsigned one (it is
    wider); else the unsigned type of the signed one's width.  Rank follows width here
    (LP64: ``long`` and ``long long`` both 64 bits, the same conversions).

    >>> common_type((32, True), (64, False)), common_type((32, False), (64, True))
    ((64, False), (64, True))
    >>> common_type((32, True), (32, False)), common_type((8, False), (16, True))
    ((32, False), (32, True))
    """
    a, b = promote(a), promote(b)
    if a[1] == b[1]:
        return a if a[0] >= b[0] else b
    signed, unsigned = (a, b) if a[1] else (b, a)
    if unsigned[0] >= signed[0]:
        return unsigned
    return signed


def convert(x: Val, src: IntType, dst: IntType) -> Val:
    """A value of type ``src`` (held as its 64-bit representation) converted to ``dst``
    (C11 6.3.1.3: the value kept where ``dst`` represents it, else modulo ``2**w``; a
    signed ``dst`` out of range wraps, GCC's implementation-defined choice).  A conversion
    that cannot change the representation returns ``x`` itself: to a 64-bit type, to the
    same type, or to a wider type that represents every value of ``src``.

    >>> from equiv.engine.bv import CBV
    >>> hex(convert(CBV(2**64 - 1, 64), (32, True), (32, False)).value)
    '0xffffffff'
    >>> convert(CBV(2**64 - 1, 64), (32, True), (64, False)).value == 2**64 - 1
    True
    """
    bits, signed = dst
    if bits >= 64 or src == dst or (bits > src[0] and (signed or not src[1])):
        return x
    return bv.c_convert(x, bits, signed)


def literal(text: str) -> tuple[int, IntType]:
    """The value and type of an integer constant (C11 6.4.4.1): decimal, octal (a leading
    ``0``) or hexadecimal, with suffixes ``u``/``U`` and ``l``/``L``/``ll``/``LL`` in any
    order.  Its type is the first of its list (6.4.4.1p5) that represents the value: a
    decimal constant without ``u`` only signed types (``int``, ``long``), an octal or hex
    one also the unsigned type of each width.

    >>> literal("2"), literal("0x80000000"), literal("1UL"), literal("010")
    ((2, (32, True)), (2147483648, (32, False)), (1, (64, False)), (8, (32, True)))

    Raises:
        ValueError: not an integer constant (a floating constant, a malformed number).
    """
    s = text.strip()
    body = s.rstrip("uUlL")
    suffix = s[len(body):].lower()
    if suffix not in ("", "u", "l", "ul", "lu", "ll", "ull", "llu"):
        raise ValueError(f"integer constant {text!r}: suffix {suffix!r}")
    decimal = not (body.startswith("0") and len(body) > 1)
    if body[:2].lower() == "0x":
        v = int(body, 16)
    elif body[:2].lower() == "0b":
        v = int(body, 2)
    elif decimal:
        v = int(body, 10)
    else:
        v = int(body, 8)
    unsigned_only = "u" in suffix
    widths = [64] if "l" in suffix else [32, 64]
    for w in widths:
        if not unsigned_only and v < (1 << (w - 1)):
            return v, (w, True)
        if (unsigned_only or not decimal) and v < (1 << w):
            return v, (w, False)
    if v < (1 << 64):  # no type of its list holds it: GCC takes unsigned long (a warning)
        return v, UNSIGNED_LONG
    raise ValueError(f"integer constant {text!r} does not fit 64 bits")


__all__ = ["INT", "LONG", "UNSIGNED_LONG", "IntType", "common_type", "convert", "literal", "promote"]

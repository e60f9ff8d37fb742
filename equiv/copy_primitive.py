"""The non-temporal copy primitive of the series: its store sequences, and their byte equality with memcpy.

Subject: the copy of a prepared template ``struct page`` (56..96 bytes, a multiple of 8) that
the series does with a non-temporal copy (``../shared/reference/zone_device.md`` §7,
"Patches 5–7" and "Earlier iterations of the copy primitive").  The rest of equiv treats that
copy as a byte copy; this module checks the assumption.

Each copy routine is modelled as a *sequence of stores*
(:class:`Store`: ``nt`` = MOVNTI, ``cached`` = a plain ``mov`` / memcpy byte, plus ``clwb``
and ``sfence`` events), generated in Python for one ``(revision, cnt, dst % 8, src % 8)``
(:func:`copy_plan`).  :func:`prove_plan` then proves with z3, over a symbolic source buffer
and an arbitrary initial destination (z3 arrays from 64-bit addresses to bytes, the two
buffers disjoint as memcpy requires, their base addresses symbolic and unconstrained: the
alignment only selects the store sequence, and the proof covers every base address), that

* every destination byte ``[0, cnt)`` equals the source byte at the same offset, and
* every destination byte outside ``[0, cnt)`` is unchanged: every byte of the address space,
  via one symbolic offset (``frame="all"``, the default; this query indexes the destination
  by offset, the same claim by translation since the arrays are disjoint and arbitrary), or
  only the 16 bytes either side (``frame="window"``, one query fewer),

i.e. that the routine writes exactly the bytes memcpy writes.  A refutation is localised to
the first wrong byte (offsets ``-16 .. cnt+16`` are tried in ascending order) and explained
by the store that last wrote it.  Revisions (:data:`REVISIONS`):

* ``v11``  - ``memcpy_flushcache()``, arch/x86/include/asm/string_64.h, series patch 7/7
  (25-new @51d58682) [R]; falls back to ``__memcpy_flushcache`` for 56/72/88.
* ``v5``   - ``memcpy_flushcache()`` with ``memcpy_flushcache_large()``, v5 x86 patch 7
  (25-new @ebb5a9e4) [R]; how the caller falls back when ``_large`` returns 0 is [I].
* ``v4a`` / ``v4b`` - ``memcpy_streaming()`` behind the two variants of
  ``memcpy_flushcache_nt_safe()`` (LMM:arch/x86/include/asm/string_64.h@1024e400 and
  snapshots of June 2026) [R]; the order of the inlined steps is [N] (a named choice).
* ``memcpy`` - the reference: a byte-wise cached copy.

Seeded bugs (:data:`MUTANTS`) must come out REFUTED on the byte they break; a harmless edit
must stay PROVED.

The publication order of these store sequences (a simplified x86-TSO model with non-temporal
stores) is :mod:`equiv.copy_ordering`; the tables as text are :mod:`equiv.copy_report`.

Everything here returns data; nothing prints.  ``bench/copy_primitive.py`` prints the tables.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

import z3
from attrs import frozen

from equiv.engine.errors import InputError, InternalMismatch
from equiv.engine.verdict import Verdict, worst

__all__ = [
    "ALIGNMENTS", "CHOICES", "FRAMES", "MUTANTS", "REVISIONS", "SIZES", "CopyMutant", "CopyPlan",
    "CopyResult", "CopySummaryRow", "Store", "copy_matrix", "copy_plan", "copy_summary",
    "memcpy_flushcache_nt_safe", "memcpy_flushcache_v5", "memcpy_flushcache_v11",
    "memcpy_streaming_v4", "prove_cell", "prove_plan",
]

#: revisions of the copy primitive (plus the byte-wise reference)
REVISIONS = ("v11", "v5", "v4a", "v4b", "memcpy")
#: sizeof(struct page) values the series cares about (64 on x86_64 defaults; up to 96)
SIZES = (56, 64, 72, 80, 88, 96)
#: dst % 8 and src % 8
ALIGNMENTS = tuple(range(8))

#: named modelling choices, printed with the results
CHOICES = (
    "v5: when memcpy_flushcache_large() returns 0 the caller falls back to __memcpy_flushcache [I]",
    "v4: the inlined NT-safe copy walks 16-byte steps down from the top (fall-through switch), "
    "after one 8-byte step at cnt-8 when cnt is an odd multiple of 8; the exact order is [N]",
    "v4: NT-safe sizes other than 4 and multiples of 8 up to 96 go to __memcpy_flushcache [I]",
    "fallback / reference memcpy is modelled byte by byte (cached); any memcpy writes the same bytes",
    "v5/v4 callers are assumed to call the drain (memcpy_nt_drain / memcpy_streaming_drain) [I]",
)

_KINDS = ("nt", "cached", "clwb", "sfence")


@frozen
class Store:
    """One event of a copy routine, offsets relative to the destination / source base.

    ``kind`` is ``nt`` (MOVNTI of ``width`` 4 or 8 bytes), ``cached`` (a plain store; a
    memcpy byte has width 1), ``clwb`` (write back the cache lines of ``[dst_off,
    dst_off+width)``; no data) or ``sfence`` (width 0).  ``via`` names the kernel helper that
    issued it.
    """

    kind: str
    dst_off: int
    width: int
    src_off: int
    via: str

    def __attrs_post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise InputError(f"unknown store kind {self.kind!r}: use one of {', '.join(_KINDS)}")

    @property
    def writes(self) -> bool:
        """Does this event write data bytes?"""
        return self.kind in ("nt", "cached")

    def label(self) -> str:
        """e.g. ``nt8@64`` or ``clwb[0,5)``."""
        if self.kind == "clwb":
            return f"clwb[{self.dst_off},{self.dst_off + self.width})"
        if self.kind == "sfence":
            return "sfence"
        return f"{self.kind}{self.width}@{self.dst_off}"


@frozen
class CopyPlan:
    """The store sequence of one routine for one (revision, cnt, dst % 8, src % 8)."""

    revision: str
    cnt: int
    dst_align: int
    src_align: int
    #: ``inline`` | ``__memcpy_flushcache`` | ``fallback memcpy`` | ``memcpy``
    path: str
    #: the helpers called, e.g. ``movnti_64 + movnti_16@64``
    detail: str
    stores: tuple[Store, ...]
    mutant: str | None = None

    def summary(self) -> str:
        """Run-length summary of the events, e.g. ``nt8 x8`` or ``cached1 x5, clwb, nt8 x6``."""
        runs: list[tuple[str, int]] = []
        for st in self.stores:
            key = st.kind if st.kind in ("clwb", "sfence") else f"{st.kind}{st.width}"
            if runs and runs[-1][0] == key and key not in ("clwb", "sfence"):
                runs[-1] = (key, runs[-1][1] + 1)
            else:
                runs.append((key, 1))
        return ", ".join(str(k) if k in ("clwb", "sfence") else f"{k} x{n}" for k, n in runs) or "-"


@frozen
class CopyResult:
    """Verdict of one cell: does the plan write exactly the bytes memcpy writes?"""

    revision: str
    cnt: int
    dst_align: int
    src_align: int
    path: str
    detail: str
    summary: str
    verdict: Verdict
    #: first wrong destination byte (offset from dst, may be negative or >= cnt) when REFUTED
    first_wrong: int | None
    #: what the wrong byte holds instead, from the plan (the store that last wrote it)
    explanation: str | None
    mutant: str | None
    #: ``window`` (bytes -16..cnt+16) or ``all`` (every byte outside [0, cnt), symbolically)
    frame: str
    #: wall time of this cell (near 0 when an identical query was already decided)
    seconds: float


@frozen
class CopyMutant:
    """A seeded edit of a copy routine and where it must bite.

    ``first_wrong(cnt, dst_align, src_align)`` is the byte that must be reported, or
    ``None`` where the edit is harmless (PROVED).
    """

    name: str
    revision: str
    description: str
    first_wrong: Callable[[int, int, int], int | None]


# ---------------------------------------------------------------------------------------------
# Store-sequence builders, one per kernel helper.


def _movnti(width: int, d: int, s: int, via: str) -> list[Store]:
    """One MOVNTI of 4 (movl/movnti %r32) or 8 (movq/movnti %r64) bytes."""
    return [Store("nt", d, width, s, via)]


def _movnti_steps(size: int, d: int, s: int, via: str, *, stride: int = 8) -> list[Store]:
    """movnti_16/32/64 of v11: ``size/8`` 8-byte MOVNTIQ steps in ascending address order.

    ``stride`` is only changed by a seeded bug (a step that advances 4 bytes).
    """
    return [Store("nt", d + k * stride, 8, s + k * stride, via) for k in range(size // 8)]


def _memcpy_bytes(d: int, s: int, n: int, via: str) -> list[Store]:
    """A cached memcpy of ``n`` bytes, modelled byte by byte."""
    return [Store("cached", d + k, 1, s + k, via) for k in range(n)]


def _memcpy_flushcache_slow(dst_align: int, d: int, s: int, size: int,
                            mutant: str | None) -> list[Store]:
    """``__memcpy_flushcache(dst, src, size)``, arch/x86/lib/usercopy_64.c
    (TV@02101c45, structurally current [M]).

    1. dst not 8-aligned: cached memcpy of ``min(size, ALIGN(dst,8)-dst)`` bytes, CLWB them
       (``clean_cache_range``); return if nothing is left;
    2. ``while (size >= 32)``: four 8-byte MOVNTI (loads first, then movnti 0/8/16/24);
    3. ``while (size >= 8)``: one 8-byte MOVNTI;
    4. ``while (size >= 4)``: one 4-byte MOVNTI;
    5. ``if (size)``: cached memcpy of the tail, CLWB it.
    """
    out: list[Store] = []
    a = (dst_align + d) % 8
    if a:
        n = min(size, 8 - a)
        out += _memcpy_bytes(d, s, n, "__memcpy_flushcache head memcpy")
        out.append(Store("clwb", d, n, 0, "__memcpy_flushcache head clean_cache_range"))
        d, s, size = d + n, s + n, size - n
        if not size:
            return out
    while size >= 32:
        out += _movnti_steps(32, d, s, "__memcpy_flushcache 4x8 loop")
        d, s, size = d + 32, s + 32, size - 32
    while size >= 8:
        out += _movnti(8, d, s, "__memcpy_flushcache 1x8 loop")
        d, s, size = d + 8, s + 8, size - 8
    while size >= 4:
        out += _movnti(4, d, s, "__memcpy_flushcache 1x4 loop")
        d, s, size = d + 4, s + 4, size - 4
    if size:
        n = (size + 3) // 4 * 4 if mutant == "mutant_flushcache_tail_rounds_up" else size
        out += _memcpy_bytes(d, s, n, "__memcpy_flushcache tail memcpy")
        out.append(Store("clwb", d, n, 0, "__memcpy_flushcache tail clean_cache_range"))
    return out


def _v11_helper(size: int, d: int, s: int, mutant: str | None) -> list[Store]:
    """v11 ``movnti_4/8/16/32/64`` (string_64.h, patch 7/7, 25-new @51d58682) [R]."""
    if size in (4, 8):
        return _movnti(size, d, s, f"movnti_{size}")
    stride = 4 if size == 32 and mutant == "mutant_v11_movnti32_short_stride" else 8
    return _movnti_steps(size, d, s, f"movnti_{size}", stride=stride)


#: v11 ``switch (cnt)``: the helpers for each constant size, as (size, offset) parts
_V11_SWITCH: dict[int, tuple[tuple[int, int], ...]] = {
    4: ((4, 0),), 8: ((8, 0),), 16: ((16, 0),), 32: ((32, 0),), 48: ((32, 0), (16, 32)),
    64: ((64, 0),), 80: ((64, 0), (16, 64)), 96: ((64, 0), (32, 64)),
}


def _parts_detail(parts: Iterable[tuple[int, int]], name: str = "movnti") -> str:
    return " + ".join(f"{name}_{n}" + (f"@{o}" if o else "") for n, o in parts)


def memcpy_flushcache_v11(cnt: int, dst_align: int, src_align: int, *, constant: bool = True,
                          mutant: str | None = None) -> tuple[str, str, list[Store]]:
    """v11 x86 ``memcpy_flushcache(dst, src, cnt)``, arch/x86/include/asm/string_64.h, series
    patch 7/7 "x86/string: extend memcpy_flushcache() fixed-size fastpaths" (25-new @51d58682)
    [R].

    ``!__builtin_constant_p(cnt)`` → ``__memcpy_flushcache``; else ``switch (cnt)`` over
    4/8/16/32/48/64/80/96 (48 = 32 + 16@32, 80 = 64 + 16@64, 96 = 64 + 32@64), default →
    ``__memcpy_flushcache``.  No alignment check (MOVNTI has no alignment requirement [M]).

    Returns:
        ``(path, detail, stores)``.
    """
    parts = _V11_SWITCH.get(cnt) if constant else None
    if parts is None:
        return ("__memcpy_flushcache", "__memcpy_flushcache",
                _memcpy_flushcache_slow(dst_align, 0, 0, cnt, mutant))
    if cnt == 80 and mutant == "mutant_v11_80_drops_tail16":
        parts = ((64, 0),)
    out: list[Store] = []
    for size, off in parts:
        out += _v11_helper(size, off, off, mutant)
    return "inline", _parts_detail(parts), out


def memcpy_flushcache_v5(cnt: int, dst_align: int, src_align: int, *, constant: bool = True,
                         mutant: str | None = None) -> tuple[str, str, list[Store]]:
    """v5 x86 ``memcpy_flushcache()`` with ``memcpy_flushcache_{8,16,32,64}`` and
    ``memcpy_flushcache_large()``, arch/x86/include/asm/string_64.h, v5 patch 7 (25-new
    @ebb5a9e4) [R].

    ``if (!cnt) return;``; 4/8/16 stay in the old switch; ``memcpy_flushcache_large()``
    returns 0 (not handled) unless ``IS_ALIGNED(dst, 8)`` and handles 32/48/64/80/96 (composed
    as in v11, ascending 8-byte steps [I]); when not handled the caller falls back to
    ``__memcpy_flushcache`` [I].  The helper ``memcpy_nt()`` = this; ``memcpy_nt_drain()`` =
    sfence (not part of the copy; see :func:`equiv.copy_ordering.writer_program`).
    """
    if not constant:
        return ("__memcpy_flushcache", "__memcpy_flushcache",
                _memcpy_flushcache_slow(dst_align, 0, 0, cnt, mutant))
    if cnt == 0:
        return "inline", "if (!cnt) return", []
    if cnt in (4, 8, 16):
        return "inline", f"memcpy_flushcache_{cnt}", _v11_helper(cnt, 0, 0, mutant)
    aligned = dst_align == 0 or mutant == "harmless_v5_no_align_gate"
    if cnt in (32, 48, 64, 80, 96) and aligned:
        parts = _V11_SWITCH[cnt]
        out: list[Store] = []
        for size, off in parts:
            out += _v11_helper(size, off, off, mutant)
        return "inline", "memcpy_flushcache_large: " + _parts_detail(parts, "memcpy_flushcache"), out
    why = "large() returned 0 (dst not 8-aligned)" if cnt in (32, 48, 64, 80, 96) else "default"
    return ("__memcpy_flushcache", f"{why} -> __memcpy_flushcache",
            _memcpy_flushcache_slow(dst_align, 0, 0, cnt, mutant))


def memcpy_flushcache_nt_safe(variant: str, cnt: int, dst_align: int, src_align: int) -> bool:
    """v4 ``memcpy_flushcache_nt_safe(dst, src, cnt)``, arch/x86/include/asm/string_64.h
    (LMM@1024e400 and snapshots of June 2026) [R], in its two variants:

    * ``a``: ``cnt && IS_ALIGNED(dst, 8) && IS_ALIGNED(cnt, 4)``;
    * ``b``: ``(cnt >= 8 && IS_ALIGNED(dst|src|cnt, 8)) || (cnt == 4 && IS_ALIGNED(dst|src, 4))``.
    """
    if variant == "a":
        return cnt != 0 and dst_align == 0 and cnt % 4 == 0
    if variant == "b":
        return ((cnt >= 8 and dst_align == 0 and src_align == 0 and cnt % 8 == 0)
                or (cnt == 4 and dst_align % 4 == 0 and src_align % 4 == 0))
    raise InputError(f"unknown v4 gate variant {variant!r}: use 'a' or 'b'")


def memcpy_streaming_v4(variant: str, cnt: int, dst_align: int, src_align: int, *,
                        mutant: str | None = None) -> tuple[str, str, list[Store]]:
    """v4 ``memcpy_streaming(dst, src, cnt)`` (x86 string_64.h, series v4 patch 6, LKML
    2606.0/05501 and LMM@1024e400) [R].

    Not NT-safe (:func:`memcpy_flushcache_nt_safe`) → plain ``memcpy``.  NT-safe: size 4 and
    every multiple of 8 up to 96 inline with fall-through 16-byte steps [R]; the step order is
    [N] and modelled as: one 8-byte step at ``cnt-8`` when ``cnt % 16 == 8``, then 16-byte
    steps (two ascending MOVNTIQ each) from the highest offset down to 0.  Other NT-safe sizes
    → ``__memcpy_flushcache`` [I].  ``memcpy_streaming_drain()`` = sfence (see
    :func:`equiv.copy_ordering.writer_program`).
    """
    if not memcpy_flushcache_nt_safe(variant, cnt, dst_align, src_align):
        return "fallback memcpy", f"nt_safe({variant}) false -> memcpy", _memcpy_bytes(0, 0, cnt, "memcpy")
    if cnt == 4:
        return "inline", "movnti_4", _movnti(4, 0, 0, "movnti_4")
    if cnt % 8 or cnt > 96:
        return ("__memcpy_flushcache", "__memcpy_flushcache",
                _memcpy_flushcache_slow(dst_align, 0, 0, cnt, mutant))
    out: list[Store] = []
    steps: list[str] = []
    top = cnt
    if cnt % 16:
        top = cnt - 8
        out += _movnti(8, top, top, "case fall-through 8")
        steps.append(f"8@{top}")
    lowest = 16 if mutant == "mutant_v4_fallthrough_skips_first16" else 0
    for off in range(top - 16, lowest - 1, -16):
        out += _movnti_steps(16, off, off, f"case fall-through 16@{off}")
        steps.append(f"16@{off}")
    return "inline", "fall-through " + " ".join(steps), out


def copy_plan(revision: str, cnt: int, dst_align: int, src_align: int, *, constant: bool = True,
              mutant: str | None = None) -> CopyPlan:
    """The store sequence of ``revision`` copying ``cnt`` bytes.

    Args:
        revision: one of :data:`REVISIONS`.
        cnt: bytes to copy (``sizeof(struct page)``).
        dst_align: ``dst % 8``.
        src_align: ``src % 8``.
        constant: ``__builtin_constant_p(cnt)`` (true for ``sizeof(struct page)``).
        mutant: a key of :data:`MUTANTS` (a seeded bug), or None.

    Returns:
        The :class:`CopyPlan`.

    Raises:
        InputError: unknown revision or mutant, alignment outside 0..7, negative cnt.
    """
    if revision not in REVISIONS:
        raise InputError(f"unknown copy revision {revision!r}: use one of {', '.join(REVISIONS)}")
    if mutant is not None and mutant not in MUTANTS:
        raise InputError(f"unknown copy mutant {mutant!r}: use one of {', '.join(MUTANTS)}")
    if not (0 <= dst_align < 8 and 0 <= src_align < 8) or cnt < 0:
        raise InputError(f"bad cell cnt={cnt} dst%8={dst_align} src%8={src_align}: "
                         "alignments are 0..7, cnt >= 0")
    if revision == "v11":
        path, detail, stores = memcpy_flushcache_v11(cnt, dst_align, src_align, constant=constant,
                                                     mutant=mutant)
    elif revision == "v5":
        path, detail, stores = memcpy_flushcache_v5(cnt, dst_align, src_align, constant=constant,
                                                    mutant=mutant)
    elif revision in ("v4a", "v4b"):
        path, detail, stores = memcpy_streaming_v4(revision[-1], cnt, dst_align, src_align,
                                                   mutant=mutant)
    else:
        path, detail, stores = "memcpy", "byte-wise memcpy", _memcpy_bytes(0, 0, cnt, "memcpy")
    return CopyPlan(revision, cnt, dst_align, src_align, path, detail, tuple(stores), mutant)


# ---------------------------------------------------------------------------------------------
# The byte-equality proof.


def _last_writer(plan: CopyPlan, i: int) -> str:
    """What byte ``i`` of the destination holds after the plan, in words."""
    for st in reversed(plan.stores):
        if st.writes and st.dst_off <= i < st.dst_off + st.width:
            k = st.src_off + (i - st.dst_off)
            return f"dst[{i}] = src[{k}], last written by {st.label()} ({st.via})"
    return f"dst[{i}] never written (keeps its old value)"


def _final_memory(plan: CopyPlan, d: z3.BitVecRef | None) -> tuple[
        z3.ArrayRef, z3.ArrayRef, z3.ArrayRef, z3.BitVecRef]:
    """(source, initial destination, final destination) arrays after the plan's stores.

    ``d`` is the symbolic destination base, or None to index the destination by offset (used
    by the frame query: with disjoint, unconstrained arrays the claim is translation
    invariant).  The source is always read at a symbolic base ``s``.
    """
    a64 = z3.BitVecSort(64)
    src = z3.Array("copy.src", a64, z3.BitVecSort(8))
    dst0 = z3.Array("copy.dst", a64, z3.BitVecSort(8))
    s = z3.BitVec("copy.src_addr", 64)
    src_b: dict[int, z3.BitVecRef] = {}

    def sbyte(k: int) -> z3.BitVecRef:
        if k not in src_b:
            src_b[k] = z3.Select(src, s + k)
        return src_b[k]

    mem = dst0
    for st in plan.stores:
        if not st.writes:
            continue  # clwb / sfence: no data
        # the movq/movl load before MOVNTI (little-endian), then its bytes in memory
        b = [sbyte(st.src_off + k) for k in range(st.width)]
        v = b[0] if st.width == 1 else z3.Concat(*reversed(b))
        for k in range(st.width):
            off = st.dst_off + k
            addr = d + off if d is not None else z3.BitVecVal(off, 64)
            mem = z3.Store(mem, addr, v if st.width == 1 else z3.Extract(8 * k + 7, 8 * k, v))
    return src, dst0, mem, s


def _byte_claims(plan: CopyPlan) -> dict[int, z3.BoolRef]:
    """The claim for each destination offset -16 .. cnt+16 (symbolic, unconstrained bases)."""
    d = z3.BitVec("copy.dst_addr", 64)
    src, dst0, mem, s = _final_memory(plan, d)
    claims: dict[int, z3.BoolRef] = {}
    for i in range(-16, plan.cnt + 16):
        if 0 <= i < plan.cnt:
            # inside: the byte memcpy would write
            claims[i] = z3.Select(mem, d + i) == z3.Select(src, s + i)
        else:
            # outside: unchanged
            claims[i] = z3.Select(mem, d + i) == z3.Select(dst0, d + i)
    return claims


def _frame_claim(plan: CopyPlan) -> tuple[z3.BoolRef, z3.BitVecRef]:
    """Every destination byte at offset ``j >= cnt`` (unsigned, so also every negative offset)
    is unchanged; returns (claim, j)."""
    _, dst0, mem, _ = _final_memory(plan, None)
    j = z3.BitVec("copy.outside_offset", 64)
    return z3.Implies(z3.UGE(j, plan.cnt), z3.Select(mem, j) == z3.Select(dst0, j)), j


def _solver(timeout_ms: int, *, frame: bool = False) -> z3.Solver:
    # the symbolic-offset frame query is much faster once the bound j >= cnt is propagated
    s = (z3.Then("simplify", "propagate-bv-bounds", "simplify", "smt").solver() if frame
         else z3.Solver())
    s.set("timeout", timeout_ms)
    return s


FRAMES = ("window", "all")


# process-wide memo of decided store sequences (pure: the answer depends only on the
# arguments)
@lru_cache(maxsize=4096)
def _decide(stores: tuple[Store, ...], cnt: int, frame: str,
            timeout_ms: int) -> tuple[Verdict, int | None]:
    """The z3 verdict for one store sequence, and the first wrong byte when REFUTED.

    The base addresses are unconstrained, so the verdict holds for every base address, and
    in particular for every alignment that selects this store sequence; the query is
    therefore cached on ``(stores, cnt, frame)`` and decided once for all such cells.
    """
    plan = CopyPlan("", cnt, 0, 0, "", "", stores)
    claims = _byte_claims(plan)
    s = _solver(timeout_ms)
    s.add(z3.Not(z3.And(*claims.values())))
    r = s.check()
    if r == z3.sat:
        for i, c in claims.items():  # localise: the first byte, lowest offset first
            si = _solver(timeout_ms)
            si.add(z3.Not(c))
            ri = si.check()
            if ri == z3.sat:
                return Verdict.REFUTED, i
            if ri != z3.unsat:
                return Verdict.UNKNOWN, None
        raise InternalMismatch("the byte conjunction is SAT but no single byte is: a bug in equiv")
    if r != z3.unsat:
        return Verdict.UNKNOWN, None
    if frame == "window":
        return Verdict.PROVED, None
    claim, j = _frame_claim(plan)
    s = _solver(timeout_ms, frame=True)
    s.add(z3.Not(claim))
    r = s.check()
    if r == z3.unsat:
        return Verdict.PROVED, None
    if r != z3.sat:
        return Verdict.UNKNOWN, None
    # wrong only outside the -16..cnt+16 window: report the solver's offset (signed)
    jv = s.model().eval(j, model_completion=True).as_long()
    return Verdict.REFUTED, jv - (1 << 64) if jv >= 1 << 63 else jv


def prove_plan(plan: CopyPlan, *, frame: str = "all", timeout_ms: int = 30_000) -> CopyResult:
    """Prove that ``plan`` writes exactly the bytes ``memcpy(dst, src, cnt)`` writes.

    Args:
        plan: from :func:`copy_plan`.
        frame: ``window`` checks every byte of ``[-16, cnt+16)`` (one query);
            ``all`` (default) also proves, with a symbolic offset, that every byte outside
            ``[0, cnt)`` in the whole address space is unchanged (one more query).
        timeout_ms: per solver query; on expiry the verdict is UNKNOWN (never success).

    Returns:
        A :class:`CopyResult`: PROVED, or REFUTED with the first wrong byte and what it holds.

    Raises:
        InputError: unknown ``frame``.
    """
    if frame not in FRAMES:
        raise InputError(f"unknown frame {frame!r}: use one of {', '.join(FRAMES)}")
    t0 = time.perf_counter()
    verdict, wrong = _decide(plan.stores, plan.cnt, frame, timeout_ms)
    expl = _last_writer(plan, wrong) if wrong is not None else None
    return CopyResult(plan.revision, plan.cnt, plan.dst_align, plan.src_align, plan.path,
                      plan.detail, plan.summary(), verdict, wrong, expl, plan.mutant, frame,
                      time.perf_counter() - t0)


def prove_cell(revision: str, cnt: int, dst_align: int, src_align: int, *,
               mutant: str | None = None, frame: str = "all",
               timeout_ms: int = 30_000) -> CopyResult:
    """:func:`copy_plan` then :func:`prove_plan` for one cell."""
    return prove_plan(copy_plan(revision, cnt, dst_align, src_align, mutant=mutant), frame=frame,
                      timeout_ms=timeout_ms)


def copy_matrix(revisions: Sequence[str] = REVISIONS, sizes: Sequence[int] = SIZES,
                dst_aligns: Sequence[int] = ALIGNMENTS, src_aligns: Sequence[int] = ALIGNMENTS,
                *, mutant: str | None = None, frame: str = "all",
                timeout_ms: int = 30_000) -> tuple[CopyResult, ...]:
    """Every cell of revisions x sizes x dst alignments x src alignments, in that order."""
    return tuple(prove_cell(r, c, da, sa, mutant=mutant, frame=frame, timeout_ms=timeout_ms)
                 for r in revisions for c in sizes for da in dst_aligns for sa in src_aligns)


@frozen
class CopySummaryRow:
    """Results of one (revision, cnt) over all alignments."""

    revision: str
    cnt: int
    cells: int
    proved: int
    #: verdict of the row: the worst cell
    verdict: Verdict
    #: ``path (summary): alignments`` groups, e.g. ``inline movnti_64 (nt8 x8): all``
    paths: tuple[str, ...]
    first_wrong: tuple[int, ...]


def copy_summary(results: Iterable[CopyResult]) -> tuple[CopySummaryRow, ...]:
    """Group cell results by (revision, cnt): counts, worst verdict, the paths taken."""
    groups: dict[tuple[str, int], list[CopyResult]] = {}
    for r in results:
        groups.setdefault((r.revision, r.cnt), []).append(r)
    rows = []
    for (rev, cnt), rs in groups.items():
        by_path: dict[str, list[CopyResult]] = {}
        for r in rs:
            key = f"{r.path}: {r.detail}" if r.path == "inline" else r.path
            by_path.setdefault(key, []).append(r)
        paths = []
        for key, prs in by_path.items():
            das = sorted({r.dst_align for r in prs})
            sas = sorted({r.src_align for r in prs})
            if len(prs) == len(rs):
                where = "all"
            elif len(prs) == len(das) * len(sas):
                where = f"dst%8 in {_ranges(das)}, src%8 in {_ranges(sas)}"
            else:
                where = f"the other {len(prs)} cells"
            shapes = sorted({r.summary for r in prs}, key=len)
            shape = shapes[0] if len(shapes) == 1 else f"{len(shapes)} shapes, e.g. {shapes[-1]}"
            paths.append(f"{key} [{shape}] ({where})")
        rows.append(CopySummaryRow(rev, cnt, len(rs), sum(r.verdict is Verdict.PROVED for r in rs),
                                   worst(r.verdict for r in rs), tuple(paths),
                                   tuple(sorted({r.first_wrong for r in rs
                                                 if r.first_wrong is not None}))))
    return tuple(rows)


def _ranges(xs: Sequence[int]) -> str:
    if list(xs) == list(range(8)):
        return "0..7"
    return "{" + ",".join(map(str, xs)) + "}"


# ---------------------------------------------------------------------------------------------
# Seeded bugs.


def _at(sizes: Sequence[int], byte: int) -> Callable[[int, int, int], int | None]:
    return lambda cnt, da, sa: byte if cnt in sizes else None


def _tail_rounds_up(cnt: int, da: int, sa: int) -> int | None:
    # v11 sends 56/72/88 to __memcpy_flushcache; its tail is (dst%8) % 4 bytes long there
    return cnt if cnt in (56, 72, 88) and da % 4 else None


MUTANTS: dict[str, CopyMutant] = {m.name: m for m in (
    CopyMutant("mutant_v11_80_drops_tail16", "v11",
               "case 80: movnti_64 only, the 16@64 part forgotten: bytes 64..79 keep their old value",
               _at((80,), 64)),
    CopyMutant("mutant_v11_movnti32_short_stride", "v11",
               "movnti_32 steps 4 bytes instead of 8 (offsets 0,4,8,12): case 96 leaves 84..95 unwritten",
               _at((96,), 84)),
    CopyMutant("mutant_flushcache_tail_rounds_up", "v11",
               "__memcpy_flushcache copies ALIGN(size, 4) tail bytes: writes up to 3 bytes past cnt "
               "when dst%4 != 0 (only 56/72/88 reach it in v11)",
               _tail_rounds_up),
    CopyMutant("mutant_v4_fallthrough_skips_first16", "v4a",
               "v4 fall-through chain stops before the 16@0 step: bytes 0..15 unwritten when NT-safe",
               lambda cnt, da, sa: 0 if da == 0 else None),
    CopyMutant("harmless_v5_no_align_gate", "v5",
               "memcpy_flushcache_large() without its IS_ALIGNED(dst, 8) gate: MOVNTI has no alignment "
               "requirement [M], so the bytes are still memcpy's",
               lambda cnt, da, sa: None),
)}

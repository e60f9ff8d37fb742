"""The non-temporal copy primitive of the series: its store sequences (the prover of their
byte equality with memcpy is :mod:`equiv.zone_device.copy.prover`).

Subject: the copy of a prepared template ``struct page`` (56..96 bytes, a multiple of 8) that
the series does with a non-temporal copy (its patches 5-7 and their earlier iterations,
listed in docs/model.md).  The rest of equiv treats that
copy as a byte copy; this module checks the assumption.

Each copy routine is modelled as a *sequence of stores*
(:class:`Store`: ``nt`` = MOVNTI, ``cached`` = a plain ``mov`` / memcpy byte, plus ``clwb``
and ``sfence`` events), generated in Python for one ``(revision, cnt, dst % 8, src % 8)``
(:func:`copy_plan`).  :func:`equiv.zone_device.copy.prover.prove_plan` then proves with z3, over a
symbolic source buffer
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

The publication order of these store sequences (a simplified x86-TSO model with
non-temporal stores) is :mod:`equiv.zone_device.copy.ordering`; the tables as text are
:mod:`equiv.zone_device.copy.present`.

Everything here returns data; nothing prints.  ``bench/copy_primitive.py`` prints the tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from attrs import frozen

from equiv.engine.errors import InputError
from equiv.engine.verdict import Verdict

__all__ = [
    "ALIGNMENTS", "CHOICES", "MUTANTS", "REVISIONS", "SIZES", "CopyMutant", "CopyPlan",
    "CopyResult", "Store", "copy_plan", "memcpy_flushcache_nt_safe", "memcpy_flushcache_v5",
    "memcpy_flushcache_v11", "memcpy_streaming_v4",
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
    sfence (not part of the copy; see :func:`equiv.zone_device.copy.ordering.writer_program`).
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
    :func:`equiv.zone_device.copy.ordering.writer_program`).
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

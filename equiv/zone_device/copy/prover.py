"""The byte-equality prover of the copy primitives (:mod:`equiv.zone_device.copy.primitive` models their
store sequences): over a symbolic source and an arbitrary initial destination, every byte
``[0, cnt)`` of the destination equals the source's and every other byte is unchanged, i.e.
the routine writes exactly the bytes memcpy writes.  A refutation names the first wrong byte
and the store that last wrote it.  Also the summary of a matrix of cells
(:func:`copy_summary`).  Returns data; :mod:`equiv.zone_device.copy.present` renders it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import lru_cache

import z3
from attrs import frozen

from equiv.engine.errors import InputError, InternalMismatch
from equiv.engine.verdict import Verdict, worst
from equiv.zone_device.copy.primitive import (
    ALIGNMENTS,
    REVISIONS,
    SIZES,
    CopyPlan,
    CopyResult,
    Store,
    copy_plan,
)

__all__ = ["FRAMES", "CopySummaryRow", "copy_matrix", "copy_summary", "prove_cell", "prove_plan"]


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

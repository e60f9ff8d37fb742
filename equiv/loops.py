"""Loops without unrolling: block loops summarised by checked induction lemmas.

A kernel loop such as ``for (pfn = head + 1; pfn < end; pfn++) init(pfn_to_page(pfn))`` is
written as :func:`block_loop`: iteration ``k`` may read and write only its own *block* of
memory (given by an :class:`Owner` map from a memory index to the iteration that owns it) and
may carry a value (a template page) to the next iteration.

* Concretely (replay), the loop simply runs.
* Symbolically, the loop is replaced by its summary: after the loop, index ``i`` owned by
  iteration ``k`` in ``[lo, hi)`` holds what ``body`` writes there when run on the entry
  memory with carry ``inv(k)``, and every other index holds its entry value.  The carry
  candidate is derived from the body, not written by hand:
  ``inv(lo) = carry0`` and ``inv(k) = carry_out(body(carry0, k - 1))`` for ``k > lo``
  ("the template after k copies is what one step from the seed produces").

The summary is sound only if three lemmas hold for a fresh symbolic ``k`` in ``[lo, hi)``;
each is recorded in :attr:`Ctx.lemmas` and proved with the obligations that use it:

* ``frame-write``: the body changes no index outside block ``k``;
* ``frame-read``: what the body writes into block ``k`` and carries out depends only on
  block ``k`` of its input memory (so earlier iterations cannot influence it);
* ``carry-step``: ``carry_out(body(inv(k), k)) == inv(k + 1)`` (induction step; the base
  case holds by definition of ``inv``).

Together they give, by induction on ``k``, that the loop's final memory equals the summary
for every trip count, which is what lets order 18 (262,144 tails) cost what order 1 costs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import z3
from attrs import frozen

from equiv import bv
from equiv.bv import CBV, Cond, Val
from equiv.page_model import (
    ConcreteMemory,
    Memory,
    PageState,
    SymMemory,
    TrackingMemory,
    footprint,
    footprint_pb,
    ite_page,
)

Carry = tuple[PageState, ...]
Body = Callable[[Memory, Carry, Val], tuple[Memory, Carry]]


@frozen
class Owner:
    """Maps a memory index to ``(in_domain, k)``: whether a loop iteration owns it, and which."""

    page: Callable[[Val, Val], tuple[Cond, Val]]
    pb: Callable[[Val], tuple[Cond, Val]]


def never(*_: Val) -> tuple[Cond, Val]:
    """Owner component for a kind of memory a loop never writes."""
    return False, z3.BitVecVal(0, 64)


@frozen(eq=False)
class Lemma:
    """A loop-summary lemma: ``premise -> claim`` must be valid under the assumptions."""

    loop: str
    kind: str
    premise: z3.BoolRef
    claim: z3.BoolRef

    @property
    def formula(self) -> z3.BoolRef:
        return z3.Implies(self.premise, self.claim)


class Ctx:
    """Evaluation context: domain (symbolic or concrete), path condition and collected lemmas."""

    def __init__(self, symbolic: bool) -> None:
        self.symbolic = symbolic
        self.lemmas: list[Lemma] = []
        self.pc: list[z3.BoolRef] = []
        self._ids = itertools.count()
        self._memo: dict[tuple[object, ...], tuple[Memory, Carry]] = {}
        self._keep: list[object] = []  # keeps memo-keyed objects alive (keys use id())

    def val(self, v: int, width: int = 64) -> Val:
        """A constant in this context's domain."""
        return z3.BitVecVal(v, width) if self.symbolic else CBV(v, width)

    def fresh(self, name: str, width: int = 64) -> z3.BitVecRef:
        return z3.BitVec(f"{name}#{next(self._ids)}", width)

    @contextmanager
    def assuming(self, cond: Cond) -> Iterator[None]:
        if isinstance(cond, bool):
            yield
            return
        self.pc.append(cond)
        try:
            yield
        finally:
            self.pc.pop()


def _carry_ite(c: Cond, a: Carry, b: Carry) -> Carry:
    return tuple(ite_page(c, x, y) for x, y in zip(a, b, strict=True))


def _carry_eq(a: Carry, b: Carry) -> Cond:
    return bv.and_(*(bv.eq(p.bits, q.bits) for p, q in zip(a, b, strict=True)))


def _key(mem: Memory, carry: Carry, k: Val) -> tuple[object, ...]:
    return (id(mem), tuple(p.bits.get_id() for p in carry), k.get_id())  # type: ignore[union-attr]


def block_loop(ctx: Ctx, name: str, mem: Memory, lo: Val, hi: Val, carry0: Carry, body: Body,
               owner: Owner) -> tuple[Memory, Carry]:
    """Run ``for (k = lo; k < hi; k++) (mem, carry) = body(mem, carry, k)``.

    Args:
        ctx: the evaluation context.
        name: the kernel loop this mirrors (used in lemma names and reports).
        mem, carry0: state on entry.
        lo, hi: bounds (64-bit, unsigned).
        body: one iteration; must touch only the block ``owner`` assigns to ``k``.
        owner: which iteration owns each memory index.

    Returns:
        Memory and carry after the loop.
    """
    if not ctx.symbolic:
        k = int(lo)  # type: ignore[arg-type]
        carry = carry0
        while k < int(hi):  # type: ignore[arg-type]
            mem, carry = body(mem, carry, CBV(k, 64))
            k += 1
        return mem, carry

    # mypy: symbolic from here on
    def in_range(k: Val) -> Cond:
        return bv.and_(bv.ule(lo, k), bv.ult(k, hi))

    def run(m: Memory, carry: Carry, k: Val) -> tuple[Memory, Carry]:
        key = (name, *_key(m, carry, k))
        hit = ctx._memo.get(key)
        if hit is None:
            with ctx.assuming(in_range(k)):
                hit = ctx._memo[key] = body(m, carry, k)
            ctx._keep.append(m)
        return hit

    def inv(k: Val) -> Carry:
        if not carry0:
            return ()
        return _carry_ite(bv.eq(k, lo), carry0, run(mem, carry0, k - 1)[1])

    def at(k: Val) -> tuple[Memory, Carry]:
        return run(mem, inv(k), k)

    def owned(dom_k: tuple[Cond, Val]) -> tuple[Cond, Val]:
        dom, k = dom_k
        return bv.and_(dom, in_range(k)), k

    def read(c: Val, s: Val) -> PageState:
        cond, k = owned(owner.page(c, s))
        if isinstance(cond, bool) and not cond:
            return mem.read(c, s)
        return ite_page(cond, at(k)[0].read(c, s), mem.read(c, s))

    def read_pb(b: Val) -> Val:
        cond, k = owned(owner.pb(b))
        if isinstance(cond, bool) and not cond:
            return mem.read_pb(b)
        return bv.ite(cond, at(k)[0].read_pb(b), mem.read_pb(b))

    def owns(c: Val, s: Val) -> Cond:
        return owned(owner.page(c, s))[0]

    def owns_pb(b: Val) -> Cond:
        return owned(owner.pb(b))[0]

    out = SymMemory(read, read_pb, (mem,), owns, owns_pb)
    carry_out = carry0
    if carry0:
        carry_out = _carry_ite(bv.ule(hi, lo), carry0, run(mem, carry0, hi - 1)[1])

    # ---- the lemmas that justify the summary, for a fresh iteration k
    k = ctx.fresh(f"{name}.k")
    premise = z3.And(*ctx.pc, in_range(k)) if ctx.pc else in_range(k)
    assert not isinstance(premise, bool)

    def mine(c: Val, s: Val) -> Cond:
        d, kk = owner.page(c, s)
        return bv.and_(d, bv.eq(kk, k))

    def mine_pb(b: Val) -> Cond:
        d, kk = owner.pb(b)
        return bv.and_(d, bv.eq(kk, k))

    # run iteration k on a view of the entry memory that logs every index it reads, then
    # observe its output at a fresh index of block k (those reads are logged too)
    tracker = TrackingMemory(mem, lambda: tuple(ctx.pc))
    c2, s2, b2 = ctx.fresh(f"{name}.c"), ctx.fresh(f"{name}.s"), ctx.fresh(f"{name}.b")
    with ctx.assuming(in_range(k)):
        m_k, c_k = body(tracker, inv(k), k)
        if not _is_false(owner.page(c2, s2)[0]):
            with ctx.assuming(_bool(mine(c2, s2))):
                m_k.read(c2, s2)
        if not _is_false(owner.pb(b2)[0]):
            with ctx.assuming(_bool(mine_pb(b2))):
                m_k.read_pb(b2)
    # frame-write: anything the iteration may have written lies in block k
    frame_w = bv.and_(bv.or_(bv.not_(footprint(m_k, tracker, c2, s2)), mine(c2, s2)),
                      bv.or_(bv.not_(footprint_pb(m_k, tracker, b2)), mine_pb(b2)))
    # frame-read: every read, under the condition it was made, hit block k
    reads = bv.and_(*(z3.Implies(z3.And(*pc), _bool(mine(c, s))) for pc, c, s in tracker.log),
                    *(z3.Implies(z3.And(*pc), _bool(mine_pb(b))) for pc, b in tracker.log_pb))
    ctx.lemmas.append(Lemma(name, "frame-write", premise, _bool(frame_w)))
    ctx.lemmas.append(Lemma(name, "frame-read", premise, _bool(reads)))
    if carry0:
        step = _carry_eq(c_k, run(mem, carry0, k)[1])
        ctx.lemmas.append(Lemma(name, "carry-step", premise, _bool(step)))
    return out, carry_out


def _is_false(c: Cond) -> bool:
    return isinstance(c, bool) and not c


def _bool(c: Cond) -> z3.BoolRef:
    return z3.BoolVal(c) if isinstance(c, bool) else c


__all__ = ["Body", "Carry", "ConcreteMemory", "Ctx", "Lemma", "Owner", "block_loop", "never"]

"""Loops without unrolling: block loops summarised by checked induction lemmas.

A kernel loop such as ``for (pfn = head + 1; pfn < end; pfn++) init(pfn_to_page(pfn))`` is
written as :func:`block_loop`: iteration ``k`` may read and write only its own *block* of
memory (given by an :class:`Owner` map from a memory index to the iteration that owns it) and
may carry a value (a template page) to the next iteration.

* Concretely (replay), the loop simply runs, every iteration in order; or, in a *lazy*
  context (:attr:`Ctx.lazy`, the counterexample replay of a cell whose lemmas are proved),
  the same summary is evaluated on plain values: an iteration runs only when a struct page
  (or bitmap cell) it owns is read after the loop, so replaying an order-18 compound costs
  what replaying an order-2 one does (:class:`_LazyLoop`).  The replay of a refuted frame
  lemma names the loops it may run so (:attr:`Ctx.lazy_loops`): those whose lemmas it
  proved, while no other loop has run before them and none runs inside them; the rest
  run every iteration.
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
  case holds by definition of ``inv``);
* ``frame-bound`` (where the owner has a ``bound``): iteration ``k`` is one the range allows
  (a heads loop ends at the range's last compound, whatever bound the loop computed).

Together they give, by induction on ``k``, that the loop's final memory equals the summary
for every trip count, which is what lets order 18 (262,144 tails) cost what order 2 costs.

Modelling discipline the lemmas rely on: a body reaches memory only through its ``mem``
argument (never a memory captured from outside), so every read is logged and every write
is in its footprint.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import z3
from attrs import field, frozen

from equiv.engine import bv
from equiv.engine.bv import BV, CBV, Cond, Val
from equiv.engine.errors import InternalMismatch
from equiv.page_model import (
    KEY_BITS,
    ConcreteMemory,
    Memory,
    PageState,
    SymMemory,
    TrackingMemory,
    footprint,
    ite_page,
    sym_ite_mem,
)

Carry = tuple[PageState, ...]
Body = Callable[[Memory, Carry, Val], tuple[Memory, Carry]]


@frozen
class Owner:
    """Maps a storage key (``page``) or pageblock (``pb``) to ``(in_domain, k)``: whether a
    loop iteration owns it, and which.  The owners of the struct page loops are the frame
    condition of :mod:`equiv.memmap` (``compound_frame``, ``tail_frame``)."""

    page: Callable[[Val], tuple[Cond, Val]]
    pb: Callable[[Val], tuple[Cond, Val]]
    #: which iterations may exist at all (the range the loop may write, independent of the
    #: bound the loop under test computes), checked as the ``frame-bound`` lemma
    bound: Callable[[Val], Cond] | None = None
    #: that range in words, for a report
    bound_text: str = ""


def never(*_: Val) -> tuple[Cond, Val]:
    """Owner component for a kind of memory a loop never writes."""
    return False, bv.num(0, 64)


@frozen(eq=False)
class Lemma:
    """A loop-summary lemma: ``premise -> claim`` must be valid under the assumptions."""

    loop: str
    kind: str
    premise: z3.BoolRef
    claim: z3.BoolRef
    #: the iteration and the storage key the lemma is stated for (a refuted frame lemma's
    #: model names the iteration and the struct page it wrote out of its frame)
    k: z3.BitVecRef | None = None
    key: z3.BitVecRef | None = None
    #: frame-bound: the range the iterations must stay in, in words
    text: str = ""
    #: the loops whose summaries the body of this lemma's loop runs (kernel loop names;
    #: shared with the loop, so it holds those of every instantiation of the body): its
    #: lemmas are about the real loop only if theirs hold
    inner: set[str] = field(factory=set)

    @property
    def formula(self) -> z3.BoolRef:
        return z3.Implies(self.premise, self.claim)


class Ctx:
    """Evaluation context: domain (symbolic or concrete), path condition and collected lemmas."""

    def __init__(self, symbolic: bool, first_id: int = 0) -> None:
        self.symbolic = symbolic
        self.lemmas: list[Lemma] = []
        self.pc: list[z3.BoolRef] = []
        self._ids = itertools.count(first_id)
        self._memo: dict[tuple[object, ...], tuple[Memory, Carry]] = {}
        self._keep: list[object] = []  # keeps memo-keyed objects alive (keys use id())
        #: loop name -> the index symbol obligations use for it; the lemma of that loop is
        #: stated for this symbol (universally quantified all the same: it is free in the
        #: lemma query) so the body instantiation is shared with the observation.
        self.k_hint: dict[str, z3.BitVecRef] = {}
        #: which path is being run ("slow", "fast"), and the early exits each one took
        self.path = ""
        self.exits: list[tuple[str, z3.BoolRef]] = []
        #: bounded unrolling instead of summaries (the baseline a CBMC-style harness would
        #: use, for benchmarks): loop name -> maximal trip count, or None; each bound becomes
        #: an assumption of the cell (``unroll_bounds``) and no lemma is needed
        self.unroll: Callable[[str], int] | None = None
        self.unroll_bounds: list[tuple[str, z3.BoolRef]] = []
        #: concrete domain only: evaluate each loop's summary on plain values, running an
        #: iteration only for the struct pages and bitmap cells read after the loop
        #: (:class:`_LazyLoop`); the same final memory as running every iteration when the
        #: loop's lemmas hold, and those are the iterations a counterexample observes
        self.lazy = False
        #: concrete domain only, the replay of a refuted frame lemma
        #: (:func:`equiv.zone_device.counterexample.replay_frame`): the loops whose lemmas the caller has
        #: proved.  Such a loop runs lazily (:class:`_LazyLoop`) when no loop outside this set
        #: has started before it in this run, or inside the body of a loop run lazily; every
        #: other loop runs every iteration (see :func:`block_loop`).  None: see ``lazy``.
        self.lazy_loops: frozenset[str] | None = None
        #: a loop outside ``lazy_loops`` has started (every loop after it runs in full)
        self.eager_started = False
        #: the lazily run loops whose body is running now, innermost last
        self.lazy_stack: list[str] = []
        #: symbolic domain: the summarised loops whose body is being instantiated now
        #: (each records the loops created inside it: :attr:`Lemma.inner`)
        self.sym_stack: list[_SymLoop] = []

    def val(self, v: int, width: int = 64) -> Val:
        """A constant in this context's domain."""
        return bv.num(v, width) if self.symbolic else CBV(v, width)

    def fresh(self, name: str, width: int = 64) -> z3.BitVecRef:
        return z3.BitVec(f"{name}#{next(self._ids)}", width)

    def next_id(self) -> int:
        """The number the next fresh name would get (another context continuing this
        one's names starts there: ``Ctx(first_id=...)``); it is used up."""
        return next(self._ids)

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


def _key(mem: Memory, carry: Carry, k: BV) -> tuple[object, ...]:
    bits: list[BV] = [p.bits for p in carry]  # a symbolic loop's carry: z3 terms
    return (id(mem), tuple(b.get_id() for b in bits), k.get_id())


def block_loop(ctx: Ctx, name: str, mem: Memory, lo: Val, hi: Val, carry0: Carry, body: Body,
               owner: Owner) -> tuple[Memory, Callable[[], Carry]]:
    """Run ``for (k = lo; k < hi; k++) (mem, carry) = body(mem, carry, k)``.

    Args:
        ctx: the evaluation context.
        name: the kernel loop this mirrors (used in lemma names and reports).
        mem, carry0: state on entry.
        lo, hi: bounds (64-bit, unsigned).
        body: one iteration; must touch only the block ``owner`` assigns to ``k``.
        owner: which iteration owns each memory index.

    Returns:
        Memory after the loop, and a function giving the carry after the loop (symbolically
        it costs one more instantiation of the body, so it is built only when asked for).
    """
    if not ctx.symbolic and ctx.lazy:
        return _LazyLoop(name, mem, lo, hi, carry0, body, owner).results()
    if not ctx.symbolic and ctx.lazy_loops is not None:
        if name in ctx.lazy_loops and (ctx.lazy_stack or not ctx.eager_started):
            return _LazyLoop(name, mem, lo, hi, carry0, body, owner, ctx).results()
        if ctx.lazy_stack:
            # the summary of a lazily run loop is exact only if every loop in its body is:
            # the caller runs again with the enclosing lazy loops in full
            raise LazyNesting(name, ctx.lazy_stack)
        ctx.eager_started = True
    if not ctx.symbolic:
        k = int(lo)
        carry = carry0
        while k < int(hi):
            mem, carry = body(mem, carry, CBV(k, 64))
            k += 1
        final = carry
        return mem, lambda: final
    if ctx.unroll is not None:
        return _unrolled(ctx, name, mem, lo, hi, carry0, body)
    for outer in ctx.sym_stack:
        outer.inner.add(name)
    return _SymLoop(ctx, name, mem, lo, hi, carry0, body, owner).results()


def _unrolled(ctx: Ctx, name: str, mem: Memory, lo: Val, hi: Val, carry0: Carry,
              body: Body) -> tuple[Memory, Callable[[], Carry]]:
    """The loop unrolled ``ctx.unroll(name)`` times, each iteration guarded by ``k < hi``
    (bounded model checking); the bound is recorded as an assumption."""
    assert ctx.unroll is not None
    bound = ctx.unroll(name)
    carry = carry0
    for j in range(bound):
        k = lo + j
        go = bv.ult(k, hi)
        with ctx.assuming(go):
            new_mem, new_carry = body(mem, carry, k)
        mem = sym_ite_mem(go, new_mem, mem)
        carry = _carry_ite(go, new_carry, carry)
    end = lo + bound
    ctx.unroll_bounds.append((f"loop {name} runs at most {bound} times [U: bounded unrolling]",
                              z3.Or(z3.ULE(hi, end), z3.ULE(hi, lo))))
    final = carry
    return mem, lambda: final


class LazyNesting(Exception):
    """A loop outside :attr:`Ctx.lazy_loops` was reached inside the body of a loop run
    lazily, whose summary then rests on an unproved one: run again with ``enclosing`` (the
    lazily run loops around it) in full too."""

    def __init__(self, name: str, enclosing: list[str]) -> None:
        super().__init__(f"loop {name} runs inside the lazily run {', '.join(enclosing)}")
        self.enclosing = frozenset(enclosing)


class _Reads:
    """The loop's entry memory as one lazily run iteration sees it: every read that reaches
    it (not one of the iteration's own writes) is logged, for the concrete frame-read
    check of :class:`_LazyLoop`."""

    def __init__(self, entry: ConcreteMemory) -> None:
        self.entry = entry
        self.pages: list[int] = []
        self.pb: list[int] = []

    def page(self, n: int) -> PageState:
        self.pages.append(n)
        return self.entry.load(n)

    def cell(self, b: int) -> Val:
        self.pb.append(b)
        return self.entry.read_pb(b)


class _LazyLoop:
    """The summary of :class:`_SymLoop`, evaluated on plain values (a lazy concrete context).

    After the loop, key ``n`` owned by iteration ``k`` in ``[lo, hi)`` holds what the body
    writes there when run on the entry memory with carry ``inv(k)`` (``carry0``, or the
    carry one step from ``carry0`` at ``k - 1``); every other key holds its entry value.
    An iteration runs (once) only when a key or bitmap cell it owns is read, so the cost is
    that of the struct pages a replay observes, not of the 2^order tails of a compound.

    This is the final memory of running every iteration in order whenever the loop's
    frame-write, frame-read and carry-step lemmas hold (the induction of this module's
    docstring), which is why it is used only to replay a cell whose lemmas are all proved.
    Each iteration it runs is checked concretely as well: every struct page and bitmap cell
    it read from the entry memory or wrote is one it owns, and (with a carry) the carry it
    hands on is the one a step from ``carry0`` gives; a violation raises
    :class:`~equiv.engine.errors.InternalMismatch`.
    """

    def __init__(self, name: str, mem: Memory, lo: Val, hi: Val, carry0: Carry, body: Body,
                 owner: Owner, ctx: Ctx | None = None) -> None:
        assert isinstance(mem, ConcreteMemory), "a lazy loop runs on concrete memory"
        self.name, self.entry, self.lo, self.hi = name, mem, int(lo), int(hi)
        self.carry0, self.body, self.owner = carry0, body, owner
        #: the context of a run with :attr:`Ctx.lazy_loops` (the loops of the body are
        #: checked against it), or None
        self.ctx = ctx
        #: (k, from the seed) -> the iteration's final memory and carry out
        self.runs: dict[tuple[int, bool], tuple[ConcreteMemory, Carry]] = {}

    def _mine(self, dom_k: tuple[Cond, Val]) -> int | None:
        dom, k = dom_k
        assert isinstance(dom, bool), "concrete owner"
        if not dom or not self.lo <= int(k) < self.hi:
            return None
        return int(k)

    def _run(self, k: int, seeded: bool) -> tuple[ConcreteMemory, Carry]:
        """Iteration ``k`` on (a read-logging overlay of) the entry memory, with ``carry0``
        (``seeded``) or with ``inv(k)``."""
        if k == self.lo or not self.carry0:
            seeded = True
        hit = self.runs.get((k, seeded))
        if hit is not None:
            return hit
        carry = self.carry0 if seeded else self._run(k - 1, True)[1]
        reads = _Reads(self.entry)
        view = ConcreteMemory(reads.page, reads.cell, namer=self.entry.namer)
        if self.ctx is None:
            out, carry_out = self.body(view, carry, CBV(k, 64))
        else:
            self.ctx.lazy_stack.append(self.name)
            try:
                out, carry_out = self.body(view, carry, CBV(k, 64))
            finally:
                self.ctx.lazy_stack.pop()
        assert isinstance(out, ConcreteMemory)
        self._check(k, reads, out)
        if not seeded and not _carry_eq(carry_out, self._run(k, True)[1]):
            raise InternalMismatch(f"lazy replay of {self.name}: iteration {k} hands on another "
                                   "carry than one step from the seed (carry-step)")
        self.runs[(k, seeded)] = (out, carry_out)
        return out, carry_out

    def _check(self, k: int, reads: _Reads, out: ConcreteMemory) -> None:
        """Frame-read and frame-write of iteration ``k``, on the values it ran with."""
        pages, cells = _written(out)
        for what, keys, owner, width in (("read", reads.pages, self.owner.page, KEY_BITS),
                                         ("read", reads.pb, self.owner.pb, 64),
                                         ("wrote", pages, self.owner.page, KEY_BITS),
                                         ("wrote", cells, self.owner.pb, 64)):
            for n in keys:
                if self._mine(owner(CBV(n, width))) != k:
                    kind = "bitmap cell" if width == 64 else "storage key"
                    raise InternalMismatch(
                        f"lazy replay of {self.name}: iteration {k} {what} {kind} {n:#x}, "
                        "outside its frame")

    def load(self, n: int) -> PageState:
        k = self._mine(self.owner.page(CBV(n, KEY_BITS)))
        return self.entry.load(n) if k is None else self._run(k, False)[0].load(n)

    def read_pb(self, b: int) -> Val:
        k = self._mine(self.owner.pb(CBV(b, 64)))
        return self.entry.read_pb(b) if k is None else self._run(k, False)[0].read_pb(b)

    def results(self) -> tuple[Memory, Callable[[], Carry]]:
        out = ConcreteMemory(self.load, self.read_pb, namer=self.entry.namer)
        out.lazy = self

        def carry_out() -> Carry:
            if self.hi <= self.lo:
                return self.carry0
            return self._run(self.hi - 1, True)[1]

        return out, carry_out


def _written(mem: ConcreteMemory) -> tuple[set[int], set[int]]:
    """The storage keys and bitmap cells ``mem`` holds writes for, over its own writes and
    those of the lazy loops it was built on (down to the read-logging overlay an iteration
    started from)."""
    pages, cells = set(mem.pages), set(mem.pb)
    loop = mem.lazy
    if loop is not None:
        for run, _ in loop.runs.values():
            p, c = _written(run)
            pages |= p
            cells |= c
        p, c = _written(loop.entry)
        pages |= p
        cells |= c
    return pages, cells


class _SymLoop:
    """The symbolic summary of one loop and the lazily generated lemmas that justify it.

    Lemmas are generated the first time the summary is used (its memory read or its carry
    asked for), in the path condition the loop was built in; a summary nobody reads cannot
    influence an obligation and needs no lemma.
    """

    def __init__(self, ctx: Ctx, name: str, mem: Memory, lo: Val, hi: Val, carry0: Carry,
                 body: Body, owner: Owner) -> None:
        self.ctx, self.name, self.mem, self.lo, self.hi = ctx, name, mem, lo, hi
        self.carry0, self.body, self.owner = carry0, body, owner
        self.pc0 = list(ctx.pc)
        self.trackers: dict[int, TrackingMemory] = {}
        self.lemmas_done = False
        #: the loops created inside the body (:attr:`Lemma.inner`), and the loops whose
        #: body this one was created in (the body of this one runs inside them, wherever
        #: a read makes it run, as it runs under the path condition it was created in)
        self.inner: set[str] = set()
        self.stack0 = list(ctx.sym_stack)

    def in_range(self, k: Val) -> Cond:
        return bv.and_(bv.ule(self.lo, k), bv.ult(k, self.hi))

    def run(self, m: Memory, carry: Carry, k: Val) -> tuple[Memory, Carry]:
        ctx = self.ctx
        key = (self.name, *_key(m, carry, k))
        hit = ctx._memo.get(key)
        if hit is None:
            saved, ctx.pc = ctx.pc, [*self.pc0]
            stack, ctx.sym_stack = ctx.sym_stack, [*self.stack0, self]
            try:
                with ctx.assuming(self.in_range(k)):
                    hit = ctx._memo[key] = self.body(m, carry, k)
            finally:
                ctx.pc, ctx.sym_stack = saved, stack
            ctx._keep.append((m, carry, k))  # ids in the key must not be recycled
        return hit

    def inv(self, k: Val) -> Carry:
        """The carry entering iteration k: the seed, or one step from the seed at k - 1."""
        if not self.carry0:
            return ()
        return _carry_ite(bv.eq(k, self.lo), self.carry0, self.run(self.mem, self.carry0, k - 1)[1])

    def tracker(self, k: BV) -> TrackingMemory:
        key = k.get_id()
        t = self.trackers.get(key)
        if t is None:
            t = self.trackers[key] = TrackingMemory(self.mem, lambda: tuple(self.ctx.pc))
            self.ctx._keep.append(k)
        return t

    def at(self, k: Val) -> tuple[Memory, Carry]:
        """Iteration k run on (a read-logging view of) the entry memory."""
        return self.run(self.tracker(k), self.inv(k), k)

    def owned(self, dom_k: tuple[Cond, Val]) -> tuple[Cond, Val]:
        dom, k = dom_k
        return bv.and_(dom, self.in_range(k)), k

    def results(self) -> tuple[Memory, Callable[[], Carry]]:
        mem, owner = self.mem, self.owner

        def load(n: Val) -> PageState:
            self.lemmas()
            cond, k = self.owned(owner.page(n))
            if isinstance(cond, bool) and not cond:
                return mem.load(n)
            return ite_page(cond, self.at(k)[0].load(n), mem.load(n))

        def read_pb(b: Val) -> Val:
            self.lemmas()
            cond, k = self.owned(owner.pb(b))
            if isinstance(cond, bool) and not cond:
                return mem.read_pb(b)
            return bv.ite(cond, self.at(k)[0].read_pb(b), mem.read_pb(b))

        out = SymMemory(load, read_pb, (mem,), lambda n: self.owned(owner.page(n))[0],
                        lambda b: self.owned(owner.pb(b))[0])

        def carry_out() -> Carry:
            self.lemmas()
            if not self.carry0:
                return ()
            last = self.run(self.mem, self.carry0, self.hi - 1)[1]
            return _carry_ite(bv.ule(self.hi, self.lo), self.carry0, last)

        return out, carry_out

    def lemmas(self) -> None:
        """Record frame-write, frame-read and carry-step for iteration k (fresh, or the
        index symbol the obligations use for this loop, so the instantiation is shared)."""
        if self.lemmas_done:
            return
        self.lemmas_done = True
        ctx, owner, name = self.ctx, self.owner, self.name
        saved, ctx.pc = ctx.pc, [*self.pc0]
        try:
            hint = ctx.k_hint.get(name)
            k = hint if hint is not None else ctx.fresh(f"{name}.k")
            premise = z3.And(*ctx.pc, self.in_range(k)) if ctx.pc else self.in_range(k)
            assert not isinstance(premise, bool)

            def mine(n: Val) -> Cond:
                d, kk = owner.page(n)
                return bv.and_(d, _is_index(kk, k))

            def mine_pb(b: Val) -> Cond:
                d, kk = owner.pb(b)
                return bv.and_(d, _is_index(kk, k))

            # iteration k on a read-logging view of the entry memory; then observe its
            # output at a fresh index of block k (those reads are logged too)
            tracker = self.tracker(k)
            n2, b2 = ctx.fresh(f"{name}.n", KEY_BITS), ctx.fresh(f"{name}.b")
            m_k, c_k = self.at(k)
            with ctx.assuming(self.in_range(k)):
                if not _is_false(owner.page(n2)[0]):
                    with ctx.assuming(bv.as_z3_bool(mine(n2))):
                        m_k.load(n2)
                if not _is_false(owner.pb(b2)[0]):
                    with ctx.assuming(bv.as_z3_bool(mine_pb(b2))):
                        m_k.read_pb(b2)
            # frame-write: anything the iteration may have written lies in block k
            frame_w = bv.and_(bv.or_(bv.not_(footprint(m_k, tracker, n2)), mine(n2)),
                              bv.or_(bv.not_(footprint(m_k, tracker, b2, pageblock=True)), mine_pb(b2)))
            # frame-read: every read, under the condition it was made, hit block k
            reads = bv.and_(
                *(z3.Implies(bv.as_z3_bool(bv.and_(*pc)), bv.as_z3_bool(mine(n))) for pc, n in tracker.log),
                *(z3.Implies(bv.as_z3_bool(bv.and_(*pc)), bv.as_z3_bool(mine_pb(b)))
                  for pc, b in tracker.log_pb))
            inner = self.inner
            ctx.lemmas.append(Lemma(name, "frame-write", premise, bv.as_z3_bool(frame_w), k, n2,
                                    inner=inner))
            if owner.bound is not None:
                ctx.lemmas.append(Lemma(name, "frame-bound", premise, bv.as_z3_bool(owner.bound(k)), k,
                                        text=owner.bound_text, inner=inner))
            ctx.lemmas.append(Lemma(name, "frame-read", premise, bv.as_z3_bool(reads), k, inner=inner))
            if self.carry0:
                step = _carry_eq(c_k, self.run(self.mem, self.carry0, k)[1])
                ctx.lemmas.append(Lemma(name, "carry-step", premise, bv.as_z3_bool(step), inner=inner))
        finally:
            ctx.pc = saved


def _is_index(kk: Val, k: Val) -> Cond:
    """``kk == k`` for an owner's iteration index ``kk``; ``x - y == k`` is stated as
    ``x == y + k`` (the same in modular arithmetic), which z3 decides about 10x faster in
    the frame lemmas of loops whose index is an offset (``(b << 9) - head``: a pageblock's
    iteration in 6.12's loops)."""
    if isinstance(kk, z3.BitVecRef) and z3.is_app_of(kk, z3.Z3_OP_BSUB) \
            and kk.num_args() == 2 and isinstance(k, z3.BitVecRef):
        x, y = kk.arg(0), kk.arg(1)
        return bv.eq(x, y + k)
    return bv.eq(kk, k)


def _is_false(c: Cond) -> bool:
    return isinstance(c, bool) and not c


__all__ = ["Body", "Carry", "ConcreteMemory", "Ctx", "LazyNesting", "Lemma", "Owner", "block_loop",
           "never"]

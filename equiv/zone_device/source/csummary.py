"""Loops of the C text summarised instead of unrolled: the C interpreter's loop induction.

A ``for`` loop of the tree's text such as ``for (pfn = head_pfn + 2; pfn < end_pfn; pfn++)
zone_device_page_init_from_template(pfn_to_page(pfn), pfn, &template);`` is, after its
first few iterations (at most :data:`PEEL`) are run as written, replaced by a *summary*
derived from the C itself, as :mod:`equiv.loops` does for the hand-written model:

* **Shape** (:func:`equiv.zone_device.source.cloops.loop_shape`): a ``for``, ``while`` or
  ``do`` loop over a variable ``v`` of any integer type, a condition ``v < hi``,
  ``v <= hi`` or ``v != hi`` whose bound the body does not change, a constant step
  (``v++``, ``v += S``, ``v = v + S``) taken once per iteration: in the ``for`` update, as
  the body's last statement or in the condition (``++v < hi``); or, counting down,
  ``v--``, ``v -= S``, ``v = v - S`` with ``v > lo``, ``v >= lo`` or ``v != lo``; either
  comparison written either way round (``hi > v``); no ``break``, ``return`` or ``goto``
  out of the body.  Iteration ``k`` runs with ``v = lo + k * S`` (``lo - k * S`` counting
  down); the loop runs ``K`` iterations, counted from the first value, the bound and ``S``
  in the type the condition compares them in (C11 6.3.1.8); for ``!=``,
  ``|bound - first| / S``, exact only if the variable reaches the bound (a no-wrap claim).
* **Frame** (derived from the loop variable): iteration ``k`` owns the struct pages
  ``[q_k, q_k + S)`` with ``q_k = lo + delta + k * S`` (``lo + delta - k * S`` counting
  down), where ``delta`` is the offset of the first
  struct page the body writes from ``v`` (0 for ``pfn_to_page(pfn)``; ``head_pfn`` for a loop
  over an index ``i`` writing ``pfn_to_page(head_pfn + i)``), and the pageblock cells whose
  first pfn lies in that block (none if the body writes no cell).  "First" is the least page
  the body writes anywhere (:func:`written_keys`): also below a store made after an inner
  summarised loop (v7.3-rc1's ``prep_compound_head()`` after ``memmap_init_compound()``'s
  tail loop), and the first page of that inner loop's own frame.
* **Carry**: the locals the body assigns or takes the address of, and the struct locals
  (``struct page template``) alive at the loop: the carry entering iteration ``k`` is the seed
  for ``k = 0`` and one step from the seed at ``k - 1`` otherwise.
* **Summary**: after the loop, a struct page ``n`` owned by iteration ``k < K`` holds what the
  body, interpreted at ``k`` on the entry memory with that carry, leaves there; any other
  page its entry value.  The carried locals and the loop variable are not followed past the
  loop (reading them is an error naming the loop).

The summary is exact only if these lemmas hold for a fresh ``k < K`` (each recorded as a
:class:`CLemma` and proved with the obligations that use it; the premise is the loop's path
condition and ``k < K``):

* ``frame-write``: the body changes no struct page and no pageblock cell outside block ``k``;
* ``frame-read``: every read the body makes of its entry memory (under the path condition it
  was made on) lies in block ``k`` or in no block of an earlier iteration (a page or cell
  no iteration before ``k`` changed, by ``frame-write``: the loop's real run reads there
  what the body reads in the entry memory; a read of the compound's head by a tail loop,
  or of the pages past the range);
* ``carry-step``: the carry after iteration ``k`` is the same from ``inv(k)`` as from the seed;
* ``no-wrap``: ``q_k + S`` does not wrap, ``v``'s type holds ``lo + k * S`` and
  ``lo + (k + 1) * S`` and the comparison sees them rise (fall, counting down) without
  wrapping (so the loop ends where ``K`` says), for ``<=`` the trip count does not
  overflow, and for ``!=`` the bound lies ahead of the first value a whole number of steps
  away (else the loop would step over it and run until it wraps).

In the concrete domain (a counterexample's replay) a loop of at most
:data:`CONCRETE_UNROLL` trips runs as written; a longer one is read through the same
summary, each page computed by its own iteration (the lemmas having been proved).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

import z3
from attrs import frozen

from equiv.config import Config
from equiv.engine import bv
from equiv.engine.bv import CBV, Cond, Val
from equiv.engine.memo import on_forget
from equiv.linux.ktree import Node
from equiv.page_model import PageState, ite_page
from equiv.zone_device.source.cint import UNSIGNED_LONG, IntType, common_type, convert
from equiv.zone_device.source.cloops import LoopShape
from equiv.zone_device.source.cstate import (
    MEMO_TERMS,
    CCond,
    CInt,
    Frame,
    InterpError,
    KeyCanon,
    Layer,
    MergeLayer,
    Oracle,
    Outcome,
    PageStore,
    Poison,
    Ptr,
    Slot,
    State,
    TrackLayer,
    Value,
    term_id,
)

#: Most iterations run as written before a loop is summarised (the first tail of a 6.12
#: compound writes page[2] through prep_compound_head: outside its own block, so the
#: summary of that loop starts at its second iteration); a symbolic run peels as few as the
#: summary can follow (:func:`equiv.zone_device.source.cstmt.peeled_summary`).
PEEL = 2
#: Longest loop a concrete replay runs iteration by iteration.
CONCRETE_UNROLL = 4096


@frozen(eq=False)
class WitnessPart:
    """What one conjunct of a lemma's claim is about, for its counterexample: a struct page
    (``pfn``; for frame-write its bytes after the iteration and at its entry), a pageblock
    cell (``block``; the same), or neither (only the iteration is shown)."""

    what: str  # "write", "pageblock write", "read", or the lemma's kind
    pfn: z3.ExprRef | None = None
    block: z3.ExprRef | None = None
    after: z3.ExprRef | None = None
    before: z3.ExprRef | None = None


@frozen(eq=False)
class LemmaWitness:
    """The terms a failed lemma's model is read at (:func:`lemma_counterexample`): the
    iteration ``k``, the first struct page of its block ``q`` (``q_k``), the step ``S``, and
    per conjunct of the claim (in the order of ``claim``'s children) what it is about."""

    k: z3.ExprRef
    q: z3.ExprRef
    step: z3.ExprRef
    parts: tuple[WitnessPart, ...]


@frozen(eq=False)
class CLemma:
    """A loop-summary lemma of the C text: ``premise -> claim`` must be valid under the
    assumptions."""

    loop: str  # "mm/mm_init.c:1062 memmap_init_compound"
    kind: str
    premise: z3.BoolRef
    claim: z3.BoolRef
    #: a claim that implies ``claim`` and is cheaper to prove, tried first (for
    #: frame-write: no page outside the block is in the iteration's footprint, a question
    #: over scalars; the pages' bytes are compared only if that fails)
    stronger: z3.BoolRef | None = None
    #: the terms a counterexample of the claim is read at (None: none is shown)
    witness: LemmaWitness | None = None

    @property
    def formula(self) -> z3.BoolRef:
        return z3.Implies(self.premise, self.claim)


@frozen
class LemmaCex:
    """A failed loop-summary lemma's counterexample, read from the solver's model of the
    negated conjunct under the assumptions and the premise: the solver's model, not replayed
    (the model may be one of inputs no caller passes if an assumption is missing, or of a
    summary too weak to follow the loop; a reader tells a real out-of-frame write from a
    weak summary by the page and the fields).

    ``iteration`` is ``k`` (counted from the first summarised iteration); ``pfn`` the struct
    page (or ``block`` the pageblock cell) the conjunct is about; ``where`` that page's place
    relative to the iteration's block (``"the last page of block k-1"``); ``fields`` the
    struct page members whose bytes the iteration changed there (frame-write), by their
    first kernel name."""

    loop: str
    kind: str
    what: str
    iteration: int | None = None
    pfn: int | None = None
    block: int | None = None
    where: str = ""
    fields: tuple[str, ...] = ()

    def text(self) -> str:
        """One line: ``frame-write of mm/mm_init.c:1161 memmap_init_zone_device: iteration
        k=1 writes pfn 0x40007, the last page of block k-1: flags, private (the solver's
        model, not replayed)``."""
        head = f"{self.kind} of {self.loop}: "
        it = f"iteration k={self.iteration}" if self.iteration is not None else "an iteration"
        verb = {"write": "writes", "pageblock write": "writes", "read": "reads"}.get(
            self.what, "breaks it at")
        obj = ""
        if self.pfn is not None:
            obj = f" struct page pfn {self.pfn:#x}"
        elif self.block is not None:
            obj = f" pageblock cell {self.block:#x}"
        where = f", {self.where}" if self.where else ""
        fields = f": {', '.join(self.fields)}" if self.fields else ""
        tail = " (the solver's model, not replayed)"
        if self.what.startswith("carry "):
            return (f"{head}{it}: {self.what.removeprefix('carry ')} after it is not what "
                    f"one step from the seed gives{tail}")
        if verb == "breaks it at":
            return f"{head}{it}{tail}"
        return f"{head}{it} {verb}{obj}{where}{fields}{tail}"


def _block_place(off: int, step: int, k: int | None = None) -> str:
    """Where a page ``off`` struct pages from the first of block ``k`` lies (``step``
    pages per block): relative to ``k`` (``block k-1``) when near it, else the block's
    own number (``block -3``: before the first summarised iteration's)."""
    if step <= 0:
        return f"offset {off} from the first page of block k"
    j, r = divmod(off, step)
    blk = "block k" if j == 0 else f"block k{j:+d}"
    if k is not None and abs(j) > 2:
        blk = f"block {k + j}" + (" (before the first summarised block)" if k + j < 0 else "")
    if j != 0 and r == step - 1:
        return f"the last page of {blk}"
    if r == 0:
        return f"the first page of {blk}"
    return f"page {r} of {blk}"


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def lemma_counterexample(lm: CLemma, part: int, model: z3.ModelRef,
                         atoms: Sequence[tuple[int, int, str]] = (),
                         sub: Sequence[tuple[z3.ExprRef, z3.ExprRef]] = ()) -> LemmaCex:
    """What ``model`` (one of the assumptions, ``lm``'s premise and the negation of its
    conjunct ``part``) says: the iteration, the struct page or pageblock cell and, for a
    frame-write conjunct, the members whose bytes differ from the entry's (``atoms``: the
    struct page's byte ranges as ``(offset, size, name)``).  ``sub``: substitutions made
    in the query the model is of (an order class's order, proved order by order)."""
    w = lm.witness
    if w is None:
        return LemmaCex(lm.loop, lm.kind, lm.kind)

    def val(t: z3.ExprRef) -> int | None:
        if sub:
            t = z3.substitute(t, *sub)
        v = model.eval(t, model_completion=True)
        return v.as_long() if z3.is_bv_value(v) else None

    wp = w.parts[part] if 0 <= part < len(w.parts) else WitnessPart(lm.kind)
    k = val(w.k)
    pfn = val(wp.pfn) if wp.pfn is not None else None
    block = val(wp.block) if wp.block is not None else None
    where = ""
    q, step = val(w.q), val(w.step)
    if pfn is not None and q is not None and step is not None:
        where = _block_place(_signed((pfn - q) % (1 << 64)), step, k)
    fields: list[str] = []
    if wp.after is not None and wp.before is not None:
        a, b = val(wp.after), val(wp.before)
        if a is not None and b is not None and a != b:
            if wp.pfn is None:
                fields = ["migratetype bits"]
            else:
                for off, size, name in atoms:
                    mask = (1 << (8 * size)) - 1
                    if (a >> (8 * off)) & mask != (b >> (8 * off)) & mask and name not in fields:
                        fields.append(name)
                if not fields:
                    fields = [f"bytes {x}" for x in range(max(a.bit_length(), b.bit_length()) // 8 + 1)
                              if (a >> (8 * x)) & 0xFF != (b >> (8 * x)) & 0xFF][:8]
    return LemmaCex(lm.loop, lm.kind, wp.what, k, pfn, block, where, tuple(fields))


class Interprets(Protocol):
    """The interpreter as a loop summary calls it back: to run the loop's body on an
    iteration's state, join the states that leave it, and record the lemmas the summary
    needs.  :class:`equiv.zone_device.source.cinterp.Interp` is one (mypy checks it where
    the interpreter makes a :class:`LoopSummary`); the summary never imports it."""

    #: the run is symbolic (z3 terms), not a concrete replay
    symbolic: bool
    #: names the run's symbols (two trees in one query do not share them)
    label: str
    cfg: Config
    #: the pfn terms' canonical forms of the run (:class:`~equiv.zone_device.source.cstate.KeyCanon`)
    canon: KeyCanon
    #: feasibility of path conditions (None in the concrete domain)
    oracle: Oracle | None
    #: the loop-summary lemmas the run relies on, appended by each summary
    lemmas: list[CLemma]

    def fresh_id(self) -> int:
        """A number no other symbol of the run has taken."""
        ...

    def c64(self, v: int) -> Val:
        """``v`` as a 64-bit value of the run's domain."""
        ...

    def as_int(self, v: Value) -> Val:
        """A C value as an integer (a condition as 0/1, a pointer as its address)."""
        ...

    def stmt(self, frame: Frame, node: Node, state: State) -> Outcome:
        """The states leaving the statement ``node`` of ``frame`` entered in ``state``."""
        ...

    def guarded(self, run: Callable[[State], Outcome], st: State) -> Outcome:
        """``run(st)``, on a branch entered without a feasibility check (a failure on an
        infeasible one is dropped)."""
        ...

    def merge(self, states: list[State]) -> State:
        """One state for states that reach the same point on exclusive paths."""
        ...

    def merge_values(self, pcs: list[Cond], vs: list[Value]) -> Value:
        """One value for values on exclusive paths (``pcs``)."""
        ...


#: a carry: carried locals' values and carried struct locals' bytes
Carry = tuple[dict[str, Value], dict[str, PageState]]


class LoopSummary:
    """One summarised loop, entered in state ``entry`` with the loop variable at ``lo``."""

    def __init__(self, it: Interprets, frame: Frame, node: Node, shape: LoopShape, entry: State,
                 lo: Val, hi: Val, step: int, log2: z3.BitVecRef | None = None, *,
                 index: IntType = UNSIGNED_LONG, bound: IntType = UNSIGNED_LONG) -> None:
        """``step`` is the loop's constant step; or, with ``log2`` (an order class's
        symbolic compound order, :attr:`equiv.memmap.Scenario.order_v`), the step is the
        symbolic power of two ``1 << log2`` (the interpreter proved the loop's step equal to
        it under the assumptions) and ``step`` is unused.

        ``index`` is the loop variable's C type (``lo`` a value of it), ``bound`` the type of
        the condition's right side (``hi``).  The condition compares them in their common
        type (the usual arithmetic conversions, C11 6.3.1.8: an ``int`` index against an
        ``unsigned long`` bound is converted to ``unsigned long``); the trip count is taken
        there, and the no-wrap lemma claims that the index holds ``lo + k * step`` exactly
        and that the comparison sees that value, for every iteration and the exit test."""
        self.it, self.frame, self.shape, self.entry = it, frame, shape, entry
        self.lo, self.hi, self.s = lo, hi, step
        self.index, self.cmp = index, common_type(index, bound)
        #: the index's first value and the bound in the comparison's type
        self.lo_c, self.hi_c = convert(lo, index, self.cmp), convert(hi, bound, self.cmp)
        self.log2 = log2
        #: the step as a 64-bit value (a term of ``log2`` for a symbolic step)
        self.step_v: Val = it.c64(step) if log2 is None else z3.BitVecVal(1, 64) << log2
        self.where = f"{frame.file}:{node.start_point[0] + 1} {frame.fn}"
        self.symbolic = it.symbolic
        self.pow2 = log2 is not None or step & (step - 1) == 0
        zero = it.c64(0)
        one = it.c64(1)
        #: the variable falls from ``lo`` to the bound (``hi`` is then the lower end)
        self.down = shape.down
        a, z = self.span_ends()
        if shape.op == "!=" and log2 is not None:
            raise InterpError(f"{self.where}: a loop to 'v != bound' with a symbolic step is "
                              "not summarised")
        if shape.op == "<":
            self.K = bv.ite(self._lt(a, z), self._div(z - a - one) + one, zero)
        elif shape.op == "<=":
            self.K = bv.ite(bv.not_(self._lt(z, a)), self._div(z - a) + one, zero)
        else:  # != : exact only if the bound is reached (the no-wrap lemma claims it)
            self.K = self._div(z - a)
        self.vtype = entry.env[shape.var][0]
        self.carried = sorted(n for n in shape.assigned if n in entry.env and n != shape.var)
        #: struct locals the body may change: found by the probe below (a slot written on
        #: any path of the probe is no longer the entry's object); every run checks the rest
        self.slots: list[str] = []
        self.carry0: Carry = ({n: entry.env[n][1] for n in self.carried}, {})
        self._runs: dict[tuple[object, ...], tuple[State, TrackLayer]] = {}
        self._keep: list[object] = []
        self.lemmas_done = not self.symbolic
        # the probe: iteration k (fresh) from the seed; gives the frame's offset and which
        # memory the body writes, and is the carry-step lemma's right side
        self.k: Val = z3.BitVec(f"{it.label}.loop.k#{it.fresh_id()}", 64) if self.symbolic else zero
        probe = self.run(self.k, self.carry0, check_slots=False) if self.symbolic or \
            bv.ult(zero, self.K) is True else None
        if probe is not None:
            self.slots = sorted(n for n, p in entry.stack.items()
                                if p is not None and probe.stack.get(n) is not p)
            self.carry0 = (self.carry0[0], {n: p for n, p in entry.stack.items()
                                            if n in self.slots and p is not None})
        self.delta: Val = zero
        self.writes_pb = True
        self.writes_pages = True
        if probe is not None:
            self.delta = self._delta(probe)
            self.writes_pb = _writes(probe.mem, pb=True)
            self.writes_pages = _writes(probe.mem, pb=False)
        self.q0 = lo + self.delta
        self.probe = probe

    # -- arithmetic --
    def span_ends(self) -> tuple[Val, Val]:
        """The values the loop variable moves between, low end first, in the comparison's
        type: (first value, bound) for a rising loop, (bound, first value) for a falling
        one."""
        return (self.hi_c, self.lo_c) if self.down else (self.lo_c, self.hi_c)

    def _lt(self, a: Val, b: Val) -> Cond:
        """``a < b`` in the comparison's type."""
        return bv.c_slt(a, b) if self.cmp[1] else bv.ult(a, b)

    def _div(self, x: Val) -> Val:
        if self.log2 is not None:
            return z3.LShR(x, self.log2)
        if self.pow2:
            return bv.lshr(x, bv.ilog2(self.s)) if self.s > 1 else x
        if isinstance(x, CBV):
            return CBV(x.value // self.s, 64)
        return z3.UDiv(x, self.s)

    def _mul(self, k: Val) -> Val:
        if self.log2 is not None:
            return k << self.log2
        if self.pow2:
            return k << bv.ilog2(self.s) if self.s > 1 else k
        return k * self.s

    def v(self, k: Val) -> Val:
        return self.lo - self._mul(k) if self.down else self.lo + self._mul(k)

    def base(self, k: Val) -> Val:
        """The first struct page of iteration ``k``'s block."""
        return self.q0 - self._mul(k) if self.down else self.q0 + self._mul(k)

    def in_range(self, k: Val) -> Cond:
        return bv.ult(k, self.K)

    def in_block(self, k: Val, n: Val) -> Cond:
        """Is struct page ``n`` in iteration ``k``'s frame?  (Never, for a loop whose body
        writes no struct page: the frame-write lemma then claims that.)"""
        if not self.writes_pages:
            return False
        return self.in_block_pfn(k, n)

    def in_block_pfn(self, k: Val, n: Val) -> Cond:
        return bv.ult(n - self.base(k), self.step_v)

    def owner(self, n: Val) -> Val:
        """The iteration whose block holds struct page ``n`` (if any does: below ``K``)."""
        if self.down:  # blocks [q0 - k*S, q0 - k*S + S) fall with k
            return self._div(self.q0 + self.step_v - self.it.c64(1) - n)
        return self._div(n - self.q0)

    def own(self, n: Val) -> tuple[Cond, Val]:
        k = self.owner(n)
        return (self.in_range(k) if self.writes_pages else False), k

    def own_pfn(self, n: Val) -> tuple[Cond, Val]:
        k = self.owner(n)
        return self.in_range(k), k

    def earlier(self, k: Val, n: Val) -> Cond:
        """Is struct page ``n`` in the block of an iteration before ``k`` (of those the
        summary follows)?  Rising, blocks ``0..k-1`` are ``[q0, q0 + k*S)``; falling,
        ``[q_k + S, q0 + S)``."""
        first = self.base(k) + self.step_v if self.down else self.q0
        return bv.ult(n - first, self._mul(k))

    def may_read(self, k: Val, n: Val) -> Cond:
        """The frame-read lemma's claim about a read of struct page ``n`` that iteration
        ``k`` makes of its entry memory: ``n`` is in its own block, or in no earlier
        iteration's (by the frame-write lemma no iteration before ``k`` changed it, so the
        loop's real run reads there what the summary's reading of the entry memory does);
        any page, for a loop that writes none."""
        return self._own_or_unwritten(k, n) if self.writes_pages else True

    def may_read_pb(self, k: Val, b: Val) -> Cond:
        """:meth:`may_read` for pageblock cell ``b`` (an iteration writes the cells whose
        first pfn lies in its block)."""
        return self._own_or_unwritten(k, self._pfn_of_block(b)) if self.writes_pb else True

    def _own_or_unwritten(self, k: Val, pfn: Val) -> Cond:
        return bv.or_(self.in_block_pfn(k, pfn), bv.not_(self.earlier(k, pfn)))

    def _pfn_of_block(self, b: Val) -> Val:
        return b << self.it.cfg.PAGEBLOCK_ORDER

    def own_pb(self, b: Val) -> tuple[Cond, Val]:
        if not self.writes_pb:
            return False, self.it.c64(0)
        return self.own_pfn(self._pfn_of_block(b))

    def in_block_pb(self, k: Val, b: Val) -> Cond:
        return self.in_block_pfn(k, self._pfn_of_block(b)) if self.writes_pb else False

    def _delta(self, probe: State) -> Val:
        """Offset of the first page the body writes from the loop variable (0 if none):
        the least of every page it writes anywhere (:func:`written_keys`: in the layer on
        top, below a store made after an inner summarised loop, the first page of each inner
        loop's frame, and on every joined path), not only of those written last."""
        vk = self.v(self.k)
        best: tuple[int, int, Val] | None = None
        for key in written_keys(probe.mem):
            d = key - vk
            if self.symbolic:
                d = z3.simplify(d)
                if _mentions(d, self.k):
                    continue
            base, off = self.it.canon.canon(d)
            cand = (base, off, d)
            if best is None or (base, off) < (best[0], best[1]):
                best = cand
        return best[2] if best is not None else self.it.c64(0)

    # -- iterations --
    def run(self, k: Val, carry: Carry, check_slots: bool = True) -> State:
        """Iteration ``k`` on (a read-logging view of) the entry memory with ``carry``."""
        return self.run_tracked(k, carry, check_slots)[0]

    def run_tracked(self, k: Val, carry: Carry,
                    check_slots: bool = True) -> tuple[State, TrackLayer]:
        """:meth:`run`, and the layer that logged its reads of the entry memory."""
        key = (_id(k), tuple(_id(v) for v in carry[0].values()),
               tuple(_id(p.bits) for p in carry[1].values()))
        hit = self._runs.get(key)
        if hit is not None:
            return hit
        it, e = self.it, self.entry
        track = TrackLayer(e.mem)
        env = dict(e.env)
        env[self.shape.var] = (self.vtype, CInt(self.v(k), self.index[1], self.index[0]))
        for n, v in carry[0].items():
            env[n] = (e.env[n][0], v)
        stack = {**e.stack, **carry[1]}
        st = State(pc=bv.and_(e.pc, self.in_range(k)), env=env, mem=e.mem.layered(track),
                   stack=stack)
        out = it.guarded(lambda s2: it.stmt(self.frame, self.shape.body, s2), st)
        if out.ret or out.brk or out.goto:
            raise InterpError(f"{self.where}: the loop is left by break, return or goto (not "
                              "summarised)")
        ends = out.normal + out.cont
        if not ends:  # an iteration read where none runs (its path condition is infeasible)
            if it.oracle is None or it.oracle.feasible(st.pc):
                raise InterpError(f"{self.where}: no path through an iteration is feasible")
            ends = [st]
        fin = it.merge(ends)
        for n in e.env:
            if n not in self.carried and n != self.shape.var and n in fin.env and \
                    fin.env[n][1] is not e.env[n][1]:
                raise InterpError(f"{self.where}: the body changes {n} in a way the summary "
                                  "does not follow")
        if check_slots:
            for n, p in e.stack.items():
                if n not in self.slots and p is not None and fin.stack.get(n) is not p:
                    raise InterpError(f"{self.where}: the body changes struct local {n} on "
                                      "a path the summary's probe did not")
        self._runs[key] = (fin, track)
        self._keep.append((k, carry))
        return fin, track

    def carry_of(self, st: State) -> Carry:
        env = {n: st.env[n][1] for n in self.carried if n in st.env}
        stack: dict[str, PageState] = {}
        for n in self.slots:
            p = st.stack.get(n)
            if p is None:
                raise InterpError(f"{self.where}: struct local {n} lost in the loop")
            stack[n] = p
        return env, stack

    def inv(self, k: Val) -> Carry:
        """The carry entering iteration ``k``."""
        if not self.carried and not self.slots:
            return self.carry0
        first = bv.eq(k, self.it.c64(0))
        if first is True:
            return self.carry0
        prev = self.carry_of(self.run(k - self.it.c64(1), self.carry0))
        if first is False:
            return prev
        env = {n: self.it.merge_values([first, True], [self.carry0[0][n], prev[0][n]])
               for n in self.carried}
        stack = {n: ite_page(first, self.carry0[1][n], prev[1][n]) for n in self.slots}
        return env, stack

    def at(self, k: Val) -> State:
        return self.run(k, self.inv(k))

    def inside(self, n: Val, k: Val, pc: Cond,
               read: Callable[[PageStore, Val, Cond], Val]) -> Val:
        """What iteration ``k`` (a term, e.g. the owner of an observation index) leaves at
        ``n``: read from the lemma's iteration at the free symbol ``self.k``, under the
        condition that ``n`` lies in its block, then ``self.k`` replaced by ``k``.  Every
        decision taken while interpreting that iteration held for all values of the free
        symbol on its path, so the instance is exact; reading it costs no new
        interpretation of the body."""
        kk = self.k
        got = read(self.at(kk).mem, n, bv.and_(pc, self.in_range(kk), self.in_block_pfn(kk, n)))
        assert isinstance(got, z3.ExprRef) and isinstance(k, z3.ExprRef)
        return z3.substitute(got, (kk, k))

    # -- the state after the loop --
    def exit_state(self) -> State:
        e = self.entry
        env = dict(e.env)
        for n in [*self.carried, self.shape.var]:
            env[n] = (e.env[n][0], Poison(n, self.where))
        stack: dict[str, PageState | None] = dict(e.stack)
        for n in self.slots:
            stack[n] = None
        return State(pc=e.pc, env=env, mem=e.mem.layered(SummaryLayer(self)), stack=stack)

    # -- lemmas --
    def ensure_lemmas(self) -> None:
        if self.lemmas_done:
            return
        self.lemmas_done = True
        it, e, k = self.it, self.entry, self.k
        premise = bv.as_z3_bool(bv.and_(e.pc, self.in_range(k)))
        fin, track = self.run_tracked(k, self.inv(k))
        # any struct page n, named by its offset from the block's first page: n = q_k + x
        # (a bijection of the pages for each k, so the lemmas claim the same), whose block
        # tests then fold (n - q_k == x) before the solver sees them
        x2 = z3.BitVec(f"{it.label}.loop.x#{it.fresh_id()}", 64)
        n2 = self.base(k) + x2
        b2 = z3.BitVec(f"{it.label}.loop.b#{it.fresh_id()}", 64)
        # the iteration's output in its own block, read first so that the reads it makes
        # lazily (through summaries of inner loops) are logged under that condition
        fin.mem.read_any(n2, bv.and_(premise, self.in_block_pfn(k, n2)))
        if self.writes_pb:
            fin.mem.read_pb_any(b2, bv.and_(premise, self.in_block_pb(k, b2)))
        out_n = fin.mem.read_any(n2, False)
        ent_n = e.mem.read_any(n2, False)
        outside = bv.as_z3_bool(bv.not_(self.in_block(k, n2)))
        fw = [z3.Implies(outside, out_n.bits == ent_n.bits)]
        # the pages the iteration itself may have written (its footprint above the entry
        # memory): none outside the block implies the bytes there are the entry's
        track.hide = True
        try:
            written = bv.as_z3_bool(fin.mem.footprint(n2))
        finally:
            track.hide = False
        out_b = fin.mem.read_pb_any(b2, False)
        ent_b = e.mem.read_pb_any(b2, False)
        pb_frame = z3.Implies(bv.as_z3_bool(bv.not_(self.in_block_pb(k, b2))), out_b == ent_b)
        fw.append(pb_frame)
        fw_strong = z3.And(z3.Implies(outside, z3.Not(written)), pb_frame)
        reads, read_parts = _read_claims(
            [(pc, self.may_read(k, n), WitnessPart("read", pfn=_z(n))) for pc, n in track.log] +
            [(pc, self.may_read_pb(k, b), WitnessPart("read", block=_z(b)))
             for pc, b in track.log_pb])
        add = it.lemmas.append

        def witness(*parts: WitnessPart) -> LemmaWitness:
            return LemmaWitness(_z(k), _z(self.q0 + self._mul(k)), _z(self.step_v), parts)

        add(CLemma(self.where, "frame-write", premise, z3.And(*fw), fw_strong,
                   witness(WitnessPart("write", pfn=_z(n2), after=_z(out_n.bits),
                                       before=_z(ent_n.bits)),
                           WitnessPart("pageblock write", block=_z(b2), after=_z(out_b),
                                       before=_z(ent_b)))))
        add(CLemma(self.where, "frame-read", premise, z3.And(*reads) if reads else z3.BoolVal(True),
                   witness=witness(*read_parts)))
        if self.carried or self.slots:
            assert self.probe is not None
            a, b = self.carry_of(fin), self.carry_of(self.probe)
            eqs = [bv.as_z3_bool(_value_eq(it, a[0][n], b[0][n])) for n in self.carried]
            eqs += [a[1][n].bits == b[1][n].bits for n in self.slots]
            add(CLemma(self.where, "carry-step", premise, z3.And(*eqs) if eqs else z3.BoolVal(True),
                       witness=witness(*(WitnessPart(f"carry {n}") for n in
                                         [*self.carried, *self.slots]))))
        vk = self.base(k)
        wrap = [bv.as_z3_bool(bv.ule(vk, vk + self.step_v))]
        lo_end, hi_end = self.span_ends()
        if self.shape.op == "<=":
            wrap.append(bv.as_z3_bool(bv.ne(self._div(hi_end - lo_end) + it.c64(1), it.c64(0))))
        if self.shape.op == "!=":  # the variable reaches the bound, not past it
            wrap.append(bv.as_z3_bool(bv.not_(self._lt(hi_end, lo_end))))
            if self.log2 is None and self.s != 1:
                gap = hi_end - lo_end
                rem = gap & it.c64(self.s - 1) if self.pow2 else (
                    CBV(gap.value % self.s, 64) if isinstance(gap, CBV) else z3.URem(gap, self.s))
                wrap.append(bv.as_z3_bool(bv.eq(rem, it.c64(0))))
        wrap += self._index_claims(k)
        add(CLemma(self.where, "no-wrap", premise, z3.And(*wrap), witness=witness()))

    def _index_claims(self, k: Val) -> list[z3.BoolRef]:
        """What makes the trip count exact for the index's type, at iteration ``k`` and at
        the test after it: the index holds ``lo + j * step`` (no wrap of its type: C11
        6.2.5p9 for an unsigned one, 6.5p5 for a signed one), the comparison's type holds
        that value converted (6.3.1.3), and the compared values do not wrap (they rise
        with ``j``).  Claims that fold to true are left out (an ``unsigned long`` index
        against an ``unsigned long`` bound adds only the last)."""
        one = self.it.c64(1)
        (iw, isg), cw = self.index, self.cmp[0]
        out: list[z3.BoolRef] = []
        for j in (k, k + one):
            x = self.v(j)
            if iw < 64:
                out.append(bv.as_z3_bool(bv.eq(bv.c_convert(x, iw, isg), x)))
            xj = self.lo_c - self._mul(j) if self.down else self.lo_c + self._mul(j)
            if cw < 64:
                out.append(bv.as_z3_bool(bv.eq(convert(x, self.index, self.cmp), xj)))
        xk = self.lo_c - self._mul(k) if self.down else self.lo_c + self._mul(k)
        if self.down:  # the compared values fall without wrapping
            out.append(bv.as_z3_bool(bv.not_(self._lt(xk, xk - self.step_v))))
        else:
            out.append(bv.as_z3_bool(bv.not_(self._lt(xk + self.step_v, xk))))
        return [c for c in out if not z3.is_true(z3.simplify(c))]


class SummaryLayer(Layer):
    """The memory after a summarised loop."""

    def __init__(self, summary: LoopSummary) -> None:
        self.summary = summary
        self._pages: dict[object, PageState] = {}
        self._pbs: dict[object, Val] = {}
        self._keep: list[object] = []

    def page(self, key: Val, pc: Cond) -> PageState:
        s = self.summary
        s.ensure_lemmas()
        memo = (_id(key), _id(pc))
        hit = self._pages.get(memo)
        if hit is not None:
            return hit
        dom, k = s.own(key)
        if isinstance(dom, bool) or (s.symbolic and z3.is_false(z3.simplify(dom))):
            out = s.at(k).mem.read_any(key, pc) if dom is True else \
                s.entry.mem.read_any(key, pc)
        else:
            out = ite_page(dom, PageState(bits=s.inside(key, k, pc,
                                                        lambda m, n, c: m.read_any(n, c).bits)),
                           s.entry.mem.read_any(key, bv.and_(pc, bv.not_(dom))))
        self._pages[memo] = out
        self._keep.append((key, pc))
        return out

    def footprint(self, n: Val) -> Cond:
        s = self.summary
        s.ensure_lemmas()
        return bv.or_(s.own(n)[0], s.entry.mem.footprint(n))

    def pb(self, b: Val, pc: Cond) -> Val:
        s = self.summary
        s.ensure_lemmas()
        memo = (_id(b), _id(pc))
        hit = self._pbs.get(memo)
        if hit is not None:
            return hit
        dom, k = s.own_pb(b)
        if isinstance(dom, bool):
            out = s.at(k).mem.read_pb_any(b, pc) if dom else s.entry.mem.read_pb_any(b, pc)
        else:
            inside = s.inside(s._pfn_of_block(b), k, pc, lambda m, _n, c: m.read_pb_any(b, c))
            out = bv.ite(dom, inside, s.entry.mem.read_pb_any(b, bv.and_(pc, bv.not_(dom))))
        self._pbs[memo] = out
        self._keep.append((b, pc))
        return out


def _z(x: Val) -> z3.ExprRef:
    """A 64-bit (or page-wide) value as a z3 term (a counterexample's witness)."""
    if isinstance(x, CBV):
        return z3.BitVecVal(x.value, x.width)
    assert isinstance(x, z3.ExprRef)
    return x


def _read_claims(log: list[tuple[Cond, Cond, WitnessPart]]
                 ) -> tuple[list[z3.BoolRef], list[WitnessPart]]:
    """``pc -> inside`` for each logged read, leaving out those whose ``inside`` folds to
    true (a read of the iteration's own struct page) or whose ``pc`` is false, and
    duplicates; with each claim, the read it is about (its counterexample's page).  Of
    ``pc`` only the conjuncts over scalars are kept (those that read no struct page or
    bitmap cell): a weaker premise, so a stronger claim, and one the solver decides without
    the pages' 512-bit terms."""
    out: list[z3.BoolRef] = []
    parts: list[WitnessPart] = []
    seen: set[tuple[int, int]] = set()
    for pc, inside, part in log:
        if pc is False:
            continue
        ins = bv.as_z3_bool(inside)
        ins = z3.simplify(ins)
        if z3.is_true(ins):
            continue
        p = _scalar_part(bv.as_z3_bool(pc))
        key = (p.get_id(), ins.get_id())
        if key in seen:
            continue
        seen.add(key)
        out.append(z3.Implies(p, ins))
        parts.append(part)
    return out, parts


def _scalar_part(pc: z3.BoolRef) -> z3.BoolRef:
    """The conjuncts of ``pc`` (nested ``And`` flattened) that hold no array read."""
    todo, keep = [pc], []
    while todo:
        x = todo.pop()
        if z3.is_and(x):
            todo.extend(x.children())
        elif not has_select(x):
            keep.append(x)
    return z3.And(*keep) if keep else z3.BoolVal(True)


_SELECT: dict[int, tuple[z3.ExprRef, bool]] = {}
on_forget(_SELECT.clear)


def has_select(t: z3.ExprRef) -> bool:
    """Does ``t`` read an array (a struct page or bitmap cell)?  (Process-wide memo by term
    id; each term is kept alive with its entry.)"""
    hit = _SELECT.get(t.get_id())
    if hit is not None:
        return hit[1]
    out = z3.is_select(t) or any(has_select(c) for c in t.children())
    if len(_SELECT) >= MEMO_TERMS:  # bounded: the terms kept alive hold their DAGs
        _SELECT.clear()
    _SELECT[t.get_id()] = (t, out)
    return out


def _iteration_stores(store: PageStore) -> Iterator[PageStore]:
    """Every layer of an iteration's store, each once, down to its loop's read-logging
    layer: through an inner summarised loop to the store it entered with, and into every
    path of a join."""
    todo: list[PageStore] = [store]
    seen: set[int] = set()
    while todo:
        st = todo.pop()
        if id(st) in seen:
            continue
        seen.add(id(st))
        yield st
        below = st.below
        if isinstance(below, SummaryLayer):
            todo.append(below.summary.entry.mem)
        elif isinstance(below, MergeLayer):
            todo.extend(below.stores)


def _writes(store: PageStore, pb: bool) -> bool:
    """Does an iteration's store write a pageblock cell (``pb``) or a struct page (itself
    or through inner loops and joins), down to its loop's read-logging layer?"""
    for st in _iteration_stores(store):
        if st.pbs if pb else st.pages:
            return True
        below = st.below
        if isinstance(below, SummaryLayer) and (
                below.summary.writes_pb if pb else below.summary.writes_pages):
            return True
    return False


def written_keys(store: PageStore) -> list[Val]:
    """The struct pages an iteration's store writes, as pfn terms, down to its loop's
    read-logging layer: the keys of every layer (a store made after an inner summarised loop
    sits above that loop's layer, and the stores before it below), for an inner summarised
    loop that writes struct pages the first page of its frame (``q0``: every page it writes
    lies at or above it), and the keys of every path of a join.  The frame of the iteration
    starts at the least of them (:meth:`LoopSummary._delta`); the frame-write lemma then
    claims that nothing is written outside it."""
    out: list[Val] = []
    for st in _iteration_stores(store):
        out += [k for k, _ in st.pages]
        below = st.below
        if isinstance(below, SummaryLayer) and below.summary.writes_pages:
            out.append(below.summary.q0)
    return out


def _id(x: object) -> object:
    """:func:`~equiv.zone_device.source.cstate.term_id`, through C integers and pointers."""
    if isinstance(x, CInt):
        return ("i", _id(x.v))
    if isinstance(x, Ptr):
        return ("p", x.region, x.obj, x.off, _id(x.idx) if x.idx is not None else None)
    return term_id(x)


def _mentions(term: z3.ExprRef, sym: Val) -> bool:
    if not isinstance(sym, z3.ExprRef):
        return False
    target = sym.get_id()
    seen: set[int] = set()
    todo = [term]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if t.get_id() == target:
            return True
        todo.extend(t.children())
    return False


def _value_eq(it: Interprets, a: Value, b: Value) -> Cond:
    if a is b:
        return True
    if isinstance(a, Ptr) and isinstance(b, Ptr):
        if a.region != b.region or a.obj != b.obj or a.off != b.off:
            return False
        if a.idx is None or b.idx is None:
            return a.idx is None and b.idx is None
        return bv.eq(a.idx, b.idx)
    if isinstance(a, Slot) and isinstance(b, Slot):
        return a.slot == b.slot
    if isinstance(a, CInt | CCond) and isinstance(b, CInt | CCond):
        return bv.eq(it.as_int(a), it.as_int(b))
    return False


__all__ = ["CONCRETE_UNROLL", "PEEL", "CLemma", "Interprets", "LemmaCex", "LemmaWitness",
           "LoopSummary", "SummaryLayer", "WitnessPart", "lemma_counterexample", "written_keys"]

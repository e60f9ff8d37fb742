"""The C interpreter's values and state: what :mod:`equiv.zone_device.source.cinterp` computes with.

* Values: :class:`CInt` (an integer rvalue), :class:`CCond` (a truth value), :class:`Ptr`
  (into the memmap, into an input object, or to a struct local on the stack),
  :class:`Slot` (a struct local such as ``struct page template;`` held by value) and
  :class:`Poison` (a local whose value after a summarised loop is not followed).
* Memory: a :class:`PageStore` holds the struct pages written since its layer began, keyed
  by pfn term, and the pageblock bitmap cells written; anything else it reads from the
  :class:`Layer` below it: the initial memory (:class:`BaseLayer`), the summary of a loop
  (:class:`equiv.zone_device.source.csummary.SummaryLayer`), a read-logging view of a loop's entry
  memory (:class:`TrackLayer`) or the join of several paths (:class:`MergeLayer`).
* Struct locals live in :attr:`State.stack` (one slot per declaration site), so a pointer to
  one survives calls (``zone_device_page_init_from_template(page, pfn, &template)``).
* Where it runs: a :class:`Frame` (a function's or macro body's source, file, line and
  macro arguments, each a :class:`Lazy` expression), and the :class:`Outcome` of a
  statement (the states leaving it normally, by ``return``, ``break`` or ``continue``).

Pfn terms are told apart by :class:`KeyCanon` (``base + constant``); two that cannot be
told apart stop the run (:class:`InterpError`) where a single page must be named, and are
read through an ``ite`` chain (:meth:`PageStore.read_any`) where any page may be meant.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import z3
from attrs import frozen

from equiv.engine import bv
from equiv.engine.bv import BV, CBV, Cond, Val
from equiv.engine.errors import EquivError
from equiv.engine.memo import on_forget
from equiv.engine.query import z3_gave_up
from equiv.linux.ktree import Node
from equiv.page_model import PageState, ite_page


class InterpError(EquivError):
    """The interpreter met C it does not handle (or an undecidable alias).  The message names
    the file, line and construct; the remedy is to model it (a trusted helper) or extend
    the interpreter."""


# ---- values ------------------------------------------------------------------------------


@frozen(eq=False)
class CInt:
    """An integer rvalue of C type ``(bits, signed)``
    (:mod:`equiv.zone_device.source.cint`), held as a 64-bit value: a narrower type's value
    sign-extended (signed) or zero-extended (unsigned)."""

    v: Val
    signed: bool = False
    bits: int = 64

    @property
    def ctype(self) -> tuple[int, bool]:
        """The C integer type, ``(bits, signed)``."""
        return self.bits, self.signed


@frozen(eq=False)
class CCond:
    """A truth value (result of a comparison or ``!``)."""

    c: Cond


@frozen(eq=False)
class Ptr:
    """A pointer.  ``region``: "page" (into the memmap: ``idx`` is the pfn, ``off`` the byte
    offset from that struct page), "obj" (an input object such as the dev_pagemap: ``obj``
    names it), "local" (a struct local: ``obj`` is its stack slot, ``off`` the byte offset)
    or "null"."""

    region: str
    ctype: str  # pointee type, e.g. "struct page", "unsigned long", "atomic_t"
    idx: Val | None = None
    off: int = 0
    obj: str = ""
    addr: Val | None = None  # numeric value, for obj pointers that get stored
    nonnull: Cond = True


@frozen(eq=False)
class Slot:
    """A struct local (``struct page template;``): its bytes are ``State.stack[slot]``."""

    slot: str
    ctype: str


@frozen(eq=False)
class Poison:
    """A local whose value after a summarised loop is not computed; reading it is an error
    naming the variable and the loop."""

    name: str
    where: str


Value = CInt | CCond | Ptr | Slot | Poison


@frozen(eq=False)
class Loc:
    """An lvalue: a local variable, bytes of a struct page, bytes of a struct local, or a
    field of an input object."""

    kind: str  # "var", "mem", "local", "obj"
    name: str = ""
    idx: Val | None = None
    off: int = 0
    size: int = 8
    ctype: str = "unsigned long"


# ---- pfn terms -----------------------------------------------------------------------------


Canon = tuple[int, int]  # (id of the symbolic base term, constant offset) of a pfn


#: A renaming of inputs: each renamed input as a term of fresh ones (for z3.substitute).
Renaming = list[tuple[z3.ExprRef, z3.ExprRef]]
#: One case of a split of the input space: its condition and a renaming of the inputs
#: (a bijection on the case) under which the case's terms are simpler.
Case = tuple[z3.BoolRef, Renaming]


class Oracle:
    """Feasibility of path conditions under the assumptions (symbolic domain).

    With ``cases`` (conditions that together cover the assumptions, e.g. altmap or not),
    a condition is feasible iff it is feasible in some case, each decided by its own
    solver on the renamed terms (a case's renaming is a bijection of its inputs, so
    feasibility is unchanged)."""

    def __init__(self, assumptions: list[z3.BoolRef], cases: list[Case] | None = None, *,
                 timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms
        self.solver = z3.SolverFor("QF_AUFBV")
        self.solver.set("timeout", timeout_ms)
        self.solver.add(*assumptions)
        self.checks = 0
        self.cases: list[tuple[z3.Solver, Renaming]] = []
        #: a model of the assumptions (:meth:`constant_difference`'s candidate differences)
        self._model: z3.ModelRef | None = None
        #: the answers so far, by (case, the condition's id); each entry holds its term
        self._answers: dict[tuple[int, int], tuple[z3.BoolRef, bool]] = {}
        for cond, rename in cases or []:
            s = z3.SolverFor("QF_AUFBV")
            s.set("timeout", timeout_ms)
            s.add(*(z3.simplify(z3.substitute(a, *rename)) for a in [*assumptions, cond]))
            self.cases.append((s, rename))

    def constant_difference(self, a: Val, b: Val) -> int | None:
        """``a - b`` if it is one constant under the assumptions, else None.  Terms over
        different free symbols are taken as unrelated without asking (the assumptions pin no
        symbol to another's value plus a constant)."""
        if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef) and free_names(a) != free_names(b):
            return None
        d = a - b
        if self._model is None:  # one model of the assumptions, asked once
            self.checks += 1
            if self.solver.check(z3.BoolVal(True)) != z3.sat:
                return None
            self._model = self.solver.model()
        v = self._model.eval(d, model_completion=True)
        self.checks += 1
        if self.solver.check(d != v) == z3.unsat:
            delta: int = v.as_long()
            return delta
        return None

    def feasible(self, c: Cond) -> bool:
        if isinstance(c, bool):
            return c
        s = z3.simplify(c)
        if z3.is_false(s):
            return False
        if z3.is_true(s):
            return True
        if self.cases:
            return any(self._case(i, z3.simplify(z3.substitute(c, *rn)) if rn else c)
                       for i, (_, rn) in enumerate(self.cases))
        return self._check(self.solver, c)

    def _case(self, i: int, c: z3.BoolRef) -> bool:
        """Is ``c`` (renamed as case ``i``) feasible in case ``i``?  A condition the
        renaming folds to False (one of the other case: ``altmap_valid`` put in) is not,
        without a query (measured: about 160 of a cell's 350 feasibility queries were
        ``False``).  A condition asked again (``True`` included: whether the case's
        assertions hold) is answered from :attr:`_answers` (its case's assertions do not
        change: each check is in a scope of its own, :meth:`_check`)."""
        if z3.is_false(c):
            return False
        key = (i, c.get_id())
        got = self._answers.get(key)
        if got is None:
            got = self._answers[key] = (c, self._check(self.cases[i][0], c))
        return got[1]

    def _check(self, s: z3.Solver, c: z3.BoolRef) -> bool:
        """Is ``c`` satisfiable with ``s``'s assertions?  ``c`` is asserted in a scope of its
        own (push, add, check, pop), not passed as an assumption.  As far as we can tell, z3's
        incremental core keeps what it made of an assumption (its bit-blasted circuit) for
        the solver's later checks, so a case solver grew with each of a cell's hundreds of
        path conditions and each check paid for them; a popped scope drops it.  Measured on
        the backport series (a worker's cells 18, 16, ..., 0, the same z3 work counted): the
        oracle's checks 5.6-7.3 s of CPU as assumptions, 4.3-5.1 s in scopes, in alternating
        runs (the loop lemmas and ``specialise``'s decisions, whose conditions share terms,
        were 1.8 and 2.0 times the work in scopes: they keep assumptions)."""
        self.checks += 1
        t0 = time.perf_counter()
        s.push()
        s.add(c)
        try:
            r = s.check()
            reason = str(s.reason_unknown()) if r == z3.unknown else ""  # (before the pop)
        finally:
            s.pop()
        if r == z3.unknown:
            why = z3_gave_up(reason, seconds=time.perf_counter() - t0,
                             timeout_ms=self.timeout_ms, rlimit=None)
            raise InterpError(f"feasibility of a path undecided: {why}")
        return bool(r == z3.sat)


#: the most terms a process-wide memo by term id keeps (it is emptied when full: a
#: process that proves many cells must not keep every cell's terms alive)
MEMO_TERMS = 200_000

_FREE: dict[int, tuple[z3.ExprRef, frozenset[str]]] = {}
on_forget(_FREE.clear)


def free_names(t: z3.ExprRef) -> frozenset[str]:
    """The uninterpreted constants of ``t`` (a process-wide memo, keyed by term id; the term
    is kept alive with its entry)."""
    hit = _FREE.get(t.get_id())
    if hit is not None:
        return hit[1]
    if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
        out = frozenset((str(t),))
    else:
        out = frozenset().union(*(free_names(c) for c in t.children()))
    if len(_FREE) >= MEMO_TERMS:  # bounded: the terms kept alive hold their DAGs
        _FREE.clear()
    _FREE[t.get_id()] = (t, out)
    return out


class KeyCanon:
    """Canonical forms of pfn terms, ``base + constant``, so that two pfns of one loop are
    told apart without a solver.  Two different base terms are related once, by the oracle:
    if their difference is one constant under the assumptions, the second is recorded as
    the first plus that constant (shared by every store of one run; terms kept alive)."""

    def __init__(self, oracle: Oracle | None = None) -> None:
        self.oracle = oracle
        self.memo: dict[int, tuple[Val, Canon]] = {}
        self.reps: list[BV] = []  # representative base terms
        self.alias: dict[int, tuple[int, int]] = {}  # base id -> (representative id, delta)
        self.keep: list[BV] = []

    def _base(self, b: BV) -> tuple[int, int]:
        bid = b.get_id()
        hit = self.alias.get(bid)
        if hit is not None:
            return hit
        self.keep.append(b)
        for r in self.reps:
            delta = self.oracle.constant_difference(b, r) if self.oracle is not None else None
            if delta is not None:
                self.alias[bid] = (r.get_id(), delta)
                return self.alias[bid]
        self.reps.append(b)
        self.alias[bid] = (bid, 0)
        return self.alias[bid]

    def canon(self, key: Val) -> Canon:
        if isinstance(key, CBV):
            return (-1, key.value)
        hit = self.memo.get(key.get_id())
        if hit is not None:
            return hit[1]
        k = z3.simplify(key)
        if z3.is_bv_value(k):
            out: Canon = (-1, k.as_long())
        else:
            if z3.is_app_of(k, z3.Z3_OP_BADD) and k.num_args() == 2 and z3.is_bv_value(k.arg(0)):
                base, off = k.arg(1), k.arg(0).as_long()
            else:
                base, off = k, 0
            rep, delta = self._base(base)
            out = (rep, (off + delta) % (1 << 64))
        self.memo[key.get_id()] = (key, out)
        return out

    def same(self, a: Val, b: Val, pc: Cond | None = None) -> bool | None:
        """Do pfn terms ``a`` and ``b`` denote the same pfn?  None: cannot tell.  With a path
        condition ``pc``, terms of different bases are decided by the oracle under it
        (``head + (int)(pfn - head)`` is ``pfn`` where the loop's bounds keep the difference
        small)."""
        ca, cb = self.canon(a), self.canon(b)
        if ca[0] == cb[0]:
            return ca[1] == cb[1]
        if pc is None or self.oracle is None or pc is False:
            return None
        if not self.oracle.feasible(bv.and_(pc, bv.ne(a, b))):
            return True
        if not self.oracle.feasible(bv.and_(pc, bv.eq(a, b))):
            return False
        return None


class VmemmapFold:
    """The storage key of a struct page the interpreter reaches by pfn: where a compound's
    vmemmap is deduplicated, the struct page of tail ``t >= VMEMMAP_RESERVE_NR * P`` *is*
    the storage of tail ``P + t % P`` (``P = PAGE_SIZE / sizeof(struct page)``;
    ``vmemmap_populate_compound_pages()``, mm/sparse-vmemmap.c 6.12, maps every vmemmap page
    of the compound past the first two to the second; ``compound_nr_pages()``, mm/mm_init.c
    6.12, then initialises only the first ``2 * P``).  ``aliased(pfn)`` gives
    ``(condition, storage pfn)`` (:func:`equiv.memmap.storage_pfn`, the fold of the hand
    model's :func:`equiv.memmap.vmemmap_namer`), so every read and write of a struct page
    goes to one storage whichever pfn names it.

    The key is kept as the pfn term itself wherever the oracle shows that the pfn is not
    aliased on the path (the common case: a loop bounded by ``compound_nr_pages()``), so
    the canonical forms of :class:`KeyCanon` still tell pages apart; else it is
    ``ite(aliased, folded, pfn)``, the storage pfn on every path (a join of paths reads a
    key on the paths that did not write it too; the ``ite`` then falls back to the pfn
    where it is not aliased, which keeps the keys there as comparable as before).  Either
    way the key equals the storage pfn on the path (an identity under the path
    condition), and a struct page reached both ways is one entry of the store."""

    def __init__(self, aliased: Callable[[Val], tuple[Cond, Val]],
                 oracle: Oracle | None) -> None:
        self.aliased, self.oracle = aliased, oracle
        self._memo: dict[tuple[object, object], tuple[object, Val]] = {}
        #: the keys this fold made (a key is folded once: a storage pfn is never aliased)
        self._made: set[int] = set()

    def key(self, pfn: Val, pc: Cond = True) -> Val:
        """The storage key of ``pfn_to_page(pfn)`` on the path ``pc``."""
        if isinstance(pfn, z3.ExprRef) and pfn.get_id() in self._made:
            return pfn
        if isinstance(pfn, CBV):  # a replay: plain integers, nothing to remember
            cond, folded = self.aliased(pfn)
            return folded if cond is True else pfn
        memo = (term_id(pfn), term_id(pc))
        hit = self._memo.get(memo)
        if hit is not None:
            return hit[1]
        cond, folded = self.aliased(pfn)
        if isinstance(cond, z3.ExprRef):
            cond = z3.simplify(cond)
            if z3.is_true(cond) or z3.is_false(cond):
                cond = bool(z3.is_true(cond))
        out: Val
        if cond is False:
            out = pfn
        elif cond is True:
            out = folded
        elif self.oracle is None or not self.oracle.feasible(bv.and_(pc, cond)):
            out = pfn if self.oracle is not None else bv.ite(cond, folded, pfn)
        else:
            # aliased on this path or on some: ``ite(aliased, folded, pfn)`` either way, a
            # key that names the storage on every path (a join reads it on the others)
            out = bv.ite(cond, folded, pfn)
        if isinstance(out, z3.ExprRef) and out is not pfn:
            out = z3.simplify(out)
            self._made.add(out.get_id())
        self._memo[memo] = ((pfn, pc), out)
        return out


def term_id(x: object) -> object:
    """A hashable identity of a value for memo keys: a constant's value, a z3 term's id,
    else the object's own identity."""
    if isinstance(x, CBV):
        return ("c", x.value)
    if isinstance(x, bool):
        return ("b", x)
    if isinstance(x, z3.AstRef):
        return x.get_id()
    return ("o", id(x))


# ---- memory ----------------------------------------------------------------------------


class Layer:
    """What a :class:`PageStore` reads below the entries it holds.  ``pc`` is the condition
    under which the read is made (kept by the read-logging layer)."""

    def page(self, key: Val, pc: Cond) -> PageState:
        raise NotImplementedError

    def pb(self, b: Val, pc: Cond) -> Val:
        raise NotImplementedError

    def footprint(self, n: Val) -> Cond:
        """A condition that holds wherever this layer's page ``n`` may differ from the
        initial memory (an over-approximation: false means "never written")."""
        raise NotImplementedError


class BaseLayer(Layer):
    """The memory before the first statement: the cell's (symbolic or concrete) inputs."""

    def __init__(self, initial: Callable[[Val], PageState], initial_pb: Callable[[Val], Val]) -> None:
        self.initial, self.initial_pb = initial, initial_pb

    def page(self, key: Val, pc: Cond) -> PageState:
        return self.initial(key)

    def pb(self, b: Val, pc: Cond) -> Val:
        return self.initial_pb(b)

    def footprint(self, n: Val) -> Cond:
        return False


class TrackLayer(Layer):
    """A loop's entry memory seen by one iteration: every read is logged with its path
    condition (the frame-read lemma claims each one lies in the iteration's block)."""

    def __init__(self, entry: PageStore) -> None:
        self.entry = entry
        self.log: list[tuple[Cond, Val]] = []
        self.log_pb: list[tuple[Cond, Val]] = []
        #: while set, the footprint stops here: what the iteration itself wrote
        self.hide = False

    def page(self, key: Val, pc: Cond) -> PageState:
        self.log.append((pc, key))
        return self.entry.read_any(key, pc)

    def pb(self, b: Val, pc: Cond) -> Val:
        self.log_pb.append((pc, b))
        return self.entry.read_pb_any(b, pc)

    def footprint(self, n: Val) -> Cond:
        return False if self.hide else self.entry.footprint(n)


class MergeLayer(Layer):
    """Exclusive paths joined: path ``i``'s memory where its selector holds."""

    def __init__(self, sel: list[Cond], stores: list[PageStore]) -> None:
        self.sel, self.stores = sel, stores

    def page(self, key: Val, pc: Cond) -> PageState:
        acc = self.stores[-1].read_any(key, pc)
        for c, st in zip(reversed(self.sel[:-1]), reversed(self.stores[:-1]), strict=True):
            acc = ite_page(c, st.read_any(key, bv.and_(pc, c)), acc)
        return acc

    def pb(self, b: Val, pc: Cond) -> Val:
        acc = self.stores[-1].read_pb_any(b, pc)
        for c, st in zip(reversed(self.sel[:-1]), reversed(self.stores[:-1]), strict=True):
            acc = bv.ite(c, st.read_pb_any(b, bv.and_(pc, c)), acc)
        return acc

    def footprint(self, n: Val) -> Cond:
        acc = self.stores[-1].footprint(n)
        for c, st in zip(reversed(self.sel[:-1]), reversed(self.stores[:-1]), strict=True):
            acc = bv.or_(bv.and_(c, st.footprint(n)), bv.and_(bv.not_(c), acc))
        return acc


class PageStore:
    """Struct pages and pageblock cells written in this layer, keyed by pfn term (block
    number); everything else is read from ``below``."""

    def __init__(self, below: Layer, symbolic: bool, canon: KeyCanon,
                 pages: list[tuple[Val, PageState]] | None = None,
                 index: dict[Canon, int] | None = None,
                 pbs: list[tuple[Val, Val]] | None = None,
                 when: dict[Canon, Cond] | None = None) -> None:
        self.below, self.symbolic, self.canon = below, symbolic, canon
        #: per key of this layer, the condition under which the path wrote it (a join of
        #: paths of which only some wrote it: theirs); absent means always
        self.when: dict[Canon, Cond] = when or {}
        self.pages: list[tuple[Val, PageState]] = pages or []
        self.index: dict[Canon, int] = index if index is not None else {
            canon.canon(k): i for i, (k, _) in enumerate(self.pages)}
        self.pbs: list[tuple[Val, Val]] = pbs or []

    def layered(self, below: Layer) -> PageStore:
        """An empty store over ``below``."""
        return PageStore(below, self.symbolic, self.canon)

    # -- pages --
    def find(self, key: Val, pc: Cond | None = None) -> int | None:
        """Index of ``key``'s entry; None if ``key`` is distinct from every entry (on the
        path ``pc``, when given)."""
        c = self.canon.canon(key)
        hit = self.index.get(c)
        if hit is not None:
            return hit
        for i, (k, _) in enumerate(self.pages):
            if self.canon.canon(k)[0] == c[0]:
                continue  # same base, other offset: distinct
            same = self.canon.same(k, key, pc)
            if same is None:
                raise InterpError(f"cannot tell struct page pfn {key} from pfn {k} apart "
                                  "(aliasing undecided)")
            if same:
                return i
        return None

    def read(self, key: Val, pc: Cond = True) -> PageState:
        i = self.find(key, pc)
        return self.below.page(key, pc) if i is None else self.pages[i][1]

    def write(self, key: Val, page: PageState, pc: Cond | None = None) -> PageStore:
        i = self.find(key, pc)
        pages = list(self.pages)
        index = dict(self.index)
        if i is None:
            index[self.canon.canon(key)] = len(pages)
            pages.append((key, page))
        else:
            pages[i] = (pages[i][0], page)
        when = self.when
        if self.canon.canon(key) in when:
            when = {k: v for k, v in when.items() if k != self.canon.canon(key)}
        return PageStore(self.below, self.symbolic, self.canon, pages, index, self.pbs, when)

    def read_any(self, key: Val, pc: Cond = True) -> PageState:
        """The page at a key that may equal several entries (an observation index)."""
        hit = self.index.get(self.canon.canon(key))
        if hit is not None:
            return self.pages[hit][1]
        undecided: list[tuple[Val, PageState]] = []
        for k, p in self.pages:
            same = self.canon.same(k, key)
            if same is True:
                return p
            if same is None:
                undecided.append((k, p))
        miss = bv.and_(pc, *(bv.ne(key, k) for k, _ in undecided))
        out = self.below.page(key, miss)
        for k, p in undecided:
            out = ite_page(bv.eq(key, k), p, out)
        return out

    def footprint(self, n: Val) -> Cond:
        """Where page ``n`` may differ from the initial memory: one of this layer's keys,
        or the footprint of the layer below."""
        memo: dict[object, tuple[Val, Cond]] | None = getattr(self, "_fp", None)
        if memo is None:
            memo = {}
            self._fp = memo
        key: object = n.get_id() if isinstance(n, z3.ExprRef) else ("c", int(n))
        hit = memo.get(key)
        if hit is None:
            out = bv.or_(*(bv.and_(bv.eq(n, k), self.when.get(self.canon.canon(k), True))
                           for k, _ in self.pages), self.below.footprint(n))
            hit = memo[key] = (n, out)
        return hit[1]

    # -- pageblock cells --
    def _find_pb(self, b: Val, pc: Cond | None = None) -> int | None:
        for i, (b2, _) in enumerate(self.pbs):
            same = self.canon.same(b, b2, pc)
            if same is None:
                raise InterpError(f"cannot tell pageblock {b} from {b2} apart")
            if same:
                return i
        return None

    def read_pb(self, b: Val, pc: Cond = True) -> Val:
        i = self._find_pb(b, pc)
        return self.below.pb(b, pc) if i is None else self.pbs[i][1]

    def write_pb(self, b: Val, cell: Val, pc: Cond | None = None) -> PageStore:
        i = self._find_pb(b, pc)
        pbs = list(self.pbs)
        if i is None:
            pbs.append((b, cell))
        else:
            pbs[i] = (pbs[i][0], cell)
        return PageStore(self.below, self.symbolic, self.canon, self.pages, self.index, pbs,
                         self.when)

    def read_pb_any(self, b: Val, pc: Cond = True) -> Val:
        undecided: list[tuple[Val, Val]] = []
        for b2, cell in self.pbs:
            same = self.canon.same(b2, b)
            if same is True:
                return cell
            if same is None:
                undecided.append((b2, cell))
        out = self.below.pb(b, bv.and_(pc, *(bv.ne(b, b2) for b2, _ in undecided)))
        for b2, cell in undecided:
            out = bv.ite(bv.eq(b, b2), cell, out)
        return out


@frozen(eq=False)
class State:
    """One path: path condition, locals (name -> (declared type, value)), memory (struct
    pages and pageblock cells) and the struct locals (slot -> bytes; None: poisoned)."""

    pc: Cond
    env: dict[str, tuple[str, Value]]
    mem: PageStore
    stack: dict[str, PageState | None]


# ---- where the interpreter runs ----------------------------------------------------------


@frozen(eq=False)
class Lazy:
    """A macro argument, evaluated where the macro body uses it."""

    node: Node
    src: bytes
    frame: Frame


@frozen(eq=False)
class Frame:
    """Where an expression is evaluated: the function's source and macro bindings."""

    src: bytes
    file: str
    fn: str
    macro_args: dict[str, Lazy]
    #: the file's line of ``src``'s first line (a macro body is parsed on its own)
    first_line: int = 1
    #: a function-like macro's body: its operations on numerals are folded
    fold: bool = False

    def at(self, node: Node) -> str:
        """``file:line`` of a node of this frame's source."""
        return f"{self.file}:{self.first_line + node.start_point[0]}"


class Outcome:
    """States leaving a statement, by how they leave it: normally, by ``return`` (with the
    value), ``break``, ``continue`` or ``goto`` (with the label)."""

    def __init__(self) -> None:
        self.normal: list[State] = []
        self.ret: list[tuple[State, Value | None]] = []
        self.brk: list[State] = []
        self.cont: list[State] = []
        self.goto: list[tuple[str, State]] = []

    def jumps(self, o: Outcome) -> None:
        """Add the states that leave ``o`` by ``return`` and ``goto`` (which leave every
        enclosing statement up to the function or the label's block alike)."""
        self.ret += o.ret
        self.goto += o.goto


__all__ = [
    "BaseLayer",
    "CCond",
    "CInt",
    "Canon",
    "Frame",
    "InterpError",
    "KeyCanon",
    "Layer",
    "Lazy",
    "Loc",
    "MergeLayer",
    "Oracle",
    "Outcome",
    "PageStore",
    "Poison",
    "Ptr",
    "Slot",
    "State",
    "TrackLayer",
    "Value",
    "VmemmapFold",
    "free_names",
    "term_id",
]

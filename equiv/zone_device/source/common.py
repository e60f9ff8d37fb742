"""What the source-derived proofs share: the hand-written models a tree is checked against,
the loop-summary lemma check, and the specialisation of a role's terms to its constraint.

Used by ``--linux`` (:mod:`equiv.zone_device.source.fidelity`: a tree against the hand model) and
``--patch``/``--against`` (:mod:`equiv.zone_device.source.patchproof`: two trees against each other).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import z3
from attrs import evolve, frozen

from equiv.engine.bv import CBV, Val
from equiv.engine.errors import InputError
from equiv.engine.verdict import Verdict
from equiv.linux.ktree import KernelTree
from equiv.loops import Ctx, Lemma
from equiv.memmap import Inputs, Scenario, assumptions
from equiv.page_model import PB_BITS, ConcreteMemory, Layout, Memory, PageState
from equiv.slow_path import memmap_init_zone_device
from equiv.zone_device.counterexample import FieldDiff
from equiv.zone_device.source.csummary import CLemma
from equiv.zone_device.source.slow_v612y import layout_612, path_612y

HandPath = Callable[[Ctx, Scenario, Inputs], Memory]

log = logging.getLogger(__name__)


@frozen
class Model:
    """A hand-written slow path of one kernel version."""

    name: str
    version: str  # kernel version prefix the tree must have, e.g. "6.12"
    summary: str
    path: HandPath
    layout: Callable[[Layout], Layout]


def _same_layout(L: Layout) -> Layout:
    return L


def _compare_612(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
    from equiv.slow_variants import comparison
    return comparison("v6.12").path(ctx, sc, inp)


MODELS: dict[str, Model] = {m.name: m for m in (
    Model("v7.3-rc1", "7.3", "the base slow path (equiv/slow_path.py)", memmap_init_zone_device,
          _same_layout),
    Model("v6.12.y", "6.12", "6.12 stable, 6.12.117 (equiv/zone_device/source/slow_v612y.py)",
          path_612y, layout_612),
    Model("v6.12", "6.12", "--compare v6.12: the v6.12 release as recalled in the reference "
          "(equiv/slow_variants.py)", _compare_612, _same_layout),
)}


def model_for(tree: KernelTree, name: str | None) -> Model:
    """The model named ``name``, or the one whose version prefix matches the tree's.

    Raises:
        InputError: unknown name; or the tree's version has no model and none was named.
    """
    if name is not None:
        if name not in MODELS:
            raise InputError(f"unknown --model {name!r}; valid: {', '.join(MODELS)}")
        return MODELS[name]
    for m in MODELS.values():
        if tree.version.startswith(m.version + "."):
            return m
    return MODELS["v7.3-rc1"]


#: budget (ms) of a loop lemma's conjunct over a whole order class before it is proved order
#: by order (measured: most conjuncts take well under a second with the order symbolic; the
#: few that relate a pfn to the block of an iteration ``k << order`` took over 60 s, and
#: about one second at each order)
CLASS_LEMMA_MS = 3_000


def order_free(sc: Scenario, inp: Inputs, assume: list[z3.BoolRef]) -> list[z3.BoolRef]:
    """The assumptions of ``assume`` (those of ``sc`` on ``inp``) that are the same at every
    order: those of orders 0 and 1 too, term for term (all but the range's alignment to the
    compound size, and an order class's range of orders).

    A query the order does not enter (the pageblock cells of 6.12's
    ``pageblock_migratetype_init_range()``, its loop's lemmas) is then the same formula at
    every order, and proved under these alone it is proved at each (fewer assumptions:
    UNSAT under them is UNSAT under all); :data:`FREE_PROVED` shares it between the cells
    of a process."""
    others = [{a.get_id() for _, a in assumptions(Scenario(sc.layout, sc.ptype, o), inp)}
              for o in (0, 1)]
    return [a for a in assume if all(a.get_id() in ids for ids in others)]


#: queries proved (UNSAT) under order-free assumptions (:func:`order_free`) in this process,
#: by the ids of their terms (each entry holds them, so an id is not reused): a loop lemma's
#: conjunct (assumptions, premise, conjunct) or a role's case (assumptions, words); the next
#: cell that poses the same one takes the proof.  Sound whatever the cell: the formula is
#: the same, so is its answer (as :data:`equiv.engine.query._ANSWERS`).
FREE_PROVED: dict[tuple[int, ...], list[z3.ExprRef]] = {}
#: what was tried under the order-free assumptions alone and not proved there, by name (a
#: loop lemma's conjunct, a role's case): not tried so again in this process (a query the
#: order enters is then asked once with every assumption, as before)
FREE_FAILED: set[tuple[str, ...]] = set()
#: the query each name stood for in the last cell that asked it (its terms kept alive): a
#: name whose query changes from one cell to the next is one the order enters, asked from
#: then on with every assumption only (its answer under fewer would not be shared)
FREE_SEEN: dict[tuple[str, ...], tuple[tuple[int, ...], list[z3.ExprRef]]] = {}


def free_first(tag: tuple[str, ...], key: tuple[int, ...], terms: list[z3.ExprRef]) -> bool:
    """Is the query named ``tag`` (its terms' ids ``key``) proved under the order-free
    assumptions (:data:`FREE_PROVED`), or to be tried under them first?  Not if it was not
    proved there before (:data:`FREE_FAILED`), or if it is not the query the name stood for
    in the last cell (:data:`FREE_SEEN`).  Only a matter of speed: a query is proved under
    every assumption wherever it is not proved under fewer."""
    if key in FREE_PROVED:
        return True
    if tag in FREE_FAILED:
        return False
    prev = FREE_SEEN.get(tag)
    FREE_SEEN[tag] = (key, terms)
    if prev is not None and prev[0] != key:
        FREE_FAILED.add(tag)
        return False
    return True


#: resource limit (z3's rlimit, deterministic) of the first try of a loop lemma's conjunct:
#: alone, with neither the assumptions nor the premise, in a fresh solver, whose
#: preprocessing (solving ``n == q + k`` for ``n``) folds the frame-write lemma's stronger
#: claim ("the footprint misses every page outside the block") at once, where the
#: incremental solver holding the assumptions took up to 1.6 s (order 12); measured, a
#: conjunct valid alone takes at most 1,000 of this, one that is not stops within ~5 ms
ALONE_RLIMIT = 20_000


def check_lemmas(lemmas: Sequence[Lemma | CLemma], assume: list[z3.BoolRef], timeout_ms: int,
                 sc: Scenario | None = None, free: list[z3.BoolRef] | None = None) -> str:
    """Prove the hand path's loop lemmas; "" if all hold, else which one did not and why.

    Each lemma is ``premise -> c1 && c2 && ...``; every conjunct is its own query under the
    assumptions and the premise (the same claim: a conjunction is valid iff each conjunct
    is).  The frame-read lemma is a conjunction of one implication per logged read, each
    trivial alone; as one query z3 may time out on it (z3's search depends on the order in
    which terms were created, so the whole conjunction took 18 s or over 60 s for
    ``--compare v6.12`` at order 3 depending on what ran before).  A lemma's ``stronger``
    claim (if it has one) is tried first; only if it is not proved is the claim itself.
    Each conjunct is first tried alone (:data:`ALONE_RLIMIT`): valid by itself, it holds
    under any assumptions.  With ``free`` (the order-free part of ``assume``,
    :func:`order_free`), it is then tried under those alone, the answer shared through
    :data:`FREE_PROVED` with the other cells of the process (a loop the order does not
    enter has the same lemmas at every order); only if not proved there, under ``assume``.

    With ``sc`` an order class (its order the symbolic ``vmemmap_shift``), a conjunct not
    decided within :data:`CLASS_LEMMA_MS` over the whole class is proved at each order of
    the class in turn (the order substituted into the assumptions, premise and conjunct): a
    case split on the order, valid iff the conjunct is.
    """
    s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    s.add(*assume)
    split = sc is not None and sc.is_class
    per_order: dict[int, z3.Solver] = {}

    def at(k: int) -> z3.Solver:
        """A solver of the assumptions at order ``k`` (the order substituted)."""
        hit = per_order.get(k)
        if hit is None:
            assert sc is not None
            sub = (sc.order_v, z3.BitVecVal(k, 64))
            hit = per_order[k] = z3.SolverFor("QF_AUFBV")
            hit.set("timeout", timeout_ms)
            hit.add(*(z3.simplify(z3.substitute(a, sub)) for a in assume))
        return hit

    free_solver: list[z3.Solver] = []

    def valid_free(part: z3.BoolRef, premise: z3.BoolRef, tag: tuple[str, ...]) -> bool:
        """Is the conjunct valid under the premise and the order-free assumptions?"""
        if free is None:
            return False
        part = z3.simplify(part)
        key = (*(a.get_id() for a in free), premise.get_id(), part.get_id())
        if not free_first(tag, key, [*free, premise, part]):
            return False
        if key in FREE_PROVED:
            return True
        if not free_solver:
            fs = z3.SolverFor("QF_AUFBV")
            fs.set("timeout", timeout_ms)
            fs.add(*free)
            free_solver.append(fs)
        if free_solver[0].check(premise, z3.Not(part)) == z3.unsat:
            FREE_PROVED[key] = [*free, premise, part]
            return True
        FREE_FAILED.add(tag)
        return False

    def one(part: z3.BoolRef, premise: z3.BoolRef, tag: tuple[str, ...]) -> z3.CheckSatResult:
        if valid_alone(part) or (not split and valid_free(part, premise, tag)):
            return z3.unsat
        if not split:
            return s.check(z3.Not(part))
        assert sc is not None
        s.set("timeout", min(timeout_ms, CLASS_LEMMA_MS))
        t0 = time.perf_counter()
        try:
            r = s.check(z3.Not(part))
        finally:
            s.set("timeout", timeout_ms)
        log.debug("lemma conjunct over orders %s: %s %.1fs", sc.order_label, r,
                  time.perf_counter() - t0)
        if r != z3.unknown:
            return r
        for k in sc.orders:
            sub = (sc.order_v, z3.BitVecVal(k, 64))
            q = z3.simplify(z3.substitute(z3.And(premise, z3.Not(part)), sub))
            t0 = time.perf_counter()
            slv = at(k)
            slv.push()  # asserted, not assumed: z3 preprocesses it with the assumptions
            slv.add(q)
            r = slv.check()
            slv.pop()
            log.debug("  at order %d: %s %.1fs", k, r, time.perf_counter() - t0)
            if r != z3.unsat:
                return r
        return z3.unsat

    def valid_alone(part: z3.BoolRef) -> bool:
        """Is the conjunct valid by itself (then under any premise and assumptions), as a
        fresh solver shows within :data:`ALONE_RLIMIT`?"""
        q = z3.SolverFor("QF_AUFBV")
        q.set("rlimit", ALONE_RLIMIT)
        q.add(z3.Not(part))
        return bool(q.check() == z3.unsat)

    def valid(claim: z3.BoolRef, premise: z3.BoolRef, tag: tuple[str, ...]) -> z3.CheckSatResult:
        for i, part in enumerate(claim.children() if z3.is_and(claim) else [claim]):
            r = one(part, premise, (*tag, str(i)))
            if r != z3.unsat:
                return r
        return z3.unsat

    for j, lm in enumerate(lemmas):
        s.push()
        s.add(lm.premise)
        r = s.check()
        if r == z3.sat:
            stronger = getattr(lm, "stronger", None)
            tag = (str(j), lm.loop, lm.kind)
            if stronger is None or valid(stronger, lm.premise, (*tag, "stronger")) != z3.unsat:
                r = valid(lm.claim, lm.premise, tag)
            else:
                r = z3.unsat
        s.pop()
        if r != z3.unsat:
            return f"loop lemma {lm.kind} of {lm.loop}: {r}"
    return ""


#: models of one context :func:`specialise` keeps to spare queries (each condition is
#: evaluated in them, so a few suffice: most conditions are told apart by the first two)
MAX_MODELS = 8

#: a condition decided in one context: (the condition, True, False or the condition itself)
Decided = tuple[z3.BoolRef, z3.BoolRef]
#: decisions per role constraint: id -> (the constraint, condition id -> decision)
Memo = dict[int, tuple[z3.BoolRef, dict[int, Decided]]]


def _scan(terms: list[z3.BoolRef], decide: Callable[[z3.BoolRef], bool | None]
          ) -> tuple[list[tuple[z3.BoolRef, bool]], list[z3.ExprRef]]:
    """Walk the live part of ``terms``: at an ``ite`` its condition is decided first and only
    the branch it selects is entered (both if undecided).  Returns the decided conditions
    and the array reads met on the way.  (Low-level z3 calls: this walks every node of the
    queries of a cell, some ten thousand.)"""
    ctx = terms[0].ctx
    ref = ctx.ref()
    seen: set[int] = set()
    fixed: list[tuple[z3.BoolRef, bool]] = []
    selects: list[z3.ExprRef] = []
    stack = [t.as_ast() for t in terms]
    while stack:
        a = stack.pop()
        i = z3.Z3_get_ast_id(ref, a)
        if i in seen:
            continue
        seen.add(i)
        if z3.Z3_get_ast_kind(ref, a) != z3.Z3_APP_AST:
            continue
        n = z3.Z3_get_app_num_args(ref, a)
        if n == 0:
            continue
        kind = z3.Z3_get_decl_kind(ref, z3.Z3_get_app_decl(ref, a))
        args = [z3.Z3_get_app_arg(ref, a, j) for j in range(n)]
        if kind == z3.Z3_OP_ITE:
            c = z3.BoolRef(args[0], ctx)
            v = decide(c)
            if v is not None:
                fixed.append((c, v))
                stack.append(args[1] if v else args[2])
                continue
        elif kind == z3.Z3_OP_SELECT:
            selects.append(z3.ExprRef(a, ctx))
        stack.extend(args)
    return fixed, selects


def _same_index(selects: list[z3.ExprRef], context: z3.Solver,
                models: list[z3.ModelRef]) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
    """Rewrites ``a[i] -> a[j]`` for array reads whose indices are one value written two ways
    (``s + (v ? x : 0)`` and ``v ? s + x : s``: the two sides compute a pfn differently).
    Candidates are indices equal in one model of ``context`` (the first of ``models``, else
    one asked of it and added); each pair is then proved equal in ``context`` by a query
    (64-bit scalars only)."""
    if not models:
        if context.check() != z3.sat:
            return []
        try:
            models.append(context.model())
        except z3.Z3Exception:  # the model's solver gave up within its budget: no candidates
            return []
    m = models[0]
    reps: dict[tuple[int, int], list[z3.ExprRef]] = {}
    subs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
    for sel in selects:
        arr, i = sel.arg(0), sel.arg(1)
        v = m.eval(i, model_completion=True)
        if not z3.is_bv_value(v):
            continue
        bucket = reps.setdefault((arr.get_id(), v.as_long()), [])
        for j in bucket:
            if i.eq(j):
                break
            if context.check(i != j) == z3.unsat:
                subs.append((sel, z3.Select(arr, j)))
                break
        else:
            bucket.append(i)
    return subs


def _last_model(context: z3.Solver) -> z3.ModelRef | None:
    """The model of ``context``'s last (satisfiable) check, if it can give one
    (``last_model``, else ``model``)."""
    get = getattr(context, "last_model", None) or context.model
    try:
        return get()
    except z3.Z3Exception:
        return None


def substitute_all(terms: Sequence[z3.ExprRef], subs: Sequence[tuple[z3.ExprRef, z3.ExprRef]],
                   then: Callable[[z3.ExprRef], z3.ExprRef] | None = None) -> list[z3.ExprRef]:
    """``simplify(substitute(t, *subs))`` of each of ``terms`` (then ``then`` of it), in one
    pass over the DAG they share (the words of a struct page share most of it; z3 caches
    within one call): the terms as the arguments of one uninterpreted function, which
    neither rewrite touches (nor :func:`~equiv.engine.splitsum.split_sums`, a ``then``).
    The same terms as one call per term (measured: 0.002 s against 0.02 s for the eight
    words of a page)."""

    def one(t: z3.ExprRef) -> z3.ExprRef:
        out = z3.simplify(z3.substitute(t, *subs) if subs else t)
        return then(out) if then is not None else out

    if len(terms) < 2:
        return [one(t) for t in terms]
    box = z3.Function("equiv.terms", *(t.sort() for t in terms), z3.BoolSort())
    out = one(box(*terms))
    if not (z3.is_app(out) and out.decl().eq(box) and out.num_args() == len(terms)):
        return [one(t) for t in terms]  # (never seen)
    kids: list[z3.ExprRef] = out.children()
    return kids


def specialise(terms: list[z3.BoolRef], context: z3.Solver,
               decided: dict[int, Decided],
               models: list[z3.ModelRef] | None = None) -> list[z3.BoolRef]:
    """Each of ``terms`` simplified in the context of ``context``'s assertions.

    The interpreter's struct pages are ``ite`` trees over path conditions (loop trips, the
    altmap, the pgmap type); under a role's constraint (compound ``c`` exists, or lies past
    the range) most of those conditions are fixed.  Each ``ite`` condition on the live part
    of a term is decided by a small query on ``context`` (scalars only, no struct page): if
    the context implies it, or its negation, it is replaced by ``True`` or ``False``.  Array
    reads at one index written two ways are unified (:func:`_same_index`).  Every rewrite is
    an identity under the context, so each result is equivalent to its term wherever the
    context holds: a model of the result is a model of the term, and unsat is unsat.  An
    undecided (or unknown) condition is kept.  ``decided`` caches decisions for this context.

    ``models`` (kept by the caller with ``decided``, for the same context) collects the
    models of ``context`` its satisfiable queries gave: a condition true in one and false in
    another is undecided without a query, and one every model makes true (false) needs only
    the query of its negation (itself).  Models only ever spare a query whose answer would
    have been SAT: a condition is decided only by an UNSAT answer, as without them.

    Without this, z3 bit-blasts every guarded 512-bit page and searches the loop arithmetic
    inside the page comparison (tens of seconds per query at order 4).
    """
    seen_models: list[z3.ModelRef] = [] if models is None else models

    def polarities(c: z3.BoolRef) -> set[bool]:
        seen: set[bool] = set()
        for m in seen_models:
            v = m.eval(c, model_completion=True)
            if z3.is_true(v) or z3.is_false(v):
                seen.add(bool(z3.is_true(v)))
                if len(seen) == 2:
                    break
        return seen

    def ask(q: z3.BoolRef) -> z3.CheckSatResult:
        r = context.check(q)
        if r == z3.sat and len(seen_models) < MAX_MODELS:
            m = _last_model(context)
            if m is not None:
                seen_models.append(m)
        return r

    def decide(c: z3.BoolRef) -> bool | None:
        if z3.is_true(c) or z3.is_false(c):
            return bool(z3.is_true(c))
        hit = decided.get(c.get_id())
        if hit is None:
            v = c
            seen = polarities(c)
            if len(seen) < 2:
                # prove the polarity every model gave (a model of the other one would
                # have shown it is not implied); without a model, true and then false
                for pol in sorted(seen) or [True, False]:
                    if ask(z3.Not(c) if pol else c) == z3.unsat:
                        v = z3.BoolVal(pol)
                        break
            hit = decided[c.get_id()] = (c, v)
        return None if hit[1].eq(c) else z3.is_true(hit[1])

    for _ in range(8):
        if not terms:
            break
        fixed, selects = _scan(terms, decide)
        subs: list[tuple[z3.ExprRef, z3.ExprRef]] = [
            (c, z3.BoolVal(v)) for c, v in fixed if not (z3.is_true(c) or z3.is_false(c))]
        subs += _same_index(selects, context, seen_models)
        if not subs:
            break
        terms = substitute_all(terms, subs)
    return terms


class Evaluates(Protocol):
    """A model: z3's, or one that renames terms before evaluating them."""

    def eval(self, e: z3.ExprRef, model_completion: bool = False) -> z3.ExprRef: ...


@frozen(eq=False)
class ModelValues:
    """The concrete values a SAT model of a source-derived proof gives the inputs both sides
    run on (the replay of :mod:`equiv.zone_device.source.fidelity` and
    :mod:`equiv.zone_device.source.patchproof`):
    the scalar inputs, the role's indices, each struct page of the initial memory (one array
    indexed by pfn), each pageblock cell, which sections are early, and the uninitialised
    bytes of a struct local."""

    model: Evaluates
    layout: Layout
    early: z3.FuncDeclRef
    pages: z3.ArrayRef
    pbarr: z3.ArrayRef

    def _eval(self, t: z3.ExprRef) -> z3.ExprRef:
        return self.model.eval(t, model_completion=True)

    def scalars(self, inp: Inputs) -> dict[str, int | bool]:
        """Every scalar input of ``inp`` (:attr:`Inputs.SCALARS`) at its model value."""
        out: dict[str, int | bool] = {}
        for k in Inputs.SCALARS:
            v = self._eval(getattr(inp, k))
            out[k] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
        return out

    def indices(self, idx: dict[str, z3.BitVecRef]) -> dict[str, int]:
        return {k: self._eval(v).as_long() for k, v in idx.items()}

    def page(self, pfn: Val) -> PageState:
        """The initial struct page of ``pfn`` (no writer yet)."""
        v = self._eval(z3.Select(self.pages, z3.BitVecVal(int(pfn), 64)))
        size = self.layout.size
        return PageState(bits=CBV(v.as_long(), 8 * size), origin=((),) * size)

    def cell(self, b: Val) -> Val:
        """The initial pageblock bitmap cell ``b``."""
        v = self._eval(z3.Select(self.pbarr, z3.BitVecVal(int(b), 64)))
        return CBV(v.as_long(), PB_BITS)

    def is_early(self, n: int) -> bool:
        """Is section ``n`` early?"""
        return bool(z3.is_true(self._eval(self.early(z3.BitVecVal(n, 64)))))

    def inputs(self, scalars: dict[str, int | bool]) -> Inputs:
        """Concrete inputs of ``scalars`` (:meth:`scalars`) with this model's early sections;
        their memory is a placeholder, to be replaced once the geometry is known."""
        vals = {k: (v if isinstance(v, bool) else CBV(v, 32 if k == "pgmap_type" else 64))
                for k, v in scalars.items()}
        return Inputs(early_section=lambda n: self.is_early(int(n)),
                      mem=ConcreteMemory(lambda n: self.page(CBV(0, 64)),
                                         lambda b: CBV(0, PB_BITS)),
                      **vals)

    def stack(self, local: str, size: int) -> PageState:
        """The uninitialised bytes of the struct local ``local`` (``size`` bytes)."""
        v = self._eval(z3.BitVec(local, 8 * size))
        return PageState(bits=CBV(v.as_long(), 8 * size), origin=((),) * size)



def order_not_covered(sc: Scenario, assume: list[z3.BoolRef],
                      roles: Sequence[tuple[z3.BoolRef, Sequence[z3.BitVecRef]]],
                      timeout_ms: int) -> str:
    """For an order class's probe (:attr:`equiv.memmap.Scenario.is_class`): "" if at every
    order of the class the assumptions hold and every role's constraint can hold (as each
    order's own cell requires: its assumptions satisfiable and no role VACUOUS), else which
    order fails and why.  ``roles`` are (constraint, its index symbols); each role's
    constraint is asked on indices of its own, all of them in one query per order
    (satisfiable: each is), and only if that is not satisfiable each role alone (the
    counterpart of :func:`equiv.zone_device.check.order_not_covered` for the source-derived proofs)."""
    shift = sc.order_v
    assert isinstance(shift, z3.BitVecRef), "only an order class has orders to cover"
    conds: list[z3.BoolRef] = []
    for i, (cons, idx) in enumerate(roles):
        pairs = [(v, z3.BitVec(f"role{i}.{v}", v.size())) for v in idx]
        conds.append(z3.substitute(cons, *pairs) if pairs else cons)
    s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    s.add(*assume)
    for k in sc.orders:
        at = shift == k
        if s.check(at, *conds) == z3.sat:
            continue
        r = s.check(at)
        if r != z3.sat:
            return f"order {k}: the assumptions {'cannot hold' if r == z3.unsat else r}"
        for c in conds:
            r = s.check(at, c)
            if r != z3.sat:
                return f"order {k}: a role's constraint {'cannot hold' if r == z3.unsat else r}"
    return ""


def merge_found(roles: list[RoleResult], bounded: list[RoleResult], how: str) -> None:
    """Put the roles the bounded search REFUTED (``bounded``) in place of the same roles left
    UNKNOWN in ``roles`` (each saying it was ``how`` found), and add those ``roles`` lacks
    (a tree that could not be interpreted with summaries has no page roles yet)."""
    found = {r.name: evolve(r, reason=how) for r in bounded if r.verdict is Verdict.REFUTED}
    names = {r.name for r in roles}
    roles[:] = [found[r.name] if r.name in found and r.verdict is Verdict.UNKNOWN else r
                for r in roles]
    roles += [r for n, r in found.items() if n not in names]


@frozen
class RoleResult:
    """One obligation of a cell of a source-derived proof (``--linux``'s tree against the
    hand model, ``--patch``'s base tree against the patched one): a page role, a loop
    lemma or a check of the cell (``assumptions_satisfiable``, ``orders_covered``, ...)."""

    name: str
    verdict: Verdict
    seconds: float
    diffs: tuple[FieldDiff, ...] = ()
    inputs: tuple[tuple[str, int | bool], ...] = ()
    index: tuple[tuple[str, int], ...] = ()
    pfn: int | None = None
    reason: str = ""


def undisproved(name: str, out: object, dt: float, lemma_ok: bool) -> RoleResult:
    """A role whose query gave no counterexample: UNKNOWN with the solver's reason (``out``
    a string), VACUOUS (its constraint unsatisfiable), else PROVED, or UNKNOWN while the
    loop lemmas it rests on are not proved."""
    if isinstance(out, str):
        return RoleResult(name, Verdict.UNKNOWN, dt, reason=out)
    if out is Verdict.VACUOUS:
        return RoleResult(name, Verdict.VACUOUS, dt,
                          reason="role constraint unsatisfiable under the assumptions")
    return RoleResult(name, Verdict.PROVED if lemma_ok else Verdict.UNKNOWN, dt,
                      reason="" if lemma_ok else "the loop lemmas are not proved")

__all__ = ["ALONE_RLIMIT", "CLASS_LEMMA_MS", "FREE_FAILED", "FREE_PROVED", "FREE_SEEN", "MODELS",
           "Decided", "Evaluates", "HandPath", "Memo", "Model", "ModelValues", "RoleResult",
           "check_lemmas", "free_first", "merge_found", "model_for", "order_free",
           "order_not_covered", "specialise", "substitute_all", "undisproved"]

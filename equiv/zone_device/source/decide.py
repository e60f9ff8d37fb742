"""Deciding the ``ite`` conditions of a role's terms in the role's context
(:func:`specialise`), for the source-derived proofs of ``--patch`` and ``--linux``
(:mod:`equiv.zone_device.source.common` makes the contexts and asks the words): each
condition on the live part of a term is decided by a small query (an UNSAT answer only),
in the weakest context that holds it first (a cell's parent context, a compound's), and
array reads at one index written two ways are unified; every rewrite is an identity under
the context.  Split from :mod:`equiv.zone_device.source.common`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import z3

from equiv.zone_device.source.cstate import free_names


class Decisions(Protocol):
    """A context :func:`specialise` decides conditions in: its solver, its decisions so far
    and the models its satisfiable queries gave (``common._Shared`` is one)."""

    @property
    def context(self) -> z3.Solver: ...

    decided: dict[int, tuple[z3.BoolRef, z3.BoolRef]]
    models: list[z3.ModelRef]


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
               models: list[z3.ModelRef] | None = None,
               parent: Decisions | None = None,
               local: frozenset[str] = frozenset(),
               inner: Sequence[tuple[Decisions, frozenset[str]]] = ()) -> list[z3.BoolRef]:
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

    ``parent`` is a weaker context (every assertion of ``context`` implies its assertions,
    :attr:`RoleClaim.implied`) shared by the cases of a cell: a condition over none of the
    ``local`` variables (the role's indices) is decided there first, once for every case
    that meets it (measured: one condition was decided UNSAT in ten contexts of a cell,
    0.75 s of its 2.7 s of decisions); a decision there holds here (an UNSAT answer under
    fewer assertions is UNSAT under more), and a condition it leaves undecided is asked
    here as before.  ``inner``: contexts between the parent and this one, each with the
    names a condition must not mention to be decided there (the compound's context of a
    role whose tail index is free, :attr:`RoleClaim.outer`: a condition over no tail index
    is decided where the head, tail 1 and tail 2 of that compound decide theirs).

    Without this, z3 bit-blasts every guarded 512-bit page and searches the loop arithmetic
    inside the page comparison (tens of seconds per query at order 4).
    """
    seen_models: list[z3.ModelRef] = [] if models is None else models
    ups = [(_decider(p.context, p.decided, p.models), names) for p, names in
           ([] if parent is None else [(parent, local)]) + list(inner)]

    own = _decider(context, decided, seen_models)

    def decide(c: z3.BoolRef) -> bool | None:
        if ups and c.get_id() not in decided:
            names = free_names(c)
            for up, lacks in ups:
                if not names & lacks:
                    v = up(c)
                    if v is not None:
                        decided[c.get_id()] = (c, z3.BoolVal(v))
                        return v
        return own(c)

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


def _decider(context: z3.Solver, decided: dict[int, Decided],
             seen_models: list[z3.ModelRef]) -> Callable[[z3.BoolRef], bool | None]:
    """:func:`specialise`'s decision of an ``ite`` condition in ``context``: True or False
    if the context implies it or its negation (an UNSAT answer), None if not decided;
    ``decided`` caches the answers, ``seen_models`` collects the models of its satisfiable
    queries (at most :data:`MAX_MODELS`)."""

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

    return decide


__all__ = ["MAX_MODELS", "Decided", "Decisions", "Memo", "specialise", "substitute_all"]

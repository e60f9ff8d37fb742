"""Checking a cell: verdicts, vacuity, localisation, counterexamples.  Returns data only.

Order of work for one cell (fresh solver, fixed order, per-query timeout):

1. **Vacuity.**  The assumptions, together with every role constraint, must be satisfiable;
   otherwise every obligation is VACUOUS (a failure, never a success).
2. **Loop lemmas.**  All lemmas at once; if that is not UNSAT, one query per loop and kind
   (frame-write, frame-read, frame-bound, carry-step).  A
   refuted frame-write lemma is replayed: the iteration's out-of-frame write that leaves a
   struct page different is REFUTED with that page (which loop, which iteration, which pfn
   and whose memmap it is); otherwise UNKNOWN.
3. **Page roles.**  All roles at once; if that is not UNSAT, each role alone.  A SAT role is
   steered towards small, readable inputs (few compounds, no altmap, small pfn and index),
   then replayed concretely (:func:`equiv.zone_device.counterexample.replay`) before it is reported.

A role is PROVED only if its query is UNSAT *and* every lemma is PROVED; a role whose query
is UNSAT while some lemma is not proved is UNKNOWN (the loop summary is unjustified).  A
replayed counterexample is REFUTED whatever the lemmas say, because the replay runs the real
loops.  UNKNOWN (timeouts included) is never success.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Sequence

import z3
from attrs import evolve

from equiv.engine.cache import Cache
from equiv.engine.errors import InternalMismatch
from equiv.engine.query import ANSWERS, Session, check, conj, dump_unknown
from equiv.engine.results import CellResult, ObligationResult
from equiv.engine.verdict import Verdict, worst
from equiv.loops import Lemma
from equiv.memmap import geometry, key_compound, key_slot
from equiv.page_model import KEY_BITS, PB_BITS, Atom
from equiv.slow_path import compound_nr_pages
from equiv.zone_device.counterexample import Counterexample, replay, replay_frame
from equiv.zone_device.obligations import CellProblem, Observation


def solver_for(problem: CellProblem, timeout_ms: int, *, pages: bool = False,
            rlimit: int | None = None, about: z3.BoolRef | None = None) -> z3.Solver:
    """A fresh solver holding the assumptions.  Page-role queries use z3's ``smt`` tactic
    after eliminating unconstrained terms (about 4x faster than the QF_AUFBV default on them;
    z3's model converter keeps models valid for the original formula, and every model is
    replayed anyway); the index-level lemma and vacuity queries use the QF_AUFBV solver
    (about 7x faster there).

    With ``about`` (the formula the query will add), only the assumptions that share a
    symbol with it, directly or through other assumptions, are added; :func:`decide` adds
    the others when the query is not UNSAT without them."""
    if pages:
        s = z3.Then("simplify", "propagate-values", "elim-uncnstr", "smt").solver()
    else:
        s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    if rlimit is not None:
        s.set("rlimit", rlimit)
    kept, aside = _slice(problem, about)
    for a in kept:
        s.add(a)
    if aside:
        _WHOLE[s] = (len(kept), lambda: solver_for(problem, timeout_ms, pages=pages, rlimit=rlimit))
    return s


#: How to build the whole solver (every assumption) of a sliced one (:func:`solver_for`
#: with ``about``), and how many assumptions the sliced one holds, for :func:`decide`.
_WHOLE: weakref.WeakKeyDictionary[z3.Solver, tuple[int, Callable[[], z3.Solver]]] = \
    weakref.WeakKeyDictionary()
#: Per cell problem, the symbols each term mentions, by AST id (:func:`_symbols`).
_SYMBOLS: weakref.WeakKeyDictionary[CellProblem, dict[int, frozenset[str]]] = \
    weakref.WeakKeyDictionary()
#: Per cell problem, the symbols of each of its assumptions, in their order.
_ASSUMED: weakref.WeakKeyDictionary[CellProblem, list[frozenset[str]]] = \
    weakref.WeakKeyDictionary()


def _assumed_symbols(problem: CellProblem) -> list[frozenset[str]]:
    """The symbols of each assumption of ``problem`` (:func:`_symbols`), computed once."""
    hit = _ASSUMED.get(problem)
    if hit is None:
        memo = _SYMBOLS.setdefault(problem, {})
        hit = _ASSUMED[problem] = [_symbols(a, memo) for _, a in problem.assumptions]
    return hit


def _symbols(e: z3.ExprRef, memo: dict[int, frozenset[str]]) -> frozenset[str]:
    """The names of the uninterpreted constants and functions ``e`` mentions (a walk of
    its DAG through z3's C API, each node once per ``memo``)."""
    ctx = e.ctx.ref()
    app = z3.Z3_APP_AST
    uninterpreted = z3.Z3_OP_UNINTERPRETED

    def walk(a: z3.Ast) -> frozenset[str]:
        i = z3.Z3_get_ast_id(ctx, a)
        hit = memo.get(i)
        if hit is not None:
            return hit
        out: frozenset[str] = frozenset()
        if z3.Z3_get_ast_kind(ctx, a) == app:
            d = z3.Z3_get_app_decl(ctx, a)
            if z3.Z3_get_decl_kind(ctx, d) == uninterpreted:
                out = frozenset((z3.Z3_get_symbol_string(ctx, z3.Z3_get_decl_name(ctx, d)),))
            for j in range(z3.Z3_get_app_num_args(ctx, a)):
                sub = walk(z3.Z3_get_app_arg(ctx, a, j))
                if not sub <= out:
                    out = out | sub
        memo[i] = out
        return out

    return walk(e.as_ast())


def _sharing(need: set[str], syms: list[frozenset[str]]) -> list[bool]:
    """Which of the formulas with symbols ``syms`` share a symbol with ``need``, directly or
    through other formulas kept (a fixpoint; ``need`` grows as they are kept)."""
    kept = [False] * len(syms)
    grew = True
    while grew:
        grew = False
        for i, sy in enumerate(syms):
            if not kept[i] and sy & need:
                kept[i], grew = True, True
                need |= sy
    return kept


def _slice(problem: CellProblem, about: z3.BoolRef | None
           ) -> tuple[list[z3.BoolRef], list[z3.BoolRef]]:
    """The assumptions connected to ``about`` by shared symbols (directly or through other
    assumptions), and the rest."""
    every = [a for _, a in problem.assumptions]
    if about is None:
        return every, []
    memo = _SYMBOLS.setdefault(problem, {})
    kept = _sharing(set(_symbols(about, memo)), _assumed_symbols(problem))
    return ([a for a, k in zip(every, kept, strict=True) if k],
            [a for a, k in zip(every, kept, strict=True) if not k])


def decide(ses: Session, s: z3.Solver, name: str, *, whole: bool = True,
           budget: int | None = None, trial: bool = False) -> tuple[z3.CheckSatResult, z3.Solver]:
    """:func:`~equiv.engine.query.check` for a solver of :func:`solver_for`.

    A sliced solver's query is decided without the assumptions that share no symbol with
    it.  If that is UNSAT, so is the query with them.  Otherwise (and if ``whole``) the
    whole query is decided (every assumption, then the query's own assertions: the query
    and the model it had without slicing) and returned with its solver.  Sound because a
    cell's assumptions are satisfiable (checked first; else every role is VACUOUS and no
    other query is asked): a part of them that shares no symbol with the rest is
    satisfiable on its own, so leaving it out cannot make a SAT query UNSAT or an UNSAT one
    SAT.  Queries that differ only in what they do not depend on (the pageblock role and
    the loop lemmas of each pgmap type's cell: only the type's assumption differs) are then
    the same text, decided once per process (:data:`equiv.engine.query.ANSWERS`) and
    cached once.  ``budget`` (the solver's z3 resource limit) keys the memo of answers that
    are not UNSAT (``ANSWERS.not_unsat``: SAT, or undecided within the deterministic budget
    of the key, by budget and the AST ids of the assertions, kept alive with the answer;
    UNSAT ones are shared by :func:`~equiv.engine.query.check` itself): a query asked again
    (the same sliced lemma or pageblock query in each pgmap type's cell) goes straight to
    its whole form; an undecided query is not asked again whole, since more assumptions of
    other symbols cannot help it.  A ``trial`` query's verdict rests on another query if it
    is undecided, so it does not count as undecided for the cache (``Session.undecided``).
    """
    terms = list(s.assertions())
    key = (-1 if budget is None else budget, *(t.get_id() for t in terms))
    hit = ANSWERS.not_unsat.get(key) if ses.mode == "z3" else None
    if hit is not None:
        ses.shared += 1
        r = hit[0]
        ses.undecided += r == z3.unknown and not trial
    else:
        listed = len(ses.keys)
        r = check(ses, s, name=name)
        if r == z3.unknown and trial:
            # no verdict rests on a trial that ran out of its budget: not counted as
            # undecided, and its key not listed (its answer is never cached, so a cell
            # listing it could never be served from the cache)
            ses.undecided -= 1
            del ses.keys[listed:]
        if r != z3.unsat and ses.mode == "z3":
            ANSWERS.not_unsat[key] = (r, terms)
    built = _WHOLE.pop(s, None)
    if r != z3.sat or built is None or not whole:
        return r, s
    nkept, build = built
    full = build()
    full.add(*s.assertions()[nkept:])  # the query's own assertions
    return check(ses, full, name=name), full


def prefer_small(s: z3.Solver, problem: CellProblem, ob: Observation, *,
                 from_scratch: bool = False, budget: tuple[int, int | None] | None = None) -> int:
    """Steer a SAT query to small, readable inputs; keep each preference only if still SAT.

    Greedy, in a fixed order: preference ``i`` is kept if the assertions with every kept
    preference before it and ``i`` are SAT.  With ``from_scratch`` (a solver that decides
    every check from its assertions alone, as the tactic solver of the page roles does:
    :func:`solver_for` with ``pages``), runs of preferences are tried together and split
    only when they are not SAT together, which keeps the same preferences and ends on the
    same assertions, hence the same model, in a few checks instead of one per preference.
    With ``budget`` ``(try, full)``, each check of a preference gets the z3 resource budget
    ``try`` (a preference not decided SAT within it is not kept: the counterexample is as
    valid, perhaps less small) and the solver ``full`` again afterwards.

    Returns:
        the number of solver frames pushed (the caller pops them); the solver is SAT.
    """
    idx: dict[str, list[z3.BitVecRef]] = {k: [v] for k, v in ob.indices.items()}
    return _prefer(s, problem, ob.optimised, idx, from_scratch=from_scratch, budget=budget,
                   guess=ob.role.name if from_scratch else None)


def _keep_greedy(s: z3.Solver, prefs: list[z3.BoolRef], from_scratch: bool,
                 budget: tuple[int, int | None] | None = None,
                 guesses: Sequence[tuple[int, ...]] = (), role: str | None = None) -> int:
    """:func:`_keep_greedy_in` with each preference's check under ``budget[0]`` and the
    solver's own budget ``budget[1]`` (None: none) restored for the last check.

    With ``guesses`` (no budget, a from-scratch solver): every preference is tried at once
    on ``s`` (the first check :func:`_keep_greedy_in` makes too); if that is not SAT, each
    guess of which preferences the greedy drops (positions in ``prefs``) is checked on a
    copy of ``s`` (:func:`_keep_guessed`), then the halving runs on a copy if none holds,
    and ``s`` gets the kept preferences and one check.  The same preferences are kept as
    without guesses; the model is the one ``s`` gives for them after its own two checks,
    however they were found (checks on a solver can change which model it gives later).
    Which ones were dropped is remembered for ``role``'s next steering (:func:`_guesses`)."""
    if budget is None:
        if not guesses or not from_scratch:
            return _keep_greedy_in(s, prefs, from_scratch)
        for p in prefs:
            s.push()
            s.add(p)
        if s.check() == z3.sat:
            return len(prefs)
        s.pop(len(prefs))
        t = s.translate(s.ctx)
        dropped = next((g for g in guesses if _keep_guessed(t, prefs, g) is not None), None)
        if dropped is None:
            out: list[int] = []
            _keep_greedy_in(s.translate(s.ctx), prefs, from_scratch, out)
            dropped = tuple(out)
        if role is not None:
            _DROPPED[role, len(prefs)] = dropped
        keep = [p for i, p in enumerate(prefs) if i not in dropped]
        for p in keep:
            s.push()
            s.add(p)
        if s.check() != z3.sat:
            raise AssertionError("solver lost a model it had")
        return len(keep)
    s.set("rlimit", budget[0])
    try:
        return _keep_greedy_in(s, prefs, from_scratch, restore=budget[1] or 0)
    finally:
        s.set("rlimit", budget[1] or 0)


def _keep_guessed(s: z3.Solver, prefs: list[z3.BoolRef], dropped: tuple[int, ...]) -> int | None:
    """What :func:`_keep_greedy_in` keeps (from scratch, no budget), if it is every
    preference but those at ``dropped``: then ``s`` holds them, pushed one by one, and the
    number kept is returned; else ``s`` is left as it was and None returned.

    Checked in ``len(dropped) + 1`` checks instead of about ``2 * len(dropped) *
    log2(len(prefs))``: the greedy keeps preference ``i`` iff the ones it kept before
    ``i`` and ``i`` are SAT together.  So the guess is the greedy's exactly when each
    dropped preference is not SAT with the guessed kept ones before it, and the guessed
    kept ones are SAT all together (then so is every prefix of them)."""
    keep = [i for i in range(len(prefs)) if i not in dropped]
    pushed = 0

    def undo() -> None:
        s.pop(pushed)

    for j in sorted(dropped):
        while pushed < len(keep) and keep[pushed] < j:
            s.push()
            s.add(prefs[keep[pushed]])
            pushed += 1
        s.push()
        s.add(prefs[j])
        r = s.check()
        s.pop()
        if r == z3.sat:  # the greedy would keep it: the guess is wrong
            undo()
            return None
    while pushed < len(keep):
        s.push()
        s.add(prefs[keep[pushed]])
        pushed += 1
    if s.check() != z3.sat:
        undo()
        return None
    return len(keep)


def _keep_greedy_in(s: z3.Solver, prefs: list[z3.BoolRef], from_scratch: bool,
                    dropped: list[int] | None = None, restore: int | None = None) -> int:
    """Push each preference of ``prefs`` that keeps ``s`` SAT (in order, each given the ones
    kept before it); the number kept (and, into ``dropped``, the positions of those not
    kept).  The last check of ``s`` is left SAT on exactly the assertions it ends with."""
    if not from_scratch:  # an incremental solver: its model may depend on every check
        kept = 0
        for p in prefs:
            s.push()
            s.add(p)
            if s.check() == z3.sat:
                kept += 1
            else:
                s.pop()
        if restore is not None:
            s.set("rlimit", restore)
        if kept and s.check() != z3.sat:  # re-establish the model of the last kept frame
            raise AssertionError("solver lost a model it had")
        return kept
    kept = 0
    last_sat = True  # the caller's check was SAT on the assertions as they are
    todo = [list(range(len(prefs)))]  # runs of positions in prefs
    while todo:
        block = todo.pop()
        for i in block:
            s.push()
            s.add(prefs[i])
        last_sat = s.check() == z3.sat
        if last_sat:
            kept += len(block)
            continue
        s.pop(len(block))
        if len(block) > 1:  # not SAT together: the first half, then the second
            half = len(block) // 2
            todo += [block[half:], block[:half]]
        elif dropped is not None:
            dropped.append(block[0])
    if restore is not None:
        s.set("rlimit", restore)
    if not last_sat and s.check() != z3.sat:
        raise AssertionError("solver lost a model it had")
    return kept


def _prefer(s: z3.Solver, problem: CellProblem, optimised: z3.BoolRef | bool,
            indices: dict[str, list[z3.BitVecRef]], *, from_scratch: bool = False,
            budget: tuple[int, int | None] | None = None, guess: str | None = None) -> int:
    """:func:`prefer_small` for a deduplication condition and index terms (``c`` and ``k``
    preferred at most 1, then 0; ``t`` at most 3).  With ``guess`` (a page role's name),
    the preferences a counterexample of that role usually cannot keep (:func:`_guesses`)
    are guessed first (:func:`_keep_greedy`)."""
    prefs = _preferences(problem, optimised, indices)
    guesses = _guesses(problem, prefs, indices, guess) if guess is not None else []
    return _keep_greedy(s, prefs, from_scratch, budget, guesses, guess)


#: Per page role and number of preferences, the positions of the preferences the last
#: steering of a counterexample of that role in this process did not keep: the first guess
#: of the next (:func:`_guesses`).  The roles of neighbouring orders and of the pgmap types
#: mostly drop the same ones.  A guess is checked before it is used, so this changes which
#: checks are made, never which preferences are kept.
_DROPPED: dict[tuple[str, int], tuple[int, ...]] = {}


def _guesses(problem: CellProblem, prefs: list[z3.BoolRef],
             indices: dict[str, list[z3.BitVecRef]], role: str) -> list[tuple[int, ...]]:
    """Which preferences of ``prefs`` (:func:`_preferences`) a counterexample of the page
    role ``role`` usually cannot keep, as positions: first the ones the last steering of
    that role dropped (:data:`_DROPPED`), then the most common: a difference that needs two
    compounds (not ``nr_pages <= stride``, not ``c == 0``), one that needs an altmap with
    free pages (6.12's pageblock range), each also with a first pfn other than 0.  Only
    guesses: each is checked before it is used (:func:`_keep_guessed`,
    :func:`_steer_sliced`)."""
    inp, stride = problem.inputs, problem.scenario.stride_v
    two = [z3.ULE(inp.nr_pages, stride), *(v == 0 for v in indices.get("c", [])[:1])]
    altmap = [z3.Not(inp.altmap_valid), inp.altmap_free == 0]
    last = _DROPPED.get((role, len(prefs)))
    out = [last] if last else []  # (none dropped: the all-at-once check said otherwise)
    for terms in (two, [*two, inp.start_pfn == 0], altmap, [*altmap, inp.start_pfn == 0]):
        at = tuple(i for i, p in enumerate(prefs) if any(p.eq(x) for x in terms))
        if len(at) == len(terms) and at != last:
            out.append(at)
    return out


def _preferences(problem: CellProblem, optimised: z3.BoolRef | bool,
                 indices: dict[str, list[z3.BitVecRef]]) -> list[z3.BoolRef]:
    """The preferences of :func:`_prefer`, in the order they are tried."""
    inp, stride = problem.inputs, problem.scenario.stride_v
    prefs: list[z3.BoolRef] = [
        z3.Not(inp.altmap_valid),
        # a deduplicated vmemmap writes only 128 struct pages per compound: a cheap replay
        *([optimised] if isinstance(optimised, z3.BoolRef) else []),
        z3.ULE(inp.nr_pages, 2 * stride), z3.ULE(inp.nr_pages, stride),
        z3.Not(inp.mobility_disabled),
    ]
    for name in ("c", "k"):
        for v in indices.get(name, []):
            prefs += [z3.ULE(v, 1), v == 0]
    for v in indices.get("t", []):
        prefs += [z3.ULE(v, 3)]
    prefs += [z3.ULT(inp.start_pfn, 1 << 22), z3.ULT(inp.start_pfn, 1 << 16),
              inp.start_pfn == 0, z3.ULE(inp.nid, 1),
              # canonical values for inputs that rarely matter: stable, readable reports
              inp.altmap_reserve == 0, inp.altmap_free == 0,
              inp.pgmap == 0xFFFF888100000000,
              inp.vmemmap_base == 0xFFFFEA0000000000, inp.page_offset == 0xFFFF888000000000]
    return prefs


def _steer_sliced(problem: CellProblem, ob: Observation, claim: z3.BoolRef, timeout_ms: int,
                  rlimit: int | None, budget: tuple[int, int | None] | None
                  ) -> z3.ModelRef | None:
    """:func:`prefer_small` on a sliced query, shared between cells: the model of the whole
    query (every assumption, ``not claim``) with the preferences kept, or None when that is
    not SAT within ``rlimit`` (the caller then steers the whole query as before).

    Which preferences are kept is decided greedily, in :func:`prefer_small`'s order and
    runs, on the solver of the assumptions connected to the claim *or to a preference*
    (:func:`solver_for`'s ``about``), each check memoised (``steered`` of
    :data:`equiv.engine.query.ANSWERS`, keyed by the z3 budget and the AST ids of the
    assertions, which are kept alive with the answer: each pgmap type's cell steers the
    same sliced query, the pageblock role, a refcount every type shares, through the same
    checks, decided once).  The assumptions left out share no symbol with that query and
    are satisfiable on their own (:func:`decide`), so each check has the answer it has on
    the whole query (a check cut short by ``budget[0]`` aside: one the smaller query
    decides keeps its preference), and the kept ones are the ones the whole query's
    steering keeps.  The model is the steered sliced query's (``models`` of the same,
    keyed like ``steered`` with the full budget), extended by a model of the assumptions
    left out (and checked against every assumption and the query): cells whose sliced
    query is the same (the pageblock role of every pgmap type) get the same
    counterexample, up to the inputs only those assumptions mention (``pgmap->type``), and
    :func:`_minimise` can share its queries."""
    indices = {k: [v] for k, v in ob.indices.items()}
    prefs = _preferences(problem, ob.optimised, indices)
    t = solver_for(problem, timeout_ms, pages=True, rlimit=rlimit,
                   about=z3.And(claim, *prefs))
    t.add(z3.Not(claim))
    try_rl = -1 if budget is None else budget[0]
    if budget is not None:
        t.set("rlimit", budget[0])

    def sat(extra: list[z3.BoolRef]) -> bool:
        t.push()
        t.add(*extra)
        terms = list(t.assertions())
        key = (try_rl, *(a.get_id() for a in terms))
        hit = ANSWERS.steered.get(key)
        if hit is None:
            hit = ANSWERS.steered[key] = (t.check(), terms)
        t.pop()
        return bool(hit[0] == z3.sat)

    kept: list[z3.BoolRef] = []
    # every preference at once; else each guess of the ones the greedy drops, checked as
    # :func:`_keep_guessed` does (each dropped one not SAT with the kept ones before it,
    # the kept ones SAT together); else the halving
    todo = [prefs]  # the runs of _keep_greedy_in (from scratch), in the same order
    if not sat(prefs):
        for g in _guesses(problem, prefs, indices, ob.role.name):
            keep = [p for i, p in enumerate(prefs) if i not in g]
            if all(not sat([*(prefs[i] for i in range(j) if i not in g), prefs[j]])
                   for j in sorted(g)) and sat(keep):
                kept, todo = keep, []
                break
    while todo:
        block = todo.pop()
        if sat([*kept, *block]):
            kept += block
        elif len(block) > 1:
            half = len(block) // 2
            todo += [block[half:], block[:half]]
    ids = {p.get_id() for p in kept}
    _DROPPED[ob.role.name, len(prefs)] = tuple(i for i, p in enumerate(prefs)
                                               if p.get_id() not in ids)
    # the model: the steered sliced query's (shared too), with the assumptions left out
    # satisfied on their own; checked against the whole query (else decided whole)
    t.set("rlimit", rlimit or 0)
    t.push()
    t.add(*kept)
    terms = list(t.assertions())
    key = (rlimit or -1, *(a.get_id() for a in terms))
    hit = ANSWERS.models.get(key)
    if hit is None:
        hit = ANSWERS.models[key] = (t.model() if t.check() == z3.sat else None, terms)
    t.pop()
    aside = _slice(problem, z3.And(claim, *prefs))[1]
    model = None if hit[0] is None else _merged(hit[0], aside)
    goal = [a for _, a in problem.assumptions] + [z3.Not(claim), *kept]
    if model is not None and all(z3.is_true(model.eval(g, model_completion=True)) for g in goal):
        return model
    whole = solver_for(problem, timeout_ms, pages=True, rlimit=rlimit)
    whole.add(z3.Not(claim), *kept)
    return whole.model() if whole.check() == z3.sat else None


def _merged(model: z3.ModelRef, aside: list[z3.BoolRef]) -> z3.ModelRef | None:
    """``model`` extended by a model of the assumptions ``aside`` (which share no symbol
    with what ``model`` satisfies), or None if those are not satisfiable."""
    out = z3.Model()
    for d in model.decls():
        out.update_value(d, model[d])
    if aside:
        s = z3.Solver()
        s.add(*aside)
        if s.check() != z3.sat:
            return None
        other = s.model()
        for d in other.decls():
            out.update_value(d, other[d])
    return out


def _reused_lemmas(problem: CellProblem, known: Sequence[ObligationResult] | None
                   ) -> list[ObligationResult]:
    """The results of ``known`` for every loop lemma of ``problem`` when each is there,
    PROVED; else none (every lemma is then posed in this cell)."""
    proved = {o.name: o for o in known or () if o.kind == "lemma" and o.verdict is Verdict.PROVED}
    names = list(dict.fromkeys(f"{lm.loop}:{lm.kind}" for lm in problem.lemmas))
    if not names or any(n not in proved for n in names):
        return []
    return [evolve(proved[n], seconds=0.0, reason=proved[n].reason or
                   "proved by the cell's proof for every type (or every order of its class)")
            for n in names]


def order_not_covered(ses: Session, s: z3.Solver, problem: CellProblem) -> int | None:
    """The first order of an order class at which a role's constraint or a path's reach
    condition cannot hold under the assumptions, or None.  Per order one query: the reach
    conditions and every role's constraint, each role on indices of its own; satisfiable,
    it shows each of them satisfiable at that order (otherwise each is asked alone)."""
    sc = problem.scenario
    shift = sc.order_v
    assert isinstance(shift, z3.BitVecRef)
    conds = list(problem.reach.values())
    for ob in problem.observations:
        pairs = [(v, z3.BitVec(f"{ob.role.name}.{n}", v.size())) for n, v in ob.indices.items()]
        conds.append(z3.substitute(ob.constraint, *pairs) if pairs else ob.constraint)
    for k in sc.orders:
        at = shift == k
        if check(ses, s, at, *conds, keep_sat=True, name=f"orders-o{k}") == z3.sat:
            continue
        if any(check(ses, s, at, c, keep_sat=True, name=f"orders-o{k}") != z3.sat for c in conds):
            return k
    return None


def check_cell(problem: CellProblem, *, timeout_ms: int = 60_000,
               rlimit: int | None = None, solver: str = "z3",
               dump_smt: str | None = None, only: str | None = None,
               minimise: bool = True, cache: Cache | None = None,
               probe: bool = False, lemma_try: int | None = None,
               sliced: bool = False,
               enough: Callable[[ObligationResult], bool] | None = None,
               lemmas_from: Sequence[ObligationResult] | None = None,
               split_lemmas: bool = False, first_roles: Sequence[str] = ()) -> CellResult:
    """Decide every obligation of ``problem``.

    Args:
        problem: the cell (see :func:`equiv.zone_device.obligations.build_cell`).
        timeout_ms: wall-clock limit per solver query; on expiry the obligation is UNKNOWN.
        rlimit: z3 resource limit per query (deterministic across machines), or None.
        solver: who decides each query: z3, cvc5, bitwuzla, or all (all must agree).
        dump_smt: directory to write every query to as SMT-LIB 2, or None.
        only: check only this page obligation (e.g. ``tail1_equal``) and the loop lemmas.
        minimise: for each counterexample, find which inputs do not matter and whether it
            is the only one (:func:`_minimise`); the self-test skips this.
        cache: the on-disk result cache: decided queries are looked up and stored by the
            hash of their SMT-LIB text (:mod:`equiv.engine.cache`), or None.
        probe: stop at the first query that does not prove its obligation, with an
            UNKNOWN obligation ``probe`` saying so (no counterexample is looked for): the
            all-types try of :func:`equiv.zone_device.cell.run_group`, whose result is used only
            when it proves everything.
        lemma_try: z3 resource budget of the tries whose failure costs only time or
            readability: the first tries at the loop lemmas (all at once, then per loop
            and kind; a lemma not proved within it is proved conjunct by conjunct under
            ``rlimit`` (:func:`_lemma_conjuncts`), and if one of those is not UNSAT, whole
            under ``rlimit``), each preference steering a counterexample and each query
            explaining one.  None: every query gets ``rlimit``.  Either way a lemma is
            PROVED exactly when a query within ``rlimit`` shows it valid, and a verdict
            never depends on it.
        sliced: pose each lemma and role query with only the assumptions that share a
            symbol with it (:func:`solver_for`'s ``about``, :func:`decide`): the cells of
            one order then pose the same type-independent queries, decided once.  Off by
            default: walking the terms costs about 10 % of the default matrix, whose
            all-types try usually proves every type at once.
        enough: stop once an obligation's result satisfies it (the self-test's "this
            seeded bug is caught, with the field it must name": the obligations after it
            could not change that).  The result lists the obligations decided so far.
        lemmas_from: obligations already PROVED by a proof whose inputs cover this cell's
            (:func:`equiv.zone_device.cell.run_group`'s try with the type, or the order, symbolic:
            the same claim under weaker assumptions): when they name every loop lemma of
            this cell, those lemmas and the page roles among them (each shown not vacuous
            in this cell first) are taken instead of being posed again.
        split_lemmas: the first try at the loop lemmas is two queries, the slow path's
            lemmas (:attr:`~equiv.zone_device.obligations.CellProblem.slow_lemmas`: the same query
            for every revision of the scenario, decided once per process) and then the
            fast path's; the self-test's mutants share the first.  Off: one query, which
            is cheaper for a cell whose scenario is checked once.
        first_roles: the page roles checked before the others (the rest in their order):
            with ``enough``, the roles where the seeded bug is expected to show
            (:func:`equiv.zone_device.mutants.first_roles`), so fewer roles are proved before the
            one that catches it.  Which obligations are decided before ``enough`` stops
            changes; what is decided does not.
    """
    if only is not None:
        problem = evolve(problem, observations=[ob for ob in problem.observations
                                                if f"{ob.role.name}_equal" == only])
    sc, rev = problem.scenario, problem.revision
    t_cell = time.perf_counter()
    results: list[ObligationResult] = []
    cell_tag = f"{sc.ptype.name if sc.ptype else 'ALL'}-o{sc.order_label}"
    ses = Session(mode=solver, budget=-1 if rlimit is None else rlimit, timeout_ms=timeout_ms,
                  dump_dir=dump_smt, dump_prefix=f"{sc.layout.config.name}-{rev.name}-{cell_tag}",
                  cache=cache)

    def done(verdict: Verdict | None = None) -> CellResult:
        v = verdict or worst([r.verdict for r in results])
        return CellResult(
            config=sc.layout.config.name, revision=rev.name, ptype=sc.ptype.kname if sc.ptype else "ALL",
            order=sc.orders[0],
            verdict=v, seconds=time.perf_counter() - t_cell, obligations=tuple(results),
            assumptions=tuple(n for n, _ in problem.assumptions), choices=rev.assumptions,
            hypothetical=sc.layout.config.hypothetical, shared_queries=ses.shared,
            query_keys=tuple(dict.fromkeys(ses.keys)), decided=ses.undecided == 0)

    # 1. vacuity: the assumptions, then each role's constraint under them
    s = solver_for(problem, timeout_ms, rlimit=rlimit)
    vacuous: dict[str, str] = {}
    for ob in problem.observations:
        t0 = time.perf_counter()
        r = check(ses, s, ob.constraint, keep_sat=True, name=f"vacuity-{ob.role.name}")
        if r != z3.sat:
            vacuous[ob.role.name] = ("assumptions and role constraint unsatisfiable" if r == z3.unsat
                                     else f"vacuity check: {ses.note or s.reason_unknown()}")
            results.append(ObligationResult(
                name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                verdict=Verdict.VACUOUS if r == z3.unsat else Verdict.UNKNOWN,
                seconds=time.perf_counter() - t0, reason=vacuous[ob.role.name]))
    if len(vacuous) == len(problem.observations):
        return done()
    # ... and each path must run to its end for some input allowed by the assumptions
    for path, cond in problem.reach.items():
        r = check(ses, s, cond, keep_sat=True, name=f"reach-{path}")
        if r != z3.sat:
            why = (f"the {path} path never reaches its end under the assumptions (it always "
                   "returns early)" if r == z3.unsat else f"reach check: {ses.note or s.reason_unknown()}")
            for ob in problem.observations:
                if ob.role.name not in vacuous:
                    vacuous[ob.role.name] = why
                    results.append(ObligationResult(
                        name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                        verdict=Verdict.VACUOUS if r == z3.unsat else Verdict.UNKNOWN,
                        seconds=0.0, reason=why))
    if len(vacuous) == len(problem.observations):
        return done()
    coverage = ("assumptions satisfiable together with the role's constraint",
                *(f"{p} path reaches its end" for p in problem.reach))

    def stopped(what: str) -> CellResult:
        results.append(ObligationResult(
            name="probe", kind="cell", role="cell", verdict=Verdict.UNKNOWN, seconds=0.0,
            reason=f"probe stopped: {what} not proved (the cell is checked per type)"))
        return done()

    if probe and vacuous:
        return stopped("a role's vacuity check")
    if sc.is_class:
        # one proof for an order class stands for each order's: each order must pass the
        # vacuity and reach checks above on its own
        assert probe, "an order class is only ever a probe (equiv.zone_device.cell.run_group)"
        k = order_not_covered(ses, s, problem)
        if k is not None:
            return stopped(f"order {k}'s vacuity or reach check")
    # 2. loop lemmas: all at once, then (if that is not UNSAT) one query per loop and kind;
    # with ``lemma_try``, those two under that smaller budget, then conjunct by conjunct
    lemma_ok = True
    # proved by a proof that covers this cell (every type of the order, every order of a
    # class): taken as they are, not posed again
    reused = _reused_lemmas(problem, lemmas_from)
    results.extend(reused)
    lemmas = [] if reused else problem.lemmas
    names = [f"{lm.loop}:{lm.kind}" for lm in lemmas]
    try_rl = rlimit if lemma_try is None or solver != "z3" else (
        lemma_try if rlimit is None else min(lemma_try, rlimit))
    ns = problem.slow_lemmas
    parts = [lemmas[:ns], lemmas[ns:]] if split_lemmas and 0 < ns < len(lemmas) else [lemmas]
    t0 = time.perf_counter()
    r = z3.unsat
    for part, what in zip(parts, ("lemmas", "lemmas-fast")[:len(parts)], strict=True):
        every = conj([lm.formula for lm in part])
        s = solver_for(problem, timeout_ms, rlimit=try_rl, about=every if sliced else None)
        s.add(z3.Not(every))
        r, s = decide(ses, s, what, whole=not probe, budget=try_rl,
                      trial=try_rl != rlimit) if part else (z3.unsat, s)
        if r != z3.unsat:
            break
    dt = time.perf_counter() - t0
    if probe and r != z3.unsat and try_rl == rlimit:  # (a trial's failure is no verdict)
        return stopped("the loop lemmas")
    for n in dict.fromkeys(names) if r == z3.unsat else ():
        results.append(ObligationResult(name=n, kind="lemma", role="lemma",
                                        verdict=Verdict.PROVED, seconds=dt))
    for n in dict.fromkeys(names) if r != z3.unsat else ():
        members = [lm for lm, m in zip(lemmas, names, strict=True) if m == n]
        t0 = time.perf_counter()
        these = conj([lm.formula for lm in members])
        s = solver_for(problem, timeout_ms, rlimit=try_rl, about=these if sliced else None)
        s.add(z3.Not(these))
        r1, s = decide(ses, s, f"lemma-{n}", budget=try_rl, trial=try_rl != rlimit)
        if r1 != z3.unsat and try_rl != rlimit:
            if _lemma_conjuncts(problem, members, ses, timeout_ms, rlimit, n):
                r1 = z3.unsat
            else:  # a conjunct is not proved: the whole lemma under the full budget
                s = solver_for(problem, timeout_ms, rlimit=rlimit,
                               about=these if sliced else None)
                s.add(z3.Not(these))
                r1, s = decide(ses, s, f"lemma-{n}", budget=rlimit)
        if r1 == z3.unsat:
            results.append(ObligationResult(name=n, kind="lemma", role="lemma",
                                            verdict=Verdict.PROVED,
                                            seconds=time.perf_counter() - t0))
            continue
        lemma_ok = False
        if probe:  # (a probe looks for no counterexample)
            return stopped("the loop lemmas")
        if r1 == z3.sat:
            results.append(_refuted_lemma(problem, s, members, n, t0, ses))
            if enough is not None and enough(results[-1]):
                return done()
        else:
            results.append(ObligationResult(
                name=n, kind="lemma", role="lemma", verdict=Verdict.UNKNOWN,
                seconds=time.perf_counter() - t0,
                reason=f"{ses.note or s.reason_unknown()}; query: {dump_unknown(s, cell_tag)}"))

    # 3. page roles
    claims = [ob.claim(sc.layout.atoms) for ob in problem.observations]
    covered = {o.name: o for o in lemmas_from or () if o.kind == "page"
               and o.verdict is Verdict.PROVED} if reused else {}
    pairs = sorted(zip(problem.observations, claims, strict=True),
                   key=lambda p: p[0].role.name not in first_roles)  # stable
    for ob, claim in pairs:
        if ob.role.name in vacuous:
            continue
        done_by = covered.get(f"{ob.role.name}_equal")
        if done_by is not None:  # proved for inputs covering this cell's (not vacuous here)
            results.append(evolve(done_by, seconds=0.0, coverage=coverage,
                                  reason=done_by.reason or reused[0].reason))
            if enough is not None and enough(results[-1]):
                return done()
            continue
        s = solver_for(problem, timeout_ms, pages=True, rlimit=rlimit,
                       about=claim if sliced else None)
        s.add(z3.Not(claim))
        t0 = time.perf_counter()
        # sliced (and z3 alone): a SAT sliced query is steered sliced, and only the
        # steered whole query is decided (:func:`_steer_sliced`); else whole, then steered
        shared = sliced and solver == "z3" and not probe
        r1, s = decide(ses, s, f"role-{ob.role.name}", whole=not probe and not shared,
                       budget=rlimit)
        if probe and r1 != z3.unsat:
            return stopped(f"role {ob.role.name}")
        steer = None if lemma_try is None else (lemma_try, rlimit)
        model = None
        if r1 == z3.sat and shared:
            model = _steer_sliced(problem, ob, claim, timeout_ms, rlimit, steer)
            if model is None:  # not SAT with the preferences within rlimit: as before
                s = solver_for(problem, timeout_ms, pages=True, rlimit=rlimit)
                s.add(z3.Not(claim))
                r1 = check(ses, s, name=f"role-{ob.role.name}")
        if r1 == z3.unsat:
            results.append(_unsat_result(ob, time.perf_counter() - t0, lemma_ok, coverage))
        elif r1 == z3.sat:
            if model is None:
                pushed = prefer_small(s, problem, ob, from_scratch=True, budget=steer)
                model = s.model()
                for _ in range(pushed):
                    s.pop()
            try:
                # lazily (only the iterations the observation needs) when every loop
                # lemma is proved: the lemmas make that the memory of the real loops
                cex = replay(problem, ob, model, lazy=lemma_ok)
                if minimise:
                    cex = _minimise(problem, ob, model, cex, timeout_ms,
                                    rlimit if lemma_try is None else lemma_try, sliced=shared)
            except InternalMismatch as e:
                if lemma_ok:
                    raise
                results.append(ObligationResult(
                    name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                    verdict=Verdict.UNKNOWN, seconds=time.perf_counter() - t0,
                    reason=f"solver difference not reproduced concretely ({e}); a loop lemma "
                           "failed, so the symbolic summary is not trusted"))
            else:
                results.append(ObligationResult(
                    name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                    verdict=Verdict.REFUTED, seconds=time.perf_counter() - t0,
                    counterexample=cex))
                if enough is not None and enough(results[-1]):
                    return done()
        else:
            results.append(ObligationResult(
                name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                verdict=Verdict.UNKNOWN, seconds=time.perf_counter() - t0,
                reason=f"{ses.note or s.reason_unknown()}; query: {dump_unknown(s, cell_tag)}"))
    return done()


def _lemma_conjuncts(problem: CellProblem, members: list[Lemma], ses: Session, timeout_ms: int,
                     rlimit: int | None, name: str) -> bool:
    """Prove the lemmas ``members`` (one loop and kind) one conjunct of their claims at a
    time: ``premise -> (a and b and ...)`` is valid iff each ``premise -> a`` is.  A frame
    lemma's claim has a conjunct per read or per kind of memory; alone, each is a small
    bit-vector query where the conjunction made z3 search them together (the v6.12 heads
    loop's frame-read at order 12: 5.7 s whole, 1.3 s in 15 parts).  True if every one is
    UNSAT; False at the first that is not (the caller then decides the whole lemma)."""
    for lm in members:
        parts = lm.claim.children() if z3.is_and(lm.claim) else [lm.claim]
        for i, part in enumerate(parts):
            one = z3.Implies(lm.premise, part)
            s = solver_for(problem, timeout_ms, rlimit=rlimit, about=one)
            s.add(z3.Not(one))
            if decide(ses, s, f"lemma-{name}-{i}", whole=False, budget=rlimit,
                      trial=True)[0] != z3.unsat:
                return False
    return True


def _refuted_lemma(problem: CellProblem, s: z3.Solver, members: list[Lemma], name: str,
                   t0: float, ses: Session) -> ObligationResult:
    """A loop lemma with a model.  A frame-write lemma is replayed
    (:func:`~equiv.zone_device.counterexample.replay_frame`): an iteration that writes outside its frame
    and leaves a struct page different is REFUTED with that page; one whose write leaves no
    difference, and any other lemma, is UNKNOWN (the summary is unjustified)."""
    frame = [lm for lm in members if lm.kind in ("frame-write", "frame-bound") and lm.k is not None]
    if frame:
        inp, sc = problem.inputs, problem.scenario
        g = geometry(sc, inp)
        _, opt = compound_nr_pages(sc, inp, g.start)
        ks = {"k": [lm.k for lm in frame if lm.k is not None]}
        # look first for a store outside the range's compounds (the memmap of whatever lies
        # there), then for any out-of-frame store; each model is replayed concretely
        keyed = [lm for lm in frame if lm.key is not None]

        def past_range(key: z3.BitVecRef) -> z3.BoolRef:
            """The struct page the key names lies outside the range's compounds (a key of
            a loop index past its compound counts from the compound it reaches)."""
            c = key_compound(sc, key) + z3.LShR(key_slot(sc, key), sc.order_v)
            return z3.UGE(c, g.ncompounds)

        def beyond(key: z3.BitVecRef) -> z3.BoolRef:
            """... or at least past the end of its own compound."""
            return z3.Or(past_range(key), z3.UGE(key_slot(sc, key), sc.stride_v))

        focuses = [z3.Or(*(z3.And(z3.Not(lm.formula), where(lm.key))
                           for lm in keyed)) for where in (past_range, beyond)] if keyed else []
        reason = ""
        for focus in (*focuses, None):
            if focus is not None:
                s.push()
                s.add(focus)
                r = s.check()
                if r != z3.sat:
                    ses.undecided += r == z3.unknown  # the cell's result rests on a budget
                    s.pop()
                    continue
            pushed = _prefer(s, problem, opt, ks)
            model = s.model()
            for _ in range(pushed + (focus is not None)):
                s.pop()
            failed = [lm for lm in frame
                      if z3.is_false(model.eval(lm.formula, model_completion=True))]
            if not failed:
                continue
            # the store outside the range first, if the model has one
            def rank(lm: Lemma, m: z3.ModelRef = model) -> tuple[bool, bool]:
                if lm.key is None:
                    return True, True
                return (not z3.is_true(m.eval(past_range(lm.key), model_completion=True)),
                        not z3.is_true(m.eval(beyond(lm.key), model_completion=True)))

            failed.sort(key=rank)
            got = replay_frame(problem, failed[0], model)
            if isinstance(got, Counterexample):
                return ObligationResult(name=name, kind="lemma", role="lemma",
                                        verdict=Verdict.REFUTED, seconds=time.perf_counter() - t0,
                                        counterexample=got, reason=got.frame or "")
            reason = reason or got
        if reason:
            return ObligationResult(name=name, kind="lemma", role="lemma",
                                    verdict=Verdict.UNKNOWN, seconds=time.perf_counter() - t0,
                                    reason=reason)
    return ObligationResult(
        name=name, kind="lemma", role="lemma", verdict=Verdict.UNKNOWN,
        seconds=time.perf_counter() - t0,
        reason="loop summary lemma does not hold: the loop body touches memory outside its "
               "own iteration's pages, or its template drifts; the summary cannot be used "
               "(page roles checked by replay only)")


def _unsat_result(ob: Observation, dt: float, lemma_ok: bool,
                  coverage: tuple[str, ...] = ()) -> ObligationResult:
    if lemma_ok:
        return ObligationResult(name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                                verdict=Verdict.PROVED, seconds=dt, coverage=coverage)
    return ObligationResult(name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                            verdict=Verdict.UNKNOWN, seconds=dt,
                            reason="no difference under the loop summaries, but a loop lemma "
                                   "is not proved")


def _same_difference(ob: Observation, cex: Counterexample, atoms: tuple[Atom, ...]) -> z3.BoolRef:
    """The observation shows exactly ``cex``'s difference: the differing atoms keep their
    slow and fast values and every other atom is equal on both sides."""
    if ob.slow is None:
        d = cex.diffs[0]
        return z3.And(ob.slow_cell == d.slow, ob.fast_cell == d.fast)
    assert ob.fast is not None
    by_off = {d.offset: d for d in cex.diffs if d.size}
    parts: list[z3.BoolRef] = []
    for a in atoms:
        hi, lo = 8 * (a.offset + a.size) - 1, 8 * a.offset
        sv, fv = z3.Extract(hi, lo, ob.slow.bits), z3.Extract(hi, lo, ob.fast.bits)
        diff = by_off.get(a.offset)
        parts += [sv == diff.slow, fv == diff.fast] if diff is not None else [sv == fv]
    if ob.slow.events is not None and ob.fast.events is not None:
        ev = [d for d in cex.diffs if not d.size]
        parts += ([ob.slow.events == ev[0].slow, ob.fast.events == ev[0].fast] if ev
                  else [ob.slow.events == ob.fast.events])
    return z3.And(*parts)


#: Budget of each query asked to explain a counterexample (never affects a verdict).
_EXPLAIN_MS = 10_000


def _minimise(problem: CellProblem, ob: Observation, model: z3.ModelRef, cex: Counterexample,
              timeout_ms: int, rlimit: int | None, *, sliced: bool = False) -> Counterexample:
    """Which inputs of ``cex`` do not matter, and whether it is the only counterexample.

    An input (or pseudo-input: the page, the initial memory, the early sections) does not
    matter when, with every other input fixed at the counterexample's value, some other
    value is allowed by the assumptions and no value changes the difference
    (:func:`_same_difference`): an UNSAT query.  Inputs the assumptions pin down are never
    marked.  ``multiplicity`` asks for another input or page with any difference.
    Undecided queries mark nothing.

    With ``sliced``, each query is posed without the assumptions and fixed values that
    share no symbol with what it asks (:func:`_explain_check`) and answered once per
    process: the cells of the pgmap types that got the same counterexample (up to
    ``pgmap->type``, see :func:`_steer_sliced`) then ask the same queries.
    """
    if sliced:
        return _minimise_sliced(problem, ob, model, cex, timeout_ms, rlimit)
    fixes = _fixes(problem, ob, model, cex)
    L = problem.scenario.layout
    same = _same_difference(ob, cex, L.atoms)
    s = solver_for(problem, min(timeout_ms, _EXPLAIN_MS), pages=True, rlimit=rlimit)
    s.add(ob.constraint)
    irrelevant: list[str] = []
    for name, own in fixes.items():
        if not own:
            continue
        s.push()
        for other, f in fixes.items():
            if other != name:
                s.add(*f)
        s.add(z3.Not(z3.And(*own)))  # some other value ...
        if s.check() == z3.sat:  # ... is allowed by the assumptions
            s.add(z3.Not(same))
            if s.check() == z3.unsat:  # and none changes the difference
                irrelevant.append(name)
        s.pop()
    s.push()
    s.add(z3.Not(ob.claim(L.atoms)))
    others = [f for name, fs in fixes.items() if name in cex.inputs or name == "page" for f in fs]
    s.add(z3.Not(z3.And(*others)))
    r = s.check()
    s.pop()
    multiplicity = "one of many" if r == z3.sat else "unique" if r == z3.unsat else "unknown"
    return evolve(cex, irrelevant=tuple(irrelevant), multiplicity=multiplicity)


def _fixes(problem: CellProblem, ob: Observation, model: z3.ModelRef,
           cex: Counterexample) -> dict[str, list[z3.BoolRef]]:
    """Per input and pseudo-input of ``cex``, the formulas that fix it at its value."""
    inp = problem.inputs
    fixes: dict[str, list[z3.BoolRef]] = {}
    for name, v in cex.inputs.items():
        term = getattr(inp, name)
        fixes[name] = [term == (z3.BoolVal(v) if isinstance(v, bool) else
                                z3.BitVecVal(v, term.size()))]
    fixes["page"] = [ob.indices[k] == v for k, v in cex.index.items()]
    L = problem.scenario.layout
    mem = [z3.Array("mem0.pages", z3.BitVecSort(KEY_BITS), z3.BitVecSort(8 * L.size)),
           z3.Array("mem0.pageblock", z3.BitVecSort(64), z3.BitVecSort(PB_BITS))]
    fixes["initial_memory"] = [a == model.eval(a, model_completion=True) for a in mem]
    fixes["early_sections"] = [problem.early(z3.BitVecVal(n, 64)) == z3.BoolVal(e)
                               for n, e in cex.early_sections.items()]
    return fixes


def _explain_check(problem: CellProblem, core: list[z3.BoolRef], rest: list[z3.BoolRef],
                   timeout_ms: int, rlimit: int | None) -> tuple[z3.CheckSatResult, bool]:
    """Decide ``core`` with the assumptions and the formulas of ``rest`` connected to it by
    shared symbols (directly or through each other); the answer, and whether a formula of
    ``rest`` was among them.  Exact when every formula left out holds in one model together
    (here: the counterexample's, which satisfies every assumption, the role's constraint
    and every fixed value): a part sharing no symbol with the rest cannot change whether
    it is satisfiable.  Each answer is kept in :data:`equiv.engine.query.ANSWERS`'
    ``explained`` table, keyed by the z3 budget and the AST ids of the assertions (kept
    alive with the answer)."""
    memo = _SYMBOLS.setdefault(problem, {})
    every = [a for _, a in problem.assumptions] + rest
    need: set[str] = set()
    for c in core:
        need |= _symbols(c, memo)
    kept = _sharing(need, [*_assumed_symbols(problem), *(_symbols(f, memo) for f in rest)])
    terms = [f for f, k in zip(every, kept, strict=True) if k] + core
    key = (-1 if rlimit is None else rlimit, *(t.get_id() for t in terms))
    hit = ANSWERS.explained.get(key)
    if hit is None:
        s = z3.Then("simplify", "propagate-values", "elim-uncnstr", "smt").solver()
        s.set("timeout", min(timeout_ms, _EXPLAIN_MS))
        if rlimit is not None:
            s.set("rlimit", rlimit)
        s.add(*terms)
        hit = ANSWERS.explained[key] = (s.check(), terms)
    return hit[0], any(kept[len(problem.assumptions):])


def _minimise_sliced(problem: CellProblem, ob: Observation, model: z3.ModelRef,
                     cex: Counterexample, timeout_ms: int, rlimit: int | None
                     ) -> Counterexample:
    """:func:`_minimise`, each query sliced and shared (:func:`_explain_check`).  The
    multiplicity query leaves out the inputs the assumptions alone pin to their value
    (``pgmap->type``): "that input differs" can never hold, so the query is the same."""
    fixes = _fixes(problem, ob, model, cex)
    same = _same_difference(ob, cex, problem.scenario.layout.atoms)
    irrelevant: list[str] = []
    pinned: set[str] = set()
    for name, own in fixes.items():
        if not own:
            continue
        rest = [ob.constraint, *(f for other, fs in fixes.items() if other != name for f in fs)]
        other_value = z3.Not(z3.And(*own))
        r, with_rest = _explain_check(problem, [other_value], rest, timeout_ms, rlimit)
        if r == z3.sat:  # some other value is allowed by the assumptions ...
            if _explain_check(problem, [other_value, z3.Not(same)], rest, timeout_ms,
                              rlimit)[0] == z3.unsat:  # ... and none changes the difference
                irrelevant.append(name)
        elif r == z3.unsat and not with_rest:  # the assumptions alone pin it
            pinned.add(name)
    others = [f for name, fs in fixes.items()
              if (name in cex.inputs and name not in pinned) or name == "page" for f in fs]
    r, _ = _explain_check(problem, [z3.Not(ob.claim(problem.scenario.layout.atoms)),
                                    z3.Not(z3.And(*others))], [ob.constraint], timeout_ms,
                          rlimit)
    multiplicity = "one of many" if r == z3.sat else "unique" if r == z3.unsat else "unknown"
    return evolve(cex, irrelevant=tuple(irrelevant), multiplicity=multiplicity)

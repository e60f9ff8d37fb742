"""Choosing which counterexample a refuted obligation shows, and explaining it.

Note: not trusted code.  The verdicts are decided in :mod:`equiv.zone_device.check`
(vacuity, loop lemmas, page roles, :func:`~equiv.zone_device.check.decide`); nothing here
decides one.

What it may do: given a query already decided SAT, steer its model towards small, readable
inputs (few compounds, no altmap, small pfn and index: :func:`prefer_small`, :func:`prefer`,
:func:`steer_sliced`); given a replayed counterexample, say which of its inputs do not
matter and whether it is the only one (:func:`minimise`).

Why it can never turn a verdict: it runs only once a query is SAT, so the obligation it
serves is not PROVED (nor VACUOUS) whatever it does.  A preference is kept only while the
query stays SAT with it, and the model it hands back is a model of that query (a sliced
one is checked against every assumption, else the query is decided whole), which the
caller replays concretely through both paths before it reports a difference.  Explaining
adds only ``irrelevant`` and ``multiplicity`` to a counterexample; an undecided query
marks nothing.  (Where a loop lemma is not proved and the replay of a model shows no
difference, the obligation is UNKNOWN: which model is replayed then chooses between two
failures, never a success.)
"""

from __future__ import annotations

from collections.abc import Sequence

import z3
from attrs import evolve

from equiv.engine.query import ANSWERS
from equiv.page_model import KEY_BITS, PB_BITS, Atom
from equiv.zone_device.counterexample import Counterexample
from equiv.zone_device.obligations import CellProblem, Observation
from equiv.zone_device.solver import connected, slice_assumptions, solver_for


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
    return prefer(s, problem, ob.optimised, idx, from_scratch=from_scratch, budget=budget,
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


def prefer(s: z3.Solver, problem: CellProblem, optimised: z3.BoolRef | bool,
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
    :func:`steer_sliced`)."""
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
    """The preferences of :func:`prefer`, in the order they are tried."""
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


def steer_sliced(problem: CellProblem, ob: Observation, claim: z3.BoolRef, timeout_ms: int,
                 rlimit: int | None, budget: tuple[int, int | None] | None
                 ) -> z3.ModelRef | None:
    """:func:`prefer_small` on a sliced query, shared between cells: the model of the whole
    query (every assumption, ``not claim``) with the preferences kept, or None when that is
    not SAT within ``rlimit`` (the caller then steers the whole query as before).

    Which preferences are kept is decided greedily, in :func:`prefer_small`'s order and
    runs, on the solver of the assumptions connected to the claim *or to a preference*
    (:func:`~equiv.zone_device.solver.solver_for`'s ``about``), each check memoised
    (``steered`` of :data:`equiv.engine.query.ANSWERS`, keyed by the z3 budget and the AST
    ids of the assertions, which are kept alive with the answer: each pgmap type's cell
    steers the same sliced query, the pageblock role, a refcount every type shares, through
    the same checks, decided once).  The assumptions left out share no symbol with that
    query and are satisfiable on their own (:func:`equiv.zone_device.check.decide`), so
    each check has the answer it has on the whole query (a check cut short by
    ``budget[0]`` aside: one the smaller query decides keeps its preference), and the kept
    ones are the ones the whole query's steering keeps.  The model is the steered sliced
    query's (``models`` of the same, keyed like ``steered`` with the full budget), extended
    by a model of the assumptions left out (and checked against every assumption and the
    query): cells whose sliced query is the same (the pageblock role of every pgmap type)
    get the same counterexample, up to the inputs only those assumptions mention
    (``pgmap->type``), and :func:`minimise` can share its queries."""
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
    aside = slice_assumptions(problem, z3.And(claim, *prefs))[1]
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


def minimise(problem: CellProblem, ob: Observation, model: z3.ModelRef, cex: Counterexample,
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
    ``pgmap->type``, see :func:`steer_sliced`) then ask the same queries.
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
    every = [a for _, a in problem.assumptions] + rest
    kept = connected(problem, core, rest)
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
    """:func:`minimise`, each query sliced and shared (:func:`_explain_check`).  The
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

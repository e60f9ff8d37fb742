"""Checking a cell: verdicts, vacuity, localisation, counterexamples.  Returns data only.

Order of work for one cell (fresh solver, fixed order, per-query timeout), one function
each, sharing the cell's session and the obligations decided so far (:class:`_Run`):

1. **Vacuity** (:func:`_vacuity`).  The assumptions, together with every role constraint,
   must be satisfiable; otherwise every obligation is VACUOUS (a failure, never a success).
2. **Loop lemmas** (:func:`_lemmas`).  All lemmas at once; if that is not UNSAT, one query
   per loop and kind (frame-write, frame-read, frame-bound, carry-step).  A
   refuted frame-write lemma is replayed: the iteration's out-of-frame write that leaves a
   struct page different is REFUTED with that page (which loop, which iteration, which pfn
   and whose memmap it is); otherwise UNKNOWN.
3. **Page roles** (:func:`_roles`).  One query per role, the roles a seeded bug is expected
   on first (``first_roles``); a role proved by a proof covering this cell is taken as it
   is.  A SAT role is steered towards small, readable inputs (few compounds, no altmap,
   small pfn and index: :mod:`equiv.zone_device.minimise`, which chooses the counterexample
   and never the verdict), then replayed concretely
   (:func:`equiv.zone_device.counterexample.replay`) before it is reported.

A role is PROVED only if its query is UNSAT *and* every lemma is PROVED; a role whose query
is UNSAT while some lemma is not proved is UNKNOWN (the loop summary is unjustified).  A
replayed counterexample is REFUTED whatever the lemmas say, because the replay runs the real
loops.  UNKNOWN (timeouts included) is never success.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import z3
from attrs import Factory, define, evolve, frozen

from equiv.engine.cache import Cache
from equiv.engine.errors import InternalMismatch
from equiv.engine.query import ANSWERS, Session, check, conj, dump_unknown
from equiv.engine.results import CellResult, ObligationResult
from equiv.engine.verdict import Verdict, worst
from equiv.loops import Lemma
from equiv.memmap import geometry, key_compound, key_slot
from equiv.slow_path import compound_nr_pages
from equiv.zone_device.counterexample import Counterexample, replay, replay_frame
from equiv.zone_device.minimise import minimise, prefer, prefer_small, steer_sliced
from equiv.zone_device.obligations import CellProblem, Observation
from equiv.zone_device.solver import solver_for, whole_of


@frozen(kw_only=True, eq=False)
class CheckRequest:
    """What :func:`check_cell` is asked: one cell, and how its queries are decided."""

    #: the cell (see :func:`equiv.zone_device.obligations.build_cell`)
    problem: CellProblem
    #: wall-clock limit per solver query; on expiry the obligation is UNKNOWN
    timeout_ms: int = 60_000
    #: z3 resource limit per query (deterministic across machines), or None
    rlimit: int | None = None
    #: who decides each query: z3, cvc5, bitwuzla, or all (all must agree)
    solver: str = "z3"
    #: directory to write every query to as SMT-LIB 2, or None
    dump_smt: str | None = None
    #: check only this page obligation (e.g. ``tail1_equal``) and the loop lemmas
    only: str | None = None
    #: for each counterexample, find which inputs do not matter and whether it is the only
    #: one (:func:`equiv.zone_device.minimise.minimise`); the self-test skips this
    minimise: bool = True
    #: the on-disk result cache: decided queries are looked up and stored by the hash of
    #: their SMT-LIB text (:mod:`equiv.engine.cache`), or None
    cache: Cache | None = None
    #: stop at the first query that does not prove its obligation, with an UNKNOWN
    #: obligation ``probe`` saying so (no counterexample is looked for): the all-types try
    #: of :func:`equiv.zone_device.cell.run_group`, whose result is used only when it
    #: proves everything
    probe: bool = False
    #: z3 resource budget of the tries whose failure costs only time or readability: the
    #: first tries at the loop lemmas (all at once, then per loop and kind; a lemma not
    #: proved within it is proved conjunct by conjunct under ``rlimit``
    #: (:func:`_lemma_conjuncts`), and if one of those is not UNSAT, whole under
    #: ``rlimit``), each preference steering a counterexample and each query explaining
    #: one.  None: every query gets ``rlimit``.  Either way a lemma is PROVED exactly when
    #: a query within ``rlimit`` shows it valid, and a verdict never depends on it.
    lemma_try: int | None = None
    #: pose each lemma and role query with only the assumptions that share a symbol with
    #: it (:func:`~equiv.zone_device.solver.solver_for`'s ``about``, :func:`decide`): the
    #: cells of one order then pose the same type-independent queries, decided once.  Off
    #: by default: walking the terms costs about 10 % of the default matrix, whose
    #: all-types try usually proves every type at once.
    sliced: bool = False
    #: stop once an obligation's result satisfies it (the self-test's "this seeded bug is
    #: caught, with the field it must name": the obligations after it could not change
    #: that).  The result lists the obligations decided so far.
    enough: Callable[[ObligationResult], bool] | None = None
    #: obligations already PROVED by a proof whose inputs cover this cell's
    #: (:func:`equiv.zone_device.cell.run_group`'s try with the type, or the order,
    #: symbolic: the same claim under weaker assumptions): when they name every loop lemma
    #: of this cell, those lemmas and the page roles among them (each shown not vacuous in
    #: this cell first) are taken instead of being posed again
    lemmas_from: Sequence[ObligationResult] | None = None
    #: the first try at the loop lemmas is two queries, the slow path's lemmas
    #: (:attr:`~equiv.zone_device.obligations.CellProblem.slow_lemmas`: the same query for
    #: every revision of the scenario, decided once per process) and then the fast path's;
    #: the self-test's mutants share the first.  Off: one query, which is cheaper for a
    #: cell whose scenario is checked once.
    split_lemmas: bool = False
    #: the page roles checked before the others (the rest in their order): with
    #: ``enough``, the roles where the seeded bug is expected to show
    #: (:func:`equiv.zone_device.mutants.first_roles`), so fewer roles are proved before
    #: the one that catches it.  Which obligations are decided before ``enough`` stops
    #: changes; what is decided does not.
    first_roles: Sequence[str] = ()


def check_cell(req: CheckRequest) -> CellResult:
    """Decide every obligation of ``req.problem``, step by step (the module's docstring):
    :func:`_vacuity`, then (for an order class) :func:`order_not_covered`, :func:`_lemmas`
    and :func:`_roles`."""
    run = _Run.start(req)
    problem = run.problem
    s = solver_for(problem, req.timeout_ms, rlimit=req.rlimit)
    vacuous = _vacuity(run, s)
    if len(vacuous) == len(problem.observations):
        return run.finish()
    if req.probe and vacuous:
        return run.stopped("a role's vacuity check")
    if problem.scenario.is_class:
        # one proof for an order class stands for each order's: each order must pass the
        # vacuity and reach checks above on its own
        assert req.probe, "an order class is only ever a probe (equiv.zone_device.cell.run_group)"
        k = order_not_covered(run.ses, s, problem)
        if k is not None:
            return run.stopped(f"order {k}'s vacuity or reach check")
    lemmas = _lemmas(run)
    if isinstance(lemmas, CellResult):
        return lemmas
    return _roles(run, vacuous, lemmas)


@define
class _Run:
    """What the steps of one :func:`check_cell` share: the request, the cell's problem
    (only the obligation asked for, with ``only``), the session its queries are decided in,
    and the obligations decided so far, in order."""

    req: CheckRequest
    problem: CellProblem
    ses: Session
    #: the cell's name in the files of undecided queries
    tag: str
    started: float
    results: list[ObligationResult] = Factory(list)

    @classmethod
    def start(cls, req: CheckRequest) -> _Run:
        """A new cell's run: its problem filtered by ``only``, its clock and session."""
        problem = req.problem
        if req.only is not None:
            problem = evolve(problem, observations=[ob for ob in problem.observations
                                                    if f"{ob.role.name}_equal" == req.only])
        sc, rev = problem.scenario, problem.revision
        started = time.perf_counter()
        tag = f"{sc.ptype.name if sc.ptype else 'ALL'}-o{sc.order_label}"
        ses = Session(mode=req.solver, budget=-1 if req.rlimit is None else req.rlimit,
                      timeout_ms=req.timeout_ms, dump_dir=req.dump_smt,
                      dump_prefix=f"{sc.layout.config.name}-{rev.name}-{tag}", cache=req.cache)
        return cls(req=req, problem=problem, ses=ses, tag=tag, started=started)

    def enough(self) -> bool:
        """Does the obligation decided last end the cell (the request's ``enough``)?"""
        return self.req.enough is not None and self.req.enough(self.results[-1])

    def finish(self) -> CellResult:
        """The cell's result: the obligations decided so far, the worst verdict among them."""
        sc, rev, ses = self.problem.scenario, self.problem.revision, self.ses
        return CellResult(
            config=sc.layout.config.name, revision=rev.name, ptype=sc.ptype.kname if sc.ptype else "ALL",
            order=sc.orders[0],
            verdict=worst([r.verdict for r in self.results]),
            seconds=time.perf_counter() - self.started, obligations=tuple(self.results),
            assumptions=tuple(n for n, _ in self.problem.assumptions), choices=rev.assumptions,
            hypothetical=sc.layout.config.hypothetical, shared_queries=ses.shared,
            query_keys=tuple(dict.fromkeys(ses.keys)), decided=ses.undecided == 0)

    def stopped(self, what: str) -> CellResult:
        """A probe's result once ``what`` is not proved: an UNKNOWN obligation ``probe``."""
        self.results.append(ObligationResult(
            name="probe", kind="cell", role="cell", verdict=Verdict.UNKNOWN, seconds=0.0,
            reason=f"probe stopped: {what} not proved (the cell is checked per type)"))
        return self.finish()


@frozen(kw_only=True)
class _Lemmas:
    """What the loop lemmas leave to the page roles."""

    #: every loop lemma is PROVED: a role whose query is UNSAT is then PROVED, and a
    #: counterexample is replayed lazily
    proved: bool
    #: the lemmas taken from a proof covering this cell (:func:`_reused_lemmas`), or none
    reused: tuple[ObligationResult, ...]


def _vacuity(run: _Run, s: z3.Solver) -> dict[str, str]:
    """Step 1: each role's constraint under the assumptions (on ``s``, the solver of the
    assumptions), then each path's reach condition (unless every role is already vacuous).
    The roles found VACUOUS (or UNKNOWN: the check undecided), each with why; their
    obligations are added to the run."""
    problem, ses = run.problem, run.ses
    vacuous: dict[str, str] = {}
    for ob in problem.observations:
        t0 = time.perf_counter()
        r = check(ses, s, ob.constraint, keep_sat=True, name=f"vacuity-{ob.role.name}")
        if r != z3.sat:
            vacuous[ob.role.name] = ("assumptions and role constraint unsatisfiable" if r == z3.unsat
                                     else f"vacuity check: {ses.note or s.reason_unknown()}; "
                                     f"query: {dump_unknown(s, run.tag, ob.constraint)}")
            run.results.append(ObligationResult(
                name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                verdict=Verdict.VACUOUS if r == z3.unsat else Verdict.UNKNOWN,
                seconds=time.perf_counter() - t0, reason=vacuous[ob.role.name]))
    if len(vacuous) == len(problem.observations):
        return vacuous
    # ... and each path must run to its end for some input allowed by the assumptions
    for path, cond in problem.reach.items():
        r = check(ses, s, cond, keep_sat=True, name=f"reach-{path}")
        if r != z3.sat:
            why = (f"the {path} path never reaches its end under the assumptions (it always "
                   "returns early)" if r == z3.unsat else f"reach check: {ses.note or s.reason_unknown()}; "
                   f"query: {dump_unknown(s, run.tag, cond)}")
            for ob in problem.observations:
                if ob.role.name not in vacuous:
                    vacuous[ob.role.name] = why
                    run.results.append(ObligationResult(
                        name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                        verdict=Verdict.VACUOUS if r == z3.unsat else Verdict.UNKNOWN,
                        seconds=0.0, reason=why))
    return vacuous


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


def _lemmas(run: _Run) -> _Lemmas | CellResult:
    """Step 2: the loop lemmas, all at once (:func:`_lemmas_at_once`), then (if that is not
    UNSAT) one query per loop and kind (:func:`_lemma`); with ``lemma_try``, those two
    under that smaller budget, then conjunct by conjunct.  Lemmas proved by a proof that
    covers this cell (every type of the order, every order of a class) are taken as they
    are, not posed again.  What the roles need to know, or the cell's result when it ends
    here (a probe, or ``enough``)."""
    req, problem = run.req, run.problem
    reused = _reused_lemmas(problem, req.lemmas_from)
    run.results.extend(reused)
    lemmas = [] if reused else problem.lemmas
    names = [f"{lm.loop}:{lm.kind}" for lm in lemmas]
    try_rl = _lemma_budget(req)
    t0 = time.perf_counter()
    r = _lemmas_at_once(run, lemmas, try_rl)
    dt = time.perf_counter() - t0
    if req.probe and r != z3.unsat and try_rl == req.rlimit:  # (a trial's failure is no verdict)
        return run.stopped("the loop lemmas")
    if r == z3.unsat:
        run.results.extend(ObligationResult(name=n, kind="lemma", role="lemma",
                                            verdict=Verdict.PROVED, seconds=dt)
                           for n in dict.fromkeys(names))
        return _Lemmas(proved=True, reused=tuple(reused))
    proved = True
    for n in dict.fromkeys(names):
        members = [lm for lm, m in zip(lemmas, names, strict=True) if m == n]
        t0 = time.perf_counter()
        r1, s = _lemma(run, members, n, try_rl)
        if r1 == z3.unsat:
            run.results.append(ObligationResult(name=n, kind="lemma", role="lemma",
                                                verdict=Verdict.PROVED,
                                                seconds=time.perf_counter() - t0))
            continue
        proved = False
        if req.probe:  # (a probe looks for no counterexample)
            return run.stopped("the loop lemmas")
        if r1 == z3.sat:
            run.results.append(_refuted_lemma(problem, s, members, n, t0, run.ses))
            if run.enough():
                return run.finish()
        else:
            run.results.append(ObligationResult(
                name=n, kind="lemma", role="lemma", verdict=Verdict.UNKNOWN,
                seconds=time.perf_counter() - t0,
                reason=f"{run.ses.note or s.reason_unknown()}; query: {dump_unknown(s, run.tag)}"))
    return _Lemmas(proved=proved, reused=tuple(reused))


def _lemma_budget(req: CheckRequest) -> int | None:
    """The budget of the first tries at the loop lemmas (the request's ``lemma_try``)."""
    if req.lemma_try is None or req.solver != "z3":
        return req.rlimit
    return req.lemma_try if req.rlimit is None else min(req.lemma_try, req.rlimit)


def _lemmas_at_once(run: _Run, lemmas: list[Lemma], try_rl: int | None) -> z3.CheckSatResult:
    """Every lemma of ``lemmas`` in one query under ``try_rl`` (with ``split_lemmas``, the
    slow path's in one and then the fast path's in another); UNSAT if each query is."""
    req, problem = run.req, run.problem
    ns = problem.slow_lemmas
    parts = [lemmas[:ns], lemmas[ns:]] if req.split_lemmas and 0 < ns < len(lemmas) else [lemmas]
    r = z3.unsat
    for part, what in zip(parts, ("lemmas", "lemmas-fast")[:len(parts)], strict=True):
        every = conj([lm.formula for lm in part])
        s = solver_for(problem, req.timeout_ms, rlimit=try_rl, about=every if req.sliced else None)
        s.add(z3.Not(every))
        r, s = decide(run.ses, s, what, whole=not req.probe, budget=try_rl,
                      trial=try_rl != req.rlimit) if part else (z3.unsat, s)
        if r != z3.unsat:
            break
    return r


def _lemma(run: _Run, members: list[Lemma], name: str, try_rl: int | None
           ) -> tuple[z3.CheckSatResult, z3.Solver]:
    """The lemmas of one loop and kind (``members``, named ``name``) under ``try_rl``; if
    that is a trial and it is not UNSAT, conjunct by conjunct under ``rlimit``
    (:func:`_lemma_conjuncts`), and if one of those is not UNSAT, whole under ``rlimit``.
    The answer, and the solver that gave it (its model when SAT)."""
    req, problem, ses = run.req, run.problem, run.ses
    these = conj([lm.formula for lm in members])
    s = solver_for(problem, req.timeout_ms, rlimit=try_rl, about=these if req.sliced else None)
    s.add(z3.Not(these))
    r1, s = decide(ses, s, f"lemma-{name}", budget=try_rl, trial=try_rl != req.rlimit)
    if r1 != z3.unsat and try_rl != req.rlimit:
        if _lemma_conjuncts(problem, members, ses, req.timeout_ms, req.rlimit, name):
            r1 = z3.unsat
        else:  # a conjunct is not proved: the whole lemma under the full budget
            s = solver_for(problem, req.timeout_ms, rlimit=req.rlimit,
                           about=these if req.sliced else None)
            s.add(z3.Not(these))
            r1, s = decide(ses, s, f"lemma-{name}", budget=req.rlimit)
    return r1, s


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
            pushed = prefer(s, problem, opt, ks)
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


def _roles(run: _Run, vacuous: dict[str, str], lemmas: _Lemmas) -> CellResult:
    """Step 3: each page role not ``vacuous``, the request's ``first_roles`` first: taken
    from a proof covering this cell when the lemmas were (:attr:`_Lemmas.reused`), else
    decided (:func:`_role`).  The cell's result."""
    req, problem = run.req, run.problem
    coverage = ("assumptions satisfiable together with the role's constraint",
                *(f"{p} path reaches its end" for p in problem.reach))
    claims = [ob.claim(problem.scenario.layout.atoms) for ob in problem.observations]
    covered = {o.name: o for o in req.lemmas_from or () if o.kind == "page"
               and o.verdict is Verdict.PROVED} if lemmas.reused else {}
    pairs = sorted(zip(problem.observations, claims, strict=True),
                   key=lambda p: p[0].role.name not in req.first_roles)  # stable
    for ob, claim in pairs:
        if ob.role.name in vacuous:
            continue
        done_by = covered.get(f"{ob.role.name}_equal")
        if done_by is not None:  # proved for inputs covering this cell's (not vacuous here)
            run.results.append(evolve(done_by, seconds=0.0, coverage=coverage,
                                      reason=done_by.reason or lemmas.reused[0].reason))
            if run.enough():
                return run.finish()
            continue
        got = _role(run, ob, claim, lemmas.proved, coverage)
        if got is None:
            return run.stopped(f"role {ob.role.name}")
        run.results.append(got)
        if got.verdict is Verdict.REFUTED and run.enough():
            return run.finish()
    return run.finish()


def _role(run: _Run, ob: Observation, claim: z3.BoolRef, lemma_ok: bool,
          coverage: tuple[str, ...]) -> ObligationResult | None:
    """One page role's query (``not claim`` under the assumptions); a SAT one steered
    (:mod:`equiv.zone_device.minimise`) and replayed (:func:`_replayed`).  None when the
    query does not prove the role and the cell is a probe (which looks for no
    counterexample)."""
    req, problem, ses = run.req, run.problem, run.ses
    s = solver_for(problem, req.timeout_ms, pages=True, rlimit=req.rlimit,
                   about=claim if req.sliced else None)
    s.add(z3.Not(claim))
    t0 = time.perf_counter()
    # sliced (and z3 alone): a SAT sliced query is steered sliced, and only the steered
    # whole query is decided (:func:`~equiv.zone_device.minimise.steer_sliced`); else
    # whole, then steered
    shared = req.sliced and req.solver == "z3" and not req.probe
    r1, s = decide(ses, s, f"role-{ob.role.name}", whole=not req.probe and not shared,
                   budget=req.rlimit)
    if req.probe and r1 != z3.unsat:
        return None
    steer = None if req.lemma_try is None else (req.lemma_try, req.rlimit)
    model = None
    if r1 == z3.sat and shared:
        model = steer_sliced(problem, ob, claim, req.timeout_ms, req.rlimit, steer)
        if model is None:  # not SAT with the preferences within rlimit: as before
            s = solver_for(problem, req.timeout_ms, pages=True, rlimit=req.rlimit)
            s.add(z3.Not(claim))
            r1 = check(ses, s, name=f"role-{ob.role.name}")
    if r1 == z3.unsat:
        return _unsat_result(ob, time.perf_counter() - t0, lemma_ok, coverage)
    if r1 != z3.sat:
        return ObligationResult(
            name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
            verdict=Verdict.UNKNOWN, seconds=time.perf_counter() - t0,
            reason=f"{ses.note or s.reason_unknown()}; query: {dump_unknown(s, run.tag)}")
    if model is None:
        pushed = prefer_small(s, problem, ob, from_scratch=True, budget=steer)
        model = s.model()
        for _ in range(pushed):
            s.pop()
    return _replayed(run, ob, model, lemma_ok, shared, t0)


def _replayed(run: _Run, ob: Observation, model: z3.ModelRef, lemma_ok: bool, shared: bool,
              t0: float) -> ObligationResult:
    """A SAT role's model replayed concretely through both paths
    (:func:`~equiv.zone_device.counterexample.replay`): REFUTED with the counterexample
    (explained with the request's ``minimise``), or UNKNOWN when the replay shows no
    difference and a loop lemma is not proved (with every lemma proved, that is an
    internal error and raises)."""
    req, problem = run.req, run.problem
    try:
        # lazily (only the iterations the observation needs) when every loop
        # lemma is proved: the lemmas make that the memory of the real loops
        cex = replay(problem, ob, model, lazy=lemma_ok)
        if req.minimise:
            cex = minimise(problem, ob, model, cex, req.timeout_ms,
                           req.rlimit if req.lemma_try is None else req.lemma_try, sliced=shared)
    except InternalMismatch as e:
        if lemma_ok:
            raise
        return ObligationResult(
            name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
            verdict=Verdict.UNKNOWN, seconds=time.perf_counter() - t0,
            reason=f"solver difference not reproduced concretely ({e}); a loop lemma "
                   "failed, so the symbolic summary is not trusted")
    return ObligationResult(name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                            verdict=Verdict.REFUTED, seconds=time.perf_counter() - t0,
                            counterexample=cex)


def _unsat_result(ob: Observation, dt: float, lemma_ok: bool,
                  coverage: tuple[str, ...] = ()) -> ObligationResult:
    if lemma_ok:
        return ObligationResult(name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                                verdict=Verdict.PROVED, seconds=dt, coverage=coverage)
    return ObligationResult(name=f"{ob.role.name}_equal", kind="page", role=ob.role.name,
                            verdict=Verdict.UNKNOWN, seconds=dt,
                            reason="no difference under the loop summaries, but a loop lemma "
                                   "is not proved")


def decide(ses: Session, s: z3.Solver, name: str, *, whole: bool = True,
           budget: int | None = None, trial: bool = False) -> tuple[z3.CheckSatResult, z3.Solver]:
    """:func:`~equiv.engine.query.check` for a solver of
    :func:`~equiv.zone_device.solver.solver_for`.

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
    built = whole_of(s)
    if r != z3.sat or built is None or not whole:
        return r, s
    nkept, build = built
    full = build()
    full.add(*s.assertions()[nkept:])  # the query's own assertions
    return check(ses, full, name=name), full

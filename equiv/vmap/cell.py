"""Checking one cell of the page-table subject: (path, bound, revision[, seeded bug]).

Order of work (fresh queries, fixed order, a time limit per query):

1. **Vacuity.**  The preconditions (P1-P4 and the input shape) together with the local
   model's facts must be satisfiable for some page; otherwise every obligation is VACUOUS.
2. **Lemmas** (:mod:`equiv.vmap.lemmas`) that justify the local model's facts.
3. **Obligations** (:mod:`equiv.vmap.obligations`), each one query of the local model
   (:mod:`equiv.vmap.local`) with the observed page symbolic:

   * UNSAT, every lemma proved: PROVED.
   * SAT: the model's inputs are replayed on the concrete twin; if the twin shows the
     violation, REFUTED with that counterexample.  The local model over-approximates, so a
     candidate may not reproduce (with bound ``ANY`` the model fixes ``pages[]`` only at the
     indices it reads: the local model with :data:`SMALL_BOUND` segments proposes
     candidates next, every page fixed): then the exact model (:mod:`equiv.vmap.paths`, loops
     unrolled, no free variables) searches for a counterexample with at most
     :data:`EXACT_BOUND` segments; what it finds is replayed too.  An exact-model answer that
     does not reproduce is an internal error (:class:`~equiv.engine.errors.InternalMismatch`).
   * UNSAT with a lemma not proved: the lemma's own counterexample and the exact model are
     tried as above; if neither gives a replayed counterexample, UNKNOWN.
   * Undecided (time limit): UNKNOWN, the query written to an ``.smt2`` file.

A counterexample is never reported unless the twin reproduced it; UNKNOWN is never success.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import z3
from attrs import evolve

from equiv.engine import bv
from equiv.engine.bv import Cond
from equiv.engine.errors import InputError, InternalMismatch
from equiv.engine.query import SAT, UNKNOWN, UNSAT, Query, default_backend, unknown_file
from equiv.engine.results import CellResult, ObligationResult
from equiv.engine.verdict import Verdict, worst
from equiv.vmap import local, paths
from equiv.vmap.arch import IDX_BITS
from equiv.vmap.counterexample import (
    PAGE_KERNEL,
    Replay,
    VmapCounterexample,
    build,
    read_case,
    read_points,
    replay,
    simplify,
)
from equiv.vmap.inputs import (
    ANY,
    MAX_SEGMENTS,
    PATHS,
    ConcreteCase,
    RunArray,
    VmapInputs,
    assumptions,
    symbolic_inputs,
)
from equiv.vmap.lemmas import Lemma, depends, lemmas, runs
from equiv.vmap.obligations import OBLIGATIONS, claim, for_path
from equiv.vmap.revisions import COMMON_CHOICES, TRYLOCKS, Revision, revision

CONFIG = "arm64-4k"
#: extra named assumptions over the cell's symbolic inputs (tests: a contradiction -> VACUOUS)
Extra = Callable[[VmapInputs], list[tuple[str, Cond]]]
#: the exact (unrolled) model searches counterexamples with at most this many segments
EXACT_BOUND = 2
#: a cell of any number of segments also takes candidates from the local model with this
#: many segments (vmap's M5 needs 3)
SMALL_BOUND = 3


#: the UNSAT answers of this process, by backend, budget and the z3 terms asserted (z3
#: hash-conses terms: the same term built again has the same id while the first is alive,
#: so the terms are kept): the cells of a self-test share most of their queries (a seeded
#: bug edits one function of one path), so a query decided UNSAT once is not decided again.
#: Only UNSAT is kept (a SAT answer's model is read afterwards); the same query with the
#: same budget gets the same answer, so no verdict depends on the order of the cells.
_UNSAT: dict[tuple[object, ...], list[z3.BoolRef]] = {}


def _assertions(conds: list[tuple[str, Cond]]) -> list[z3.BoolRef]:
    return [c if isinstance(c, z3.BoolRef) else z3.BoolVal(bool(c)) for _, c in conds]


def _conj(c: Cond) -> z3.BoolRef:
    return c if isinstance(c, z3.BoolRef) else z3.BoolVal(bool(c))


def _dump(q: Query, tag: str) -> str:
    """Write an undecided query to a file (:func:`equiv.engine.query.unknown_file`); its path."""
    return unknown_file(f"vmap-{tag}", q.smt2())


class _Cell:
    """The state of one cell's check (queries share the inputs and observations)."""

    def __init__(
        self,
        path: str,
        bound: int,
        rev: Revision,
        mutant: str | None,
        timeout_ms: int,
        rlimit: int | None,
        extra: Extra | None = None,
        solver: str | None = None,
    ) -> None:
        self.path, self.bound, self.rev, self.mutant = path, bound, rev, mutant
        self.timeout_ms, self.rlimit = timeout_ms, rlimit
        self.backend = solver or default_backend(rlimit)
        self.inp = symbolic_inputs(path, bound)
        self.pre = assumptions(self.inp) + (extra(self.inp) if extra is not None else [])
        self.v = z3.BitVec("obs.page", IDX_BITS)
        self.slow, self.fast = local.observe(path, self.inp, rev, self.v)
        self.facts = _conj(bv.and_(self.slow.facts, self.fast.facts))
        self.base = [*_assertions(self.pre), z3.ULT(self.v, self.inp.count), self.facts]
        #: the run facts (lemma batch_runs), assumed only by the obligations resting on it
        self.run_facts = _conj(bv.and_(self.slow.run_facts, self.fast.run_facts))
        self.contig_facts = _conj(bv.and_(self.slow.contig_facts, self.fast.contig_facts))
        #: violations found by replaying lemma counterexamples: obligation -> replay
        self.lemma_witness: dict[str, Replay] = {}

    def query(
        self,
        extra: list[z3.BoolRef],
        base: list[z3.BoolRef] | None = None,
        inp: VmapInputs | None = None,
        also: list[z3.ExprRef] | None = None,
        timeout_ms: int | None = None,
    ) -> Query:
        inp = inp or self.inp
        o = inp.oracles
        mention = [
            inp.a,
            inp.prot,
            inp.shift,
            inp.count,
            self.v,
            o.pgd_table(z3.BitVecVal(0, 9)),
            o.pud_table(z3.BitVecVal(0, 18)),
            o.pmd_table(z3.BitVecVal(0, 27)),
            o.trylock_pud(z3.BitVecVal(0, 18)),
            o.trylock_pmd(z3.BitVecVal(0, 27)),
            o.ffs0(z3.BitVecVal(0, 32)),
        ]
        pg = inp.pages
        if isinstance(pg, RunArray):
            mention += pg.mention()
        else:
            terms = (*pg.active, *pg.base, *(pg.order or pg.length))
            mention += [t for t in terms if isinstance(t, z3.ExprRef)]
        q = Query(
            [*(self.base if base is None else base), *extra],
            timeout_ms=timeout_ms or self.timeout_ms,
            backend=self.backend,
            rlimit=self.rlimit,
            mention=mention + (also or []),
        )
        key = (self.backend, q.timeout_ms, self.rlimit, *(t.get_id() for t in q.assertions))
        if key in _UNSAT:
            q.result = UNSAT
            return q
        q.check()
        if q.result == UNSAT:
            _UNSAT[key] = q.assertions  # kept alive: z3 reuses the id of a freed term
        return q

    # ---- steering a model to readable inputs -----------------------------------------
    def prefer_small(self, q: Query, inp: VmapInputs, free: dict[str, z3.ExprRef]) -> None:
        pg = inp.pages
        prefs: list[z3.BoolRef] = []
        # the local model's step and walk as real ones: the first step of v's slot, the
        # first walk
        for name, t in free.items():
            if name.endswith("fast.walk.lo") or name == "obs.step":
                prefs.append(t == 0)
            elif name.startswith("hint."):
                prefs.append(t)
        if isinstance(pg, RunArray):
            # a short array (read page by page) with small pfns where the query reads it
            prefs += [z3.ULT(pg.count, 256)]
            if pg.path == "vmap":
                prefs += [z3.ULT(pg.off_fn(t), 1 << 20) for t in read_points(q, pg)]
        else:
            for j in range(pg.nseg - 1, 0, -1):  # few segments
                if isinstance(pg.active[j], z3.BoolRef):
                    prefs.append(z3.Not(pg.active[j]))
            if pg.order is not None and inp.path == "vmap":
                prefs += [z3.ULE(k, 5) for k in pg.order if isinstance(k, z3.ExprRef)]
            prefs += [z3.ULT(b, 1 << 20) for b in pg.base if isinstance(b, z3.ExprRef)]
            prefs += [z3.ULT(b, 1 << 16) for b in pg.base if isinstance(b, z3.ExprRef)]
        # a page of arm64's vmalloc area (VMALLOC_START = 0xffff800080000000 with VA_BITS=48)
        va_lo = 0xFFFF800080000000 >> 12 & ((1 << 36) - 1)
        prefs += [
            z3.ULT(pg.count, 4096),
            z3.ULT(pg.count, 1024),
            z3.And(z3.UGE(inp.a, va_lo), z3.ULT(inp.a, va_lo + (1 << 24))),
            inp.prot == PAGE_KERNEL,
            z3.ULT(self.v, 64),
        ]
        o = inp.oracles
        vv = inp.a + z3.ZeroExt(4, self.v)
        prefs += [
            z3.Not(o.pgd_table(z3.Extract(35, 27, vv))),
            z3.Not(o.pud_table(z3.Extract(35, 18, vv))),
            z3.Not(o.pmd_table(z3.Extract(35, 9, vv))),
        ]
        for p in prefs:
            q.prefer(p)

    # ---- obligations -------------------------------------------------------------------
    def local_claim(self, name: str) -> tuple[z3.BoolRef, dict[str, z3.ExprRef]]:
        """The negated local claim of obligation ``name`` and the free variables to steer."""
        free = {**self.slow.free, **self.fast.free}
        if name == "ub_ffs0":
            r = z3.BitVec("obs.step", IDX_BITS)
            ub = paths.get_vmap_batch_order(
                self.inp, self.rev, paths.batch_max_steps(self.rev, self.inp.count, r), r
            ).ub
            return z3.And(z3.ULT(r, self.inp.count), _conj(ub)), {"obs.step": r}
        if name == "flush_covers":
            # ioremap and vmalloc (both paths) and the slow vmap path flush
            # flush_cache_vmap(addr, end) by their code; the fast vmap path's flush range is
            # lemma batch_flush_covers (lemmas.EXTRA): no local query is left
            return z3.BoolVal(False), free
        return z3.Not(_conj(claim(name, self.path, self.inp, self.slow, self.fast, self.v))), free

    def exact(self, name: str) -> tuple[str, Replay | None, str]:
        """Search a counterexample of ``name`` with the exact model at bound
        min(bound, EXACT_BOUND); (answer, confirming replay, reason)."""
        b = min(self.bound, EXACT_BOUND)
        inp = symbolic_inputs(self.path, b)
        unroll = paths.Unroll.initial(self.path, b, self.rev)
        v = self.v
        base = [*_assertions(assumptions(inp)), z3.ULT(v, inp.count)]
        if name == "ub_ffs0":
            bt = paths.vmap_pages_range_batched(inp, self.rev, unroll)
            neg = z3.And(_conj(bt.ub), _conj(bt.ended))
        elif name == "flush_covers" and self.path != "vmap":
            neg = z3.BoolVal(False)  # flush_cache_vmap(addr, end) on both paths
        elif name == "flush_covers":
            bt = paths.vmap_pages_range_batched(inp, self.rev, unroll)
            # flush_cache_vmap(lo, hi) must cover [0, N) (positions)
            neg = z3.And(z3.Or(z3.Not(bt.flush_lo == 0), z3.ULT(bt.flush_hi, inp.count)), _conj(bt.ended))
        else:
            so, fo = paths.observe(self.path, inp, self.rev, v, unroll)
            neg = z3.And(
                z3.Not(_conj(claim(name, self.path, inp, so, fo, v))),
                _conj(bv.and_(so.unrolled, fo.unrolled, so.reached, fo.reached)),
            )
        q = self.query([neg], base=base, inp=inp)
        if q.result == UNKNOWN:
            return q.result, None, f"{q.reason}; query: {_dump(q, f'exact-{name}')}"
        if q.result != SAT:
            return q.result, None, q.reason
        self.prefer_small(q, inp, {})
        case = read_case(q, self.path, inp)
        if case is None:
            return UNKNOWN, None, "the exact model's counterexample is too long to replay"
        rp = replay(case, self.rev, name)
        if not rp.violations:
            raise InternalMismatch(
                f"vmap {self.path} {name}: the exact model's counterexample {case} does not reproduce on the "
                "concrete twin (the symbolic model and the twin disagree: a bug in equiv)"
            )
        return SAT, rp, ""

    def small_candidate(self, name: str) -> tuple[Replay, int] | None:
        """A candidate of ``name`` from the local model with :data:`SMALL_BOUND` segments,
        replayed (the replay and the page), or None."""
        sub = _Cell(self.path, SMALL_BOUND, self.rev, self.mutant, self.timeout_ms, self.rlimit, None,
                    self.backend)
        neg, free = sub.local_claim(name)
        for facts in (sub.run_facts, sub.contig_facts):
            q = sub.query([facts, neg])
            if q.result != SAT:
                continue
            sub.prefer_small(q, sub.inp, free)
            case = read_case(q, self.path, sub.inp)
            if case is not None:
                rp = replay(case, self.rev, name)
                if rp.violations:
                    return rp, int(q.value(sub.v))
        return None

    def run_lemma(self, lm: Lemma) -> ObligationResult:
        t0 = time.perf_counter()
        # the claim, or each of its parts in turn (the lemma is proved when every part is)
        for goal in lm.parts or (lm.claim,):
            q = self.query(
                [_conj(lm.premise), z3.Not(_conj(goal))],
                base=_assertions(self.pre),
                also=list(lm.free.values()),
            )
            if q.result != UNSAT:
                break
        dt = time.perf_counter() - t0
        if q.result == UNSAT:
            return ObligationResult(
                name=lm.name, kind="lemma", role="lemma", verdict=Verdict.PROVED, seconds=dt
            )
        if q.result == SAT:
            # a counterexample to the lemma: its inputs may show real violations
            frees = ", ".join(f"{k}={q.value(t):#x}" for k, t in lm.free.items())
            self.prefer_small(q, self.inp, {})
            case = read_case(q, self.path, self.inp)
            if case is not None:
                for ob in for_path(self.path):
                    rp = replay(case, self.rev, ob.name)
                    if rp.violations and ob.name not in self.lemma_witness:
                        self.lemma_witness[ob.name] = rp
            return ObligationResult(
                name=lm.name,
                kind="lemma",
                role="lemma",
                verdict=Verdict.UNKNOWN,
                seconds=dt,
                reason=f"lemma does not hold for this revision ({lm.description}; e.g. {frees}): the local "
                "facts resting on it are unjustified, so obligations are decided by replayed "
                "counterexamples only",
            )
        return ObligationResult(
            name=lm.name,
            kind="lemma",
            role="lemma",
            verdict=Verdict.UNKNOWN,
            seconds=dt,
            reason=f"{q.reason}; query: {_dump(q, lm.name)}",
        )

    def run_obligation(self, name: str, proved_lemmas: set[str]) -> ObligationResult:
        ob = OBLIGATIONS[name]
        t0 = time.perf_counter()
        neg, free = self.local_claim(name)
        deps = depends(name, self.path, self.rev, self.inp.unbounded)
        run_facts = [self.run_facts] if "batch_runs" in deps else []
        q = self.query([*run_facts, neg])

        def refuted(rp: Replay, found_by: str, page: int | None) -> ObligationResult:
            rp = simplify(rp, self.rev, name)
            cx = build(
                rp,
                obligation=name,
                rev=self.rev,
                mutant=self.mutant,
                bound=self.bound,
                page=page,
                found_by=found_by,
            )
            return ObligationResult(
                name=name,
                kind=ob.kind,
                role=name,
                verdict=Verdict.REFUTED,
                seconds=time.perf_counter() - t0,
                # the subject's own counterexample type (to_json, counterexample_lines in
                # equiv.vmap.present): ObligationResult is typed for the first subject's
                counterexample=cx,
                reason="undefined behaviour" if name == "ub_ffs0" else "",
            )

        lemmas_ok = deps <= proved_lemmas
        if q.result == UNSAT and lemmas_ok:
            return ObligationResult(
                name=name,
                kind=ob.kind,
                role=name,
                verdict=Verdict.PROVED,
                seconds=time.perf_counter() - t0,
                coverage=(
                    "preconditions satisfiable with the local model's facts",
                    *([f"lemmas {', '.join(sorted(deps))} proved"] if deps else []),
                ),
            )
        if q.result == UNKNOWN:
            return ObligationResult(
                name=name,
                kind=ob.kind,
                role=name,
                verdict=Verdict.UNKNOWN,
                seconds=time.perf_counter() - t0,
                reason=f"{q.reason}; query: {_dump(q, name)}",
            )
        why = "the local model's candidate does not reproduce concretely"
        if q.result == SAT:
            self.prefer_small(q, self.inp, free)
            case = read_case(q, self.path, self.inp)
            if case is not None:
                rp = replay(case, self.rev, name)
                if rp.violations:
                    return refuted(rp, "local", int(q.value(self.v)))
        else:
            why = "the local proof rests on a lemma that does not hold"
            if run_facts and not runs(self.inp.unbounded) <= proved_lemmas:
                # the run facts are unjustified (a seeded bug breaks the batches' alignment):
                # candidates from the facts that remain, replayed like any other
                q2 = self.query([self.contig_facts, neg])
                if q2.result == SAT:
                    self.prefer_small(q2, self.inp, free)
                    case = read_case(q2, self.path, self.inp)
                    if case is not None:
                        rp = replay(case, self.rev, name)
                        if rp.violations:
                            return refuted(rp, "local", int(q2.value(self.v)))
        if self.inp.unbounded:
            # a page array of any number of runs is read at a few indices only, so its
            # candidate may not fix the pages between them as the violation needs; the local
            # model with a few segments (every page fixed) proposes candidates too
            small = self.small_candidate(name)
            if small is not None:
                return refuted(small[0], f"{SMALL_BOUND}-segment local", small[1])
        if name in self.lemma_witness:
            return refuted(self.lemma_witness[name], "lemma", None)
        ans, rp2, reason = self.exact(name)
        if ans == SAT and rp2 is not None:
            return refuted(rp2, "exact", None)
        b = min(self.bound, EXACT_BOUND)
        tail = (
            f"the exact model finds no counterexample with <= {b} segment{'s' * (b > 1)}"
            if ans == UNSAT
            else f"the exact model gave up: {reason}"
        )
        return ObligationResult(
            name=name,
            kind=ob.kind,
            role=name,
            verdict=Verdict.UNKNOWN,
            seconds=time.perf_counter() - t0,
            reason=f"{why}; {tail}",
        )


def cell_choices(rev: Revision) -> tuple[str, ...]:
    """The named choices printed with a cell."""
    return (
        *COMMON_CHOICES,
        *rev.choices,
        f"this run: trylock={rev.trylock!r}"
        + (" (no concurrent ptdump)" if rev.trylock == "succeeds" else
           " (the fast path's mmap_read_trylock may fail per table slot)"),
        "__ffs(0) is undefined: modelled as an unconstrained value in 0..63 per batching step, "
        "with a UB flag (obligation ub_ffs0)",
    )


def check_cell(
    path: str,
    bound: int,
    rev: Revision,
    mutant: str | None = None,
    *,
    timeout_ms: int = 60_000,
    rlimit: int | None = None,
    extra: Extra | None = None,
    solver: str | None = None,
    enough: Callable[[ObligationResult], bool] | None = None,
    first: tuple[str, ...] = (),
) -> CellResult:
    """Check every obligation of ``path`` for page arrays of up to ``bound`` segments.

    Args:
        path: "ioremap", "vmalloc" or "vmap".
        bound: the maximal number of segments of the page array, or ``ANY`` (any number: a
            :class:`~equiv.vmap.inputs.RunArray`; ioremap: unused, one contiguous range of
            any length up to 2^31 pages).
        rev: the revision (a seeded bug already applied).
        mutant: the seeded bug's name, for the report.
        timeout_ms: time limit of each query.
        rlimit: z3 resource limit per query (selects z3 when ``solver`` is None).
        extra: further named assumptions (a test hook: contradictory ones make it VACUOUS).
        solver: "bitwuzla" or "z3" (None: Bitwuzla unless an ``rlimit`` is given).
        enough: stop once an obligation's result satisfies it (the self-test's "this
            seeded bug is caught": :func:`equiv.vmap.selftest.caught`); the result lists
            the obligations decided so far.
        first: obligations to decide before the others (the self-test's: those that must
            not be reported, then the expected ones, so a caught bug stops the cell soon);
            each obligation's query and verdict are its own, whatever the order.

    Raises:
        InputError: an unknown path or a bound below 1.
        InternalMismatch: the exact model and the twin disagree (a bug in equiv).
    """
    if path not in PATHS:
        raise InputError(f"unknown vmap path {path!r}; valid: {', '.join(PATHS)}")
    if bound < 1:
        raise InputError(f"bound {bound}: the page array needs at least one segment")
    t_cell = time.perf_counter()
    cell = _Cell(path, bound, rev, mutant, timeout_ms, rlimit, extra, solver)
    results: list[ObligationResult] = []

    def done() -> CellResult:
        return CellResult(
            config=CONFIG,
            revision=rev.name if mutant is None else f"{rev.name}+{mutant}",
            ptype=path,
            order=bound,
            verdict=worst([r.verdict for r in results]),
            seconds=time.perf_counter() - t_cell,
            obligations=tuple(results),
            assumptions=tuple(n for n, _ in cell.pre),
            choices=cell_choices(rev),
            hypothetical=False,
        )

    t0 = time.perf_counter()
    q = cell.query([cell.run_facts])
    if q.result != SAT:
        verdict = Verdict.VACUOUS if q.result == UNSAT else Verdict.UNKNOWN
        why = (
            "the preconditions and the local model's facts are unsatisfiable"
            if q.result == UNSAT
            else f"vacuity check: {q.reason}; query: {_dump(q, 'vacuity')}"
        )
        for ob in for_path(path):
            results.append(
                ObligationResult(
                    name=ob.name,
                    kind=ob.kind,
                    role=ob.name,
                    verdict=verdict,
                    seconds=time.perf_counter() - t0,
                    reason=why,
                )
            )
        return done()
    lemma_results: list[ObligationResult] = []
    proved: set[str] = set()
    for lm in lemmas(cell.inp, path, rev):
        res = cell.run_lemma(lm)
        missing = [r for r in lm.requires if r not in proved]
        if res.verdict is Verdict.PROVED and missing:
            res = evolve(
                res, verdict=Verdict.UNKNOWN, reason=f"rests on lemma {', '.join(missing)}, not proved"
            )
        if res.verdict is Verdict.PROVED:
            proved.add(lm.name)
        lemma_results.append(res)
    results += lemma_results
    todo = [ob.name for ob in for_path(path)]
    for name in [*(n for n in first if n in todo), *(n for n in todo if n not in first)]:
        results.append(cell.run_obligation(name, proved))
        if enough is not None and enough(results[-1]):
            break
    return done()


def check(
    path: str,
    bound: int,
    revision_name: str,
    mutant: str | None,
    timeout_ms: int,
    rlimit: int | None,
    solver: str | None = None,
    trylock: str | None = None,
) -> CellResult:
    """The API entry point (see :func:`equiv.vmap.cell`)."""
    rev = resolve(revision_name, mutant, trylock)
    return check_cell(path, bound, rev, mutant, timeout_ms=timeout_ms, rlimit=rlimit, solver=solver)


def resolve(revision_name: str, mutant: str | None = None, trylock: str | None = None) -> Revision:
    """The revision a cell checks: ``revision_name`` with the trylock choice and the seeded
    bug applied."""
    from equiv.vmap.mutants import MUTANTS, apply

    rev = revision(revision_name)
    if trylock is not None:
        if trylock not in TRYLOCKS:
            raise InputError(f"unknown trylock {trylock!r}; valid: {', '.join(TRYLOCKS)}")
        rev = evolve(rev, trylock=trylock)
    if mutant is not None:
        if mutant not in MUTANTS:
            raise InputError(f"unknown vmap mutant {mutant!r}; valid: {', '.join(MUTANTS)}")
        rev = apply(rev, mutant)
    return rev


def stopped_cell(path: str, bound: int, revision_name: str, mutant: str | None, seconds: float,
                 why: str) -> CellResult:
    """A cell whose worker was killed at the backstop: UNKNOWN, naming the limit."""
    ob = ObligationResult(name="cell", kind="cell", role="cell", verdict=Verdict.UNKNOWN,
                          seconds=seconds, reason=why)
    return CellResult(config=CONFIG,
                      revision=revision_name if mutant is None else f"{revision_name}+{mutant}",
                      ptype=path, order=bound, verdict=Verdict.UNKNOWN, seconds=seconds,
                      obligations=(ob,), assumptions=(), choices=(), hypothetical=False)


def load_counterexample(rev: Revision, mutant: str | None
                        ) -> Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], VmapCounterexample]:
    """The loader of cached counterexamples (:meth:`VmapCounterexample.to_cache`) of a
    cell of ``rev`` with ``mutant``: each one is replayed on the concrete twin again and
    rebuilt from the replay, so a cached one is as checked as a fresh one.  The loader
    raises ValueError when a counterexample no longer shows."""

    def load(c: dict[str, Any], ob: dict[str, Any], cell: dict[str, Any]) -> VmapCounterexample:
        rp = replay(ConcreteCase.from_json(c["case"]), rev, ob["obligation"])
        if not rp.violations:
            raise ValueError(f"cached counterexample of {ob['obligation']} does not replay")
        bound = ANY if cell["order"] == MAX_SEGMENTS else cell["order"]  # JSON keeps the number
        return build(rp, obligation=ob["obligation"], rev=rev, mutant=mutant, bound=bound,
                     page=c["page"], found_by=c["found_by"])

    return load


__all__ = ["CONFIG", "EXACT_BOUND", "VmapCounterexample", "check", "check_cell",
           "load_counterexample", "resolve", "stopped_cell"]

"""The loop-summary lemmas of a source-derived proof (``--linux``'s and ``--patch``'s): each
lemma a loop summary rests on (:mod:`equiv.zone_device.source.csummary`, and the hand path's
:mod:`equiv.loops`) proved conjunct by conjunct under the cell's assumptions
(:func:`prove_lemmas`), first alone, then under the order-free assumptions shared by the
cells of a process (:func:`order_free`, :data:`FREE_PROVED`), and over an order class order
by order when the class is too slow (:data:`CLASS_LEMMA_MS`); a lemma not proved gives its
reason and, where the solver gives one, its counterexample (the solver's model, not
replayed).  Split from :mod:`equiv.zone_device.source.common`, which decides the page roles
with them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import z3
from attrs import frozen

from equiv.engine import solvers
from equiv.engine.memo import on_forget
from equiv.loops import Ctx, Lemma
from equiv.memmap import Inputs, Scenario, assumptions
from equiv.page_model import Memory
from equiv.zone_device.source.csummary import CLemma, LemmaCex, lemma_counterexample

HandPath = Callable[[Ctx, Scenario, Inputs], Memory]

log = logging.getLogger(__name__)


#: budget (ms) of a loop lemma's conjunct over a whole order class before it is proved order
#: by order (measured: most conjuncts take well under a second with the order symbolic; the
#: few that relate a pfn to the block of an iteration ``k << order`` took over 60 s, and
#: about one second at each order).  Was 3 s: on the backport series' class 2..7, 17 of 54
#: conjuncts spent the 3 s and were then proved order by order in 0.3-5 s in all
CLASS_LEMMA_MS = 1_000


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
#: the same, so is its answer (as :data:`equiv.engine.query.ANSWERS`).
FREE_PROVED: dict[tuple[int, ...], list[z3.ExprRef]] = {}
#: the most proofs :data:`FREE_PROVED` keeps: emptied when full (its terms hold whole
#: memories' DAGs; a process proving many trees' cells must not keep them all)
FREE_PROVED_MAX = 4096


def remember_free(key: tuple[int, ...], terms: list[z3.ExprRef]) -> None:
    """Record in :data:`FREE_PROVED` the query of ``key`` as proved (``terms`` kept alive)."""
    if len(FREE_PROVED) >= FREE_PROVED_MAX:
        FREE_PROVED.clear()
    FREE_PROVED[key] = terms
#: what was tried under the order-free assumptions alone and not proved there, by name (a
#: loop lemma's conjunct, a role's case): not tried so again in this process (a query the
#: order enters is then asked once with every assumption, as before)
FREE_FAILED: set[tuple[str, ...]] = set()
#: the query each name stood for in the last cell that asked it (its terms kept alive): a
#: name whose query changes from one cell to the next is one the order enters, asked from
#: then on with every assumption only (its answer under fewer would not be shared)
FREE_SEEN: dict[tuple[str, ...], tuple[tuple[int, ...], list[z3.ExprRef]]] = {}
for _memo in (FREE_PROVED, FREE_FAILED, FREE_SEEN):
    on_forget(_memo.clear)


def free_first(tag: tuple[str, ...], key: tuple[int, ...], terms: list[z3.ExprRef]) -> bool:
    """Is the query named ``tag`` (its terms' ids ``key``) proved under the order-free
    assumptions (:data:`FREE_PROVED`), or to be tried under them first?  Only when the name
    stands for the same query as in the last cell that asked it (:data:`FREE_SEEN`): a
    query the order enters changes from cell to cell and is never tried there, nor is one
    seen for the first time (measured on the backport series, a worker's cells 18, 16, ...,
    0: the first-sight tries were 2.1 s of CPU at order 18, 0.6 s at 16 and 1.5 s at 0,
    most of them for queries that changed at the next order); not if it was not proved there
    before (:data:`FREE_FAILED`).  Only a matter of speed: a query is proved under every
    assumption wherever it is not proved under fewer."""
    if key in FREE_PROVED:
        return True
    if tag in FREE_FAILED:
        return False
    prev = FREE_SEEN.get(tag)
    FREE_SEEN[tag] = (key, terms)
    if prev is None:
        return False
    if prev[0] != key:
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

#: the loop lemmas' conjuncts, by name (lemma, loop, kind, conjunct), that a fresh solver did
#: not prove alone within :data:`ALONE_RLIMIT` in a cell of this process: not tried alone
#: again in its later cells (they are asked under the assumptions at once).  Measured on
#: the backport series (a worker's cells 18, 16, ..., 0): 210 of 470 tries alone ran out of
#: the budget, 2.6 s of some 41 s of CPU; with this, 29 (181 had run out at an earlier
#: order).  Only a matter of speed: a conjunct not tried alone is proved (or
#: not) under every assumption
ALONE_FAILED: set[tuple[str, ...]] = set()


#: resource limit (z3's rlimit, per check) of a conjunct's try under the order-free
#: assumptions: a try that needs more is taken as not proved there (and asked with every
#: assumption).  Measured on the backport series, orders 0..18: the conjuncts proved there
#: take 0.001-3 M (0.4 s at most); without the limit one conjunct tried there at order 10
#: (after 9, when each new query was tried there) took 4.4 s
FREE_RLIMIT = 4_000_000


@frozen
class LemmaOutcome:
    """The loop lemmas of a cell (:func:`prove_lemmas`): ``why`` is "" if all hold, else
    which one did not and why; ``cex`` the counterexample of the first that did not, when
    the solver gave a model (sat) and the lemma says where to read it
    (:attr:`~equiv.zone_device.source.csummary.CLemma.witness`)."""

    why: str
    cex: LemmaCex | None = None


def check_lemmas(lemmas: Sequence[Lemma | CLemma], assume: list[z3.BoolRef], timeout_ms: int,
                 sc: Scenario | None = None, free: list[z3.BoolRef] | None = None) -> str:
    """:func:`prove_lemmas`' ``why``: "" if every lemma holds, else which one did not."""
    return prove_lemmas(lemmas, assume, timeout_ms, sc, free).why


def prove_lemmas(lemmas: Sequence[Lemma | CLemma], assume: list[z3.BoolRef], timeout_ms: int,
                 sc: Scenario | None = None, free: list[z3.BoolRef] | None = None, *,
                 atoms: Sequence[tuple[int, int, str]] | None = None) -> LemmaOutcome:
    """Prove the loop lemmas; ``why`` "" if all hold, else which one did not and why, with
    the failed conjunct's counterexample
    (:func:`~equiv.zone_device.source.csummary.lemma_counterexample`: the iteration, the
    struct page and the fields; the solver's model, not replayed) when the solver found one
    (``atoms``: the struct page's byte ranges ``(offset, size, name)`` that name its fields;
    by default ``sc``'s layout's).

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
        # (``part`` comes simplified: :func:`one` asks every conjunct so)
        key = (*(a.get_id() for a in free), premise.get_id(), part.get_id())
        if not free_first(tag, key, [*free, premise, part]):
            return False
        if key in FREE_PROVED:
            return True
        if not free_solver:
            fs = z3.SolverFor("QF_AUFBV")
            fs.set("timeout", timeout_ms)
            fs.set("rlimit", FREE_RLIMIT)
            fs.add(*free)
            free_solver.append(fs)
        if free_solver[0].check(premise, z3.Not(part)) == z3.unsat:
            remember_free(key, [*free, premise, part])
            return True
        FREE_FAILED.add(tag)
        return False

    #: the model of the last conjunct found not valid: (model, substitutions made in it)
    found: list[tuple[z3.ModelRef, list[tuple[z3.ExprRef, z3.ExprRef]]]] = []

    #: the conjuncts proved in this call, by the ids of the premise and of the conjunct
    #: simplified (a frame-read lemma's implications repeat once simplified: a worker's
    #: ten cells asked 671 conjuncts, 562 of them different); each is asked simplified, and
    #: a repeat is proved by the first (the same formula; the premise is kept alive by
    #: ``lemmas``, the simplified conjunct here)
    proved: dict[tuple[int, int], z3.BoolRef] = {}

    def one(part: z3.BoolRef, premise: z3.BoolRef, tag: tuple[str, ...]) -> z3.CheckSatResult:
        simple = z3.simplify(part)
        key = (premise.get_id(), simple.get_id())
        if key in proved:
            return z3.unsat
        r = _one(simple, premise, tag)
        if r == z3.unsat:
            proved[key] = simple
        return r

    def _one(part: z3.BoolRef, premise: z3.BoolRef, tag: tuple[str, ...]) -> z3.CheckSatResult:
        if valid_alone(part, tag) or (not split and valid_free(part, premise, tag)):
            return z3.unsat
        if not split:
            # first by a second solver (solvers.first_unsat): measured on the
            # backport series, the conjuncts that reach this query took z3 1.9 s and
            # Bitwuzla 1.2 s (cells 18, 12, 9, 4), the outer loops' no-wrap conjuncts
            # (a third of the lemmas' time) 0.03 s against 0.10-0.17 s
            if solvers.first_unsat([*assume, premise, z3.Not(part)], timeout_ms):
                return z3.unsat
            r = s.check(z3.Not(part))
            if r == z3.sat:
                found.append((s.model(), []))
            return r
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
            if r == z3.sat:
                found.append((s.model(), []))
            return r
        for k in sc.orders:
            sub = (sc.order_v, z3.BitVecVal(k, 64))
            q = z3.simplify(z3.substitute(z3.And(premise, z3.Not(part)), sub))
            t0 = time.perf_counter()
            slv = at(k)
            slv.push()  # asserted, not assumed: z3 preprocesses it with the assumptions
            slv.add(q)
            r = slv.check()
            if r == z3.sat:
                found.append((slv.model(), [sub]))
            slv.pop()
            log.debug("  at order %d: %s %.1fs", k, r, time.perf_counter() - t0)
            if r != z3.unsat:
                return r
        return z3.unsat

    def valid_alone(part: z3.BoolRef, tag: tuple[str, ...]) -> bool:
        """Is the conjunct valid by itself (then under any premise and assumptions), as a
        fresh solver shows within :data:`ALONE_RLIMIT`?  Not asked of a conjunct not valid
        so in an earlier cell (:data:`ALONE_FAILED`)."""
        if tag in ALONE_FAILED:
            return False
        q = z3.SolverFor("QF_AUFBV")
        q.set("rlimit", ALONE_RLIMIT)
        q.add(z3.Not(part))
        if q.check() == z3.unsat:
            return True
        ALONE_FAILED.add(tag)
        return False

    failed: list[int] = []  # the conjunct of the claim that is not valid

    def valid(claim: z3.BoolRef, premise: z3.BoolRef, tag: tuple[str, ...]) -> z3.CheckSatResult:
        for i, part in enumerate(claim.children() if z3.is_and(claim) else [claim]):
            r = one(part, premise, (*tag, str(i)))
            if r != z3.unsat:
                failed.append(i)
                return r
        return z3.unsat

    if atoms is None:  # the struct page's members, to name a counterexample's bytes
        atoms = [(a.offset, a.size, a.name) for a in sc.layout.atoms] if sc is not None else []
    for j, lm in enumerate(lemmas):
        s.push()
        s.add(lm.premise)
        r = s.check()
        if r == z3.sat:
            stronger = getattr(lm, "stronger", None)
            tag = (str(j), lm.loop, lm.kind)
            if stronger is None or valid(stronger, lm.premise, (*tag, "stronger")) != z3.unsat:
                failed.clear()
                found.clear()
                r = valid(lm.claim, lm.premise, tag)
            else:
                r = z3.unsat
        cex: LemmaCex | None = None
        if r == z3.sat and failed and found and isinstance(lm, CLemma) and \
                lm.witness is not None:
            model, sub = found[-1]
            cex = lemma_counterexample(lm, failed[-1], model, atoms, sub)
        s.pop()
        if r != z3.unsat:
            return LemmaOutcome(f"loop lemma {lm.kind} of {lm.loop}: {r}", cex)
    return LemmaOutcome("")


__all__ = [
    "ALONE_FAILED",
    "ALONE_RLIMIT",
    "CLASS_LEMMA_MS",
    "FREE_FAILED",
    "FREE_PROVED",
    "FREE_RLIMIT",
    "FREE_SEEN",
    "LemmaOutcome",
    "check_lemmas",
    "free_first",
    "order_free",
    "prove_lemmas",
]

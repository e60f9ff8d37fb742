"""Deciding a query: the engine's two query layers.

* :class:`Session` and :func:`check` (the zone-device subject's): a query is the assertions of
  a ``z3.Solver`` (plus extra terms), decided by z3 with a deterministic resource budget
  (rlimit), or by cvc5 / Bitwuzla / all three through SMT-LIB; answers that need no model
  are shared in-process (:data:`ANSWERS`, the process-wide memos of answers) and, with a
  cache, on disk.  The caller keeps the ``z3.Solver`` to steer and read its model.
* :class:`Query` (the vmap subject's): one SMT-LIB script decided by Bitwuzla by default
  (z3 as the fallback, and whenever an rlimit is asked for), with :meth:`Query.prefer`
  steps and :meth:`Query.value` reads of the model evaluated by the solver that decided.

Why two: the first keeps a live z3 solver (push/pop over shared assertions, models read with
z3's evaluator, queries hash-consed by AST id for sharing); the second owns a Bitwuzla
instance built from text, whose models must be read through Bitwuzla's own parser.  One
API over both is a later step; until then each subject uses exactly one, and both live
here.  UNKNOWN is never turned into an answer by either.
"""

from __future__ import annotations

import os
import re
import tempfile
import time

import z3
from attrs import Factory, define, fields

from equiv.engine.cache import Cache, query_key
from equiv.engine.memo import on_forget
from equiv.engine.solvers import available, decide, smtlib

#: An answer shared in-process: the answer, and the assertions it is for (kept alive so
#: that the AST ids of its key are never reused for other terms).
Memo = tuple[z3.CheckSatResult, list[z3.ExprRef]]


@define
class Answers:
    """The answers this process shares between queries, one table per kind of query, each
    keyed by a budget and the AST ids of the assertions asked (z3 hash-conses terms, so two
    cells whose queries are the same formula share the answer); the tables only spare
    asking the same query again.  What each holds, and when, is said where it is filled
    (:func:`check`; the zone-device subject's ``check.decide`` and ``minimise``).  One
    instance, :data:`ANSWERS`; :meth:`clear` forgets them all (a test or a benchmark that
    measures cold queries)."""

    #: queries decided by :func:`check`, keyed by budget, solver and assertions: only
    #: answers that need no model (UNSAT, and SAT where the caller asked ``keep_sat``)
    checked: dict[tuple[int | str, ...], Memo] = Factory(dict)
    #: sliced queries that were not UNSAT (SAT, or undecided within the deterministic
    #: budget of the key): asked again, they go straight to their whole form
    not_unsat: dict[tuple[int, ...], Memo] = Factory(dict)
    #: the checks steering a counterexample towards small inputs on a sliced query
    steered: dict[tuple[int, ...], Memo] = Factory(dict)
    #: the models of steered sliced queries (None: not SAT within the budget)
    models: dict[tuple[int, ...], tuple[z3.ModelRef | None, list[z3.ExprRef]]] = Factory(dict)
    #: the sliced queries explaining a counterexample (which inputs do not matter)
    explained: dict[tuple[int, ...], Memo] = Factory(dict)

    def clear(self) -> None:
        """Forget every shared answer."""
        for a in fields(Answers):
            getattr(self, a.name).clear()

    def sizes(self) -> dict[str, int]:
        """How many answers each table holds, by table name."""
        return {a.name: len(getattr(self, a.name)) for a in fields(Answers)}


#: The answers shared in this process (:class:`Answers`).
ANSWERS = Answers()
on_forget(ANSWERS.clear)


def clear_answers() -> None:
    """Forget every shared answer (benchmarks measure cold queries with this)."""
    ANSWERS.clear()


_R = {"sat": z3.sat, "unsat": z3.unsat, "unknown": z3.unknown}


@define
class Session:
    """How one cell's queries are decided, and what they left behind (one per
    :func:`check_cell`; the answers shared between cells are :data:`ANSWERS`)."""

    #: solver(s) deciding queries: z3, cvc5, bitwuzla or all
    mode: str = "z3"
    #: z3 resource limit per query (-1: none)
    budget: int = -1
    timeout_ms: int = 60_000
    #: directory for --dump-smt (None: no dump), and the cell's file prefix
    dump_dir: str | None = None
    dump_prefix: str = ""
    #: the on-disk result cache
    cache: Cache | None = None
    #: why the last query came out unknown (solver disagreement, ...)
    note: str = ""
    #: cache keys of the queries posed, in order
    keys: list[str] = Factory(list)
    #: answers taken from :data:`ANSWERS`
    shared: int = 0
    #: queries that came out unknown (a budget ran out, or the solvers disagreed)
    undecided: int = 0


def conj(fs: list[z3.BoolRef]) -> z3.BoolRef:
    """A conjunction with no 0- or 1-ary ``and`` (which some SMT-LIB readers reject)."""
    return z3.BoolVal(True) if not fs else fs[0] if len(fs) == 1 else z3.And(*fs)


def _dump_query(ses: Session, terms: list[z3.BoolRef], name: str) -> None:
    directory, prefix = ses.dump_dir, ses.dump_prefix
    if directory is None:
        return
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{prefix}-{name}")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, safe + ".smt2"), "w") as f:
        meaning = ("sat means it is satisfiable (not vacuous)" if name.startswith(("vacuity", "reach"))
                   else "unsat means the obligation holds")
        f.write(f"; equiv query {prefix} {name}: {meaning}\n")
        f.write(smtlib(terms))


def check(ses: Session, s: z3.Solver, *extra: z3.BoolRef, keep_sat: bool = False,
           name: str = "query") -> z3.CheckSatResult:
    """Decide ``s``'s assertions (plus ``extra``) with the selected solver(s), answered from
    :data:`ANSWERS` when the same query was decided; dumped as SMT-LIB with --dump-smt.

    With a second solver, a SAT answer is also asked of z3 (its model is what gets replayed);
    solvers that disagree make the answer unknown, with the reason in ``ses.note``.
    """
    terms = [*s.assertions(), *extra]
    _dump_query(ses, terms, name)
    ses.note = ""
    # the budget and solver are part of the key: a verdict never depends on what ran before
    key = (ses.budget, ses.mode, *(t.get_id() for t in terms))
    store, qkey = ses.cache, ""
    if store is not None:  # the cell's verdicts rest on this query's answer: list its key
        qkey = query_key(smtlib(terms), ses.mode, None if ses.budget < 0 else ses.budget)
        ses.keys.append(qkey)
    hit = ANSWERS.checked.get(key)
    if hit is not None:
        ses.shared += 1
        if store is not None:  # decided earlier in this process, maybe for another cache
            store.put("query", qkey, {"answer": str(hit[0])})
        return hit[0]
    mode = ses.mode
    if store is not None:
        got = store.get("query", qkey)
        answer = got.get("answer") if isinstance(got, dict) else None
        # a cached "sat" is used only where no model is needed (vacuity, reach)
        if answer == "unsat" or (answer == "sat" and keep_sat):
            r = _R[answer]
            ANSWERS.checked[key] = (r, terms)
            return r
    r = _decide_z3(ses, s, extra) if mode == "z3" else _decide_others(ses, s, terms, extra)
    if r == z3.unknown:
        ses.undecided += 1
    if r == z3.unsat or (keep_sat and r == z3.sat):
        ANSWERS.checked[key] = (r, terms)
    if store is not None and r != z3.unknown:  # never cache unknown
        store.put("query", qkey, {"answer": str(r)})
    return r


def _decide_z3(ses: Session, s: z3.Solver, extra: tuple[z3.BoolRef, ...]) -> z3.CheckSatResult:
    """z3's answer; when unknown, ``ses.note`` says which budget ran out (:func:`z3_gave_up`)."""
    t0 = time.perf_counter()
    r = s.check(*extra)
    if r == z3.unknown:
        ses.note = z3_gave_up(s.reason_unknown(), seconds=time.perf_counter() - t0,
                              timeout_ms=ses.timeout_ms,
                              rlimit=None if ses.budget < 0 else ses.budget)
    return r


def _decide_others(ses: Session, s: z3.Solver, terms: list[z3.BoolRef],
                   extra: tuple[z3.BoolRef, ...]) -> z3.CheckSatResult:
    """The answer of cvc5 or Bitwuzla (``ses.mode``), or of all three solvers: unknown when
    they disagree or one gives up, ``ses.note`` saying which and the options that raise
    their budgets.  A SAT answer is also asked of z3, for the model the replay needs."""
    mode = ses.mode
    answers: dict[str, str] = {}
    if mode == "all":
        answers["z3"] = str(s.check(*extra))
    for other in (("cvc5", "bitwuzla") if mode == "all" else (mode,)):
        answers[other] = decide(other, terms, ses.timeout_ms)
    if mode != "all" and answers[mode] == "sat":
        answers["z3"] = str(s.check(*extra))
    seen = set(answers.values())
    said = ", ".join(f"{k} {v}" for k, v in answers.items())
    if {"sat", "unsat"} <= seen:
        ses.note = f"solvers disagree: {said}"
        return z3.unknown
    if "unknown" in seen:
        rl = "" if ses.budget < 0 else f", z3 also --rlimit {ses.budget}"
        ses.note = (f"a solver gave up: {said} (each has --timeout-ms {ses.timeout_ms} of "
                    f"wall clock{rl}); raise it with --timeout-ms"
                    + (" or --rlimit" if rl and answers.get("z3") == "unknown" else ""))
        return z3.unknown
    return _R[seen.pop()]


#: Where undecided queries are written (:func:`set_unknown_dir`; None: $TMPDIR).  Set by
#: the command line before any worker starts (workers are forked and inherit it).
_UNKNOWN_DIR: list[str | None] = [None]


def set_unknown_dir(directory: str | None) -> None:
    """Write the SMT-LIB of undecided queries into ``directory`` from now on (the command
    line gives the ``--dump-smt`` directory, else ``<cache>/unknown``); None: $TMPDIR."""
    _UNKNOWN_DIR[0] = directory


def unknown_file(tag: str, smt2: str) -> str:
    """Write the SMT-LIB text of an undecided query to a new file named after ``tag``; its
    path.  Into the directory of :func:`set_unknown_dir` (made if missing), or $TMPDIR
    when there is none or it cannot be written."""
    for directory in (_UNKNOWN_DIR[0], None):
        try:
            if directory is not None:
                os.makedirs(directory, exist_ok=True)
            fd, path = tempfile.mkstemp(dir=directory, prefix=f"equiv-unknown-{tag}-",
                                        suffix=".smt2")
        except OSError:
            continue
        with os.fdopen(fd, "w") as f:
            f.write(smt2)
        return path
    return "(not written: no writable directory)"


def dump_unknown(s: z3.Solver, tag: str, *extra: z3.BoolRef) -> str:
    """Write an undecided query, ``s``'s assertions and ``extra`` (same SMT-LIB as
    --dump-smt), to a file (:func:`unknown_file`); its path."""
    return unknown_file(tag, smtlib([*s.assertions(), *extra]))


#: z3's reason_unknown() when its resource limit (rlimit) ran out, and when its timeout did;
#: "canceled" is either (a check with assumptions, or a solver that ran out before)
_Z3_RLIMIT, _Z3_TIMEOUT, _Z3_CANCELED = "max. resource limit exceeded", "timeout", "canceled"


def z3_gave_up(reason: str, *, seconds: float, timeout_ms: int, rlimit: int | None) -> str:
    """Why z3 answered unknown, said as the budget that ran out and the option that raises
    it.  ``reason`` is z3's ``reason_unknown()``, ``seconds`` the check's wall time and
    ``timeout_ms``, ``rlimit`` the budgets the solver had.  z3 says "canceled" for either
    budget: it was the wall clock if the check took that long or had no resource limit.
    A reason that is no budget's (an incomplete theory) is said as z3 says it.

    >>> z3_gave_up("max. resource limit exceeded", seconds=0.1, timeout_ms=60_000, rlimit=1000)
    'z3 gave up (its deterministic budget, --rlimit 1000, ran out); raise it with --rlimit'
    >>> z3_gave_up("canceled", seconds=60.0, timeout_ms=60_000, rlimit=10**9)
    'z3 gave up (its wall-clock limit, --timeout-ms 60000, ran out); raise it with --timeout-ms'
    """
    wall = reason == _Z3_TIMEOUT or (reason == _Z3_CANCELED and (
        rlimit is None or seconds >= 0.9 * timeout_ms / 1000))
    if wall:
        return (f"z3 gave up (its wall-clock limit, --timeout-ms {timeout_ms}, ran out); raise "
                "it with --timeout-ms")
    if rlimit is not None and reason in (_Z3_RLIMIT, _Z3_CANCELED):
        return (f"z3 gave up (its deterministic budget, --rlimit {rlimit}, ran out); raise it "
                "with --rlimit")
    return f"z3 gave up ({reason})"



SAT, UNSAT, UNKNOWN = "sat", "unsat", "unknown"


#: Bitwuzla's deterministic budget: terminator polls allowed per millisecond of the query's
#: ``timeout_ms``.  Bitwuzla polls its terminator at fixed points of its search (about
#: 100,000 times a second on a 2-core 2026 machine, measured on the vmap self-test's
#: largest query), so the count depends on the query, the solver version and its seed, never
#: on the machine's load: a verdict cannot flip because other work slows the run.
BITWUZLA_STEPS_PER_MS = 100


def default_backend(rlimit: int | None = None) -> str:
    """Bitwuzla when installed and no z3 resource limit is asked for, else z3."""
    return "bitwuzla" if rlimit is None and available("bitwuzla") else "z3"


class Query:
    """One query: assertions, then :meth:`check`, then optional :meth:`prefer` steps and
    :meth:`value` reads of the model.

    Args:
        assertions: the conjunction to decide.
        timeout_ms: the budget of each check: with Bitwuzla a deterministic count of
            ``timeout_ms * BITWUZLA_STEPS_PER_MS`` terminator polls (no wall-clock limit);
            with z3 a wall-clock limit (deterministic only with ``rlimit``).
        backend: "bitwuzla" or "z3".
        rlimit: z3 resource limit per check (z3 only).
        mention: terms whose values will be read or that preferences will mention (they are
            declared in the script even if the assertions do not use them).
    """

    def __init__(
        self,
        assertions: list[z3.BoolRef],
        *,
        timeout_ms: int,
        backend: str = "bitwuzla",
        rlimit: int | None = None,
        mention: list[z3.ExprRef] | None = None,
    ) -> None:
        self.backend = backend
        self.timeout_ms = timeout_ms
        self.rlimit = rlimit
        extra = [t == t for t in (mention or [])]
        self.assertions = [*assertions, *extra]
        self.result = UNKNOWN
        self.reason = ""
        if backend == "z3":
            self._z3 = z3.SolverFor("QF_UFBV")
            self._z3.set("timeout", timeout_ms)
            if rlimit is not None:
                self._z3.set("rlimit", rlimit)
            self._z3.add(*self.assertions)
            return
        import bitwuzla

        self._bz = bitwuzla
        self._tm = bitwuzla.TermManager()
        opts = bitwuzla.Options()
        opts.set(bitwuzla.Option.PRODUCE_MODELS, True)
        self._parser = bitwuzla.Parser(self._tm, opts)
        err = self._parser.parse(smtlib(self.assertions, check=False), True, False)
        if err:
            raise RuntimeError(f"bitwuzla could not parse the query: {err}")
        self._solver = self._parser.bitwuzla()
        #: the step budget of each check and the polls the last check used
        self.steps = timeout_ms * BITWUZLA_STEPS_PER_MS
        self.steps_used = 0
        self._solver.configure_terminator(self._poll)

    def _poll(self) -> bool:
        """Bitwuzla's terminator: stop once this check has used its step budget."""
        self.steps_used += 1
        return self.steps_used > self.steps

    def check(self) -> str:
        """Decide; the answer is also kept in :attr:`result`."""
        if self.backend == "z3":
            t0 = time.perf_counter()
            r = self._z3.check()
            self.result = SAT if r == z3.sat else UNSAT if r == z3.unsat else UNKNOWN
            if self.result == UNKNOWN:
                self.reason = z3_gave_up(self._z3.reason_unknown(),
                                         seconds=time.perf_counter() - t0,
                                         timeout_ms=self.timeout_ms, rlimit=self.rlimit)
            return self.result
        self.steps_used = 0
        r = self._solver.check_sat()
        self.result = {self._bz.Result.SAT: SAT, self._bz.Result.UNSAT: UNSAT}.get(r, UNKNOWN)
        if self.result == UNKNOWN:
            self.reason = (f"bitwuzla gave up (its deterministic budget: {self.steps:,} "
                           f"terminator polls for {self.timeout_ms} ms); raise it with "
                           "--timeout-ms")
        return self.result

    def prefer(self, cond: z3.BoolRef) -> bool:
        """Keep ``cond`` if the query stays SAT with it (steering towards readable models);
        the model is then one satisfying every kept preference."""
        if self.backend == "z3":
            self._z3.push()
            self._z3.add(cond)
            if self._z3.check() == z3.sat:
                return True
            self._z3.pop()
            self._z3.check()
            return False
        self._solver.push(1)
        self._solver.assert_formula(self._term(cond))
        self.steps_used = 0
        if self._solver.check_sat() == self._bz.Result.SAT:
            return True
        self._solver.pop(1)
        self.steps_used = 0
        self._solver.check_sat()
        return False

    def _term(self, t: z3.ExprRef) -> object:
        return self._parser.parse_term(t.sexpr())

    def value(self, t: z3.ExprRef) -> int | bool:
        """The model's value of ``t`` (after a SAT check)."""
        if self.backend == "z3":
            v = self._z3.model().eval(t, model_completion=True)
            return bool(z3.is_true(v)) if z3.is_bool(t) else v.as_long()
        val = self._solver.get_value(self._term(t))
        if z3.is_bool(t):
            return bool(val.is_true())
        return int(val.value(10))

    def smt2(self) -> str:
        """The query as SMT-LIB 2 (for the file written on UNKNOWN)."""
        return smtlib(self.assertions)

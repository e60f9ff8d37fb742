"""Deciding the page-table subject's queries: Bitwuzla by default, z3 as the fallback.

The terms are built with z3's Python API (one program, two evaluators: see
:mod:`equiv.vmap.paths`), written out as SMT-LIB 2 (:func:`equiv.solvers.smtlib`, plain
``QF_UFBV``) and decided by Bitwuzla through its own parser, as ``--solver bitwuzla`` does for
the first subject.  Bitwuzla decides this subject's local queries in seconds where z3 takes
minutes (``python bench/vmap.py --solver z3`` shows it).  A SAT answer comes with a model:
any z3 term over the declared symbols is evaluated by Bitwuzla (:meth:`Query.value`).

``backend="z3"`` (or Bitwuzla not installed) decides with z3 instead, honouring ``rlimit``
(z3's deterministic resource budget; Bitwuzla has none, so an ``rlimit`` selects z3).
UNKNOWN (timeout, resource limit) is never turned into an answer.
"""

from __future__ import annotations

import z3

from equiv.solvers import available, smtlib

SAT, UNSAT, UNKNOWN = "sat", "unsat", "unknown"


def default_backend(rlimit: int | None = None) -> str:
    """Bitwuzla when installed and no z3 resource limit is asked for, else z3."""
    return "bitwuzla" if rlimit is None and available("bitwuzla") else "z3"


class Query:
    """One query: assertions, then :meth:`check`, then optional :meth:`prefer` steps and
    :meth:`value` reads of the model.

    Args:
        assertions: the conjunction to decide.
        timeout_ms: wall-clock budget of each check.
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
        opts.set(bitwuzla.Option.TIME_LIMIT_PER, timeout_ms)
        opts.set(bitwuzla.Option.PRODUCE_MODELS, True)
        self._parser = bitwuzla.Parser(self._tm, opts)
        err = self._parser.parse(smtlib(self.assertions, check=False), True, False)
        if err:
            raise RuntimeError(f"bitwuzla could not parse the query: {err}")
        self._solver = self._parser.bitwuzla()

    def check(self) -> str:
        """Decide; the answer is also kept in :attr:`result`."""
        if self.backend == "z3":
            r = self._z3.check()
            self.result = SAT if r == z3.sat else UNSAT if r == z3.unsat else UNKNOWN
            if self.result == UNKNOWN:
                self.reason = self._z3.reason_unknown()
            return self.result
        r = self._solver.check_sat()
        self.result = {self._bz.Result.SAT: SAT, self._bz.Result.UNSAT: UNSAT}.get(r, UNKNOWN)
        if self.result == UNKNOWN:
            self.reason = f"bitwuzla gave up (time limit {self.timeout_ms} ms)"
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
        if self._solver.check_sat() == self._bz.Result.SAT:
            return True
        self._solver.pop(1)
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

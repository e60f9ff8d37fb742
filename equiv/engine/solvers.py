"""Second opinions: the same queries, as SMT-LIB 2, decided by cvc5 and Bitwuzla.

Every query equiv sends to z3 is plain ``QF_AUFBV`` (bit-vectors, one-index arrays, one
uninterpreted function), so it can be written out as SMT-LIB 2 (:func:`smtlib`) and given to
any solver.  cvc5 and Bitwuzla are driven through their PyPI packages' own SMT-LIB parsers
(``cvc5.InputParser``, ``bitwuzla.Parser``), so what they decide is exactly the text a user
can re-run with ``--dump-smt``.  Bitwuzla is a required dependency (it decides the vmap
subject's queries); cvc5 comes with ``pip install 'equiv[solvers]'``.
"""

from __future__ import annotations

import z3

from equiv.engine.errors import InputError

SOLVERS = ("z3", "cvc5", "bitwuzla")
LOGIC = "QF_AUFBV"
#: z3's deterministic resource budget per query when the user gives none (the zone-device
#: subject; about 10x what the largest preset's hardest query uses)
DEFAULT_RLIMIT = 1_000_000_000


def smtlib(assertions: list[z3.BoolRef], *, check: bool = True) -> str:
    """The conjunction of ``assertions`` as an SMT-LIB 2 script (``set-logic`` first).

    The text ``z3.Solver.to_smt2`` gives for a solver holding ``assertions``, written by the
    same C call without making the solver (a cache key is this text: it is made for every
    query a cached run poses)."""
    ctx = z3.main_ctx()
    es = [z3.BoolSort(ctx).cast(a) for a in assertions]
    n = max(len(es) - 1, 0)
    v = (z3.Ast * n)()
    for i in range(n):
        v[i] = es[i].as_ast()
    last = es[n].as_ast() if es else z3.BoolVal(True, ctx).as_ast()
    text = z3.Z3_benchmark_to_smtlib_string(ctx.ref(), "benchmark generated from python API",
                                            "", "unknown", "", n, v, last)
    lines = [ln for ln in text.splitlines() if ln.strip() != "(check-sat)"]
    body = "\n".join(lines)
    return f"(set-logic {LOGIC})\n{body}\n" + ("(check-sat)\n" if check else "")


def available(name: str) -> bool:
    """Is the solver's Python package installed?"""
    if name == "z3":
        return True
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def require(name: str, valid: tuple[str, ...] = (*SOLVERS, "all"), who: str = "") -> None:
    """Raise a one-line input error if ``name`` is not one of ``valid`` (the choices of the
    subject ``who``) or is not installed."""
    if name not in valid:
        raise InputError(f"unknown --solver {name!r}{f' for subject {who}' if who else ''}; "
                         f"valid: {', '.join(valid)}")
    for n in (SOLVERS if name == "all" else (name,)):
        if not available(n):
            raise InputError(f"--solver {name}: the {n} package is not installed; "
                             "pip install 'equiv[solvers]'")


def version(name: str) -> str:
    """``name`` and its version, as reports print it ("z3 4.15.0", "z3, cvc5, bitwuzla ...")."""
    if name == "all":
        return ", ".join(version(n) for n in SOLVERS)
    if name == "z3":
        return f"z3 {z3.get_version_string()}"
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return f"{name} {dist_version(name)}"
    except PackageNotFoundError:
        return name


def check_cvc5(text: str, timeout_ms: int) -> str:
    """``sat``, ``unsat`` or ``unknown`` from cvc5 on an SMT-LIB script without check-sat."""
    import cvc5

    tm = cvc5.TermManager()
    slv = cvc5.Solver(tm)
    slv.setOption("tlimit-per", str(timeout_ms))
    parser = cvc5.InputParser(slv)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "equiv")
    sm = parser.getSymbolManager()
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        cmd.invoke(slv, sm)
    r = slv.checkSat()
    return "sat" if r.isSat() else "unsat" if r.isUnsat() else "unknown"


def check_bitwuzla(text: str, timeout_ms: int) -> str:
    """``sat``, ``unsat`` or ``unknown`` from Bitwuzla on an SMT-LIB script without check-sat."""
    import bitwuzla

    tm = bitwuzla.TermManager()
    opts = bitwuzla.Options()
    opts.set(bitwuzla.Option.TIME_LIMIT_PER, timeout_ms)
    parser = bitwuzla.Parser(tm, opts)
    err = parser.parse(text, False, False)
    if err:
        raise RuntimeError(f"bitwuzla could not parse the query: {err}")
    r = parser.bitwuzla().check_sat()
    return {bitwuzla.Result.SAT: "sat", bitwuzla.Result.UNSAT: "unsat"}.get(r, "unknown")


#: the solver the source-derived proofs (``--patch``, ``--linux``) ask a loop lemma's
#: conjunct of first, before z3 (where z3's incremental core is slow: 64-bit adder and shift
#: arithmetic; not the roles' ``ite`` decisions, where it is faster), or None: Bitwuzla, on
#: the query's SMT-LIB text (:func:`decide`: the text ``--dump-smt`` writes), within
#: :data:`FIRST_MS`.  Its UNSAT answer is the query's proof; any other answer (or a text it
#: cannot read) sends the query to z3 as before, which gives the model of a difference or
#: the reason it gave up
FIRST_SOLVER: str | None = "bitwuzla"
#: :data:`FIRST_SOLVER`'s time limit per query (ms): past it, z3 is asked
FIRST_MS = 2_000


def first_unsat(assertions: list[z3.BoolRef], timeout_ms: int) -> bool:
    """Does :data:`FIRST_SOLVER` find the conjunction of ``assertions`` unsatisfiable (within
    :data:`FIRST_MS` and ``timeout_ms``)?  False for any other answer, and when there is no
    first solver or it cannot read the query (z3 then decides it alone)."""
    if FIRST_SOLVER is None:
        return False
    try:
        return decide(FIRST_SOLVER, assertions, min(FIRST_MS, timeout_ms)) == "unsat"
    except (RuntimeError, ImportError):  # (a text it cannot parse, or not installed: z3 alone)
        return False


def decide(name: str, assertions: list[z3.BoolRef], timeout_ms: int) -> str:
    """Ask solver ``name`` (cvc5 or bitwuzla) about the conjunction of ``assertions``."""
    text = smtlib(assertions, check=False)
    return check_cvc5(text, timeout_ms) if name == "cvc5" else check_bitwuzla(text, timeout_ms)

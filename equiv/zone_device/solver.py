"""The solver of a cell's query, holding the assumptions the query needs.

A cell's assumptions (:attr:`equiv.zone_device.obligations.CellProblem.assumptions`) are
satisfiable (its vacuity check shows it before any other query is asked), so a part of them
that shares no symbol with a query and with the rest of the assumptions kept cannot change
whether the query is satisfiable.  :func:`solver_for` with ``about`` leaves such a part out
(:func:`slice_assumptions`); :func:`equiv.zone_device.check.decide` adds it back when the
answer needs it (:func:`whole_of`).  Both the verdict path (:mod:`equiv.zone_device.check`)
and the counterexample choice (:mod:`equiv.zone_device.minimise`) build their solvers here.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import z3

from equiv.zone_device.obligations import CellProblem


def solver_for(problem: CellProblem, timeout_ms: int, *, pages: bool = False,
               rlimit: int | None = None, about: z3.BoolRef | None = None) -> z3.Solver:
    """A fresh solver holding the assumptions.  Page-role queries use z3's ``smt`` tactic
    after eliminating unconstrained terms (about 4x faster than the QF_AUFBV default on them;
    z3's model converter keeps models valid for the original formula, and every model is
    replayed anyway); the index-level lemma and vacuity queries use the QF_AUFBV solver
    (about 7x faster there).

    With ``about`` (the formula the query will add), only the assumptions that share a
    symbol with it, directly or through other assumptions, are added;
    :func:`equiv.zone_device.check.decide` adds the others when the query is not UNSAT
    without them (:func:`whole_of`)."""
    if pages:
        s = z3.Then("simplify", "propagate-values", "elim-uncnstr", "smt").solver()
    else:
        s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    if rlimit is not None:
        s.set("rlimit", rlimit)
    kept, aside = slice_assumptions(problem, about)
    for a in kept:
        s.add(a)
    if aside:
        _WHOLE[s] = (len(kept), lambda: solver_for(problem, timeout_ms, pages=pages, rlimit=rlimit))
    return s


#: How to build the whole solver (every assumption) of a sliced one (:func:`solver_for`
#: with ``about``), and how many assumptions the sliced one holds (:func:`whole_of`).
_WHOLE: weakref.WeakKeyDictionary[z3.Solver, tuple[int, Callable[[], z3.Solver]]] = \
    weakref.WeakKeyDictionary()
#: Per cell problem, the symbols each term mentions, by AST id (:func:`_symbols`).
_SYMBOLS: weakref.WeakKeyDictionary[CellProblem, dict[int, frozenset[str]]] = \
    weakref.WeakKeyDictionary()
#: Per cell problem, the symbols of each of its assumptions, in their order.
_ASSUMED: weakref.WeakKeyDictionary[CellProblem, list[frozenset[str]]] = \
    weakref.WeakKeyDictionary()


def whole_of(s: z3.Solver) -> tuple[int, Callable[[], z3.Solver]] | None:
    """For a solver of :func:`solver_for` that left assumptions out: how many assumptions it
    holds (its first assertions; the query's own follow) and how to build the solver of
    every assumption.  None for a solver that left none out.  Asked once per solver (the
    record is dropped)."""
    return _WHOLE.pop(s, None)


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


def connected(problem: CellProblem, core: Sequence[z3.BoolRef],
              rest: Sequence[z3.BoolRef] = ()) -> list[bool]:
    """Which of ``problem``'s assumptions, followed by the formulas ``rest``, share a symbol
    with a formula of ``core``, directly or through each other (in that order)."""
    memo = _SYMBOLS.setdefault(problem, {})
    need: set[str] = set()
    for c in core:
        need |= _symbols(c, memo)
    return _sharing(need, [*_assumed_symbols(problem), *(_symbols(f, memo) for f in rest)])


def slice_assumptions(problem: CellProblem, about: z3.BoolRef | None
                      ) -> tuple[list[z3.BoolRef], list[z3.BoolRef]]:
    """The assumptions connected to ``about`` by shared symbols (directly or through other
    assumptions), and the rest; with ``about`` None, every assumption and none."""
    every = [a for _, a in problem.assumptions]
    if about is None:
        return every, []
    kept = connected(problem, [about])
    return ([a for a, k in zip(every, kept, strict=True) if k],
            [a for a, k in zip(every, kept, strict=True) if not k])


__all__ = ["connected", "slice_assumptions", "solver_for", "whole_of"]

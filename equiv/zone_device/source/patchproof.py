"""A patch proved from the C text: two trees' ``memmap_init_zone_device()``, at every order.

For one configuration, a *base* tree and a *patched* tree (the base with ``--patch`` files
applied to a private copy, or a second tree given by ``--against``), each cell (a pgmap
type, or all five at once with ``pgmap->type`` symbolic; a compound order up to the PUD
order) runs ``memmap_init_zone_device()`` interpreted from each tree's text
(:mod:`equiv.zone_device.source.cinterp`) on the same symbolic inputs: start pfn, number of pages (no
bound beyond the model's assumptions), node, ``pgmap`` pointer and type, altmap, early
sections, vmemmap and direct-map bases, the initial contents of every struct page (one array
indexed by pfn) and pageblock cell, and the uninitialised bytes of each struct local.  Each
tree's loops are summarised from its own text (:mod:`equiv.zone_device.source.csummary`), never unrolled
and never replaced by the hand-written model, so order 18 costs what order 2 costs.

Obligations per cell: the assumptions are satisfiable (else VACUOUS); every loop-summary
lemma of both trees holds (each conjunct its own query); and for each page role (the head
of any compound ``c``, tail 1, tail 2, any tail ``t >= 3``, any struct page outside the
range's compounds, any pageblock cell) the two trees leave the same bytes.  A role whose
query is SAT is replayed on both trees in the concrete domain before it is reported as
REFUTED; the differing fields carry the file:line of the C statements that wrote them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import z3
from attrs import evolve, frozen

from equiv.config import Config
from equiv.engine import bv
from equiv.engine.bv import CBV, Val
from equiv.engine.errors import InputError, InternalMismatch
from equiv.engine.runner import map_in_workers
from equiv.engine.splitsum import split_sums
from equiv.engine.verdict import Verdict, worst
from equiv.linux.ktree import KernelTree, MacroEnv
from equiv.memmap import (
    Inputs,
    MemoryType,
    Scenario,
    assumptions,
    geometry,
    order_classes,
    pfn_of,
    symbolic_inputs,
)
from equiv.page_model import PB_BITS, Layout, PageState
from equiv.zone_device.counterexample import ConcreteRun, page_diffs
from equiv.zone_device.obligations import roles_for
from equiv.zone_device.source.cinterp import (
    MAX_TRIPS,
    CInt,
    Interp,
    InterpError,
    Oracle,
    Ptr,
    State,
    initial_state,
)
from equiv.zone_device.source.common import (
    FREE_FAILED,
    FREE_PROVED,
    ModelValues,
    RoleResult,
    check_lemmas,
    free_first,
    merge_found,
    model_for,
    order_free,
    order_not_covered,
    specialise,
    substitute_all,
    undisproved,
)
from equiv.zone_device.source.cstate import Case, Renaming
from equiv.zone_device.source.csummary import has_select
from equiv.zone_device.source.files import load_tree, macro_env
from equiv.zone_device.source.src_layout import SrcStruct, source_structs

log = logging.getLogger(__name__)

#: Largest order proved: the PUD order with 4K pages (1 GiB compounds).
MAX_ORDER = 18


@frozen(eq=False)
class Side:
    """One tree of the comparison, parsed once."""

    label: str  # "base" or "patched"
    tree: KernelTree
    env: MacroEnv
    structs: dict[str, SrcStruct]


@frozen
class PatchCell:
    """Every obligation of one (type, order) cell."""

    ptype: str
    order: int
    verdict: Verdict
    seconds: float
    roles: tuple[RoleResult, ...]
    lemmas: int
    summarised: tuple[str, ...]
    interpreted: tuple[tuple[str, str], ...]
    trusted: tuple[str, ...]
    #: the order class (lo, hi) whose one proof (``order_hi``, :func:`check_patch_cell`)
    #: proved this order's cell; None: the order's own proof
    row_class: tuple[int, int] | None = None


@frozen
class PatchRun:
    """Every cell of one base/patched comparison."""

    base: str
    base_version: str
    patched: str
    config: str
    cells: tuple[PatchCell, ...]
    seconds: float

    @property
    def verdict(self) -> Verdict:
        return worst([c.verdict for c in self.cells])

    @property
    def interpreted(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted({x for c in self.cells for x in c.interpreted}))

    @property
    def trusted(self) -> tuple[str, ...]:
        return tuple(sorted({t for c in self.cells for t in c.trusted}))

    @property
    def summarised(self) -> tuple[str, ...]:
        return tuple(sorted({t for c in self.cells for t in c.summarised}))


def side(label: str, tree: KernelTree, cfg: Config) -> Side:
    env = macro_env(cfg)
    return Side(label, tree, env, source_structs(tree, env))


def _layout(base: Side, cfg: Config) -> Layout:
    return model_for(base.tree, None).layout(Layout.from_config(cfg))


def _run(sd: Side, sc: Scenario, inp: Inputs, initial: Callable[[Val], PageState],
         initial_pb: Callable[[Val], Val], oracle: Oracle | None,
         stack_init: Callable[[str, int], PageState] | None = None,
         summarise: bool = True) -> tuple[Interp, State]:
    it = Interp(sd.tree, sd.env, sd.structs, sc, inp, oracle, summarise=summarise,
                label=sd.label, stack_init=stack_init)
    state = initial_state(inp, initial, it.canon, initial_pb)
    zone = Ptr("obj", "struct zone", obj="zone", nonnull=True)
    pgmap = Ptr("obj", "struct dev_pagemap", obj="pgmap", addr=inp.pgmap,
                nonnull=bv.ne(inp.pgmap, bv.const_like(inp.pgmap, 0)))
    state, _ = it.call("memmap_init_zone_device",
                       [zone, CInt(inp.start_pfn), CInt(inp.nr_pages), pgmap], state)
    return it, state


def check_patch_cell(base: Side, patched: Side, cfg: Config, ptype: MemoryType | None,
                     order: int, *, timeout_ms: int = 60_000,
                     order_hi: int | None = None) -> PatchCell:
    """Prove the patched tree's C equal to the base tree's for one cell.

    With ``order_hi``, an order class's probe (as
    :func:`equiv.zone_device.source.fidelity.check_fidelity_cell`): one proof for the orders ``order ..=
    order_hi``, ``vmemmap_shift`` symbolic; it stops at the first obligation it does not
    prove, never replays a difference and never runs the bounded search."""
    if not 0 <= order <= (order if order_hi is None else order_hi) <= MAX_ORDER:
        raise InputError(f"order {order} out of range; valid: 0..{MAX_ORDER}")
    t_cell = time.perf_counter()
    L = _layout(base, cfg)
    if base.structs["page"].size != patched.structs["page"].size:
        raise InputError(f"the patched tree's struct page is {patched.structs['page'].size} "
                         f"bytes, the base tree's {base.structs['page'].size}: the trees' "
                         "memory cannot be compared byte for byte")
    sc = Scenario(L, ptype, order, order_hi)
    inp, early = symbolic_inputs(L)
    pages = z3.Array("mem0.bypfn", z3.BitVecSort(64), z3.BitVecSort(8 * L.size))
    pbarr = z3.Array("mem0.pageblock", z3.BitVecSort(64), z3.BitVecSort(PB_BITS))
    assume = [a for _, a in assumptions(sc, inp)]
    roles: list[RoleResult] = []
    ptname = ptype.kname if ptype else "ALL"
    its: list[Interp] = []

    def done() -> PatchCell:
        lemmas = sum(len(i.lemmas) for i in its)
        return PatchCell(ptname, order, worst([r.verdict for r in roles]),
                         time.perf_counter() - t_cell, tuple(roles), lemmas,
                         tuple(sorted({s for i in its for s in
                                       (f"{i.label}: {w}" for w in i.summarised)})),
                         tuple(sorted({(f"{i.label}: {n}", w) for i in its
                                       for n, w in i.interpreted.items()})),
                         tuple(sorted({t for i in its for t in i.trusted_used})))

    s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    s.add(*assume)
    if s.check() != z3.sat:
        roles.append(RoleResult("assumptions_satisfiable", Verdict.VACUOUS, 0.0,
                                reason="the assumptions cannot hold"))
        return done()

    why = _prove(base, patched, sc, inp, early, pages, pbarr, assume, its, roles, timeout_ms,
                 summarise=True)
    if why and not sc.is_class and sc.stride * BOUNDED_COMPOUNDS <= MAX_TRIPS:
        # the summaries are not justified: look for a difference with the loops unrolled,
        # at most BOUNDED_COMPOUNDS compounds (bounded model checking; a find is replayed
        # with real loops), and report what it finds in place of the unknown roles
        bounded: list[RoleResult] = []
        _prove(base, patched, sc, inp, early, pages, pbarr,
               [*assume, z3.ULE(inp.nr_pages, BOUNDED_COMPOUNDS * sc.stride)], [], bounded,
               timeout_ms, summarise=False)
        merge_found(roles, bounded, f"found with the loops unrolled (at most "
                                    f"{BOUNDED_COMPOUNDS} compounds) after {why}")
    return done()


def _prove(base: Side, patched: Side, sc: Scenario, inp: Inputs, early: z3.FuncDeclRef,
           pages: z3.ArrayRef, pbarr: z3.ArrayRef, assume: list[z3.BoolRef],
           its: list[Interp], roles: list[RoleResult], timeout_ms: int, *,
           summarise: bool) -> str:
    """Interpret both trees and decide every role, appending to ``its`` and ``roles``.
    Returns "" if the loop lemmas hold (or none were needed), else why not."""
    t_cell = time.perf_counter()
    assert summarise or not sc.is_class, "an order class is never unrolled"
    # the tail index's width in the queries: the order (the highest of a class)
    bits = sc.orders[-1]

    def initial(pfn: Val) -> PageState:
        return PageState(bits=z3.Select(pages, pfn))

    def initial_pb(b: Val) -> Val:
        return z3.Select(pbarr, b)

    finals: list[State] = []
    for sd in (base, patched):
        try:
            it, st = _run(sd, sc, inp, initial, initial_pb, Oracle(assume, _cases(inp)),
                          summarise=summarise)
        except InterpError as e:
            roles.append(RoleResult(f"interpret_{sd.label}", Verdict.UNKNOWN,
                                    time.perf_counter() - t_cell, reason=str(e)))
            return f"interpreting {sd.label}: {e}"
        its.append(it)
        finals.append(st)
        log.debug("interpreted %s: %.1fs", sd.label, time.perf_counter() - t_cell)
    g = geometry(sc, inp)
    c, t = z3.BitVec("c", 64), z3.BitVec("t", 64)
    b = z3.BitVec("pageblock.b", 64)
    obs: list[tuple[str, z3.BoolRef, z3.BoolRef, list[z3.BoolRef]]] = []
    try:
        for role in roles_for(sc.orders[0]):
            if role.name == "pageblock":
                sides = [f.mem.read_pb_any(b) for f in finals]
                obs.append(("pageblock_equal", z3.BoolVal(True), z3.And(sides[0] == sides[1]), []))
                continue
            in_range = z3.ULT(c, g.ncompounds)
            fixed = {"head": 0, "tail1": 1, "tail2": 2}.get(role.name)
            if fixed is not None:
                cons = z3.And(in_range, t == fixed)
            elif role.name == "tail":
                cons = z3.And(in_range, z3.UGE(t, 3), z3.ULT(t, sc.stride_v))
            else:
                # every struct page outside the range's compounds, each by one (c, t):
                # c << order must not wrap (the pages below the first pfn are the
                # compounds past the last one, modulo 2^64)
                cons = z3.And(z3.ULT(t, sc.stride_v), z3.UGE(c, g.ncompounds), no_wrap(sc, c))
            n = pfn_of(sc, g, c, t)
            a, bb = (f.mem.read_any(n, cons) for f in finals)
            # outside the range: first, whether each tree's footprint (the keys it wrote,
            # the blocks of its summarised loops: scalars only) misses the page; only if
            # not, the two trees' pages against each other
            alone = [z3.Not(_bool(f.mem.footprint(n))) for f in finals] \
                if role.name == "outside" else []
            obs.append((f"{role.name}_equal", cons, _words_equal(a.bits, bb.bits), alone))
    except InterpError as e:
        roles.append(RoleResult("interpret_summaries", Verdict.UNKNOWN,
                                time.perf_counter() - t_cell, reason=str(e)))
        return f"interpreting: {e}"
    log.debug("observations built: %.1fs", time.perf_counter() - t_cell)
    if sc.is_class:
        # the class's one proof stands for each order's only if each order passes the
        # vacuity checks of its own cell (its assumptions, every role's constraint)
        t0 = time.perf_counter()
        why = order_not_covered(sc, assume, [(cons, (c, t)) for _, cons, _, _ in obs],
                                timeout_ms)
        roles.append(RoleResult("orders_covered", Verdict.UNKNOWN if why else Verdict.PROVED,
                                time.perf_counter() - t0, reason=why))
        if why:
            return why
    t0 = time.perf_counter()
    # the assumptions no order enters (see equiv.zone_device.source.fidelity)
    free = order_free(sc, inp, assume)
    why = check_lemmas([lm for it in its for lm in it.lemmas], assume, timeout_ms, sc, free)
    lemma_ok = not why
    if summarise:
        roles.append(RoleResult("loop_summary_lemmas",
                                Verdict.PROVED if lemma_ok else Verdict.UNKNOWN,
                                time.perf_counter() - t0, reason=why))
    if sc.is_class and not lemma_ok:
        return why
    contexts: Contexts = {}  # the roles' query contexts, shared where they are one
    for name, cons, same, alone in obs:
        t0 = time.perf_counter()
        out: Verdict | str | _RenamedModel = Verdict.PROVED
        for j, unchanged in enumerate(alone):
            out = _check_role(name, cons, unchanged, assume, c, t, inp, bits, timeout_ms,
                              contexts=contexts, free=free, what=f"alone{j}")
            if out is not Verdict.PROVED:
                break
        if out is not Verdict.PROVED or not alone:
            out = _check_role(name, cons, same, assume, c, t, inp, bits, timeout_ms,
                              contexts=contexts, free=free)
        roles.append(role_result(
            name, out, time.perf_counter() - t0, lemma_ok, sc.is_class,
            lambda n, m, dt: _refute(base, patched, sc, n, m, inp, early, pages, pbarr,
                                     {"c": c, "t": t, "b": b}, dt, summarise=summarise)))
        if sc.is_class and out is not Verdict.PROVED:
            return f"{name}: {roles[-1].reason}"
    return why


def role_result(name: str, out: Verdict | str | _RenamedModel, dt: float, lemma_ok: bool,
                is_class: bool, refute: Callable[[str, _RenamedModel, float], RoleResult]
                ) -> RoleResult:
    """The result of a page role whose query (:func:`_check_role`) gave ``out``, in a cell
    of either source-derived proof (this one, ``--linux``'s).  An order class's probe
    proves everything or stands for nothing: a role it does not prove is UNKNOWN there
    (:func:`class_miss`; each order is then decided, any difference replayed, in its own
    cell, and the caller stops the probe).  A difference between summaries whose lemmas
    are not proved is no finding, and its replay with the loops as written may not end
    (the model's range is unbounded): UNKNOWN (the bounded search looks for a real one).
    Any other difference is replayed by ``refute``; no difference: :func:`undisproved`."""
    if is_class and out is not Verdict.PROVED:
        return RoleResult(name, Verdict.UNKNOWN, dt, reason=class_miss(out))
    if isinstance(out, _RenamedModel) and not lemma_ok:
        return RoleResult(name, Verdict.UNKNOWN, dt, reason="a difference under loop "
                          "summaries whose lemmas are not proved")
    if isinstance(out, _RenamedModel):
        return refute(name, out, dt)
    return undisproved(name, out, dt, lemma_ok)


#: compounds named one by one in a role's query (the loops' first iterations are peeled, so
#: the first compounds are written by other statements than the rest); the others together
SPLIT_COMPOUNDS = 4
#: budget of one query deciding an ite condition of a role's terms (ms)
DECIDE_MS = 2_000
#: compounds the bounded search (loops unrolled) covers when the summaries' lemmas fail
BOUNDED_COMPOUNDS = 2


def no_wrap(sc: Scenario, c: z3.BitVecRef) -> z3.BoolRef:
    """``c << order`` does not wrap: ``c < 2^(64 - order)`` (the pages below the first
    pfn are the compounds past the last one, modulo 2^64); the order may be a class's."""
    if not sc.is_class:
        return z3.ULT(c, z3.BitVecVal(1 << (64 - sc.order), 64)) if sc.order else z3.BoolVal(True)
    return z3.ULT(c, z3.BitVecVal(1, 64) << (64 - sc.order_v))


def class_miss(out: object) -> str:
    """Why an order class's probe does not prove a role (``out`` as a role's query gives
    it): no verdict for the class, each order decides in its own cell."""
    what = ("a difference at some order of the class" if isinstance(out, _RenamedModel)
            else "VACUOUS" if out is Verdict.VACUOUS else f"unknown: {out}")
    return f"not proved for the whole order class ({what}): decided per order"


def _bool(c: bool | z3.BoolRef) -> z3.BoolRef:
    return z3.BoolVal(c) if isinstance(c, bool) else c


def _words_equal(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BoolRef:
    """``a == b`` as one equation per 64-bit word (a struct page's words are decided apart)."""
    w = a.size()
    if w <= 64:
        return a == b
    return z3.And(*(z3.Extract(min(hi, w) - 1, lo, a) == z3.Extract(min(hi, w) - 1, lo, b)
                    for lo, hi in ((lo, lo + 64) for lo in range(0, w, 64))))


class _Context:
    """A role's solver for :func:`specialise`: a condition over scalars only is decided by a
    bit-vector solver with uninterpreted functions (QF_UFBV: ``early_section()`` is one)
    holding the same assertions, much faster than the array solver on the pfn arithmetic
    (plain QF_BV gave up at once on every condition with ``early_section()``); one that
    reads a struct page by the full solver."""

    def __init__(self, full: z3.Solver, scalar: z3.Solver) -> None:
        self.full, self.scalar = full, scalar
        self._last: z3.Solver | None = None
        self._model: z3.ModelRef | None = None

    def check(self, *extra: z3.BoolRef) -> z3.CheckSatResult:
        if all(not has_select(x) for x in extra):
            try:
                r = self.scalar.check(*extra)
                self._last = self.scalar
                return r
            except z3.Z3Exception:  # a term the scalar solver refuses: the full solver
                pass
        self._last = self.full
        return self.full.check(*extra)

    def model(self) -> z3.ModelRef:
        """A model of the assertions (computed once: they do not change)."""
        if self._model is None:
            self.full.check()
            self._model = self.full.model()
        return self._model

    def last_model(self) -> z3.ModelRef:
        """The model of the last check (which was satisfiable)."""
        if self._last is None:
            raise z3.Z3Exception("no check yet")
        return self._last.model()


class _Shared:
    """One context of a role's cases, shared by the roles whose case has the same assertions
    once the fixed indices are put in (the head, tail 1 and tail 2 of compound ``c == 0``
    under one altmap case are one context): its solver, whether the assertions hold, and
    what :func:`specialise` decided in it."""

    def __init__(self, hyp: list[z3.BoolRef], timeout_ms: int) -> None:
        self.hyp = hyp
        self.solver = z3.SolverFor("QF_AUFBV")
        self.solver.set("timeout", timeout_ms)
        self.solver.add(*hyp)
        self._present: z3.CheckSatResult | None = None
        self.reason = ""
        self._context: _Context | None = None
        self.decided: dict[int, tuple[z3.BoolRef, z3.BoolRef]] = {}
        self.models: list[z3.ModelRef] = []

    @property
    def present(self) -> z3.CheckSatResult:
        """Whether the assertions hold (asked on first use; ``reason`` says why unknown)."""
        if self._present is None:
            self._present = self.solver.check()
            if self._present == z3.unknown:
                self.reason = self.solver.reason_unknown()
        return self._present

    @property
    def context(self) -> _Context:
        """The solvers :func:`specialise` asks (made on first use)."""
        if self._context is None:
            # deciding an ite condition is an optimisation: an undecided one stays in the
            # term, so these queries get a short budget
            scalar = z3.SolverFor("QF_UFBV")
            scalar.set("timeout", DECIDE_MS)
            scalar.add(*self.hyp)
            full = z3.SolverFor("QF_AUFBV")
            full.set("timeout", DECIDE_MS)
            full.add(*self.hyp)
            self._context = _Context(full, scalar)
        return self._context


#: the contexts of one cell's roles by the ids of their assertions (each entry holds them)
Contexts = dict[tuple[int, ...], _Shared]


class _RenamedModel:
    """A model of a role's query, read in the cell's variables: the query may rename them
    (``rename`` gives each renamed variable as a term of the query's variables; empty:
    none renamed).  Every model a role returns is one of these, so none is mistaken for a
    verdict."""

    def __init__(self, model: z3.ModelRef, rename: Renaming) -> None:
        self.model, self.rename = model, rename

    def eval(self, e: z3.ExprRef, model_completion: bool = False) -> z3.ExprRef:
        return self.model.eval(z3.substitute(e, *self.rename), model_completion=model_completion)


def _first_pfn_renaming(inp: Inputs, on: bool) -> Renaming:
    """With an altmap, the range's first pfn ``start_pfn + reserve + free`` and its page
    count ``nr_pages - reserve - free`` as two fresh inputs F and N (a bijection of the
    inputs: ``start_pfn = F - reserve - free``, ``nr_pages = N + reserve + free``): both
    trees' terms and the role's index then name the first pfn in one form, which the
    rewriter cancels syntactically."""
    if not on:
        return []
    off = inp.altmap_reserve + inp.altmap_free
    f, n = z3.BitVec("first_pfn", 64), z3.BitVec("first_nr_pages", 64)
    return [(inp.start_pfn, f - off), (inp.nr_pages, n + off)]


def _tail_renaming(t: z3.BitVecRef, order: int) -> Renaming:
    """A tail index below the compound size, ``t < 2**order``, as the zero extension of an
    ``order``-bit variable: the page's pfn ``first + (c << order) + t`` is then a
    concatenation, which :func:`split_sums` keeps split through the loop summaries' owner
    and block arithmetic.  (Exact under the role's ``t < stride``; for an order class,
    ``order`` is its highest order: ``t < stride <= 2**order``.)"""
    if order == 0:
        return [(t, z3.BitVecVal(0, 64))]
    return [(t, z3.ZeroExt(64 - order, z3.BitVec("t_low", order)))]


def _cases(inp: Inputs) -> list[Case]:
    """Without and with an altmap, the latter with the first pfn in one form
    (:func:`_first_pfn_renaming`): the split under which the interpreter's oracle decides
    (each case's terms are simpler than the two together: at order 9 the patched tree's
    interpretation took 7.5 s instead of 59 s).  The loop lemmas are not split: measured,
    they took longer split (98 s against 73 s at order 9)."""
    a = inp.altmap_valid
    return [(z3.Not(a), [(a, z3.BoolVal(False))]),
            (a, [(a, z3.BoolVal(True)), *_first_pfn_renaming(inp, True)])]


def _check_role(name: str, cons: z3.BoolRef, same: z3.BoolRef, assume: list[z3.BoolRef],
                c: z3.BitVecRef, t: z3.BitVecRef, inp: Inputs, order: int,
                timeout_ms: int, split: int = SPLIT_COMPOUNDS,
                contexts: Contexts | None = None, free: list[z3.BoolRef] | None = None,
                what: str = "") -> Verdict | str | _RenamedModel:
    """Decide one role: PROVED, VACUOUS, the solver's reason for unknown, or a model of a
    difference.  The role is split by compound (``c == 0 .. split - 1`` and the
    rest; one case for the pages outside the range and for the bitmap) and by altmap, the
    index and first pfn are renamed (:func:`_tail_renaming`, :func:`_first_pfn_renaming`),
    and in each case the ``ite`` conditions of both trees' pages are decided first
    (:func:`specialise`).  ``contexts`` keeps each case's context for the next role (one
    per cell: the roles' cases that are one query context share their decisions).  With
    ``free`` (the order-free part of ``assume``, :func:`~equiv.zone_device.source.common.order_free`)
    each case is first asked under those alone (as the loop lemmas are,
    :func:`~equiv.zone_device.source.common.check_lemmas`): the pageblock cells of a tree whose
    pageblock loop the order does not enter are then proved once per process.  ``what``
    tells apart the claims one cell asks of one role (:func:`~equiv.zone_device.source.common.free_first`
    names each case by role, ``what`` and case)."""
    fixed_t = {"head_equal": 0, "tail1_equal": 1, "tail2_equal": 2}.get(name)
    subs_t = [(t, z3.BitVecVal(fixed_t, 64))] if fixed_t is not None else \
        _tail_renaming(t, order) if name in ("tail_equal", "outside_equal") else []
    cases0: list[tuple[z3.BoolRef, Renaming]]
    if name == "outside_equal" or name == "pageblock_equal":
        cases0 = [(cons, subs_t)]
    else:
        cases0 = [(z3.And(cons, c == i), [(c, z3.BitVecVal(i, 64)), *subs_t])
                  for i in range(split)]
        cases0.append((z3.And(cons, z3.UGE(c, split)), subs_t))
    # with and without an altmap: the first pfn in one form (see _first_pfn_renaming)
    altmap = inp.altmap_valid
    parts0 = same.children() if z3.is_and(same) else [same]
    any_present = False
    if contexts is None:
        contexts = {}

    def context(hyp: list[z3.BoolRef], fixed: Renaming) -> _Shared:
        # the queries are asked with the fixed indices put into the assertions too (the
        # terms no longer mention them): equisatisfiable, and the same context for every
        # role of this compound, whose decisions are then shared
        hyp_q = [z3.simplify(z3.substitute(h, *fixed)) for h in hyp] if fixed else hyp
        key = tuple(h.get_id() for h in hyp_q)
        ctx = contexts.get(key)
        if ctx is None:
            ctx = contexts[key] = _Shared(hyp_q, timeout_ms)
        return ctx

    proved: list[tuple[list[z3.BoolRef], Renaming]] = []
    for i, ((case0, subs0), on) in enumerate((cs, on) for cs in cases0 for on in (False, True)):
        fwd = _first_pfn_renaming(inp, on)
        # the variables the query keeps (c when not fixed, t's low bits), as the model
        # will name them: the fixed values go into the terms only
        rename = [*fwd, *(x for x in subs_t if not z3.is_bv_value(x[1]))]
        subs = [*subs0, (altmap, z3.BoolVal(on)), *fwd]
        case = [z3.substitute(case0, *rename), altmap if on else z3.Not(altmap)]
        hyp = [*(z3.simplify(z3.substitute(a, (altmap, z3.BoolVal(on)), *fwd)) for a in assume),
               *case]
        fixed = [x for x in subs0 if z3.is_bv_value(x[1])]
        # a fixed index is put into the terms first: most of their ite conditions (is
        # this pfn that struct page?) then fold syntactically
        parts = substitute_all(parts0, subs, split_sums)
        tag, key, fhyp = (name, what, str(i)), (), []
        try_free = False
        if free is not None:
            # first under the order-free assumptions alone: proved there, it is proved here,
            # and the next cell that asks the same case takes the proof (FREE_PROVED)
            fhyp = [*(z3.simplify(z3.substitute(a, (altmap, z3.BoolVal(on)), *fwd))
                      for a in free), *case]
            fhyp = [z3.simplify(z3.substitute(h, *fixed)) for h in fhyp] if fixed else fhyp
            key = (*(h.get_id() for h in fhyp), -1, *(p.get_id() for p in parts))
            try_free = free_first(tag, key, [*fhyp, *parts])
            if try_free and key in FREE_PROVED:
                proved.append((hyp, fixed))  # whether it can hold is asked only if needed
                continue
        ctx = context(hyp, fixed)
        if ctx.present == z3.unsat:
            continue
        if ctx.present != z3.sat:
            return f"role constraint: {ctx.reason}"
        any_present = True
        if try_free:
            if _case_words(name, context(fhyp, []), parts, [], [], timeout_ms,
                           free=True) is None:
                FREE_PROVED[key] = [*fhyp, *parts]
                continue
            FREE_FAILED.add(tag)
        out = _case_words(name, ctx, parts, hyp if fixed else [], rename, timeout_ms)
        if out is not None:
            return out
    # the cases proved by an earlier cell: the role is VACUOUS only if none of them (nor any
    # other case) can hold
    for hyp, fixed in proved if not any_present else []:
        ctx = context(hyp, fixed)
        if ctx.present == z3.sat:
            any_present = True
            break
        if ctx.present != z3.unsat:
            return f"role constraint: {ctx.reason}"
    return Verdict.PROVED if any_present else Verdict.VACUOUS


def _case_words(name: str, ctx: _Shared, parts: list[z3.BoolRef], hyp: list[z3.BoolRef],
                rename: Renaming, timeout_ms: int, free: bool = False) -> str | _RenamedModel | None:
    """One case of a role in its context: the words' differences specialised
    (:func:`specialise`), then each asked; None if none can differ, else the solver's
    reason for an unknown answer or a model of a difference (``hyp``: the case's assertions
    with its fixed indices, which the model must name; empty if it has none).  With
    ``free`` (the context has only the order-free assumptions) a difference is no finding:
    "" is returned for it, and the case is asked again with every assumption."""
    t0 = time.perf_counter()
    diffs = specialise([z3.Not(p) for p in parts], ctx.context, ctx.decided, ctx.models)
    live = [d for d in diffs if not z3.is_false(d)]
    log.debug("%s%s: specialised in %.1fs, %d live words", name, " (order-free)" if free else "",
              time.perf_counter() - t0, len(live))
    s = ctx.solver
    for d in live:
        t0 = time.perf_counter()
        r = s.check(d)
        log.debug("  word: %s %.1fs", r, time.perf_counter() - t0)
        if free and r != z3.unsat:
            return ""
        if r == z3.sat and hyp:
            # the model must name the fixed indices: asked again of the assertions that
            # keep them
            s = z3.SolverFor("QF_AUFBV")
            s.set("timeout", timeout_ms)
            s.add(*hyp)
            r = s.check(d)
        if r == z3.sat:
            return _RenamedModel(s.model(), rename)
        if r != z3.unsat:
            return f"solver: {s.reason_unknown()}"
    return None


def _refute(base: Side, patched: Side, sc: Scenario, name: str, model: _RenamedModel,
            inp: Inputs, early: z3.FuncDeclRef, pages: z3.ArrayRef, pbarr: z3.ArrayRef,
            idx: dict[str, z3.BitVecRef], dt: float, summarise: bool) -> RoleResult:
    """Replay a model on both trees in the concrete domain, with the loops summarised or
    run as written as in the proof that found it; the differing fields."""
    L = sc.layout
    mv = ModelValues(model, L, early, pages, pbarr)
    scalars, index = mv.scalars(inp), mv.indices(idx)
    cpage, cell, stack = mv.page, mv.cell, mv.stack
    cinp = mv.inputs(scalars)
    finals = [_run(sd, sc, cinp, cpage, cell, None, stack, summarise=summarise)[1]
              for sd in (base, patched)]
    if name == "pageblock_equal":
        bv_ = CBV(index["b"], 64)
        sv, fv = (int(f.mem.read_pb_any(bv_)) for f in finals)
        run = ConcreteRun(sv, fv, None, None)
        pfn = None
        keep = {"b": index["b"]}
    else:
        g = geometry(sc, cinp)
        pfn_v = pfn_of(sc, g, CBV(index["c"], 64), CBV(index["t"], 64))
        run = ConcreteRun(finals[0].mem.read_any(pfn_v), finals[1].mem.read_any(pfn_v),
                          int(pfn_v), None)
        pfn = int(pfn_v)
        keep = {"c": index["c"], "t": index["t"]}
    page_index = {"head_equal": 0, "tail1_equal": 1, "tail2_equal": 2}.get(name)
    diffs = page_diffs(L, page_index, run)
    if not diffs:
        raise InternalMismatch(f"patch proof, {name}: the solver's difference did not reproduce "
                               "in the concrete replay of both trees")
    return RoleResult(name, Verdict.REFUTED, dt, diffs, tuple(sorted(scalars.items())),
                      tuple(sorted(keep.items())), pfn)


def run_patch_proof(base_root: Path, patched_root: Path, cfg: Config,
                    types: list[MemoryType | None], orders: list[int], *, label: str,
                    timeout_ms: int = 60_000, jobs: int = 1, classes: bool = False) -> PatchRun:
    """Every (type, order) cell; with ``jobs`` > 1 in that many worker processes (largest
    order first; the result order does not depend on it).  ``classes``: each order class
    first tried with one probe, as :func:`equiv.zone_device.source.fidelity.run_fidelity` does (off by
    default, for the same measured reason)."""
    t0 = time.perf_counter()
    base_tree = load_tree(base_root)
    sides: list[Side] = []

    def run(todo: list[tuple[MemoryType | None, int, int | None]]) -> list[PatchCell]:
        if jobs <= 1 or len(todo) <= 1:
            if not sides:
                sides.extend((side("base", base_tree, cfg),
                              side("patched", load_tree(patched_root), cfg)))
            base, patched = sides
            return [check_patch_cell(base, patched, cfg, ty, o, timeout_ms=timeout_ms,
                                     order_hi=hi) for ty, o, hi in todo]
        return list(map_in_workers(
            _cell_worker, [(str(base_root), str(patched_root), cfg, ty, o, timeout_ms, hi)
                           for ty, o, hi in todo], jobs,
            order=sorted(range(len(todo)),
                         key=lambda i: (-((todo[i][2] or todo[i][1]) - todo[i][1]), -todo[i][1]))))

    cuts = order_classes(_layout(side("base", base_tree, cfg), cfg), orders) if classes else []
    in_class = {o for lo, hi in cuts for o in range(lo, hi + 1)}
    first: list[tuple[MemoryType | None, int, int | None]] = [
        *((ty, lo, hi) for lo, hi in cuts for ty in types),
        *((ty, o, None) for o in orders if o not in in_class for ty in types)]
    cells: dict[tuple[MemoryType | None, int], PatchCell] = {}
    again: list[tuple[MemoryType | None, int, int | None]] = []
    for (ty, lo, hi), cell in zip(first, run(first), strict=True):
        if hi is None:
            cells[ty, lo] = cell
        elif cell.verdict is Verdict.PROVED:
            for o in range(lo, hi + 1):
                cells[ty, o] = evolve(cell, order=o, row_class=(lo, hi))
        else:  # the probe stands for nothing: each order of the class in its own cell
            again += [(ty, o, None) for o in range(lo, hi + 1)]
    for (ty, o, _), cell in zip(again, run(again), strict=True):
        cells[ty, o] = cell
    return PatchRun(str(base_root), base_tree.version, label, cfg.name,
                    tuple(cells[ty, o] for o in orders for ty in types),
                    time.perf_counter() - t0)


def _cell_worker(base_root: str, patched_root: str, cfg: Config, ptype: MemoryType | None,
                 order: int, timeout_ms: int, order_hi: int | None = None) -> PatchCell:
    """One cell in a worker process (tree-sitter trees do not cross processes)."""
    b = side("base", load_tree(base_root), cfg)
    p = side("patched", load_tree(patched_root), cfg)
    return check_patch_cell(b, p, cfg, ptype, order, timeout_ms=timeout_ms, order_hi=order_hi)


__all__ = ["MAX_ORDER", "PatchCell", "PatchRun", "Side", "check_patch_cell", "role_result",
           "run_patch_proof", "side"]

"""Source-derived semantics: the tree's own C, interpreted, against the hand-written slow path.

For one kernel tree, one configuration and one modelled version (:data:`MODELS`), each cell
(pgmap type, or all five at once with ``pgmap->type`` symbolic; compound order) runs

* the hand-written slow path of that version (:mod:`equiv.slow_path` for v7.3-rc1,
  :mod:`equiv.slow_v612y` for 6.12.y, or a named ``--compare`` variant), and
* ``memmap_init_zone_device()`` interpreted from the tree's text (:mod:`equiv.cinterp`),

on the same symbolic inputs: start pfn, number of pages, node, ``pgmap`` pointer and type,
altmap, early sections, vmemmap/direct-map bases, and the initial contents of every struct
page (one array indexed by pfn, shared by both sides) and pageblock bitmap cell.  The bounds
are part of the assumptions: at most :data:`MAX_COMPOUNDS` compounds, orders up to
:data:`MAX_ORDER`; the interpreter unrolls its loops within them.

Obligations per cell, each a fresh z3 query: the assumptions are satisfiable (else VACUOUS);
the hand path's loop-summary lemmas; and for each page role (head, tail 1, tail 2, tail t >= 3
of a symbolic compound c, a struct page past the range, a symbolic pageblock cell) the two
final states are equal.  A SAT role is replayed concretely on both sides (the interpreter on
plain integers, the hand path with real loops) before it is reported as REFUTED.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import z3
from attrs import evolve, frozen

from equiv import bv
from equiv.bv import CBV, Val
from equiv.check import Verdict, worst
from equiv.cinterp import CInt, Interp, InterpError, Oracle, Ptr, State, initial_state
from equiv.config import Config
from equiv.counterexample import ConcreteRun, FieldDiff, page_diffs
from equiv.errors import InputError, InternalMismatch
from equiv.ktree import KernelTree, MacroEnv, macro_env
from equiv.loops import Ctx
from equiv.memmap import Inputs, MemoryType, Scenario, assumptions, geometry, pfn_of, symbolic_inputs
from equiv.obligations import roles_for
from equiv.page_model import PB_BITS, ConcreteMemory, Layout, Memory, PageState, SymMemory
from equiv.slow_path import memmap_init_zone_device
from equiv.slow_v612y import layout_612, path_612y
from equiv.src_layout import SrcStruct, source_structs

MAX_COMPOUNDS = 4
MAX_ORDER = 4

HandPath = Callable[[Ctx, Scenario, Inputs], Memory]


@frozen
class Model:
    """A hand-written slow path of one kernel version."""

    name: str
    version: str  # kernel version prefix the tree must have, e.g. "6.12"
    summary: str
    path: HandPath
    layout: Callable[[Layout], Layout]


def _same_layout(L: Layout) -> Layout:
    return L


def _compare_612(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
    from equiv.slow_variants import comparison
    return comparison("v6.12").path(ctx, sc, inp)


MODELS: dict[str, Model] = {m.name: m for m in (
    Model("v7.3-rc1", "7.3", "the base slow path (equiv/slow_path.py)", memmap_init_zone_device,
          _same_layout),
    Model("v6.12.y", "6.12", "6.12 stable, 6.12.117 (equiv/slow_v612y.py)", path_612y, layout_612),
    Model("v6.12", "6.12", "--compare v6.12: the v6.12 release as recalled in the reference "
          "(equiv/slow_variants.py)", _compare_612, _same_layout),
)}


def model_for(tree: KernelTree, name: str | None) -> Model:
    """The model named ``name``, or the one whose version prefix matches the tree's.

    Raises:
        InputError: unknown name; or the tree's version has no model and none was named.
    """
    if name is not None:
        if name not in MODELS:
            raise InputError(f"unknown --model {name!r}; valid: {', '.join(MODELS)}")
        return MODELS[name]
    for m in MODELS.values():
        if tree.version.startswith(m.version + "."):
            return m
    return MODELS["v7.3-rc1"]


@frozen
class RoleResult:
    """One obligation of a cell."""

    name: str
    verdict: Verdict
    seconds: float
    diffs: tuple[FieldDiff, ...] = ()
    inputs: tuple[tuple[str, int | bool], ...] = ()
    index: tuple[tuple[str, int], ...] = ()
    pfn: int | None = None
    reason: str = ""


@frozen
class FidelityCell:
    """One (type, order) cell of the source-derived proof."""

    ptype: str
    order: int
    verdict: Verdict
    seconds: float
    roles: tuple[RoleResult, ...]
    interpreted: tuple[tuple[str, str], ...]  # (function or macro, file:line)
    trusted: tuple[str, ...]
    oracle_checks: int


@frozen(eq=False)
class Setup:
    """Everything shared by the cells of one run."""

    tree: KernelTree
    config: Config
    env: MacroEnv
    structs: dict[str, SrcStruct]
    model: Model


def setup(tree: KernelTree, cfg: Config, model: Model) -> Setup:
    """Parse the structs once and resolve the macros for ``cfg``."""
    env = macro_env(cfg)
    return Setup(tree, cfg, env, source_structs(tree, env), model)


def _inputs(sc: Scenario) -> tuple[Inputs, z3.FuncDeclRef, z3.ArrayRef, z3.ArrayRef]:
    """Symbolic inputs whose struct pages are one array indexed by pfn."""
    L = sc.layout
    inp, early = symbolic_inputs(L)
    pages = z3.Array("mem0.bypfn", z3.BitVecSort(64), z3.BitVecSort(8 * L.size))
    pb = z3.Array("mem0.pageblock", z3.BitVecSort(64), z3.BitVecSort(PB_BITS))
    g = geometry(sc, inp)
    mem = SymMemory(lambda c, s: PageState(bits=z3.Select(pages, pfn_of(sc, g, c, s))),
                    lambda b: z3.Select(pb, b))
    return evolve(inp, mem=mem), early, pages, pb


def _interp_run(st: Setup, sc: Scenario, inp: Inputs, initial: Callable[[Val], PageState],
                oracle: Oracle | None) -> tuple[Interp, State]:
    it = Interp(st.tree, st.env, st.structs, sc, inp, oracle)
    state = initial_state(inp, initial, it.canon)
    zone = Ptr("obj", "struct zone", obj="zone", nonnull=True)
    pgmap = Ptr("obj", "struct dev_pagemap", obj="pgmap", addr=inp.pgmap,
                nonnull=bv.ne(inp.pgmap, bv.const_like(inp.pgmap, 0)))
    state, _ = it.call("memmap_init_zone_device",
                       [zone, CInt(inp.start_pfn), CInt(inp.nr_pages), pgmap], state)
    return it, state


def _read_pb(state: State, inp: Inputs, b: Val) -> Val:
    out = inp.mem.read_pb(b)
    for b2, cell in state.pb.values():
        out = bv.ite(bv.eq(b, b2), cell, out)
    return out


def check_fidelity_cell(st: Setup, ptype: MemoryType | None, order: int, *,
                        timeout_ms: int = 60_000) -> FidelityCell:
    """Prove the interpreted tree equal to the hand-written path for one cell.

    Raises:
        InputError: ``order`` is outside ``0..MAX_ORDER``.
    """
    if not 0 <= order <= MAX_ORDER:
        raise InputError(f"order {order} out of range for the source-derived proof; valid: "
                         f"0..{MAX_ORDER}")
    t_cell = time.perf_counter()
    L = st.model.layout(Layout.from_config(st.config))
    sc = Scenario(L, ptype, order)
    inp, early, pages, pb = _inputs(sc)
    assume = [a for _, a in assumptions(sc, inp)]
    assume.append(z3.ULE(inp.nr_pages, MAX_COMPOUNDS * sc.stride))  # type: ignore[arg-type]
    roles: list[RoleResult] = []
    ptname = ptype.kname if ptype else "ALL"

    def done() -> FidelityCell:
        return FidelityCell(ptname, order, worst([r.verdict for r in roles]),
                            time.perf_counter() - t_cell, tuple(roles),
                            tuple(sorted(it.interpreted.items())) if it else (),
                            tuple(sorted(it.trusted_used)) if it else (),
                            it.oracle.checks if it and it.oracle else 0)

    it: Interp | None = None
    s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    s.add(*assume)
    if s.check() != z3.sat:
        roles.append(RoleResult("assumptions_satisfiable", Verdict.VACUOUS, 0.0,
                                reason="the assumptions cannot hold"))
        return done()
    ctx = Ctx(symbolic=True)
    ctx.path = "slow"
    slow_mem = st.model.path(ctx, sc, inp)
    try:
        it, state = _interp_run(st, sc, inp, lambda pfn: PageState(bits=z3.Select(pages, pfn)),
                                Oracle(assume))
    except InterpError as e:
        roles.append(RoleResult("interpret", Verdict.UNKNOWN, time.perf_counter() - t_cell,
                                reason=str(e)))
        return done()
    g = geometry(sc, inp)
    # every (compound, tail) the bounds allow, each a concrete index: no aliasing questions
    obs: list[tuple[str, z3.BoolRef, z3.BoolRef, list[tuple[dict[str, int], z3.BoolRef]]]] = []
    for role in roles_for(order):
        if role.name == "pageblock":
            b = z3.BitVec("pageblock.b", 64)
            same = slow_mem.read_pb(b) == _read_pb(state, inp, b)
            obs.append(("pageblock_equal", z3.BoolVal(True), same, [({"b": -1}, z3.Not(same))]))
            continue
        ts = {"head": [0], "tail1": [1], "tail2": [2]}.get(role.name, list(range(3, sc.stride)))
        if role.name == "outside":
            ts = list(range(sc.stride))
        cases: list[tuple[dict[str, int], z3.BoolRef]] = []
        for ci in range(MAX_COMPOUNDS + (role.name == "outside")):
            cv = z3.BitVecVal(ci, 64)
            present = (z3.UGE(cv, g.ncompounds) if role.name == "outside"  # type: ignore[arg-type]
                       else z3.ULT(cv, g.ncompounds))  # type: ignore[arg-type]
            for ti in ts:
                tv = z3.BitVecVal(ti, 64)
                slow = slow_mem.read(cv, tv)
                fast = state.mem.read(pfn_of(sc, g, cv, tv))
                cases.append(({"c": ci, "t": ti}, z3.And(present, slow.bits != fast.bits)))
        any_present = z3.Or(*[z3.ULT(z3.BitVecVal(ci, 64), g.ncompounds)  # type: ignore[arg-type]
                              for ci in range(MAX_COMPOUNDS)]) if role.name != "outside" \
            else z3.ULT(g.ncompounds, MAX_COMPOUNDS + 1)  # type: ignore[arg-type]
        obs.append((f"{role.name}_equal", any_present, z3.Not(z3.Or(*[d for _, d in cases])),
                    cases))
    # lemmas of the hand path's loop summaries
    t0 = time.perf_counter()
    lem = [lm.formula for lm in ctx.lemmas]
    s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    s.add(*assume)
    r = s.check(z3.Not(z3.And(*lem))) if lem else z3.unsat
    lemma_ok = r == z3.unsat
    roles.append(RoleResult("hand_path_loop_lemmas", Verdict.PROVED if lemma_ok else Verdict.UNKNOWN,
                            time.perf_counter() - t0,
                            reason="" if lemma_ok else f"loop lemmas: {r}"))
    for name, cons, _claim, cases in obs:
        t0 = time.perf_counter()
        s = z3.Then("simplify", "propagate-values", "elim-uncnstr", "smt").solver()
        s.set("timeout", timeout_ms)
        s.add(*assume)
        if s.check(cons) != z3.sat:
            roles.append(RoleResult(name, Verdict.VACUOUS, time.perf_counter() - t0,
                                    reason="role constraint unsatisfiable under the assumptions"))
            continue
        # one query per compound (smaller queries; the same claim)
        groups: dict[int, list[z3.BoolRef]] = {}
        for ix, d in cases:
            groups.setdefault(ix.get("c", -1), []).append(d)
        r = z3.unsat
        for diffs in groups.values():
            s.push()
            s.add(z3.Or(*diffs))
            r = s.check()
            if r != z3.unsat:
                break
            s.pop()
        if r == z3.unsat:
            roles.append(RoleResult(name, Verdict.PROVED if lemma_ok else Verdict.UNKNOWN,
                                    time.perf_counter() - t0))
        elif r == z3.sat:
            m = s.model()
            hit = next(ix for ix, d in cases if z3.is_true(m.eval(d, model_completion=True)))
            idx = {"b": z3.BitVec("pageblock.b", 64)} if "b" in hit else \
                {k: z3.BitVecVal(v, 64) for k, v in hit.items()}
            roles.append(_refute(st, sc, name, m, inp, early, pages, pb, idx,
                                 time.perf_counter() - t0))
        else:
            roles.append(RoleResult(name, Verdict.UNKNOWN, time.perf_counter() - t0,
                                    reason=s.reason_unknown()))
    return done()


def _refute(st: Setup, sc: Scenario, name: str, model: z3.ModelRef, inp: Inputs,
            early: z3.FuncDeclRef, pages: z3.ArrayRef, pb: z3.ArrayRef,
            idx: dict[str, z3.BitVecRef], dt: float) -> RoleResult:
    """Replay a model on both sides in the concrete domain; the differing fields."""
    L = sc.layout
    scalars: dict[str, int | bool] = {}
    for k in Inputs.SCALARS:
        v = model.eval(getattr(inp, k), model_completion=True)
        scalars[k] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
    index = {k: model.eval(v, model_completion=True).as_long() for k, v in idx.items()}

    def page_at(pfn: int) -> int:
        return model.eval(z3.Select(pages, z3.BitVecVal(pfn, 64)), model_completion=True).as_long()

    def cell_at(b: int) -> int:
        return model.eval(z3.Select(pb, z3.BitVecVal(b, 64)), model_completion=True).as_long()

    def is_early(n: int) -> bool:
        return z3.is_true(model.eval(early(z3.BitVecVal(n, 64)), model_completion=True))

    unwritten = ((),) * L.size

    def cpage(pfn: int) -> PageState:
        return PageState(bits=CBV(page_at(pfn), 8 * L.size), origin=unwritten)

    def make() -> Inputs:
        vals = {k: (v if isinstance(v, bool) else CBV(v, 32 if k == "pgmap_type" else 64))
                for k, v in scalars.items()}
        probe = Inputs(early_section=lambda n: is_early(int(n)),  # type: ignore[call-overload]
                       mem=ConcreteMemory(lambda c, s: cpage(0), lambda b: CBV(0, PB_BITS)),
                       **vals)  # type: ignore[arg-type]
        g = geometry(sc, probe)
        mem = ConcreteMemory(lambda c, s: cpage(int(pfn_of(sc, g, CBV(c, 64), CBV(s, 64)))),  # type: ignore[call-overload]
                             lambda b: CBV(cell_at(int(b)), PB_BITS))  # type: ignore[call-overload]
        return evolve(probe, mem=mem)

    hand = st.model.path(Ctx(False), sc, make())
    cinp = make()
    _, state = _interp_run(st, sc, cinp, lambda pfn: cpage(int(pfn)), None)  # type: ignore[call-overload]
    if "b" in index:
        b = CBV(index["b"], 64)
        sv, fv = int(hand.read_pb(b)), int(_read_pb(state, cinp, b))  # type: ignore[call-overload]
        run = ConcreteRun(sv, fv, None, None)
        pfn = None
    else:
        g = geometry(sc, cinp)
        cc, tt = CBV(index["c"], 64), CBV(index["t"], 64)
        pfn_v = pfn_of(sc, g, cc, tt)
        run = ConcreteRun(hand.read(cc, tt), state.mem.read(pfn_v), int(pfn_v), None)  # type: ignore[arg-type, call-overload]
        pfn = int(pfn_v)  # type: ignore[call-overload]
    page_index = {"head_equal": 0, "tail1_equal": 1, "tail2_equal": 2}.get(name)
    diffs = page_diffs(L, page_index, run)
    if not diffs:
        raise InternalMismatch(f"source-derived proof, {name}: the solver's difference did not "
                               "reproduce in the concrete replay")
    return RoleResult(name, Verdict.REFUTED, dt, diffs, tuple(sorted(scalars.items())),
                      tuple(sorted(index.items())), pfn)


@frozen
class FidelityRun:
    """Every cell of one run."""

    tree: str
    version: str
    config: str
    model: str
    cells: tuple[FidelityCell, ...]
    seconds: float

    @property
    def verdict(self) -> Verdict:
        return worst([c.verdict for c in self.cells])

    @property
    def trusted(self) -> tuple[str, ...]:
        return tuple(sorted({t for c in self.cells for t in c.trusted}))

    @property
    def interpreted(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted({x for c in self.cells for x in c.interpreted}))


def run_fidelity(st: Setup, types: list[MemoryType | None], orders: list[int], *,
                 timeout_ms: int = 60_000) -> FidelityRun:
    """Every (type, order) cell, in order."""
    t0 = time.perf_counter()
    cells = tuple(check_fidelity_cell(st, ty, o, timeout_ms=timeout_ms)
                  for o in orders for ty in types)
    return FidelityRun(str(st.tree.root), st.tree.version, st.config.name, st.model.name, cells,
                       time.perf_counter() - t0)


__all__ = ["MAX_COMPOUNDS", "MAX_ORDER", "MODELS", "FidelityCell", "FidelityRun", "Model",
           "RoleResult", "Setup", "check_fidelity_cell", "model_for", "run_fidelity", "setup"]

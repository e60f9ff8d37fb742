"""Source-derived semantics: the tree's own C, interpreted, against the hand-written slow path.

For one kernel tree, one configuration and one modelled version (:data:`MODELS`), each cell
(pgmap type, or all five at once with ``pgmap->type`` symbolic; compound order) runs

* the hand-written slow path of that version (:mod:`equiv.slow_path` for v7.3-rc1,
  :mod:`equiv.source.slow_v612y` for 6.12.y, or a named ``--compare`` variant), and
* ``memmap_init_zone_device()`` interpreted from the tree's text (:mod:`equiv.source.cinterp`),

on the same symbolic inputs: start pfn, number of pages, node, ``pgmap`` pointer and type,
altmap, early sections, vmemmap/direct-map bases, and the initial contents of every struct
page (one array indexed by pfn, shared by both sides) and pageblock bitmap cell.  The bounds
are part of the assumptions: at most :data:`MAX_COMPOUNDS` compounds, orders up to
:data:`MAX_ORDER`; the interpreter unrolls its loops within them.

Obligations per cell: the assumptions are satisfiable (else VACUOUS); the hand path's
loop-summary lemmas (each conjunct its own query); and for each page role (head, tail 1,
tail 2, tails t >= 3, the struct pages past the range, a symbolic pageblock cell) the two
final states are equal: every compound index and tail the bounds allow, one query per
compound, in which the role's constraint (compound c exists, or lies past the range) first
fixes the path conditions it decides (:func:`specialise`: small scalar queries, each rewrite
an identity under the constraint).  A SAT role is replayed concretely on both sides (the
interpreter on plain integers, the hand path with real loops) before it is reported as
REFUTED.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import z3
from attrs import evolve, frozen

from equiv.config import Config
from equiv.counterexample import ConcreteRun, FieldDiff, page_diffs
from equiv.engine import bv
from equiv.engine.bv import CBV, Val
from equiv.engine.errors import InputError, InternalMismatch
from equiv.engine.runner import map_in_workers
from equiv.engine.verdict import Verdict, worst
from equiv.linux.ktree import KernelTree, MacroEnv
from equiv.loops import Ctx, Lemma
from equiv.memmap import (
    Geometry,
    Inputs,
    MemoryType,
    Scenario,
    assumptions,
    geometry,
    pfn_of,
    pfn_of_key,
    symbolic_inputs,
)
from equiv.obligations import roles_for
from equiv.page_model import PB_BITS, ConcreteMemory, Layout, Memory, PageState, SymMemory
from equiv.slow_path import memmap_init_zone_device
from equiv.source.cinterp import CInt, Interp, InterpError, Oracle, Ptr, State, initial_state
from equiv.source.csummary import CLemma
from equiv.source.files import load_tree, macro_env
from equiv.source.slow_v612y import layout_612, path_612y
from equiv.source.src_layout import SrcStruct, source_structs

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
    Model("v6.12.y", "6.12", "6.12 stable, 6.12.117 (equiv/source/slow_v612y.py)", path_612y, layout_612),
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
    mem = SymMemory(lambda n: PageState(bits=z3.Select(pages, pfn_of_key(sc, g, n))),
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
    return state.mem.read_pb_any(b)


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
    assume.append(z3.ULE(inp.nr_pages, MAX_COMPOUNDS * sc.stride))
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
    obs = _observations(sc, g, inp, slow_mem, state, order)
    # lemmas of the hand path's loop summaries
    t0 = time.perf_counter()
    why = check_lemmas(ctx.lemmas, assume, timeout_ms)
    lemma_ok = not why
    roles.append(RoleResult("hand_path_loop_lemmas", Verdict.PROVED if lemma_ok else Verdict.UNKNOWN,
                            time.perf_counter() - t0, reason=why))
    memo: _Memo = {}
    for name, groups in obs:
        t0 = time.perf_counter()
        out = _check_role(groups, assume, memo, timeout_ms)
        dt = time.perf_counter() - t0
        if isinstance(out, tuple):
            m, hit = out
            idx = {"b": z3.BitVec("pageblock.b", 64)} if "b" in hit else \
                {k: z3.BitVecVal(v, 64) for k, v in hit.items()}
            roles.append(_refute(st, sc, name, m, inp, early, pages, pb, idx, dt))
        elif isinstance(out, str):
            roles.append(RoleResult(name, Verdict.UNKNOWN, dt, reason=out))
        elif out is Verdict.VACUOUS:
            roles.append(RoleResult(name, Verdict.VACUOUS, dt,
                                    reason="role constraint unsatisfiable under the assumptions"))
        else:
            roles.append(RoleResult(name, Verdict.PROVED if lemma_ok else Verdict.UNKNOWN, dt,
                                    reason="" if lemma_ok else "the loop lemmas are not proved"))
    return done()


def check_lemmas(lemmas: Sequence[Lemma | CLemma], assume: list[z3.BoolRef], timeout_ms: int) -> str:
    """Prove the hand path's loop lemmas; "" if all hold, else which one did not and why.

    Each lemma is ``premise -> c1 && c2 && ...``; every conjunct is its own query under the
    assumptions and the premise (the same claim: a conjunction is valid iff each conjunct
    is).  The frame-read lemma is a conjunction of one implication per logged read, each
    trivial alone; as one query z3 may time out on it (z3's search depends on the order in
    which terms were created, so the whole conjunction took 18 s or over 60 s for
    ``--compare v6.12`` at order 3 depending on what ran before).  A lemma's ``stronger``
    claim (if it has one) is tried first; only if it is not proved is the claim itself.
    """
    s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    s.add(*assume)

    def valid(claim: z3.BoolRef) -> z3.CheckSatResult:
        for part in claim.children() if z3.is_and(claim) else [claim]:
            r = s.check(z3.Not(part))
            if r != z3.unsat:
                return r
        return z3.unsat

    for lm in lemmas:
        s.push()
        s.add(lm.premise)
        r = s.check()
        if r == z3.sat:
            stronger = getattr(lm, "stronger", None)
            if stronger is None or valid(stronger) != z3.unsat:
                r = valid(lm.claim)
            else:
                r = z3.unsat
        s.pop()
        if r != z3.unsat:
            return f"loop lemma {lm.kind} of {lm.loop}: {r}"
    return ""


@frozen(eq=False)
class _Group:
    """One query of a role: the pages of one compound (or the bitmap cell).

    ``present`` puts the pages in the role (compound ``c`` exists, or lies past the range);
    each case is an index and the claim's negation for it (the two sides differ there)."""

    present: z3.BoolRef
    cases: tuple[tuple[dict[str, int], z3.BoolRef], ...]


def _observations(sc: Scenario, g: Geometry, inp: Inputs, slow_mem: Memory, state: State,
                  order: int) -> list[tuple[str, list[_Group]]]:
    """Every obligation of a cell as its queries: every (compound, tail) the bounds allow, each
    a concrete index (no aliasing questions), one query per compound."""
    obs: list[tuple[str, list[_Group]]] = []
    for role in roles_for(order):
        if role.name == "pageblock":
            b = z3.BitVec("pageblock.b", 64)
            same = slow_mem.read_pb(b) == _read_pb(state, inp, b)
            obs.append(("pageblock_equal", [_Group(z3.BoolVal(True), (({"b": -1}, z3.Not(same)),))]))
            continue
        ts = {"head": [0], "tail1": [1], "tail2": [2]}.get(role.name, list(range(3, sc.stride)))
        if role.name == "outside":
            ts = list(range(sc.stride))
        groups: list[_Group] = []
        for ci in range(MAX_COMPOUNDS + (role.name == "outside")):
            cv = z3.BitVecVal(ci, 64)
            present = (z3.UGE(cv, g.ncompounds) if role.name == "outside"
                       else z3.ULT(cv, g.ncompounds))
            cases = []
            for ti in ts:
                tv = z3.BitVecVal(ti, 64)
                slow = slow_mem.read(cv, tv)
                fast = state.mem.read(pfn_of(sc, g, cv, tv))
                cases.append(({"c": ci, "t": ti}, slow.bits != fast.bits))
            groups.append(_Group(present, tuple(cases)))
        if role.name == "outside":
            # the struct pages below the first pfn: those between start_pfn and the start
            # after the altmap reservation (at most nr_pages of them) and the one before
            # start_pfn, named as the compounds below the first one
            cases = []
            for j in range(1, MAX_COMPOUNDS * sc.stride + 2):
                cv = z3.BitVecVal(-((j + sc.stride - 1) // sc.stride), 64)
                tv = z3.BitVecVal(-j % sc.stride, 64)
                slow = slow_mem.read(cv, tv)
                fast = state.mem.read(pfn_of(sc, g, cv, tv))
                cases.append(({"c": cv.as_long(), "t": tv.as_long()}, slow.bits != fast.bits))
            groups.append(_Group(z3.BoolVal(True), tuple(cases)))
        obs.append((f"{role.name}_equal", groups))
    return obs


#: a condition decided in one context: (the condition, True, False or the condition itself)
_Decided = tuple[z3.BoolRef, z3.BoolRef]
#: decisions per role constraint: id -> (the constraint, condition id -> decision)
_Memo = dict[int, tuple[z3.BoolRef, dict[int, _Decided]]]


def _scan(terms: list[z3.BoolRef], decide: Callable[[z3.BoolRef], bool | None]
          ) -> tuple[list[tuple[z3.BoolRef, bool]], list[z3.ExprRef]]:
    """Walk the live part of ``terms``: at an ``ite`` its condition is decided first and only
    the branch it selects is entered (both if undecided).  Returns the decided conditions
    and the array reads met on the way.  (Low-level z3 calls: this walks every node of the
    queries of a cell, some ten thousand.)"""
    ctx = terms[0].ctx
    ref = ctx.ref()
    seen: set[int] = set()
    fixed: list[tuple[z3.BoolRef, bool]] = []
    selects: list[z3.ExprRef] = []
    stack = [t.as_ast() for t in terms]
    while stack:
        a = stack.pop()
        i = z3.Z3_get_ast_id(ref, a)
        if i in seen:
            continue
        seen.add(i)
        if z3.Z3_get_ast_kind(ref, a) != z3.Z3_APP_AST:
            continue
        n = z3.Z3_get_app_num_args(ref, a)
        if n == 0:
            continue
        kind = z3.Z3_get_decl_kind(ref, z3.Z3_get_app_decl(ref, a))
        args = [z3.Z3_get_app_arg(ref, a, j) for j in range(n)]
        if kind == z3.Z3_OP_ITE:
            c = z3.BoolRef(args[0], ctx)
            v = decide(c)
            if v is not None:
                fixed.append((c, v))
                stack.append(args[1] if v else args[2])
                continue
        elif kind == z3.Z3_OP_SELECT:
            selects.append(z3.ExprRef(a, ctx))
        stack.extend(args)
    return fixed, selects


def _same_index(selects: list[z3.ExprRef], context: z3.Solver) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
    """Rewrites ``a[i] -> a[j]`` for array reads whose indices are one value written two ways
    (``s + (v ? x : 0)`` and ``v ? s + x : s``: the two sides compute a pfn differently).
    Candidates are indices equal in one model of ``context``; each pair is then proved
    equal in ``context`` by a query (64-bit scalars only)."""
    if context.check() != z3.sat:
        return []
    m = context.model()
    reps: dict[tuple[int, int], list[z3.ExprRef]] = {}
    subs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
    for sel in selects:
        arr, i = sel.arg(0), sel.arg(1)
        v = m.eval(i, model_completion=True)
        if not z3.is_bv_value(v):
            continue
        bucket = reps.setdefault((arr.get_id(), v.as_long()), [])
        for j in bucket:
            if i.eq(j):
                break
            if context.check(i != j) == z3.unsat:
                subs.append((sel, z3.Select(arr, j)))
                break
        else:
            bucket.append(i)
    return subs


def specialise(terms: list[z3.BoolRef], context: z3.Solver,
               decided: dict[int, _Decided]) -> list[z3.BoolRef]:
    """Each of ``terms`` simplified in the context of ``context``'s assertions.

    The interpreter's struct pages are ``ite`` trees over path conditions (loop trips, the
    altmap, the pgmap type); under a role's constraint (compound ``c`` exists, or lies past
    the range) most of those conditions are fixed.  Each ``ite`` condition on the live part
    of a term is decided by a small query on ``context`` (scalars only, no struct page): if
    the context implies it, or its negation, it is replaced by ``True`` or ``False``.  Array
    reads at one index written two ways are unified (:func:`_same_index`).  Every rewrite is
    an identity under the context, so each result is equivalent to its term wherever the
    context holds: a model of the result is a model of the term, and unsat is unsat.  An
    undecided (or unknown) condition is kept.  ``decided`` caches decisions for this context.

    Without this, z3 bit-blasts every guarded 512-bit page and searches the loop arithmetic
    inside the page comparison (tens of seconds per query at order 4).
    """

    def decide(c: z3.BoolRef) -> bool | None:
        if z3.is_true(c) or z3.is_false(c):
            return bool(z3.is_true(c))
        hit = decided.get(c.get_id())
        if hit is None:
            v = c
            if context.check(z3.Not(c)) == z3.unsat:
                v = z3.BoolVal(True)
            elif context.check(c) == z3.unsat:
                v = z3.BoolVal(False)
            hit = decided[c.get_id()] = (c, v)
        return None if hit[1].eq(c) else z3.is_true(hit[1])

    for _ in range(8):
        if not terms:
            break
        fixed, selects = _scan(terms, decide)
        subs: list[tuple[z3.ExprRef, z3.ExprRef]] = [
            (c, z3.BoolVal(v)) for c, v in fixed if not (z3.is_true(c) or z3.is_false(c))]
        subs += _same_index(selects, context)
        if not subs:
            break
        terms = [z3.simplify(z3.substitute(t, *subs)) for t in terms]
    return terms


def _check_role(groups: list[_Group], assume: list[z3.BoolRef], memo: _Memo,
                timeout_ms: int) -> Verdict | str | tuple[z3.ModelRef, dict[str, int]]:
    """Decide one obligation, one query per group.

    Returns PROVED (every group unsat), VACUOUS (no group's pages can be in the role), the
    solver's reason for an unknown answer, or a model and the index of a differing page.
    ``memo`` keeps conditions decided under each ``present`` for the next role (the head and
    tail roles share their compounds)."""
    any_present = False
    for grp in groups:
        s = z3.SolverFor("QF_AUFBV")
        s.set("timeout", timeout_ms)
        s.add(*assume, grp.present)
        r = s.check()
        if r == z3.unsat:
            continue  # no page of this group is in the role: nothing to prove
        if r != z3.sat:
            return f"role constraint: {s.reason_unknown()}"
        any_present = True
        entry = memo.get(grp.present.get_id())
        if entry is None:  # the entry holds the term, so its id is not recycled
            entry = memo[grp.present.get_id()] = (grp.present, {})
        diffs = specialise([d for _, d in grp.cases], s, entry[1])
        live = [d for d in diffs if not z3.is_false(d)]
        r = s.check(live[0] if len(live) == 1 else z3.Or(*live)) if live else z3.unsat
        if r == z3.unsat:
            continue
        if r != z3.sat:
            return str(s.reason_unknown())
        m = s.model()
        for (ix, d), d2 in zip(grp.cases, diffs, strict=True):
            if z3.is_true(m.eval(d2, model_completion=True)) and \
                    z3.is_true(m.eval(d, model_completion=True)):
                return m, ix
        raise InternalMismatch("source-derived proof: the solver's model satisfies the "
                               "simplified difference but no original one")
    return Verdict.PROVED if any_present else Verdict.VACUOUS


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
        return int(model.eval(z3.Select(pages, z3.BitVecVal(pfn, 64)), model_completion=True).as_long())

    def cell_at(b: int) -> int:
        return int(model.eval(z3.Select(pb, z3.BitVecVal(b, 64)), model_completion=True).as_long())

    def is_early(n: int) -> bool:
        return bool(z3.is_true(model.eval(early(z3.BitVecVal(n, 64)), model_completion=True)))

    unwritten = ((),) * L.size

    def cpage(pfn: int) -> PageState:
        return PageState(bits=CBV(page_at(pfn), 8 * L.size), origin=unwritten)

    def make() -> Inputs:
        vals = {k: (v if isinstance(v, bool) else CBV(v, 32 if k == "pgmap_type" else 64))
                for k, v in scalars.items()}
        probe = Inputs(early_section=lambda n: is_early(int(n)),
                       mem=ConcreteMemory(lambda n: cpage(0), lambda b: CBV(0, PB_BITS)),
                       **vals)
        g = geometry(sc, probe)
        mem = ConcreteMemory(lambda n: cpage(int(pfn_of_key(sc, g, CBV(n, 128)))),
                             lambda b: CBV(cell_at(int(b)), PB_BITS))
        return evolve(probe, mem=mem)

    hand = st.model.path(Ctx(False), sc, make())
    cinp = make()
    _, state = _interp_run(st, sc, cinp, lambda pfn: cpage(int(pfn)), None)
    if "b" in index:
        b = CBV(index["b"], 64)
        sv, fv = int(hand.read_pb(b)), int(_read_pb(state, cinp, b))
        run = ConcreteRun(sv, fv, None, None)
        pfn = None
    else:
        g = geometry(sc, cinp)
        cc, tt = CBV(index["c"], 64), CBV(index["t"], 64)
        pfn_v = pfn_of(sc, g, cc, tt)
        run = ConcreteRun(hand.read(cc, tt), state.mem.read(pfn_v), int(pfn_v), None)
        pfn = int(pfn_v)
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
                 timeout_ms: int = 60_000, jobs: int = 1) -> FidelityRun:
    """Every (type, order) cell, in order; with ``jobs`` > 1 the cells run in that many
    worker processes (largest order first; the result order does not depend on it)."""
    t0 = time.perf_counter()
    todo = [(ty, o) for o in orders for ty in types]
    if jobs <= 1 or len(todo) <= 1:
        cells = tuple(check_fidelity_cell(st, ty, o, timeout_ms=timeout_ms) for ty, o in todo)
    else:
        cells = tuple(map_in_workers(
            _cell_worker, [(str(st.tree.root), st.config, st.model.name, ty, o, timeout_ms)
                           for ty, o in todo], jobs,
            order=sorted(range(len(todo)), key=lambda i: -todo[i][1])))
    return FidelityRun(str(st.tree.root), st.tree.version, st.config.name, st.model.name, cells,
                       time.perf_counter() - t0)


def _cell_worker(root: str, cfg: Config, model: str, ptype: MemoryType | None, order: int,
                 timeout_ms: int) -> FidelityCell:
    """One cell in a worker process (the tree is parsed again there: tree-sitter trees do not
    cross processes)."""
    return check_fidelity_cell(setup(load_tree(root), cfg, MODELS[model]), ptype, order,
                               timeout_ms=timeout_ms)


__all__ = ["MAX_COMPOUNDS", "MAX_ORDER", "MODELS", "FidelityCell", "FidelityRun", "Model",
           "RoleResult", "Setup", "check_fidelity_cell", "model_for", "run_fidelity", "setup",
           "specialise"]

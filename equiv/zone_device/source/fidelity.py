"""Source-derived semantics: the tree's own C, interpreted, against the hand-written slow path.

For one kernel tree, one configuration and one modelled version (:data:`MODELS`), each cell
(pgmap type, or all five at once with ``pgmap->type`` symbolic; compound order 0..18) runs

* the hand-written slow path of that version (:mod:`equiv.slow_path` for v7.3-rc1,
  :mod:`equiv.zone_device.source.slow_v612y` for 6.12.y, or a named ``--compare`` variant), its loops
  summarised by :mod:`equiv.loops`, and
* ``memmap_init_zone_device()`` interpreted from the tree's text (:mod:`equiv.zone_device.source.cinterp`),
  its loops summarised from that text (:mod:`equiv.zone_device.source.csummary`, as ``--patch`` does),

on the same symbolic inputs: start pfn, number of pages (no bound beyond the model's
assumptions), node, ``pgmap`` pointer and type, altmap, early sections, vmemmap/direct-map
bases, the initial contents of every struct page (one array indexed by pfn, shared by both
sides) and pageblock bitmap cell, and the uninitialised bytes of each struct local.  Neither
side unrolls a loop, so order 18 costs what order 2 costs.

Each cell asserts the assumptions of :func:`equiv.memmap.input_assumptions` in every query
and keeps what each says and where it comes from for the reports
(:mod:`equiv.zone_device.source.assumed`).  Obligations per cell: the assumptions are
satisfiable (else VACUOUS, naming those in conflict); every loop-summary
lemma of both sides (each conjunct its own query); and for each page role (the head of any
compound ``c``, tail 1, tail 2, any tail ``t >= 3``, any struct page outside the range's
compounds, any pageblock cell) the two final states are equal, decided as the patch proof
decides a role (:func:`~equiv.zone_device.source.common.prove_roles`: split by compound and
altmap, each case specialised to its constraint,
:func:`~equiv.zone_device.source.decide.specialise`).  Where the hand model shares a struct
page (a deduplicated vmemmap, :func:`aliased`) the tree, which has one struct page per pfn,
must leave that pfn's page as it was, and the page it shares is proved in its own role.
A SAT role is replayed concretely on both sides (the hand path with real loops, the tree's
loops as written) before it is reported as REFUTED.

Only if the summaries are not justified (a lemma fails: a loop writes outside its block, as
a seeded ``pfn <= end_pfn`` does) does the cell fall back to the earlier bounded proof, at
orders up to :data:`BOUNDED_ORDER`: the tree's loops unrolled over at most
:data:`MAX_COMPOUNDS` compounds, each (compound, tail) a concrete index; what it refutes
(replayed) replaces the unknown roles.  An unsummarised cell is otherwise UNKNOWN.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import z3
from attrs import evolve, frozen

from equiv.config import Config
from equiv.engine import bv
from equiv.engine.bv import CBV, Cond, Val
from equiv.engine.errors import InputError, InternalMismatch
from equiv.engine.runner import map_calls
from equiv.engine.verdict import Verdict, worst
from equiv.linux.ktree import KernelTree, Preprocessor
from equiv.loops import Ctx
from equiv.memmap import (
    VMEMMAP_RESERVE_NR,
    Geometry,
    Inputs,
    MemoryType,
    Scenario,
    Stated,
    deduplicated,
    geometry,
    input_assumptions,
    join_key,
    order_classes,
    pfn_of,
    pfn_of_key,
    symbolic_inputs,
)
from equiv.page_model import (
    KEY_BITS,
    PB_BITS,
    ConcreteMemory,
    Layout,
    Memory,
    PageState,
    SymMemory,
    footprint,
)
from equiv.zone_device.counterexample import ConcreteRun
from equiv.zone_device.obligations import roles_for
from equiv.zone_device.source.assumed import Located, bounded_search, locate
from equiv.zone_device.source.cdefs import compiled
from equiv.zone_device.source.cinterp import Interp, InterpError, Oracle, State
from equiv.zone_device.source.clemmas import check_lemmas
from equiv.zone_device.source.common import (
    MODELS,
    CellRun,
    Memo,
    Model,
    ModelValues,
    RenamedModel,
    RoleClaim,
    RoleProof,
    RoleResult,
    Side,
    altmap_cases,
    backstop_role,
    check_assumptions,
    gave_up,
    largest_first,
    merge_found,
    model_for,
    no_wrap,
    prove_roles,
    replayed_role,
    run_tree,
    specialise,
    undisproved,
    words_equal,
)
from equiv.zone_device.source.csummary import PEEL
from equiv.zone_device.source.ctyped import TypedTree
from equiv.zone_device.source.files import load_tree
from equiv.zone_device.source.src_layout import SrcStruct, source_structs

#: Largest order proved: the PUD order with 4K pages (1 GiB compounds), as ``--patch``.
MAX_ORDER = 18
#: The bounded search (used only when the summaries are not justified): at most this many
#: compounds, with the tree's loops unrolled, at orders up to BOUNDED_ORDER.
MAX_COMPOUNDS = 4
BOUNDED_ORDER = 4
#: compounds a role's query names one by one, the rest together (the tree's loops peel
#: their first csummary.PEEL iterations; the patch proof names four): measured at order 2,
#: the five page roles took 31 s with four, 21 s with two (load 8, 2 cores)
SPLIT = 2



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
    #: the order class (lo, hi) whose one proof (``order_hi``, :func:`check_fidelity_cell`)
    #: proved this order's cell; None: the order's own proof
    row_class: tuple[int, int] | None = None
    #: the assumptions every query of the cell asserted (the bound of the search with the
    #: loops unrolled too, when it ran), as the reports print them
    assumptions: tuple[Stated, ...] = ()

    @property
    def label(self) -> str:
        """``order 3 ALL``: the cell in a report's list of assumptions."""
        return f"order {self.order} {self.ptype}"


@frozen(eq=False)
class Setup:
    """Everything shared by the cells of one run."""

    tree: KernelTree
    config: Config
    env: Preprocessor  #: clang's decisions of the tree's #if (:meth:`TypedTree.branches`)
    structs: dict[str, SrcStruct]
    model: Model
    typed: TypedTree  #: clang's types of the tree


def setup(tree: KernelTree, cfg: Config, model: Model) -> Setup:
    """Type the tree with clang once (its structs with it); its ``#if`` branches are the
    ones clang took."""
    typed, env = compiled(tree, cfg)
    return Setup(tree, cfg, env, source_structs(typed), model, typed)


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
    """The tree's run in the bounded search and its replay: loops as written, the pageblock
    cells the inputs' own."""
    return run_tree(Side("c", st.tree, st.env, st.structs, st.typed), sc, inp, initial, None, oracle,
                    summarise=False)


def _read_pb(state: State, inp: Inputs, b: Val) -> Val:
    return state.mem.read_pb_any(b)


def check_fidelity_cell(st: Setup, ptype: MemoryType | None, order: int, *,
                        timeout_ms: int = 60_000, order_hi: int | None = None) -> FidelityCell:
    """Prove the interpreted tree equal to the hand-written path for one cell.

    Both sides' loops are summarised (the tree's by :mod:`equiv.zone_device.source.csummary`, the hand
    model's by :mod:`equiv.loops`), so there is no bound on the range beyond the model's
    assumptions.  If the summaries are not justified (a loop of the tree the summary cannot
    follow, or a lemma not proved), the roles stay UNKNOWN, and at orders up to
    :data:`BOUNDED_ORDER` a search with the tree's loops unrolled over at most
    :data:`MAX_COMPOUNDS` compounds looks for a difference, which it reports as REFUTED in
    place of the unknown role (a finding of bounded model checking, replayed with real loops).

    With ``order_hi`` the cell is an order class's *probe* (:func:`run_fidelity`): one
    proof for the orders ``order ..= order_hi`` (a class of :func:`equiv.memmap.order_classes`),
    ``pgmap->vmemmap_shift`` a symbolic input ranging over them.  It stops at the first
    obligation it does not prove, never replays a difference and never runs the bounded
    search: its result stands for each order's cell only if it is PROVED (each order's
    vacuity checked on its own, :func:`~equiv.zone_device.source.common.order_not_covered`).

    Raises:
        InputError: ``order`` is outside ``0..MAX_ORDER``.
    """
    hi = order if order_hi is None else order_hi
    if not 0 <= order <= hi <= MAX_ORDER:
        raise InputError(f"order {order} out of range for the source-derived proof; valid: "
                         f"0..{MAX_ORDER}")
    t_cell = time.perf_counter()
    L = st.model.layout(Layout.from_config(st.config))
    sc = Scenario(L, ptype, order, order_hi)
    inp, early, pages, pb = _inputs(sc)
    stated = input_assumptions(sc, inp)
    assume = [a.term for a in stated]
    roles: list[RoleResult] = []
    its: list[Interp] = []
    ptname = ptype.kname if ptype else "ALL"

    def done() -> FidelityCell:
        return FidelityCell(ptname, order, worst([r.verdict for r in roles]),
                            time.perf_counter() - t_cell, tuple(roles),
                            tuple(sorted({x for it in its for x in it.interpreted.items()})),
                            tuple(sorted({x for it in its for x in it.trusted_used})),
                            sum(it.oracle.checks for it in its if it.oracle),
                            assumptions=tuple(a.stated for a in stated))

    vacuous = check_assumptions(stated, timeout_ms)
    if vacuous is not None:
        roles.append(vacuous)
        return done()
    why = _prove_summarised(st, sc, inp, early, pages, pb, assume, its, roles, timeout_ms)
    if why and not sc.is_class and any(n < PEEL for it in its for n in it.peeled.values()):
        # a summary made after fewer peeled iterations may rest on a lemma that only holds
        # from a later one: again with every loop peeled PEEL times, in place of the first
        its.clear()
        roles.clear()
        why = _prove_summarised(st, sc, inp, early, pages, pb, assume, its, roles, timeout_ms,
                                peel_least=PEEL)
    if why and not sc.is_class and order <= BOUNDED_ORDER:
        bounded: list[RoleResult] = []
        bound = bounded_search(sc, inp, MAX_COMPOUNDS)
        stated.append(bound)
        _bounded(st, sc, inp, early, pages, pb, [*assume, bound.term], [], bounded, timeout_ms)
        merge_found(roles, bounded, f"found with the tree's loops unrolled (at most "
                                    f"{MAX_COMPOUNDS} compounds) after {why}")
    return done()


#: the hand-written models' loop names, each bound to the index symbol the roles use (the
#: lemma of that loop is stated for it, so its instantiation is shared with the roles)
_HAND_LOOPS = {"memmap_init_zone_device.heads": "c", "memmap_init_compound.tails": "t",
               "memmap_init_zone_device.heads (6.12)": "c",
               "memmap_init_compound.tails (6.12)": "t",
               "memmap_init_zone_device.heads (6.12.y)": "c",
               "memmap_init_compound.tails (6.12.y)": "t"}


def aliased(sc: Scenario, inp: Inputs, g: Geometry, c: Val, t: Val) -> Cond:
    """Is the struct page of tail ``t`` of compound ``c`` one the deduplicated vmemmap maps
    onto another (``vmemmap_populate_compound_pages``, Documentation/mm/vmemmap_dedup.rst):
    a tail past the first ``VMEMMAP_RESERVE_NR`` vmemmap pages of an optimised compound of
    the range (the condition :func:`equiv.memmap.vmemmap_namer` folds)?"""
    reserve = VMEMMAP_RESERVE_NR * sc.per_vmemmap_page
    if not sc.dedups_static:  # (can_optimize_static and stride > reserve: same for a class)
        return False
    return bv.and_(bv.ult(c, g.ncompounds), bv.not_(bv.ult(t, bv.const_like(t, reserve))),
                   deduplicated(sc, inp, pfn_of(sc, g, c, bv.const_like(c, 0))))


def _side(st: Setup) -> Side:
    return Side("tree", st.tree, st.env, st.structs, st.typed)


def _prove_summarised(st: Setup, sc: Scenario, inp: Inputs, early: z3.FuncDeclRef,
                      pages: z3.ArrayRef, pbarr: z3.ArrayRef, assume: list[z3.BoolRef],
                      its: list[Interp], roles: list[RoleResult], timeout_ms: int, *,
                      peel_least: int = 0) -> str:
    """Both sides with their loops summarised (the tree's after at least ``peel_least``
    peeled iterations, :func:`~equiv.zone_device.source.common.run_tree`); every role
    decided.  Returns "" if every loop lemma holds, else why not (the roles are then
    UNKNOWN, not PROVED)."""
    t_cell = time.perf_counter()
    c, t = z3.BitVec("c", 64), z3.BitVec("t", 64)
    b = z3.BitVec("pageblock.b", 64)
    ctx = Ctx(symbolic=True)
    ctx.k_hint.update({n: c if v == "c" else t for n, v in _HAND_LOOPS.items()})
    ctx.path = "slow"
    hand = st.model.path(ctx, sc, inp)
    try:
        it, final = run_tree(_side(st), sc, inp,
                             lambda pfn: PageState(bits=z3.Select(pages, pfn)),
                             lambda blk: z3.Select(pbarr, blk),
                             Oracle(assume, altmap_cases(inp), timeout_ms=timeout_ms),
                             summarise=True, peel_least=peel_least)
    except InterpError as e:
        roles.append(RoleResult("interpret", Verdict.UNKNOWN, time.perf_counter() - t_cell,
                                reason=str(e)))
        return f"interpreting the tree: {e}"
    its.append(it)
    g = geometry(sc, inp)

    def observe() -> list[RoleClaim]:
        obs: list[RoleClaim] = []
        for role in roles_for(sc.orders[0]):
            if role.name == "pageblock":
                obs.append(RoleClaim("pageblock_equal", z3.BoolVal(True),
                                     hand.read_pb(b) == final.mem.read_pb_any(b), []))
                continue
            in_range = z3.ULT(c, g.ncompounds)
            fixed = {"head": 0, "tail1": 1, "tail2": 2}.get(role.name)
            n = pfn_of(sc, g, c, t)
            if role.name == "outside":
                # every struct page outside the range's compounds, each by one (c, t), as
                # in the patch proof; the hand model's key of it is c ++ t (never aliased)
                cons = z3.And(z3.ULT(t, sc.stride_v), z3.UGE(c, g.ncompounds),
                              no_wrap(sc, c))
                key = join_key(sc, c, t)
                want = hand.load(key).bits
                # first, whether each side's footprint (the keys it wrote, the blocks of its
                # summarised loops: scalars only) misses the page and both start from the
                # same struct page; only if not, the two sides' pages against each other
                alone = [z3.Not(bv.as_z3_bool(final.mem.footprint(n))),
                         z3.Not(bv.as_z3_bool(footprint(hand, inp.mem, key))),
                         pfn_of_key(sc, g, key) == n]
            else:
                cons = z3.And(in_range, t == fixed) if fixed is not None else \
                    z3.And(in_range, z3.UGE(t, 3), z3.ULT(t, sc.stride_v))
                want = hand.read(c, t).bits
                al = aliased(sc, inp, g, c, t)
                if not isinstance(al, bool) or al:
                    # an aliased struct page: the hand model reads the page it shares (its
                    # own role proves the tree wrote that one alike); the tree, which has
                    # a struct page per pfn, must leave this one as it was
                    want = bv.ite(al, z3.Select(pages, n), want)
                alone = []
            got = final.mem.read_any(n, cons).bits
            inside = role.name != "outside"
            obs.append(RoleClaim(f"{role.name}_equal", cons, words_equal(want, got), alone,
                                 z3.ULT(0, g.ncompounds) if inside else None,
                                 in_range if inside else None))
        return obs

    return prove_roles(RoleProof(
        sc=sc, inp=inp, assume=assume, c=c, t=t, timeout_ms=timeout_ms, observe=observe,
        lemmas=lambda: [*ctx.lemmas, *it.lemmas],
        refute=lambda n, m, dt: _refute_summarised(st, sc, n, m, inp, early, pages, pbarr,
                                                   {"c": c, "t": t, "b": b}, dt),
        split=SPLIT, steer=True), roles, t_cell)


def _refute_summarised(st: Setup, sc: Scenario, name: str, model: RenamedModel, inp: Inputs,
                       early: z3.FuncDeclRef, pages: z3.ArrayRef, pbarr: z3.ArrayRef,
                       idx: dict[str, z3.BitVecRef], dt: float) -> RoleResult:
    """Replay a model of the summarised proof on both sides in the concrete domain: the hand
    path with its loops evaluated lazily (:attr:`equiv.loops.Ctx.lazy`: the iterations the
    observed page needs, each checked against its frame), the tree with its loops as
    written (a loop of more than
    :data:`~equiv.zone_device.source.csummary.CONCRETE_UNROLL` trips read through its proved summary);
    the differing fields."""
    L = sc.layout
    mv = ModelValues(model, L, early, pages, pbarr)
    scalars, index = mv.scalars(inp), mv.indices(idx)
    cpage, cell, stack = mv.page, mv.cell, mv.stack

    def make() -> Inputs:
        probe = mv.inputs(scalars)
        g = geometry(sc, probe)
        mem = ConcreteMemory(lambda n: cpage(pfn_of_key(sc, g, CBV(n, KEY_BITS))), cell)
        return evolve(probe, mem=mem)

    # the hand path's loops evaluated lazily (only the iterations the observation reads,
    # each checked against its frame): a replay happens only once its lemmas are proved
    hctx = Ctx(False)
    hctx.lazy = True
    hand = st.model.path(hctx, sc, make())
    cinp = make()
    _, final = run_tree(_side(st), sc, cinp, cpage, cell, None, stack, summarise=True)
    reason = ""
    if name == "pageblock_equal":
        blk = CBV(index["b"], 64)
        run = ConcreteRun(int(hand.read_pb(blk)), int(final.mem.read_pb_any(blk)), None, None)
        pfn = None
        keep = {"b": index["b"]}
        initial = int(cell(blk))
    else:
        g = geometry(sc, cinp)
        cc, tt = CBV(index["c"], 64), CBV(index["t"], 64)
        pfn_v = pfn_of(sc, g, cc, tt)
        if name == "outside_equal":
            want = hand.load(join_key(sc, cc, tt))
        elif aliased(sc, cinp, g, cc, tt) is True:
            want = cpage(pfn_v)
            reason = ("an aliased struct page of a deduplicated vmemmap: the hand model shares "
                      "it with an earlier tail, so the tree must leave it as it was")
        else:
            want = hand.read(cc, tt)
        run = ConcreteRun(want, final.mem.read_any(pfn_v), int(pfn_v), None)
        pfn = int(pfn_v)
        keep = {"c": index["c"], "t": index["t"]}
        initial = int(cpage(pfn_v).bits)
    return replayed_role(L, name, run, dt, scalars, keep, pfn, reason, initial)


def _bounded(st: Setup, sc: Scenario, inp: Inputs, early: z3.FuncDeclRef, pages: z3.ArrayRef,
             pb: z3.ArrayRef, assume: list[z3.BoolRef], its: list[Interp],
             roles: list[RoleResult], timeout_ms: int) -> None:
    """The bounded search: the tree's loops unrolled (``assume`` bounds the range to
    :data:`MAX_COMPOUNDS` compounds), every (compound, tail) a concrete index; appends to
    ``roles``.  Used only when the summaries are not justified."""
    t_cell = time.perf_counter()
    order = sc.order
    ctx = Ctx(symbolic=True)
    ctx.path = "slow"
    slow_mem = st.model.path(ctx, sc, inp)
    try:
        it, state = _interp_run(st, sc, inp, lambda pfn: PageState(bits=z3.Select(pages, pfn)),
                                Oracle(assume, timeout_ms=timeout_ms))
    except InterpError as e:
        roles.append(RoleResult("interpret", Verdict.UNKNOWN, time.perf_counter() - t_cell,
                                reason=str(e)))
        return
    its.append(it)
    g = geometry(sc, inp)
    obs = _observations(sc, g, inp, slow_mem, state, order)
    t0 = time.perf_counter()
    why = check_lemmas(ctx.lemmas, assume, timeout_ms)
    lemma_ok = not why
    roles.append(RoleResult("hand_path_loop_lemmas", Verdict.PROVED if lemma_ok else Verdict.UNKNOWN,
                            time.perf_counter() - t0, reason=why))
    memo: Memo = {}
    for name, groups in obs:
        t0 = time.perf_counter()
        out = _check_role_bounded(groups, assume, memo, timeout_ms)
        dt = time.perf_counter() - t0
        if isinstance(out, tuple):
            m, hit = out
            idx = {"b": z3.BitVec("pageblock.b", 64)} if "b" in hit else \
                {k: z3.BitVecVal(v, 64) for k, v in hit.items()}
            roles.append(_refute(st, sc, name, m, inp, early, pages, pb, idx, dt))
        else:
            roles.append(undisproved(name, out, dt, lemma_ok))


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


def _check_role_bounded(groups: list[_Group], assume: list[z3.BoolRef], memo: Memo,
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
        t0 = time.perf_counter()
        r = s.check()
        if r == z3.unsat:
            continue  # no page of this group is in the role: nothing to prove
        if r != z3.sat:
            return f"role constraint: {gave_up(s, t0, timeout_ms)}"
        any_present = True
        entry = memo.get(grp.present.get_id())
        if entry is None:  # the entry holds the term, so its id is not recycled
            entry = memo[grp.present.get_id()] = (grp.present, {})
        diffs = specialise([d for _, d in grp.cases], s, entry[1])
        live = [d for d in diffs if not z3.is_false(d)]
        t0 = time.perf_counter()
        r = s.check(live[0] if len(live) == 1 else z3.Or(*live)) if live else z3.unsat
        if r == z3.unsat:
            continue
        if r != z3.sat:
            return gave_up(s, t0, timeout_ms)
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
        initial = cell_at(index["b"])
    else:
        g = geometry(sc, cinp)
        cc, tt = CBV(index["c"], 64), CBV(index["t"], 64)
        pfn_v = pfn_of(sc, g, cc, tt)
        run = ConcreteRun(hand.read(cc, tt), state.mem.read(pfn_v), int(pfn_v), None)
        pfn = int(pfn_v)
        initial = page_at(pfn)
    return replayed_role(L, name, run, dt, scalars, index, pfn, initial=initial)


@frozen
class FidelityRun(CellRun):
    """Every cell of one run."""

    tree: str
    version: str
    config: str
    model: str
    cells: tuple[FidelityCell, ...]
    seconds: float
    #: the assumptions of the cells, each once, located in the tree
    #: (:func:`equiv.zone_device.source.assumed.locate`)
    assumptions: tuple[Located, ...] = ()


def run_fidelity(st: Setup, types: list[MemoryType | None], orders: list[int], *,
                 timeout_ms: int = 60_000, jobs: int = 1, classes: bool = False,
                 backstop_s: float | None = None) -> FidelityRun:
    """Every (type, order) cell, in order; with ``jobs`` > 1 the cells run in that many
    worker processes (largest order first; the result order does not depend on it).  With
    ``backstop_s``, every cell runs in a worker process killed after that many seconds
    (wall clock), the cell UNKNOWN saying so.

    With ``classes``, the orders of each order class (:func:`equiv.memmap.order_classes`)
    are first tried with one probe per type (:func:`check_fidelity_cell` with ``order_hi``):
    if it proves everything, its cell stands for each order of the class (``row_class``);
    otherwise each order of the class is run alone, exactly as without ``classes`` (same
    verdicts, same counterexamples).  Off by default: measured on linux-source-6.12 (x86_64,
    2 cores) a class's probe costs more than its orders' own cells (orders 2..7: about
    100 s CPU against 6 x 15 s; 8..18: about 220 s against 11 x 15 s), because z3 proves
    the loop lemmas and the tail role far more slowly with the order symbolic.
    """
    t0 = time.perf_counter()
    L = st.model.layout(Layout.from_config(st.config))
    cuts = order_classes(L, orders) if classes else []
    in_class = {o: c for c in cuts for o in range(c[0], c[1] + 1)}
    # the first round: each class's probe and every order in no class
    first: list[tuple[MemoryType | None, int, int | None]] = [
        *((ty, lo, hi) for lo, hi in cuts for ty in types),
        *((ty, o, None) for o in orders if o not in in_class for ty in types)]
    got = _run_cells(st, first, timeout_ms, jobs, backstop_s)
    cells: dict[tuple[MemoryType | None, int], FidelityCell] = {}
    again: list[tuple[MemoryType | None, int, int | None]] = []
    for (ty, lo, hi), cell in zip(first, got, strict=True):
        if hi is None:
            cells[ty, lo] = cell
        elif cell.verdict is Verdict.PROVED:
            for o in range(lo, hi + 1):
                cells[ty, o] = evolve(cell, order=o, row_class=(lo, hi))
        else:  # the probe stands for nothing: each order of the class in its own cell
            again += [(ty, o, None) for o in range(lo, hi + 1)]
    for (ty, o, _), cell in zip(again, _run_cells(st, again, timeout_ms, jobs, backstop_s),
                                 strict=True):
        cells[ty, o] = cell
    done = tuple(cells[ty, o] for o in orders for ty in types)
    return FidelityRun(str(st.tree.root), st.tree.version, st.config.name, st.model.name,
                       done, time.perf_counter() - t0,
                       locate([(c.label, c.assumptions) for c in done], [("tree", st.tree)]))


def _run_cells(st: Setup, todo: list[tuple[MemoryType | None, int, int | None]],
               timeout_ms: int, jobs: int, backstop_s: float | None = None) -> list[FidelityCell]:
    """The cells (type, order, highest order of a class or None) in process or in ``jobs``
    workers (the most orders first, then the largest order; always in workers with a
    ``backstop_s``)."""

    def stopped(i: int, why: str) -> FidelityCell:
        ty, o, _ = todo[i]
        sec = backstop_s or 0.0
        return FidelityCell(ty.kname if ty else "ALL", o, Verdict.UNKNOWN, sec,
                            (backstop_role(sec, why),), (), (), 0)

    return map_calls(
        _cell_worker, [(str(st.tree.root), st.config, st.model.name, ty, o, timeout_ms, hi)
                       for ty, o, hi in todo], jobs,
        local=lambda _r, _c, _m, ty, o, ms, hi: check_fidelity_cell(st, ty, o, timeout_ms=ms,
                                                                    order_hi=hi),
        order=largest_first(todo), backstop_s=backstop_s, stopped=stopped)


def _cell_worker(root: str, cfg: Config, model: str, ptype: MemoryType | None, order: int,
                 timeout_ms: int, order_hi: int | None = None) -> FidelityCell:
    """One cell in a worker process (the tree is parsed again there: tree-sitter trees do not
    cross processes)."""
    return check_fidelity_cell(setup(load_tree(root), cfg, MODELS[model]), ptype, order,
                               timeout_ms=timeout_ms, order_hi=order_hi)


__all__ = ["BOUNDED_ORDER", "MAX_COMPOUNDS", "MAX_ORDER", "MODELS", "FidelityCell", "FidelityRun", "Model",
           "RoleResult", "Setup", "aliased", "check_fidelity_cell", "model_for", "run_fidelity",
           "setup", "specialise"]

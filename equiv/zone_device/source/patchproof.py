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

Each cell asserts the assumptions of :func:`equiv.memmap.input_assumptions` in every query
and keeps what each says and where it comes from for the reports
(:mod:`equiv.zone_device.source.assumed`); the search with the loops unrolled adds its bound.
Obligations per cell: the assumptions are satisfiable (else VACUOUS, naming those in
conflict; UNKNOWN if the solver cannot tell); every loop-summary
lemma of both trees holds (each conjunct its own query); and for each page role (the head
of any compound ``c``, tail 1, tail 2, any tail ``t >= 3``, any struct page outside the
range's compounds, any pageblock cell) the two trees leave the same bytes.  A role whose
query is SAT is replayed on both trees in the concrete domain before it is reported as
REFUTED; the differing fields carry the file:line of the C statements that wrote them.

Struct pages are stored as the kernel maps them (``run_tree(..., fold=True)``,
:class:`~equiv.zone_device.source.cstate.VmemmapFold`): where a compound's vmemmap is
deduplicated (:func:`equiv.memmap.storage_pfn`: no altmap, not an early section, the static
``vmemmap_can_optimize()`` terms; ``compound_nr_pages()``, mm/mm_init.c 6.12) the struct page
of tail ``t >= 2P`` is the storage of tail ``P + t % P`` (``vmemmap_populate_compound_pages()``,
mm/sparse-vmemmap.c 6.12), so both trees' stores to it land there; the ``tail`` role compares
every storage (the tails ``t >= 3`` that are not aliased), as the hand model's roles do.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path

import z3
from attrs import evolve, frozen

from equiv.config import Config
from equiv.engine import bv
from equiv.engine.bv import CBV, Val
from equiv.engine.errors import InputError
from equiv.engine.memo import on_forget
from equiv.engine.runner import map_calls
from equiv.engine.verdict import Verdict, worst
from equiv.linux.ktree import KernelTree
from equiv.loops import Lemma
from equiv.memmap import (
    Inputs,
    MemoryType,
    Scenario,
    Stated,
    geometry,
    input_assumptions,
    order_classes,
    pfn_of,
    storage_pfn,
    symbolic_inputs,
)
from equiv.page_model import PB_BITS, PageState
from equiv.zone_device.counterexample import ConcreteRun
from equiv.zone_device.obligations import roles_for
from equiv.zone_device.source.assumed import Located, bounded_search, locate
from equiv.zone_device.source.cinterp import MAX_TRIPS, Interp
from equiv.zone_device.source.common import (
    CellRun,
    Contexts,
    ModelValues,
    RenamedModel,
    RoleClaim,
    RoleProof,
    RoleResult,
    Side,
    altmap_cases,
    backstop_role,
    check_assumptions,
    largest_first,
    merge_found,
    no_wrap,
    prove_roles,
    replayed_role,
    run_tree,
    side,
    side_layout,
    words_equal,
)
from equiv.zone_device.source.cstate import InterpError, Oracle, State
from equiv.zone_device.source.csummary import PEEL, CLemma
from equiv.zone_device.source.files import load_tree

log = logging.getLogger(__name__)

#: Largest order proved: the PUD order with 4K pages (1 GiB compounds).
MAX_ORDER = 18
#: compounds the bounded search (loops unrolled) covers when the summaries' lemmas fail
BOUNDED_COMPOUNDS = 2


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
    #: the assumptions every query of the cell asserted (the bound of the search with the
    #: loops unrolled too, when it ran), as the reports print them
    assumptions: tuple[Stated, ...] = ()
    #: proved by transitivity over this many steps of a series (:func:`check_series_cell`):
    #: each patch's tree proved equal to the one before it; 0: proved as a pair
    by_steps: int = 0

    @property
    def label(self) -> str:
        """``order 3 ALL``: the cell in a report's list of assumptions."""
        return f"order {self.order} {self.ptype}"


@frozen
class PatchRun(CellRun):
    """Every cell of one base/patched comparison."""

    base: str
    base_version: str
    patched: str
    config: str
    cells: tuple[PatchCell, ...]
    seconds: float
    #: the assumptions of the cells, each once, located in both trees
    #: (:func:`equiv.zone_device.source.assumed.locate`)
    assumptions: tuple[Located, ...] = ()

    @property
    def summarised(self) -> tuple[str, ...]:
        return tuple(sorted({t for c in self.cells for t in c.summarised}))


class Reuse:
    """What the pairs of trees of one (type, order) cell of a series share
    (:func:`check_series_cell`): each tree's interpretation, by the tree (its
    :class:`~equiv.zone_device.source.common.Side`), the scenario, the assumptions' terms
    and how the loops ran; the loop lemmas proved (by identity: the interpretations here
    hold them); and the roles' query contexts with what ``specialise`` decided in them
    (:data:`~equiv.zone_device.source.common.Contexts`), so that a tree's ``ite``
    conditions decided in its pair with the tree before it are not asked again in its pair
    with the tree after it.  Sound because a tree's interpretation depends on nothing else
    (every tree of a series has its own label, so the uninitialised bytes of its struct
    locals are its own symbols), a loop lemma is a claim about one tree's loop under the
    cell's assumptions, whichever tree it is compared with, and a decision is a fact of its
    context's assertions (a context is found by the ids of the assertions it holds, a
    decision by the id of the condition it holds)."""

    def __init__(self) -> None:
        self.trees: dict[tuple[object, ...], tuple[Interp, State]] = {}
        self.proved: set[int] = set()
        self.contexts: Contexts = {}


def check_patch_cell(base: Side, patched: Side, cfg: Config, ptype: MemoryType | None,
                     order: int, *, timeout_ms: int = 60_000,
                     order_hi: int | None = None, reuse: Reuse | None = None) -> PatchCell:
    """Prove the patched tree's C equal to the base tree's for one cell.

    With ``reuse`` (:class:`Reuse`, the cells of one (type, order) of a series), a tree's
    interpretation and the loop lemmas proved for it are taken from an earlier pair of
    trees of the same cell instead of being made again.

    With ``order_hi``, an order class's probe (as
    :func:`equiv.zone_device.source.fidelity.check_fidelity_cell`): one proof for the orders ``order ..=
    order_hi``, ``vmemmap_shift`` symbolic; it stops at the first obligation it does not
    prove, never replays a difference and never runs the bounded search."""
    if not 0 <= order <= (order if order_hi is None else order_hi) <= MAX_ORDER:
        raise InputError(f"order {order} out of range; valid: 0..{MAX_ORDER}")
    t_cell = time.perf_counter()
    L = side_layout(base, cfg)
    if base.structs["page"].size != patched.structs["page"].size:
        raise InputError(f"the patched tree's struct page is {patched.structs['page'].size} "
                         f"bytes, the base tree's {base.structs['page'].size}: the trees' "
                         "memory cannot be compared byte for byte")
    sc = Scenario(L, ptype, order, order_hi)
    inp, early = symbolic_inputs(L)
    pages = z3.Array("mem0.bypfn", z3.BitVecSort(64), z3.BitVecSort(8 * L.size))
    pbarr = z3.Array("mem0.pageblock", z3.BitVecSort(64), z3.BitVecSort(PB_BITS))
    stated = input_assumptions(sc, inp)
    assume = [a.term for a in stated]
    roles: list[RoleResult] = []
    ptname = ptype.kname if ptype else "ALL"
    its: list[Interp] = []

    def done() -> PatchCell:
        lemmas = sum(len(i.lemmas) for i in its)
        # the sides by their place ("base", "patched"), not by the interpreter's label: in a
        # series (reuse) a tree keeps one label, its own, whichever side of a pair it is
        named = list(zip(("base", "patched"), its, strict=False))
        return PatchCell(ptname, order, worst([r.verdict for r in roles]),
                         time.perf_counter() - t_cell, tuple(roles), lemmas,
                         tuple(sorted({s for lbl, i in named for s in
                                       (f"{lbl}: {w}" for w in i.summarised)})),
                         tuple(sorted({(f"{lbl}: {n}", w) for lbl, i in named
                                       for n, w in i.interpreted.items()})),
                         tuple(sorted({t for i in its for t in i.trusted_used})),
                         assumptions=tuple(a.stated for a in stated))

    vacuous = check_assumptions(stated, timeout_ms)
    if vacuous is not None:
        roles.append(vacuous)
        return done()

    why = _prove(base, patched, sc, inp, early, pages, pbarr, assume, its, roles, timeout_ms,
                 summarise=True, reuse=reuse)
    if why and not sc.is_class and any(n < PEEL for i in its for n in i.peeled.values()):
        # a summary made after fewer peeled iterations may rest on a lemma that only holds
        # from a later one: again with every loop peeled PEEL times, as the fallback
        why = _again(base, patched, sc, inp, early, pages, pbarr, assume, its, roles,
                     timeout_ms, reuse)
    if why and not sc.is_class:
        # the summaries are not justified: look for a difference on at most
        # BOUNDED_COMPOUNDS compounds (bounded model checking; a find is replayed with real
        # loops), and report what it finds in place of the unknown roles.  Where a compound
        # is small enough every loop is unrolled.  Else the loops over compounds run as
        # written (BOUNDED_COMPOUNDS + 1 iterations peeled: they end within them) and the
        # loops within a compound are summarised, a find counting only if their lemmas
        # hold; if none is found and a vmemmap can be deduplicated, again with an altmap
        # (a loop that writes past its compound meets aliased tails its summary may not
        # follow; with an altmap there are none)
        unrolled = sc.stride * BOUNDED_COMPOUNDS <= MAX_TRIPS
        how = ("the loops unrolled" if unrolled else
               "the loops over compounds run as written, those within a compound summarised")
        for altmap in (False, True) if not unrolled and sc.dedups_static else (False,):
            bounded: list[RoleResult] = []
            bound = bounded_search(sc, inp, BOUNDED_COMPOUNDS, altmap=altmap)
            stated.append(bound)
            _prove(base, patched, sc, inp, early, pages, pbarr, [*assume, bound.term], [],
                   bounded, timeout_ms, summarise=not unrolled, peel=BOUNDED_COMPOUNDS + 1,
                   peel_least=BOUNDED_COMPOUNDS + 1)
            merge_found(roles, bounded, f"found with {how} (at most {BOUNDED_COMPOUNDS} "
                                        f"compounds{', an altmap' if altmap else ''}) after "
                                        f"{why}")
            if any(r.verdict is Verdict.REFUTED for r in bounded):
                break
    return done()


def _prove(base: Side, patched: Side, sc: Scenario, inp: Inputs, early: z3.FuncDeclRef,
           pages: z3.ArrayRef, pbarr: z3.ArrayRef, assume: list[z3.BoolRef],
           its: list[Interp], roles: list[RoleResult], timeout_ms: int, *,
           summarise: bool, peel: int = PEEL, peel_least: int = 0,
           reuse: Reuse | None = None) -> str:
    """Interpret both trees and decide every role (:func:`~equiv.zone_device.source.common.prove_roles`),
    appending to ``its`` and ``roles``; with ``reuse``, a tree's interpretation and its
    proved lemmas are taken from it (and put there).  Returns "" if the loop lemmas hold (or
    none were needed), else why not."""
    t_cell = time.perf_counter()
    assert summarise or not sc.is_class, "an order class is never unrolled"

    def initial(pfn: Val) -> PageState:
        return PageState(bits=z3.Select(pages, pfn))

    def initial_pb(b: Val) -> Val:
        return z3.Select(pbarr, b)

    finals: list[State] = []
    key = (sc, tuple(a.get_id() for a in assume), summarise, peel, peel_least)
    for sd, place in ((base, "base"), (patched, "patched")):
        got = reuse.trees.get((id(sd), *key)) if reuse is not None else None
        if got is None:
            try:
                oracle = Oracle(assume, altmap_cases(inp), timeout_ms=timeout_ms)
                got = run_tree(sd, sc, inp, initial, initial_pb, oracle, summarise=summarise,
                               fold=True, peel=peel, peel_least=peel_least)
            except InterpError as e:
                roles.append(RoleResult(f"interpret_{place}", Verdict.UNKNOWN,
                                        time.perf_counter() - t_cell, reason=str(e)))
                return f"interpreting {place}: {e}"
            if reuse is not None:
                reuse.trees[(id(sd), *key)] = got
        it, st = got
        its.append(it)
        finals.append(st)
        log.debug("interpreted %s: %.1fs", sd.label, time.perf_counter() - t_cell)
    g = geometry(sc, inp)
    c, t = z3.BitVec("c", 64), z3.BitVec("t", 64)
    b = z3.BitVec("pageblock.b", 64)

    def observe() -> list[RoleClaim]:
        obs: list[RoleClaim] = []
        for role in roles_for(sc.orders[0]):
            if role.name == "pageblock":
                sides = [f.mem.read_pb_any(b) for f in finals]
                obs.append(RoleClaim("pageblock_equal", z3.BoolVal(True),
                                     z3.And(sides[0] == sides[1]), []))
                continue
            in_range = z3.ULT(c, g.ncompounds)
            fixed = {"head": 0, "tail1": 1, "tail2": 2}.get(role.name)
            if fixed is not None:
                cons = z3.And(in_range, t == fixed)
            elif role.name == "tail":
                # every storage of a tail: a struct page a deduplicated vmemmap shares is
                # the storage of tail P + t % P (storage_pfn), compared in that role
                aliased, _ = storage_pfn(sc, inp, pfn_of(sc, g, c, t))
                cons = z3.And(in_range, z3.UGE(t, 3), z3.ULT(t, sc.stride_v))
                if aliased is not False:
                    cons = z3.And(cons, z3.Not(bv.as_z3_bool(aliased)))
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
            alone = [z3.Not(bv.as_z3_bool(f.mem.footprint(n))) for f in finals] \
                if role.name == "outside" else []
            inside = role.name != "outside"
            obs.append(RoleClaim(f"{role.name}_equal", cons, words_equal(a.bits, bb.bits), alone,
                                 z3.ULT(0, g.ncompounds) if inside else None,
                                 in_range if inside else None))
        return obs

    asked: list[Lemma | CLemma] = []

    def lemmas() -> list[Lemma | CLemma]:
        # a lemma proved in an earlier pair of the same cell (reuse: same assumptions, and
        # a lemma is about one tree's loop alone) is not asked again
        done = reuse.proved if reuse is not None else set()
        asked[:] = [lm for it in its for lm in it.lemmas if id(lm) not in done]
        return list(asked)

    why = prove_roles(RoleProof(
        sc=sc, inp=inp, assume=assume, c=c, t=t, timeout_ms=timeout_ms, observe=observe,
        lemmas=lemmas,
        refute=lambda n, m, dt: _refute(base, patched, sc, n, m, inp, early, pages, pbarr,
                                        {"c": c, "t": t, "b": b}, dt, summarise=summarise),
        steer=True, explain=True, contexts=reuse.contexts if reuse is not None else None),
        roles, t_cell)
    if reuse is not None and not why:
        reuse.proved.update(id(lm) for lm in asked)
    return why


def _again(base: Side, patched: Side, sc: Scenario, inp: Inputs, early: z3.FuncDeclRef,
           pages: z3.ArrayRef, pbarr: z3.ArrayRef, assume: list[z3.BoolRef], its: list[Interp],
           roles: list[RoleResult], timeout_ms: int, reuse: Reuse | None) -> str:
    """The summarised proof again with every loop peeled :data:`PEEL` times, in place of
    one whose loop lemmas did not all hold after fewer peeled iterations
    (:func:`~equiv.zone_device.source.cstmt.peeled_summary`): its roles and interpreters
    replace the first run's.  Why the lemmas still do not hold, or ""."""
    again_its: list[Interp] = []
    again: list[RoleResult] = []
    why = _prove(base, patched, sc, inp, early, pages, pbarr, assume, again_its, again,
                 timeout_ms, summarise=True, peel_least=PEEL, reuse=reuse)
    its[:], roles[:] = again_its, again
    return why


def _refute(base: Side, patched: Side, sc: Scenario, name: str, model: RenamedModel,
            inp: Inputs, early: z3.FuncDeclRef, pages: z3.ArrayRef, pbarr: z3.ArrayRef,
            idx: dict[str, z3.BitVecRef], dt: float, summarise: bool) -> RoleResult:
    """Replay a model on both trees in the concrete domain, with the loops summarised or
    run as written as in the proof that found it; the differing fields."""
    L = sc.layout
    mv = ModelValues(model, L, early, pages, pbarr)
    scalars, index = mv.scalars(inp), mv.indices(idx)
    cpage, cell, stack = mv.page, mv.cell, mv.stack
    cinp = mv.inputs(scalars)
    finals = [run_tree(sd, sc, cinp, cpage, cell, None, stack, summarise=summarise,
                       fold=True)[1] for sd in (base, patched)]
    if name == "pageblock_equal":
        bv_ = CBV(index["b"], 64)
        sv, fv = (int(f.mem.read_pb_any(bv_)) for f in finals)
        run = ConcreteRun(sv, fv, None, None)
        pfn = None
        keep = {"b": index["b"]}
        initial = int(cell(bv_))
    else:
        g = geometry(sc, cinp)
        pfn_v = pfn_of(sc, g, CBV(index["c"], 64), CBV(index["t"], 64))
        aliased, stored = storage_pfn(sc, cinp, pfn_v)
        pfn_v = stored if aliased is True else pfn_v  # (a role observes storage only)
        run = ConcreteRun(finals[0].mem.read_any(pfn_v), finals[1].mem.read_any(pfn_v),
                          int(pfn_v), None)
        pfn = int(pfn_v)
        keep = {"c": index["c"], "t": index["t"]}
        initial = int(cpage(pfn_v).bits)
    return replayed_role(L, name, run, dt, scalars, keep, pfn, initial=initial)


def check_series_cell(sides: Sequence[Side], cfg: Config, ptype: MemoryType | None, order: int,
                      *, timeout_ms: int = 60_000) -> tuple[tuple[PatchCell, ...], PatchCell]:
    """One (type, order) cell of a series of trees ``sides`` (the base, then the tree after
    each patch that changes a file equiv reads): each tree against the one before it, then
    the last against the first.  Each tree is interpreted once and its loop lemmas proved
    once (:class:`Reuse`).  The series' cell is proved by transitivity, without a query of
    its own, when every step's cell is PROVED under the same assumptions on the same struct
    page layout (each step's roles then say the two trees leave every struct page and
    pageblock cell the same for every input the assumptions allow, so the first and the
    last tree do too); otherwise it is proved as a pair of its own.  Returns the steps'
    cells and the series' cell."""
    if len(sides) < 2:
        raise ValueError("a series needs the base tree and at least one patched tree")
    reuse = Reuse()
    steps = tuple(check_patch_cell(a, b, cfg, ptype, order, timeout_ms=timeout_ms, reuse=reuse)
                  for a, b in pairwise(sides))
    layouts = {side_layout(sd, cfg) for sd in sides}
    if (len(layouts) == 1 and all(c.verdict is Verdict.PROVED for c in steps)
            and len({c.assumptions for c in steps}) == 1):
        return steps, _by_steps(steps)
    return steps, check_patch_cell(sides[0], sides[-1], cfg, ptype, order,
                                   timeout_ms=timeout_ms, reuse=reuse)


#: the reason a series' role carries when it is proved by transitivity
BY_STEPS = ("proved by transitivity: each patch's tree proved equal to the tree before it "
            "in this role, under the same assumptions")


def _by_steps(steps: Sequence[PatchCell]) -> PatchCell:
    """The series' cell of :func:`check_series_cell` when every step proved it: each role
    PROVED, saying so (:data:`BY_STEPS`); the base's interpretation from the first step's,
    the last tree's from the last step's; its loop-summary lemmas are the steps' (the
    series' verdict rests on every one of them)."""
    first, last = steps[0], steps[-1]
    summ = ({x for x in first.summarised if x.startswith("base: ")}
            | {x for x in last.summarised if x.startswith("patched: ")})
    interp = ({x for x in first.interpreted if x[0].startswith("base: ")}
              | {x for x in last.interpreted if x[0].startswith("patched: ")})
    return PatchCell(first.ptype, first.order, Verdict.PROVED, sum(c.seconds for c in steps),
                     tuple(RoleResult(r.name, Verdict.PROVED, 0.0, reason=BY_STEPS)
                           for r in first.roles),
                     sum(c.lemmas for c in steps), tuple(sorted(summ)), tuple(sorted(interp)),
                     tuple(sorted({t for c in steps for t in c.trusted})),
                     assumptions=first.assumptions, by_steps=len(steps))


@frozen
class SeriesRun:
    """A series proved patch by patch (:func:`run_series_proof`): the last tree against the
    base, and each tree against the one before it."""

    series: PatchRun
    steps: tuple[PatchRun, ...]


def run_series_proof(roots: Sequence[Path], cfg: Config, types: list[MemoryType | None],
                     orders: list[int], *, labels: Sequence[str], series_label: str,
                     timeout_ms: int = 60_000, jobs: int = 1,
                     on_done: Callable[[int], None] | None = None,
                     backstop_s: float | None = None) -> SeriesRun:
    """Every (type, order) cell of a series of trees ``roots`` (the base, then the tree
    after each patch that changes a file equiv reads; ``labels`` the steps' labels) by
    :func:`check_series_cell`, with ``jobs`` > 1 in that many worker processes (largest
    order first); ``on_done(k)`` as each cell ends, ``k`` the pairs it proved (the steps
    and the series); ``backstop_s`` as :func:`run_patch_proof`'s (every pair of a cell
    stopped is UNKNOWN)."""
    if len(roots) < 2 or len(labels) != len(roots) - 1:
        raise ValueError("a series needs the base tree, at least one patched tree and a "
                         "label per patched tree")
    t0 = time.perf_counter()
    trees = [load_tree(r) for r in roots]
    todo = [(ty, o) for o in orders for ty in types]
    names = tuple(str(r) for r in roots)
    tags = _series_labels(len(roots))
    # read here, before the workers fork: they inherit them
    sides = _worker_sides(names, cfg, tags, trees)

    def local(_n: object, _c: object, ty: MemoryType | None, o: int, ms: int
              ) -> tuple[tuple[PatchCell, ...], PatchCell]:
        return check_series_cell(sides, cfg, ty, o, timeout_ms=ms)

    out = map_calls(_series_worker, [(names, cfg, ty, o, timeout_ms) for ty, o in todo], jobs,
                    local=local, order=sorted(range(len(todo)), key=lambda i: -todo[i][1]),
                    on_done=(lambda _: on_done(len(roots))) if on_done is not None else None,
                    backstop_s=backstop_s,
                    stopped=lambda i, why: _stopped_series(todo[i][0], todo[i][1], len(labels),
                                                           backstop_s or 0.0, why))
    seconds = time.perf_counter() - t0

    def as_run(k: int, label: str, cells: tuple[PatchCell, ...]) -> PatchRun:
        before, after = (0, len(roots) - 1) if k < 0 else (k, k + 1)
        return PatchRun(str(roots[before]), trees[before].version, label, cfg.name, cells,
                        sum(c.seconds for c in cells),
                        locate([(c.label, c.assumptions) for c in cells],
                               [("base", trees[before]), ("patched", trees[after])]))

    series = as_run(-1, series_label, tuple(s for _, s in out))
    series = evolve(series, seconds=seconds)
    return SeriesRun(series, tuple(as_run(k, labels[k], tuple(st[k] for st, _ in out))
                                   for k in range(len(labels))))


def stopped_cell(ptype: MemoryType | None, order: int, seconds: float, why: str) -> PatchCell:
    """A cell whose worker was killed at the wall-clock backstop: UNKNOWN, saying so (no
    obligation of it decided; the run goes on with the other cells)."""
    return PatchCell(ptype.kname if ptype else "ALL", order, Verdict.UNKNOWN, seconds,
                     (backstop_role(seconds, why),), 0, (), (), ())


def _stopped_series(ptype: MemoryType | None, order: int, steps: int, seconds: float,
                    why: str) -> tuple[tuple[PatchCell, ...], PatchCell]:
    cell = stopped_cell(ptype, order, seconds, why)
    return (cell,) * steps, cell


#: the labels of a pair's trees (:func:`run_patch_proof`)
PAIR = ("base", "patched")


def _series_labels(n: int) -> tuple[str, ...]:
    """The labels of a series' ``n`` trees: ``base``, then ``patch-1``, ...; each tree its
    own, since the interpretations a series shares between its pairs must not share a
    struct local's uninitialised bytes (``stack.<label>.<local>``)."""
    return ("base", *(f"patch-{k}" for k in range(1, n)))


def _read_sides(roots: Sequence[str], cfg: Config, labels: Sequence[str],
                trees: Sequence[KernelTree] | None = None) -> list[Side]:
    """The trees at ``roots`` (read, unless ``trees`` holds them) typed for ``cfg`` and
    labelled ``labels``; the first is the base, in whose whole tree clang types a patched
    copy of the mirrored files (:func:`_full`).  The trees are typed in threads, one per
    tree: clang's parse runs outside Python's lock (two trees 0.9 s against 1.5 s one after
    the other); the generated headers are found or built one tree at a time
    (:func:`~equiv.zone_device.source.files.headers_for`)."""
    base = Path(roots[0])
    kts = trees if trees is not None else [load_tree(Path(r)) for r in roots]
    fulls = [None if k == 0 else _full(Path(r), base) for k, r in enumerate(roots)]
    with ThreadPoolExecutor(max_workers=len(kts)) as pool:
        return list(pool.map(side, labels, kts, [cfg] * len(kts), fulls))


def _worker_sides(roots: tuple[str, ...], cfg: Config, labels: tuple[str, ...],
                  trees: Sequence[KernelTree] | None = None) -> list[Side]:
    """:func:`_read_sides`, once per process (:data:`_WORKER_SIDES`): its next cells reuse
    them (and the proofs of order-free queries,
    :data:`~equiv.zone_device.source.clemmas.FREE_PROVED`).  A run calls it before its
    workers fork, so they start with the sides read (each worker read them again before:
    about 2 s of CPU each, where the parent's threads take 0.9 s)."""
    key = (roots, cfg, labels)
    got = _WORKER_SIDES.get(key)
    if got is None:
        _WORKER_SIDES.clear()
        got = _WORKER_SIDES[key] = _read_sides(roots, cfg, labels, trees)
    return got


def _series_worker(roots: tuple[str, ...], cfg: Config, ptype: MemoryType | None, order: int,
                   timeout_ms: int) -> tuple[tuple[PatchCell, ...], PatchCell]:
    """One cell of a series in a worker process (:func:`check_series_cell`)."""
    return check_series_cell(_worker_sides(roots, cfg, _series_labels(len(roots))), cfg,
                             ptype, order, timeout_ms=timeout_ms)


def run_patch_proof(base_root: Path, patched_root: Path, cfg: Config,
                    types: list[MemoryType | None], orders: list[int], *, label: str,
                    timeout_ms: int = 60_000, jobs: int = 1, classes: bool = False,
                    on_done: Callable[[int], None] | None = None,
                    backstop_s: float | None = None) -> PatchRun:
    """Every (type, order) cell; with ``jobs`` > 1 in that many worker processes (largest
    order first; the result order does not depend on it); ``on_done(1)`` as each cell ends.
    ``classes``: each order class first tried with one probe, as
    :func:`equiv.zone_device.source.fidelity.run_fidelity` does (off by default, for the
    same measured reason).  With ``backstop_s``, every cell runs in a worker process that
    is killed after that many seconds (wall clock), the cell UNKNOWN saying so
    (:func:`stopped_cell`)."""
    t0 = time.perf_counter()
    base_tree, patched_tree = load_tree(base_root), load_tree(patched_root)
    roots = (str(base_root), str(patched_root))
    # read here, before the workers fork: they inherit them
    base, patched = _worker_sides(roots, cfg, PAIR, (base_tree, patched_tree))

    def local(_b: str, _p: str, _c: Config, ty: MemoryType | None, o: int, ms: int,
              hi: int | None) -> PatchCell:
        return check_patch_cell(base, patched, cfg, ty, o, timeout_ms=ms, order_hi=hi)

    def run(todo: list[tuple[MemoryType | None, int, int | None]]) -> list[PatchCell]:
        return map_calls(
            _cell_worker, [(*roots, cfg, ty, o, timeout_ms, hi) for ty, o, hi in todo], jobs,
            local=local, order=largest_first(todo), on_done=on_done, backstop_s=backstop_s,
            stopped=lambda i, why: stopped_cell(todo[i][0], todo[i][1], backstop_s or 0.0, why))

    cuts = order_classes(side_layout(side("base", base_tree, cfg), cfg), orders) if classes else []
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
    done = tuple(cells[ty, o] for o in orders for ty in types)
    return PatchRun(str(base_root), base_tree.version, label, cfg.name, done,
                    time.perf_counter() - t0,
                    locate([(c.label, c.assumptions) for c in done],
                           [("base", base_tree), ("patched", patched_tree)]))


def _full(root: Path, base: Path) -> Path | None:
    """The whole tree clang types a patched copy in: ``base`` when the copy holds only the
    mirrored files and ``base`` holds ``mm/`` whole (its other headers), else none."""
    return base if not (root / "mm" / "vma.h").is_file() and (base / "mm" / "vma.h").is_file() \
        else None


def _cell_worker(base_root: str, patched_root: str, cfg: Config, ptype: MemoryType | None,
                 order: int, timeout_ms: int, order_hi: int | None = None) -> PatchCell:
    """One cell in a worker process (tree-sitter trees do not cross processes), the two
    sides read and typed once per worker (:func:`_worker_sides`)."""
    base, patched = _worker_sides((base_root, patched_root), cfg, PAIR)
    return check_patch_cell(base, patched, cfg, ptype, order, timeout_ms=timeout_ms,
                            order_hi=order_hi)


#: a worker process's trees of the comparison or series it runs cells of, by (roots,
#: configuration, labels): reading and typing the trees (clang) took ~6 s of a ~20 s cell;
#: the trees are read from disk once per worker, which is only given cells of one run
_WORKER_SIDES: dict[tuple[tuple[str, ...], Config, tuple[str, ...]], list[Side]] = {}
on_forget(_WORKER_SIDES.clear)


__all__ = ["BY_STEPS", "MAX_ORDER", "PatchCell", "PatchRun", "Reuse", "SeriesRun",
           "check_patch_cell", "check_series_cell", "run_patch_proof", "run_series_proof",
           "stopped_cell"]

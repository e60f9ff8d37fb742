"""What the source-derived proofs share: the hand-written models a tree is checked against,
the loop-summary lemma check, the specialisation of a role's terms to its constraint, a
tree's run of ``memmap_init_zone_device()`` (:func:`run_tree`), a page role's query
(:func:`check_role`) and everything a cell decides once its sides are interpreted
(:func:`prove_roles`).

Used by ``--linux`` (:mod:`equiv.zone_device.source.fidelity`: a tree against the hand model) and
``--patch``/``--against`` (:mod:`equiv.zone_device.source.patchproof`: two trees against each other);
``--live`` runs a tree's C on a dump's inputs through :func:`run_tree`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import z3
from attrs import evolve, frozen

from equiv.config import Config
from equiv.engine import bv
from equiv.engine.bv import CBV, Val
from equiv.engine.errors import InputError, InternalMismatch
from equiv.engine.picture import Box
from equiv.engine.query import z3_gave_up
from equiv.engine.splitsum import split_sums
from equiv.engine.verdict import Verdict, worst
from equiv.linux.ktree import KernelTree, Preprocessor
from equiv.loops import Ctx, Lemma
from equiv.memmap import Assumption, Inputs, Scenario
from equiv.page_model import PB_BITS, ConcreteMemory, Layout, Memory, PageState
from equiv.slow_path import memmap_init_zone_device
from equiv.zone_device.counterexample import ConcreteRun, FieldDiff, Observed, page_diffs
from equiv.zone_device.present import page_boxes
from equiv.zone_device.source.cdefs import compiled
from equiv.zone_device.source.cinterp import Interp, conjuncts, initial_state
from equiv.zone_device.source.clemmas import (
    FREE_FAILED,
    FREE_PROVED,
    free_first,
    order_free,
    prove_lemmas,
    remember_free,
)
from equiv.zone_device.source.cstate import (
    Case,
    CInt,
    InterpError,
    Oracle,
    Ptr,
    Renaming,
    State,
    free_names,
)
from equiv.zone_device.source.csummary import PEEL, CLemma, LemmaCex, has_select
from equiv.zone_device.source.ctyped import TypedTree
from equiv.zone_device.source.decide import Decided, Memo, specialise, substitute_all
from equiv.zone_device.source.slow_v612y import layout_612, path_612y
from equiv.zone_device.source.src_layout import SrcStruct, source_structs
from equiv.zone_device.source.tree_layout import layout_from_tree

HandPath = Callable[[Ctx, Scenario, Inputs], Memory]

log = logging.getLogger(__name__)


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


def _names_612(L: Layout) -> Layout:
    """The 2026 layout of --compare v6.12 under 6.12's names: the tree it runs on is 6.12."""
    return L.named_for("6.12")


def _compare_612(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
    from equiv.slow_variants import comparison
    return comparison("v6.12").path(ctx, sc, inp)


MODELS: dict[str, Model] = {m.name: m for m in (
    Model("v7.3-rc1", "7.3", "the base slow path (equiv/slow_path.py)", memmap_init_zone_device,
          _same_layout),
    Model("v6.12.y", "6.12", "6.12 stable, 6.12.117 (equiv/zone_device/source/slow_v612y.py)",
          path_612y, layout_612),
    Model("v6.12", "6.12", "--compare v6.12: the v6.12 release as recalled in the reference "
          "(equiv/slow_variants.py)", _compare_612, _names_612),
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


class Evaluates(Protocol):
    """A model: z3's, or one that renames terms before evaluating them."""

    def eval(self, e: z3.ExprRef, model_completion: bool = False) -> z3.ExprRef: ...


@frozen(eq=False)
class ModelValues:
    """The concrete values a SAT model of a source-derived proof gives the inputs both sides
    run on (the replay of :mod:`equiv.zone_device.source.fidelity` and
    :mod:`equiv.zone_device.source.patchproof`):
    the scalar inputs, the role's indices, each struct page of the initial memory (one array
    indexed by pfn), each pageblock cell, which sections are early, and the uninitialised
    bytes of a struct local."""

    model: Evaluates
    layout: Layout
    early: z3.FuncDeclRef
    pages: z3.ArrayRef
    pbarr: z3.ArrayRef

    def _eval(self, t: z3.ExprRef) -> z3.ExprRef:
        return self.model.eval(t, model_completion=True)

    def scalars(self, inp: Inputs) -> dict[str, int | bool]:
        """Every scalar input of ``inp`` (:attr:`Inputs.SCALARS`) at its model value."""
        out: dict[str, int | bool] = {}
        for k in Inputs.SCALARS:
            v = self._eval(getattr(inp, k))
            out[k] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
        return out

    def indices(self, idx: dict[str, z3.BitVecRef]) -> dict[str, int]:
        return {k: self._eval(v).as_long() for k, v in idx.items()}

    def page(self, pfn: Val) -> PageState:
        """The initial struct page of ``pfn`` (no writer yet)."""
        v = self._eval(z3.Select(self.pages, z3.BitVecVal(int(pfn), 64)))
        size = self.layout.size
        return PageState(bits=CBV(v.as_long(), 8 * size), origin=((),) * size)

    def cell(self, b: Val) -> Val:
        """The initial pageblock bitmap cell ``b``."""
        v = self._eval(z3.Select(self.pbarr, z3.BitVecVal(int(b), 64)))
        return CBV(v.as_long(), PB_BITS)

    def is_early(self, n: int) -> bool:
        """Is section ``n`` early?"""
        return bool(z3.is_true(self._eval(self.early(z3.BitVecVal(n, 64)))))

    def inputs(self, scalars: dict[str, int | bool]) -> Inputs:
        """Concrete inputs of ``scalars`` (:meth:`scalars`) with this model's early sections;
        their memory is a placeholder, to be replaced once the geometry is known."""
        vals = {k: (v if isinstance(v, bool) else CBV(v, 32 if k == "pgmap_type" else 64))
                for k, v in scalars.items()}
        return Inputs(early_section=lambda n: self.is_early(int(n)),
                      mem=ConcreteMemory(lambda n: self.page(CBV(0, 64)),
                                         lambda b: CBV(0, PB_BITS)),
                      **vals)

    def stack(self, local: str, size: int) -> PageState:
        """The uninitialised bytes of the struct local ``local`` (``size`` bytes)."""
        v = self._eval(z3.BitVec(local, 8 * size))
        return PageState(bits=CBV(v.as_long(), 8 * size), origin=((),) * size)



def order_not_covered(sc: Scenario, assume: list[z3.BoolRef],
                      roles: Sequence[tuple[z3.BoolRef, Sequence[z3.BitVecRef]]],
                      timeout_ms: int) -> str:
    """For an order class's probe (:attr:`equiv.memmap.Scenario.is_class`): "" if at every
    order of the class the assumptions hold and every role's constraint can hold (as each
    order's own cell requires: its assumptions satisfiable and no role VACUOUS), else which
    order fails and why.  ``roles`` are (constraint, its index symbols); each role's
    constraint is asked on indices of its own, all of them in one query per order
    (satisfiable: each is), and only if that is not satisfiable each role alone (the
    counterpart of :func:`equiv.zone_device.check.order_not_covered` for the source-derived proofs)."""
    shift = sc.order_v
    assert isinstance(shift, z3.BitVecRef), "only an order class has orders to cover"
    conds: list[z3.BoolRef] = []
    for i, (cons, idx) in enumerate(roles):
        pairs = [(v, z3.BitVec(f"role{i}.{v}", v.size())) for v in idx]
        conds.append(z3.substitute(cons, *pairs) if pairs else cons)
    s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    s.add(*assume)
    for k in sc.orders:
        at = shift == k
        if s.check(at, *conds) == z3.sat:
            continue
        r = s.check(at)
        if r != z3.sat:
            return f"order {k}: the assumptions {'cannot hold' if r == z3.unsat else r}"
        for c in conds:
            r = s.check(at, c)
            if r != z3.sat:
                return f"order {k}: a role's constraint {'cannot hold' if r == z3.unsat else r}"
    return ""


def merge_found(roles: list[RoleResult], bounded: list[RoleResult], how: str) -> None:
    """Put the roles the bounded search REFUTED (``bounded``) in place of the same roles left
    UNKNOWN in ``roles`` (each saying it was ``how`` found), and add those ``roles`` lacks
    (a tree that could not be interpreted with summaries has no page roles yet)."""
    found = {r.name: evolve(r, reason=how) for r in bounded if r.verdict is Verdict.REFUTED}
    names = {r.name for r in roles}
    roles[:] = [found[r.name] if r.name in found and r.verdict is Verdict.UNKNOWN else r
                for r in roles]
    roles += [r for n, r in found.items() if n not in names]


@frozen
class RoleResult:
    """One obligation of a cell of a source-derived proof (``--linux``'s tree against the
    hand model, ``--patch``'s base tree against the patched one): a page role, a loop
    lemma or a check of the cell (``assumptions_satisfiable``, ``orders_covered``, ...)."""

    name: str
    verdict: Verdict
    seconds: float
    diffs: tuple[FieldDiff, ...] = ()
    inputs: tuple[tuple[str, int | bool], ...] = ()
    index: tuple[tuple[str, int], ...] = ()
    pfn: int | None = None
    reason: str = ""
    #: the observed struct page (or bitmap cell) as bytes in memory order: the initial
    #: contents the solver picked (arbitrary memory), and what each side left there
    observed: Observed | None = None
    #: scalar inputs whose value does not matter: with every other input and the role's
    #: index as shown, every value the assumptions allow (and any initial memory) gives a
    #: difference (:func:`irrelevant_inputs`)
    irrelevant: tuple[str, ...] = ()
    #: every name of the observed bytes in the layout the proof used (the HTML diagram)
    boxes: tuple[Box, ...] = ()
    #: a loop_summary_lemmas obligation not proved: the failed lemma's counterexample (the
    #: solver's model, not replayed), if the solver gave one
    lemma_cex: LemmaCex | None = None


def largest_first(todo: Sequence[tuple[object, int, int | None]]) -> list[int]:
    """The order in which to start cells ``(type, order, highest order of a class or
    None)`` in workers: the most orders first (a class's probe), then the largest order
    (the longest cells first, so that the last ones to end are short)."""
    return sorted(range(len(todo)),
                  key=lambda i: (-((todo[i][2] or todo[i][1]) - todo[i][1]), -todo[i][1]))


def backstop_role(seconds: float, why: str) -> RoleResult:
    """The one obligation of a cell whose worker was killed at the wall-clock backstop
    (``--backstop-s``, :func:`equiv.engine.runner.map_in_workers`): UNKNOWN, saying why."""
    return RoleResult("backstop", Verdict.UNKNOWN, seconds, reason=why)


def replayed_role(L: Layout, name: str, run: ConcreteRun, dt: float, scalars: dict[str, int | bool],
             index: dict[str, int], pfn: int | None, reason: str = "",
             initial: int | None = None) -> RoleResult:
    """A role REFUTED by the concrete replay ``run`` of both sides (of either source-derived
    proof: ``--linux``'s hand model and tree, ``--patch``'s base and patched tree), with the
    differing fields and the observed bytes (``initial``: the struct page's or bitmap cell's initial contents,
    the solver's pick); a replay that shows no difference is an internal mismatch (never
    reported)."""
    page_index = {"head_equal": 0, "tail1_equal": 1, "tail2_equal": 2}.get(name)
    diffs = page_diffs(L, page_index, run)
    if not diffs:
        raise InternalMismatch(f"source-derived proof, {name}: the solver's difference did not "
                               "reproduce in the concrete replay of both sides")
    observed: Observed | None = None
    boxes: tuple[Box, ...] = ()
    if initial is not None:
        if isinstance(run.slow, int) and isinstance(run.fast, int):
            n = (PB_BITS + 7) // 8
            observed = Observed(*(v.to_bytes(n, "little") for v in (initial, run.slow, run.fast)))
            boxes = (Box("pageblock migratetype bits", 0, n),)
        elif not isinstance(run.slow, int) and not isinstance(run.fast, int):
            observed = Observed(*(int(v).to_bytes(L.size, "little")
                                  for v in (initial, run.slow.bits, run.fast.bits)))
            boxes = page_boxes(L, page_index)
    return RoleResult(name, Verdict.REFUTED, dt, diffs, tuple(sorted(scalars.items())),
                      tuple(sorted(index.items())), pfn, reason, observed=observed, boxes=boxes)


def check_assumptions(assume: Sequence[Assumption], timeout_ms: int) -> RoleResult | None:
    """Can a cell's assumptions hold together?  None if so (a model exists); else the
    ``assumptions_satisfiable`` obligation: VACUOUS naming assumptions that cannot hold
    together (z3's unsat core over them), or UNKNOWN with the solver's reason."""
    t0 = time.perf_counter()
    s = z3.SolverFor("QF_AUFBV")
    s.set("timeout", timeout_ms)
    marks = [z3.Bool(f"equiv.assumption.{i}") for i in range(len(assume))]
    s.add(*(z3.Implies(m, a.term) for m, a in zip(marks, assume, strict=True)))
    r = s.check(*marks)
    if r == z3.sat:
        return None
    dt = time.perf_counter() - t0
    if r == z3.unsat:
        core = {str(m) for m in s.unsat_core()}
        names = [a.stated.text for m, a in zip(marks, assume, strict=True) if str(m) in core]
        return RoleResult("assumptions_satisfiable", Verdict.VACUOUS, dt,
                          reason="the assumptions cannot hold together: " + "; ".join(names))
    return RoleResult("assumptions_satisfiable", Verdict.UNKNOWN, dt,
                      reason=f"whether the assumptions can hold: {gave_up(s, t0, timeout_ms)}")


def gave_up(s: z3.Solver, t0: float, timeout_ms: int) -> str:
    """Why ``s`` answered unknown in a check begun at ``t0`` (``time.perf_counter()``):
    the budget that ran out and the option that raises it
    (:func:`equiv.engine.query.z3_gave_up`; the C path gives z3 no resource limit)."""
    return z3_gave_up(str(s.reason_unknown()), seconds=time.perf_counter() - t0,
                      timeout_ms=timeout_ms, rlimit=None)


def undisproved(name: str, out: object, dt: float, lemma_ok: bool) -> RoleResult:
    """A role whose query gave no counterexample: UNKNOWN with the solver's reason (``out``
    a string), VACUOUS (its constraint unsatisfiable), else PROVED, or UNKNOWN while the
    loop lemmas it rests on are not proved."""
    if isinstance(out, str):
        return RoleResult(name, Verdict.UNKNOWN, dt, reason=out)
    if out is Verdict.VACUOUS:
        return RoleResult(name, Verdict.VACUOUS, dt,
                          reason="role constraint unsatisfiable under the assumptions")
    return RoleResult(name, Verdict.PROVED if lemma_ok else Verdict.UNKNOWN, dt,
                      reason="" if lemma_ok else "the loop lemmas are not proved")


class RunCell(Protocol):
    """What :class:`CellRun` reads of a cell (a ``FidelityCell``, a ``PatchCell``)."""

    @property
    def verdict(self) -> Verdict: ...

    @property
    def interpreted(self) -> tuple[tuple[str, str], ...]: ...

    @property
    def trusted(self) -> tuple[str, ...]: ...


class CellRun:
    """What a run of source-derived cells (``--linux``'s ``FidelityRun``, ``--patch``'s
    ``PatchRun``) says as a whole: the worst of its cells' verdicts, and the C they
    interpreted and the helpers they trusted, each once, sorted."""

    cells: Sequence[RunCell]

    @property
    def verdict(self) -> Verdict:
        return worst([c.verdict for c in self.cells])

    @property
    def interpreted(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted({x for c in self.cells for x in c.interpreted}))

    @property
    def trusted(self) -> tuple[str, ...]:
        return tuple(sorted({t for c in self.cells for t in c.trusted}))


# ---- one tree's run ------------------------------------------------------------------------


@frozen(eq=False)
class Side:
    """One kernel tree to interpret (:func:`run_tree`), parsed once: its text, the macros the
    configuration resolves and its struct layouts (:mod:`equiv.zone_device.source.src_layout`)."""

    #: names the run's symbols: "base" or "patched" (``--patch``), "tree" (``--linux``),
    #: "live" (``--live``)
    label: str
    tree: KernelTree
    #: the preprocessor's decisions: clang's (:meth:`TypedTree.branches`)
    env: Preprocessor
    structs: dict[str, SrcStruct]
    #: clang's types of the tree (:mod:`equiv.zone_device.source.ctyped`)
    typed: TypedTree


def side(label: str, tree: KernelTree, cfg: Config, full: Path | None = None) -> Side:
    """The tree ``tree`` read for the configuration ``cfg``, typed by clang
    (:func:`~equiv.zone_device.source.ctyped.typed_for`; ``full``: the whole tree a patched
    copy of the mirrored files was made from).

    Raises:
        InputError: no headers for ``cfg``, or clang cannot type the tree.
    """
    typed, env = compiled(tree, cfg, full)
    return Side(label, tree, env, source_structs(typed), typed)


def side_layout(sd: Side, cfg: Config) -> Layout:
    """The struct page layout of ``sd``'s tree for ``cfg`` as clang lays it out
    (:func:`~equiv.zone_device.source.tree_layout.layout_from_tree`): the bytes, atoms,
    printed names and page->flags layout a proof about the tree runs on and reports.

    Raises:
        InputError: the tree's page->flags layout is not one clang evaluates.
    """
    return layout_from_tree(sd.typed, cfg)


def run_tree(sd: Side, sc: Scenario, inp: Inputs, initial: Callable[[Val], PageState],
             initial_pb: Callable[[Val], Val] | None, oracle: Oracle | None,
             stack_init: Callable[[str, int], PageState] | None = None,
             summarise: bool = True, fold: bool = False, peel: int = PEEL,
             peel_least: int = 0) -> tuple[Interp, State]:
    """``memmap_init_zone_device(zone, start_pfn, nr_pages, pgmap)`` (mm/mm_init.c)
    interpreted from ``sd``'s text (:class:`~equiv.zone_device.source.cinterp.Interp`) on
    ``inp``, the struct pages, pageblock cells and struct locals starting as ``initial``,
    ``initial_pb`` (None: the inputs' memory) and ``stack_init`` give them (None:
    :meth:`~equiv.zone_device.source.cinterp.Interp.stack_init`'s default); with
    ``summarise`` its loops summarised (:mod:`equiv.zone_device.source.csummary`), else run
    as written; with ``fold`` struct pages stored as a deduplicated vmemmap shares them
    (:class:`~equiv.zone_device.source.cstate.VmemmapFold`); a summarised loop's first
    iterations run as written before its summary: in the symbolic domain as few as the
    summary can follow, from ``peel_least`` up to ``peel``, in the concrete domain ``peel``
    (:func:`~equiv.zone_device.source.cstmt.peeled_summary`).  The interpreter (what it
    read, trusted and summarised, the lemmas it needs) and the final state."""
    it = Interp(sd.tree, sd.env, sd.typed, sc, inp, oracle, summarise=summarise,
                label=sd.label, stack_init=stack_init, fold=fold, peel=peel,
                peel_least=peel_least)
    state = initial_state(inp, initial, it.canon, initial_pb)
    zone = Ptr("obj", "struct zone", obj="zone", nonnull=True)
    pgmap = Ptr("obj", "struct dev_pagemap", obj="pgmap", addr=inp.pgmap,
                nonnull=bv.ne(inp.pgmap, bv.const_like(inp.pgmap, 0)))
    state, _ = it.call("memmap_init_zone_device",
                       [zone, CInt(inp.start_pfn), CInt(inp.nr_pages), pgmap], state)
    return it, state


# ---- a page role's query -------------------------------------------------------------------


#: compounds named one by one in a role's query (a loop's peeled iterations write the first
#: compounds by other statements than the rest); the others together.  A symbolic run
#: peels as few iterations as a summary can follow (the loop over compounds none), so one
#: is enough: measured on the backport series, orders 0..18, 2 jobs: 72.7 s of CPU with
#: one, 78.8 s with two (four, when every loop peeled two iterations: 151-164 s)
SPLIT_COMPOUNDS = 1
#: budget of one query deciding an ite condition of a role's terms (ms)
DECIDE_MS = 2_000


def no_wrap(sc: Scenario, c: z3.BitVecRef) -> z3.BoolRef:
    """``c << order`` does not wrap: ``c < 2^(64 - order)`` (the pages below the first
    pfn are the compounds past the last one, modulo 2^64); the order may be a class's."""
    if not sc.is_class:
        return z3.ULT(c, z3.BitVecVal(1 << (64 - sc.order), 64)) if sc.order else z3.BoolVal(True)
    return z3.ULT(c, z3.BitVecVal(1, 64) << (64 - sc.order_v))


def class_miss(out: object) -> str:
    """Why an order class's probe does not prove a role (``out`` as a role's query gives
    it): no verdict for the class, each order decides in its own cell."""
    what = ("a difference at some order of the class" if isinstance(out, RenamedModel)
            else "VACUOUS" if out is Verdict.VACUOUS else f"unknown: {out}")
    return f"not proved for the whole order class ({what}): decided per order"


def words_equal(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BoolRef:
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
        # never a check without an assumption: z3's combined solver answers that one with
        # its non-incremental solver, and the next check with an assumption then sets up
        # the incremental one from scratch (see _Shared.present)
        extra = extra or (z3.BoolVal(True),)
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
            self.full.check(z3.BoolVal(True))  # (incremental: see check)
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
        self.timeout_ms = timeout_ms
        self._context: _Context | None = None
        self.decided: dict[int, tuple[z3.BoolRef, z3.BoolRef]] = {}
        self.models: list[z3.ModelRef] = []
        #: a weaker context shared by the cell's cases that imply its assertions, where
        #: :func:`specialise` decides the conditions over none of the role's indices first
        self.parent: _Shared | None = None
        #: the context of this case's compound without its tail index (a role whose tail
        #: index is free: :attr:`RoleClaim.outer`), where :func:`specialise` decides the
        #: conditions over no tail index, or None
        self.compound: _Shared | None = None

    @property
    def present(self) -> z3.CheckSatResult:
        """Whether the assertions hold (asked on first use; ``reason`` says why unknown)."""
        if self._present is None:
            t0 = time.perf_counter()
            # asked under an assumption (True), so that z3's combined solver answers with
            # its incremental solver, which the role's words are then asked of: without
            # one, it answers with its non-incremental solver and the first word sets the
            # incremental one up from scratch (measured: the 23 checks of a cell 0.72 s,
            # now 0.15 s, the words unchanged)
            self._present = self.solver.check(z3.BoolVal(True))
            if self._present == z3.unknown:
                self.reason = gave_up(self.solver, t0, self.timeout_ms)
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


class RenamedModel:
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


def altmap_cases(inp: Inputs) -> list[Case]:
    """Without and with an altmap, the latter with the first pfn in one form
    (:func:`_first_pfn_renaming`): the split under which the interpreter's oracle decides
    (each case's terms are simpler than the two together: at order 9 the patched tree's
    interpretation took 7.5 s instead of 59 s).  The loop lemmas are not split: measured,
    they took longer split (98 s against 73 s at order 9)."""
    a = inp.altmap_valid
    return [(z3.Not(a), [(a, z3.BoolVal(False))]),
            (a, [(a, z3.BoolVal(True)), *_first_pfn_renaming(inp, True)])]


def check_role(name: str, cons: z3.BoolRef, same: z3.BoolRef, assume: list[z3.BoolRef],
               c: z3.BitVecRef, t: z3.BitVecRef, inp: Inputs, order: int,
               timeout_ms: int, split: int = SPLIT_COMPOUNDS,
               contexts: Contexts | None = None, free: list[z3.BoolRef] | None = None,
               what: str = "", implied: z3.BoolRef | None = None,
               outer: z3.BoolRef | None = None) -> Verdict | str | RenamedModel:
    """Decide one role: PROVED, VACUOUS, the solver's reason for unknown, or a model of a
    difference.  The role is split by compound (``c == 0 .. split - 1`` and the
    rest; one case for the pages outside the range and for the bitmap) and by altmap, the
    index and first pfn are renamed (:func:`_tail_renaming`, :func:`_first_pfn_renaming`),
    and in each case the ``ite`` conditions of both trees' pages are decided first
    (:func:`specialise`).  ``contexts`` keeps each case's context for the next role (one
    per cell: the roles' cases that are one query context share their decisions).  With
    ``free`` (the order-free part of ``assume``, :func:`order_free`) each case
    is first asked under those alone (as the loop lemmas are, :func:`check_lemmas`): the
    pageblock cells of a tree whose pageblock loop the order does not enter are then proved
    once per process.  ``what`` tells apart the claims one cell asks of one role
    (:func:`free_first` names each case by role, ``what`` and case).  ``implied``
    (:attr:`RoleClaim.implied`): a claim every case of the role implies; each case's
    context then has a parent context, the assumptions, the altmap case and ``implied``
    alone, shared by the cell's roles (:func:`specialise`'s ``parent``; checked,
    :func:`_implied_by`: ValueError if it does not follow from a conjunct).  ``outer``
    (:attr:`RoleClaim.outer`): a conjunct of ``cons`` (checked: ValueError if it is not)
    that names no tail index; a case whose tail index is free then also has the context of its compound (the
    assumptions, ``outer``, the compound's case and the altmap case: the context of the
    head, tail 1 and tail 2 of that compound), between the parent and its own.  The names of
    the tail index are ``t``'s and those of its renaming."""
    fixed_t = {"head_equal": 0, "tail1_equal": 1, "tail2_equal": 2}.get(name)
    if outer is not None and not _is_conjunct(cons, outer):
        # a decision in the compound's context holds in a case only if the case implies
        # that context's assertions: ``outer`` must be one of ``cons``'s conjuncts
        raise ValueError(f"{name}: the role's outer claim {outer} is not a conjunct of its "
                         "constraint (a bug in equiv: the compound's context would not be "
                         "implied by the role's cases)")
    if implied is not None and not _implied_by(cons, implied, c):
        raise ValueError(f"{name}: the role's implied claim {implied} does not follow from "
                         "its constraint by one of its conjuncts (a bug in equiv: the "
                         "parent context would not be implied by the role's cases)")
    subs_t = [(t, z3.BitVecVal(fixed_t, 64))] if fixed_t is not None else \
        _tail_renaming(t, order) if name in ("tail_equal", "outside_equal") else []
    cases0: list[tuple[z3.BoolRef, Renaming]]
    #: each case's compound: its constraint on ``c`` and the fixed value of ``c``, if any
    compounds: list[tuple[z3.BoolRef, Renaming]]
    if name == "outside_equal" or name == "pageblock_equal":
        cases0 = [(cons, subs_t)]
        compounds = [(z3.BoolVal(True), [])]
    else:
        cases0 = [(z3.And(cons, c == i), [(c, z3.BitVecVal(i, 64)), *subs_t])
                  for i in range(split)]
        cases0.append((z3.And(cons, z3.UGE(c, split)), subs_t))
        compounds = [*((c == i, [(c, z3.BitVecVal(i, 64))]) for i in range(split)),
                     (z3.UGE(c, split), [])]
    tail_names = frozenset({str(t), *(n for _, v in subs_t for n in free_names(v))})
    # with and without an altmap: the first pfn in one form (see _first_pfn_renaming)
    altmap = inp.altmap_valid
    parts0 = same.children() if z3.is_and(same) else [same]
    any_present = False
    if contexts is None:
        contexts = {}

    def context(hyp: list[z3.BoolRef], fixed: Renaming, simplify: bool = False) -> _Shared:
        # the queries are asked with the fixed indices put into the assertions too (the
        # terms no longer mention them): equisatisfiable, and the same context for every
        # role of this compound, whose decisions are then shared
        hyp_q = [z3.simplify(z3.substitute(h, *fixed)) for h in hyp] if fixed or simplify \
            else hyp
        key = tuple(h.get_id() for h in hyp_q)
        ctx = contexts.get(key)
        if ctx is None:
            ctx = contexts[key] = _Shared(hyp_q, timeout_ms)
        return ctx

    proved: list[tuple[list[z3.BoolRef], Renaming]] = []
    for i, ((case0, subs0), (cc, cfixed), on) in enumerate(
            (cs, cp, on) for cs, cp in zip(cases0, compounds, strict=True) for on in (False, True)):
        fwd = _first_pfn_renaming(inp, on)
        # the variables the query keeps (c when not fixed, t's low bits), as the model
        # will name them: the fixed values go into the terms only
        rename = [*fwd, *(x for x in subs_t if not z3.is_bv_value(x[1]))]
        subs = [*subs0, (altmap, z3.BoolVal(on)), *fwd]
        case = [z3.simplify(z3.substitute(case0, *rename)), altmap if on else z3.Not(altmap)]
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
        if implied is not None and ctx.parent is None:
            ctx.parent = context([*hyp[:len(assume)], z3.simplify(z3.substitute(implied, *fwd)),
                                  case[-1]], [])
        if outer is not None and ctx.compound is None and fixed_t is None:
            # the compound's context, as the head's case makes it (its tail index put in):
            # the same assertions, so the same context, shared with the head, tail 1 and
            # tail 2 of this compound and altmap case
            ctx.compound = context([*hyp[:len(assume)],
                                    z3.substitute(z3.And(outer, cc), *rename), case[-1]],
                                   cfixed, simplify=True)
        if ctx.present == z3.unsat:
            continue
        if ctx.present != z3.sat:
            return f"role constraint: {ctx.reason}"
        any_present = True
        if try_free:
            if _case_words(name, context(fhyp, []), parts, [], [], timeout_ms,
                           free=True) is None:
                remember_free(key, [*fhyp, *parts])
                continue
            FREE_FAILED.add(tag)
        out = _case_words(name, ctx, parts, hyp if fixed else [], rename, timeout_ms,
                          local=frozenset({str(c), *tail_names}), tail=tail_names)
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


def _implied_by(cons: z3.BoolRef, implied: z3.BoolRef, c: z3.BitVecRef) -> bool:
    """Does ``cons`` imply ``implied`` by one of its conjuncts, as the parent context of
    :func:`specialise` needs (a decision there stands in every case)?  ``implied`` is one of
    the conjuncts, or it is ``0 < n`` and a conjunct is ``c < n`` (unsigned: ``n > c >= 0``)
    for the same term ``n``.  A syntactic check, exact for what it accepts."""
    if _is_conjunct(cons, implied):
        return True
    if not (z3.is_app_of(implied, z3.Z3_OP_ULT) and z3.is_bv_value(implied.arg(0))
            and implied.arg(0).as_long() == 0):
        return False
    n = implied.arg(1)
    return any(z3.is_app_of(k, z3.Z3_OP_ULT) and k.arg(0).eq(c) and k.arg(1).eq(n)
               for k in conjuncts(cons))


def _is_conjunct(cons: z3.BoolRef, x: z3.BoolRef) -> bool:
    """Is ``x`` one of ``cons``'s conjuncts (nested ``And`` flattened)?"""
    return any(x.eq(k) for k in conjuncts(cons))


def _case_words(name: str, ctx: _Shared, parts: list[z3.BoolRef], hyp: list[z3.BoolRef],
                rename: Renaming, timeout_ms: int, free: bool = False,
                local: frozenset[str] = frozenset(),
                tail: frozenset[str] = frozenset()) -> str | RenamedModel | None:
    """One case of a role in its context: the words' differences specialised
    (:func:`specialise`), then each asked; None if none can differ, else the solver's
    reason for an unknown answer or a model of a difference (``hyp``: the case's assertions
    with its fixed indices, which the model must name; empty if it has none).  With
    ``free`` (the context has only the order-free assumptions) a difference is no finding:
    "" is returned for it, and the case is asked again with every assumption.  ``local``:
    the names of the role's indices, whose conditions are not asked of the context's
    parent (:func:`specialise`); ``tail``: those of its tail index, whose conditions are
    not asked of its compound's context (:attr:`_Shared.compound`)."""
    t0 = time.perf_counter()
    inner = [] if ctx.compound is None else [(ctx.compound, tail)]
    diffs = specialise([z3.Not(p) for p in parts], ctx.context, ctx.decided, ctx.models,
                       ctx.parent, local, inner)
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
            return RenamedModel(s.model(), rename)
        if r != z3.unsat:
            return gave_up(s, t0, timeout_ms)
    return None


# ---- a cell's page roles -------------------------------------------------------------------


def role_result(name: str, out: Verdict | str | RenamedModel, dt: float, lemma_ok: bool,
                is_class: bool, refute: Callable[[str, RenamedModel, float], RoleResult]
                ) -> RoleResult:
    """The result of a page role whose query (:func:`check_role`) gave ``out``, in a cell
    of either source-derived proof (``--patch``'s, ``--linux``'s).  An order class's probe
    proves everything or stands for nothing: a role it does not prove is UNKNOWN there
    (:func:`class_miss`; each order is then decided, any difference replayed, in its own
    cell, and the caller stops the probe).  A difference between summaries whose lemmas
    are not proved is no finding, and its replay with the loops as written may not end
    (the model's range is unbounded): UNKNOWN (the bounded search looks for a real one).
    Any other difference is replayed by ``refute``; no difference: :func:`undisproved`."""
    if is_class and out is not Verdict.PROVED:
        return RoleResult(name, Verdict.UNKNOWN, dt, reason=class_miss(out))
    if isinstance(out, RenamedModel) and not lemma_ok:
        return RoleResult(name, Verdict.UNKNOWN, dt, reason="a difference under loop "
                          "summaries whose lemmas are not proved")
    if isinstance(out, RenamedModel):
        return refute(name, out, dt)
    return undisproved(name, out, dt, lemma_ok)


@frozen(eq=False)
class RoleClaim:
    """One page role of a cell, read in both sides' final states: its ``name``
    (``head_equal``, ``tail1_equal``, ``tail2_equal``, ``tail_equal``, ``outside_equal``,
    ``pageblock_equal``), its constraint ``cons`` on the role's indices, the claim ``same``
    that both sides leave the same bytes there (one equation per word,
    :func:`words_equal`), and claims ``alone`` asked first, each sufficient for ``same``
    where it holds (outside the range: each side's footprint misses the page)."""

    name: str
    cons: z3.BoolRef
    same: z3.BoolRef
    alone: list[z3.BoolRef]
    #: a claim ``cons`` implies that names neither index (the range has a compound, for
    #: the roles inside it: ``c < n`` implies ``0 < n``), or None: the parent context of
    #: the role's cases (:func:`check_role`'s ``implied``)
    implied: z3.BoolRef | None = None
    #: a conjunct of ``cons`` that names no tail index (the compound is one of the range's,
    #: for the roles inside it), or None: the context of a case's compound
    #: (:func:`check_role`'s ``outer``)
    outer: z3.BoolRef | None = None


@frozen(kw_only=True, eq=False)
class RoleProof:
    """The part of a source-derived proof's cell that follows the interpretation of its
    sides, the same for ``--patch`` (two trees) and ``--linux`` (a tree and the hand model):
    the cell's scenario, inputs and assumptions, the role indices (compound ``c``, tail
    ``t``), and what differs between the two proofs."""

    sc: Scenario
    inp: Inputs
    assume: list[z3.BoolRef]
    c: z3.BitVecRef
    t: z3.BitVecRef
    timeout_ms: int
    #: the roles, read in the sides' final states (may raise InterpError: a summary the
    #: reads need and cannot give)
    observe: Callable[[], list[RoleClaim]]
    #: the loop-summary lemmas the sides rely on, once the roles are read
    lemmas: Callable[[], Sequence[Lemma | CLemma]]
    #: the concrete replay of a role's difference (:func:`role_result`)
    refute: Callable[[str, RenamedModel, float], RoleResult]
    #: compounds a role's query names one by one (:func:`check_role`)
    split: int = SPLIT_COMPOUNDS
    #: a role's difference is looked for again on a range of at most two compounds, and
    #: that one kept if there is one (fewer struct pages to replay)
    steer: bool = False
    #: a replayed difference gets its irrelevant inputs marked (:func:`irrelevant_inputs`)
    explain: bool = False
    #: the query contexts the roles share (:func:`check_role`), given to share them with
    #: other proofs of the same cell's assumptions (the pairs of a series: a context's
    #: decisions are facts of its assertions, whichever trees they were asked for); None:
    #: the cell's own
    contexts: Contexts | None = None


def _steered(p: RoleProof, o: RoleClaim, found: RenamedModel) -> RenamedModel:
    """A difference of role ``o`` on a range of at most two compounds if there is one, else
    ``found`` (:attr:`RoleProof.steer`; an order class's difference is found again, and
    replayed, per order, so it is never steered)."""
    sc = p.sc
    small = [*p.assume, z3.ULE(p.inp.nr_pages, 2 << sc.order)]
    again = check_role(o.name, o.cons, o.same, small, p.c, p.t, p.inp, sc.orders[-1],
                       p.timeout_ms, split=p.split)
    return again if isinstance(again, RenamedModel) else found


#: the z3 budget of each query of :func:`irrelevant_inputs` (ms): a query not decided in
#: it marks nothing (the input is shown as it is, not as irrelevant)
IRRELEVANT_MS = 2_000


def irrelevant_inputs(p: RoleProof, o: RoleClaim, r: RoleResult) -> tuple[str, ...]:
    """The scalar inputs of a replayed difference ``r`` of role ``o`` whose value does not
    matter: with every other scalar input and the role's index pinned to the values shown,
    no value the assumptions allow for it, with any initial memory, makes the two sides
    equal there (the query ``assumptions and constraint and same`` is UNSAT).

    Why it can never turn a verdict: it runs after the difference was replayed, and it
    only adds marks to it; a query not decided (:data:`IRRELEVANT_MS`) marks nothing.
    Stronger than the model path's check (:func:`equiv.zone_device.minimise.minimise`, which
    keeps the memory): an input marked here is irrelevant for every initial memory too."""
    vals = dict(r.inputs)
    pins: dict[str, z3.BoolRef] = {}
    for k, v in vals.items():
        term = getattr(p.inp, k)
        pins[k] = term == (z3.BoolVal(v) if isinstance(v, bool) else
                           z3.BitVecVal(v, term.size()))
    index = {"c": p.c, "t": p.t, "b": z3.BitVec("pageblock.b", 64)}
    fixed = [index[k] == z3.BitVecVal(v, 64) for k, v in r.index if k in index]
    out: list[str] = []
    for k in vals:
        others = [t for n, t in pins.items() if n != k]
        s = z3.SolverFor("QF_AUFBV")
        s.set("timeout", min(IRRELEVANT_MS, p.timeout_ms))
        s.add(*p.assume, o.cons, o.same, *fixed, *others)
        if s.check() != z3.unsat:
            continue
        # and another value is allowed at all (an input the assumptions fix, such as the
        # cell's pgmap type, is not "irrelevant")
        s = z3.SolverFor("QF_AUFBV")
        s.set("timeout", min(IRRELEVANT_MS, p.timeout_ms))
        s.add(*p.assume, o.cons, *fixed, *others, z3.Not(pins[k]))
        if s.check() == z3.sat:
            out.append(k)
    return tuple(out)


def prove_roles(p: RoleProof, roles: list[RoleResult], started: float) -> str:
    """Decide every role of a cell whose sides are interpreted, appending to ``roles``
    (``started``: when the cell's proof began).  In order: the roles read in the final
    states (``interpret_summaries`` UNKNOWN if that stops the interpreter); for an order
    class, whether each order of it is covered (``orders_covered``,
    :func:`order_not_covered`); the loop-summary lemmas (``loop_summary_lemmas``,
    :func:`check_lemmas`, with the order-free assumptions, :func:`order_free`, which a
    query no order enters, as 6.12's pageblock cells, is proved under once per process:
    :data:`FREE_PROVED`); then each role (:func:`check_role`, its ``alone`` claims first;
    :func:`role_result`).  An order class's probe stops at the first obligation it does
    not prove.  Returns "" if the loop lemmas hold (or none were needed), else why not
    (an order class: why the probe stopped)."""
    sc, inp, assume, c, t = p.sc, p.inp, p.assume, p.c, p.t
    try:
        obs = p.observe()
    except InterpError as e:
        roles.append(RoleResult("interpret_summaries", Verdict.UNKNOWN,
                                time.perf_counter() - started, reason=str(e)))
        return f"interpreting: {e}"
    log.debug("observations built: %.1fs", time.perf_counter() - started)
    if sc.is_class:
        # the class's one proof stands for each order's only if each order passes the
        # vacuity checks of its own cell (its assumptions, every role's constraint)
        t0 = time.perf_counter()
        why = order_not_covered(sc, assume, [(o.cons, (c, t)) for o in obs], p.timeout_ms)
        roles.append(RoleResult("orders_covered", Verdict.UNKNOWN if why else Verdict.PROVED,
                                time.perf_counter() - t0, reason=why))
        if why:
            return why
    t0 = time.perf_counter()
    free: list[z3.BoolRef] | None = order_free(sc, inp, assume)
    lo = prove_lemmas(p.lemmas(), assume, p.timeout_ms, sc, free)
    if sc.is_class:
        # an order class's roles are not first asked under the order-free assumptions: they
        # leave the symbolic order unbounded, and the words of the head role then took z3
        # over 60 s (class 2..7 of the backport series, where the class's range decides them
        # in seconds); the class's lemmas are not either (prove_lemmas)
        free = None
    why = lo.why
    lemma_ok = not why
    roles.append(RoleResult("loop_summary_lemmas", Verdict.PROVED if lemma_ok else Verdict.UNKNOWN,
                            time.perf_counter() - t0, reason=why, lemma_cex=lo.cex))
    if sc.is_class and not lemma_ok:
        return why
    # the tail index's width in the queries: the order (the highest of a class)
    bits = sc.orders[-1]
    # the roles' query contexts, shared where they are one
    contexts: Contexts = {} if p.contexts is None else p.contexts
    for o in obs:
        t0 = time.perf_counter()
        out: Verdict | str | RenamedModel = Verdict.PROVED
        for j, claim in enumerate(o.alone):  # each sufficient: a model of one is no difference
            out = check_role(o.name, o.cons, claim, assume, c, t, inp, bits, p.timeout_ms,
                             split=p.split, contexts=contexts, free=free, what=f"alone{j}",
                             implied=o.implied, outer=o.outer)
            if out is not Verdict.PROVED:
                break
        if out is not Verdict.PROVED or not o.alone:
            out = check_role(o.name, o.cons, o.same, assume, c, t, inp, bits, p.timeout_ms,
                             split=p.split, contexts=contexts, free=free, implied=o.implied,
                             outer=o.outer)
            if p.steer and isinstance(out, RenamedModel) and not sc.is_class:
                out = _steered(p, o, out)
        res = role_result(o.name, out, time.perf_counter() - t0, lemma_ok, sc.is_class, p.refute)
        if p.explain and res.verdict is Verdict.REFUTED and res.inputs:
            res = evolve(res, irrelevant=irrelevant_inputs(p, o, res))
        roles.append(res)
        if sc.is_class and out is not Verdict.PROVED:
            return f"{o.name}: {roles[-1].reason}"
    return why


__all__ = [
    "DECIDE_MS", "IRRELEVANT_MS", "MODELS", "SPLIT_COMPOUNDS", "CellRun", "Contexts", "Decided",
    "Evaluates", "HandPath", "Memo", "Model", "ModelValues", "RenamedModel", "RoleClaim",
    "RoleProof", "RoleResult", "RunCell", "Side", "altmap_cases", "backstop_role",
    "check_assumptions", "check_role", "class_miss", "irrelevant_inputs", "largest_first", "merge_found",
    "model_for", "no_wrap", "order_not_covered", "prove_roles", "role_result", "run_tree",
    "side", "side_layout", "specialise", "substitute_all", "undisproved", "words_equal"]

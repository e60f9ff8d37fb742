"""Proof obligations of one matrix cell (config x revision x pgmap type x order).

A cell compares the final memory of the slow path (:mod:`equiv.slow_path`) and a fast path
(:mod:`equiv.template_path`) run on the same symbolic inputs.  Its obligations:

* one per **page role** — the head of compound ``c``, tail 1, tail 2, and tail ``t >= 3``
  (``c`` and ``t`` symbolic, so one obligation covers all compounds and all 262,144 tails of
  an order-18 compound), struct pages past the range (unchanged), and the pageblock bitmap
  cell of a symbolic pageblock.  The claim of a page role is the conjunction, over the
  layout's atoms (:attr:`~equiv.page_model.Layout.atoms`, which partition every byte of
  struct page including padding), of slow == fast; obligations are thereby derived from the
  layout table, never from a list of field names.
* one per **loop lemma** (frame-write, frame-read, frame-bound, carry-step) of every loop summary either
  path used (:mod:`equiv.loops`).  A page-role proof is only as good as these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import z3
from attrs import frozen

from equiv.engine import bv
from equiv.loops import Ctx, Lemma
from equiv.memmap import Inputs, Scenario, assumptions, geometry, join_key, pfn_of, symbolic_inputs
from equiv.page_model import Atom, Memory, PageState
from equiv.slow_path import compound_nr_pages, memmap_init_zone_device
from equiv.template_path import Revision, fast_path
from equiv.zone_device.names import roles_at

FastFn = Callable[[Ctx, Scenario, Inputs], Memory]


@frozen
class Role:
    """Which struct page (or bitmap cell) an obligation is about."""

    name: str
    #: index of the page inside its compound for folio-overlay naming (0 head, 1, 2), or None
    page_index: int | None
    description: str


ROLES: dict[str, Role] = {r.name: r for r in (
    Role("head", 0, "head page of compound c (every c < number of compounds)"),
    Role("tail1", 1, "tail 1 of compound c (page[1]: folio overlay)"),
    Role("tail2", 2, "tail 2 of compound c (page[2]: _deferred_list)"),
    Role("tail", None, "tail t of compound c, 3 <= t < 2^order (deduplicated vmemmap folded)"),
    Role("outside", None, "any struct page outside the range's compounds: before the first "
                          "pfn (the altmap's pages included), at end_pfn and past it"),
    Role("pageblock", None, "pageblock bitmap cell b (any b)"),
)}


def roles_for(order: int) -> list[Role]:
    """The roles that exist at ``order`` (:func:`equiv.zone_device.names.roles_at`)."""
    return [ROLES[n] for n in roles_at(order)]


@frozen(eq=False)
class Observation:
    """One page role: symbolic indices, the constraint that puts them in the role, both sides."""

    role: Role
    indices: dict[str, z3.BitVecRef]
    constraint: z3.BoolRef
    slow: PageState | None  # None for the bitmap role
    fast: PageState | None
    slow_cell: z3.BitVecRef | None = None
    fast_cell: z3.BitVecRef | None = None
    #: whether the observed compound's vmemmap is deduplicated (few struct pages to replay)
    optimised: z3.BoolRef | bool = False

    def claim(self, atoms: tuple[Atom, ...]) -> z3.BoolRef:
        """The obligation: in the role, every atom (hence every byte) is equal.

        Sent to the solver as one equality of the whole struct page, which is equivalent
        because the atoms partition ``[0, sizeof(struct page))`` (checked here and tested).
        """
        if self.slow is None:
            return z3.Implies(self.constraint, self.slow_cell == self.fast_cell)
        assert self.fast is not None
        covered = sorted((a.offset, a.size) for a in atoms)
        end = 0
        for off, size in covered:
            assert off == end, "layout atoms must partition struct page"
            end = off + size
        assert end == self.slow.size, "layout atoms must cover struct page"
        same = self.slow.bits == self.fast.bits
        if self.slow.events is not None and self.fast.events is not None:
            # DEBUG_PAGE_REF: the page_ref_set events are observable beside memory
            same = z3.And(same, self.slow.events == self.fast.events)
        return z3.Implies(self.constraint, same)


@frozen(eq=False)
class CellProblem:
    """Everything the checker needs for one cell."""

    scenario: Scenario
    revision: Revision
    inputs: Inputs
    early: z3.FuncDeclRef
    assumptions: list[tuple[str, z3.BoolRef]]
    observations: list[Observation]
    lemmas: list[Lemma]
    fast: FastFn
    #: per path, the condition under which it runs to its end (no early return taken)
    reach: dict[str, z3.BoolRef]
    #: how many of :attr:`lemmas`, from the first, are the slow path's (the same for every
    #: revision of the scenario)
    slow_lemmas: int = 0


def build_cell(sc: Scenario, rev: Revision, fast: FastFn | None = None,
               unroll: Callable[[str], int] | None = None, *,
               first_form: bool = False) -> CellProblem:
    """Run both paths symbolically and derive the cell's obligations.

    Args:
        sc: config layout, pgmap type, order.
        rev: the revision whose fast path is compared (its knobs may be mutated).
        fast: override the fast path function (tests); default ``fast_path(rev)``.
        unroll: unroll every loop to the given trip count instead of summarising it (the
            bounded-unrolling baseline of ``bench/unrolling.py``); the bounds are assumed.
    """
    fast_fn = fast or fast_path(rev)
    inp, early = symbolic_inputs(sc.layout, first_form=first_form)
    # one index pair for all page roles (each role is its own query)
    c, t, b = z3.BitVec("c", 64), z3.BitVec("t", 64), z3.BitVec("pageblock.b", 64)
    g = geometry(sc, inp)
    roles = roles_for(sc.orders[0])
    slow = _slow_side(sc, inp, roles, c, t, b, first_form, unroll)
    ctx = _ctx(unroll, c, t, slow.next_id)
    ctx.path = "fast"
    fast_reads = _reads(sc, fast_fn(ctx, sc, inp), roles, c, t, b)
    exits = [*slow.exits, *ctx.exits]
    reach = {p: z3.And(z3.BoolVal(True), *(z3.Not(c) for q, c in exits if q == p))
             for p in ("slow", "fast")}
    obs: list[Observation] = []
    for role, s_read, f_read in zip(roles, slow.reads, fast_reads, strict=True):
        if role.name == "pageblock":
            obs.append(Observation(role, {"b": b}, z3.BoolVal(True), None, None, s_read, f_read))
            continue
        in_range = z3.ULT(c, g.ncompounds)
        fixed = {"head": 0, "tail1": 1, "tail2": 2}.get(role.name)
        _, opt = compound_nr_pages(sc, inp, pfn_of(sc, g, c, bv.const_like(c, 0)))
        if fixed is not None:
            cons = z3.And(in_range, t == fixed)
        elif role.name == "tail":
            cons = z3.And(in_range, z3.UGE(t, 3), z3.ULT(t, sc.stride_v))
        else:
            # outside: every struct page not in a compound of the range, by its one name
            # (before the first pfn, the altmap-reserved ones included: compounds below 0
            # wrap; and from the end of the last compound on); never deduplicated
            cons = z3.And(z3.ULT(t, sc.stride_v), z3.UGE(c, g.ncompounds))
            obs.append(Observation(role, {"c": c, "t": t}, cons, s_read, f_read))
            continue
        obs.append(Observation(role, {"c": c, "t": t}, cons, s_read, f_read, optimised=opt))
    return CellProblem(scenario=sc, revision=rev, inputs=inp, early=early,
                       assumptions=[*assumptions(sc, inp), *slow.unroll_bounds,
                                    *ctx.unroll_bounds],
                       observations=obs, lemmas=[*slow.lemmas, *ctx.lemmas], fast=fast_fn,
                       reach=reach, slow_lemmas=len(slow.lemmas))


_Read: TypeAlias = PageState | z3.BitVecRef


def _ctx(unroll: Callable[[str], int] | None, c: z3.BitVecRef, t: z3.BitVecRef,
         first_id: int = 0) -> Ctx:
    """A symbolic context whose loops state their lemmas for the obligations' index
    symbols ``c`` and ``t`` (the one pair all page roles share), its fresh names numbered
    from ``first_id`` on."""
    ctx = Ctx(symbolic=True, first_id=first_id)
    ctx.unroll = unroll
    ctx.k_hint.update({"memmap_init_zone_device.heads": c,
                       "memmap_init_zone_device.template_heads": c,
                       "memmap_init_compound.tails": t,
                       "memmap_init_compound.template_tails": t,
                       # the v6.12 loops of --compare v6.12 (equiv.slow_variants)
                       "memmap_init_zone_device.heads (6.12)": c,
                       "memmap_init_compound.tails (6.12)": t})
    return ctx


def _reads(sc: Scenario, mem: Memory, roles: list[Role], c: z3.BitVecRef, t: z3.BitVecRef,
           b: z3.BitVecRef) -> list[_Read]:
    """What each role observes of a path's final memory ``mem``: the struct page of
    compound ``c``, tail ``t`` (outside the range: the page of that one name), or the
    pageblock bitmap cell ``b``."""
    out: list[_Read] = []
    for role in roles:
        if role.name == "pageblock":
            out.append(mem.read_pb(b))
        elif role.name == "outside":
            out.append(mem.load(join_key(sc, c, t)))
        else:
            out.append(mem.read(c, t))
    return out


@frozen(eq=False)
class _SlowSide:
    """The slow path's part of a cell: what each role reads of its final memory, the
    lemmas of its loops, its early exits, and the first fresh-name number it did not use
    (the fast path's names start there, so the two never share a fresh symbol)."""

    reads: list[_Read]
    lemmas: tuple[Lemma, ...]
    exits: tuple[tuple[str, z3.BoolRef], ...]
    unroll_bounds: tuple[tuple[str, z3.BoolRef], ...]
    next_id: int


#: Process-wide memo of :func:`_slow_side` by scenario and input form: the slow path does
#: not depend on the revision, so the cells of one scenario (the self-test's mutants, each
#: revision of --series) run it once per process and pose the same slow-path lemma query
#: (:attr:`equiv.zone_device.check.CheckRequest.split_lemmas`).  The terms are the ones a new run
#: would build (z3 terms are hash-consed by structure and name, and the inputs are named
#: by the layout alone); the lemma objects are complete (no later read extends them: the
#: fast path's context never reaches the slow path's loops).  Bounded: oldest out first.
_SLOW_MEMO: dict[tuple[Scenario, bool], _SlowSide] = {}
_SLOW_MEMO_SIZE = 32


def _slow_side(sc: Scenario, inp: Inputs, roles: list[Role], c: z3.BitVecRef,
               t: z3.BitVecRef, b: z3.BitVecRef, first_form: bool,
               unroll: Callable[[str], int] | None) -> _SlowSide:
    """Run the slow path (:func:`equiv.slow_path.memmap_init_zone_device`) symbolically
    on ``inp`` and read what each role observes; memoised unless ``unroll`` is given."""
    key = (sc, first_form)
    hit = _SLOW_MEMO.get(key) if unroll is None else None
    if hit is not None:
        return hit
    ctx = _ctx(unroll, c, t)
    ctx.path = "slow"
    reads = _reads(sc, memmap_init_zone_device(ctx, sc, inp), roles, c, t, b)
    side = _SlowSide(reads, tuple(ctx.lemmas), tuple(ctx.exits), tuple(ctx.unroll_bounds),
                     ctx.next_id())
    if unroll is None:
        _SLOW_MEMO[key] = side
        while len(_SLOW_MEMO) > _SLOW_MEMO_SIZE:
            del _SLOW_MEMO[next(iter(_SLOW_MEMO))]
    return side

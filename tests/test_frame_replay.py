"""The replay of a refuted frame lemma (equiv.zone_device.counterexample.replay_frame): the loops whose
lemmas are proved run lazily, the others every iteration, and the counterexample is the one
running every iteration of every loop gives (issue 18: an order-18 frame control cost a
minute of replay, the 2^18 iterations of every loop of both paths)."""

from __future__ import annotations

import pytest
import z3

from equiv.config import preset
from equiv.engine import bv
from equiv.engine.bv import CBV, Val
from equiv.loops import Carry, Ctx, LazyNesting, Lemma, Owner, block_loop, never
from equiv.memmap import MemoryType, concrete_inputs, geometry, key_compound, key_slot
from equiv.page_model import KEY_BITS, ConcreteMemory, Layout, Memory, copied_origin
from equiv.zone_device.cell import CellSpec, cell_paths
from equiv.zone_device.counterexample import (
    _base_loops,
    _replay_frame_every,
    _replay_frame_key,
    concrete_ctx,
    frame_key,
    proved_loops,
    replay_frame,
)
from equiv.zone_device.mutants import MUTANTS
from equiv.zone_device.obligations import CellProblem, build_cell
from equiv.zone_device.solver import solver_for

#: the seeded bugs refuted on a frame-write lemma (a store outside the iteration's frame)
FRAME_WRITE = ["mutant_tail_loop_one_past_end", "mutant_tail_loop_one_past_end_last_compound",
               "mutant_tail_copy_to_next_page", "mutant_slow_tail_loop_one_past"]
CELLS = [(MemoryType.GENERIC, 1), (MemoryType.GENERIC, 2), (MemoryType.FS_DAX, 2),
         (MemoryType.PRIVATE, 9)]


def _cell(name: str, ptype: MemoryType, order: int) -> CellProblem:
    sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision="v11", ptype=ptype, order=order,
                                        mutant=name))
    return build_cell(sc, rev, fast, first_form=rev.comparison is not None)


def _refuted(problem: CellProblem) -> tuple[Lemma, z3.ModelRef] | None:
    """A frame-write lemma and a model in which its iteration stores outside the range's
    compounds (as equiv.zone_device.check's _refuted_lemma looks first), or None.  A small range (the
    check prefers one too): running every iteration is the reference."""
    sc = problem.scenario
    g = geometry(sc, problem.inputs)
    small = [z3.ULE(problem.inputs.nr_pages, 3 << sc.order),
             z3.ULT(problem.inputs.start_pfn, 1 << 20)]
    for lm in problem.lemmas:
        if lm.kind != "frame-write" or lm.key is None:
            continue
        s = solver_for(problem, 60_000)
        past = key_compound(sc, lm.key) + z3.LShR(key_slot(sc, lm.key), sc.order)
        s.add(z3.Not(lm.formula), z3.UGE(past, g.ncompounds), *small)
        if s.check() == z3.sat:
            return lm, s.model()
    return None


@pytest.mark.parametrize("name", FRAME_WRITE)
@pytest.mark.parametrize(("ptype", "order"), [pytest.param(t, o, id=f"{t.name}-o{o}")
                                              for t, o in CELLS])
def test_lazy_frame_replay_is_every_iterations(name: str, ptype: MemoryType, order: int) -> None:
    """On the same model, the replay with the proved loops run lazily reports the very
    counterexample (page, values, provenance, recorded inputs and initial memory, the
    early_section answers) that running every iteration of every loop reports."""
    problem = _cell(name, ptype, order)
    found = _refuted(problem)
    if found is None:  # the bug does not show on this cell (order 1: no tail 2)
        assert (name, order) == ("mutant_tail_copy_to_next_page", 1)
        return
    lemma, model = found
    k, n = frame_key(problem, lemma, model)
    lazy = _replay_frame_key(problem, lemma, model, k, n)
    full = _replay_frame_every(problem, lemma, model, k, n)
    assert not isinstance(full, str), full
    assert lazy is not None
    assert lazy.to_cache() == full.to_cache()
    assert lazy == full
    assert replay_frame(problem, lemma, model) == full


def test_proved_loops_are_the_others_of_a_fast_path_bug() -> None:
    """The loops shown to keep their lemmas: the slow path's and the pageblock loop, not
    the refuted one nor the heads loop around it (whose lemmas hold of the summary)."""
    problem = _cell("mutant_tail_loop_one_past_end", MemoryType.GENERIC, 2)
    got = proved_loops(problem, "memmap_init_compound.template_tails")
    assert got == {"memmap_init_compound.tails", "memmap_init_zone_device.heads",
                   "pageblock_migratetype_init_range"}


def test_a_loop_around_the_refuted_one_is_not_proved() -> None:
    """A slow-path tail loop overrun, checked against the base slow path (the same loop
    names on both sides): the heads loop around it is not taken as proved, although its
    own lemmas are valid, even where no iteration of it a replay reads runs the overrun
    (the struct page written lies past the range: no heads iteration owns it)."""
    problem = _cell("mutant_slow_tail_loop_one_past", MemoryType.GENERIC, 2)
    heads = [lm for lm in problem.lemmas if lm.loop == "memmap_init_zone_device.heads"]
    assert heads and all("memmap_init_compound.tails" in lm.inner for lm in heads)
    assert proved_loops(problem, "memmap_init_compound.tails") == {
        "pageblock_migratetype_init_range"}
    # the base slow path's own loops, proved on that path alone, replay it lazily
    lemma, model = _refuted(problem) or pytest.fail("no model")
    assert lemma.loop == "memmap_init_compound.tails"
    assert _base_loops(problem, model) == {"memmap_init_compound.tails",
                                           "memmap_init_zone_device.heads",
                                           "pageblock_migratetype_init_range"}


def _mem() -> Memory:
    return concrete_inputs(Layout.from_config(preset("x86_64-default")), start_pfn=0,
                           nr_pages=8).mem


def _owner() -> Owner:
    return Owner(page=lambda n: (True, bv.extract(n, 63, 0)), pb=never)


def _ctx(lazy: set[str]) -> Ctx:
    ctx = concrete_ctx(False)
    ctx.lazy_loops = frozenset(lazy)
    return ctx


def _copy(m: Memory, carry: Carry, k: Val) -> tuple[Memory, Carry]:
    return m.store(bv.concat(CBV(0, 64), k), m.load(bv.concat(CBV(1, 64), k))), carry


def test_lazy_loop_around_an_unproved_one_asks_for_a_full_run() -> None:
    """A loop outside the proved ones reached inside the body of a lazily run loop raises
    LazyNesting naming the lazy loop (whose lemmas were proved of the unproved summary)."""
    ctx = _ctx({"outer"})

    def outer(m: Memory, carry: Carry, k: Val) -> tuple[Memory, Carry]:
        inner, _ = block_loop(ctx, "inner", m, k, k + 1, (), _copy, _owner())
        return inner, carry

    out, _ = block_loop(ctx, "outer", _mem(), CBV(0, 64), CBV(8, 64), (), outer, _owner())
    with pytest.raises(LazyNesting) as e:
        out.load(CBV(3, KEY_BITS))
    assert e.value.enclosing == {"outer"} and ctx.lazy_stack == []


def test_loops_after_an_unproved_one_run_every_iteration() -> None:
    """Once a loop outside the proved ones has run, a proved loop after it runs every
    iteration (its lemmas were proved of the unproved summary's memory); before it, lazily."""
    ctx = _ctx({"before", "after"})
    mem, _ = block_loop(ctx, "before", _mem(), CBV(0, 64), CBV(8, 64), (), _copy, _owner())
    assert isinstance(mem, ConcreteMemory)
    before = mem.lazy
    assert before is not None and not ctx.eager_started
    mem, _ = block_loop(ctx, "unproved", mem, CBV(0, 64), CBV(8, 64), (), _copy, _owner())
    assert ctx.eager_started
    mem, _ = block_loop(ctx, "after", mem, CBV(0, 64), CBV(8, 64), (), _copy, _owner())
    # (the memory the last two loops store on)
    assert isinstance(mem, ConcreteMemory) and mem.lazy is before


#: seeded bugs whose tail loop copies the compound's last tail, whose write history a
#: frame replay does not record at first, over a page whose history it does
LAST_TAIL_COPY = [("mutant_tail_loop_last_tail_over_head", "x86_64-default", "head", 2),
                  ("mutant_tail_loop_last_tail_over_head", "x86_64-default", "head", 10),
                  ("mutant_tail_loop_last_tail_over_tail1_virtual", "x86_64-want-page-virtual",
                   "tail1", 2),
                  ("mutant_tail_loop_last_tail_over_tail1_virtual", "x86_64-want-page-virtual",
                   "tail1", 10)]


@pytest.mark.parametrize(("name", "config", "role", "order"), LAST_TAIL_COPY)
def test_a_copy_from_a_page_without_history_is_replayed_with_it(
        name: str, config: str, role: str, order: int) -> None:
    """The refuted frame-write lemma of a tail loop that copies its last tail over the head
    (or tail 1) is replayed, lazily and in full, into the same counterexample naming that
    page, whose history goes back through the last tail to the tail template (it was an
    AssertionError: the last tail's history was not recorded, and none reached the page)."""
    sc, rev, fast = cell_paths(CellSpec(config=config, revision="v11", ptype=MemoryType.GENERIC,
                                        order=order, mutant=name))
    problem = build_cell(sc, rev, fast)
    lemma = next(lm for lm in problem.lemmas if lm.kind == "frame-write"
                 and lm.loop == "memmap_init_compound.template_tails")
    s = solver_for(problem, 60_000)
    s.add(z3.Not(lemma.formula), z3.ULE(problem.inputs.nr_pages, 2 << sc.order))
    assert s.check() == z3.sat
    model = s.model()
    k, n = frame_key(problem, lemma, model)
    lazy = _replay_frame_key(problem, lemma, model, k, n)
    full = _replay_frame_every(problem, lemma, model, k, n)
    assert not isinstance(full, str), full
    assert lazy is not None and lazy.to_cache() == full.to_cache()
    assert full.role == role and full.index["t"] == (role == "tail1")
    want = set(MUTANTS[name].expect(MemoryType.GENERIC, order) or ())
    assert want & {f for d in full.diffs for f in d.fields}
    for d in full.diffs:
        assert all(c[-1] == "memcpy from the compound's last tail" for c in d.fast_provenance)
        assert all("memcpy from the tail template" in c for c in d.fast_provenance)


def test_a_copy_without_history_passes_none_on() -> None:
    """A struct page copied from one whose history is not recorded has none itself (never
    a partial one); the copies of one template onto unwritten pages share one history."""
    size = 64
    unwritten: tuple[tuple[str, ...], ...] = ((),) * size
    assert copied_origin(unwritten, None, size, "memcpy") is None
    assert copied_origin(None, unwritten, size, "memcpy") is None
    once = copied_origin(unwritten, unwritten, size - 8, "memcpy")
    assert once is not None and once[0] == ("memcpy",) and once[size - 8:] == unwritten[size - 8:]
    assert copied_origin(unwritten, unwritten, size - 8, "memcpy") is once

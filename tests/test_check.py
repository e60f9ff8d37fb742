"""The checker itself: vacuity, unknown, and loop lemmas that catch unsound summaries."""

from __future__ import annotations

import z3
from attrs import evolve

from equiv.config import DEFAULT
from equiv.engine import bv
from equiv.engine.verdict import Verdict, worst
from equiv.loops import Ctx, block_loop
from equiv.memmap import Inputs, MemoryType, Scenario, compound_frame, geometry
from equiv.page_model import Layout, Memory
from equiv.slow_path import memmap_init_zone_device
from equiv.template_path import REVISIONS
from equiv.zone_device.check import CheckRequest, check_cell
from equiv.zone_device.obligations import build_cell

L = Layout.from_config(DEFAULT)


def cell(order: int = 2, fast=None):  # type: ignore[no-untyped-def]
    return build_cell(Scenario(L, MemoryType.GENERIC, order), REVISIONS["v11"], fast)


def test_contradictory_assumptions_are_vacuous() -> None:
    """Assumptions that cannot hold make every obligation VACUOUS, never PROVED."""
    p = cell()
    p = evolve(p, assumptions=[*p.assumptions, ("contradiction", z3.BoolVal(False))])
    res = check_cell(CheckRequest(problem=p))
    assert res.verdict is Verdict.VACUOUS
    assert {o.verdict for o in res.obligations} == {Verdict.VACUOUS}


def test_path_that_always_returns_early_is_vacuous() -> None:
    """If the assumptions force an early return (here: an empty range, so the fast path's
    `if (!nr_pages) return;` always fires), nothing was really checked: VACUOUS."""
    p = cell()
    p = evolve(p, assumptions=[*p.assumptions, ("empty range", p.inputs.nr_pages == 0)])
    res = check_cell(CheckRequest(problem=p))
    assert res.verdict is Verdict.VACUOUS
    assert any("fast path never reaches its end" in o.reason for o in res.obligations)


def test_proved_obligations_state_their_coverage() -> None:
    """A PROVED page obligation says what was shown satisfiable before it was claimed."""
    res = check_cell(CheckRequest(problem=cell()))
    head = next(o for o in res.obligations if o.role == "head")
    assert head.verdict is Verdict.PROVED
    assert head.coverage == ("assumptions satisfiable together with the role's constraint",
                             "slow path reaches its end", "fast path reaches its end")


def test_exhausted_budget_is_unknown() -> None:
    """A query that runs out of its resource limit is UNKNOWN, and UNKNOWN is not success."""
    res = check_cell(CheckRequest(problem=cell(), rlimit=1))
    assert res.verdict is Verdict.UNKNOWN


def test_worst_orders_verdicts() -> None:
    """REFUTED outranks UNKNOWN outranks VACUOUS outranks PROVED."""
    assert worst([Verdict.PROVED, Verdict.VACUOUS]) is Verdict.VACUOUS
    assert worst([Verdict.UNKNOWN, Verdict.VACUOUS]) is Verdict.UNKNOWN
    assert worst([Verdict.UNKNOWN, Verdict.REFUTED]) is Verdict.REFUTED
    assert worst([]) is Verdict.PROVED


def _cascade(write_next: bool):  # type: ignore[no-untyped-def]
    """A 'fast path' whose loop breaks the summary's premise: each iteration copies a head
    into the next compound (writes outside its block) or from the previous one (reads
    outside its block), so later iterations see earlier ones."""

    def fast(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
        mem = memmap_init_zone_device(ctx, sc, inp)
        g = geometry(sc, inp)
        zero = bv.const_like(g.start, 0)

        def body(m: Memory, carry: tuple, c):  # type: ignore[no-untyped-def, type-arg]
            if write_next:
                return m.write(c + 1, zero, m.read(c, zero)), carry
            prev = bv.ite(bv.eq(c, 0), c, c - 1)
            return m.write(c, zero, m.read(prev, zero)), carry

        out, _ = block_loop(ctx, "cascade", mem, zero, g.ncompounds, (), body, compound_frame(sc, g))
        return out

    return fast


def test_lemma_catches_writes_outside_the_block() -> None:
    """frame-write fails; the cell is not PROVED although the summary alone would say so.
    The last iteration copies a head onto the struct page of end_pfn: the out-of-frame
    store is replayed and REFUTED with that page, the loop and the iteration named."""
    res = check_cell(CheckRequest(problem=cell(0, _cascade(write_next=True))))
    lemma = next(o for o in res.obligations if o.name == "cascade:frame-write")
    assert lemma.verdict is Verdict.REFUTED and res.verdict is Verdict.REFUTED
    cx = lemma.counterexample
    assert cx is not None and cx.role == "outside" and cx.frame is not None
    assert cx.pfn == cx.inputs["start_pfn"] + cx.inputs["nr_pages"]  # type: ignore[operator]
    assert "of cascade writes the struct page of pfn" in cx.frame and "end_pfn" in cx.frame
    assert {"flags", "_mapcount"} <= {n for d in cx.diffs for n in d.fields}


def test_lemma_catches_reads_outside_the_block() -> None:
    """frame-read fails for a body that reads the previous compound's head."""
    res = check_cell(CheckRequest(problem=cell(0, _cascade(write_next=False))))
    lemma = next(o for o in res.obligations if o.name == "cascade:frame-read")
    assert lemma.verdict is not Verdict.PROVED
    assert res.verdict is not Verdict.PROVED


def test_lemma_catches_a_drifting_template() -> None:
    """carry-step fails for a template loop whose carried page accumulates state (here the
    template's _mapcount grows by one per copy), so the template after k copies is not what
    one step from the seed gives; the cell is then not PROVED."""
    from equiv.page_model import PageState

    def fast(ctx: Ctx, sc: Scenario, inp: Inputs) -> Memory:
        mem = memmap_init_zone_device(ctx, sc, inp)
        g = geometry(sc, inp)
        zero = bv.const_like(g.start, 0)
        seed = mem.read(zero, zero)

        def body(m: Memory, carry: tuple[PageState, ...], c):  # type: ignore[no-untyped-def]
            t = carry[0]
            t = t.set(sc.layout, "_mapcount", t.get(sc.layout, "_mapcount") + 1, "drift")
            return m.write(c, zero, t), (t,)

        out, _ = block_loop(ctx, "drift", mem, zero + 1, g.ncompounds, (seed,), body,
                            compound_frame(sc, g))
        return out

    res = check_cell(CheckRequest(problem=cell(0, fast)))
    lemma = next(o for o in res.obligations if o.name == "drift:carry-step")
    assert lemma.verdict is not Verdict.PROVED
    assert res.verdict is not Verdict.PROVED


def test_every_lemma_of_the_real_paths_is_proved() -> None:
    """The loop summaries of v11 and the slow path are justified at order 2."""
    res = check_cell(CheckRequest(problem=cell()))
    lemmas = [o for o in res.obligations if o.kind == "lemma"]
    assert {o.name.split(":")[1] for o in lemmas} == {"frame-write", "frame-read", "frame-bound",
                                                     "carry-step"}
    assert all(o.verdict is Verdict.PROVED for o in lemmas)


def _tactic_solver() -> z3.Solver:
    return z3.Then("simplify", "propagate-values", "elim-uncnstr", "smt").solver()


def test_a_guessed_steering_keeps_what_the_greedy_keeps() -> None:
    """minimise._keep_greedy with guesses (right, wrong, none) keeps exactly the preferences
    the plain greedy keeps, and leaves the solver SAT on them."""
    from equiv.zone_device.minimise import _keep_greedy, _keep_greedy_in

    x, y, z = z3.BitVecs("gx gy gz", 16)
    base = [z3.UGT(x + y, 10), z3.ULT(z, 5), z3.Or(x == 7, y == 9)]
    prefs = [z3.ULE(x, 3), z3.ULE(y, 3), z == 0, x == 0, z3.ULE(y, 20), y == 0, z == 4]
    plain = _tactic_solver()
    plain.add(*base)
    assert plain.check() == z3.sat
    dropped: list[int] = []
    n = _keep_greedy_in(plain, prefs, True, dropped)
    want = {str(p) for i, p in enumerate(prefs) if i not in dropped}
    assert dropped and n == len(prefs) - len(dropped)
    for guesses in ([tuple(dropped)], [(0, 1)], [(5,), tuple(dropped)], [(2,)]):
        s = _tactic_solver()
        s.add(*base)
        assert s.check() == z3.sat
        k = _keep_greedy(s, prefs, True, None, guesses)
        got = s.assertions()
        assert k == n and {str(a) for a in got[len(got) - k:]} == want, guesses
        assert s.check() == z3.sat

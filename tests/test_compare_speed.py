"""What makes --compare v6.12 decide: the first-pfn form of the inputs, sliced queries,
lemmas proved conjunct by conjunct, the lazy concrete replay (the estimate printed before a
long run: tests/test_estimate.py)."""

from __future__ import annotations

import pytest
import z3
from attrs import evolve

from equiv.config import preset
from equiv.engine import bv
from equiv.engine.bv import CBV, Val
from equiv.engine.errors import InternalMismatch
from equiv.engine.query import ANSWERS, Session, clear_answers
from equiv.engine.verdict import Verdict
from equiv.loops import Carry, Owner, block_loop, never
from equiv.memmap import MemoryType, Scenario, concrete_inputs, geometry, symbolic_inputs
from equiv.page_model import KEY_BITS, ConcreteMemory, Layout, Memory
from equiv.slow_path import memmap_init_zone_device
from equiv.template_path import fast_path, revision
from equiv.zone_device import minimise
from equiv.zone_device.cell import COMPARE, CellSpec, cell_paths, resolve, run_cell
from equiv.zone_device.check import CheckRequest, check_cell, decide
from equiv.zone_device.counterexample import concrete_ctx, replay, replay_recorded
from equiv.zone_device.minimise import prefer_small, steer_sliced
from equiv.zone_device.obligations import CellProblem, Observation, build_cell
from equiv.zone_device.solver import slice_assumptions, solver_for


class TestFirstForm:
    def test_first_pfn_is_a_variable(self) -> None:
        """In the first-pfn form the loops' first pfn and end simplify to plain sums of the
        two new variables, with no altmap sum left in them."""
        sc = Scenario(Layout.from_config(preset("x86_64-default")), None, 3)
        inp, _ = symbolic_inputs(sc.layout, first_form=True)
        g = geometry(sc, inp)
        first, n = z3.BitVec("first_pfn", 64), z3.BitVec("first_nr_pages", 64)
        assert z3.simplify(g.start).eq(first)
        assert z3.simplify(g.end - (first + n)).eq(z3.BitVecVal(0, 64))

    def test_same_inputs_either_form(self) -> None:
        """The first-pfn form is a bijection: every start_pfn and nr_pages of the plain form
        is reached (here with an altmap), so a query is SAT in one form iff in the other."""
        L = Layout.from_config(preset("x86_64-default"))
        plain, _ = symbolic_inputs(L)
        first, _ = symbolic_inputs(L, first_form=True)
        s = z3.Solver()
        s.add(first.altmap_valid, first.altmap_reserve == 3, first.altmap_free == 5,
              first.start_pfn == 0x1000, first.nr_pages == 0x40)
        assert s.check() == z3.sat
        m = s.model()
        assert m.eval(z3.BitVec("first_pfn", 64)).as_long() == 0x1000 + 8
        assert m.eval(z3.BitVec("first_nr_pages", 64)).as_long() == 0x40 - 8
        assert plain.start_pfn.eq(z3.BitVec("start_pfn", 64))

    @pytest.mark.parametrize("form", [False, True])
    def test_verdicts_do_not_depend_on_form(self, form: bool) -> None:
        """A proved refactor and a refuted seeded slow-path bug come out the same either way,
        the bug on the same field."""
        for name, want in (("v5-helper-split", Verdict.PROVED),
                           ("slow-split-inverted", Verdict.REFUTED)):
            sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision=COMPARE + name,
                                                ptype=MemoryType.FS_DAX, order=1))
            clear_answers()
            res = check_cell(CheckRequest(problem=build_cell(sc, rev, fast, first_form=form),
                                          rlimit=10**9, minimise=False))
            assert want == res.verdict, name
            if want is Verdict.REFUTED:
                head = next(o for o in res.obligations if o.name == "head_equal")
                assert head.counterexample is not None
                assert "_refcount" in {n for d in head.counterexample.diffs for n in d.fields}


class TestSlicing:
    def _problem(self) -> object:
        sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12",
                                            ptype=MemoryType.GENERIC, order=0))
        return build_cell(sc, rev, fast, first_form=True)

    def test_type_assumption_left_out(self) -> None:
        """A pageblock claim mentions no pgmap type: the type's assumption is left aside
        (so each type's cell poses the same query), the range's bounds are kept."""
        p = self._problem()
        ob = next(o for o in p.observations if o.role.name == "pageblock")  # type: ignore[attr-defined]
        kept, aside = slice_assumptions(p, ob.claim(p.scenario.layout.atoms))  # type: ignore[arg-type,attr-defined]
        names = {str(a) for a in aside}
        assert any("pgmap.type" in n for n in names)
        assert not any("pgmap.type" in str(a) for a in kept)
        assert any("first_pfn" in str(a) for a in kept)

    def test_sat_model_satisfies_every_assumption(self) -> None:
        """A sliced query that is SAT is decided again whole: its model satisfies the
        assumptions left aside too (here the pgmap type of the cell)."""
        p = self._problem()
        x = z3.BitVec("pageblock.b", 64)
        claim = z3.ULT(x, 5)  # SAT, and mentions nothing the type assumption does
        s = solver_for(p, 10_000, about=claim)  # type: ignore[arg-type]
        s.add(claim)
        r, full = decide(Session(), s, "t")
        assert z3.sat == r
        pt = full.model().eval(z3.BitVec("pgmap.type", 32), model_completion=True).as_long()
        assert int(MemoryType.GENERIC) == pt


class TestAnswers:
    def test_one_clear_forgets_every_table(self) -> None:
        """A refuted sliced cell fills every table of the process's answers (its lemma and
        role queries, the steering and the explanation of its counterexample); the same
        cell again takes its answers from them and shows the same counterexample;
        ``clear_answers`` empties every table."""
        spec = CellSpec(config="x86_64-default", revision=COMPARE + "slow-split-inverted",
                        ptype=MemoryType.FS_DAX, order=1)
        clear_answers()
        first = run_cell(spec)
        assert Verdict.REFUTED == first.verdict
        assert all(ANSWERS.sizes().values()), ANSWERS.sizes()
        again = run_cell(spec)
        assert again.shared_queries > first.shared_queries
        assert [o.to_json()["counterexample"] for o in again.obligations] == \
            [o.to_json()["counterexample"] for o in first.obligations]
        clear_answers()
        assert set(ANSWERS.sizes()) == {"checked", "not_unsat", "steered", "models", "explained"}
        assert not any(ANSWERS.sizes().values())


class TestLemmaTry:
    def test_conjuncts_prove_what_the_whole_proves(self) -> None:
        """With a first-try budget too small for any lemma, every lemma is proved conjunct
        by conjunct: the same verdicts as with the full budget."""
        sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision=COMPARE + "v5-helper-split",
                                            ptype=MemoryType.GENERIC, order=2))
        clear_answers()
        whole = check_cell(CheckRequest(problem=build_cell(sc, rev, fast, first_form=True),
                                        rlimit=10**9))
        clear_answers()
        parts = check_cell(CheckRequest(problem=build_cell(sc, rev, fast, first_form=True),
                                        rlimit=10**9, lemma_try=1))
        assert [(o.name, o.verdict) for o in whole.obligations] == \
            [(o.name, o.verdict) for o in parts.obligations]
        assert Verdict.PROVED == parts.verdict


@pytest.mark.slow
def test_v612_order0_decided_by_z3() -> None:
    """--compare v6.12 at order 0 is decided by the default solver (was UNKNOWN: the
    pageblock query ran past z3's wall-clock limit): PRIVATE, COHERENT, GENERIC proved,
    FS_DAX and PCI_P2PDMA refuted on the head's refcount."""
    clear_answers()
    got = {t: run_cell(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12", ptype=t, order=0,
                                rlimit=1_000_000_000)).verdict for t in MemoryType}
    assert {MemoryType.PRIVATE: Verdict.PROVED, MemoryType.COHERENT: Verdict.PROVED,
            MemoryType.FS_DAX: Verdict.REFUTED, MemoryType.GENERIC: Verdict.PROVED,
            MemoryType.PCI_P2PDMA: Verdict.REFUTED} == got


class TestLazyReplay:
    """The concrete replay of a counterexample runs only the loop iterations the observation
    needs (equiv.loops._LazyLoop), checked, and still catches one that does not reproduce."""

    @staticmethod
    def _model(problem: CellProblem, role: str) -> tuple[Observation, z3.ModelRef]:
        ob = next(o for o in problem.observations if o.role.name == role)
        s = solver_for(problem, 60_000, pages=True)
        s.add(z3.Not(ob.claim(problem.scenario.layout.atoms)))
        assert z3.sat == s.check()
        prefer_small(s, problem, ob, from_scratch=True)
        return ob, s.model()

    @pytest.mark.parametrize("order", [2, pytest.param(9, marks=pytest.mark.slow)])
    def test_lazy_run_leaves_the_memory_of_every_iteration(self, order: int) -> None:
        """The base slow path, the v6.12 path and the v11 fast path leave the same struct
        pages (bytes and provenance) and bitmap cells whether every iteration runs or only
        the ones a read needs (a deduplicated compound, an altmap, an early section)."""
        L = Layout.from_config(preset("x86_64-default"))
        paths = {"slow": memmap_init_zone_device, "v6.12": resolve(COMPARE + "v6.12")[1],
                 "v11": fast_path(revision("v11"))}
        stride = 1 << order
        for ptype in (MemoryType.FS_DAX, MemoryType.GENERIC):
            sc = Scenario(L, ptype, order)
            for kw in ({"start_pfn": 1 << 15, "nr_pages": 2 * stride},
                       {"start_pfn": 1 << 15, "nr_pages": 3 * stride, "altmap": (1, 2)},
                       {"start_pfn": 1 << 16, "nr_pages": 3 * stride, "early": frozenset({2})}):
                for name, path in paths.items():
                    assert path is not None
                    full = path(concrete_ctx(False), sc,
                                concrete_inputs(L, pgmap_type=int(ptype), **kw))
                    lazy = path(concrete_ctx(True), sc,
                                concrete_inputs(L, pgmap_type=int(ptype), **kw))
                    assert isinstance(full, ConcreteMemory)
                    for n in full.pages:
                        a, b = full.load(CBV(n, KEY_BITS)), lazy.load(CBV(n, KEY_BITS))
                        assert (int(a.bits), a.origin) == (int(b.bits), b.origin), (name, kw, n)
                    for b in full.pb:
                        assert int(full.read_pb(CBV(b, 64))) == int(lazy.read_pb(CBV(b, 64)))

    def test_iteration_outside_its_frame_is_caught(self) -> None:
        """A lazily run iteration that writes a struct page another iteration owns raises
        InternalMismatch (the concrete frame-write check), instead of a wrong replay."""
        L = Layout.from_config(preset("x86_64-default"))
        mem = concrete_inputs(L, start_pfn=0, nr_pages=8).mem
        owner = Owner(page=lambda n: (True, bv.extract(n, 63, 0)), pb=never)

        def body(m: Memory, carry: Carry, k: Val) -> tuple[Memory, Carry]:
            page = m.load(bv.concat(CBV(0, 64), k))
            return m.store(bv.concat(CBV(0, 64), k + 1), page), carry  # one past its own

        out, _ = block_loop(concrete_ctx(True), "one-past", mem, CBV(0, 64), CBV(8, 64), (),
                            body, owner)
        with pytest.raises(InternalMismatch, match="iteration 3 wrote storage key 0x4"):
            out.load(CBV(3, KEY_BITS))

    def test_order18_counterexample_replays(self) -> None:
        """An order-18 counterexample (262,144 tails a compound) is replayed lazily, reproduces
        the solver's difference (tail 2's _deferred_list) and records it as a lazy replay;
        a replay against another fast path than the solver's does not reproduce: caught."""
        sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12",
                                            ptype=MemoryType.GENERIC, order=18))
        problem = build_cell(sc, rev, fast, first_form=True)
        ob, model = self._model(problem, "tail2")
        cx = replay(problem, ob, model, lazy=True)
        assert 2 == cx.index["t"] and not cx.every_iteration
        assert any(n.startswith("_deferred_list") or "deferred" in n
                   for d in cx.diffs for n in d.names), cx.diffs
        assert cx.diffs == replay_recorded(sc, problem.fast, cx)
        other = evolve(problem, fast=fast_path(revision("v11")))
        with pytest.raises(InternalMismatch, match="does not reproduce"):
            replay(other, ob, model, lazy=True)

    def test_sliced_explanation_is_the_whole_ones(self) -> None:
        """Explaining a counterexample query by query without the assumptions and fixed
        values that share no symbol with the query (shared between the pgmap types' cells)
        marks the same inputs irrelevant and finds the same multiplicity."""
        sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12",
                                            ptype=MemoryType.FS_DAX, order=0))
        problem = build_cell(sc, rev, fast, first_form=True)
        ob, model = self._model(problem, "head")
        cx = replay(problem, ob, model, lazy=True)
        whole = minimise.minimise(problem, ob, model, cx, 60_000, 10**9)
        sliced = minimise.minimise(problem, ob, model, cx, 60_000, 10**9, sliced=True)
        assert (whole.irrelevant, whole.multiplicity) == (sliced.irrelevant, sliced.multiplicity)
        assert "pgmap_type" not in sliced.irrelevant and "start_pfn" in sliced.irrelevant

    def test_a_remembered_guess_never_changes_what_is_kept(self) -> None:
        """Steering tries first the preferences the last steering of the same role dropped
        (``minimise._DROPPED``); a right guess, a wrong one and none keep the same preferences,
        and a steering leaves behind what it dropped."""
        sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12",
                                            ptype=MemoryType.FS_DAX, order=9))
        problem = build_cell(sc, rev, fast, first_form=True)
        ob = next(o for o in problem.observations if o.role.name == "tail")
        key = ("tail", len(minimise._preferences(problem, ob.optimised,
                                                 {k: [v] for k, v in ob.indices.items()})))

        def steered(last: tuple[int, ...] | None) -> tuple[str, ...]:
            minimise._DROPPED.clear()
            s = solver_for(problem, 60_000, pages=True)
            s.add(z3.Not(ob.claim(sc.layout.atoms)))
            assert z3.sat == s.check()
            n = len(s.assertions())
            if last is not None:
                minimise._DROPPED[key] = last
            kept = prefer_small(s, problem, ob, from_scratch=True)
            assert kept == len(s.assertions()) - n and z3.sat == s.check()
            return tuple(a.sexpr() for a in s.assertions()[n:])

        plain = steered(None)
        dropped = minimise._DROPPED[key]
        assert dropped, "the tail's counterexample cannot keep every preference"
        assert steered(dropped) == plain and minimise._DROPPED[key] == dropped
        assert steered((0,)) == plain

    @pytest.mark.slow
    def test_sliced_steering_keeps_what_the_whole_keeps(self) -> None:
        """Steering the sliced pageblock query keeps the preferences steering the whole query
        keeps, and its model (extended by the type's assumption) satisfies every assumption
        and refutes the claim."""
        sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12",
                                            ptype=MemoryType.PRIVATE, order=1))
        problem = build_cell(sc, rev, fast, first_form=True)
        ob = next(o for o in problem.observations if o.role.name == "pageblock")
        claim = ob.claim(sc.layout.atoms)
        s = solver_for(problem, 60_000, pages=True, rlimit=10**9)
        s.add(z3.Not(claim))
        assert z3.sat == s.check()
        kept = prefer_small(s, problem, ob, from_scratch=True, budget=(2_000_000, 10**9))
        prefs = list(s.assertions())[-kept:]
        model = steer_sliced(problem, ob, claim, 60_000, 10**9, (2_000_000, 10**9))
        assert model is not None
        for f in [a for _, a in problem.assumptions] + [z3.Not(claim), *prefs]:
            assert z3.is_true(model.eval(f, model_completion=True)), f
        assert int(MemoryType.PRIVATE) == model.eval(problem.inputs.pgmap_type).as_long()

"""What makes --compare v6.12 decide: the first-pfn form of the inputs, sliced queries,
lemmas proved conjunct by conjunct, (the estimate printed before a long run: tests/test_estimate.py)."""

from __future__ import annotations

import pytest
import z3

from equiv.check import _slice, check_cell, decide, solver_for
from equiv.config import preset
from equiv.engine.query import Session, clear_answers
from equiv.engine.verdict import Verdict
from equiv.matrix import COMPARE, CellSpec, cell_paths, run_cell
from equiv.memmap import MemoryType, Scenario, geometry, symbolic_inputs
from equiv.obligations import build_cell
from equiv.page_model import Layout


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
            sc, rev, fast = cell_paths(CellSpec("x86_64-default", COMPARE + name,
                                                MemoryType.FS_DAX, 1))
            clear_answers()
            res = check_cell(build_cell(sc, rev, fast, first_form=form), rlimit=10**9,
                             minimise=False)
            assert want == res.verdict, name
            if want is Verdict.REFUTED:
                head = next(o for o in res.obligations if o.name == "head_equal")
                assert head.counterexample is not None
                assert "_refcount" in {n for d in head.counterexample.diffs for n in d.fields}


class TestSlicing:
    def _problem(self) -> object:
        sc, rev, fast = cell_paths(CellSpec("x86_64-default", COMPARE + "v6.12",
                                            MemoryType.GENERIC, 0))
        return build_cell(sc, rev, fast, first_form=True)

    def test_type_assumption_left_out(self) -> None:
        """A pageblock claim mentions no pgmap type: the type's assumption is left aside
        (so each type's cell poses the same query), the range's bounds are kept."""
        p = self._problem()
        ob = next(o for o in p.observations if o.role.name == "pageblock")  # type: ignore[attr-defined]
        kept, aside = _slice(p, ob.claim(p.scenario.layout.atoms))  # type: ignore[arg-type,attr-defined]
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


class TestLemmaTry:
    def test_conjuncts_prove_what_the_whole_proves(self) -> None:
        """With a first-try budget too small for any lemma, every lemma is proved conjunct
        by conjunct: the same verdicts as with the full budget."""
        sc, rev, fast = cell_paths(CellSpec("x86_64-default", COMPARE + "v5-helper-split",
                                            MemoryType.GENERIC, 2))
        clear_answers()
        whole = check_cell(build_cell(sc, rev, fast, first_form=True), rlimit=10**9)
        clear_answers()
        parts = check_cell(build_cell(sc, rev, fast, first_form=True), rlimit=10**9,
                           lemma_try=1)
        assert [(o.name, o.verdict) for o in whole.obligations] == \
            [(o.name, o.verdict) for o in parts.obligations]
        assert Verdict.PROVED == parts.verdict


@pytest.mark.slow
def test_v612_order0_decided_by_z3() -> None:
    """--compare v6.12 at order 0 is decided by the default solver (was UNKNOWN: the
    pageblock query ran past z3's wall-clock limit): PRIVATE, COHERENT, GENERIC proved,
    FS_DAX and PCI_P2PDMA refuted on the head's refcount."""
    clear_answers()
    got = {t: run_cell(CellSpec("x86_64-default", COMPARE + "v6.12", t, 0,
                                rlimit=1_000_000_000)).verdict for t in MemoryType}
    assert {MemoryType.PRIVATE: Verdict.PROVED, MemoryType.COHERENT: Verdict.PROVED,
            MemoryType.FS_DAX: Verdict.REFUTED, MemoryType.GENERIC: Verdict.PROVED,
            MemoryType.PCI_P2PDMA: Verdict.REFUTED} == got

"""What the vmap local model once took for granted, now proved, each with the seeded bug that
breaks it (issue 13, part B): the walks of the batching loop cover the range (X3), the flush
range on both ends (X4, M4), every entry of a CONT group (X5); and the equivalent rewrite
X6 (a walk issued only when the shift drops), which the tightened ``batch_runs`` invariant
proves."""

from __future__ import annotations

import pytest
from attrs import evolve
from hypothesis import given, settings
from hypothesis import strategies as st
from test_vmap_model import _agree, _facts_fail_at

from equiv.engine.bv import CBV
from equiv.engine.results import CellResult
from equiv.engine.verdict import Verdict
from equiv.vmap import REVISIONS, ConcreteCase, VmapCounterexample, check, twin
from equiv.vmap import arch as A
from equiv.vmap.cell import _Cell
from equiv.vmap.counterexample import replay
from equiv.vmap.lemmas import FACTS, LEMMAS, PATH_LEMMAS, depends
from equiv.vmap.mutants import MUTANTS, apply
from equiv.vmap.obligations import claim, for_path, violations
from equiv.vmap.paths import Unroll, observe

PK = 0x0068000000000703  # arm64 PAGE_KERNEL
VA = 0x800080000  # a 2M-aligned virtual page number of the vmalloc area
FIX = REVISIONS["v8-fix"]
X3 = apply(FIX, "mutant_final_walk_to_batch_end")
X4 = apply(FIX, "mutant_flush_to_batch_end")
X5 = apply(FIX, "mutant_cont_last_pte_not_cont")
X6 = apply(FIX, "harmless_walk_on_shift_drop")
#: a batch of 16 pages (64K-aligned pfn), then a single page: the batching breaks at page 16
BREAK = ConcreteCase("vmap", VA, PK, ((4, 0x1000), (0, 0x2000)))
#: single pages only: the first iteration breaks
SINGLES = ConcreteCase("vmap", VA, PK, ((0, 0x1000), (0, 0x2000)))
#: a 16-page run, then a 2M-aligned run of 512: the shift rises from 16 to 21 (X6 keeps one walk)
RISE = ConcreteCase("vmap", VA + 0x200 - 16, PK, ((4, 0x1000), (9, 0x40000)))


def verdicts(r: CellResult) -> dict[str, Verdict]:
    return {o.name: o.verdict for o in r.obligations}


class TestTheBugsOnTheTwin:
    """The seeded bugs do what their descriptions say, concretely."""

    def test_x3_maps_nothing_of_single_pages(self) -> None:
        """X3 on an array of single pages: the final walk is [0, 0), nothing is mapped (and
        the empty walk hits vmap_pages_range_noflush_walk's BUG_ON)."""
        rf = twin.run_fast(SINGLES, X3)
        assert all(rf.leaf(SINGLES.va + i)[0] == A.LEVEL_NONE for i in range(SINGLES.nr_pages))
        assert any("BUG_ON" in b for b in rf.bugs)
        assert twin.run_fast(SINGLES, FIX).walks == [(SINGLES.va, SINGLES.va + 2, 0, 12)]

    def test_x3_leaves_the_pages_after_a_break_unmapped(self) -> None:
        """X3 after a break in the batching: the batch is mapped, the page after it is not."""
        rp = replay(BREAK, X3, "e_trans")
        assert [v.page for v in rp.violations] == [16]
        assert replay(BREAK, FIX, "e_trans").violations == ()

    def test_x4_flush_misses_the_tail(self) -> None:
        """X4 flushes [0, 16) of a 17-page range; the kernel flushes it all."""
        assert twin.run_fast(BREAK, X4).flush == (BREAK.va, BREAK.va + 16)
        assert replay(BREAK, X4, "flush_covers").violations
        assert replay(BREAK, FIX, "flush_covers").violations == ()

    def test_x5_leaves_one_entry_of_a_group_without_cont(self) -> None:
        """X5: the 16th PTE of a 64K CONT step lacks PTE_CONT; the translation is unchanged, so
        only wf_block sees it (and e_enc, on the paths that compare encodings)."""
        case = ConcreteCase("vmap", VA, PK, ((4, 0x1000),))
        rf = twin.run_fast(case, X5)
        assert [bool(rf.pte[VA + k] & A.PTE_CONT) for k in range(16)] == [True] * 15 + [False]
        assert replay(case, X5, "e_trans").violations == ()
        assert "entry 15 is not a valid CONT PTE" in replay(case, X5, "wf_block").violations[0].detail
        io = ConcreteCase("ioremap", VA, PK, ((32, 0x1000),))
        assert replay(io, X5, "e_enc").violations and replay(io, X5, "wf_block").violations

    def test_x5_never_touches_the_slow_path(self) -> None:
        """The slow paths (BASE-C, BASE-H) have no seeded edits: their CONT groups are whole."""
        io = ConcreteCase("ioremap", VA, PK, ((32, 0x1000),))
        rs = twin.run_slow(io, X5)
        assert all(rs.pte[VA + k] & A.PTE_CONT for k in range(32))

    def test_x6_keeps_one_walk_where_the_shift_rises(self) -> None:
        """X6 issues no walk when the shift rises: the 512-page run joins the 16-page walk
        and is mapped with CONT steps instead of a PMD block, to the same pfns."""
        assert len(twin.run_fast(RISE, FIX).walks) == 2
        assert len(twin.run_fast(RISE, X6).walks) == 1
        for ob in for_path("vmap"):
            assert replay(RISE, X6, ob.name).violations == ()


def _vmap_cases() -> st.SearchStrategy[ConcreteCase]:
    va = st.integers(VA, VA + 0x400)
    pfn = st.sampled_from([0x10, 0x20, 0x100, 0x200, 0x1000, 0x1010, 0x3, 0x40000, 0x40010])
    seg = st.tuples(st.sampled_from([0, 1, 3, 4, 5, 6, 9]), pfn)
    segs = st.lists(seg, min_size=1, max_size=4)
    return st.builds(lambda v, ss: ConcreteCase("vmap", v, PK, tuple(ss)), va, segs)


class TestEquivalentRewrite:
    @settings(max_examples=40)
    @given(case=_vmap_cases())
    def test_x6_is_equivalent_on_the_twin(self, case: ConcreteCase) -> None:
        """The walk issued only when the shift drops maps every page array as the slow path
        does: no obligation is violated concretely."""
        rs, rf = twin.run_slow(case, X6), twin.run_fast(case, X6)
        for ob in for_path("vmap"):
            assert violations(ob.name, case, rs, rf) == [], (case, ob.name)

    @pytest.mark.slow
    def test_the_local_facts_hold_for_x6_walks(self) -> None:
        """The local model's facts hold for X6's real walks (a walk of shift 16 that maps a
        2M-aligned run of 512 pages with CONT steps)."""
        assert _facts_fail_at(RISE, X6) == []


class TestExactModelAgrees:
    @pytest.mark.parametrize("rev", [X3, X5, X6], ids=["X3", "X5", "X6"])
    @pytest.mark.parametrize(
        "case", [BREAK, SINGLES, pytest.param(RISE, marks=pytest.mark.slow)], ids=["break", "singles", "rise"]
    )
    def test_exact_model_matches_the_twin_under_the_new_bugs(self, case: ConcreteCase, rev: object) -> None:
        """The exact model, evaluated concretely, gives the twin's leaf (level and entry,
        PTE_CONT included) at every page, under X3, X5 and X6."""
        assert isinstance(rev, type(FIX))
        if rev is X3 and case is SINGLES:
            pytest.skip("the twin stops at the empty walk's BUG_ON")
        _agree(case, rev)

    def test_exact_flush_range_has_both_ends(self) -> None:
        """The batching model carries flush_cache_vmap's end: X4 ends it at batch_end."""
        for rev, hi in ((FIX, 17), (X4, 16)):
            _, f = observe("vmap", BREAK.inputs(2), rev, CBV(0, 32), Unroll.initial("vmap", 2, rev))
            assert (f.flush_lo.value, f.flush_hi.value) == (0, hi)  # type: ignore[union-attr]

    def test_wf_block_checks_every_entry_of_the_group(self) -> None:
        """wf_block, evaluated concretely at a page whose own PTE carries PTE_CONT, fails on
        X5 because entry 15 of its group does not; the fix's group passes."""
        case = ConcreteCase("vmap", VA, PK, ((4, 0x1000),))
        inp = case.inputs(1)
        for rev, ok in ((FIX, True), (X5, False)):
            s, f = observe("vmap", inp, rev, CBV(3, 32), Unroll.initial("vmap", 1, rev))
            assert f.leaf.cont is True or f.leaf.cont.value  # type: ignore[union-attr]
            assert bool(claim("wf_block", "vmap", inp, s, f, CBV(3, 32))) is ok


class TestWhatRestsOnWhat:
    def test_every_fact_lemma_exists_and_is_proved_on_its_path(self) -> None:
        """The lemmas the facts rest on are lemmas of the path."""
        for path, names in FACTS.items():
            assert set(names) <= set(PATH_LEMMAS[path]) <= set(LEMMAS)

    def test_coverage_and_flush_are_lemmas_of_vmap(self) -> None:
        """e_trans and errors_agree rest on the walks covering the range, the page
        obligations about writes on the walks staying inside it, the flush on its lemma."""
        assert {"batch_walks_tile", "batch_walks_inside", "batch_runs"} <= depends("e_trans", "vmap")
        assert "batch_walks_tile" in depends("errors_agree", "vmap")
        assert "batch_walks_inside" in depends("wf_block", "vmap")
        assert "batch_walks_tile" not in depends("frame", "vmap")
        assert "batch_runs" in depends("e_trans", "vmap") and "batch_runs" not in depends("frame", "vmap")
        assert depends("flush_covers", "vmap") == {"batch_flush_covers", "batch_order_inside"}
        assert depends("flush_covers", "ioremap") == frozenset()
        assert depends("ub_ffs0", "vmap") == frozenset()

    def test_m5_rests_on_its_own_lemma(self) -> None:
        """Under M5 the local model has one walk over [0, N): its facts are
        batch_one_iteration's, not the loop lemmas' (which M5 breaks)."""
        m5 = apply(FIX, "mutant_batch_step_by_shift")
        assert depends("frame", "vmap", m5) == {"hook_tiles", "batch_one_iteration"}
        assert depends("flush_covers", "vmap", m5) == {"batch_one_iteration"}
        assert "batch_one_iteration" not in depends("e_trans", "vmap", FIX)


def _refuted(path: str, bound: int, mutant: str, obligation: str) -> VmapCounterexample:
    """The cell's verdict on ``obligation`` is REFUTED with a counterexample that replays."""
    r = check(path, bound, "v8-fix", mutant)
    ob = next(o for o in r.obligations if o.name == obligation)
    assert ob.verdict is Verdict.REFUTED, verdicts(r)
    cx = ob.counterexample
    assert isinstance(cx, VmapCounterexample)
    assert replay(cx.case, apply(FIX, mutant), obligation).violations
    refuted = {o.name for o in r.obligations if o.verdict is Verdict.REFUTED}
    assert not set(MUTANTS[mutant].not_reported) & refuted
    return cx


@pytest.mark.slow
class TestRefutedOnTheVmapPath:
    @pytest.mark.parametrize("bound", [1, 2])
    def test_x3_final_walk_to_batch_end(self, bound: int) -> None:
        """X3 is refuted on e_trans (a page left unmapped) with a replayed counterexample."""
        cx = _refuted("vmap", bound, "mutant_final_walk_to_batch_end", "e_trans")
        assert cx.fast is None or cx.fast.level == "none"

    @pytest.mark.parametrize("bound", [1, 2])
    def test_x4_flush_to_batch_end(self, bound: int) -> None:
        """X4 is refuted on flush_covers: the fast path's flush ends before the range."""
        cx = _refuted("vmap", bound, "mutant_flush_to_batch_end", "flush_covers")
        assert cx.flush[1] is not None and cx.flush[1][1] < cx.case.nr_pages

    @pytest.mark.parametrize("bound", [1, 2])
    def test_x5_cont_last_pte_not_cont(self, bound: int) -> None:
        """X5 is refuted on wf_block on vmap, which has no e_enc; e_trans is not reported."""
        _refuted("vmap", bound, "mutant_cont_last_pte_not_cont", "wf_block")

    @pytest.mark.parametrize(("path", "bound"), [("ioremap", 1), ("vmalloc", 2)])
    def test_x5_on_the_paths_with_e_enc_is_a_wf_block_bug_too(self, path: str, bound: int) -> None:
        """On ioremap and vmalloc X5 is refuted on wf_block as well as on e_enc."""
        _refuted(path, bound, "mutant_cont_last_pte_not_cont", "wf_block")

    @pytest.mark.parametrize("bound", [1, 2])
    def test_x6_walk_on_shift_drop_is_proved(self, bound: int) -> None:
        """The equivalent rewrite X6 is PROVED, batch_runs included."""
        r = check("vmap", bound, "v8-fix", "harmless_walk_on_shift_drop")
        assert r.verdict is Verdict.PROVED, verdicts(r)
        assert verdicts(r)["batch_runs"] is Verdict.PROVED

    def test_the_exact_model_finds_x3_when_asked(self) -> None:
        """Asked directly, the exact model finds an X3 counterexample that replays."""
        cell = _Cell("vmap", 2, X3, "mutant_final_walk_to_batch_end", 60_000, None)
        ans, rp, _ = cell.exact("e_trans")
        assert ans == "sat" and rp is not None and rp.violations


@pytest.mark.slow
def test_new_lemmas_are_proved_on_the_unmodified_revisions() -> None:
    """batch_walks_inside, batch_walks_tile and batch_flush_covers hold on v8 (bound 1)."""
    from equiv.vmap.cell import check_cell

    r = check_cell("vmap", 1, evolve(REVISIONS["v8"]))
    for name in ("batch_walks_inside", "batch_walks_tile", "batch_flush_covers", "batch_runs"):
        assert verdicts(r)[name] is Verdict.PROVED, verdicts(r)

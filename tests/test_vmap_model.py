"""The page-table (vmap) subject's model, without the solver: arch hooks by hand, the concrete
twin on hand-written cases, the symbolic model evaluated concretely against the twin, the
obligation checks, the report lines, and the API the lead integrates."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equiv.engine.bv import CBV
from equiv.engine.results import CellResult, ObligationResult
from equiv.engine.verdict import Verdict
from equiv.vmap import (
    DEFAULT_REVISION,
    MUTANTS,
    OBLIGATIONS,
    PATHS,
    REVISIONS,
    ConcreteCase,
    bound_description,
    twin,
)
from equiv.vmap import arch as A
from equiv.vmap.counterexample import build, replay
from equiv.vmap.mutants import apply, by_label
from equiv.vmap.obligations import for_path, violations
from equiv.vmap.paths import Unroll, observe
from equiv.vmap.present import counterexample_lines
from equiv.vmap.revisions import Revision

PK = 0x0068000000000703  # arm64 PAGE_KERNEL
#: the finding's reproducer: two order-5 runs, a 2M boundary 16 pages into the first
FINDING = ConcreteCase("vmap", 0x800080000 + 0x200 - 16, PK, ((5, 0x1000), (5, 0x2000)))


def hook(addr: int, rem: int, pfn: int, shift: int, h: A.Hook) -> int:
    return A.arch_vmap_pte_range_map_size(
        CBV(addr & 511, 9), CBV(rem, 32), CBV(pfn, 36), CBV(shift, 32), h
    ).value


class TestArchHook:
    def test_base_hook_maps_one_64k_block_when_aligned(self) -> None:
        """BASE-H returns 16 pages iff shift >= 16, 16 pages remain, VA and PA 64K-aligned."""
        base = A.Hook(multi=False)
        assert hook(0x20, 512, 0x1000, 63, base) == 16
        assert hook(0x21, 512, 0x1000, 63, base) == 1
        assert hook(0x20, 512, 0x1001, 63, base) == 1
        assert hook(0x20, 15, 0x1000, 63, base) == 1
        assert hook(0x20, 512, 0x1000, 12, base) == 1

    def test_multi_hook_is_min3_rounded_down(self) -> None:
        """POST-H1: 1UL << __fls(min3(end - addr, 1UL << shift, PMD_SIZE >> 1)), in pages."""
        multi = A.Hook()
        assert hook(0, 512, 0, 63, multi) == 256
        assert hook(0, 200, 0, 63, multi) == 128
        assert hook(0, 512, 0, 17, multi) == 32
        assert hook(0x10, 48, 0x1010, 17, multi) == 32  # aligned to 64K only: the finding's step

    def test_fls_variant_doubles(self) -> None:
        """The pre-v3 ``1UL << fls(size)`` (M2) gives twice the size: past end - addr."""
        assert hook(0, 16, 0, 63, A.Hook(round_down="fls")) == 32

    def test_natural_align_fix_shrinks_to_the_alignment(self) -> None:
        """The proposed fix: the size shrinks until addr and the pfn are aligned to it."""
        fix = A.Hook(natural_align=True)
        assert hook(0x10, 48, 0x1010, 17, fix) == 16
        assert hook(0x20, 48, 0x1020, 17, fix) == 32

    def test_entries(self) -> None:
        """pfn_pte puts the pfn at bits 47..12; sections clear the table bit; normalisation
        drops the output address, PTE_CONT and the type bits."""
        e = A.pfn_pte(CBV(0x1234, 36), CBV(PK, 64)).value
        assert e == (0x1234 << 12) | PK
        assert A.mk_sect_prot(CBV(PK, 64)).value & 3 == 1
        assert A.normalise(A.pte_mkcont(CBV(e, 64))).value == PK & ~3


class TestTwin:
    def test_the_finding_reproduces_concretely(self) -> None:
        """On v8 the multi-CONT step at the 2M boundary maps pages 32..47 from the first run."""
        rp = replay(FINDING, REVISIONS["v8"], "e_trans")
        pages = sorted({v.page for v in rp.violations if v.page is not None})
        assert pages == list(range(32, 48))
        assert (FINDING.va + 16, 32) in rp.fast.steps

    def test_the_fix_removes_it(self) -> None:
        """v8-fix maps the same input exactly as the slow path."""
        for name in for_path("vmap"):
            assert replay(FINDING, REVISIONS["v8-fix"], name.name).violations == ()

    def test_ioremap_paths_write_the_same_entries(self) -> None:
        """A 2M+ ioremap at a congruent VA/PA: PMD block and CONT PTEs, bit-identical."""
        c = ConcreteCase("ioremap", 0x800080000 + 0x1F0, PK, ((1000, 0x100000 + 0x1F0),))
        rs, rf = twin.run_slow(c, REVISIONS["v8"]), twin.run_fast(c, REVISIONS["v8"])
        assert violations("e_enc", c, rs, rf) == [] and violations("e_trans", c, rs, rf) == []
        assert any(v[0] == "L" for v in rf.pmd.values())

    def test_m2_runs_away(self) -> None:
        """M2's doubled size steps past the end of the PTE loop: a termination violation."""
        c = ConcreteCase("vmap", 0x800080000, PK, ((4, 0x1000),))
        rev = apply(REVISIONS["v8-fix"], "mutant_fls_not_fls")
        assert replay(c, rev, "terminates").violations

    def test_m2_counts_no_page_after_a_runaway(self) -> None:
        """Under M2 the PTE loop of the first pmd slot steps past its end and never ends
        (the twin stops there, the next slot is never mapped): the exact model observes the
        first slot's pages as the twin leaves them and counts none of the next slot's.  (Its
        wf_block counterexample in the next slot did not replay: an internal error.)"""
        c = ConcreteCase("ioremap", 0x800FC01EC, PK, ((48, 0x5FCC),))
        rev = apply(REVISIONS["v8"], "mutant_fls_not_fls")
        rf = twin.run_fast(c, rev)
        assert rf.runaway and all(rf.leaf(c.va + i)[0] == A.LEVEL_NONE for i in range(20, 48))
        inp, u = c.inputs(2), Unroll.initial("ioremap", 2, rev)
        for i in range(48):
            s, f = observe("ioremap", inp, rev, CBV(i, 32), u)
            assert s.reached is True and f.reached is (i < 20), i
            if i < 20:
                assert (f.leaf.level.value, f.leaf.entry.value) == rf.leaf(c.va + i)[:2]  # type: ignore[union-attr]
        assert observe("ioremap", inp, REVISIONS["v8"], CBV(30, 32), u)[1].reached is True


def _cases() -> st.SearchStrategy[ConcreteCase]:
    va = st.integers(0x800080000, 0x800080000 + 0x600)
    pfn = st.sampled_from([0, 0x10, 0x20, 0x30, 0x100, 0x200, 0x1000, 0x1010, 0x3, 0x7FF0])
    seg = st.tuples(st.sampled_from([0, 1, 3, 4, 5, 6, 9]), pfn)
    vmap = st.builds(
        lambda v, segs: ConcreteCase("vmap", v, PK, tuple(segs)), va, st.lists(seg, min_size=1, max_size=3)
    )
    io = st.builds(lambda v, n, p: ConcreteCase("ioremap", v, PK, ((n, p),)), va, st.integers(1, 1100), pfn)
    return st.one_of(vmap, io)


def _agree(case: ConcreteCase, rev: str | Revision) -> None:
    """The exact model, run on concrete values, gives the twin's leaf at the pages of the
    range near its ends and every 2M boundary (every page of a short range)."""
    r = REVISIONS[rev] if isinstance(rev, str) else rev
    inp = case.inputs(3)
    u = Unroll.initial(case.path, 3, r).grown()
    rs, rf = twin.run_slow(case, r), twin.run_fast(case, r)
    n = case.nr_pages
    pages = set(range(min(n, 40))) | set(range(max(0, n - 20), n))
    for b in range(-(case.va % 512), n, 512):
        pages |= {p for p in range(b - 17, b + 17) if 0 <= p < n}
    for i in sorted(pages):
        s, f = observe(case.path, inp, r, CBV(i, 32), u)
        for o, run in ((s, rs), (f, rf)):
            lvl, e, _, _ = run.leaf(case.va + i)
            assert (o.leaf.level.value, o.leaf.entry.value) == (lvl, e), (case, rev, i)  # type: ignore[union-attr]
            assert o.no_overshoot is True and o.unrolled is True and o.lemma is True


class TestSymbolicModelAgainstTwin:
    @settings(max_examples=6)
    @given(case=_cases(), rev=st.sampled_from(["v8", "v8-fix", "mm-c1"]))
    def test_exact_model_matches_twin(self, case: ConcreteCase, rev: str) -> None:
        """A few derandomised cases (the slow test runs many more)."""
        _agree(case, rev)

    @pytest.mark.slow
    @settings(max_examples=30)
    @given(case=_cases(), rev=st.sampled_from(["v8", "v8-fix", "mm-c1"]))
    def test_exact_model_matches_twin_many(self, case: ConcreteCase, rev: str) -> None:
        """Many derandomised cases."""
        _agree(case, rev)

    def test_the_finding_in_the_exact_model(self) -> None:
        """The exact model shows the finding's wrong pfn at page 32, as the twin does."""
        _agree(FINDING, "v8")
        s, f = observe(
            "vmap",
            FINDING.inputs(2),
            REVISIONS["v8"],
            CBV(32, 32),
            Unroll.initial("vmap", 2, REVISIONS["v8"]),
        )
        assert f.leaf.pfn.value == 0x1020 and s.leaf.pfn.value == 0x2000  # type: ignore[union-attr]


class TestApi:
    def test_paths_revisions_mutants(self) -> None:
        """The contract the lead integrates: names, default revision, M1-M8, X1-X6."""
        assert PATHS == ("ioremap", "vmalloc", "vmap")
        assert DEFAULT_REVISION == "v8" and set(REVISIONS) >= {"v8", "mm-c1", "v8-fix"}
        assert all(r.summary and r.choices for r in REVISIONS.values())
        assert [by_label(f"M{k}").label for k in range(1, 9)] == [f"M{k}" for k in range(1, 9)]
        assert by_label("X1").name == "mutant_max_steps_past_end"
        assert by_label("X2").name == "mutant_pte_alloc_before_pmd"
        assert by_label("X3").name == "mutant_final_walk_to_batch_end"
        assert by_label("X4").name == "mutant_flush_to_batch_end"
        assert by_label("X5").name == "mutant_cont_last_pte_not_cont"
        assert [m.name for m in MUTANTS.values() if m.equivalent] == [
            "harmless_walk_on_shift_drop",
            "harmless_no_vm_shift_filter",
        ]

    def test_every_mutant_changes_the_revision(self) -> None:
        """A seeded bug equal to v8-fix would be a vacuous control."""
        base = REVISIONS["v8-fix"]
        for name in MUTANTS:
            assert apply(base, name) != base

    def test_bound_description_states_the_bound(self) -> None:
        """Every output can state what the bound means."""
        assert "up to 8 physically contiguous segments" in bound_description(8)
        assert "4096 pages" in bound_description(8)

    def test_obligations_per_path(self) -> None:
        """e_enc only where entries must be bit-identical; ub_ffs0 only where __ffs is."""
        assert {o.name for o in for_path("vmap")} == set(OBLIGATIONS) - {"e_enc"}
        assert {o.name for o in for_path("ioremap")} == set(OBLIGATIONS) - {"ub_ffs0"}


class TestReport:
    def test_counterexample_lines_fit_72_columns(self) -> None:
        """The finding, rendered Alive2-like: inputs, then slow vs fast, in 72 columns."""
        rp = replay(FINDING, REVISIONS["v8"], "e_trans")
        cx = build(
            rp, obligation="e_trans", rev=REVISIONS["v8"], mutant=None, bound=2, page=32, found_by="local"
        )
        lines = counterexample_lines(cx)
        assert max(map(len, lines)) <= 72
        text = "\n".join(lines)
        assert "seg 1: pages[32..63] = 2^5 pages at pfn 0x2000" in text
        assert "maps pfn    0x2000" in text and "0x1020" in text
        assert "CONT step, pages 16..47" in text
        assert json.loads(json.dumps(cx.to_json()))["page"] == 32

    def test_cell_result_carries_the_counterexample(self) -> None:
        """A CellResult of the subject holds ObligationResults whose counterexample renders."""
        rp = replay(FINDING, REVISIONS["v8"], "e_trans")
        cx = build(
            rp, obligation="e_trans", rev=REVISIONS["v8"], mutant=None, bound=2, page=None, found_by="exact"
        )
        ob = ObligationResult(
            name="e_trans", kind="page", role="e_trans", verdict=Verdict.REFUTED, seconds=0.0,
            counterexample=cx,  # type: ignore[arg-type]
        )
        cell = CellResult(config="arm64-4k", revision="v8", ptype="vmap", order=2,
                          verdict=Verdict.REFUTED, seconds=0.0, obligations=(ob,), assumptions=(),
                          choices=(), hypothetical=False)
        assert cell.obligations[0].to_json()["counterexample"]["inputs"]["segments"][1]["pfn"] == "0x2000"


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_knobs_are_valid(name: str) -> None:
    """Every seeded bug applies to the default revision too."""
    apply(REVISIONS[DEFAULT_REVISION], name)


@pytest.mark.parametrize(
    ("knob", "good", "bad"),
    [
        ("batch_order", ("c1", "c2"), "c3"),
        ("flush_from", ("start", "map_addr"), "end"),
        ("flush_to", ("end", "batch_end"), "start"),
        ("final_walk_end", ("end", "batch_end"), "start"),
        ("walk_on", ("change", "drop"), "shift"),
        ("batch_step", ("order", "shift"), "change"),
        ("trylock", ("succeeds", "oracle"), "fails"),
        ("max_steps_slack", (0, 1), True),
        ("pte_alloc_first", (False, True), 1),
    ],
)
def test_revision_knobs_take_only_their_values(knob: str, good: tuple[object, ...], bad: object) -> None:
    """A revision's knob takes the values the model implements and names the knob, the
    values and the one it got otherwise (a bool is not a slack of 0 or 1, nor 1 a bool)."""
    from attrs import evolve

    v8 = REVISIONS[DEFAULT_REVISION]
    for value in good:
        assert getattr(evolve(v8, **{knob: value}), knob) == value
    with pytest.raises((ValueError, TypeError)) as e:
        evolve(v8, **{knob: bad})
    assert e.value.args[0].startswith(f"'{knob}' must be")


def _facts_fail_at(case: ConcreteCase, rev_name: str | Revision) -> list[int]:
    """Pages where the local model's facts do not hold for the real step and walk of the
    concrete twin (an unsound fact would silently skip such a page in every proof)."""
    import z3

    from equiv.vmap import local
    from equiv.vmap.inputs import symbolic_inputs

    rev = REVISIONS[rev_name] if isinstance(rev_name, str) else rev_name
    bound = 1 if case.path == "ioremap" else len(case.segments)
    inp = symbolic_inputs(case.path, bound)
    v = z3.BitVec("obs.page", 32)
    slow, fast = local.observe(case.path, inp, rev, v)
    facts = z3.And(z3.BoolVal(True), slow.facts, fast.facts)  # type: ignore[arg-type]
    pg, o = inp.pages, inp.oracles
    pin = [inp.a == case.va, inp.prot == case.prot, inp.shift == case.shift]
    for j, (k, pfn) in enumerate(case.segments):
        pin.append(pg.base[j] == pfn)
        pin.append((pg.order[j] == k) if pg.order is not None else (pg.length[j] == k))
        if j:
            pin.append(pg.active[j] == True)  # noqa: E712 - a z3 equation
    last = case.va + case.nr_pages - 1
    for kind, span, fn, width in (
        ("pgd", 27, o.pgd_table, 9),
        ("pud", 18, o.pud_table, 18),
        ("pmd", 9, o.pmd_table, 27),
    ):
        for idx in range(case.va >> span, (last >> span) + 1):
            pin.append(fn(z3.BitVecVal(idx, width)) == ((kind, idx) in case.tables))  # type: ignore[arg-type]
            if kind != "pgd":
                t = o.trylock_pud if kind == "pud" else o.trylock_pmd
                pin.append(t(z3.BitVecVal(idx, width)) == ((kind, idx) not in case.trylock_fails))  # type: ignore[arg-type]
    rs, rf = twin.run_slow(case, rev), twin.run_fast(case, rev)

    def step_of(run: twin.Run, vpn: int) -> int:
        for s, n in run.steps:
            if s <= vpn < s + n:
                return s - case.va
        return vpn - case.va

    bad = []
    for i in range(case.nr_pages):
        vpn = case.va + i
        real = {}
        if rf.leaf(vpn)[0] == A.LEVEL_PTE:  # a block has no PTE step
            real["local.fast.step"] = step_of(rf, vpn)
        if rs.leaf(vpn)[0] == A.LEVEL_PTE:
            real["local.slow.step"] = step_of(rs, vpn)
        for lo, hi, _idx, shift in rf.walks:
            if lo <= vpn < hi:
                real.update(
                    {
                        "local.fast.walk.lo": lo - case.va,
                        "local.fast.walk.hi": hi - case.va,
                        "local.fast.walk.shift": shift,
                    }
                )
        s = z3.Solver()
        s.add(*pin, v == i, z3.Not(facts))
        for name, var in {**slow.free, **fast.free}.items():
            if name in real:
                s.add(var == real[name])
        if s.check() != z3.unsat:
            bad.append(i)
    return bad


class TestLocalFactsHoldOnRealRuns:
    @pytest.mark.parametrize(
        "case",
        [
            FINDING,
            pytest.param(
                ConcreteCase("vmap", 0x800080000 + 0x1F8, PK, ((4, 0x10), (9, 0x200), (0, 0x7), (5, 0x400))),
                marks=pytest.mark.slow,
            ),
            pytest.param(
                ConcreteCase("vmap", 0x800080000 + 0x10, PK, ((9, 0x1000), (9, 0x1200))),
                marks=pytest.mark.slow,
            ),
            pytest.param(
                ConcreteCase("ioremap", 0x800080000 + 0x1F0, PK, ((700, 0x100000 + 0x1F0),)),
                marks=pytest.mark.slow,
            ),
            ConcreteCase("vmalloc", 0x800080000, PK, ((4, 0x40), (4, 0x80), (4, 0x50)), shift=16),
        ],
        ids=["finding", "vmap-mixed", "vmap-pmd", "ioremap", "vmalloc"],
    )
    @pytest.mark.parametrize("rev", ["v8", "v8-fix"])
    def test_facts_hold_for_the_real_steps_and_walks(self, case: ConcreteCase, rev: str) -> None:
        """For every page, the real step start and walk satisfy the local model's facts."""
        assert _facts_fail_at(case, rev) == []

    @pytest.mark.slow
    @settings(max_examples=20)
    @given(case=_cases(), rev=st.sampled_from(["v8", "v8-fix", "mm-c1"]))
    def test_facts_hold_on_random_cases(self, case: ConcreteCase, rev: str) -> None:
        """The same on derandomised generated cases."""
        if case.nr_pages > 600:
            case = ConcreteCase(case.path, case.va, case.prot, ((600, case.segments[0][1]),))
        assert _facts_fail_at(case, rev) == []


class TestKernelFidelity:
    """Points where BASE-C and POST-C1 differ in the text, checked on the twin and the exact
    model."""

    VA = 0x800080000  # 2M-aligned virtual page number

    def _present_table_case(self) -> ConcreteCase:
        va = self.VA
        return ConcreteCase(
            "ioremap",
            va,
            PK,
            ((512, 0x200),),
            tables=frozenset({("pgd", va >> 27), ("pud", va >> 18), ("pmd", va >> 9)}),
            trylock_fails=frozenset({("pmd", va >> 9)}),
        )

    def test_base_frees_a_present_table_without_a_trylock(self) -> None:
        """BASE-C's vmap_try_huge_pmd frees a present PTE table unconditionally
        (``pmd_present(*pmd) && !pmd_free_pte_page()``); POST-C1 only under
        ``mmap_read_trylock(&init_mm)``, which the default revision takes to succeed and
        ``trylock="oracle"`` lets fail (then POST-C1 maps the slot with PTEs)."""
        from attrs import evolve

        case = self._present_table_case()
        v8 = REVISIONS["v8"]
        oracle = evolve(v8, trylock="oracle")
        assert twin.run_slow(case, oracle).leaf(self.VA)[0] == A.LEVEL_PMD
        assert twin.run_fast(case, v8).leaf(self.VA)[0] == A.LEVEL_PMD
        assert twin.run_fast(case, oracle).leaf(self.VA)[0] == A.LEVEL_PTE
        for rev, fast_level in ((v8, A.LEVEL_PMD), (oracle, A.LEVEL_PTE)):
            s, f = observe("ioremap", case.inputs(1), rev, CBV(0, 32), Unroll.initial("ioremap", 1, rev))
            assert (s.leaf.level.value, f.leaf.level.value) == (A.LEVEL_PMD, fast_level)  # type: ignore[union-attr]

    def test_c1_evaluates_ffs_only_for_a_contiguous_pair(self) -> None:
        """POST-C1's get_vmap_batch_order returns 0 on ``nr_contig < 2`` before it reads the
        pfn: without the PFN-0 guard (M7), a lone page at pfn 0 is no UB; two contiguous
        pages from pfn 0 are."""
        rev = apply(REVISIONS["mm-c1"], "mutant_no_pfn0_guard")
        for segs, ub in ((((0, 0), (0, 0x100)), False), (((1, 0), (0, 0x100)), True)):
            case = ConcreteCase("vmap", self.VA, PK, segs)
            assert bool(twin.run_fast(case, rev).ub) is ub
            _, f = observe("vmap", case.inputs(2), rev, CBV(0, 32), Unroll.initial("vmap", 2, rev))
            assert f.ub is ub

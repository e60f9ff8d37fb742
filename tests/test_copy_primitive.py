"""The non-temporal copy primitive: store sequences equal memcpy byte for byte, the gates fall
back where they say, seeded bugs are refuted on the right byte, and the publication-order table
has the expected shape."""

from __future__ import annotations

import random

import pytest

from equiv.engine.errors import InputError
from equiv.engine.verdict import Verdict
from equiv.zone_device.copy.ordering import PUBLICATIONS, ordering_row, ordering_table, writer_program
from equiv.zone_device.copy.present import render_copy_summary, render_ordering_table
from equiv.zone_device.copy.primitive import (
    ALIGNMENTS,
    MUTANTS,
    REVISIONS,
    SIZES,
    CopyPlan,
    CopyResult,
    Store,
    copy_plan,
    memcpy_flushcache_nt_safe,
    memcpy_flushcache_v11,
)
from equiv.zone_device.copy.prover import copy_matrix, copy_summary, prove_cell, prove_plan

Matrix = dict[tuple[str, int, int, int], CopyResult]
CELLS = [(r, c, da, sa) for r in REVISIONS for c in SIZES for da in ALIGNMENTS for sa in ALIGNMENTS]


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    """Every (revision, cnt, dst%8, src%8) cell, whole-address-space frame (about 5 s)."""
    return {(r.revision, r.cnt, r.dst_align, r.src_align): r for r in copy_matrix()}


def replay(plan: CopyPlan, seed: int) -> tuple[list[int], list[int], list[int]]:
    """Concrete twin of the z3 model: run the stores on random bytes; (src, dst before, dst after)
    with the destination padded by 16 bytes either side (index 16 is offset 0)."""
    rng = random.Random(seed)
    src = [rng.randrange(256) for _ in range(plan.cnt + 32)]
    dst0 = [rng.randrange(256) for _ in range(plan.cnt + 32)]
    dst = list(dst0)
    for st in plan.stores:
        if st.writes:
            for k in range(st.width):
                dst[16 + st.dst_off + k] = src[st.src_off + k]
    return src, dst0, dst


class TestPlans:
    def test_v11_paths_follow_the_switch(self) -> None:
        """v11 inlines 64/80/96 whatever the alignment and sends 56/72/88 to __memcpy_flushcache."""
        for cnt in SIZES:
            for da in ALIGNMENTS:
                p = copy_plan("v11", cnt, da, 0)
                assert p.path == ("inline" if cnt in (64, 80, 96) else "__memcpy_flushcache")
        assert copy_plan("v11", 64, 5, 3).summary() == "nt8 x8"
        assert copy_plan("v11", 80, 0, 0).detail == "movnti_64 + movnti_16@64"
        assert copy_plan("v11", 96, 0, 0).summary() == "nt8 x12"
        assert [s.dst_off for s in copy_plan("v11", 96, 0, 0).stores] == list(range(0, 96, 8))

    def test_v11_non_constant_cnt_goes_out_of_line(self) -> None:
        """Without __builtin_constant_p(cnt) every size takes __memcpy_flushcache."""
        assert memcpy_flushcache_v11(64, 0, 0, constant=False)[0] == "__memcpy_flushcache"

    def test_memcpy_flushcache_slow_path_shape(self) -> None:
        """__memcpy_flushcache with dst%8 == 3, 56 bytes: 5 cached head bytes + CLWB, 4x8 loop,
        one 8-byte step, 3 cached tail bytes + CLWB."""
        p = copy_plan("v11", 56, 3, 0)
        assert p.summary() == "cached1 x5, clwb, nt8 x6, cached1 x3, clwb"
        assert copy_plan("v11", 72, 4, 0).summary() == "cached1 x4, clwb, nt8 x8, nt4 x1"
        assert copy_plan("v11", 88, 0, 0).summary() == "nt8 x11"

    def test_v5_gate_falls_back_when_dst_misaligned(self) -> None:
        """memcpy_flushcache_large() handles 64/80/96 only for 8-aligned dst; otherwise, and for
        56/72/88, the copy goes through __memcpy_flushcache."""
        assert copy_plan("v5", 64, 0, 5).path == "inline"
        for da in range(1, 8):
            assert copy_plan("v5", 64, da, 0).path == "__memcpy_flushcache"
        assert copy_plan("v5", 72, 0, 0).path == "__memcpy_flushcache"
        assert copy_plan("v5", 0, 3, 0).stores == ()

    def test_v4_gates(self) -> None:
        """v4a checks dst and cnt, v4b also src; not NT-safe means a plain memcpy."""
        assert memcpy_flushcache_nt_safe("a", 64, 0, 3)
        assert not memcpy_flushcache_nt_safe("a", 64, 4, 0)
        assert not memcpy_flushcache_nt_safe("a", 0, 0, 0)
        assert not memcpy_flushcache_nt_safe("b", 64, 0, 3)
        assert memcpy_flushcache_nt_safe("b", 4, 4, 4)
        assert not memcpy_flushcache_nt_safe("b", 4, 2, 0)
        assert copy_plan("v4a", 64, 0, 3).path == "inline"
        assert copy_plan("v4a", 64, 1, 0).path == "fallback memcpy"
        assert copy_plan("v4b", 64, 0, 3).path == "fallback memcpy"
        assert copy_plan("v4b", 88, 0, 0).summary() == "nt8 x11"

    @pytest.mark.parametrize(("rev", "cnt", "da", "sa"), CELLS[::7])
    def test_concrete_replay_is_memcpy(self, rev: str, cnt: int, da: int, sa: int) -> None:
        """The plan run on concrete bytes leaves exactly memcpy's result (independent of z3)."""
        src, dst0, dst = replay(copy_plan(rev, cnt, da, sa), seed=cnt * 64 + da * 8 + sa)
        assert dst[16:16 + cnt] == src[:cnt]
        assert dst[:16] == dst0[:16] and dst[16 + cnt:] == dst0[16 + cnt:]

    def test_bad_inputs(self) -> None:
        """Unknown revision, mutant, alignment, frame, gate variant or publication: InputError."""
        with pytest.raises(InputError):
            copy_plan("v9", 64, 0, 0)
        with pytest.raises(InputError):
            copy_plan("v11", 64, 8, 0)
        with pytest.raises(InputError):
            copy_plan("v11", 64, 0, 0, mutant="mutant_nope")
        with pytest.raises(InputError):
            prove_cell("v11", 64, 0, 0, frame="some")
        with pytest.raises(InputError):
            memcpy_flushcache_nt_safe("c", 64, 0, 0)
        with pytest.raises(InputError):
            writer_program("v11", "smp_mb")
        with pytest.raises(InputError):
            Store("movnti", 0, 8, 0, "x")


class TestByteEquality:
    @pytest.mark.slow
    def test_v11_proved_for_every_size_and_alignment(self, matrix: Matrix) -> None:
        """v11 writes exactly memcpy's bytes for 56..96 and every dst/src alignment."""
        v11 = [r for k, r in matrix.items() if k[0] == "v11"]
        assert len(v11) == len(SIZES) * 64
        assert {r.verdict for r in v11} == {Verdict.PROVED}
        assert {r.frame for r in v11} == {"all"}

    @pytest.mark.slow
    def test_every_revision_proved(self, matrix: Matrix) -> None:
        """v5, v4a, v4b and the memcpy reference are proved too, on each of their paths."""
        assert len(matrix) == len(CELLS)
        assert {r.verdict for r in matrix.values()} == {Verdict.PROVED}
        assert matrix[("v5", 64, 3, 0)].path == "__memcpy_flushcache"
        assert matrix[("v4b", 96, 0, 1)].path == "fallback memcpy"

    @pytest.mark.slow
    def test_summary_table(self, matrix: Matrix) -> None:
        """One summary row per (revision, cnt), all 64 cells proved; the text names the paths."""
        rows = copy_summary(matrix.values())
        assert len(rows) == len(REVISIONS) * len(SIZES)
        assert all(r.proved == r.cells == 64 for r in rows)
        text = render_copy_summary(rows)
        assert "inline: movnti_64 + movnti_32@64 [nt8 x12] (all)" in text

    def test_frame_query_catches_a_far_stray_store(self) -> None:
        """A store 100 bytes past the end passes the +-16 byte window but not the symbolic frame."""
        good = copy_plan("v11", 64, 0, 0)
        bad = CopyPlan("v11", 64, 0, 0, "inline", "stray", (*good.stores,
                       Store("nt", 164, 8, 0, "stray")))
        assert prove_plan(bad, frame="window").verdict is Verdict.PROVED
        r = prove_plan(bad, frame="all")
        assert r.verdict is Verdict.REFUTED
        assert r.first_wrong is not None and 164 <= r.first_wrong < 172


class TestMutants:
    @pytest.mark.parametrize("name", list(MUTANTS))
    def test_refuted_on_the_right_byte(self, name: str) -> None:
        """Each seeded bug is REFUTED exactly where it bites, naming the first wrong byte; a
        harmless edit stays PROVED everywhere."""
        m = MUTANTS[name]
        results = copy_matrix([m.revision], mutant=name)
        refuted = 0
        for r in results:
            expected = m.first_wrong(r.cnt, r.dst_align, r.src_align)
            assert (r.cnt, r.dst_align, r.src_align, r.first_wrong) == \
                (r.cnt, r.dst_align, r.src_align, expected)
            assert r.verdict is (Verdict.PROVED if expected is None else Verdict.REFUTED)
            refuted += expected is not None
        assert (refuted == 0) == name.startswith("harmless_")

    def test_explanations(self) -> None:
        """The counterexample says what the wrong byte holds and which step wrote it."""
        r = prove_cell("v11", 80, 0, 0, mutant="mutant_v11_80_drops_tail16")
        assert (r.first_wrong, r.explanation) == (64, "dst[64] never written (keeps its old value)")
        r = prove_cell("v11", 96, 0, 0, mutant="mutant_v11_movnti32_short_stride")
        assert r.first_wrong == 84
        r = prove_cell("v11", 56, 3, 0, mutant="mutant_flushcache_tail_rounds_up")
        assert r.first_wrong == 56 and r.explanation is not None
        assert "__memcpy_flushcache tail memcpy" in r.explanation


class TestOrdering:
    def test_table_shape(self) -> None:
        """A stale page is visible exactly without a drain and with a plain/release publication,
        and only when the page has NT stores (the memcpy reference never)."""
        rows = ordering_table()
        assert len(rows) == len(REVISIONS) * len(PUBLICATIONS)
        got = {(r.revision, r.publication): r.stale_visible for r in rows}
        expected = {(r, p): r == "v11" and p in ("plain store", "release store")
                    for r in REVISIONS for p in PUBLICATIONS}
        assert got == expected
        assert {r.drain for r in rows if r.revision in ("v5", "v4a", "v4b")} == {True}
        assert {r.drain for r in rows if r.revision in ("v11", "memcpy")} == {False}

    def test_drain_is_what_matters(self) -> None:
        """v5 without its memcpy_nt_drain() behaves like v11; v11 with an sfence like v5."""
        assert ordering_row("v5", "plain store", drain=False).stale_visible
        assert not ordering_row("v11", "release store", drain=True).stale_visible
        assert not ordering_row("v11", "locked RMW", drain=False).stale_visible

    def test_witness(self) -> None:
        """A stale row carries an interleaving: flag read set, then a stale NT chunk."""
        r = ordering_row("v11", "plain store")
        assert "R: reads flag = 1" in r.witness
        assert r.witness[-1].endswith("= STALE")
        assert r.stale_locations == ("c0.nt", "c1.nt", "c2.nt", "c3.nt")
        assert ordering_row("v11", "locked RMW").witness == ()

    def test_cached_head_and_tail_are_never_stale(self) -> None:
        """With a misaligned dst, __memcpy_flushcache's cached head/tail are FIFO-ordered before
        the flag: only the NT chunks can be stale."""
        r = ordering_row("v11", "plain store", cnt=56, dst_align=3)
        assert r.page == "c0.cached c0.nt c1.nt c2.nt c3.nt c3.cached"
        assert r.stale_locations == ("c0.nt", "c1.nt", "c2.nt", "c3.nt")

    def test_render(self) -> None:
        """The rendered table has a header, one line per row plus its explanation."""
        text = render_ordering_table(ordering_table(["v11"]), witnesses=False)
        assert text.count("\n") == 6 and "YES" in text and "Locked RMW" in text


@pytest.mark.slow
def test_cli_copy_primitive() -> None:
    """``--copy-primitive`` proves every cell and shows v11's stale-page rows (exit 0)."""
    import io

    from equiv.proofs import main

    out = io.StringIO()
    assert main(["--copy-primitive"], out=out, err=io.StringIO()) == 0
    text = out.getvalue()
    assert "byte equality with memcpy" in text and "REFUTED" not in text
    assert "v11    -      plain store    YES" in text

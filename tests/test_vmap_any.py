"""The vmap subject for any number of segments (``--bounds any``): the bound that prints as
"any", the page array as functions of the index (:class:`equiv.vmap.inputs.RunArray`), the
lemmas without a segment count, counterexamples of that cell replayed concretely, v8-fix
proved and v8's finding refuted on it."""

from __future__ import annotations

import io
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import z3

from equiv.engine.errors import InputError
from equiv.engine.selftest import Outcome
from equiv.engine.verdict import Verdict
from equiv.proofs import main
from equiv.vmap import REVISIONS, VmapCounterexample, bound_description, check
from equiv.vmap.cell import _Cell, resolve
from equiv.vmap.cli import DEFAULT_BOUNDS, _bounds
from equiv.vmap.counterexample import _power_pieces, replay
from equiv.vmap.inputs import ANY, MAX_SEGMENTS, RunArray, is_any, symbolic_inputs
from equiv.vmap.lemmas import depends, path_lemmas, runs
from equiv.vmap.present import counterexample_lines
from equiv.vmap.selftest import self_test

ROOT = Path(__file__).resolve().parent.parent


def verdicts(r: object) -> dict[str, Verdict]:
    return {o.name: o.verdict for o in r.obligations}  # type: ignore[attr-defined]


class TestAnyBound:
    def test_prints_as_any_and_stays_a_number(self) -> None:
        """ANY prints as "any" (also right-aligned in a width), sorts after every number,
        survives pickling (worker processes) and is the largest segment count in JSON."""
        assert (str(ANY), f"{ANY}", f"{ANY:5d}") == ("any", "any", "  any")
        assert sorted([ANY, 2, 1]) == [1, 2, ANY]
        again = pickle.loads(pickle.dumps(ANY))
        assert is_any(again) and str(again) == "any" and not is_any(MAX_SEGMENTS)
        assert json.loads(json.dumps({"bound": ANY})) == {"bound": MAX_SEGMENTS}

    def test_bounds_option(self) -> None:
        """--bounds takes "any" alone or in a list; the default runs it; numbers keep their range."""
        assert _bounds("any") == [ANY] and _bounds("1-2,any") == [1, 2, ANY]
        assert any(is_any(b) for b in DEFAULT_BOUNDS)
        with pytest.raises(InputError, match="bound 0 out of range"):
            _bounds("0,any")
        with pytest.raises(InputError, match="valid: any, N, N-M"):
            _bounds("some")

    def test_description_says_any_number_of_segments(self) -> None:
        """Every output that states the bound says what "any" covers."""
        assert bound_description(ANY).startswith("any number of segments")


class TestRunArray:
    def test_symbolic_inputs_of_any_bound(self) -> None:
        """vmap and vmalloc get a RunArray (no segment variables), ioremap its one range."""
        assert isinstance(symbolic_inputs("vmap", ANY).pages, RunArray)
        assert isinstance(symbolic_inputs("vmalloc", ANY).pages, RunArray)
        assert not isinstance(symbolic_inputs("ioremap", ANY).pages, RunArray)
        assert symbolic_inputs("vmap", ANY).max_count == MAX_SEGMENTS

    def test_run_end_is_clamped_into_the_array(self) -> None:
        """run_end(x) lies in (x, N] for every x < N, whatever the function behind it."""
        pg = symbolic_inputs("vmap", ANY).pages
        assert isinstance(pg, RunArray)
        x = z3.BitVec("t.x", 32)
        e = pg.run_end(x)
        s = z3.Solver()
        s.add(z3.ULT(x, pg.count), z3.Not(z3.And(z3.ULT(x, e), z3.ULE(e, pg.count))))
        assert s.check() == z3.unsat

    def test_vmalloc_chunks_are_contiguous_and_aligned_by_construction(self) -> None:
        """With shift 16, every page of a chunk continues the chunk's first pfn, which is
        64K-aligned: no assumption is needed for P3."""
        inp = symbolic_inputs("vmalloc", ANY)
        pg = inp.pages
        x = z3.BitVec("t.x", 32)
        first = x & ~15
        s = z3.Solver()
        s.add(inp.shift == 16)
        s.add(z3.Not(z3.And(pg.pfn_at(x) == pg.pfn_at(first) + z3.ZeroExt(4, x & 15),
                            pg.pfn_at(first) & 15 == 0)))
        assert s.check() == z3.unsat

    def test_power_pieces_keep_the_pfns(self) -> None:
        """A concrete array read off a model becomes segments of 2^k pages (k <= 9) with the
        same pfns, every run cut into powers of two."""
        pfns = [*range(100, 100 + 700), 7, 9, *range(2000, 2003)]
        pieces = _power_pieces(pfns, 9)
        assert all(k <= 9 for k, _ in pieces)
        assert [p for k, b in pieces for p in range(b, b + (1 << k))] == pfns


class TestLemmasWithoutACount:
    def test_chain_contiguous_is_a_definition(self) -> None:
        """With any number of runs, chain_contiguous is run_end's definition, not a lemma:
        no obligation rests on it, the others are unchanged."""
        assert "chain_contiguous" in path_lemmas("vmap")
        assert "chain_contiguous" not in path_lemmas("vmap", unbounded=True)
        assert "chain_contiguous" not in depends("e_trans", "vmap", unbounded=True)
        assert {"batch_runs", "batch_order_run", "batch_walks_tile"} <= depends(
            "e_trans", "vmap", unbounded=True
        )
        assert runs(True) == {"batch_order_run", "batch_runs"}


class TestSeededBugOnAnyCell:
    def test_max_steps_past_end_refuted_by_the_any_model(self) -> None:
        """Seeded bug X1 (get_vmap_batch_order(..., count - i + 1, i)) on the cell of any
        number of segments: index_bound REFUTED by that cell's own local model, the
        counterexample replayed on the twin and labelled "any number of segments"."""
        rev = resolve("v8-fix", "mutant_max_steps_past_end")
        cell = _Cell("vmap", ANY, rev, "mutant_max_steps_past_end", 60_000, None)
        res = cell.run_obligation("index_bound", set(path_lemmas("vmap", rev, True)))
        assert res.verdict is Verdict.REFUTED
        cx = res.counterexample
        assert isinstance(cx, VmapCounterexample) and is_any(cx.bound) and cx.found_by == "local"
        assert replay(cx.case, rev, "index_bound").violations
        assert "any number of segments" in " ".join(counterexample_lines(cx))


@pytest.mark.slow
class TestAnyCells:
    def test_v8_fix_proved_on_every_path(self) -> None:
        """v8-fix: every obligation and lemma PROVED for page arrays of any length and any
        number of runs, on ioremap, vmalloc and vmap."""
        for path in ("ioremap", "vmalloc", "vmap"):
            r = check(path, ANY, "v8-fix")
            assert r.verdict is Verdict.PROVED, (path, verdicts(r))
            assert is_any(r.order)

    def test_v8_finding_refuted(self) -> None:
        """v8's finding shows on the cell of any number of segments: e_trans only, replayed."""
        r = check("vmap", ANY, "v8")
        bad = {n for n, v in verdicts(r).items() if v is not Verdict.PROVED}
        assert bad == {"e_trans"}, verdicts(r)
        cx = next(o.counterexample for o in r.obligations if o.name == "e_trans")
        assert isinstance(cx, VmapCounterexample)
        assert replay(cx.case, REVISIONS["v8"], "e_trans").violations

    def test_report_says_any_number_of_segments(self) -> None:
        """The text report names the row "any" and says what it covers; JSON keeps a number."""
        out = io.StringIO()
        code = main(["--subject", "vmap", "--paths", "vmalloc", "--bounds", "any", "--no-cache",
                     "--quiet", "--jobs", "1", "--no-times"], out, io.StringIO())
        text = " ".join(out.getvalue().split())
        assert code == 0, out.getvalue()
        assert "bound any: any number of segments" in text
        assert "any PROVED" in text

    def test_batching_bugs_killed_on_the_any_cell(self) -> None:
        """The seeded bugs of the batching loop (M1, M4, M5, X1, X3, X4) are killed on the
        vmap cell of any number of segments, on their obligations, and X6 (the equivalent
        control of the batching invariant) is PROVED there."""
        names = ["mutant_no_pfn_align_clamp", "mutant_flush_from_map_addr", "mutant_batch_step_by_shift",
                 "mutant_max_steps_past_end", "mutant_final_walk_to_batch_end", "mutant_flush_to_batch_end",
                 "harmless_walk_on_shift_drop"]
        res = self_test(2, names=names, cells=(("vmap", ANY),))
        assert res.ok, res.rows
        assert len(res.killed) == 6 and res.count(Outcome.FALSE_REPORT) == 0

    def test_bench_prints_the_any_figures(self) -> None:
        """bench/vmap.py times v8-fix on the three paths with any number of segments and
        v8's finding there."""
        p = subprocess.run(
            [sys.executable, "bench/vmap.py", "--bound", "1", "--quick", "--no-self-test"],
            cwd=ROOT, capture_output=True, text=True, check=False, timeout=600,
        )
        assert "bound any: any number of segments: " in p.stdout, p.stdout + p.stderr
        assert "v8-fix on all three paths: wall" in p.stdout
        assert "v8      vmap    REFUTED" in p.stdout

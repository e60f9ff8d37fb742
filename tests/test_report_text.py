"""The reviewer-facing text report (issue 5, points 1-3): 72 columns, provenance chains,
inputs that do not matter, reproduce commands that reproduce exactly one obligation, and
``--explain FIELD``."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest

from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType
from equiv.proofs import main
from equiv.report.text import WIDTH, command_lines, fit, wrap
from equiv.zone_device.cell import CellSpec, run_cell

MUTANT = ["--mutant", "mutant_tail_keeps_type_refcount", "--types", "GENERIC", "--orders", "2",
          "--jobs", "1"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def assert_mail_width(text: str) -> None:
    long = [ln for ln in text.splitlines() if len(ln) > WIDTH]
    assert not long, f"{len(long)} lines over {WIDTH} columns, e.g. {long[0]!r}"
    assert "\x1b" not in text, "no colour"
    assert not any(ch in text for ch in "│─┌┐└┘╭╮"), "no box drawing"


class TestMailText:
    def test_refuted_report_fits_a_mail(self) -> None:
        code, out, _ = run(*MUTANT, "-v")
        assert code == 1
        assert_mail_width(out)

    def test_proved_matrix_with_times_fits_a_mail(self) -> None:
        code, out, _ = run("--orders", "0-2")
        assert code == 0
        assert_mail_width(out)
        assert "PCI_P2PDMA" in out  # all five type columns fit

    def test_summary_line_comes_first(self) -> None:
        _, out, _ = run(*MUTANT, "--no-times")
        first = out.splitlines()[0]
        assert first == "20 obligations (1 cell): 17 proved, 3 refuted"
        assert out.splitlines()[1] == "smallest order with a counterexample: 2"

    def test_differing_field_names_view_offset_and_both_values(self) -> None:
        _, out, _ = run(*MUTANT, "--no-times")
        assert "field _refcount (offset 52, 4 bytes)" in out
        assert "same bytes as: folio._refcount_1" in out  # the union / folio view of tail 1
        assert "slow value: 0x00000000" in out and "fast value: 0x00000001" in out


def _reproduce_commands(text: str) -> list[list[str]]:
    lines = text.splitlines()
    cmds = []
    for i, ln in enumerate(lines):
        if ln.strip() == "reproduce:":
            parts = []
            for nxt in lines[i + 1:]:
                parts.append(nxt.strip().removesuffix("\\").strip())
                if not nxt.endswith("\\"):
                    break
            cmds.append(shlex.split(" ".join(parts)))
    return cmds


def test_reproduce_command_reproduces_exactly_that_obligation() -> None:
    _, out, _ = run(*MUTANT, "--no-times")
    cmds = _reproduce_commands(out)
    assert len(cmds) == 3
    argv = cmds[1]
    assert argv[:3] == ["python", "-m", "equiv.proofs"]
    code, again, _ = run(*argv[3:], "--no-times", "--jobs", "1")
    assert code == 1
    refuted = [ln.strip() for ln in again.splitlines()
               if ln.strip().startswith("REFUTED ") and ln.strip().endswith("_equal")]
    assert refuted == ["REFUTED tail2_equal"], "only the one obligation is checked"


def test_command_lines_wraps_with_backslashes_and_keeps_options_whole() -> None:
    short = "python -m equiv.proofs --types GENERIC"
    assert command_lines(short, "  ") == ["  " + short]
    long = ("python -m equiv.proofs --config x86_64-default --revision v11 --types GENERIC "
            "--orders 2 --obligation tail1_equal --mutant mutant_tail_keeps_type_refcount")
    lines = command_lines(long, "      ")
    assert len(lines) > 1 and all(len(ln) <= WIDTH for ln in lines)
    assert all(ln.endswith(" \\") for ln in lines[:-1])
    joined = " ".join(ln.strip().removesuffix("\\").strip() for ln in lines)
    assert shlex.split(joined) == shlex.split(long)


#: words a reader copies whole: a path (an undecided query's file) and file:line locations
WORDS = ("/root/.cache/equiv/unknown/equiv-unknown-vmap-exact-e_trans-q462c.smt2",
         "include/linux/page_ref.h:113", "include/linux/mm_types.h:580",
         "mm/mm_init.c:1077")


class TestWholeWords:
    """The 72-column wrapping split paths and line numbers (``...q462c.sm`` / ``t2``,
    ``page_ref.h:11`` / ``3``), which broke copy and paste: a word is never split, one
    longer than its line's room stands alone."""

    @pytest.mark.parametrize("indent", ["", "    ", " " * 30])
    def test_wrap_keeps_every_word_whole(self, indent: str) -> None:
        text = "lemma undecided; query: " + " then ".join(WORDS) + " (rest of the sentence)"
        lines = wrap(text, indent)
        assert [w for ln in lines for w in ln.split()] == text.split()
        assert all(len(ln) <= WIDTH for ln in lines if len(ln.split()) > 1)

    @pytest.mark.parametrize("word", WORDS[1:])
    def test_fit_keeps_a_table_rows_location_whole(self, word: str) -> None:
        """The drift table of a --linux report: the location column starts at 45, too late
        for a location of 28 characters; the row continues where the word fits."""
        row = f"  matches  {'init_page_count':34s}{word}"
        lines = fit(row).splitlines()
        assert [w for ln in lines for w in ln.split()] == row.split()
        assert all(len(ln) <= WIDTH for ln in lines)

    def test_an_undecided_querys_path_is_whole_in_the_report(self, tmp_path: Path) -> None:
        cache = tmp_path / "a-cache-directory-deep-enough-for-a-long-path"
        code, out, _ = run("--types", "GENERIC", "--orders", "0", "--rlimit", "1000",
                           "--cache-dir", str(cache), "--no-times", "--quiet")
        paths = re.findall(r"\S*equiv-unknown-\S*", out)
        assert code == 2 and paths
        assert all(Path(p).is_file() and len(p) > WIDTH - 6 for p in paths), paths


class TestProvenance:
    def test_chain_ends_with_the_writer_on_each_side(self) -> None:
        _, out, _ = run(*MUTANT, "--no-times", "--obligation", "tail2_equal")
        slow = out.index("slow value: 0x00000000")
        fast = out.index("fast value: 0x00000001")
        assert "3. memmap_init_compound: set_page_count(page, 0)" in out[slow:fast]
        assert "3. tail 1 taken as the tail template" in out[fast:]
        assert "4. memcpy from the tail template" in out[fast:]


class TestMinimalCounterexample:
    def test_inputs_that_do_not_matter_are_marked(self) -> None:
        res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=2,
                                mutant="mutant_tail_keeps_type_refcount", obligation="tail1_equal"))
        (cx,) = [o.counterexample for o in res.obligations if o.counterexample]
        assert cx is not None
        # the missing refcount reset does not depend on where the range is, nor on memory
        assert {"start_pfn", "nid", "initial_memory"} <= set(cx.irrelevant)
        # pinned by the cell's assumptions: never claimed free
        assert "pgmap_type" not in cx.irrelevant and "tracepoint_on" not in cx.irrelevant
        assert cx.multiplicity == "one of many"
        assert (cx.inputs["start_pfn"], cx.inputs["nid"]) == (0, 0)  # small values preferred

    def test_inputs_that_matter_are_not_marked(self) -> None:
        """The first head written one struct page before the range: what it holds depends
        on nid and pgmap and on the garbage it replaced (memory matters); where it is, one
        page before the first pfn, does not depend on start_pfn."""
        res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=0,
                                mutant="mutant_first_head_before_range", obligation="outside_equal"))
        (cx,) = [o.counterexample for o in res.obligations
                 if o.counterexample and o.name == "outside_equal"]
        assert cx is not None
        assert "nid" not in cx.irrelevant and "pgmap" not in cx.irrelevant
        assert "initial_memory" not in cx.irrelevant
        assert "start_pfn" in cx.irrelevant

    def test_text_marks_them(self) -> None:
        _, out, _ = run(*MUTANT, "--no-times", "--obligation", "tail1_equal")
        assert "* any other value gives the same difference" in out
        assert "* start_pfn" in out and "  pgmap->type" in out
        assert "MEMORY_DEVICE_GENERIC" in out
        assert "one of many counterexamples" in out


class TestExplain:
    def test_explains_a_proved_field_in_every_role(self) -> None:
        code, out, _ = run("--explain", "folio._large_mapcount", "--types", "GENERIC",
                           "--orders", "2", "--jobs", "1")
        assert code == 0
        assert_mail_width(out)
        for role in ("head", "tail1", "tail2", "tail", "outside"):
            assert f"\n{role} (compound" in out
        assert "prep_compound_head: _large_mapcount = -1" in out
        assert "memcpy from the tail template" in out

    def test_explains_a_refuted_field_on_its_counterexample(self) -> None:
        code, out, _ = run("--explain", "_refcount", *MUTANT)
        assert code == 1
        assert "tail1 (compound 0, tail 1, pfn 0x1): REFUTED, counterexample input" in out

    @pytest.mark.parametrize(("argv", "needle"), [
        (["--explain", "nope", "--types", "GENERIC", "--orders", "2"], "unknown field 'nope'"),
        (["--explain", "_refcount", "--orders", "2"], "--explain traces one cell"),
        (["--obligation", "tail2_equal", "--orders", "0", "--types", "GENERIC"],
         "does not exist at order 0"),
        (["--obligation", "nope"], "unknown obligation 'nope'; valid: head_equal"),
    ])
    def test_bad_input_is_one_line_exit_3(self, argv: list[str], needle: str) -> None:
        code, out, err = run(*argv)
        assert code == 3 and out == ""
        assert err.count("\n") == 1 and needle in err


def test_obligation_filter_keeps_the_lemmas() -> None:
    res = run_cell(CellSpec(config="x86_64-default", revision="v11", ptype=MemoryType.GENERIC, order=3,
                            obligation="tail_equal"))
    pages = [o.name for o in res.obligations if o.kind == "page"]
    assert pages == ["tail_equal"]
    assert any(o.kind == "lemma" for o in res.obligations)
    assert res.verdict is Verdict.PROVED

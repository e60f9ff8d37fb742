"""A failed loop-summary lemma's counterexample (issue 31, point 4): the iteration, the
struct page relative to the iteration's block and the fields it changed there, read from
the solver's model (:func:`equiv.zone_device.source.clemmas.prove_lemmas`,
:func:`equiv.zone_device.source.csummary.lemma_counterexample`) and shown in every
``--patch`` report format, marked as the solver's model, not replayed.  Quick: hand-built
lemmas and a hand-built report.  Slow: the real C's (bugs/01, whose extra copy lands on
the next block); lemmas that hold are tests/test_patch_v73_shape.py's.
"""

from __future__ import annotations

import json
import xml.dom.minidom
from pathlib import Path

import pytest
import z3
from attrs import evolve
from test_linux_tree import linux612  # noqa: F401  (the session fixture)
from test_patch_cli import _report, schema_errors
from test_patch_proof import DATA, SERIES, _cell

from equiv.engine.verdict import Verdict
from equiv.linux.patch import prepare
from equiv.zone_device.source.clemmas import check_lemmas, prove_lemmas
from equiv.zone_device.source.common import RoleResult
from equiv.zone_device.source.csummary import (
    CLemma,
    LemmaCex,
    LemmaWitness,
    WitnessPart,
    lemma_counterexample,
)
from equiv.zone_device.source.files import FILES
from equiv.zone_device.source.patch_present import (
    patch_json,
    patch_sarif,
    render_patch_junit,
    render_patch_text,
)

#: a 16-byte "struct page": flags at 0 (8 bytes), private at 8
ATOMS = [(0, 8, "flags"), (8, 8, "private")]
STEP = 4


def _frame_write(bad: bool) -> CLemma:
    """A frame-write lemma of a loop whose iteration ``k`` owns pages ``[q_k, q_k + 4)``
    with ``q_k = 100 + 4k``; with ``bad`` it also sets bit 0 of ``private`` in the page
    just before its block (the last page of block k-1), as an iteration that writes
    outside its frame would."""
    k, x = z3.BitVecs("k x", 64)
    q = 100 + k * STEP
    n = q + x
    before = z3.BitVec("entry_bytes", 128)
    written = z3.ZeroExt(64, z3.BitVecVal(1, 64)) << 64  # private |= 1
    after = z3.If(n == q - 1, before | written, before) if bad else before
    outside = z3.Not(z3.ULT(x, STEP))
    premise = z3.ULT(k, 8)
    claim = z3.And(z3.Implies(outside, after == before), z3.BoolVal(True))
    w = LemmaWitness(k, q, z3.BitVecVal(STEP, 64),
                     (WitnessPart("write", pfn=n, after=after, before=before),
                      WitnessPart("pageblock write")))
    return CLemma("mm/x.c:10 f", "frame-write", premise, claim, witness=w)


def test_a_proved_lemma_has_no_counterexample() -> None:
    out = prove_lemmas([_frame_write(False)], [], 10_000)
    assert out.why == "" and out.cex is None


def test_a_failed_frame_write_names_iteration_page_and_field() -> None:
    lm = _frame_write(True)
    out = prove_lemmas([lm], [], 10_000, atoms=ATOMS)
    assert out.why == "loop lemma frame-write of mm/x.c:10 f: sat"
    assert check_lemmas([lm], [], 10_000) == out.why  # the string API is unchanged
    cex = out.cex
    assert cex is not None
    assert cex.kind == "frame-write" and cex.what == "write"
    assert cex.iteration is not None and cex.iteration < 8
    assert cex.pfn == 100 + STEP * cex.iteration - 1
    assert cex.where == "the last page of block k-1"
    assert cex.fields == ("private",)  # flags unchanged: not named
    assert cex.text() == (f"frame-write of mm/x.c:10 f: iteration k={cex.iteration} writes "
                          f"struct page pfn {cex.pfn:#x}, the last page of block k-1: private "
                          "(the solver's model, not replayed)")


def test_places_relative_to_the_block() -> None:
    lm = _frame_write(False)
    assert lm.witness is not None
    k, x = z3.BitVecs("k x", 64)
    for off, where in ((-1, "the last page of block k-1"), (4, "the first page of block k+1"),
                       (6, "page 2 of block k+1"), (-8, "the first page of block k-2")):
        s = z3.Solver()
        s.add(k == 3, x == off)
        assert s.check() == z3.sat
        cex = lemma_counterexample(lm, 0, s.model(), ATOMS)
        assert cex.iteration == 3 and cex.where == where, (off, cex)
        assert cex.fields == ()
    s = z3.Solver()
    s.add(k == 1, x == -12)  # block k-3 = block -2: named by its number
    assert s.check() == z3.sat
    cex = lemma_counterexample(lm, 0, s.model(), ATOMS)
    assert cex.where == "the first page of block -2 (before the first summarised block)"


def test_a_carry_step_names_the_local() -> None:
    k = z3.BitVec("k", 64)
    w = LemmaWitness(k, 100 + k, z3.BitVecVal(1, 64), (WitnessPart("carry nr"),))
    lm = CLemma("mm/x.c:10 f", "carry-step", z3.ULT(k, 8), z3.And(k != 5), witness=w)
    cex = prove_lemmas([lm], [], 10_000).cex
    assert cex is not None and cex.iteration == 5
    assert cex.text() == ("carry-step of mm/x.c:10 f: iteration k=5: nr after it is not what "
                          "one step from the seed gives (the solver's model, not replayed)")


def test_a_lemma_without_witness_gives_none() -> None:
    x = z3.BitVec("x", 8)
    out = prove_lemmas([CLemma("l", "no-wrap", z3.BoolVal(True), x == 1)], [], 10_000)
    assert out.why == "loop lemma no-wrap of l: sat" and out.cex is None


CEX = LemmaCex("mm/mm_init.c:1161 memmap_init_zone_device", "frame-write", "write", 1,
               0x40007, None, "the last page of block k-1", ("private",))


def _with_cex():  # type: ignore[no-untyped-def]
    rep = _report(verdict=Verdict.UNKNOWN)
    cell = rep.run.cells[0]
    lemmas = RoleResult("loop_summary_lemmas", Verdict.UNKNOWN, 1.0,
                        reason="loop lemma frame-write of mm/mm_init.c:1161 "
                               "memmap_init_zone_device: sat", lemma_cex=CEX)
    cell = evolve(cell, roles=(lemmas, *cell.roles[1:]))
    return evolve(rep, run=evolve(rep.run, cells=(cell,)))


def test_every_format_shows_the_counterexample() -> None:
    rep = _with_cex()
    line = CEX.text()
    assert "(the solver's model, not replayed)" in line
    assert "iteration k=1 writes struct page pfn 0x40007, the last page of block k-1: private" \
        in line
    text = render_patch_text(rep, times=False)
    assert "counterexample: frame-write of" in text
    assert "the last page of block k-1: private" in " ".join(text.split())
    doc = patch_json(rep, times=False)
    assert [] == schema_errors(doc)
    lem = next(r for c in doc["cells"] for r in c["roles"] if r["name"] == "loop_summary_lemmas")
    assert lem["lemma_counterexample"] == {
        "loop": CEX.loop, "lemma": "frame-write", "what": "write", "iteration": 1,
        "pfn": "0x40007", "pageblock": None, "where": "the last page of block k-1",
        "fields": ["private"], "source": "the solver's model, not replayed", "text": line}
    others = [r for c in doc["cells"] for r in c["roles"] if r["name"] != "loop_summary_lemmas"]
    assert all("lemma_counterexample" not in r for r in others)
    json.dumps(doc)
    sarif = patch_sarif(rep, times=False)
    res = [r for r in sarif["runs"][0]["results"]
           if r["properties"]["role"] == "loop_summary_lemmas"]
    assert len(res) == 1 and line in res[0]["message"]["text"]
    assert res[0]["properties"]["lemma_counterexample"]["where"] == "the last page of block k-1"
    junit = xml.dom.minidom.parseString(render_patch_junit(rep, times=False))
    errs = [e for e in junit.getElementsByTagName("error")
            if "loop_summary_lemmas" in e.getAttribute("message")]
    assert len(errs) == 1 and f"counterexample: {line}" in errs[0].firstChild.data  # type: ignore[union-attr]


@pytest.mark.slow
def test_the_tail_loop_one_past_end_shows_its_write(linux612: Path, tmp_path: Path) -> None:  # noqa: F811
    """bugs/01 (the tail loop one past its end) at order 1: the heads loop's frame-write
    lemma fails, and its counterexample is an iteration writing the first page of the next
    block (the next head, head_pfn + 2), a real write outside its frame."""
    root = prepare(linux612, FILES, [*SERIES, DATA / "bugs/01-tail-loop-one-past-end.patch"],
                   tmp_path / "t").root
    cell = _cell(linux612, root, "x86_64-default", 1)
    lemmas = {r.name: r for r in cell.roles}["loop_summary_lemmas"]
    assert lemmas.verdict is Verdict.UNKNOWN and "frame-write" in lemmas.reason
    cex = lemmas.lemma_cex
    assert cex is not None and cex.kind == "frame-write" and cex.what == "write", cex
    assert "memmap_init_zone_device" in cex.loop
    assert cex.iteration is not None and cex.pfn is not None
    assert cex.where == "the first page of block k+1", cex
    assert cex.fields and "(the solver's model, not replayed)" in cex.text()

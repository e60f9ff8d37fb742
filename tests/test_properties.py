"""Properties: on random concrete inputs both paths agree, and the symbolic terms, evaluated at
the same point, give exactly the concrete values (the two evaluators of one model agree)."""

from __future__ import annotations

import functools

import z3
from hypothesis import given
from hypothesis import strategies as st

from equiv.bv import CBV
from equiv.config import PRESETS
from equiv.loops import Ctx
from equiv.memmap import MemoryType, Scenario, concrete_inputs, geometry, slot_of
from equiv.obligations import CellProblem, build_cell
from equiv.page_model import Layout
from equiv.slow_path import compound_nr_pages, memmap_init_zone_device
from equiv.template_path import REVISIONS, fast_path

CONFIGS = sorted(PRESETS)


@st.composite
def points(draw: st.DrawFn) -> dict[str, object]:
    order = draw(st.integers(0, 4))
    stride = 1 << order
    ncomp = draw(st.integers(0, 3))
    altmap = draw(st.one_of(st.none(), st.tuples(st.integers(0, 3), st.integers(0, 3))))
    if altmap is not None and sum(altmap) > ncomp * stride:
        altmap = None
    return {
        "config": draw(st.sampled_from(CONFIGS)),
        "ptype": draw(st.sampled_from(list(MemoryType))),
        "order": order,
        "start_pfn": draw(st.integers(0, 1 << 20)) * stride + draw(st.sampled_from([0, 0x8000 - stride])),
        "nr_pages": ncomp * stride,
        "nid": draw(st.integers(0, 63)),
        "altmap": altmap,
        "early": frozenset(draw(st.sets(st.integers(0, 40), max_size=3))),
        "garbage": draw(st.integers(1, 255)),
        "mobility_disabled": draw(st.booleans()),
        "revision": draw(st.sampled_from(sorted(REVISIONS))),
    }


def run_concrete(pt: dict[str, object], fast: bool):  # type: ignore[no-untyped-def]
    L = Layout.from_config(PRESETS[pt["config"]])  # type: ignore[index]
    sc = Scenario(L, pt["ptype"], pt["order"])  # type: ignore[arg-type]
    kw = {k: pt[k] for k in ("start_pfn", "nr_pages", "nid", "altmap", "early", "garbage",
                             "mobility_disabled")}
    inp = concrete_inputs(L, **kw)  # type: ignore[arg-type]
    f = fast_path(REVISIONS[pt["revision"]]) if fast else memmap_init_zone_device  # type: ignore[index]
    return sc, inp, f(Ctx(False), sc, inp)


@given(points())
def test_fast_equals_slow_concretely(pt: dict[str, object]) -> None:
    """Every struct page of the range, two compounds past it, and the bitmap are equal."""
    sc, inp, slow = run_concrete(pt, fast=False)
    _, _, fast = run_concrete(pt, fast=True)
    g = geometry(sc, inp)
    for c in range(int(g.ncompounds) + 2):  # type: ignore[call-overload]
        for t in range(sc.stride):
            k = (CBV(c, 64), CBV(t, 64))
            assert int(slow.read(*k).bits) == int(fast.read(*k).bits), (c, t)  # type: ignore[call-overload]
    for b in range(int(inp.start_pfn) >> 9, ((int(inp.start_pfn) + int(inp.nr_pages)) >> 9) + 2):  # type: ignore[call-overload]
        assert int(slow.read_pb(CBV(b, 64))) == int(fast.read_pb(CBV(b, 64)))  # type: ignore[call-overload]


@functools.cache
def symbolic(config: str, ptype: MemoryType, order: int, rev: str) -> CellProblem:
    L = Layout.from_config(PRESETS[config])
    return build_cell(Scenario(L, ptype, order), REVISIONS[rev])


def evaluate(problem: CellProblem, pt: dict[str, object], term: z3.ExprRef,
             idx: dict[str, int]) -> int:
    """Evaluate a symbolic term at the concrete point of ``pt`` (same initial memory)."""
    L = problem.scenario.layout
    inp = problem.inputs
    altmap = pt["altmap"]
    vals = {"start_pfn": pt["start_pfn"], "nr_pages": pt["nr_pages"], "nid": pt["nid"],
            "pgmap": 0xFFFF888012340000, "altmap_reserve": altmap[0] if altmap else 0,  # type: ignore[index]
            "altmap_free": altmap[1] if altmap else 0, "vmemmap_base": 0xFFFFEA0000000000,  # type: ignore[index]
            "page_offset": 0xFFFF888000000000}
    subs: list[tuple[z3.ExprRef, z3.ExprRef]] = [
        (getattr(inp, k), z3.BitVecVal(v, 64)) for k, v in vals.items()]  # type: ignore[arg-type]
    subs += [(inp.altmap_valid, z3.BoolVal(altmap is not None)),  # type: ignore[list-item]
             (inp.mobility_disabled, z3.BoolVal(pt["mobility_disabled"])),  # type: ignore[list-item]
             (inp.tracepoint_on, z3.BoolVal(False))]  # type: ignore[list-item]
    subs += [(z3.BitVec(k, 64), z3.BitVecVal(v, 64)) for k, v in idx.items()]
    cs = z3.BitVec("cs_", 128)
    c, s = z3.Extract(127, 64, cs), z3.Extract(63, 0, cs)
    byte = z3.Extract(7, 0, z3.BitVecVal(pt["garbage"], 64) + 7 * c + 13 * s)  # type: ignore[arg-type]
    byte = z3.If(byte == 0, z3.BitVecVal(0xA5, 8), byte)
    pages = z3.Lambda([cs], z3.Concat(*([byte] * L.size)))
    b = z3.BitVec("b_", 64)
    pbs = z3.Lambda([b], z3.Extract(7, 0, z3.BitVecVal(pt["garbage"], 64) ^ b))  # type: ignore[arg-type]
    idx_s = z3.BitVecSort(64)
    subs += [(z3.Array("mem0.pages", z3.BitVecSort(128), z3.BitVecSort(8 * L.size)), pages),
             (z3.Array("mem0.pageblock", idx_s, z3.BitVecSort(8)), pbs)]
    out = z3.substitute(term, *subs)
    early = z3.Or(*[z3.Var(0, idx_s) == e for e in pt["early"]]) if pt["early"] else z3.BoolVal(False)  # type: ignore[attr-defined]
    out = z3.substitute_funs(out, (problem.early, early))
    val = z3.simplify(out)
    assert z3.is_bv_value(val), f"term did not evaluate to a value: {str(val)[:200]}"
    return val.as_long()


@given(points(), st.data())
def test_symbolic_matches_concrete(pt: dict[str, object], data: st.DataObject) -> None:
    """Symbolic slow and fast pages, evaluated at a concrete point, equal the concrete run."""
    problem = symbolic(pt["config"], pt["ptype"], pt["order"], pt["revision"])  # type: ignore[arg-type]
    sc, inp, slow = run_concrete(pt, fast=False)
    _, _, fast = run_concrete(pt, fast=True)
    g = geometry(sc, inp)
    ncomp = int(g.ncompounds)  # type: ignore[call-overload]
    c = data.draw(st.integers(0, max(ncomp, 1)))
    t = data.draw(st.integers(0, sc.stride - 1))
    ob = problem.observations[0]
    assert ob.slow is not None and ob.fast is not None
    _, opt = compound_nr_pages(sc, inp, CBV(int(g.start) + (c << sc.order), 64))  # type: ignore[call-overload]
    slot = slot_of(sc, opt, CBV(t, 64))
    want_slow = int(slow.read(CBV(c, 64), slot).bits)  # type: ignore[call-overload]
    want_fast = int(fast.read(CBV(c, 64), slot).bits)  # type: ignore[call-overload]
    assert evaluate(problem, pt, ob.slow.bits, {"c": c, "t": t}) == want_slow
    assert evaluate(problem, pt, ob.fast.bits, {"c": c, "t": t}) == want_fast
    pb = problem.observations[-1]
    bnum = data.draw(st.integers(max(0, (pt["start_pfn"] >> 9) - 1), (pt["start_pfn"] >> 9) + 3))  # type: ignore[operator]
    assert pb.slow_cell is not None and pb.fast_cell is not None
    assert evaluate(problem, pt, pb.slow_cell, {"pageblock.b": bnum}) == int(slow.read_pb(CBV(bnum, 64)))  # type: ignore[call-overload]

"""Properties: on random concrete inputs both paths agree, and the symbolic terms, evaluated at
the same point, give exactly the concrete values (the two evaluators of one model agree)."""

from __future__ import annotations

import functools

import z3
from hypothesis import given
from hypothesis import strategies as st

from equiv.config import PRESETS
from equiv.engine.bv import CBV
from equiv.loops import Ctx
from equiv.memmap import MemoryType, Scenario, concrete_inputs, geometry, vmemmap_namer
from equiv.page_model import Layout
from equiv.slow_path import memmap_init_zone_device
from equiv.template_path import REVISIONS, fast_path
from equiv.zone_device.obligations import CellProblem, build_cell

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
    """Every struct page of the range, two compounds past it, every struct page either
    path wrote (wherever it is), and the bitmap are equal."""
    sc, inp, slow = run_concrete(pt, fast=False)
    _, _, fast = run_concrete(pt, fast=True)
    g = geometry(sc, inp)
    for c in range(int(g.ncompounds) + 2):  # type: ignore[call-overload]
        for t in range(sc.stride):
            k = (CBV(c, 64), CBV(t, 64))
            assert int(slow.read(*k).bits) == int(fast.read(*k).bits), (c, t)  # type: ignore[call-overload]
    for n in set(slow.pages) | set(fast.pages):  # type: ignore[attr-defined]
        assert int(slow.load(CBV(n, 128)).bits) == int(fast.load(CBV(n, 128)).bits), n  # type: ignore[call-overload]
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
    want_slow = int(slow.read(CBV(c, 64), CBV(t, 64)).bits)  # type: ignore[call-overload]
    want_fast = int(fast.read(CBV(c, 64), CBV(t, 64)).bits)  # type: ignore[call-overload]
    assert evaluate(problem, pt, ob.slow.bits, {"c": c, "t": t}) == want_slow
    assert evaluate(problem, pt, ob.fast.bits, {"c": c, "t": t}) == want_fast
    pb = problem.observations[-1]
    bnum = data.draw(st.integers(max(0, (pt["start_pfn"] >> 9) - 1), (pt["start_pfn"] >> 9) + 3))  # type: ignore[operator]
    assert pb.slow_cell is not None and pb.fast_cell is not None
    assert evaluate(problem, pt, pb.slow_cell, {"pageblock.b": bnum}) == int(slow.read_pb(CBV(bnum, 64)))  # type: ignore[call-overload]


# ---- one name per struct page (equiv.page_model.Memory's invariant) ------------------------

M64 = (1 << 64) - 1


@st.composite
def geometries(draw: st.DrawFn) -> dict[str, object]:
    """Random geometries with deduplicated compounds likely: 64-byte struct pages (P = 64)
    at orders 7..10, early sections and altmaps sometimes."""
    order = draw(st.integers(0, 10))
    stride = 1 << order
    ncomp = draw(st.integers(1, 3))
    altmap = draw(st.one_of(st.none(), st.tuples(st.integers(0, 3), st.integers(0, 3))))
    return {"order": order, "start_pfn": draw(st.integers(0, 1 << 12)) * stride,
            "nr_pages": ncomp * stride, "altmap": altmap,
            "early": frozenset(draw(st.sets(st.integers(0, 8), max_size=2))),
            "config": draw(st.sampled_from(["x86_64-default", "arm64-4k", "x86_64-kmsan"]))}


def kernel_storage(sc: Scenario, g_start: int, ncomp: int, dedup_head: object, pfn: int,
                   vmemmap_base: int) -> int:
    """Where the bytes of ``pfn_to_page(pfn)`` are, computed the kernel's way: the struct
    page's vmemmap address, and for a compound whose vmemmap is deduplicated every vmemmap
    page past the first two mapped onto the second (Documentation/mm/vmemmap_dedup.rst)."""
    size, page = sc.layout.size, sc.layout.config.page_size
    addr = (vmemmap_base + pfn * size) & M64
    rel = (pfn - g_start) & M64
    if rel >= ncomp << sc.order:
        return addr  # not a compound of this range: its own memmap
    head = g_start + ((rel >> sc.order) << sc.order)
    v0 = vmemmap_base + head * size
    if dedup_head(head) and (addr - v0) // page >= 2:  # type: ignore[operator]
        return v0 + page + (addr - v0) % page
    return addr


@given(geometries())
def test_one_name_per_struct_page(pt: dict[str, object]) -> None:
    """For every (compound, tail) a path can form - inside its compound, past its end,
    before its start, in the compounds around the range - the model's storage key, as an
    address ``vmemmap_base + (first pfn + key) * sizeof(struct page)``, is where the kernel's
    ``pfn_to_page()`` store lands after the vmemmap deduplication (the key ``(c', s')``
    read as pfn ``first + (c' << order) + s'``); and the z3 namer gives the same key as
    the concrete one."""
    L = Layout.from_config(PRESETS[pt["config"]])  # type: ignore[index]
    sc = Scenario(L, MemoryType.FS_DAX, pt["order"])  # type: ignore[arg-type]
    inp = concrete_inputs(L, start_pfn=pt["start_pfn"], nr_pages=pt["nr_pages"],  # type: ignore[arg-type]
                          altmap=pt["altmap"], early=pt["early"])  # type: ignore[arg-type]
    g = geometry(sc, inp)
    first, ncomp = int(g.start), int(g.ncompounds)  # type: ignore[call-overload]
    base = int(inp.vmemmap_base)  # type: ignore[call-overload]
    shift = L.config.pfn_section_shift

    def dedup(head: int) -> bool:
        return (sc.can_optimize_static and pt["altmap"] is None
                and (head >> shift) not in pt["early"])  # type: ignore[operator]

    name = vmemmap_namer(sc, inp)
    p = sc.per_vmemmap_page
    stride = sc.stride
    ts = sorted({0, 1, 2, 3, p - 1, p, 2 * p - 1, 2 * p, 2 * p + 1, 3 * p + 5, stride - 1,
                 stride, stride + 1, 2 * stride + 2 * p + 3, -1, -stride, -stride - 1})
    for c in (-1, 0, 1, ncomp - 1, ncomp, ncomp + 1):
        for t in ts:
            pfn = (first + c * stride + t) & M64
            key = int(name(CBV(c & M64, 64), CBV(t & M64, 64)))  # type: ignore[call-overload]
            assert key & M64 < stride
            got = (base + ((first + ((key >> 64) << sc.order) + (key & M64)) & M64) * L.size) & M64
            assert got == kernel_storage(sc, first, ncomp, dedup, pfn, base), (c, t)
            inp_z = _z3_inputs(L, pt)
            zkey = z3.simplify(vmemmap_namer(sc, inp_z)(z3.BitVecVal(c & M64, 64), z3.BitVecVal(t & M64, 64)))
            assert z3.is_bv_value(zkey) and zkey.as_long() == key, (c, t)


def _z3_inputs(L: Layout, pt: dict[str, object]):  # type: ignore[no-untyped-def]
    """The concrete point of ``pt`` as z3 numerals (so the symbolic namer folds to a value)."""
    from attrs import evolve

    inp = concrete_inputs(L, start_pfn=pt["start_pfn"], nr_pages=pt["nr_pages"],  # type: ignore[arg-type]
                          altmap=pt["altmap"], early=pt["early"])  # type: ignore[arg-type]
    vals = {k: z3.BitVecVal(int(getattr(inp, k)), 64) for k in  # type: ignore[call-overload]
            ("start_pfn", "nr_pages", "altmap_reserve", "altmap_free")}
    early = pt["early"]
    return evolve(inp, **vals, altmap_valid=z3.BoolVal(pt["altmap"] is not None),
                  early_section=lambda nr: z3.BoolVal(z3.simplify(nr).as_long() in early))  # type: ignore[operator]


@given(st.lists(st.sampled_from([8, 16, 32, 64]), min_size=1, max_size=4),
       st.data())
def test_extract_of_a_concatenation_is_z3s_extract(widths: list[int], data: st.DataObject) -> None:
    """``equiv.engine.bv.extract`` takes the bits of a concatenation from the part that
    holds them (a smaller term, or the part itself): the same value as z3's ``Extract``
    of the whole, for any parts (variables and numerals, nested) and any bit range."""
    from equiv.engine import bv

    parts: list[z3.BitVecRef] = []
    for i, w in enumerate(widths):
        if data.draw(st.booleans()):
            parts.append(z3.BitVecVal(data.draw(st.integers(0, (1 << w) - 1)), w))
        else:
            parts.append(z3.BitVec(f"p{i}", w))
    whole = parts[0] if len(parts) == 1 else z3.Concat(*parts)
    if data.draw(st.booleans()) and len(parts) > 2:  # nested: (a ++ b) ++ rest
        whole = z3.Concat(z3.Concat(parts[0], parts[1]), *parts[2:])
    size = whole.size()
    lo = data.draw(st.integers(0, size - 1))
    hi = data.draw(st.integers(lo, size - 1))
    got = bv.extract(whole, hi, lo)
    assert isinstance(got, z3.BitVecRef) and got.size() == hi - lo + 1
    s = z3.Solver()
    s.add(got != z3.Extract(hi, lo, whole))
    assert s.check() == z3.unsat
    for p, top in zip(parts, _tops(widths), strict=True):  # a part's own range: the part
        if (hi, lo) == (top - 1, top - p.size()) and len(parts) > 1 and whole.num_args() == len(parts):
            assert got.eq(p)


def _tops(widths: list[int]) -> list[int]:
    """The bit just above each part of a concatenation of ``widths`` (most significant
    first)."""
    out, top = [], sum(widths)
    for w in widths:
        out.append(top)
        top -= w
    return out

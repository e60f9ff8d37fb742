"""Counterexamples: read off a z3 model, replayed concretely through both paths.

A model of a refuted obligation gives concrete inputs (pfn, nid, pointers, altmap, which
sections are early, and the initial bytes of every struct page it cares about).  Before a
counterexample is reported, :func:`replay` runs both paths on those values in the concrete
domain (plain ints; loops really iterate over every page, no summaries) and compares the
observed struct page.  The difference must be exactly the one the solver predicted; if it is
not, :class:`~equiv.errors.InternalMismatch` is raised, since that would mean the model or the
loop summaries are wrong.  The concrete run also records which modelled step last wrote each
byte (provenance).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3
from attrs import frozen

from equiv.bv import CBV
from equiv.errors import InternalMismatch
from equiv.loops import Ctx
from equiv.memmap import Inputs, geometry, pfn_of, slot_of
from equiv.obligations import CellProblem, Observation
from equiv.page_model import PB_BITS, ConcreteMemory, PageState
from equiv.slow_path import compound_nr_pages, memmap_init_zone_device


@frozen
class FieldDiff:
    """One differing atom of struct page (or the bitmap cell)."""

    offset: int
    size: int
    names: tuple[str, ...]
    slow: int
    fast: int
    slow_origin: tuple[str, ...]
    fast_origin: tuple[str, ...]


@frozen
class Counterexample:
    """A replayed counterexample of one page-role obligation."""

    role: str
    inputs: dict[str, int | bool]
    index: dict[str, int]
    pfn: int | None
    early_sections: dict[int, bool]
    diffs: tuple[FieldDiff, ...]
    #: pfn of the first head, where the v11 head template is seeded (tail templates: +1)
    seed_pfn: int | None = None
    #: PFN_SECTION_SHIFT of the config, to name the sections of the pfns above
    section_shift: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "inputs": {k: (v if isinstance(v, bool) else hex(v)) for k, v in self.inputs.items()},
            "index": self.index,
            "pfn": None if self.pfn is None else hex(self.pfn),
            "early_sections": {hex(k): v for k, v in sorted(self.early_sections.items())},
            "template_seed_pfn": None if self.seed_pfn is None else hex(self.seed_pfn),
            "fields": [
                {"names": list(d.names), "offset": d.offset, "size": d.size,
                 "slow": hex(d.slow), "fast": hex(d.fast),
                 "slow_last_write": list(d.slow_origin), "fast_last_write": list(d.fast_origin)}
                for d in self.diffs
            ],
        }


class _ArrayInterp:
    """Point lookups in a model's array, decoded once (Store chains over a constant)."""

    def __init__(self, model: z3.ModelRef, arr: z3.ArrayRef) -> None:
        self.model, self.arr = model, arr
        self.entries: dict[tuple[int, ...], int] = {}
        self.default: int | None = None
        t = model.eval(arr, model_completion=True)
        while z3.is_store(t):
            idx = tuple(t.arg(i).as_long() for i in range(1, t.num_args() - 1))
            self.entries.setdefault(idx, t.arg(t.num_args() - 1).as_long())
            t = t.arg(0)
        if z3.is_const_array(t) and z3.is_bv_value(t.arg(0)):
            self.default = t.arg(0).as_long()
        elif not (z3.is_const_array(t)):
            self.entries = {}  # fall back to evaluating each point

    def __call__(self, idx: int, width: int) -> int:
        hit = self.entries.get((idx,))
        if hit is not None:
            return hit
        if self.default is not None:
            return self.default
        return self.model.eval(z3.Select(self.arr, z3.BitVecVal(idx, width)),
                               model_completion=True).as_long()


def concrete_inputs(problem: CellProblem, model: z3.ModelRef) -> tuple[Callable[[], Inputs],
                                                                         dict[str, int | bool],
                                                                         dict[int, bool]]:
    """Concrete inputs from ``model``: a factory (each path gets its own memory), the scalar
    values for the report, and the early_section answers the replay asked for."""
    inp, L = problem.inputs, problem.scenario.layout
    scalars: dict[str, int | bool] = {}
    for name in Inputs.SCALARS:
        v = model.eval(getattr(inp, name), model_completion=True)
        scalars[name] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
    pages = _ArrayInterp(model, z3.Array("mem0.pages", z3.BitVecSort(128),
                                         z3.BitVecSort(8 * L.size)))
    pbs = _ArrayInterp(model, z3.Array("mem0.pageblock", z3.BitVecSort(64), z3.BitVecSort(PB_BITS)))
    early_seen: dict[int, bool] = {}

    def early(nr: Any) -> bool:
        n = int(nr)
        if n not in early_seen:
            early_seen[n] = z3.is_true(model.eval(problem.early(z3.BitVecVal(n, 64)),
                                                  model_completion=True))
        return early_seen[n]

    unwritten = ("initial memory (never written)",) * L.size

    def initial(c: int, s: int) -> PageState:
        return PageState(bits=CBV(pages((c << 64) | s, 128), 8 * L.size), origin=unwritten,
                         events=CBV(0, 16) if L.config.tracks_events else None)

    def factory() -> Inputs:
        vals: dict[str, Any] = {k: (v if isinstance(v, bool) else
                                    CBV(v, 32 if k == "pgmap_type" else 64))
                                for k, v in scalars.items()}
        mem = ConcreteMemory(initial, lambda b: CBV(pbs(b, 64), PB_BITS))
        return Inputs(early_section=early, mem=mem, **vals)

    return factory, scalars, early_seen


def replay(problem: CellProblem, ob: Observation, model: z3.ModelRef) -> Counterexample:
    """Re-run both paths concretely on the model's values and report the differing atoms.

    Raises:
        InternalMismatch: the concrete run does not show the difference the solver found.
    """
    sc, L = problem.scenario, problem.scenario.layout
    factory, scalars, early_seen = concrete_inputs(problem, model)
    index = {k: model.eval(v, model_completion=True).as_long() for k, v in ob.indices.items()}
    slow = memmap_init_zone_device(Ctx(False), sc, factory())
    fast = problem.fast(Ctx(False), sc, factory())
    probe = factory()
    g = geometry(sc, probe)
    diffs: list[FieldDiff] = []
    if ob.slow is None:
        b = CBV(index["b"], 64)
        sv, fv = int(slow.read_pb(b)), int(fast.read_pb(b))  # type: ignore[call-overload]
        sym_s = model.eval(ob.slow_cell, model_completion=True).as_long()
        sym_f = model.eval(ob.fast_cell, model_completion=True).as_long()
        if (sv, fv) != (sym_s, sym_f) or sv == fv:
            raise InternalMismatch(
                f"replay of {ob.role.name}: concrete slow/fast {sv:#x}/{fv:#x}, "
                f"solver {sym_s:#x}/{sym_f:#x}")
        diffs.append(FieldDiff(0, 1, ("pageblock migratetype bits",), sv, fv,
                               ("pageblock_migratetype_init_range",), ("pageblock_migratetype_init_range",)))
        return Counterexample(ob.role.name, scalars, index, None, dict(early_seen), tuple(diffs))
    c, t = CBV(index["c"], 64), CBV(index["t"], 64)
    _, opt = compound_nr_pages(sc, probe, pfn_of(sc, g, c, CBV(0, 64)))
    s = slot_of(sc, opt, t)
    sp, fp = slow.read(c, s), fast.read(c, s)
    assert ob.slow is not None and ob.fast is not None
    sym_slow = model.eval(ob.slow.bits, model_completion=True).as_long()
    sym_fast = model.eval(ob.fast.bits, model_completion=True).as_long()
    if int(sp.bits) != sym_slow or int(fp.bits) != sym_fast:  # type: ignore[call-overload]
        raise InternalMismatch(
            f"replay of {ob.role.name} (c={index['c']}, t={index['t']}) does not reproduce: "
            f"concrete and symbolic evaluation disagree on the "
            f"{'slow' if int(sp.bits) != sym_slow else 'fast'} path")  # type: ignore[call-overload]
    for atom in L.atoms:
        lo, hi = atom.offset, atom.offset + atom.size
        sv = (int(sp.bits) >> (8 * lo)) & ((1 << (8 * atom.size)) - 1)  # type: ignore[call-overload]
        fv = (int(fp.bits) >> (8 * lo)) & ((1 << (8 * atom.size)) - 1)  # type: ignore[call-overload]
        if sv != fv:
            assert sp.origin is not None and fp.origin is not None
            diffs.append(FieldDiff(lo, atom.size, tuple(atom.names_for(ob.role.page_index)), sv, fv,
                                   tuple(dict.fromkeys(sp.origin[lo:hi])),
                                   tuple(dict.fromkeys(fp.origin[lo:hi]))))
    if sp.events is not None and fp.events is not None and ob.slow.events is not None \
            and ob.fast.events is not None:
        se, fe = int(sp.events), int(fp.events)  # type: ignore[call-overload]
        sym_se = model.eval(ob.slow.events, model_completion=True).as_long()
        sym_fe = model.eval(ob.fast.events, model_completion=True).as_long()
        if (se, fe) != (sym_se, sym_fe):
            raise InternalMismatch(f"replay of {ob.role.name}: page_ref_set event counts "
                                   f"{se}/{fe} concretely, {sym_se}/{sym_fe} symbolically")
        if se != fe:
            diffs.append(FieldDiff(L.size, 0, ("page_ref_set tracepoint events (observable, not "
                                               "memory)",), se, fe,
                                   ("set_page_count/init_page_count: __page_ref_set",),
                                   ("memcpy of a template emits no event",)))
    if not diffs:
        raise InternalMismatch(f"replay of {ob.role.name}: the solver's difference vanished")
    pfn = int(pfn_of(sc, g, c, t))  # type: ignore[call-overload]
    return Counterexample(ob.role.name, scalars, index, pfn, dict(early_seen), tuple(diffs),
                          seed_pfn=int(g.start),  # type: ignore[call-overload]
                          section_shift=L.config.pfn_section_shift)


__all__ = ["Counterexample", "FieldDiff", "concrete_inputs", "replay"]

"""``--explain FIELD``: the provenance of one struct page field in every page role, proved or
not.

For one cell (config, revision, pgmap type, order) and each page role, both paths are run
concretely on one input and the chain of modelled kernel steps that wrote the field's bytes
is read off each side (:attr:`equiv.page_model.PageState.origin`).  The input is the
counterexample where the role is refuted, otherwise a small input the solver gives for the
assumptions and the role (steered like counterexamples, :func:`equiv.zone_device.minimise.prefer_small`).
Returns data; :func:`equiv.zone_device.present.render_explain` formats it.
"""

from __future__ import annotations

import z3
from attrs import frozen

from equiv.engine.errors import InputError
from equiv.engine.results import CellResult
from equiv.engine.verdict import Verdict
from equiv.page_model import Layout, PageState, View
from equiv.zone_device.cell import CellSpec, cell_paths
from equiv.zone_device.counterexample import (
    FieldDiff,
    concrete_inputs,
    counterexample_of,
    recorded_factory,
    run_concrete,
)
from equiv.zone_device.minimise import prefer_small
from equiv.zone_device.obligations import build_cell
from equiv.zone_device.solver import solver_for


def field_views(L: Layout) -> dict[str, View]:
    """Every name ``--explain`` accepts: struct page members (union views included) and the
    struct folio fields that overlay tail pages (``folio.NAME``)."""
    out: dict[str, View] = {}
    for v in L.views:
        out[v.name if v.page is None else f"folio.{v.name}"] = v
    return out


def lookup_field(L: Layout, name: str) -> View:
    """The view called ``name``, or an :class:`InputError` listing every valid name."""
    views = field_views(L)
    if name not in views:
        raise InputError(f"unknown field {name!r} for --explain; valid: {', '.join(views)}")
    return views[name]


@frozen
class RoleTrace:
    """The field in one page role: where the page is and both sides with provenance."""

    role: str
    verdict: Verdict
    #: "counterexample" (the role is refuted on this input) or "witness"
    source: str
    index: dict[str, int]
    pfn: int | None
    inputs: dict[str, int | bool]
    field: FieldDiff  # slow/fast value and chains of the field's bytes (equal or not)


@frozen
class Explanation:
    """``--explain`` for one cell."""

    field: str
    config: str
    revision: str
    ptype: str
    order: int
    rows: tuple[RoleTrace, ...]


def _trace(L: Layout, view: View, role_index: int | None, slow: PageState,
           fast: PageState) -> FieldDiff:
    lo, hi = view.offset, view.offset + view.size
    mask = (1 << (8 * view.size)) - 1
    names = [view.name if view.page is None else f"folio.{view.name}"]
    names += [n for a in L.atoms if lo <= a.offset < hi for n in a.names_for(role_index)
              if n not in names]
    assert slow.origin is not None and fast.origin is not None
    return FieldDiff(view.offset, view.size, tuple(names),
                     (int(slow.bits) >> (8 * lo)) & mask,
                     (int(fast.bits) >> (8 * lo)) & mask,
                     tuple(dict.fromkeys(slow.origin[lo:hi])),
                     tuple(dict.fromkeys(fast.origin[lo:hi])))


def explain(spec: CellSpec, field: str, result: CellResult) -> Explanation:
    """Trace ``field`` through both paths in every struct page role of ``spec``'s cell;
    ``result`` is the cell's proof result (verdicts, counterexamples)."""
    sc, rev, fast = cell_paths(spec)
    L = sc.layout
    view = lookup_field(L, field)
    problem = build_cell(sc, rev, fast)
    verdicts = {ob.role: ob for ob in result.obligations if ob.kind == "page"}
    lemmas_proved = all(ob.verdict is Verdict.PROVED for ob in result.obligations
                        if ob.kind == "lemma")
    rows: list[RoleTrace] = []
    for ob in problem.observations:
        if ob.slow is None:  # the pageblock bitmap has no struct page fields
            continue
        res = verdicts.get(ob.role.name)
        cx = counterexample_of(res) if res is not None else None
        if cx is not None:
            factory = recorded_factory(L, sc.order, cx)
            index, inputs, source = cx.index, cx.inputs, "counterexample"
            lazy = not cx.every_iteration  # as it was recorded
        else:
            s = solver_for(problem, 10_000)
            s.add(ob.constraint)
            if s.check() != z3.sat:
                continue  # vacuous role: nothing to trace (its verdict says so)
            prefer_small(s, problem, ob)
            model = s.model()
            factory, inputs, _, _ = concrete_inputs(problem, model)
            index = {k: model.eval(v, model_completion=True).as_long() for k, v in ob.indices.items()}
            source = "witness"
            lazy = lemmas_proved  # see equiv.zone_device.counterexample's docstring
        run = run_concrete(sc, fast, factory, index, lazy=lazy)
        assert isinstance(run.slow, PageState) and isinstance(run.fast, PageState)
        rows.append(RoleTrace(ob.role.name, res.verdict if res else Verdict.UNKNOWN, source,
                              index, run.pfn, inputs,
                              _trace(L, view, ob.role.page_index, run.slow, run.fast)))
    return Explanation(field, L.config.name, rev.name, sc.ptype.kname if sc.ptype else "ALL",
                       sc.order, tuple(rows))

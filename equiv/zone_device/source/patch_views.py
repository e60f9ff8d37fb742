"""``--format html`` and ``--format markdown`` of a ``--linux BASE --patch ...`` /
``--against`` run: the model's reports (:mod:`equiv.report.html`: the matrix, one card per
finding, the struct page diagram, the hexdump, the compound and pageblock strips, the
provenance of every differing field; :mod:`equiv.report.markdown`: the matrix, the
assumptions and a collapsible block per finding, for a pull-request comment), with the base
tree in place of the slow path and the patched tree in place of the fast one.

Nothing here decides anything: a :class:`~equiv.zone_device.source.patch_present.PatchReport`
is read into the reports' data (:class:`~equiv.engine.results.RunResult`: the series' run
first, then with ``--per-patch`` one run per patch that changes a file equiv reads) and the
report modules draw it.  The struct page's boxes are the names of the tree's layout the
proof used (recorded with each difference), the strips those of the model's reports
(:func:`equiv.zone_device.present.compound_strip`,
:func:`~equiv.zone_device.present.pageblock_strip`); each assumption is given whole, with its
source and the lines that rely on it and guarantee it
(:func:`~equiv.zone_device.source.patch_present.junit_assumption`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from attrs import frozen

from equiv.engine.picture import Change, ObjectBytes, Picture
from equiv.engine.results import (
    CellResult,
    ObligationResult,
    RunResult,
    SubjectConfig,
)
from equiv.engine.results import Counterexample as AnyCounterexample
from equiv.engine.verdict import Verdict
from equiv.report.html import render_html
from equiv.report.markdown import render_markdown_many
from equiv.zone_device.counterexample import Counterexample, InitialMemory
from equiv.zone_device.present import SUBJECT, ZoneDevicePresenter, compound_strip, pageblock_strip
from equiv.zone_device.source.assumed import Located
from equiv.zone_device.source.cinterp import TRUSTED
from equiv.zone_device.source.common import RoleResult
from equiv.zone_device.source.fidelity import FidelityRun
from equiv.zone_device.source.patch_present import (
    PatchReport,
    inputs_text,
    junit_assumption,
    observed_object,
    render_patch,
    repro,
    role_json,
    role_lines,
    transitivity_note,
    type_option,
)
from equiv.zone_device.source.patchproof import PatchRun

#: pageblock_order of every preset the C path runs (4K pages: order 9)
PAGEBLOCK_ORDER = 9


@frozen
class PatchFinding:
    """A replayed difference of a ``--patch`` run as the reports' counterexample."""

    role: RoleResult

    def to_json(self) -> dict[str, Any]:
        return role_json(self.role, times=False)

    def to_cache(self) -> dict[str, Any]:
        return self.to_json()


def _model_cx(r: RoleResult) -> Counterexample:
    """The role's difference in the shape the model's strips read (inputs, index, pfn)."""
    return Counterexample(role=r.name.removesuffix("_equal"), inputs=dict(r.inputs),
                          index=dict(r.index), pfn=r.pfn, early_sections={}, diffs=r.diffs,
                          memory=InitialMemory((), None, (), None), irrelevant=r.irrelevant)


def _where(r: RoleResult) -> str:
    idx = dict(r.index)
    if r.pfn is None:
        return f"pageblock bitmap cell {idx.get('b', 0):#x}"
    t = idx.get("t", 0)
    return f"compound {idx.get('c', 0)}, {'head' if t == 0 else f'tail {t}'} (pfn {r.pfn:#x})"


class SourcePresenter(ZoneDevicePresenter):
    """The zone-device presenter with a source-derived proof's words for its two sides
    (``--patch``: the base and the patched tree; ``--linux``: the hand model and the tree),
    its own re-run command per cell and pictures from its replayed differences."""

    def __init__(self, sides: tuple[str, str], sides_what: str,
                 commands: dict[tuple[str, int], str]) -> None:
        self.sides, self.sides_what, self.commands = sides, sides_what, commands

    def title(self, run: RunResult) -> str:
        return run.title

    def counterexample_lines(self, cx: AnyCounterexample, width: int) -> list[str]:
        assert isinstance(cx, PatchFinding)
        return role_lines(cx.role, sides=self.sides)

    def one_line(self, cx: AnyCounterexample) -> str:
        assert isinstance(cx, PatchFinding)
        return f"{_where(cx.role)}: {inputs_text(cx.role)}"

    def reproduce_command(self, run: RunResult, cell: CellResult,
                          ob: ObligationResult) -> str | None:
        return self.commands.get((cell.ptype, cell.order))

    def picture(self, run: RunResult, cell: CellResult, ob: ObligationResult) -> Picture | None:
        cx = ob.counterexample
        if not isinstance(cx, PatchFinding) or not cx.role.diffs:
            return None
        r = cx.role
        mcx = _model_cx(r)
        strips = ((pageblock_strip(mcx, PAGEBLOCK_ORDER),) if r.pfn is None else
                  (compound_strip(mcx, cell.order), pageblock_strip(mcx, PAGEBLOCK_ORDER)))
        changes = tuple(Change(d.names, d.offset, d.size, f"{d.slow:#0{2 + 2 * max(1, d.size)}x}",
                               f"{d.fast:#0{2 + 2 * max(1, d.size)}x}", d.slow_provenance,
                               d.fast_provenance) for d in r.diffs)
        obj = observed_object(r)
        if obj is not None:
            obj = ObjectBytes(_where(r), obj.initial, obj.slow, obj.fast, r.boxes,
                              tuple(d.names[0] for d in r.diffs if d.size))
        a, b = self.sides
        summary = f"{_where(r)}: " + "; ".join(
            f"{d.names[0]}: {a} {d.slow:#x}, {b} {d.fast:#x}" for d in r.diffs)
        return Picture(summary, obj, strips, changes)


def _reason(r: RoleResult) -> str:
    """Why an obligation is not proved, with a failed loop lemma's counterexample."""
    if r.lemma_cex is None:
        return r.reason
    return (f"{r.reason}; counterexample (the solver's model, not replayed): "
            f"{r.lemma_cex.text()}")


class SourceCell(Protocol):
    """A cell of either source-derived proof (:class:`PatchCell`, :class:`FidelityCell`)."""

    @property
    def ptype(self) -> str: ...
    @property
    def order(self) -> int: ...
    @property
    def verdict(self) -> Verdict: ...
    @property
    def seconds(self) -> float: ...
    @property
    def roles(self) -> tuple[RoleResult, ...]: ...
    @property
    def trusted(self) -> tuple[str, ...]: ...


def _cells(cells: Sequence[SourceCell], config: str, revision: str,
           hypothetical: bool) -> tuple[CellResult, ...]:
    out = []
    for c in cells:
        obs = tuple(ObligationResult(
            name=r.name, kind="page" if r.name.endswith("_equal") else "cell",
            role=r.name.removesuffix("_equal"), verdict=r.verdict, seconds=r.seconds,
            counterexample=PatchFinding(r) if r.diffs else None, reason=_reason(r))
            for r in c.roles)
        out.append(CellResult(config=config, revision=revision, ptype=c.ptype, order=c.order,
                              verdict=c.verdict, seconds=c.seconds, obligations=obs,
                              assumptions=(), choices=(), hypothetical=hypothetical,
                              all_types=c.ptype == "ALL"))
    return tuple(out)


@frozen
class RunHead:
    """What a source-derived run's report says about it beside its cells."""

    config: str
    hypothetical: bool
    revision: str
    description: str
    layout_note: str
    title: str
    kernel_base: str


def _run(cells: Sequence[SourceCell], head: RunHead, seconds: float,
         assumptions: Sequence[Located], presenter: SourcePresenter,
         notes: Sequence[str] = ()) -> RunResult:
    cfg = SubjectConfig(name=head.config, hypothetical=head.hypothetical,
                        description=head.description)
    trusted = dict.fromkeys(t for c in cells for t in c.trusted)
    return RunResult(
        subject=SUBJECT, presenter=presenter, config=cfg, revision=head.revision, mutant=None,
        cells=_cells(cells, head.config, head.revision, head.hypothetical),
        wall_seconds=seconds, jobs=1, layout_note=head.layout_note,
        choices=(*notes, *(f"trusted, not interpreted: {t}: {TRUSTED[t].model}"
                           for t in trusted)),
        assumptions=tuple(junit_assumption(a) for a in assumptions),
        title=head.title, column_label="pgmap type", row_label="order",
        column_option="--types", row_option="--orders", config_arg=f"--config {head.config}",
        solver="z3", kernel_base=head.kernel_base)


def _patch_run(rep: PatchReport, run: PatchRun, title: str) -> RunResult:
    commands = {(c.ptype, c.order): repro(rep, c) for c in run.cells}
    head = RunHead(rep.config, rep.hypothetical, run.patched,
                   f"trees: {run.base} and {run.patched}",
                   f"struct page as clang lays it out for {rep.config} in the base tree", title,
                   rep.base)
    by = transitivity_note(run)
    return _run(run.cells, head, run.seconds, run.assumptions,
                SourcePresenter(("base", "patched"), "the base and the patched tree", commands),
                [f"cells {by}"] if by else [])


def patch_runs(rep: PatchReport) -> list[RunResult]:
    """The report as the reports' runs: the series against the base, then each patch of
    ``--per-patch`` that changes a file equiv reads against the tree before it."""
    what = (f"--against {rep.against}" if rep.against is not None
            else rep.patched_label())
    runs = [_patch_run(rep, rep.run, f"memmap_init_zone_device(): {rep.base} (Linux "
                       f"{rep.base_version}) vs {what}")]
    for st in rep.steps:
        if st.run is not None:
            runs.append(_patch_run(rep, st.run, f"patch {st.number}: {st.patch.label}, against "
                                   "the tree before it"))
    return runs


def linux_run(run: FidelityRun, command: str, notes: Sequence[str] = ()) -> RunResult:
    """A ``--linux`` run (the tree against the hand model) as the reports' run; ``command``
    re-runs it without ``--types``/``--orders``; ``notes``: the drift and layout findings."""
    commands = {(c.ptype, c.order): f"{command} --types {type_option(c.ptype)} --orders {c.order}"
                for c in run.cells}
    head = RunHead(run.config, False, f"tree {run.tree}",
                   f"the tree {run.tree} (Linux {run.version}) against the hand-written "
                   f"{run.model}",
                   f"struct page as clang lays it out for {run.config} in the tree",
                   f"memmap_init_zone_device(): the hand-written {run.model} vs the tree "
                   f"{run.tree} (Linux {run.version})", run.tree)
    return _run(run.cells, head, run.seconds, run.assumptions,
                SourcePresenter(("model", "tree"), "the hand model and the tree", commands),
                notes)


def render_patch_html(rep: PatchReport, *, times: bool = True) -> str:
    """One self-contained HTML page for a ``--patch``/``--against`` report."""
    return render_html(patch_runs(rep), times=times)


def render(fmt: str, rep: PatchReport, *, times: bool = True, exit_code: int | None = None) -> str:
    """The report in any of :data:`~equiv.zone_device.source.patch_present.PATCH_FORMATS`:
    html and markdown here, the others by :func:`~equiv.zone_device.source.patch_present.render_patch`."""
    if fmt == "html":
        return render_patch_html(rep, times=times)
    if fmt == "markdown":
        return render_markdown_many(patch_runs(rep), times=times)
    return render_patch(fmt, rep, times=times, exit_code=exit_code)


__all__ = ["PatchFinding", "SourcePresenter", "linux_run", "patch_runs", "render",
           "render_patch_html"]

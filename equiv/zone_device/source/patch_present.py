"""The report of ``--linux BASE --patch FILE...`` / ``--linux BASE --against PATCHED``: a
patch proved from its C text (:mod:`equiv.zone_device.source.patchproof`), as text, JSON, SARIF 2.1.0 or
JUnit XML; and the ``--list`` section on what the C interpreter reads.

Everything here formats a :class:`PatchReport` (data built by :mod:`equiv.zone_device.source.cli`); no
proof runs here.

* **text** (:func:`render_patch_text`): a header (the base tree and its version, the patches
  or the ``--against`` tree, the configuration, the orders and types), the definitions the
  patches touch with whether the interpreter ran them (a touched function it ran on neither
  tree is *outside the modelled call graph*: listed, never a verdict by itself), one line per
  cell, and for every role not proved its page, inputs, differing fields (all kernel names,
  byte offset, base and patched value) and the provenance of each side (file:line of the C
  statements in that side's tree), a command re-running the cell; then what the proof rests
  on (the loops summarised, the loop-summary lemmas, the assumptions about the inputs with
  their sources, :func:`equiv.zone_device.source.present.assumption_lines`, the trusted
  helpers and their models) and the final ``verdict:`` line.
* **JSON** (:func:`patch_json`): the same content, tagged ``"schema": "equiv.patch/1"`` and
  described by ``schemas/equiv.patch-1.schema.json``.
* **SARIF** (:func:`patch_sarif`): one result per role not proved, rule
  ``equiv/patch/<role>``, level ``error`` for REFUTED (``warning`` for UNKNOWN/VACUOUS, as the
  model's SARIF does), located in the patched tree (``uriBaseId`` ``PATCHED``) at the last
  step of the patched side's provenance of the first differing field that side wrote, the
  other steps (and the base side's, ``uriBaseId`` ``BASE``) as related locations.  A
  difference whose bytes the patched tree never wrote (initial memory kept) has no patched
  statement to point at: it is located at the first touched definition the patched tree ran.
  The run's assumptions are in ``runs[0].properties.assumptions``, as in JSON.
* **JUnit** (:func:`patch_junit`): one test case per role of each cell; each assumption a
  suite property ``assumption:<id>`` (:func:`junit_assumption`).

With ``--per-patch`` (:class:`PatchStep`), every format also gives each patch of the series
against the tree before it: "NFC: proved equal" or its verdict with the cells not proved, and
names the first patch that makes a difference (text: a section after the series' cells;
JSON: ``per_patch``, ``first_difference``, ``series_verdict``; SARIF: the steps' results,
marked with their patch, and ``properties.per_patch``; JUnit: a test suite per patch).  The
verdict and the exit code are then the worst of the series' and every patch's.

``times=False`` drops the volatile fields (timings, the tool version).
"""

from __future__ import annotations

import json
import re
import textwrap
import xml.dom.minidom
from typing import Any

from attrs import frozen
from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

from equiv.engine import solvers
from equiv.engine.cache import TOOL_VERSION
from equiv.engine.picture import ObjectBytes
from equiv.engine.verdict import Verdict, worst
from equiv.linux.patch import Patch, Touched
from equiv.memmap import MemoryType
from equiv.report.text import WIDTH, command_lines, hexdump_lines
from equiv.zone_device.counterexample import FieldDiff
from equiv.zone_device.source.assumed import Located
from equiv.zone_device.source.cinterp import TRUSTED
from equiv.zone_device.source.common import RoleResult
from equiv.zone_device.source.csummary import LemmaCex
from equiv.zone_device.source.patchproof import PatchCell, PatchRun
from equiv.zone_device.source.present import assumption_lines
from equiv.zone_device.source.standins import checked_versions

#: JSON schema tag of the report (``schemas/equiv.patch-1.schema.json``).
PATCH_SCHEMA = "equiv.patch/1"
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                    "sarif-schema-2.1.0.json")

#: Status of a touched definition (:class:`TouchedRow`), JSON value -> text.
STATUSES = {
    "interpreted": "interpreted",
    "outside": "outside the modelled call graph",
    "type-read": "type read from the text",
    "type-unread": "type not read",
    "file-scope": "file scope, not attributed to a definition",
}
#: Its column in the text report's list of touched definitions.
TAGS = {"interpreted": "run", "outside": "OUTSIDE", "type-read": "read",
        "type-unread": "unread", "file-scope": "scope"}


def lemma_solvers() -> str:
    """Which solvers decided the loop lemmas' conjuncts (:func:`equiv.engine.solvers.first_unsat`)."""
    if solvers.FIRST_SOLVER is None:
        return f"each conjunct by {solvers.version('z3')}"
    return (f"each conjunct by {solvers.version(solvers.FIRST_SOLVER)} first, then by "
            f"{solvers.version('z3')} unless that proved it")


#: Page roles: what each ``<role>_equal`` obligation observes.
ROLE_ABOUT = {
    "head": "the head of every compound of the range",
    "tail1": "tail page 1 of every compound (the folio's page[1] overlay)",
    "tail2": "tail page 2 of every compound (page[2], _deferred_list)",
    "tail": "every tail page t >= 3 of every compound",
    "outside": "every struct page outside the range's compounds (neither tree may change it)",
    "pageblock": "every pageblock migratetype bitmap cell",
    "loop_summary_lemmas": "the loop-summary lemmas of both trees (frame-write, frame-read, "
                           "carry-step, no-wrap)",
    "interpret": "each tree's memmap_init_zone_device() is interpreted from its text",
    "assumptions_satisfiable": "the assumptions can hold together",
}

_STEP = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):\s?(?P<stmt>.*)$")


@frozen
class TouchedRow:
    """A definition the patches touch and what the proof did with it."""

    touched: Touched
    status: str  # a key of STATUSES


@frozen(kw_only=True)
class PatchStep:
    """One patch of a series (``--per-patch``) against the tree before it: the definitions
    it touches and the proof, or None when it changes no file equiv reads (then the two
    trees' text is the same and they are equal without a query)."""

    number: int  #: 1-based, in the order applied
    patch: Patch
    touched: tuple[TouchedRow, ...]
    run: PatchRun | None
    #: the lines it changes: (file, line ranges of the tree after it)
    changed: tuple[tuple[str, tuple[range, ...]], ...] = ()

    @property
    def verdict(self) -> Verdict:
        return Verdict.PROVED if self.run is None else self.run.verdict


@frozen
class PatchReport:
    """Everything a ``--patch`` / ``--against`` run reports."""

    base: str  # the --linux tree as given
    base_version: str
    #: the patches applied, in order (``--patch``); empty with ``--against``
    patches: tuple[Patch, ...]
    against: str | None  # the --against tree as given
    patched_version: str
    config: str
    hypothetical: bool
    orders: tuple[int, ...]
    types: str  # "all" (one cell, pgmap->type symbolic) or the comma list of names
    touched: tuple[TouchedRow, ...]
    #: changed files equiv does not read (not in equiv.zone_device.source.files.FILES)
    files_outside: tuple[str, ...]
    #: the files compared (--against compares only these)
    files_read: tuple[str, ...]
    run: PatchRun
    #: the command that re-runs this comparison, without --types / --orders
    command: str
    #: with ``--per-patch``: each patch against the tree before it
    steps: tuple[PatchStep, ...] = ()
    #: the lines the patches (or the other tree) change: (file, line ranges of the patched
    #: tree), where a difference is located when its patched chain passes through one
    changed: tuple[tuple[str, tuple[range, ...]], ...] = ()
    #: how the configuration's headers were made (:func:`~equiv.zone_device.source.files.prepared_notes`)
    kbuild: tuple[str, ...] = ()
    #: the subjects of the cover letters among the mails (``[PATCH 0/N]``), not patches
    covers: tuple[str, ...] = ()

    @property
    def verdict(self) -> Verdict:
        """The series' verdict against BASE, and with ``--per-patch`` each patch's: a patch
        that makes a difference is a finding even if a later one undoes it."""
        return worst([self.run.verdict, *(st.verdict for st in self.steps)])

    @property
    def first_difference(self) -> PatchStep | None:
        """The first patch (``--per-patch``) not proved equal to the tree before it."""
        return next((st for st in self.steps if st.verdict is not Verdict.PROVED), None)

    @property
    def outside(self) -> tuple[TouchedRow, ...]:
        """The touched functions and macros the interpreter ran on neither tree."""
        return tuple(r for r in self.touched if r.status == "outside")

    def patched_label(self) -> str:
        return (f"--against {self.against}" if self.against is not None
                else f"{len(self.patches)} patch{'es' * (len(self.patches) != 1)}")


# ---- helpers ----------------------------------------------------------------------------


def rule_name(role: str) -> str:
    """``head_equal`` -> ``head``; ``interpret_base`` -> ``interpret``."""
    if role.endswith("_equal"):
        return role[: -len("_equal")]
    return "interpret" if role.startswith("interpret_") else role


def type_option(ptype: str) -> str:
    """A cell's type as ``--types`` takes it."""
    if ptype == "ALL":
        return "all"
    return next((t.name for t in MemoryType if t.kname == ptype), ptype)


def repro(rep: PatchReport, cell: PatchCell) -> str:
    """The command re-running one cell."""
    return f"{rep.command} --types {type_option(cell.ptype)} --orders {cell.order}"


def parse_step(step: str) -> tuple[str, int, str] | None:
    """``"mm/mm_init.c:1065: memcpy(...)"`` -> ``("mm/mm_init.c", 1065, "memcpy(...)")``;
    None for a step that names no file and line."""
    m = _STEP.match(step)
    return (m["file"], int(m["line"]), m["stmt"]) if m else None


def _orders_text(orders: tuple[int, ...]) -> str:
    parts: list[str] = []
    i = 0
    while i < len(orders):
        j = i
        while j + 1 < len(orders) and orders[j + 1] == orders[j] + 1:
            j += 1
        parts.append(str(orders[i]) if i == j else f"{orders[i]}-{orders[j]}")
        i = j + 1
    return ",".join(parts)


def _val(v: int | bool) -> str:
    return str(v).lower() if isinstance(v, bool) else hex(v)


def _input(name: str, v: int | bool) -> str:
    """An input of a counterexample in the text report: ``pgmap_type`` by its enum name."""
    if name == "pgmap_type" and not isinstance(v, bool):
        kname = {t.value: t.kname for t in MemoryType}.get(v)
        if kname is not None:
            return kname
    return _val(v)


def shown_inputs(r: RoleResult) -> list[tuple[str, int | bool]]:
    """The inputs of a replayed difference a report shows: all but the altmap's counts
    when there is no altmap (the slow path does not read them then)."""
    vals = dict(r.inputs)
    return [(k, v) for k, v in r.inputs
            if not (k in ("altmap_reserve", "altmap_free") and vals.get("altmap_valid") is False)]


def inputs_text(r: RoleResult) -> str:
    """``inputs: k=v, ...`` of a replayed difference, an input marked ``*`` when its value
    does not matter (:func:`~equiv.zone_device.source.common.irrelevant_inputs`)."""
    marked = ", ".join(f"{k}={_input(k, v)}{'*' * (k in r.irrelevant)}"
                       for k, v in shown_inputs(r))
    note = " (*: any other value gives the same difference)" if r.irrelevant else ""
    return f"inputs{note}: {marked}"


def observed_object(r: RoleResult) -> ObjectBytes | None:
    """The struct page (or bitmap cell) a replayed difference observes, as the reports'
    pictures take it: initial (the arbitrary memory, the values the solver picked), base
    and patched (in the slow and fast slots of :class:`ObjectBytes`)."""
    if r.observed is None:
        return None
    return ObjectBytes(_page(r), r.observed.initial, r.observed.slow, r.observed.fast, ())


#: the three columns of a ``--patch`` hexdump
HEX_SIDES: tuple[str, str, str] = ("initial", "base", "patched")


def observed_lines(r: RoleResult, width: int) -> list[str]:
    """The hexdump of the observed bytes (:func:`observed_object`), its initial column
    said to be the solver's pick of arbitrary memory (:func:`~equiv.report.text.hexdump_lines`)."""
    obj = observed_object(r)
    if obj is None:
        return []
    return hexdump_lines(obj, width, HEX_SIDES)


def role_lines(r: RoleResult, ind: str = "",
               sides: tuple[str, str] = ("base", "patched")) -> list[str]:
    """A replayed difference as text lines indented by ``ind``: the page, the inputs, and
    each differing field with both values and the chains of steps behind them (``sides``:
    what the two sides are called: the base and the patched tree, or ``--linux``'s hand
    model and tree)."""
    i2 = ind + "  "
    out = [f"{ind}{_page(r)}"]
    if r.inputs:
        out += wrap(inputs_text(r), ind, i2)
    pad = max(map(len, sides)) + 2
    for d in r.diffs:
        out += wrap(f"{_fields(d)} @{d.offset} ({d.size} bytes): {sides[0]} "
                    f"{d.slow:#x}, {sides[1]} {d.fast:#x}", ind, i2)
        out += _chain_lines(f"{i2}{(sides[0] + ':').ljust(pad)}", d.slow_provenance)
        out += _chain_lines(f"{i2}{(sides[1] + ':').ljust(pad)}", d.fast_provenance)
    return out


def _page(role: RoleResult) -> str:
    idx = dict(role.index)
    if "b" in idx:
        return f"pageblock bitmap cell {idx['b']}"
    what = {0: "head"}.get(idx.get("t", -1), f"tail {idx.get('t')}")
    pfn = f", pfn {role.pfn:#x}" if role.pfn is not None else ""
    return f"compound {idx.get('c')}, {what}{pfn}"


def _fields(d: FieldDiff) -> str:
    return "/".join(d.names)


# ---- text -------------------------------------------------------------------------------


def wrap(text: str, indent: str = "", more: str | None = None) -> list[str]:
    """``text`` filled to 72 columns (continuation lines indented by ``more``, default two
    spaces deeper than ``indent``); a path or a statement word longer than that is never
    split."""
    return textwrap.wrap(text, WIDTH, initial_indent=indent,
                         subsequent_indent=indent + "  " if more is None else more,
                         break_on_hyphens=False, break_long_words=False) or [indent.rstrip()]


def _chain_lines(label: str, chains: tuple[tuple[str, ...], ...]) -> list[str]:
    """One side's provenance: the distinct chains, each step on its own line (oldest first,
    later steps marked ``->``); an empty chain is the initial memory."""
    out: list[str] = []
    pad = " " * len(label)
    for ch in chains:
        for i, step in enumerate(ch or ("never written (the initial memory)",)):
            out += wrap(step if i == 0 else f"-> {step}", pad if out else label, pad + "    ")
    return out


def render_patch_text(rep: PatchReport, *, times: bool = True) -> str:
    """The text report (for a terminal, a log or a mail: at most 72 columns except where a
    single word is longer; commands continued with backslashes)."""
    run = rep.run
    out = [f"equiv {TOOL_VERSION}: a patch checked from its C text" if times
           else "equiv: a patch checked from its C text"]
    out += wrap(f"base:    {rep.base} (Linux {rep.base_version})", "", " " * 9)
    if rep.against is not None:
        out += wrap(f"patched: --against {rep.against} (Linux {rep.patched_version})", "",
                    " " * 9)
    else:
        out += wrap(f"patched: {rep.base} with {rep.patched_label()} applied to a private "
                    f"copy (Linux {rep.patched_version}):", "", " " * 9)
        for i, p in enumerate(rep.patches, 1):
            mail = f" (mail {p.index} of {p.count})" if p.count > 1 else ""
            if p.subject:
                out += wrap(f"{i}. {p.subject}", "  ", "     ")
                out += wrap(f"{p.name}{mail}", "     ", "       ")
            else:
                out += wrap(f"{i}. {p.name}{mail}", "  ", "     ")
        for c in rep.covers:
            out += wrap(f"cover letter, not a patch: {c}", "  ", "    ")
    hyp = " (hypothetical layout)" if rep.hypothetical else ""
    out.append(f"config:  {rep.config}{hyp}")
    for note in rep.kbuild:
        out += wrap(note, " " * 9, " " * 11)
    if rep.kbuild:
        out += wrap("preprocessor: every #if, #ifdef, #elif and #else branch read is the one "
                    "clang's preprocessor took under these headers", " " * 9, " " * 11)
    types = ("all five, one cell per order with pgmap->type symbolic" if rep.types == "all"
             else rep.types)
    out += wrap(f"orders:  {_orders_text(rep.orders)}; types: {types}", "", " " * 9)
    out.append(f"touched by the {'patches' if rep.against is None else 'other tree'} "
               f"({len(rep.touched)}):")
    for row in rep.touched:
        t = row.touched
        name = ("" if t.what == "file scope" else t.name if t.what == "function"
                else f"{t.name} ({t.what})")
        out += wrap(f"{TAGS[row.status]:7} {t.file}:{t.line} {t.kind} {name}".rstrip(), "  ",
                    " " * 10)
    if rep.touched:
        out += wrap("(run: interpreted from a tree's text; OUTSIDE: run by neither tree; "
                    "read/unread: a type the proof reads or not; scope: changed lines outside "
                    "every definition)", "  ", "   ")
    else:
        out.append("  nothing in the files equiv reads")
    if rep.outside:
        out += wrap("outside the modelled call graph (touched, run by neither tree in the "
                    "cells checked: not covered by the verdict): "
                    + ", ".join(f"{o.touched.name} ({o.touched.file}:{o.touched.line})"
                                for o in rep.outside))
    if rep.files_outside:
        out += wrap("files changed that equiv does not read (not covered by the verdict): "
                    + ", ".join(rep.files_outside))
    if rep.against is not None:
        out += wrap("files compared (--against compares only these): "
                    + ", ".join(rep.files_read))
    out += wrap(f"cells ({len(run.cells)}): memmap_init_zone_device() of both trees, "
                "interpreted from their text on the same symbolic inputs and initial memory:")
    out += _cell_lines(rep, run, times)
    by = transitivity_note(run)
    if by:
        out += wrap(by, "  ", "  ")
    if rep.steps:
        out += _step_lines(rep, times)
    out.append(f"loops summarised, not unrolled ({len(run.summarised)}):")
    out += [f"  {s}" for s in run.summarised]
    lemmas = sum(c.lemmas for c in run.cells)
    out += wrap(f"loop-summary lemmas: {lemmas} over {len(run.cells)} "
                f"cell{'s' * (len(run.cells) != 1)} (a role counts as proved only if its "
                f"cell's lemmas are; {lemma_solvers()})")
    out += assumption_lines(run.assumptions)
    out.append(f"trusted helpers, not interpreted ({len(run.trusted)}):")
    for n in run.trusted:
        out += wrap(f"{n}: {TRUSTED[n].model if n in TRUSTED else '?'}", "  ", "    ")
    tt = f" in {run.seconds:.1f}s" if times else ""  # (a --per-patch run's: all of it)
    out.append(f"verdict: {rep.verdict.value}{tt}")
    return "\n".join(out) + "\n"


def transitivity_note(run: PatchRun) -> str:
    """How many of ``run``'s cells (a ``--per-patch`` series') were proved by transitivity,
    in one sentence; "" if none."""
    by = [c for c in run.cells if c.by_steps]
    if not by:
        return ""
    return (f"{'all' if len(by) == len(run.cells) else len(by)} proved by transitivity, with "
            "no query of their own: in each, every patch that changes a file equiv reads was "
            "proved equal to the tree before it, under the same assumptions")


def step_title(st: PatchStep) -> str:
    """``2. SUBJECT`` (or the patch file and mail number) of a ``--per-patch`` step."""
    p = st.patch
    mail = f" (mail {p.index} of {p.count})" if p.count > 1 else ""
    return f"{st.number}. {p.subject or p.name + mail}"


def step_verdict(st: PatchStep) -> str:
    """What a ``--per-patch`` step says: NFC proved, or its verdict."""
    if st.run is None:
        return "NFC: proved equal (changes no file equiv reads)"
    if st.verdict is Verdict.PROVED:
        return f"NFC: proved equal ({len(st.run.cells)} cell{'s' * (len(st.run.cells) != 1)})"
    return str(st.verdict.value)


def _step_lines(rep: PatchReport, times: bool) -> list[str]:
    out = wrap("per patch (--per-patch), each against the tree before it:")
    first = rep.first_difference
    for st in rep.steps:
        tt = f" in {st.run.seconds:.1f}s" if times and st.run is not None else ""
        out += wrap(f"{step_title(st)}: {step_verdict(st)}{tt}", "  ", "     ")
        if st is first:
            out += wrap("the first patch that makes a difference"
                        if st.verdict is Verdict.REFUTED else
                        "the first patch not proved equal", "     ", "     ")
        if st.run is not None and st.verdict is not Verdict.PROVED:
            out += wrap("touched: " + ", ".join(
                f"{r.touched.name} ({r.touched.file}:{r.touched.line})" for r in st.touched),
                "     ", "       ")
            out += _cell_lines(rep, st.run, times, proved=False, ind="   ", changed=st.changed)
    if first is None:
        out += wrap("every patch proved equal to the tree before it", "  ", "    ")
    return out


def _cell_lines(rep: PatchReport, run: PatchRun, times: bool, *, proved: bool = True,
                ind: str = "", changed: tuple[tuple[str, tuple[range, ...]], ...] | None = None,
                ) -> list[str]:
    """One line per cell (``proved=False``: the cells not proved only) and the details of
    every role not proved, each line indented by ``ind`` more."""
    i2, i4, i6, i8 = (ind + " " * n for n in (2, 4, 6, 8))
    out: list[str] = []
    for c in run.cells:
        if not proved and c.verdict is Verdict.PROVED:
            continue
        tt = f"  {c.seconds:7.2f}s" if times else ""
        out.append(f"{i2}{c.ptype:26} order {c.order:<2} {c.verdict.value}{tt}")
        for r in c.roles:
            if r.verdict is Verdict.PROVED:
                continue
            out += wrap(f"{r.name}: {r.verdict.value}{' - ' + r.reason if r.reason else ''}",
                        i4, i6)
            if r.lemma_cex is not None:
                out += wrap(f"counterexample: {r.lemma_cex.text()}", i6, i8)
            if r.diffs:
                out += role_lines(r, i6)
                at, _ = locate(rep, r, changed)
                if at is not None:
                    out += wrap(f"at (patched tree): {at[0]}:{at[1]}: {at[2]}", i6, i8)
                out += [i4 + line for line in observed_lines(r, WIDTH - len(i4))]
            out.append(f"{i6}re-run:")
            out += command_lines(repro(rep, c), i8)
    return out


# ---- JSON -------------------------------------------------------------------------------


def _field_json(d: FieldDiff) -> dict[str, Any]:
    return {"names": list(d.names), "offset": d.offset, "size": d.size,
            "base": hex(d.slow), "patched": hex(d.fast),
            "base_provenance": [list(ch) for ch in d.slow_provenance],
            "patched_provenance": [list(ch) for ch in d.fast_provenance]}


def role_json(r: RoleResult, times: bool) -> dict[str, Any]:
    return {"name": r.name, "verdict": r.verdict.value,
            **({"seconds": round(r.seconds, 3)} if times else {}),
            "reason": r.reason or None,
            "index": dict(r.index) or None,
            "pfn": hex(r.pfn) if r.pfn is not None else None,
            "inputs": {k: (v if isinstance(v, bool) else hex(v)) for k, v in r.inputs} or None,
            "irrelevant_inputs": list(r.irrelevant),
            "observed": None if r.observed is None else {
                "initial": r.observed.initial.hex(), "base": r.observed.slow.hex(),
                "patched": r.observed.fast.hex(),
                "initial_is": "arbitrary memory: the bytes the solver picked"},
            "fields": [_field_json(d) for d in r.diffs],
            **({"lemma_counterexample": lemma_cex_json(r.lemma_cex)}
               if r.lemma_cex is not None else {})}


def lemma_cex_json(x: LemmaCex) -> dict[str, Any]:
    """A failed loop lemma's counterexample as data (``lemma_counterexample`` of a role;
    SARIF's result property of the same name)."""
    return {"loop": x.loop, "lemma": x.kind, "what": x.what, "iteration": x.iteration,
            "pfn": hex(x.pfn) if x.pfn is not None else None,
            "pageblock": hex(x.block) if x.block is not None else None,
            "where": x.where or None, "fields": list(x.fields),
            "source": "the solver's model, not replayed", "text": x.text()}


def patch_json(rep: PatchReport, *, times: bool = True,
               exit_code: int | None = None) -> dict[str, Any]:
    """The report as data (schema ``equiv.patch/1``)."""
    run = rep.run
    doc: dict[str, Any] = {
        "schema": PATCH_SCHEMA,
        "verdict": rep.verdict.value,
        "base": {"path": rep.base, "version": rep.base_version},
        "patched": {"kind": "against" if rep.against is not None else "patch",
                    "path": rep.against, "version": rep.patched_version,
                    "patches": [{"file": p.name, "subject": p.subject, "index": p.index,
                                 "count": p.count, "label": p.label} for p in rep.patches],
                    "cover_letters": list(rep.covers)},
        "config": rep.config, "hypothetical_config": rep.hypothetical,
        "kbuild": list(rep.kbuild),
        "orders": list(rep.orders), "types": rep.types,
        "touched": [{"file": r.touched.file, "name": r.touched.name, "what": r.touched.what,
                     "kind": r.touched.kind, "line": r.touched.line, "status": r.status}
                    for r in rep.touched],
        "outside_call_graph": [r.touched.name for r in rep.outside],
        "files_outside": list(rep.files_outside),
        "files_read": list(rep.files_read),
        "cells": _cells_json(rep, run, times),
        "summarised": list(run.summarised),
        "lemmas": sum(c.lemmas for c in run.cells),
        "assumptions": [a.as_json() for a in run.assumptions],
        "interpreted": [{"side": n.split(": ", 1)[0], "name": n.split(": ", 1)[-1], "where": w}
                        for n, w in run.interpreted],
        "trusted": [{"name": n, "model": TRUSTED[n].model if n in TRUSTED else None}
                    for n in run.trusted],
    }
    if rep.steps:
        first = rep.first_difference
        doc["series_verdict"] = run.verdict.value
        doc["first_difference"] = None if first is None else first.number
        doc["per_patch"] = [
            {"number": st.number, "file": st.patch.name, "subject": st.patch.subject,
             "label": st.patch.label, "verdict": st.verdict.value,
             "says": step_verdict(st),
             **({"seconds": round(st.run.seconds, 3)} if times and st.run else {}),
             "touched": [{"file": r.touched.file, "name": r.touched.name,
                          "what": r.touched.what, "kind": r.touched.kind,
                          "line": r.touched.line, "status": r.status} for r in st.touched],
             "cells": _cells_json(rep, st.run, times) if st.run else []}
            for st in rep.steps]
    if times:
        doc["tool_version"] = TOOL_VERSION
        doc["seconds"] = round(run.seconds + sum(st.run.seconds for st in rep.steps if st.run), 3)
    if exit_code is not None:
        doc["exit_code"] = exit_code
    return doc


def _cells_json(rep: PatchReport, run: PatchRun, times: bool) -> list[dict[str, Any]]:
    return [{"type": c.ptype, "order": c.order, "verdict": c.verdict.value,
             **({"seconds": round(c.seconds, 3)} if times else {}),
             "lemmas": c.lemmas,
             "by_transitivity": c.by_steps,
             "assumptions": [a.key for a in c.assumptions],
             "reproduce": repro(rep, c),
             "roles": [role_json(r, times) for r in c.roles]} for c in run.cells]


def render_patch_json(rep: PatchReport, *, times: bool = True,
                      exit_code: int | None = None) -> str:
    """:func:`patch_json` as indented JSON."""
    return json.dumps(patch_json(rep, times=times, exit_code=exit_code), indent=2) + "\n"


# ---- SARIF 2.1.0 --------------------------------------------------------------------------


_PAGE_RULES = ("head", "tail1", "tail2", "tail", "outside", "pageblock")


def _rules() -> list[dict[str, Any]]:
    return [{"id": f"equiv/patch/{name}",
             "name": "".join(p.capitalize() for p in re.split(r"[_-]", name)),
             "shortDescription": {"text": (f"The patched tree leaves {about} as the base tree "
                                           "does") if name in _PAGE_RULES
                                  else about[0].upper() + about[1:]},
             "fullDescription": {"text": "memmap_init_zone_device() of the base tree and of "
                                         "the patched tree, interpreted from their C text on "
                                         f"the same symbolic inputs and memory: {about}."},
             "defaultConfiguration": {"level": "error"}}
            for name, about in ROLE_ABOUT.items()]


def _loc(uri: str, base_id: str, line: int, text: str) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": uri, "uriBaseId": base_id},
                                 "region": {"startLine": line}},
            "message": {"text": text}}


def first_touched(rep: PatchReport) -> tuple[str, int] | None:
    """The first touched definition the patched tree ran (added or changed), in the order of
    the files read, then by line; else the patched tree's memmap_init_zone_device."""
    order = {f: i for i, f in enumerate(rep.files_read)}
    ran = {n.split(": ", 1)[-1] for n, _ in rep.run.interpreted if n.startswith("patched: ")}
    rows = sorted((r.touched for r in rep.touched
                   if r.touched.kind != "removed" and r.touched.name in ran),
                  key=lambda t: (order.get(t.file, len(order)), t.line))
    if rows:
        return rows[0].file, rows[0].line
    for n, w in rep.run.interpreted:
        if n == "patched: memmap_init_zone_device":
            f, _, ln = w.partition(":")
            return f, int(ln)
    return None


def on_changed_line(step: tuple[str, int, str],
                    changed: tuple[tuple[str, tuple[range, ...]], ...]) -> bool:
    """Whether a provenance step lies on a line the patches changed."""
    return any(f == step[0] and any(step[1] in r for r in rs) for f, rs in changed)


def locate(rep: PatchReport, role: RoleResult,
           changed: tuple[tuple[str, tuple[range, ...]], ...] | None = None,
           ) -> tuple[tuple[str, int, str] | None, list[tuple[str, int, str]]]:
    """Where a role's difference is, in the patched tree: in the patched side's provenance
    of the first differing field that side wrote, the last step on a line the patches
    change (``changed``, default the report's: the call in mm/mm_init.c rather than the line
    of string.h's memcpy() it reaches), else the chain's last step; and the chain's other
    steps.  If the patched tree wrote none of the differing bytes (it left the initial
    memory), the first touched definition it runs, with a note saying so.  Each as (file,
    line, what)."""
    lines = rep.changed if changed is None else changed
    for d in role.diffs:
        for ch in d.fast_provenance:
            steps = [s for s in (parse_step(x) for x in ch) if s is not None]
            if steps:
                hit = [i for i, st in enumerate(steps) if on_changed_line(st, lines)]
                k = hit[-1] if hit else len(steps) - 1
                return steps[k], steps[:k] + steps[k + 1:]
    where = first_touched(rep)
    if where is None:
        return None, []
    what = ("the patched tree never wrote these bytes (it left the initial memory); the "
            "first touched definition it runs" if role.diffs
            else "the first touched definition the patched tree runs")
    return (where[0], where[1], what), []


def sarif_locations(rep: PatchReport, role: RoleResult,
                    changed: tuple[tuple[str, tuple[range, ...]], ...] | None = None,
                    ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The primary location of a role's result (in the patched tree, :func:`locate`) and
    the related ones: the patched chain's other steps, the base side's steps (``BASE``)."""
    at, earlier = locate(rep, role, changed)
    primary = None if at is None else _loc(at[0], "PATCHED", at[1], f"patched tree: {at[2]}")
    related = [_loc(f, "PATCHED", ln, f"patched tree, another step: {stmt}")
               for f, ln, stmt in earlier]
    seen: set[tuple[str, int]] = set()
    for d in role.diffs[:1]:
        for ch in d.slow_provenance:
            for x in ch:
                st = parse_step(x)
                if st is not None and (st[0], st[1]) not in seen:
                    seen.add((st[0], st[1]))
                    related.append(_loc(st[0], "BASE", st[1],
                                        f"base tree wrote {_fields(d)}: {st[2]}"))
    for i, loc in enumerate(related):
        loc["id"] = i + 1
    return primary, related


def _sarif_message(rep: PatchReport, c: PatchCell, r: RoleResult) -> str:
    where = f"{c.ptype} order {c.order} (config {rep.config})"
    head = f"{rule_name(r.name)} {r.verdict.value} for {where}"
    if r.diffs:
        fields = "; ".join(f"{_fields(d)} @{d.offset}: base {d.slow:#x}, patched {d.fast:#x}"
                           for d in r.diffs)
        body = f": {_page(r)} differs: {fields}."
    else:
        body = f": {r.reason}." if r.reason else "."
    if r.lemma_cex is not None:
        body += f" Counterexample: {r.lemma_cex.text()}."
    return f"{head}{body} Reproduce: {repro(rep, c)}"


def _sarif_results(rep: PatchReport, run: PatchRun, step: PatchStep | None,
                   rules: list[dict[str, Any]], index: dict[str, int]) -> list[dict[str, Any]]:
    """A result per role not proved of ``run`` (the series, or ``step``'s patch against the
    tree before it), adding the rules it needs to ``rules``."""
    results: list[dict[str, Any]] = []
    for c in run.cells:
        for r in c.roles:
            if r.verdict is Verdict.PROVED:
                continue
            rid = f"equiv/patch/{rule_name(r.name)}"
            if rid not in index:
                rules.append({"id": rid, "shortDescription": {"text": r.name}})
                index[rid] = len(rules) - 1
            primary, related = sarif_locations(rep, r, None if step is None else step.changed)
            text = _sarif_message(rep, c, r)
            if step is not None:
                text = (f"patch {step_title(step)} against the tree before it (line numbers "
                        f"of the tree after patch {step.number}): {text}")
            res: dict[str, Any] = {
                "ruleId": rid, "ruleIndex": index[rid],
                "level": "error" if r.verdict is Verdict.REFUTED else "warning",
                "message": {"text": text},
                "locations": [primary] if primary is not None else [],
                "partialFingerprints": {"equivPatch/v1": "/".join(
                    [rep.config, c.ptype, str(c.order), r.name,
                     *((f"patch{step.number}",) if step is not None else ())])},
                "properties": {"verdict": r.verdict.value, "pgmap_type": c.ptype,
                               "order": c.order, "role": r.name,
                               "fields": [_fields(d) for d in r.diffs],
                               "reproduce": repro(rep, c),
                               **({"lemma_counterexample": lemma_cex_json(r.lemma_cex)}
                                  if r.lemma_cex is not None else {}),
                               **({"patch": step.number} if step is not None else {})},
            }
            if related:
                res["relatedLocations"] = related
            results.append(res)
    return results

def patch_sarif(rep: PatchReport, *, times: bool = True,
                exit_code: int | None = None) -> dict[str, Any]:
    """The SARIF 2.1.0 log (a dict): one run, a result per role not proved."""
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    runs: list[tuple[PatchRun, PatchStep | None]] = [(rep.run, None)]
    runs += [(st.run, st) for st in rep.steps if st.run is not None]
    for run, step in runs:
        results += _sarif_results(rep, run, step, rules, index)
    driver: dict[str, Any] = {"name": "equiv", "rules": rules}
    if times:
        driver["version"] = TOOL_VERSION
    invocation: dict[str, Any] = {"executionSuccessful": all(
        r.verdict in (Verdict.PROVED, Verdict.REFUTED) for run, _ in runs for c in run.cells
        for r in c.roles)}
    if exit_code is not None:
        invocation["exitCode"] = exit_code
    patched_desc = (f"root of the --against tree {rep.against}" if rep.against is not None
                    else f"root of the private copy of {rep.base} with the patches applied "
                         "(removed after the run): apply them to a copy of the base tree")
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [{
        "tool": {"driver": driver},
        "invocations": [invocation],
        "originalUriBaseIds": {
            "PATCHED": {"description": {"text": patched_desc}},
            "BASE": {"description": {"text": f"root of the base kernel tree {rep.base}"}}},
        "results": results,
        "properties": {"config": rep.config, "hypothetical_config": rep.hypothetical,
                       "verdict": rep.verdict.value, "base": rep.base,
                       "base_version": rep.base_version,
                       "patches": [p.label for p in rep.patches], "against": rep.against,
                       "outside_call_graph": [r.touched.name for r in rep.outside],
                       "assumptions": [a.as_json() for a in rep.run.assumptions],
                       **({"per_patch": [{"number": st.number, "label": st.patch.label,
                                          "verdict": st.verdict.value,
                                          "says": step_verdict(st)} for st in rep.steps],
                           "series_verdict": rep.run.verdict.value} if rep.steps else {})},
    }]}


def render_patch_sarif(rep: PatchReport, *, times: bool = True,
                       exit_code: int | None = None) -> str:
    """:func:`patch_sarif` as JSON text."""
    return json.dumps(patch_sarif(rep, times=times, exit_code=exit_code), indent=2) + "\n"


# ---- JUnit XML ----------------------------------------------------------------------------


def junit_assumption(a: Located) -> str:
    """An assumption as one JUnit property value: what it says, its source, and the lines
    that rely on it and guarantee it."""
    parts = [f"{a.text} [{a.tag}]", f"{a.kind_label}: {a.why}"]
    parts += [f"{label}: {'; '.join(sites)}" for label, sites in
              (("relied on", a.relied_on), ("guaranteed by", a.guaranteed_by)) if sites]
    if a.beyond:
        parts.append(f"beyond the kernel's guarantee: {a.beyond}")
    if a.cells:
        parts.append(f"only in the cells: {', '.join(a.cells)}")
    return " | ".join(parts)


def render_patch_junit(rep: PatchReport, *, times: bool = True) -> str:
    """JUnit XML: one ``<testsuite>``, one ``<testcase>`` per role of each cell (classname
    ``equiv.patch.<config>.<type>.order<N>``); REFUTED is a ``<failure>``, UNKNOWN and
    VACUOUS an ``<error>``."""
    root = JUnitXml("equiv")
    suite = TestSuite(f"equiv patch {rep.config}")
    for key, val in (("config", rep.config), ("base", rep.base), ("verdict", rep.verdict.value),
                     ("patched", rep.against or "; ".join(p.label for p in rep.patches)),
                     *((("tool_version", TOOL_VERSION),) if times else ()),
                     *((f"assumption:{a.key}", junit_assumption(a)) for a in rep.run.assumptions)):
        suite.add_property(key, val)
    n = failures = errors = 0
    for c in rep.run.cells:
        cls = ".".join(["equiv", "patch", rep.config.replace(".", "_"), c.ptype,
                        f"order{c.order}"])
        for r in c.roles:
            n += 1
            case = TestCase(r.name, cls, round(r.seconds, 4) if times else None)
            if r.verdict is Verdict.REFUTED:
                failures += 1
                res: Failure | Error = Failure(_sarif_message(rep, c, r), "REFUTED")
                lines = [f"{_fields(d)} @{d.offset}: base {d.slow:#x}, patched {d.fast:#x}"
                         for d in r.diffs]
                res.text = "\n".join([_page(r), *lines, f"reproduce: {repro(rep, c)}"]) + "\n"
                case.result = [res]
            elif r.verdict is not Verdict.PROVED:
                errors += 1
                res = Error(f"{r.name} {r.verdict.value.lower()}: {r.reason}", r.verdict.value)
                res.text = "".join(
                    [*((f"counterexample: {r.lemma_cex.text()}\n",) if r.lemma_cex else ()),
                     f"reproduce: {repro(rep, c)}\n"])
                case.result = [res]
            suite.append(case)
    suite.tests, suite.failures, suite.errors, suite.skipped = n, failures, errors, 0
    # <testsuites> carries no "skipped" in the strict JUnit schema (junit-10.xsd)
    root.tests, root.failures, root.errors = n, failures, errors
    if times:
        suite.time = root.time = round(rep.run.seconds, 3)
    root.append(suite)
    for st in rep.steps:
        step = _step_suite(rep, st, times)
        root.append(step)
        root.tests += step.tests
        root.failures += step.failures
        root.errors += step.errors
    raw = root.tostring()
    return xml.dom.minidom.parseString(raw).toprettyxml(indent="  ", encoding="UTF-8").decode()


def _step_suite(rep: PatchReport, st: PatchStep, times: bool) -> TestSuite:
    """``--per-patch``: one ``<testsuite>`` per patch against the tree before it, a
    ``<testcase>`` per role of each cell (one passing case ``unchanged`` when the patch
    changes no file equiv reads)."""
    suite = TestSuite(f"equiv patch {rep.config}: {step_title(st)}")
    suite.add_property("patch", st.patch.label)
    suite.add_property("verdict", st.verdict.value)
    if st.run is None:
        suite.append(TestCase("unchanged", f"equiv.patch.step{st.number}", 0.0 if times else None))
        suite.tests, suite.failures, suite.errors, suite.skipped = 1, 0, 0, 0
        return suite
    n = failures = errors = 0
    for c in st.run.cells:
        cls = ".".join(["equiv", "patch", f"step{st.number}", rep.config.replace(".", "_"),
                        c.ptype, f"order{c.order}"])
        for r in c.roles:
            n += 1
            case = TestCase(r.name, cls, round(r.seconds, 4) if times else None)
            if r.verdict is Verdict.REFUTED:
                failures += 1
                case.result = [Failure(_sarif_message(rep, c, r), "REFUTED")]
            elif r.verdict is not Verdict.PROVED:
                errors += 1
                err = Error(f"{r.name} {r.verdict.value.lower()}: {r.reason}", r.verdict.value)
                if r.lemma_cex is not None:
                    err.text = f"counterexample: {r.lemma_cex.text()}\n"
                case.result = [err]
            suite.append(case)
    suite.tests, suite.failures, suite.errors, suite.skipped = n, failures, errors, 0
    if times:
        suite.time = round(st.run.seconds, 3)
    return suite


def render_patch(fmt: str, rep: PatchReport, *, times: bool = True,
                 exit_code: int | None = None) -> str:
    """The report in ``fmt`` (:data:`PATCH_FORMATS` but html and markdown, which
    :func:`equiv.zone_device.source.patch_views.render` adds)."""
    if fmt == "json":
        return render_patch_json(rep, times=times, exit_code=exit_code)
    if fmt == "sarif":
        return render_patch_sarif(rep, times=times, exit_code=exit_code)
    if fmt == "junit":
        return render_patch_junit(rep, times=times)
    if fmt in ("html", "markdown"):  # patch_views' (which imports this module)
        raise ValueError(f"--format {fmt} of a --patch report: "
                         "equiv.zone_device.source.patch_views.render")
    return render_patch_text(rep, times=times)


#: The formats of a --patch / --against report.
PATCH_FORMATS = ("text", "json", "sarif", "junit", "html", "markdown")


# ---- --list: what the C interpreter reads ---------------------------------------------------


#: The C the interpreter runs (:mod:`equiv.zone_device.source.cinterp`,
#: :mod:`equiv.zone_device.source.csummary`).
C_CONSTRUCTS = (
    "declarations, with initialisers; struct locals (struct page template;) with bytes of "
    "their own, arbitrary until written, their address passed to callees; C scopes end "
    "with their block",
    "assignments = |= &= += -= to locals and to struct fields, through the tree's own struct "
    "layout (every union view)",
    "calls to the functions and function-like macros of the files read (a macro argument "
    "evaluated where the body uses it; a do { ... } while (0) statement macro such as "
    "WRITE_ONCE run where it is used), and to the static inline helpers and macros of the "
    "headers clang compiled, read where clang found them (atomic_set down to the arch's "
    "arch_atomic_set); GNU statement expressions ({ ...; e; })",
    "constants (PAGE_SHIFT, TAIL_MAPPING, ZONES_PGSHIFT, ZONE_DEVICE, ...) as clang's "
    "constant evaluator gives them under the configuration's headers, checked against the "
    "model's",
    "if / else, switch with fall-through, return, break, continue (from any depth), goto "
    "to a later label",
    "c ? a : b and GNU c ?: b (values joined by an ite; arms that cannot be joined, such "
    "as pointers to two objects, fork the statement)",
    "struct assignment and struct arguments by value (every byte copied); initialiser "
    "lists and compound literals of a struct with member designators and ATOMIC_INIT, the "
    "rest zero",
    "for, while and do loops: the first iterations run as written, the rest summarised "
    "from the C (a loop variable of any integer type stepped by a constant once per "
    "iteration, up or down, to a bound the body does not change: v < hi, v <= hi, v != hi, "
    "v > lo, v >= lo, either way round; no early exit), justified by the frame-write, "
    "frame-read, carry-step and no-wrap lemmas (each conjunct asked of Bitwuzla first, "
    "then of z3 unless Bitwuzla proved it); any other loop unrolled up to a bound, "
    "then UNKNOWN naming its file:line and why",
    "casts ((void) included; (typeof(x)) of a variable, macro argument or cast, as in "
    "IS_ALIGNED / ALIGN), sizeof of a type or an expression, & * -> . [], pointer "
    "differences (struct pages; zone_idx's zone - zone->zone_pgdat->node_zones), unsigned / "
    "and %; every preprocessor conditional decided as clang's preprocessor decided it under "
    "the configuration's headers (the lines it skipped; a file it did not read is not "
    "decided: UNKNOWN)",
    "memcpy / memset (and memcpy_flushcache) byte by byte, each byte keeping its provenance "
    "(trusted, below)",
)


def interpreter_support() -> str:
    """The ``--list`` section "C interpreter": the C constructs it runs, the files it reads
    and the trusted helpers (the ones not interpreted) with their models."""
    from equiv.zone_device.source.files import FILES

    def item(text: str, indent: str) -> list[str]:
        return textwrap.wrap(text, 72, initial_indent=indent,
                             subsequent_indent=indent + "  ", break_long_words=False,
                             break_on_hyphens=False)

    out = ["C interpreter (--linux BASE --patch FILE... / --against DIR):"]
    out += item("reads: " + ", ".join(FILES) + "; and the .c files of mm/ that define "
                "what those call (each compiled as its own unit)", "  ")
    out += item("runs: memmap_init_zone_device() and what it calls, from the tree's "
                "text:", "  ")
    for c in C_CONSTRUCTS:
        out += item(c, "    ")
    out.append(f"  trusted helpers, not interpreted ({len(TRUSTED)}):")
    for t in TRUSTED.values():
        out += item(f"{t.name}: {t.model} [{checked_versions(t.name)}]", "    ")
    return "\n".join(out) + "\n"


__all__ = ["C_CONSTRUCTS", "HEX_SIDES", "PATCH_FORMATS", "PATCH_SCHEMA", "STATUSES", "PatchReport",
           "TouchedRow", "first_touched", "inputs_text", "interpreter_support", "junit_assumption",
           "lemma_cex_json", "locate", "observed_lines", "observed_object", "parse_step",
           "patch_json", "patch_sarif", "render_patch", "render_patch_json", "render_patch_junit",
           "render_patch_sarif", "render_patch_text", "repro", "role_json", "role_lines",
           "rule_name", "sarif_locations", "shown_inputs", "transitivity_note"]

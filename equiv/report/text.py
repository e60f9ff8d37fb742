"""Plain-text report of a proof run, fit for a reply on a mailing list.

Every line is at most :data:`WIDTH` (72) columns, with no colour and no box drawing.  The
summary line comes first; then what was checked (config, revision, assumptions), the matrix
(pgmap type x order), and for every obligation not proved: its inputs (those whose value
does not matter marked), the differing fields (kernel name, union view, offset, slow and
fast value) with the chain of modelled steps that wrote each side, and one shell command
that reproduces exactly that obligation.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from functools import partial

from equiv.check import CellResult, ObligationResult, Verdict, worst
from equiv.counterexample import Counterexample, FieldDiff
from equiv.explain import Explanation
from equiv.matrix import RunResult
from equiv.memmap import MemoryType
from equiv.obligations import ROLES
from equiv.page_model import Chain

#: Column limit of every line of the text report (mail: 72).
WIDTH = 72


def wrap(text: str, indent: str = "", more: str | None = None, width: int = WIDTH) -> list[str]:
    """``text`` filled to ``width`` columns; continuation lines indented by ``more``
    (default: two spaces deeper than ``indent``)."""
    return textwrap.wrap(text, width, initial_indent=indent,
                         subsequent_indent=indent + "  " if more is None else more,
                         break_on_hyphens=False) or [indent.rstrip()]


def summary_line(run: RunResult) -> str:
    """``N obligations (C cells): a proved, b refuted, ...``: counted per obligation."""
    counts = {v: 0 for v in Verdict}
    for c in run.cells:
        for ob in c.obligations:
            counts[ob.verdict] += 1
    nob = sum(counts.values())
    parts = [f"{counts[v]} {v.value.lower()}" for v in Verdict if counts[v] or v is Verdict.PROVED]
    cells = f"{len(run.cells)} cell{'s' if len(run.cells) != 1 else ''}"
    return f"{nob} obligations ({cells}): " + ", ".join(parts)


def repro_command(run: RunResult, cell: CellResult, obligation: str | None = None) -> str:
    """One command line that re-runs exactly this cell (and, given ``obligation``, only that
    obligation and the loop lemmas it rests on)."""
    ptype = cell.ptype.removeprefix("MEMORY_DEVICE_")
    cfg = run.config_arg if run.subject != "zone-device" else \
        run.config_arg or f"--config {run.config.name}"
    what = (f"--compare {run.revision.split(':')[1]}" if run.revision.startswith("compare:")
            else f"--revision {run.revision}")
    cmd = (f"python -m equiv.proofs {cfg} {what} {run.column_option} {ptype} "
           f"{run.row_option} {cell.order}").replace("  ", " ")
    if obligation is not None:
        cmd += f" --obligation {obligation}"
    return cmd + (f" --mutant {run.mutant}" if run.mutant else "") + run.budget_args


def command_lines(cmd: str, indent: str) -> list[str]:
    """A shell command within :data:`WIDTH` columns: one line if it fits, else continued
    with backslashes (still one command for a shell; options are never split)."""
    if len(indent) + len(cmd) <= WIDTH:
        return [indent + cmd]
    words = cmd.split(" ")
    parts: list[str] = []  # "--opt value" kept together
    for wd in words:
        if parts and not wd.startswith("-") and parts[-1].startswith("-") and " " not in parts[-1]:
            parts[-1] += " " + wd
        else:
            parts.append(wd)
    lines, cur = [], indent
    for p in parts:
        sep = "" if cur.strip() == "" else " "
        if len(cur) + len(sep) + len(p) + 2 > WIDTH and cur.strip():
            lines.append(cur + " \\")
            cur = indent + "  " + p
        else:
            cur += sep + p
    return [*lines, cur]


def title(run: RunResult) -> str:
    """What the run compares, e.g. "ZONE_DEVICE memmap init, slow path (v7.3-rc1) vs fast
    path v11"."""
    if run.revision.startswith("compare:"):
        return f"{run.title.removesuffix(' vs fast path')} vs {run.revision.split(':')[1]}"
    return f"{run.title} {run.revision}"


def _header(run: RunResult, times: bool) -> list[str]:
    out: list[str] = []
    head = f"equiv {run.tool_version} ({run.solver_version})" if times else "equiv"
    out += wrap(f"{head}: {title(run)}")
    hyp = " [HYPOTHETICAL: no ZONE_DEVICE kernel builds this]" if run.config.hypothetical else ""
    ev = " (+ page_ref_set events observed)" if run.config.tracks_events else ""
    out += wrap(f"config {run.config.name}{hyp}{ev}")
    if run.config.description:
        out += wrap(run.config.description, "  ", "    ")
    if run.layout_note:
        out += wrap(run.layout_note, "  ", "    ")
    for a in run.config.assumed:
        out += wrap(f"assumed: {a}", "  ", "    ")
    out += wrap(f"revision {run.revision}: {run.revision_summary}" if run.revision_summary
                else f"revision {run.revision}")
    for ch in run.choices:
        out += wrap(ch if ch.startswith("known difference") else f"choice: {ch}", "  ", "    ")
    if run.mutant:
        out += wrap(f"seeded bug {run.mutant}: {run.mutant_description}")
    out.append("assumptions:")
    for a in run.assumptions:
        out += wrap(a, "  - ", "    ")
    return out


def _matrix(run: RunResult, times: bool) -> list[str]:
    """Rows are orders, columns pgmap types; the time of a row is the sum of its cells' (or
    of the one all-types proof, marked ``=``)."""
    types = list(dict.fromkeys(c.ptype for c in run.cells))
    orders = sorted({c.order for c in run.cells})
    by = {(c.ptype, c.order): c for c in run.cells}
    width = 11
    head = run.row_label[:5].ljust(7) + "".join(t.removeprefix("MEMORY_DEVICE_").ljust(width)
                                               for t in types)
    out = [(head.ljust(7 + width * len(types)) + ("   time" if times else "")).rstrip()]
    for o in orders:
        row = [by.get((t, o)) for t in types]
        cells = "".join(("-" if c is None else c.verdict.value).ljust(width) for c in row)
        line = f"{o:5d}  {cells}"
        present = [c for c in row if c is not None]
        if times and present:
            shared = all(c.all_types for c in present)
            secs = present[0].seconds if shared else sum(c.seconds for c in present)
            line += f"{secs:6.2f}s{'=' if shared else ''}"
        out.append(line.rstrip())
    return out


def render_text(run: RunResult, *, times: bool = True, verbose: bool = False) -> str:
    """The report: summary line, what was checked, the matrix, every non-proved obligation
    in detail (every obligation with ``verbose``)."""
    out: list[str] = []
    cached = sum(c.cached for c in run.cells)
    from_cache = f", {cached} cell{'s' * (cached != 1)} from the cache" if cached else ""
    jobs = f"{run.jobs} job{'s' * (run.jobs != 1)}"
    tail = f" (wall {run.wall_seconds:.1f} s, {jobs}{from_cache})" if times else ""
    out += wrap(summary_line(run) + tail)
    refuted = sorted({c.order for c in run.cells if c.verdict is Verdict.REFUTED})
    if refuted:
        out += wrap(f"smallest {run.row_label} with a counterexample: {refuted[0]}")
    out.append("")
    out += _header(run, times)
    out.append("")
    out += _matrix(run, times)
    if any(c.all_types for c in run.cells):
        out += wrap("= proved once for every pgmap type of the order (pgmap->type a symbolic "
                    "input)" if times else
                    "cells proved once for every pgmap type of their order (pgmap->type "
                    "symbolic)")
    for c in run.cells:
        bad = [ob for ob in c.obligations if ob.verdict is not Verdict.PROVED]
        if not (verbose or bad):
            continue
        out.append("")
        hyp = ", hypothetical" if run.config.hypothetical else ""
        mut = f", seeded bug {run.mutant}" if run.mutant else ""
        out += wrap(f"{c.verdict.value}  {c.ptype} {run.row_label} {c.order} (config {run.config.name}"
                    f"{hyp}, revision {run.revision}{mut})")
        for ob in (c.obligations if verbose else bad):
            out += obligation_lines(ob, times, "  ")
            if ob.verdict is not Verdict.PROVED and ob.kind == "page":
                out.append("    reproduce:")
                out += command_lines(repro_command(run, c, ob.name), "      ")
            elif ob.verdict is Verdict.REFUTED:  # a loop lemma: with its whole cell
                out.append("    reproduce:")
                out += command_lines(repro_command(run, c), "      ")
    return "\n".join(out) + "\n"


def obligation_lines(ob: ObligationResult, times: bool, indent: str = "") -> list[str]:
    """One obligation: verdict, name, what it is about; reason, coverage, counterexample."""
    t = f" {ob.seconds:.3f}s" if times else ""
    role = ROLES.get(ob.role)
    out = wrap(f"{ob.verdict.value} {ob.name}{t}", indent)
    if role:
        out += wrap(role.description, indent + "  ")
    if ob.reason:
        out += wrap(ob.reason, indent + "  ")
    if ob.coverage:
        out += wrap(f"shown satisfiable first: {'; '.join(ob.coverage)}", indent + "  ")
    if ob.counterexample is not None:
        pad = indent + "  "
        out += [pad + line for line in counterexample_lines(ob.counterexample, WIDTH - len(pad))]
    return out


#: How each input is named in a report (kernel terms), in the order they are listed.
INPUT_NAMES = {
    "start_pfn": "start_pfn", "nr_pages": "nr_pages", "nid": "nid", "pgmap": "pgmap",
    "pgmap_type": "pgmap->type", "altmap_valid": "altmap", "altmap_reserve": "altmap->reserve",
    "altmap_free": "altmap->free", "vmemmap_base": "vmemmap_base", "page_offset": "PAGE_OFFSET",
    "mobility_disabled": "page_group_by_mobility_disabled",
    "tracepoint_on": "page_ref_set tracepoint on",
}
#: Pseudo-inputs a counterexample can also be independent of.
PSEUDO_INPUTS = {"page": "which compound / tail shows it",
                 "initial_memory": "initial struct page contents",
                 "early_sections": "which sections are early"}


def _value(v: int | bool) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else hex(v)


def _type_name(v: int | bool) -> str:
    names = {t.value: t.kname for t in MemoryType}
    return names.get(int(v), f"{int(v)} (not a memory type)")


def chain_lines(chain: Chain, indent: str, width: int = WIDTH) -> list[str]:
    """A provenance chain, one numbered step per line (oldest first)."""
    if not chain:
        return [indent + "initial memory (never written)"]
    out: list[str] = []
    for i, step in enumerate(chain, 1):
        out += wrap(f"{i}. {step}", indent, indent + "   ", width)
    return out


def field_lines(d: FieldDiff, width: int = WIDTH) -> list[str]:
    """A differing field: names (kernel name, then the other union views), offset, and for
    each side its value and how it got it."""
    where = "not memory" if d.size == 0 else f"offset {d.offset}, {d.size} byte{'s' * (d.size > 1)}"
    out = wrap(f"field {d.names[0]} ({where})", width=width)
    if len(d.names) > 1:
        out += wrap("same bytes as: " + ", ".join(d.names[1:]), "  ", "    ", width)
    digits = max(1, 2 * d.size)
    for side, val, chains in (("slow", d.slow, d.slow_provenance),
                              ("fast", d.fast, d.fast_provenance)):
        out.append(f"  {side} value: {val:#0{digits + 2}x}")
        for i, chain in enumerate(chains):
            if len(chains) > 1:
                out.append(f"    bytes written by chain {i + 1} of {len(chains)}:")
            out += chain_lines(chain, "    ", width)
    return out


def counterexample_lines(cx: object, width: int = WIDTH) -> list[str]:
    """A replayed counterexample as report lines (no indentation; at most ``width``
    columns), Alive2-style: the example inputs, the page, then per differing field the slow
    (source) and fast (target) value with the chain of modelled steps behind each.

    Another subject's counterexample (a class of ``equiv.NAME``) is rendered by
    ``equiv.report.NAME.counterexample_lines``."""
    if not isinstance(cx, Counterexample):
        import importlib

        sub = type(cx).__module__.split(".")[1]
        return importlib.import_module(f"equiv.report.{sub}").counterexample_lines(cx, width)  # type: ignore[no-any-return]
    fill = partial(wrap, width=width)
    out: list[str] = []
    w = out.append
    free = set(cx.irrelevant)
    many = {"unique": "the only counterexample (any other input or page: no difference)",
            "one of many": "one of many counterexamples",
            "unknown": "unknown whether others exist"}[cx.multiplicity]
    out += fill(f"Example ({many}):")
    if free:
        out += fill("* any other value gives the same difference", "  ")
    for name, label in INPUT_NAMES.items():
        if name not in cx.inputs:
            continue
        if name in ("altmap_reserve", "altmap_free") and not cx.inputs["altmap_valid"]:
            continue
        v = cx.inputs[name]
        shown = (("present" if v else "none") if name == "altmap_valid" else
                 _type_name(v) if name == "pgmap_type" else _value(v))
        w(f"  {'*' if name in free else ' '} {label:32s} {shown}")
    if cx.early_sections:
        secs = ", ".join(f"{s:#x} {'yes' if e else 'no'}" for s, e in sorted(cx.early_sections.items()))
        out += fill(f"{'*' if 'early_sections' in free else ' '} early sections: {secs}", "  ",
                    "      ")
    mem = "*" if "initial_memory" in free else " "
    w(f"  {mem} initial struct page contents: "
      f"{'any' if mem == '*' else 'arbitrary (see JSON)'}")
    if cx.pfn is None:
        w(f"  {'*' if 'page' in free else ' '} pageblock bitmap cell {cx.index['b']:#x}")
    else:
        what = "head" if cx.index["t"] == 0 else f"tail {cx.index['t']}"
        star = "*" if "page" in free else " "
        out += fill(f"{star} page: compound {cx.index['c']}, {what} (pfn {cx.pfn:#x})", "  ",
                    "      ")
        if cx.seed_pfn is not None and cx.section_shift:
            sh = cx.section_shift
            out += fill(f"sections: pfn {cx.pfn:#x} is in section {cx.pfn >> sh:#x}; the "
                        f"first head {cx.seed_pfn:#x} (template seed) in section "
                        f"{cx.seed_pfn >> sh:#x}", "    ", "      ")
    for d in cx.diffs:
        out += field_lines(d, width)
    w("replayed concretely through both paths: the difference reproduces")
    return out


def render_explain(ex: Explanation) -> str:
    """``--explain FIELD``: per struct page role, the field's value on each side and the
    chain of modelled steps that wrote it (also when the role is proved)."""
    out = wrap(f"explain {ex.field}: config {ex.config}, revision {ex.revision}, {ex.ptype} "
               f"order {ex.order}")
    out += wrap("each role is run concretely on one input (its counterexample if refuted, "
                "else a small input allowed by the assumptions); steps oldest first", "  ")
    for r in ex.rows:
        out.append("")
        if "t" in r.index and r.role != "outside":
            where = "head" if r.index["t"] == 0 else f"tail {r.index['t']}"
        else:
            where = f"slot {r.index.get('t', 0)}"
        pfn = f", pfn {r.pfn:#x}" if r.pfn is not None else ""
        out += wrap(f"{r.role} (compound {r.index.get('c', 0)}, {where}{pfn}): "
                    f"{r.verdict.value}, {r.source} input")
        shown = ", ".join(f"{INPUT_NAMES[k]} {_value(v)}" for k, v in r.inputs.items()
                          if k in ("start_pfn", "nr_pages", "nid"))
        out += wrap(f"input: {shown}", "  ", "    ")
        out += ["  " + line for line in field_lines(r.field, WIDTH - 2)]
    return "\n".join(out) + "\n"


def render_text_many(runs: Sequence[RunResult], *, times: bool = True,
                     verbose: bool = False) -> str:
    """Several runs (``--config all``, ``--subject all``): one verdict line and a line per
    run first, so a mail starts with the whole answer; then each run's report."""
    if len(runs) == 1:
        return render_text(runs[0], times=times, verbose=verbose)
    out = [f"equiv {worst([r.verdict for r in runs]).value}: {len(runs)} runs"]
    for r in runs:
        out += wrap(f"{r.verdict.value:<8} {r.subject} {r.config.name}: {summary_line(r)}",
                    "  ", "           ")
    return "\n".join([*out, "", *(render_text(r, times=times, verbose=verbose) for r in runs)])

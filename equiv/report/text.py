"""Plain-text report of a proof run, fit for a reply on a mailing list.

Every line is at most :data:`WIDTH` (72) columns, with no colour and no box drawing.  The
summary line comes first; then what was checked (config, revision, assumptions), the matrix
(columns x rows, e.g. pgmap type x order), and for every obligation not proved: its reason
or its counterexample (in the subject's words: the run's
:class:`~equiv.engine.results.Presenter`), and one shell command that reproduces exactly
that obligation.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from equiv.engine.picture import ObjectBytes
from equiv.engine.results import CellResult, ObligationResult, RunResult
from equiv.engine.verdict import Verdict, worst

#: Column limit of every line of the text report (mail: 72).
WIDTH = 72


def wrap(text: str, indent: str = "", more: str | None = None, width: int = WIDTH) -> list[str]:
    """``text`` filled to ``width`` columns; continuation lines indented by ``more``
    (default: two spaces deeper than ``indent``).  A word is never split (a path, a
    ``file:line``, a command stay whole for copy and paste): one longer than the line
    stands alone on a line that is longer.

    >>> wrap("query: /root/.cache/equiv/unknown/equiv-unknown-vmap-e_trans-q462c.smt2",
    ...      "    ", width=40)
    ['    query:', '      /root/.cache/equiv/unknown/equiv-unknown-vmap-e_trans-q462c.smt2']
    """
    return textwrap.wrap(text, width, initial_indent=indent,
                         subsequent_indent=indent + "  " if more is None else more,
                         break_on_hyphens=False, break_long_words=False) or [indent.rstrip()]


def fit(text: str, width: int = WIDTH) -> str:
    """``text`` with every line longer than ``width`` wrapped: a table row continues under
    its last column that starts early enough (at most ``width - 24``) and leaves room for
    the row's longest word, other lines two spaces deeper than they start.  Lines that fit
    are left as they are, and a word is never split (:func:`wrap`).

    >>> print(fit("v4a   80 PROVED  inline: fall-through 16@64 16@48 16@32 16@16 16@0 "
    ...           "[nt8 x10]", 48))
    v4a   80 PROVED  inline: fall-through 16@64
                     16@48 16@32 16@16 16@0 [nt8
                     x10]
    >>> print(fit("  matches  init_page_count                   "
    ...           "include/linux/page_ref.h:113"))
      matches  init_page_count
               include/linux/page_ref.h:113
    >>> print(fit("    " + "/".join(["compound_head"] * 6) + " @8", 40))
        compound_head/compound_head/compound_head/compound_head/compound_head/compound_head
          @8
    """
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        longest = max(len(w) for w in line.split())
        cols = [m.end() for m in re.finditer(r"\S {2,}(?=\S)", line)
                if m.end() <= min(width - 24, width - longest)]
        more = " " * (cols[-1] if cols else min(lead + 2, width - 24))
        out += textwrap.wrap(line[lead:], width, initial_indent=line[:lead],
                             subsequent_indent=more, break_on_hyphens=False,
                             break_long_words=False, replace_whitespace=False)
    return "\n".join(out)


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
    ptype = run.presenter.column_name(cell.ptype)
    cfg = run.config_arg
    what = run.presenter.revision_option(run.revision)
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
    return run.presenter.title(run)


def _header(run: RunResult, times: bool) -> list[str]:
    out: list[str] = []
    head = f"equiv {run.tool_version} ({run.solver_version})" if times else "equiv"
    out += wrap(f"{head}: {title(run)}")
    hyp = f" [HYPOTHETICAL: {run.config.hypothetical_note}]" if run.config.hypothetical else ""
    note = f" ({run.config.header_note})" if run.config.header_note else ""
    out += wrap(f"config {run.config.name}{hyp}{note}")
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
    head = run.row_label[:5].ljust(7) + "".join(run.presenter.column_name(t).ljust(width)
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
            cls = _row_class(present)
            if cls is not None and o != cls[0]:  # the class's one proof, timed on its first row
                line += '      "'
            else:
                line += f"{secs:6.2f}s{'=' if shared else ''}"
        out.append(line.rstrip())
    return out


def _row_class(cells: Sequence[CellResult]) -> tuple[int, int] | None:
    """The class of rows the cells of one row were proved with (None: not one class)."""
    classes = {c.row_class for c in cells}
    return classes.pop() if len(classes) == 1 else None


def row_classes(run: RunResult) -> list[tuple[int, int]]:
    """The classes of rows of ``run`` proved by one proof each, in row order."""
    return sorted({c.row_class for c in run.cells if c.row_class is not None})


def render_text(run: RunResult, *, times: bool = True, verbose: bool = False) -> str:
    """The report: summary line, what was checked, the matrix, every non-proved obligation
    in detail (every obligation with ``verbose``)."""
    out: list[str] = []
    cached = sum(c.cached for c in run.cells)
    from_cache = f", {cached} cell{'s' * (cached != 1)} from the cache" if cached else ""
    jobs = f"{run.jobs} job{'s' * (run.jobs != 1)}"
    tail = f" (wall {run.wall_seconds:.1f} s, {jobs}{from_cache})" if times else ""
    if len(summary_line(run) + tail) <= WIDTH:
        out.append(summary_line(run) + tail)
    else:  # the summary whole on the first line (`head -1`), the times under it
        out += wrap(summary_line(run))
        out += wrap(tail.strip(), "  ")
    refuted = sorted({c.order for c in run.cells if c.verdict is Verdict.REFUTED})
    if refuted:
        out += wrap(f"smallest {run.row_label} with a counterexample: {refuted[0]}")
    out.append("")
    out += _header(run, times)
    out.append("")
    out += _matrix(run, times)
    if any(c.all_types for c in run.cells):
        out += wrap(run.presenter.all_columns_note("text", times))
    if row_classes(run):
        out += wrap(run.presenter.row_class_note(row_classes(run), "text", times))
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
            out += obligation_lines(run, ob, times, "  ")
            if ob.verdict is Verdict.REFUTED:
                pic = run.presenter.picture(run, c, ob)
                if pic is not None and pic.bytes is not None and pic.bytes.diff_offsets:
                    sides = ("initial", *run.presenter.sides)
                    out += ["    " + line for line in hexdump_lines(pic.bytes, WIDTH - 4, sides)]
            if ob.verdict is not Verdict.PROVED and run.presenter.repro_alone(ob):
                out.append("    reproduce:")
                out += command_lines(repro_command(run, c, ob.name), "      ")
            elif ob.verdict is Verdict.REFUTED:  # a loop lemma: with its whole cell
                out.append("    reproduce:")
                out += command_lines(repro_command(run, c), "      ")
    return "\n".join(out) + "\n"


def obligation_lines(run: RunResult, ob: ObligationResult, times: bool,
                     indent: str = "") -> list[str]:
    """One obligation: verdict, name, what it is about; reason, coverage, counterexample."""
    t = f" {ob.seconds:.3f}s" if times else ""
    out = wrap(f"{ob.verdict.value} {ob.name}{t}", indent)
    about = run.presenter.role_description(ob)
    if about:
        out += wrap(about, indent + "  ")
    if ob.reason:
        out += wrap(ob.reason, indent + "  ")
    if ob.coverage:
        out += wrap(f"shown satisfiable first: {'; '.join(ob.coverage)}", indent + "  ")
    if ob.counterexample is not None:
        pad = indent + "  "
        out += [pad + line for line in
                run.presenter.counterexample_lines(ob.counterexample, WIDTH - len(pad))]
    return out


def hexdump_lines(obj: ObjectBytes, width: int = WIDTH,
                  names: tuple[str, str, str] = ("initial", "slow", "fast")) -> list[str]:
    """The initial, slow and fast bytes of ``obj`` side by side, in memory order, two bytes
    to a group, with a line of ``^`` under every byte in which slow and fast differ (after
    each row that has one).  Rows of :attr:`ObjectBytes.row` bytes, halved until a row fits
    in ``width`` columns (8 bytes take 67).  ``names``: the three columns' headings (a
    ``--patch`` report's are initial, base and patched).

    >>> from equiv.engine.picture import ObjectBytes
    >>> print("\\n".join(hexdump_lines(ObjectBytes("cell 0x2", b"\\x00\\x07", b"\\x01\\x07",
    ...                                                 b"\\x02\\x07", ()))))
    cell 0x2, 2 bytes in memory order; ^ under each byte in which slow and
      fast differ; initial: arbitrary memory (any contents), the bytes the
      solver picked
    off   initial  slow     fast
    0x00  0007     0107     0207
                   ^^       ^^
    """
    diff = obj.diff_offsets
    per = obj.row
    off_w = max(4, len(f"{max(0, obj.size - 1):#x}"))

    def cols(n: int) -> int:  # the hex of n bytes in groups of two
        return 2 * n + (n - 1) // 2

    def block_of(n: int) -> int:  # a side's column: its bytes, at least its name
        return max(cols(min(n, obj.size)), *map(len, names))

    while per > 1 and off_w + 3 * (2 + block_of(per)) > width:
        per //= 2
    block = block_of(per)
    out = wrap(f"{obj.title}, {obj.size} byte{'s' * (obj.size != 1)} in memory order; ^ "
               f"under each byte in which {names[1]} and {names[2]} differ; {names[0]}: "
               "arbitrary memory (any contents), the bytes the solver picked", width=width)
    out.append(("off".ljust(off_w) + "".join("  " + n.ljust(block) for n in names)).rstrip())
    for lo in range(0, obj.size, per):
        hi = min(lo + per, obj.size)
        line, marks = f"{lo:#0{off_w}x}", [" "] * (off_w + 3 * (2 + block))
        for side, data in enumerate((obj.initial, obj.slow, obj.fast)):
            line += "  "
            col = len(line)
            text = ""
            for i in range(lo, hi):
                if i > lo and (i - lo) % 2 == 0:
                    text += " "
                if side and i in diff:
                    marks[col + len(text)] = marks[col + len(text) + 1] = "^"
                text += f"{data[i]:02x}"
            line += text.ljust(block)
        out.append(line.rstrip())
        if any(lo <= i < hi for i in diff):
            out.append("".join(marks).rstrip())
    return out


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

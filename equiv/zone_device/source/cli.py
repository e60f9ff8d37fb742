"""``python -m equiv.proofs --linux PATH``: the model against a kernel source tree; with
``--patch FILE...`` or ``--against DIR``, a patch checked from its C text.

``--linux BASE --patch FILE...`` applies the patches to a private copy of BASE's files
(:func:`equiv.linux.patch.prepare`, in a temporary directory; BASE is only read) and
``--linux BASE --against PATCHED`` takes a second tree; either way the definitions the
patched tree changes are listed (:func:`equiv.linux.patch.touched_functions`) and both
trees' ``memmap_init_zone_device()`` are proved equal from their text for every ``--types``
and ``--orders`` cell (:func:`equiv.zone_device.source.patchproof.run_patch_proof`; orders 0..18 by
default), reported by :mod:`equiv.zone_device.source.patch_present` in ``--format`` text, json, sarif,
junit, html or markdown (and any ``--report FORMAT=FILE``).  Exit codes: 0 proved, 1 refuted, 2 unknown or
vacuous, 3 bad input.  A touched function neither tree runs is listed, not a verdict.

Without them, it prints, in this order: the drift report (every modelled function, struct and enum located in
the tree by file and line, and compared with what the model mirrors), the struct page /
folio layout computed from the tree's mm_types.h against the model's, then the source-derived
proof (:mod:`equiv.zone_device.source.fidelity`), its cells in ``--jobs`` worker processes (default: every
core).  Exit codes as for proofs: 0 no drift and every obligation proved; 1 drift or a
counterexample, even when some obligation is also unknown (:func:`linux_exit`); 2 unknown
or vacuous without drift; 3 bad input.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from attrs import evolve

from equiv.config import Config
from equiv.engine.errors import InputError, parse_ranges
from equiv.engine.verdict import EXIT, Verdict
from equiv.linux.patch import FILE_SCOPE, Patch, Touched
from equiv.memmap import MemoryType, parse_types
from equiv.page_model import Layout
from equiv.report.progress import progress
from equiv.zone_device.source.drift import DriftReport, drift_report
from equiv.zone_device.source.fidelity import MAX_ORDER, MODELS, model_for, run_fidelity, setup
from equiv.zone_device.source.files import load_tree
from equiv.zone_device.source.present import render_linux_json, render_linux_text
from equiv.zone_device.source.src_layout import SrcLayoutReport, compare_with_model

if TYPE_CHECKING:
    from equiv.zone_device.source.patch_present import PatchStep
    from equiv.zone_device.source.patchproof import PatchRun


def _orders(spec: str) -> list[int]:
    """The orders of ``--orders`` for ``--linux``: ``all`` or ranges within 0..MAX_ORDER."""
    if spec == "all":
        return list(range(MAX_ORDER + 1))
    return parse_ranges(spec, 0, MAX_ORDER, "--orders", "order",
                        " with --linux (the PUD order with 4K pages)", words=("all",))


def _types(spec: str) -> list[MemoryType | None]:
    """The pgmap types of ``--types`` for ``--linux`` (names as :func:`parse_types` reads).

    Unlike the model's runs, where ``all`` is one cell per type, ``--linux`` proves ``all``
    with a single cell whose ``pgmap->type`` is symbolic (None): one proof covers all five
    types.  A list of names is one cell per named type, as elsewhere.
    """
    types: list[MemoryType | None] = list(parse_types(spec))
    return [None] if spec == "all" else types


#: ``--solver`` with ``--linux``: who decides the queries z3's incremental core is slow on
#: (the loop lemmas' conjuncts: ``solvers.FIRST_SOLVER``)
LINUX_SOLVERS = {"bitwuzla": "the default: Bitwuzla first where z3 is slow, then z3",
                 "z3": "z3 alone"}


def second_solver(args: argparse.Namespace) -> None:
    """Set :data:`equiv.engine.solvers.FIRST_SOLVER` from ``--solver`` for a ``--linux`` run
    (before its workers fork: they inherit it), or raise the one-line input error that
    names the valid choices."""
    from equiv.engine import solvers

    name = getattr(args, "solver", None) or "bitwuzla"
    if name not in LINUX_SOLVERS:
        raise InputError(f"--solver {name!r} with --linux; valid: "
                         + "; ".join(f"{k} ({v})" for k, v in LINUX_SOLVERS.items()))
    solvers.FIRST_SOLVER = None if name == "z3" else name


def run_linux(args: argparse.Namespace, cfg: Config, emit: Callable[[str], None],
              err: TextIO | None = None) -> int:
    """Run ``--linux`` for one configuration; ``emit`` writes the report (to ``--output`` or
    the standard output: the command line's writer), ``err`` shows the progress (on a
    terminal, unless ``--quiet``).  Returns the exit code."""
    from equiv.zone_device.source.prepared import as_prepared

    second_solver(args)
    if getattr(args, "patch", None) or getattr(args, "against", None) is not None:
        return run_patch(args, cfg, emit, err)
    if args.format not in LINUX_FORMATS:
        raise InputError(f"--linux reports in {', '.join(LINUX_FORMATS)}, not --format "
                         f"{args.format!r}")
    tree = load_tree(args.linux)
    name = args.compare if args.compare in MODELS else None
    if args.compare is not None and name is None:
        raise InputError(f"--compare {args.compare!r} has no hand-written model to check a tree "
                         f"against; valid with --linux: {', '.join(MODELS)}")
    # the configuration as the tree prepares it: its headers, and the model's booleans
    # where make olddefconfig set them otherwise than asked
    cfg, notes = as_prepared(tree, cfg)
    model = model_for(tree, name)
    st = setup(tree, cfg, model)
    layout = model.layout(Layout.from_config(cfg))
    drift = evolve(drift_report(tree, st.env, model.name, cfg.name, layout, st.structs),
                   kbuild=notes)
    lay = compare_with_model(layout, st.structs)
    jobs = _jobs(args)
    run = run_fidelity(st, _types(args.types), _orders(args.orders), timeout_ms=args.timeout_ms,
                       jobs=jobs, backstop_s=args.backstop_s)
    times = not args.no_times
    if args.format in ("html", "markdown"):
        from equiv.report.html import render_html
        from equiv.report.markdown import render_markdown_many
        from equiv.zone_device.source.patch_views import linux_run

        view = linux_run(run, _linux_command(args), _linux_notes(drift, lay))
        text = (render_html([view], times=times) if args.format == "html"
                else render_markdown_many([view], times=times))
    elif args.format == "json":
        text = render_linux_json(drift, lay, run, times=times)
    else:
        text = render_linux_text(drift, lay, run, times=times)
    emit(text)
    return linux_exit(run.verdict, drift.ok)


#: the formats of a --linux report (with --patch/--against: patch_present.PATCH_FORMATS)
LINUX_FORMATS = ("text", "json", "html", "markdown")


def _linux_command(args: argparse.Namespace) -> str:
    """``python -m equiv.proofs --linux TREE`` with the options that choose the model and
    the configuration (a cell adds --types and --orders)."""
    parts = ["python", "-m", "equiv.proofs", "--linux", str(args.linux)]
    if args.compare is not None:
        parts += ["--compare", args.compare]
    return shlex.join([*parts, *_config_and_budget(args)])


def _config_and_budget(args: argparse.Namespace) -> list[str]:
    """The options of a re-run command that choose the configuration and the budget, where
    they are not the defaults."""
    parts: list[str] = []
    if getattr(args, "kconfig", None) is not None:
        parts += ["--kconfig", str(args.kconfig)]
    elif getattr(args, "config", "x86_64-default") != "x86_64-default":
        parts += ["--config", args.config]
    if args.timeout_ms != 60_000:
        parts += ["--timeout-ms", str(args.timeout_ms)]
    if getattr(args, "solver", None) not in (None, "bitwuzla"):
        parts += ["--solver", args.solver]
    return parts


def _linux_notes(drift: DriftReport, lay: SrcLayoutReport) -> list[str]:
    """The drift and layout findings of a --linux run, one line each, for the html and
    markdown reports (the text and JSON reports have sections of their own)."""
    bad = [r for r in drift.rows if r.verdict != "matches"]
    out = [f"known difference: the tree drifts from the modelled {drift.model} in {r.name} "
           f"({r.where or '-'}): model {r.model_stmt}; tree {r.tree_stmt}" for r in bad]
    if not bad:
        out.append(f"known difference: none; all {len(drift.rows)} modelled definitions match "
                   f"{drift.model}")
    out += [f"known difference: layout {r.struct} {r.view}: model @{r.model[0]} size "
            f"{r.model[1]}, tree " + (f"@{r.tree[0]} size {r.tree[1]}" if r.tree else "absent")
            for r in lay.rows if r.verdict != "matches"]
    return out


def linux_exit(verdict: Verdict, drift_ok: bool) -> int:
    """The exit code of a ``--linux`` run: 1 when the tree drifted from the model or a
    counterexample was found, whatever else was UNKNOWN (a drift or a refutation is a
    finding, which an undecided obligation does not take back); else 2 when an obligation
    is UNKNOWN or VACUOUS; else 0.

    >>> linux_exit(Verdict.UNKNOWN, drift_ok=False), linux_exit(Verdict.UNKNOWN, drift_ok=True)
    (1, 2)
    >>> linux_exit(Verdict.PROVED, drift_ok=False), linux_exit(Verdict.REFUTED, drift_ok=True)
    (1, 1)
    """
    if not drift_ok:
        return EXIT[Verdict.REFUTED]
    return EXIT[verdict]


# ---- --patch / --against -------------------------------------------------------------------


def _patch_orders(spec: str) -> list[int]:
    """The orders of ``--orders`` with ``--patch``/``--against``: ``all`` (0..18) or ranges
    within 0..18 (the PUD order with 4K pages)."""
    from equiv.zone_device.source.patchproof import MAX_ORDER as PATCH_MAX_ORDER

    if spec == "all":
        return list(range(PATCH_MAX_ORDER + 1))
    return parse_ranges(spec, 0, PATCH_MAX_ORDER, "--orders", "order",
                        " with --patch/--against (the PUD order with 4K pages)", words=("all",))


def _ran(interpreted: tuple[tuple[str, str], ...]) -> set[tuple[str, str]]:
    """The definitions a run interpreted as (name, file): from its ``("side: name",
    "file:line")`` pairs."""
    return {(n.split(": ", 1)[-1], w.rsplit(":", 1)[0]) for n, w in interpreted}


def _status(t: Touched, ran: set[tuple[str, str]]) -> str:
    """What the proof did with a touched definition (a key of patch_present.STATUSES): a
    function or macro is interpreted only if the run ran that definition, by name and file
    (``memcpy_nontemporal`` of arch/x86/include/asm/string_64.h is not the one of
    include/linux/string.h)."""
    if t.name == FILE_SCOPE:
        return "file-scope"
    if t.what in ("function", "macro"):
        return "interpreted" if (t.name, t.file) in ran else "outside"
    return "type-read" if t.name in TYPES_READ else "type-unread"


#: struct and enum definitions the source tooling reads: struct page and folio (the layout,
#: clang's: equiv.zone_device.source.ctyped), enum memory_type and pageflags (values, from the text)
TYPES_READ = frozenset({"struct page", "struct folio", "enum memory_type", "enum pageflags"})


def _command(args: argparse.Namespace) -> str:
    """``python -m equiv.proofs`` with the options that choose the trees and the
    configuration (the cell's --types and --orders are added per cell)."""
    parts = ["python", "-m", "equiv.proofs", "--linux", str(args.linux)]
    for p in args.patch or ():
        parts += ["--patch", p]
    if args.against is not None:
        parts += ["--against", str(args.against)]
    if getattr(args, "per_patch", False):
        parts.append("--per-patch")
    return shlex.join([*parts, *_config_and_budget(args)])


def _jobs(args: argparse.Namespace) -> int:
    """``--jobs``, else every core."""
    return int(getattr(args, "jobs", None) or os.cpu_count() or 1)


def _series(args: argparse.Namespace, base: Path, cfg: Config,
            types: list[MemoryType | None], orders: list[int], dest: Path,
            label: str, advance: Callable[[int], None]) -> tuple[PatchRun, tuple[PatchStep, ...]]:
    """``--per-patch``: the series against BASE and each patch against the tree before it,
    on the same cells, each cell's trees interpreted once and the series proved by
    transitivity where every patch is (:func:`~equiv.zone_device.source.patchproof.run_series_proof`).
    A patch that changes no file equiv reads (:data:`FILES`) leaves the text the proof
    interprets as it was: it is equal to the tree before it without a query, and is no step
    of the chain."""
    from equiv.linux.patch import compare_trees, diff_trees, prepare_steps
    from equiv.zone_device.source.files import FILES
    from equiv.zone_device.source.patch_present import PatchStep, TouchedRow
    from equiv.zone_device.source.patchproof import run_patch_proof, run_series_proof

    trees = prepare_steps(base, FILES, [Path(p) for p in args.patch], dest)
    jobs = _jobs(args)
    chain: list[Path] = [base]
    changes = []
    for applied in trees:
        diffs = diff_trees(chain[-1], applied.root, FILES)
        changes.append(diffs)
        if diffs:
            chain.append(applied.root)
    cells = len(types) * len(orders)
    if len(chain) == 1:  # no patch changes a file equiv reads: the series as one pair
        series = run_patch_proof(base, trees[-1].root, cfg, types, orders, label=label,
                                 timeout_ms=args.timeout_ms, jobs=jobs, on_done=advance,
                                 backstop_s=args.backstop_s)
        advance(cells * len(trees))
        runs: list[PatchRun] = []
    else:
        advance(cells * (len(trees) + 1 - len(chain)))  # the patches that change nothing
        sr = run_series_proof(chain, cfg, types, orders,
                              labels=[a.patches[-1].label for a, d in zip(trees, changes,
                                                                          strict=True) if d],
                              series_label=label, timeout_ms=args.timeout_ms, jobs=jobs,
                              on_done=advance, backstop_s=args.backstop_s)
        series, runs = sr.series, list(sr.steps)
    out: list[PatchStep] = []
    before = base
    for k, (applied, diffs) in enumerate(zip(trees, changes, strict=True), 1):
        patch = applied.patches[-1]
        if not diffs:
            out.append(PatchStep(number=k, patch=patch, touched=(), run=None))
            continue
        run = runs.pop(0)
        ran = _ran(run.interpreted)
        touched = tuple(TouchedRow(t, _status(t, ran))
                        for t in compare_trees(before, applied.root, FILES))
        out.append(PatchStep(number=k, patch=patch, touched=touched, run=run,
                             changed=tuple((f.path, f.patched_lines) for f in diffs)))
        before = applied.root
    return series, tuple(out)


def run_patch(args: argparse.Namespace, cfg: Config, emit: Callable[[str], None],
              err: TextIO | None = None) -> int:
    """``--linux BASE --patch FILE...`` or ``--linux BASE --against PATCHED``: prove the
    patched tree's memmap_init_zone_device() equal to BASE's, report, return the exit code.
    On ``err``, if a terminal and not ``--quiet``, a progress bar of the cells (with
    ``--per-patch``, the series' and every patch's) with tqdm's estimate of the time left."""
    from equiv.linux.patch import (
        compare_trees,
        cover_letters,
        diff_trees,
        prepare,
        touched_functions,
    )
    from equiv.zone_device.source.files import FILES
    from equiv.zone_device.source.patch_present import PATCH_FORMATS, PatchReport, TouchedRow
    from equiv.zone_device.source.patch_views import render as render_patch
    from equiv.zone_device.source.patchproof import run_patch_proof
    from equiv.zone_device.source.prepared import as_prepared

    if args.format not in PATCH_FORMATS:
        raise InputError(f"--linux with --patch/--against reports in {', '.join(PATCH_FORMATS)}, "
                         f"not --format {args.format!r}")
    reports = [tuple(spec.partition("=")[::2]) for spec in getattr(args, "report", [])]
    for fmt, _ in reports:
        if fmt not in PATCH_FORMATS:
            raise InputError(f"--report {fmt}=...: --patch/--against reports in "
                             f"{', '.join(PATCH_FORMATS)}")
    if args.compare is not None:
        raise InputError("--compare picks a hand-written model for --linux alone; with "
                         "--patch/--against the two trees are compared with each other")
    orders = _patch_orders(args.orders)
    types = _types(args.types)
    base = Path(args.linux)
    jobs = _jobs(args)
    base_tree = load_tree(base)
    # the configuration as the tree prepares it: its headers, and the model's booleans
    # where make olddefconfig set them otherwise than asked
    cfg, notes = as_prepared(base_tree, cfg)
    with tempfile.TemporaryDirectory(prefix="equiv-patched-") as tmp:
        if args.against is not None:
            root = Path(args.against)
            patches: tuple[Patch, ...] = ()
            touched = compare_trees(base, root, FILES)
            outside_files: tuple[str, ...] = ()
            covers: tuple[str, ...] = ()
            changes = diff_trees(base, root, FILES)
        else:
            applied = prepare(base, FILES, [Path(p) for p in args.patch], Path(tmp) / "tree")
            covers = tuple(c for p in args.patch for c in cover_letters(Path(p)))
            root, patches = applied.root, applied.patches
            touched = touched_functions(base_tree, load_tree(root), applied)
            outside_files = tuple(f for f in applied.paths if f not in FILES)
            changes = applied.files
        patched_tree = load_tree(root)
        per = bool(getattr(args, "per_patch", False))
        total = len(types) * len(orders) * (1 + (len(patches) if per else 0))
        with progress(total, err if err is not None else sys.stderr,
                      enabled=err is not None and not getattr(args, "quiet", False)) as advance:
            label = (str(args.against) if args.against is not None
                     else "; ".join(p.label for p in patches))
            steps: tuple[PatchStep, ...] = ()
            if per:
                run, steps = _series(args, base, cfg, types, orders, Path(tmp) / "steps",
                                     label, advance)
            else:
                run = run_patch_proof(base, root, cfg, types, orders, label=label,
                                      timeout_ms=args.timeout_ms, jobs=jobs, on_done=advance,
                                      backstop_s=args.backstop_s)
    ran = _ran(run.interpreted)
    # a file another unit's definition was run from (6.1's mm/page_alloc.c, followed from
    # memmap_init_zone_device()) is read, whatever FILES lists
    followed = {f for _, f in ran} & set(outside_files)
    read = (*FILES, *sorted(followed))
    outside_files = tuple(f for f in outside_files if f not in followed)
    rep = PatchReport(
        base=str(args.linux), base_version=base_tree.version, patches=tuple(patches),
        against=None if args.against is None else str(args.against),
        patched_version=patched_tree.version, config=cfg.name, hypothetical=cfg.hypothetical,
        orders=tuple(orders), types="all" if args.types == "all" else ",".join(
            t.name for t in types if t is not None),
        touched=tuple(TouchedRow(t, _status(t, ran)) for t in touched),
        files_outside=outside_files, files_read=read, run=run, command=_command(args),
        steps=steps, changed=tuple((f.path, f.patched_lines) for f in changes),
        kbuild=notes, covers=covers)
    code = EXIT[rep.verdict]
    times = not args.no_times
    for fmt, path in reports:
        try:
            with open(path, "w") as f:
                f.write(render_patch(fmt, rep, times=times, exit_code=code))
        except OSError as e:
            raise InputError(f"cannot write --report {fmt} {path!r}: {e.strerror}") from None
    emit(render_patch(args.format, rep, times=times, exit_code=code))
    return code


__all__ = ["LINUX_FORMATS", "TYPES_READ", "run_linux", "run_patch"]

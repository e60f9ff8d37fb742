"""``python -m equiv.proofs --linux PATH``: the model against a kernel source tree.

Prints, in this order: the drift report (every modelled function, struct and enum located in
the tree by file and line, and compared with what the model mirrors), the struct page /
folio layout computed from the tree's mm_types.h against the model's, then the source-derived
proof (:mod:`equiv.source.fidelity`), its cells in ``--jobs`` worker processes (default: every
core).  Exit codes as for proofs: 0 no drift and every obligation proved; 1 drift or a
counterexample; 2 unknown or vacuous; 3 bad input.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from equiv.config import Config
from equiv.engine.errors import InputError, parse_ranges
from equiv.engine.verdict import EXIT
from equiv.memmap import MemoryType, parse_types
from equiv.page_model import Layout
from equiv.source.drift import drift_report
from equiv.source.fidelity import MAX_ORDER, MODELS, model_for, run_fidelity, setup
from equiv.source.files import load_tree
from equiv.source.present import render_linux_json, render_linux_text
from equiv.source.src_layout import compare_with_model


def _orders(spec: str) -> list[int]:
    """The orders of ``--orders`` for ``--linux``: ``all`` or ranges within 0..MAX_ORDER."""
    if spec == "all":
        return list(range(MAX_ORDER + 1))
    return parse_ranges(spec, 0, MAX_ORDER, "--orders", "order",
                        " with --linux (the source-derived proof is bounded; unbounded proofs "
                        "stay on the model)", words=("all",))


def _types(spec: str) -> list[MemoryType | None]:
    """The pgmap types of ``--types`` for ``--linux`` (names as :func:`parse_types` reads).

    Unlike the model's runs, where ``all`` is one cell per type, ``--linux`` proves ``all``
    with a single cell whose ``pgmap->type`` is symbolic (None): one proof covers all five
    types.  A list of names is one cell per named type, as elsewhere.
    """
    types: list[MemoryType | None] = list(parse_types(spec))
    return [None] if spec == "all" else types


def run_linux(args: argparse.Namespace, cfg: Config, emit: Callable[[str], None]) -> int:
    """Run ``--linux`` for one configuration; ``emit`` writes the report (to ``--output`` or
    the standard output: the command line's writer).  Returns the exit code."""
    if args.format not in ("text", "json"):
        raise InputError(f"--linux reports in text or json, not --format {args.format!r}; "
                         "valid: text, json")
    tree = load_tree(args.linux)
    name = args.compare if args.compare in MODELS else None
    if args.compare is not None and name is None:
        raise InputError(f"--compare {args.compare!r} has no hand-written model to check a tree "
                         f"against; valid with --linux: {', '.join(MODELS)}")
    model = model_for(tree, name)
    st = setup(tree, cfg, model)
    layout = model.layout(Layout.from_config(cfg))
    drift = drift_report(tree, st.env, model.name, cfg.name, layout, st.structs)
    lay = compare_with_model(layout, st.structs)
    jobs = getattr(args, "jobs", None) or os.cpu_count() or 1
    run = run_fidelity(st, _types(args.types), _orders(args.orders), timeout_ms=args.timeout_ms,
                       jobs=jobs)
    times = not args.no_times
    text = (render_linux_json(drift, lay, run, times=times) if args.format == "json"
            else render_linux_text(drift, lay, run, times=times))
    emit(text)
    code = EXIT[run.verdict]
    if not drift.ok and code == 0:
        code = 1
    return code


__all__ = ["run_linux"]

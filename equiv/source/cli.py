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
from typing import TextIO

from equiv.config import Config
from equiv.engine.errors import InputError
from equiv.engine.verdict import Verdict
from equiv.linux.ktree import KernelTree
from equiv.memmap import MemoryType
from equiv.page_model import Layout
from equiv.source.drift import drift_report
from equiv.source.fidelity import MAX_ORDER, MODELS, model_for, run_fidelity, setup
from equiv.source.present import render_linux_json, render_linux_text
from equiv.source.src_layout import compare_with_model

EXIT = {Verdict.PROVED: 0, Verdict.REFUTED: 1, Verdict.UNKNOWN: 2, Verdict.VACUOUS: 2}


def _orders(spec: str) -> list[int]:
    if spec == "all":
        return list(range(MAX_ORDER + 1))
    out: list[int] = []
    try:
        for part in spec.split(","):
            lo, _, hi = part.strip().partition("-")
            out += range(int(lo), (int(hi) if hi else int(lo)) + 1)
    except ValueError:
        raise InputError(f"bad --orders {spec!r} for --linux; valid: all, N, N-M or a comma "
                         f"list, 0 <= N <= {MAX_ORDER}") from None
    bad = [o for o in out if not 0 <= o <= MAX_ORDER]
    if bad:
        raise InputError(f"order {bad[0]} out of range for --linux; valid: 0..{MAX_ORDER} (the "
                         "source-derived proof is bounded; unbounded proofs stay on the model)")
    return list(dict.fromkeys(out))


def _types(spec: str) -> list[MemoryType | None]:
    if spec == "all":
        return [None]  # pgmap->type symbolic: one proof covers all five types
    out: list[MemoryType | None] = []
    for name in spec.split(","):
        key = name.strip().upper().removeprefix("MEMORY_DEVICE_")
        if key not in MemoryType.__members__:
            raise InputError(f"unknown pgmap type {name.strip()!r}; valid: "
                             f"{', '.join(t.name for t in MemoryType)}, all")
        out.append(MemoryType[key])
    return out


def run_linux(args: argparse.Namespace, cfg: Config, out: TextIO) -> int:
    """Run ``--linux`` for one configuration; returns the exit code."""
    if args.format not in ("text", "json"):
        raise InputError(f"--linux reports in text or json, not --format {args.format!r}; "
                         "valid: text, json")
    tree = KernelTree.load(args.linux)
    name = args.compare if args.compare in MODELS else None
    if args.compare is not None and name is None:
        raise InputError(f"--compare {args.compare!r} has no hand-written model to check a tree "
                         f"against; valid with --linux: {', '.join(MODELS)}")
    model = model_for(tree, name)
    st = setup(tree, cfg, model)
    layout = model.layout(Layout.from_config(cfg))
    drift = drift_report(tree, st.env, model.name, cfg.name, layout, st.structs)
    lay = compare_with_model(layout, st.structs)
    run = None
    if not getattr(args, "drift_only", False):
        jobs = getattr(args, "jobs", None) or os.cpu_count() or 1
        run = run_fidelity(st, _types(args.types), _orders(args.orders), timeout_ms=args.timeout_ms,
                           jobs=jobs)
    times = not args.no_times
    text = (render_linux_json(drift, lay, run, times=times) if args.format == "json"
            else render_linux_text(drift, lay, run, times=times))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        out.write(text)
    code = 0 if run is None else EXIT[run.verdict]
    if not drift.ok and code == 0:
        code = 1
    return code


__all__ = ["run_linux"]

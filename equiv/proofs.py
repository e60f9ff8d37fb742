"""``python -m equiv.proofs``: prove the template fast path equal to the slow path.

Exit codes:
  0  every obligation PROVED
  1  some obligation REFUTED (a replayed counterexample is printed)
  2  some obligation UNKNOWN or VACUOUS (never success), none refuted
  3  bad input or usage error (one line on stderr)
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn, TextIO

from attrs import evolve

from equiv.btf import Btf
from equiv.cache import Cache
from equiv.cache import default_dir as default_cache_dir
from equiv.check import Verdict, worst
from equiv.config import PRESETS, preset
from equiv.copy_primitive import (
    copy_matrix,
    copy_summary,
    ordering_table,
    render_copy_summary,
    render_ordering_table,
)
from equiv.errors import EquivError, InputError, lookup
from equiv.explain import explain, lookup_field
from equiv.kconfig import from_kconfig
from equiv.layout_check import check_layout
from equiv.matrix import COMPARE, CellSpec, RunResult, layout_note, resolve, run_cell, run_matrix
from equiv.memmap import MemoryType
from equiv.mutants import MUTANTS
from equiv.obligations import ROLES, roles_for
from equiv.page_model import Layout
from equiv.report import (
    FORMATS,
    render_explain,
    render_layout_json,
    render_layout_text,
    render_runs,
)
from equiv.report.emit import write_tests
from equiv.report.progress import progress
from equiv.selftest import self_test
from equiv.slow_variants import COMPARISONS, comparison
from equiv.solvers import require
from equiv.template_path import REVISIONS, revision

EXIT = {Verdict.PROVED: 0, Verdict.REFUTED: 1, Verdict.UNKNOWN: 2, Verdict.VACUOUS: 2}
EXIT_INPUT = 3
#: default z3 resource limit per query (the largest preset's hardest query uses ~1e8)
DEFAULT_RLIMIT = 1_000_000_000
#: default wall-clock limit per group of cells, seconds
DEFAULT_BACKSTOP_S = 900.0
#: page obligations --obligation can select (one per role of equiv.obligations.ROLES)
OBLIGATIONS = {f"{r}_equal": r for r in ROLES}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise InputError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m equiv.proofs",
        description="Prove, over a byte-precise model of struct page, that the template fast "
                    "path of 'mm: optimize zone-device memmap initialization' leaves every "
                    "struct page and the pageblock bitmap exactly as the slow path does.",
        epilog="exit codes: 0 all proved; 1 a counterexample; 2 unknown or vacuous; 3 bad input",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", default="x86_64-default",
                   help="configuration preset, or 'all' for every preset (default "
                        f"x86_64-default; valid: {', '.join(PRESETS)})")
    p.add_argument("--kconfig", default=None, metavar="PATH",
                   help="read the configuration from a kernel .config (plain or gzip, e.g. "
                        "/proc/config.gz) instead of a preset; arch constants a .config cannot "
                        "settle come from the arch preset and are printed as assumed")
    p.add_argument("--compare", default=None, metavar="NAME",
                   help="instead of a fast path, compare a slow-path variant with the base slow "
                        f"path ({', '.join(COMPARISONS)}): refactors claimed 'no functional "
                        "change', or an older kernel (differences listed as counterexamples)")
    p.add_argument("--observe-events", action="store_true",
                   help="also compare the page_ref_set tracepoint events (needs a DEBUG_PAGE_REF "
                        "config, e.g. --config x86_64-debug-page-ref): v11 copies emit none")
    p.add_argument("--copy-primitive", action="store_true",
                   help="prove the series' copy primitives (x86 memcpy_flushcache of v11, v5, v4) "
                        "write the same bytes as memcpy for every struct page size and alignment, "
                        "and print which revisions let another CPU see a stale page after a "
                        "publication store (x86-TSO with non-temporal stores)")
    p.add_argument("--self-test", action="store_true",
                   help="run every seeded-bug control and print the kill matrix; exit 1 if a "
                        "bug survives or an equivalent control is reported")
    p.add_argument("--btf", default=None, metavar="PATH",
                   help="instead of proving, compare the model's struct page / folio layout for "
                        "the chosen config (--config or --kconfig) with a kernel BTF blob such "
                        "as /sys/kernel/btf/vmlinux; exit 1 on any difference")
    p.add_argument("--linux", default=None, metavar="PATH",
                   help="check the model against a kernel source tree: drift report of every "
                        "modelled function, layout from mm_types.h, then the source-derived "
                        "proof (orders 0..4, up to 4 compounds; --compare v6.12 picks that "
                        "hand model); exit 1 on drift or a counterexample")
    p.add_argument("--revision", default="v11",
                   help=f"series revision (default v11; valid: {', '.join(REVISIONS)})")
    p.add_argument("--types", default="all",
                   help="comma-separated pgmap types (FS_DAX, PRIVATE, COHERENT, GENERIC, "
                        "PCI_P2PDMA) or 'all'")
    p.add_argument("--orders", default="all",
                   help="vmemmap_shift orders: 'all' (0..PUD order), N, N-M, or a comma list")
    p.add_argument("--mutant", default=None,
                   help="check a seeded-bug control instead of the revision as written "
                        "(see --list)")
    p.add_argument("--explain", default=None, metavar="FIELD",
                   help="print, for one pgmap type and order (--types T --orders N), the chain "
                        "of modelled kernel steps that wrote FIELD (a struct page member such "
                        "as _refcount, or folio.NAME) on each side in every page role, "
                        "proved or not")
    p.add_argument("--obligation", default=None, metavar="NAME",
                   help="check only this page obligation (and the loop lemmas it rests on): "
                        f"{', '.join(OBLIGATIONS)}")
    p.add_argument("--format", default="text",
                   help=f"report format: {', '.join(FORMATS)} (default text; --btf: text or "
                        "json; see docs/formats.md)")
    p.add_argument("--output", default=None, help="write the report to FILE instead of stdout")
    p.add_argument("--report", action="append", default=[], metavar="FORMAT=FILE",
                   help="also write the report in FORMAT to FILE (repeatable: one run, "
                        "several reports)")
    p.add_argument("--timeout-ms", type=int, default=60_000, help="per-query solver timeout")
    p.add_argument("--rlimit", type=int, default=DEFAULT_RLIMIT,
                   help="z3 resource limit per query: a deterministic budget, same verdict on "
                        f"any machine (exhausted: UNKNOWN; default {DEFAULT_RLIMIT:,}, about 10x "
                        "what the largest preset's hardest query uses); --timeout-ms and "
                        "--backstop-s are only wall-clock backstops")
    p.add_argument("--backstop-s", type=float, default=DEFAULT_BACKSTOP_S, metavar="SECONDS",
                   help="wall-clock limit per group of cells (one config, revision and "
                        "order): a worker past it is killed and its cells are UNKNOWN "
                        f"(default {DEFAULT_BACKSTOP_S:g}; runs the cells in worker processes)")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="result cache directory (default: the user's cache directory, "
                        f"{default_cache_dir()}); proved and refuted results are reused when "
                        "the exact queries and the tool are the same")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the cells on a Dask distributed cluster (e.g. tcp://host:8786; "
                        "needs pip install 'equiv[distributed]')")
    p.add_argument("--solver", default="z3",
                   help="who decides each query: z3 (default), cvc5, bitwuzla, or all (every "
                        "query by all three; a disagreement is UNKNOWN)")
    p.add_argument("--dump-smt", default=None, metavar="DIR",
                   help="write every query as an SMT-LIB 2 file into DIR (unsat = obligation "
                        "holds), for re-running with any solver")
    p.add_argument("--emit-tests", default=None, metavar="DIR",
                   help="write, for every counterexample, a pytest file replaying it through "
                        "the model and a KUnit-style C sketch of the expected struct page "
                        "words into DIR")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: cores)")
    p.add_argument("--no-times", action="store_true",
                   help="omit timings and versions (stable output for golden files)")
    p.add_argument("-v", "--verbose", action="store_true", help="list every obligation")
    p.add_argument("--quiet", action="store_true",
                   help="no progress display (otherwise shown on a terminal for runs over a "
                        "second)")
    p.add_argument("--list", action="store_true",
                   help="list configs, revisions (with their assumptions), types and mutants")
    return p


def _types(spec: str) -> list[MemoryType]:
    if spec == "all":
        return list(MemoryType)
    out = []
    valid = ", ".join(t.name for t in MemoryType)
    for name in spec.split(","):
        key = name.strip().upper().removeprefix("MEMORY_DEVICE_")
        if key not in MemoryType.__members__:
            raise InputError(f"unknown pgmap type {name.strip()!r}; valid: {valid}, all")
        out.append(MemoryType[key])
    return list(dict.fromkeys(out))


def _orders(spec: str, max_order: int, all_configs: bool = False) -> list[int]:
    if spec == "all":
        return list(range(max_order + 1))
    out: list[int] = []
    try:
        for part in spec.split(","):
            lo, _, hi = part.strip().partition("-")
            a, b = int(lo), int(hi) if hi else int(lo)
            if a > b:
                raise ValueError
            out += range(a, b + 1)
    except ValueError:
        raise InputError(f"bad --orders {spec!r}; valid: all, N, N-M or a comma list of those, "
                         f"with 0 <= N <= {max_order}") from None
    if all_configs:  # one order list for presets of different page sizes: clip per preset
        out = [o for o in out if 0 <= o <= max_order]
    bad = [o for o in out if not 0 <= o <= max_order]
    if bad:
        raise InputError(f"order {bad[0]} out of range; valid: 0..{max_order} (PUD order of the "
                         "config's page size)")
    return list(dict.fromkeys(out))


def _list(out: TextIO) -> None:
    out.write("configs:\n")
    for name, cfg in PRESETS.items():
        out.write(f"  {name}{' (hypothetical)' if cfg.hypothetical else ''}: {layout_note(cfg)}\n")
    out.write("revisions:\n")
    for name, rev in REVISIONS.items():
        out.write(f"  {name}: {rev.summary}\n")
        for a in rev.assumptions:
            out.write(f"    assumes: {a}\n")
    out.write("comparisons (--compare):\n")
    for c in COMPARISONS.values():
        out.write(f"  {c.name} ({c.claim}): {c.summary}\n")
    out.write("pgmap types: " + ", ".join(t.name for t in MemoryType) + "\n")
    out.write("mutants (seeded-bug controls):\n")
    for m in MUTANTS.values():
        out.write(f"  {m.name} [{m.config}]: {m.description}\n")


def _reports(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Check --format and the --report FORMAT=FILE options; the (format, file) pairs."""
    valid = ", ".join(FORMATS)
    aux = args.btf is not None or args.self_test or args.copy_primitive
    if args.format not in FORMATS:
        raise InputError(f"unknown --format {args.format!r}; valid: {valid}")
    if args.btf is not None and args.format not in ("text", "json"):
        raise InputError(f"--btf reports in text or json, not --format {args.format!r}; valid "
                         "with --btf: text, json")
    out: list[tuple[str, str]] = []
    for spec in args.report:
        fmt, eq, path = spec.partition("=")
        if not eq or not path:
            raise InputError(f"bad --report {spec!r}; give FORMAT=FILE with FORMAT one of {valid}")
        if fmt not in FORMATS:
            raise InputError(f"unknown --report format {fmt!r}; valid: {valid}")
        if aux:
            raise InputError("--report applies to proof runs, not to --btf, --self-test or "
                             "--copy-primitive; use --format and --output there")
        if path in [p for _, p in out] or path == args.output:
            raise InputError(f"--report {spec!r}: {path!r} is already written by another "
                             "--report or --output; give each report its own file")
        if not os.path.isdir(os.path.dirname(path) or "."):
            raise InputError(f"cannot write --report {spec!r}: no directory "
                             f"{os.path.dirname(path)!r}")
        out.append((fmt, path))
    return out


def _write(path: str, text: str, option: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"cannot write {option} {path!r}: {e.strerror}") from None


def _emit(args: argparse.Namespace, text: str, out: TextIO) -> None:
    if not args.output:
        out.write(text)
        return
    _write(args.output, text, "--output")


def main(argv: list[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Run the command; returns the exit code (see module docstring)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args = _parser().parse_args(argv)
        if args.list:
            _list(out)
            return 0
        if args.kconfig is not None:
            configs = [from_kconfig(args.kconfig)]
        elif args.config == "all":
            configs = list(PRESETS.values())
        else:
            configs = [preset(args.config)]
        if args.linux is not None:
            from equiv.linux_cli import run_linux
            if len(configs) != 1:
                raise InputError("--linux checks one configuration; give --kconfig PATH or a "
                                 f"--config preset (valid: {', '.join(PRESETS)})")
            return run_linux(args, configs[0], out)
        reports = _reports(args)
        if args.observe_events:
            if not all(c.DEBUG_PAGE_REF for c in configs):
                raise InputError("--observe-events needs a config with DEBUG_PAGE_REF (valid: "
                                 "--config x86_64-debug-page-ref, or a .config with "
                                 "CONFIG_DEBUG_PAGE_REF=y)")
            configs = [evolve(c, observe_events=True) for c in configs]
        if args.btf is not None:
            if len(configs) != 1:
                raise InputError("--btf compares one configuration; give --kconfig PATH or a "
                                 f"--config preset (valid: {', '.join(PRESETS)})")
            rep = check_layout(Layout.from_config(configs[0]), Btf.from_file(args.btf))
            _emit(args, render_layout_json(rep) if args.format == "json" else render_layout_text(rep),
                  out)
            return 0 if rep.ok else 1
        if args.copy_primitive:
            results = copy_matrix()
            text = ("byte equality with memcpy (sizes 56..96, every dst/src alignment):\n"
                    + render_copy_summary(copy_summary(results)) + "\n\n"
                    "publication of a non-temporally copied struct page (simplified x86-TSO "
                    "with non-temporal stores):\n"
                    + render_ordering_table(ordering_table(), witnesses=args.verbose) + "\n")
            _emit(args, text, out)
            return max(EXIT[r.verdict] for r in results)
        if args.self_test:
            st = self_test(args.jobs)
            _emit(args, st.render() + "\n", out)
            return 0 if st.ok else 1
        if args.compare is not None:
            comparison(args.compare)
            rev, _ = resolve(COMPARE + args.compare)
        else:
            rev = revision(args.revision)
        if args.mutant is not None:
            lookup(MUTANTS, args.mutant, "mutant")
        if args.obligation is not None:
            lookup(OBLIGATIONS, args.obligation, "obligation")
        if args.timeout_ms <= 0:
            raise InputError(f"--timeout-ms must be positive, got {args.timeout_ms}")
        if args.rlimit is not None and args.rlimit < 1:
            raise InputError(f"--rlimit must be positive, got {args.rlimit}")
        if args.jobs is not None and args.jobs < 1:
            raise InputError(f"--jobs must be at least 1, got {args.jobs}")
        require(args.solver)
        types = _types(args.types)
        per_config = [(cfg, _orders(args.orders, cfg.max_order, all_configs=len(configs) > 1))
                      for cfg in configs]
        if args.obligation is not None:
            for _, orders in per_config:
                missing = [o for o in orders if OBLIGATIONS[args.obligation]
                           not in {r.name for r in roles_for(o)}]
                if missing:
                    raise InputError(f"obligation {args.obligation} does not exist at order "
                                     f"{missing[0]}; valid there: "
                                     + ", ".join(f"{r.name}_equal" for r in roles_for(missing[0])))
        specs = [CellSpec(cfg, rev.name, t, o, args.mutant, args.timeout_ms, args.rlimit,
                          args.solver, args.dump_smt, args.obligation)
                 for cfg, orders in per_config for o in orders for t in types]
        if args.explain is not None:
            if len(specs) != 1:
                raise InputError("--explain traces one cell: give one config, one pgmap type "
                                 "and one order (e.g. --types GENERIC --orders 2); valid types: "
                                 + ", ".join(t.name for t in MemoryType))
            lookup_field(Layout.from_config(per_config[0][0]), args.explain)
            ex = explain(specs[0], args.explain, run_cell(specs[0]))
            _emit(args, render_explain(ex), out)
            return EXIT[worst([r.verdict for r in ex.rows])]
        if args.backstop_s <= 0:
            raise InputError(f"--backstop-s must be positive, got {args.backstop_s:g}")
        cache = None if args.no_cache else Cache(args.cache_dir or default_cache_dir())
        with progress(len(specs), err, enabled=not args.quiet) as advance:
            cells, wall, jobs = run_matrix(specs, args.jobs, on_done=advance, cache=cache,
                                           backstop_s=args.backstop_s, scheduler=args.scheduler)
        if cache is not None:
            for problem in dict.fromkeys(cache.problems):
                err.write(f"equiv: cache: {problem}\n")
        budget = ((f" --timeout-ms {args.timeout_ms}" if args.timeout_ms != 60_000 else "")
                  + (f" --rlimit {args.rlimit}" if args.rlimit != DEFAULT_RLIMIT else "")
                  + (f" --solver {args.solver}" if args.solver != "z3" else ""))
        runs = []
        for cfg, _ in per_config:
            mine = tuple(c for c in cells if c.config == cfg.name)
            runs.append(RunResult(
                config=cfg, revision=rev.name, mutant=args.mutant, cells=mine,
                wall_seconds=wall, jobs=jobs, layout_note=layout_note(cfg),
                choices=rev.assumptions, budget_args=budget,
                assumptions=next((c.assumptions for c in mine if c.assumptions), ()),
                revision_summary=rev.summary,
                mutant_description=MUTANTS[args.mutant].description if args.mutant else "",
                config_arg=f"--kconfig {args.kconfig}" if args.kconfig else f"--config {cfg.name}"))
        times = not args.no_times
        code = EXIT[worst([r.verdict for r in runs])]
        if args.emit_tests is not None:
            written = [path for r in runs for path in write_tests(r, args.emit_tests)]
            err.write(f"equiv: wrote {len(written)} test files to {args.emit_tests}\n")
        for fmt, path in reports:
            _write(path, render_runs(fmt, runs, times=times, verbose=args.verbose,
                                     exit_code=code), f"--report {fmt}")
        _emit(args, render_runs(args.format, runs, times=times, verbose=args.verbose,
                                exit_code=code), out)
        return code
    except InputError as e:
        err.write(f"equiv: error: {e}\n")
        return EXIT_INPUT
    except EquivError as e:
        err.write(f"equiv: internal error: {e}\n")
        return 2


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `... | head` ends quietly, no traceback
    sys.exit(main())

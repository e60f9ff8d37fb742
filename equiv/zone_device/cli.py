"""The zone-device subject's front: its options, its special modes (--btf,
--copy-primitive, --linux, --explain), its proof runs, and its registration
(:data:`SUBJECT`, named in :mod:`equiv.subjects`).

The subject itself is the top-level model (:mod:`equiv.page_model`, :mod:`equiv.slow_path`,
:mod:`equiv.template_path`, ...); this module only turns parsed options into
:class:`~equiv.zone_device.cell.CellSpec` cells and :class:`~equiv.engine.results.RunResult` runs,
checking the names they give against :mod:`equiv.zone_device.names`.
Importing it loads no model: the command line builds its parser from every subject's
options, and only the subject that runs imports its model (inside the functions below).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from attrs import evolve

from equiv.config import PRESETS, Config, preset
from equiv.engine import solvers
from equiv.engine.cache import Cache
from equiv.engine.errors import InputError, lookup, parse_ranges
from equiv.engine.options import Given, given
from equiv.engine.selftest import SelfTestResult
from equiv.engine.solvers import DEFAULT_RLIMIT
from equiv.engine.subject import RunContext, Subject
from equiv.engine.verdict import EXIT, exit_code
from equiv.zone_device import names

if TYPE_CHECKING:
    from equiv.engine.results import RunResult
    from equiv.zone_device.cell import CellSpec

#: the options only this subject has, with their defaults (other subjects refuse them)
OWN_OPTIONS: dict[str, object] = {
    "config": "x86_64-default", "kconfig": None, "compare": None, "observe_events": False,
    "copy_primitive": False, "btf": None, "linux": None, "types": "all", "orders": "all",
    "explain": None, "live": None, "live_from": None, "live_out": None, "live_setup": False,
    "live_kernel": None}
#: the --solver choices, the default first (every query can go to any of them: equiv.engine.solvers)
SOLVERS = (*solvers.SOLVERS, "all")

__all__ = ["OWN_OPTIONS", "SOLVERS", "SUBJECT", "add_arguments", "list_lines", "runs",
           "self_test", "self_test_notice", "special"]


def obligations() -> dict[str, str]:
    """The page obligations --obligation can select: ``<role>_equal`` -> role, one per role
    of :data:`equiv.zone_device.names.ROLES`."""
    return {f"{r}_equal": r for r in names.ROLES}


def _named(valid: tuple[str, ...], name: str, what: str) -> str:
    """``name`` if ``valid`` holds it, else :func:`~equiv.engine.errors.lookup`'s error."""
    return lookup(dict.fromkeys(valid, name), name, what)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The zone-device options."""
    g = p.add_argument_group("zone-device subject (the default)")
    g.add_argument("--config", default="x86_64-default", action=Given,
                   help="configuration preset, or 'all' for every preset (default "
                        f"x86_64-default; valid: {', '.join(PRESETS)})")
    g.add_argument("--kconfig", default=None, metavar="PATH",
                   help="read the configuration from a kernel .config (plain, or gzip, xz, "
                        "bzip2, zstd: /proc/config.gz, Debian's /usr/src/linux-config-*/*.xz) "
                        "instead of a preset; arch constants a .config cannot "
                        "settle come from the arch preset and are printed as assumed")
    g.add_argument("--compare", default=None, metavar="NAME",
                   help="instead of a fast path, compare a slow-path variant with the base slow "
                        "path (names: see --list): refactors claimed 'no functional "
                        "change', or an older kernel (differences listed as counterexamples)")
    g.add_argument("--observe-events", action="store_true",
                   help="also compare the page_ref_set tracepoint events (needs a DEBUG_PAGE_REF "
                        "config, e.g. --config x86_64-debug-page-ref): v11 copies emit none")
    g.add_argument("--copy-primitive", action="store_true",
                   help="prove the series' copy primitives (x86 memcpy_flushcache of v11, v5, v4) "
                        "write the same bytes as memcpy for every struct page size and alignment, "
                        "and print which revisions let another CPU see a stale page after a "
                        "publication store (x86-TSO with non-temporal stores)")
    g.add_argument("--btf", default=None, metavar="PATH",
                   help="instead of proving, compare the model's struct page / folio layout for "
                        "the chosen config (--config or --kconfig) with a kernel BTF blob such "
                        "as /sys/kernel/btf/vmlinux; exit 1 on any difference")
    g.add_argument("--linux", default=None, metavar="PATH",
                   help="check the model against a kernel source tree: drift report of every "
                        "modelled function, layout from mm_types.h, then the source-derived "
                        "proof (orders 0..18, any number of compounds, loops summarised on "
                        "both sides; --compare v6.12 picks that hand model); exit 1 on drift "
                        "or a counterexample")
    g.add_argument("--live", nargs="*", default=None, metavar="MODE-ALIGN-MAP",
                   help="instead of proving, boot Debian's 6.12.117 kernel (fetched into the "
                        "user's cache), create these pgmaps (pmem namespaces devdax/fsdax, or "
                        "coherent ones the dump module creates; default: devdax 4K/2M/1G "
                        "with --map dev and mem, fsdax 2M dev and mem, coherent 2M dev and "
                        "mem), dump their struct pages and pageblocks and compare every byte "
                        "with the model's prediction; exit 1 on a difference")
    g.add_argument("--live-kernel", default=None, metavar="KERNEL",
                   help="the kernel --live boots: 'debian' (the default: Debian's prebuilt "
                        "6.12.117, PRIVATE and PCI_P2PDMA off) or 'all-types' (a small "
                        "6.12.117 built from linux-source-6.12 into the user's cache, about "
                        "12 min on 2 cores the first time, reaching all five pgmap types; "
                        "with --patch FILE... built and checked a second time with the "
                        "series, and the two kernels' struct pages compared)")
    g.add_argument("--live-setup", action="store_true",
                   help="install every host tool --live needs (apt-get packages, and "
                        "virtme-ng pinned by this Python's pip), as root; otherwise print "
                        "the commands to run as root; exit 0 when all are present")
    g.add_argument("--live-from", default=None, metavar="DIR",
                   help="compare the dumps a previous --live run recorded in DIR (no boot)")
    g.add_argument("--live-out", default=None, metavar="DIR",
                   help="the run directory of --live (default: <cache>/equiv/live/runs/last)")
    g.add_argument("--types", default="all",
                   help="comma-separated pgmap types (FS_DAX, PRIVATE, COHERENT, GENERIC, "
                        "PCI_P2PDMA) or 'all'")
    g.add_argument("--orders", default="all",
                   help="vmemmap_shift orders: 'all' (0..PUD order), N, N-M, or a comma list")
    g.add_argument("--explain", default=None, metavar="FIELD",
                   help="print, for one pgmap type and order (--types T --orders N), the chain "
                        "of modelled kernel steps that wrote FIELD (a struct page member such "
                        "as _refcount, or folio.NAME) on each side in every page role, "
                        "proved or not")


def _orders(spec: str, max_order: int, all_configs: bool = False) -> list[int]:
    if spec == "all":
        return list(range(max_order + 1))
    if all_configs:  # one order list for presets of different page sizes: clip per preset
        top = max(cfg.max_order for cfg in PRESETS.values())
        wide = parse_ranges(spec, 0, top, "--orders", "order", " (the largest PUD order of "
                            "the presets)", words=("all",))
        return [o for o in wide if o <= max_order]
    return parse_ranges(spec, 0, max_order, "--orders", "order",
                        " (PUD order of the config's page size)", words=("all",))


def list_lines() -> list[str]:
    """``--list`` for this subject: configs, revisions with their assumptions, comparisons,
    pgmap types, seeded bugs."""
    from equiv.slow_variants import COMPARISONS
    from equiv.template_path import REVISIONS
    from equiv.zone_device.cell import layout_note
    from equiv.zone_device.mutants import MUTANTS

    out = ["configs:"]
    out += [f"  {name}{' (hypothetical)' if cfg.hypothetical else ''}: {layout_note(cfg)}"
            for name, cfg in PRESETS.items()]
    out.append("revisions:")
    for name, rev in REVISIONS.items():
        out.append(f"  {name}: {rev.summary}")
        out += [f"    assumes: {a}" for a in rev.assumptions]
    out.append("comparisons (--compare):")
    out += [f"  {c.name} ({c.claim}): {c.summary}" for c in COMPARISONS.values()]
    out.append("pgmap types: " + ", ".join(names.TYPES))
    out.append("obligations (--obligation): " + ", ".join(obligations()))
    out.append("mutants (seeded-bug controls):")
    out += [f"  {m.name} [{m.config}]: {m.description}" for m in MUTANTS.values()]
    from equiv.zone_device.source.patch_present import interpreter_support

    out += interpreter_support().splitlines()
    return out


def _configs(args: argparse.Namespace) -> list[Config]:
    if args.kconfig is not None:
        from equiv.config import from_kconfig

        if "config" in given(args):
            raise InputError(f"--config {args.config} and --kconfig {args.kconfig} both give the "
                             "configuration: give one of them")

        configs = [from_kconfig(args.kconfig)]
    elif args.config == "all":
        configs = list(PRESETS.values())
    else:
        configs = [preset(args.config)]
    if args.observe_events:
        if not all(c.DEBUG_PAGE_REF for c in configs):
            raise InputError("--observe-events needs a config with DEBUG_PAGE_REF (valid: "
                             "--config x86_64-debug-page-ref, or a .config with "
                             "CONFIG_DEBUG_PAGE_REF=y)")
        configs = [evolve(c, observe_events=True) for c in configs]
    return configs


def _one(configs: list[Config], option: str) -> Config:
    if len(configs) != 1:
        raise InputError(f"{option} checks one configuration; give --kconfig PATH or a "
                         f"--config preset (valid: {', '.join(PRESETS)})")
    return configs[0]


def special(args: argparse.Namespace, err: TextIO, emit: Callable[[str], None]) -> int | None:
    """The modes that are not a proof matrix (--live, --linux, --btf, --copy-primitive,
    --explain): run one and return its exit code, or None when none was asked for."""
    if args.live_setup:
        from equiv.engine.options import given
        from equiv.zone_device.live import host

        extra = sorted(given(args) - {"live_setup", "subject", "quiet"})
        if extra:
            raise InputError(f"--live-setup takes no other option, got --{extra[0].replace('_', '-')}")
        return host.setup(say=lambda line: print(line, file=err, flush=True))
    if args.live is not None or args.live_from is not None or args.live_out is not None or \
            args.live_kernel is not None:
        from equiv.zone_device.live.cli import run_live_cli

        return run_live_cli(args, emit)
    if args.linux is not None:
        from equiv.zone_device.source.cli import run_linux

        return run_linux(args, _one(_configs(args), "--linux"), emit, err)
    if args.btf is not None:
        from equiv.linux.btf import Btf
        from equiv.page_model import Layout
        from equiv.zone_device.source.layout_check import check_layout
        from equiv.zone_device.source.present import render_layout_json, render_layout_text

        cfg = _one(_configs(args), "--btf")
        btf = Btf.from_file(args.btf)
        found = btf.arch()
        if found is not None and found[0] != cfg.arch:
            raise InputError(f"--btf {args.btf} is the BTF of an {found[0]} kernel (it has "
                             f"{found[1]}), but the configuration {cfg.name} is {cfg.arch}; give "
                             "the --config or --kconfig of the kernel the BTF comes from")
        rep = check_layout(Layout.from_config(cfg), btf)
        emit(render_layout_json(rep) if args.format == "json" else render_layout_text(rep))
        return 0 if rep.ok else 1
    if args.copy_primitive:
        from equiv.report.text import fit
        from equiv.zone_device.copy.ordering import ordering_table
        from equiv.zone_device.copy.present import render_copy_summary, render_ordering_table
        from equiv.zone_device.copy.prover import copy_matrix, copy_summary

        results = copy_matrix()
        emit(fit("byte equality with memcpy (sizes 56..96, every dst/src alignment):\n"
                 + render_copy_summary(copy_summary(results)) + "\n\n"
                 "publication of a non-temporally copied struct page (simplified x86-TSO "
                 "with non-temporal stores):\n"
                 + render_ordering_table(ordering_table(), witnesses=args.verbose)) + "\n")
        return max(EXIT[r.verdict] for r in results)
    if args.explain is not None:
        from equiv.page_model import Layout
        from equiv.zone_device.cell import run_cell
        from equiv.zone_device.explain import explain, lookup_field
        from equiv.zone_device.present import render_explain

        specs, _, _ = _specs(args)
        if len(specs) != 1:
            raise InputError("--explain traces one cell: give one config, one pgmap type "
                             "and one order (e.g. --types GENERIC --orders 2); valid types: "
                             + ", ".join(names.TYPES))
        lookup_field(Layout.from_config(_configs(args)[0]), args.explain)
        ex = explain(specs[0], args.explain, run_cell(specs[0]))
        emit(render_explain(ex))
        return exit_code(r.verdict for r in ex.rows)
    return None


def _specs(args: argparse.Namespace) -> tuple[list[CellSpec], list[tuple[Config, list[int]]], str]:
    """The cells the options ask for, per configuration, and the revision's name."""
    from equiv.memmap import parse_types
    from equiv.zone_device.cell import CellSpec

    OBLIGATIONS = obligations()
    configs = _configs(args)
    if args.compare is not None:
        _named(names.COMPARISONS, args.compare, "--compare")
        if args.revision is not None:
            raise InputError("--compare replaces the fast path: give --compare NAME or "
                             "--revision NAME, not both")
        rev_name = names.COMPARE + args.compare
    else:
        rev_name = _named(names.REVISIONS, args.revision or names.DEFAULT_REVISION, "revision")
    if args.mutant is not None:
        _named(names.MUTANTS, args.mutant, "mutant")
    if args.obligation is not None:
        lookup(OBLIGATIONS, args.obligation, "obligation")
    types = parse_types(args.types)
    per_config = [(cfg, _orders(args.orders, cfg.max_order, all_configs=len(configs) > 1))
                  for cfg in configs]
    if args.obligation is not None:
        for _, orders in per_config:
            missing = [o for o in orders
                       if OBLIGATIONS[args.obligation] not in names.roles_at(o)]
            if missing:
                raise InputError(f"obligation {args.obligation} does not exist at order "
                                 f"{missing[0]}; valid there: "
                                 + ", ".join(f"{r}_equal" for r in names.roles_at(missing[0])))
    rlimit = DEFAULT_RLIMIT if args.rlimit is None else args.rlimit
    specs = [CellSpec(config=cfg, revision=rev_name, ptype=t, order=o, mutant=args.mutant,
                      timeout_ms=args.timeout_ms, rlimit=rlimit,
                      solver=args.solver or SOLVERS[0], dump_smt=args.dump_smt,
                      obligation=args.obligation)
             for cfg, orders in per_config for o in orders for t in types]
    return specs, per_config, rev_name


def runs(args: argparse.Namespace, ctx: RunContext) -> list[RunResult]:
    """The proof matrix the options ask for: one run per configuration."""
    from equiv.engine.results import RunResult
    from equiv.report.progress import progress
    from equiv.zone_device.cell import layout_note, resolve, run_matrix
    from equiv.zone_device.mutants import MUTANTS
    from equiv.zone_device.present import PRESENTER

    specs, per_config, rev_name = _specs(args)
    rev, _ = resolve(rev_name)
    if not ctx.quiet:  # a run that takes minutes says so first
        from equiv.zone_device.estimate import notice

        notice(specs, max(1, args.jobs or os.cpu_count() or 1), ctx.cache, ctx.err)
    with progress(len(specs), ctx.err, enabled=not ctx.quiet) as advance:
        cells, wall, jobs = run_matrix(specs, args.jobs, on_done=advance, cache=ctx.cache,
                                       backstop_s=args.backstop_s, scheduler=args.scheduler)
    out = []
    for cfg, _ in per_config:
        mine = tuple(c for c in cells if c.config == cfg.name)
        out.append(RunResult(
            subject="zone-device", presenter=PRESENTER,
            title="ZONE_DEVICE memmap init, slow path (v7.3-rc1) vs fast path",
            column_label="pgmap type", row_label="order", column_option="--types",
            row_option="--orders", kernel_base="v7.3-rc1 (the series' base)",
            config=cfg, revision=rev.name, mutant=args.mutant, cells=mine,
            wall_seconds=wall, jobs=jobs, layout_note=layout_note(cfg),
            choices=rev.assumptions, budget_args=ctx.budget_args,
            assumptions=tuple(dict.fromkeys(a for c in mine for a in c.assumptions)),
            revision_summary=rev.summary,
            mutant_description=MUTANTS[args.mutant].description if args.mutant else "",
            config_arg=f"--kconfig {args.kconfig}" if args.kconfig else f"--config {cfg.name}",
            solver=args.solver or SOLVERS[0]))
    return out


def self_test(jobs: int | None, cache: Cache | None = None) -> SelfTestResult:
    """The seeded-bug controls (:func:`equiv.zone_device.selftest.self_test`), through ``cache``."""
    from equiv.zone_device.selftest import self_test as run_self_test

    return run_self_test(jobs, cache=cache)


def self_test_notice(jobs: int, cache: Cache | None, err: TextIO) -> None:
    """The self-test's estimate (:func:`equiv.zone_device.estimate.self_test_notice`)."""
    from equiv.zone_device.estimate import self_test_notice as notice

    notice(jobs, cache, err)


SUBJECT = Subject(
    name="zone-device",
    summary="ZONE_DEVICE memmap init: struct page template copies (v1..v11) against the "
            "v7.3-rc1 slow path",
    add_arguments=add_arguments, run=runs, self_test=self_test, list_lines=list_lines,
    special=special, own_options=OWN_OPTIONS, solvers=SOLVERS, cached_self_test=self_test,
    self_test_notice=self_test_notice,
    choices="configurations by --config or --kconfig; cells chosen by --types and --orders")

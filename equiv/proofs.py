"""``python -m equiv.proofs``: prove kernel fast paths equal to their slow paths.

The subjects (:mod:`equiv.subjects`) share this command: ``--subject NAME`` (default
``zone-device``, or ``all``), the budgets, the cache, the formats and the exit codes.

Exit codes:
  0  every obligation PROVED
  1  some obligation REFUTED (a replayed counterexample is printed)
  2  some obligation UNKNOWN or VACUOUS (never success), none refuted
  3  bad input or usage error (one line on stderr)
  4  internal error: a bug in equiv, never a verdict (one line on stderr naming the file the
     full traceback was written to: in the cache directory, else in $TMPDIR)
  130  interrupted (Ctrl-C / SIGINT): workers stopped, no report written
  141  the reader of the output went away (``... | head``): nothing more is written, no
       message (the status of a command a closed pipe stops)
  143  terminated (SIGTERM: ``kill``, a CI job's time limit): workers stopped, no report
       written, one line on stderr
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, NoReturn, TextIO

from equiv.engine.cache import TOOL_VERSION, Cache
from equiv.engine.cache import default_dir as default_cache_dir
from equiv.engine.errors import InputError
from equiv.engine.options import Given, given, given_options
from equiv.engine.query import set_unknown_dir
from equiv.engine.results import RunResult
from equiv.engine.solvers import DEFAULT_RLIMIT
from equiv.engine.subject import RunContext, Subject
from equiv.engine.verdict import (
    EXIT_CLOSED_OUTPUT,
    EXIT_CRASH,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    Verdict,
    exit_code,
)
from equiv.report import FORMATS, SourceLines, render_runs, render_selftest, write_tests
from equiv.report.text import fit
from equiv.subjects import DEFAULT, REGISTRY, every, selected

#: default wall-clock limit per group of cells, seconds
DEFAULT_BACKSTOP_S = 900.0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise InputError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m equiv.proofs",
        description="Prove kernel fast paths equal to their slow paths.  Default subject: "
                    "over a byte-precise model of struct page, the template fast path of "
                    "'mm: optimize zone-device memmap initialization' leaves every struct page "
                    "and the pageblock bitmap exactly as the slow path does.",
        epilog="exit codes: 0 all proved; 1 a counterexample; 2 unknown or vacuous; 3 bad "
               "input; 4 internal error; 130 interrupted; 141 the output's reader went away; "
               "143 terminated (SIGTERM)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"equiv {TOOL_VERSION}")
    p.add_argument("--subject", default=DEFAULT, action=Given,
                   help=f"what to prove: {', '.join(REGISTRY)}, or all (default {DEFAULT})")
    p.add_argument("--self-test", action="store_true",
                   help="run every seeded-bug control and print the kill matrix; exit 1 if a "
                        "bug survives or an equivalent control is reported (zone-device: its "
                        "cells go through the result cache, see --cache-dir)")
    p.add_argument("--revision", default=None,
                   help="series revision of the subject (zone-device: default v11, valid: "
                        "v11, v11-fix, v1..v5; see --list)")
    p.add_argument("--mutant", default=None,
                   help="check a seeded-bug control instead of the revision as written "
                        "(see --list)")
    p.add_argument("--obligation", default=None, metavar="NAME",
                   help="check only this obligation of each cell (and the lemmas it rests "
                        "on); the names are the subject's (see --list)")
    p.add_argument("--format", default="text",
                   help=f"report format: {', '.join(FORMATS)} (default text; --btf: text or "
                        "json; see docs/formats.md)")
    p.add_argument("--output", default=None, metavar="FILE",
                   help="write the report to FILE instead of stdout")
    p.add_argument("--report", action="append", default=[], metavar="FORMAT=FILE",
                   help="also write the report in FORMAT to FILE (repeatable: one run, "
                        "several reports)")
    p.add_argument("--timeout-ms", type=int, default=60_000,
                   help="per-query solver budget (default 60000): a wall-clock limit for z3, "
                        "cvc5 and the zone-device's Bitwuzla; for the vmap subject's Bitwuzla a "
                        "deterministic 100 terminator polls per ms; an UNKNOWN names the "
                        "budget that ran out")
    p.add_argument("--rlimit", type=int, default=None,
                   help="z3 resource limit per query: a deterministic budget, same verdict on "
                        f"any machine (exhausted: UNKNOWN; zone-device default {DEFAULT_RLIMIT:,}, "
                        "about 10x what the largest preset's hardest query uses; only with z3); "
                        "--timeout-ms and --backstop-s are only wall-clock backstops")
    p.add_argument("--backstop-s", type=float, default=DEFAULT_BACKSTOP_S, metavar="SECONDS",
                   help="wall-clock limit per group of cells (one config, revision and "
                        "order): a worker past it is killed and its cells are UNKNOWN "
                        f"(default {DEFAULT_BACKSTOP_S:g}; runs the cells in worker processes)")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="result cache directory (default: the user's cache directory, "
                        f"{default_cache_dir()}); proved and refuted results are reused when "
                        "the exact queries and the tool are the same (vmap: the same cell and "
                        "tool; its cached counterexamples are replayed again)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the cells on a Dask distributed cluster (e.g. tcp://host:8786; "
                        "needs pip install 'equiv[distributed]')")
    p.add_argument("--solver", default=None,
                   help="who decides each query: zone-device: z3 (default), cvc5, bitwuzla, or "
                        "all (every query by all three; a disagreement is UNKNOWN); vmap: "
                        "bitwuzla (default) or z3; --linux: bitwuzla (default: Bitwuzla "
                        "first where z3 is slow, then z3) or z3 (z3 alone)")
    p.add_argument("--emit-tests", default=None, metavar="DIR",
                   help="write, for every counterexample, a pytest file replaying it through "
                        "the model into DIR (zone-device: also a KUnit-style C sketch of the "
                        "expected struct page words)")
    p.add_argument("--dump-smt", default=None, metavar="DIR",
                   help="write every query as an SMT-LIB 2 file into DIR (unsat = obligation "
                        "holds), for re-running with any solver")
    p.add_argument("--kernel-tree", default=None, metavar="DIR",
                   help="SARIF: locate each result at the line of its kernel function in "
                        "this kernel tree (the checkout the log is uploaded from; paths are "
                        "relative to it, %%SRCROOT%%); without it results have no line")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: cores)")
    p.add_argument("--no-times", action="store_true",
                   help="omit timings and versions (stable output for golden files)")
    p.add_argument("-v", "--verbose", action="store_true", help="list every obligation")
    p.add_argument("--quiet", action="store_true",
                   help="no progress display (otherwise shown on a terminal for runs over a "
                        "second)")
    p.add_argument("--list", action="store_true",
                   help="list each subject's configs, revisions (with their assumptions), "
                        "types, obligations and mutants")
    for s in every():
        s.add_arguments(p)
    g = p.add_argument_group("the patched kernel (with --linux BASE, or --live --live-kernel "
                             "all-types)")
    g.add_argument("--patch", action="extend", nargs="+", default=[], metavar="FILE",
                   help="apply FILE (a unified diff, a git format-patch mail, or an mbox of "
                        "them; - for standard input) to a private copy of the --linux tree, "
                        "which is never written; "
                        "several files (--patch series/*.patch) or repeated: applied in the "
                        "order given; with --live --live-kernel all-types, to the small "
                        "kernel's source, built and booted beside the unpatched one")
    g.add_argument("--against", default=None, metavar="DIR",
                   help="the patched kernel as a second source tree (read only), instead of "
                        "--patch")
    g.add_argument("--per-patch", action="store_true",
                   help="with --patch: besides the series against BASE, each patch against "
                        "the tree before it (NFC: proved equal, or the first patch that makes "
                        "a difference, with its counterexample); about one more proof per "
                        "patch that changes a file equiv reads")
    return p


def _flag(dest: str) -> str:
    """The option of an argparse destination (``no_cache`` -> ``--no-cache``)."""
    return "--" + dest.replace("_", "-")


def _own_options(args: argparse.Namespace, subjects: list[Subject]) -> None:
    """Refuse a subject's own option given for another subject, whatever its value
    (``--subject vmap --config x86_64-default`` is refused like ``--config arm64-64k``), a
    shared option a chosen subject cannot honour, and a subject-specific name with
    ``--subject all``."""
    names = {s.name for s in subjects}
    chosen = given(args)
    for s in every():
        if s.name in names:
            continue
        for opt in s.own_options:
            if opt in chosen:
                instead = "; ".join(f"--subject {o.name}: {o.choices}" for o in subjects
                                    if o.choices)
                raise InputError(f"{_flag(opt)} applies to --subject {s.name}, not to "
                                 f"--subject {args.subject}" + (f" ({instead})" if instead else ""))
    for s in subjects:
        for opt, why in s.refuses.items():
            if opt in chosen:
                raise InputError(f"{_flag(opt)} does not apply to --subject {s.name}: {why}")
    if args.subject == "all":
        for opt in ("revision", "mutant", "obligation"):
            if getattr(args, opt) is not None:
                raise InputError(f"--{opt} names differ per subject: give one --subject "
                                 f"(valid: {', '.join(REGISTRY)}) with --{opt}")


def _patched(args: argparse.Namespace) -> None:
    """Check --patch FILE... and --against DIR: each gives the patched kernel of a --linux
    BASE run.  The patches are read and applied to a temporary copy of the files they
    touch, so a patch that does not apply is refused before any proof starts."""
    patches: list[str] = args.patch
    against: str | None = args.against
    if getattr(args, "live", None) is not None and not getattr(args, "per_patch", False):
        return  # --live --live-kernel all-types --patch: equiv.zone_device.live.cli checks it
    if getattr(args, "per_patch", False) and not patches:
        raise InputError("--per-patch gives a verdict per --patch file of a series"
                         + (": --against compares two trees, with no patches between them"
                            if against is not None else "; give --linux BASE --patch FILE..."))
    if not patches and against is None:
        return
    if patches and against is not None:
        raise InputError("--patch and --against both give the patched kernel: give --patch "
                         "FILE (applied to a copy of --linux) or --against DIR, not both")
    option = "--patch" if patches else "--against"
    if getattr(args, "linux", None) is None:
        raise InputError(f"{option} needs --linux BASE, the unpatched kernel tree "
                         f"({'the patches apply to' if patches else 'it is compared with'})")
    if patches.count("-") > 1:
        raise InputError("--patch - is given more than once: standard input is read once; "
                         "give it once, or name files")
    if "-" in patches and getattr(args, "live", None) is not None:
        raise InputError("--live builds the small kernel with patch files: name them, not "
                         "--patch - (standard input)")
    for path in patches:
        if not path:
            raise InputError("--patch needs a file name, got an empty one")
        if path == "-":
            continue  # standard input (equiv.linux.patch.stdin_patches)
        if not os.path.exists(path):
            raise InputError(f"--patch {path}: no such file")
        if not os.path.isfile(path):
            raise InputError(f"--patch {path} is not a file; give a diff, a mail or an mbox")
    if against is not None:
        if not against:
            raise InputError("--against needs a directory, got an empty name")
        if not os.path.exists(against):
            raise InputError(f"--against {against}: no such directory")
        if not os.path.isdir(against):
            raise InputError(f"--against {against} is not a directory; give the root of the "
                             "patched kernel tree")
    if patches:
        from pathlib import Path

        from equiv.linux.patch import dry_run

        dry_run(Path(args.linux), [Path(p) for p in patches])


#: the options --list and --self-test read (--quiet and --no-times ask for no progress
#: and no times, which they never print; --format and --report get their own line from
#: :func:`_reports`); any other one given is refused
_LIST_READS = frozenset({"list", "subject", "quiet", "no_times"})
_SELF_TEST_READS = frozenset({"self_test", "subject", "jobs", "cache_dir", "no_cache", "quiet",
                              "no_times", "output", "format", "report"})
#: the options a --linux run reads (without --live: that mode reads --linux too); it keeps
#: no cache, so --no-cache asks nothing of it (--kernel-tree gets its own line)
_LINUX_READS = frozenset({"linux", "patch", "against", "per_patch", "compare", "types", "orders",
                          "solver", "config", "kconfig", "timeout_ms", "backstop_s", "jobs",
                          "format", "output", "report", "no_times", "quiet", "verbose",
                          "subject", "no_cache", "kernel_tree"})


def _mode_options(args: argparse.Namespace) -> None:
    """Refuse an option the mode does not read (--list and --self-test run what they run
    whatever else is given) and the options that contradict each other."""
    chosen = given(args)
    if "no_cache" in chosen and "cache_dir" in chosen:
        raise InputError(f"--no-cache and --cache-dir {args.cache_dir} contradict each other: "
                         "give --cache-dir DIR to use a cache there, or --no-cache for none")
    live = any(getattr(args, o, None) not in (None, False)
               for o in ("live", "live_from", "live_out", "live_kernel", "live_setup"))
    for on, mode, reads, what in (
            (args.list, "--list", _LIST_READS, "--subject"),
            (args.self_test, "--self-test", _SELF_TEST_READS,
             "--subject, --jobs, --cache-dir or --no-cache, --output and --quiet"),
            (getattr(args, "linux", None) is not None and not live, "--linux", _LINUX_READS,
             "--patch, --against, --per-patch, --compare, --types, --orders, --solver, "
             "--config or --kconfig, --timeout-ms, --backstop-s, --jobs and the report's "
             "options")):
        extra = sorted(chosen - reads) if on else []
        if extra:
            raise InputError(f"{_flag(extra[0])} does not apply to {mode}, which takes only "
                             f"{what}")


def _reports(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Check --format and the --report FORMAT=FILE options; the (format, file) pairs."""
    valid = ", ".join(FORMATS)
    aux = args.btf is not None or args.self_test or args.copy_primitive
    if args.format not in FORMATS:
        raise InputError(f"unknown --format {args.format!r}; valid: {valid}")
    text_only = [o for o, on in (("--explain", args.explain is not None),
                                 ("--self-test", args.self_test),
                                 ("--copy-primitive", args.copy_primitive)) if on]
    if text_only and args.format != "text":
        raise InputError(f"{text_only[0]} reports in text only, not --format {args.format!r}; "
                         "drop --format")
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


def _kernel_tree(args: argparse.Namespace, reports: list[tuple[str, str]]) -> None:
    """Check --kernel-tree before the run: a proof run (not --patch/--against, whose results
    are located in their own trees), a SARIF report is asked for, and DIR is a kernel tree
    (a directory holding mm/)."""
    tree = args.kernel_tree
    if tree is None:
        return
    if args.patch or args.against is not None:
        raise InputError("--patch/--against locate their SARIF results in the trees they "
                         "read (--linux BASE and the patched one); drop --kernel-tree")
    if "sarif" not in (args.format, *(f for f, _ in reports)):
        raise InputError("--kernel-tree locates SARIF results; give --format sarif or "
                         "--report sarif=FILE with it")
    if not os.path.isdir(os.path.join(tree, "mm")):
        raise InputError(f"--kernel-tree {tree!r} is not a kernel source tree (no mm/ in it); "
                         "give the root of the kernel checkout the SARIF is uploaded from")


def _source_lines(tree: str | None, runs: list[RunResult], err: TextIO) -> SourceLines | None:
    """The lines of the kernel functions the runs' SARIF results are located at, in the
    --kernel-tree tree (None without it); a function the tree lacks is said on ``err``."""
    if tree is None:
        return None
    from equiv.linux.ktree import definition_lines

    wanted = sorted({r.presenter.location(c, ob) for r in runs for c in r.cells
                     for ob in c.obligations if ob.verdict is not Verdict.PROVED})
    lines = definition_lines(tree, wanted) if wanted else {}
    for file, fn in wanted:
        if (file, fn) not in lines:
            err.write(f"equiv: --kernel-tree {tree}: no definition of {fn}() in {file}; its "
                      "SARIF results have no line\n")
    return SourceLines(Path(tree), lines)


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


def _no_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse an empty value for any option that takes one (``--revision ''`` is as wrong
    as ``--config ''``: nothing falls back to a default silently)."""
    for action in parser._actions:
        if not action.option_strings or action.nargs == 0:
            continue
        value = getattr(args, action.dest, None)
        values = value if isinstance(value, list) else [value]
        if any(v == "" for v in values):
            option = max(action.option_strings, key=len)
            metavar = action.metavar or action.dest.upper()
            raise InputError(f"{option} needs a value, got an empty one; give {option} "
                             f"{metavar} (see --help)")


def _writable_dir(path: str, option: str) -> None:
    """Check, before the run, that ``option`` DIR can hold new files: DIR is a directory or
    can be made in an existing one, and a file can be created in it (which is removed)."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(f"{option} {path!r} is an existing file; give a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(path) and not os.path.isdir(parent):
        raise InputError(f"cannot write {option} {path!r}: no directory {parent!r}")
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".equiv-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InputError(f"cannot write {option} {path!r}: {e.strerror}") from None


def _writable_file(path: str, option: str) -> None:
    """Check, before the run, that the report file ``option`` FILE can be written there."""
    if os.path.isdir(path):
        raise InputError(f"cannot write {option} {path!r}: it is a directory; give a file")
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise InputError(f"cannot write {option} {path!r}: no directory {parent!r}")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise InputError(f"cannot write {option} {path!r}: permission denied")


def _crash_report(args: argparse.Namespace | None, text: str) -> str:
    """Write the traceback ``text`` of an internal error to a new file, in the cache
    directory (``crash/``) when there is one, else in $TMPDIR; its path (or why not)."""
    dirs = []
    if args is not None and not getattr(args, "no_cache", False):
        dirs.append(os.path.join(getattr(args, "cache_dir", None) or default_cache_dir(),
                                 "crash"))
    dirs.append(tempfile.gettempdir())
    for directory in dirs:
        try:
            os.makedirs(directory, exist_ok=True)
            fd, path = tempfile.mkstemp(dir=directory, suffix=".txt",
                                        prefix=time.strftime("equiv-crash-%Y%m%d-%H%M%S-"))
            with os.fdopen(fd, "w") as f:
                f.write(f"equiv {TOOL_VERSION}: internal error\nargv: {sys.argv!r}\n\n{text}")
            return path
        except OSError:
            continue
    return "(could not be written: no writable cache or temporary directory)"


def _cache_summary(cache: Cache | None, err: TextIO) -> None:
    """One line per kind of cache problem the run met (:meth:`Cache.summary`)."""
    if cache is not None:
        for problem in cache.summary():
            err.write(f"equiv: cache: {problem}\n")


def _undecided(runs: list[Any], err: TextIO) -> None:
    """Say where the SMT-LIB files of the run's UNKNOWN queries went (one line)."""
    import re

    paths = [m.group(1) for r in runs for c in r.cells for o in c.obligations
             for m in re.finditer(r"query: (\S+\.smt2)", o.reason or "")]
    if paths:
        where = sorted({os.path.dirname(p) for p in paths})
        err.write(f"equiv: wrote {len(paths)} undecided quer{'y' if len(paths) == 1 else 'ies'} "
                  f"as SMT-LIB to {', '.join(where)}\n")


def main(argv: list[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Run the command; returns the exit code (see module docstring).

    Bad input is one line and exit 3; Ctrl-C is ``equiv: interrupted`` and exit 130
    (SIGTERM, under :func:`console`, ``equiv: terminated`` and 143; in both the
    workers are stopped, no report is written); a closed ``out`` or ``err`` (``... | head``)
    ends the run quietly with 141; any other exception, here or in a worker, is a bug in
    equiv: one line ``equiv: internal error: ...`` naming the file that holds the
    traceback, and exit 4, never a verdict's code.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    args: argparse.Namespace | None = None
    try:
        parser = _parser()
        args = parser.parse_args(argv)
        args.given = given_options(_parser(), argv)
        code = _run(parser, args, out, err)
        out.flush()  # a closed pipe is met here, not in the interpreter's exit
        return code
    except InputError as e:
        err.write(f"equiv: error: {e}\n")
        return EXIT_INPUT
    except Terminated:
        err.write("equiv: terminated\n")
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        err.write("equiv: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError as e:
        closed = [s for s in (out, err) if reader_gone(s)]
        if not closed:
            return _internal_error(args, e, err)
        for stream in closed:
            _to_devnull(stream)
        return EXIT_CLOSED_OUTPUT
    except Exception as e:
        return _internal_error(args, e, err)


def _internal_error(args: argparse.Namespace | None, e: Exception, err: TextIO) -> int:
    """Say a bug in equiv in one line on ``err``, the traceback in a file; exit 4."""
    path = _crash_report(args, traceback.format_exc())
    # attrs' validators raise with the message first, then the attribute and the value
    text = e.args[0] if len(e.args) > 1 and isinstance(e.args[0], str) else str(e)
    what = f"{type(e).__name__}: {text}".splitlines()[0] if text else type(e).__name__
    err.write(f"equiv: internal error: {what} (a bug in equiv; traceback in {path})\n")
    return EXIT_CRASH


def reader_gone(stream: TextIO) -> bool:
    """Whether ``stream`` is a pipe whose reading end is closed (``... | head`` after its
    lines): Linux's poll(2) reports POLLERR on the writing end of a pipe without readers.
    False for anything that is not a file descriptor (a StringIO)."""
    import select

    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(fd, 0)
    return any(event & select.POLLERR for _, event in poller.poll(0))


def _to_devnull(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at /dev/null, so that what it still buffers goes
    nowhere at exit instead of raising BrokenPipeError again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, out: TextIO,
         err: TextIO) -> int:
    """The command for parsed options (:func:`main` maps its exceptions to exit codes)."""
    _no_empty_values(parser, args)
    _mode_options(args)
    if args.list:
        listed = selected(args.subject) if "subject" in given(args) else every()
        for s in listed:
            out.write(fit("\n".join([f"subject {s.name}: {s.summary}", *s.list_lines()])) + "\n")
        return 0
    subjects = selected(args.subject)
    _own_options(args, subjects)
    reports = _reports(args)
    _kernel_tree(args, reports)
    _patched(args)
    if args.output is not None:
        _writable_file(args.output, "--output")
    if args.dump_smt is not None:
        _writable_dir(args.dump_smt, "--dump-smt")
    if args.timeout_ms <= 0:
        raise InputError(f"--timeout-ms must be positive, got {args.timeout_ms}")
    if args.rlimit is not None and args.rlimit < 1:
        raise InputError(f"--rlimit must be positive, got {args.rlimit}")
    for s in subjects:
        s.solver(args)  # an unknown solver, or one the subject cannot use, is an input error
    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {args.jobs}")
    if args.backstop_s <= 0:
        raise InputError(f"--backstop-s must be positive, got {args.backstop_s:g}")
    cache = None if args.no_cache else Cache(args.cache_dir or default_cache_dir())
    if args.self_test:
        set_unknown_dir(None if cache is None else str(cache.root / "unknown"))
        results = []
        for s in subjects:
            if s.self_test_notice is not None and not args.quiet:
                s.self_test_notice(args.jobs or os.cpu_count() or 1, cache, err)
            results.append(s.run_self_test(args.jobs, cache))
        _cache_summary(cache, err)
        _emit(args, fit("\n".join(render_selftest(st) for st in results)) + "\n", out)
        return 0 if all(st.ok for st in results) else 1
    for s in subjects:
        code = s.special(args, err, lambda text: _emit(args, text, out))
        if code is not None:
            return code
    set_unknown_dir(args.dump_smt or (None if cache is None else str(cache.root / "unknown")))
    budget = ((f" --timeout-ms {args.timeout_ms}" if args.timeout_ms != 60_000 else "")
              + (f" --rlimit {args.rlimit}" if args.rlimit is not None else "")
              + (f" --solver {args.solver}" if args.solver is not None else ""))
    ctx = RunContext(err, cache, args.quiet, budget)
    runs = [r for s in subjects for r in s.run(args, ctx)]
    _cache_summary(cache, err)
    _undecided(runs, err)
    times = not args.no_times
    code = exit_code(r.verdict for r in runs)
    if args.emit_tests is not None:
        written = [path for r in runs for path in write_tests(r, args.emit_tests)]
        err.write(f"equiv: wrote {len(written)} test file{'s' * (len(written) != 1)} to "
                  f"{args.emit_tests}\n")
    src = _source_lines(args.kernel_tree, runs, err)
    for fmt, path in reports:
        _write(path, render_runs(fmt, runs, times=times, verbose=args.verbose,
                                 exit_code=code, src=src), f"--report {fmt}")
    _emit(args, render_runs(args.format, runs, times=times, verbose=args.verbose,
                            exit_code=code, src=src), out)
    return code


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread by :func:`console`'s handler: a
    :class:`KeyboardInterrupt`, so every place that stops the workers on Ctrl-C stops them
    on SIGTERM too; :func:`main` then says ``equiv: terminated`` and exits 143."""


#: the process :func:`console` runs in (a forked worker inherits the handler, not the role)
_CONSOLE_PID = os.getpid()


def _terminate(signum: int, frame: object) -> None:
    if os.getpid() != _CONSOLE_PID:  # a worker being stopped: die as SIGTERM's default would
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    raise Terminated


def console() -> NoReturn:
    """The console command (``equiv``, ``python -m equiv``, ``python -m equiv.proofs``):
    :func:`main` on ``sys.argv``, exiting with its code.

    SIGTERM raises :class:`Terminated` in the main thread (Python's default would end the
    process at once, leaving its workers and no word).

    SIGPIPE keeps Python's disposition (ignored, a write to a closed pipe raises
    BrokenPipeError): :func:`main` ends quietly when the pipe is its own output, while the
    pipes of the worker pools, written by their threads as the workers are stopped at
    Ctrl-C, stay theirs to handle.
    """
    global _CONSOLE_PID
    _CONSOLE_PID = os.getpid()
    signal.signal(signal.SIGTERM, _terminate)
    sys.exit(main())


if __name__ == "__main__":
    console()

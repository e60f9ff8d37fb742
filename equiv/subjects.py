"""The subjects equiv proves: the registry the command line, the self-test and the reports
serve every subject through.

A subject is a pair of kernel paths (slow and fast) with its own model, obligations and
seeded bugs.  Adding one means writing its package and one :class:`Subject` entry here:
its options, how it turns them into runs (:class:`~equiv.matrix.RunResult`, whose cells are
:class:`~equiv.check.CellResult`), its self-test, and its lines for ``--list``.  The
verdicts, the cache-free matrix runner, the formats (text, Markdown, JSON, JUnit, SARIF) and
the exit codes are shared.

* ``zone-device`` — "mm: optimize zone-device memmap initialization" (struct page template
  copies against ``memmap_init_zone_device`` of mm/mm_init.c); the top-level modules.
* ``vmap`` — "mm/vmalloc: Speed up ioremap, vmalloc and vmap with contiguous memory"
  (batched CONT_PTE / PMD mapping against the per-page paths of mm/vmalloc.c);
  :mod:`equiv.vmap`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TextIO

from attrs import frozen

from equiv.errors import InputError, lookup
from equiv.solvers import SOLVERS


@frozen
class RunContext:
    """What every subject's runs share: the error stream, the cache, whether to show
    progress."""

    err: TextIO
    cache: Any  # equiv.cache.Cache | None
    quiet: bool
    #: the budget options of the run, for reproduce commands ("" for the defaults)
    budget_args: str = ""


@frozen
class Subject:
    """One subject's registration."""

    name: str
    summary: str
    #: adds the subject's own options to the parser (or nothing)
    add_arguments: Callable[[argparse.ArgumentParser], None]
    #: the subject's runs for the parsed options
    run: Callable[[argparse.Namespace, RunContext], list[Any]]
    #: the subject's seeded-bug self-test (an object with ``render()`` and ``ok``)
    self_test: Callable[[int | None], Any]
    #: lines for ``--list``
    list_lines: Callable[[], list[str]]
    #: modes that are not a proof matrix: run one and return its exit code, or None
    special: Callable[[argparse.Namespace, TextIO, Callable[[str], None]], int | None]
    #: the subject's own options with their defaults (refused for other subjects)
    own_options: dict[str, object]
    #: the ``--solver`` choices of this subject, its default first
    solvers: tuple[str, ...]
    #: the solver choices under which ``--rlimit`` (a z3 budget) takes effect
    rlimit_solvers: tuple[str, ...] = (*SOLVERS, "all")

    def solver(self, args: argparse.Namespace) -> str:
        """The solver the run uses: ``--solver`` or the subject's default; a choice the
        subject does not offer, a solver not installed, or an ``--rlimit`` the solver would
        ignore is an input error (checked before any subject runs)."""
        from equiv.solvers import require

        name = args.solver or self.solvers[0]
        require(name, self.solvers, self.name)
        if args.rlimit is not None and name not in self.rlimit_solvers:
            raise InputError(f"--rlimit is a z3 budget; the {self.name} subject decides with "
                             f"{name} (add --solver {self.rlimit_solvers[0]}, or leave "
                             "--rlimit out)")
        return name


def _zone_device() -> Subject:
    from equiv import zone_device_cli as zd

    return Subject("zone-device", "ZONE_DEVICE memmap init: struct page template copies "
                   "(v1..v11) against the v7.3-rc1 slow path", zd.add_arguments, zd.runs,
                   zd.self_test, zd.list_lines, zd.special, zd.OWN_OPTIONS, zd.SOLVERS)


def _vmap() -> Subject:
    from equiv.vmap import cli as vm

    return Subject("vmap", "batched vmap/vmalloc/ioremap page-table mapping (arm64 "
                   "CONT_PTE / PMD) against the per-page and per-chunk paths", vm.add_arguments,
                   vm.runs, vm.self_test, vm.list_lines, vm.special, vm.OWN_OPTIONS, vm.SOLVERS,
                   rlimit_solvers=("z3",))


#: name -> a function building the registration (imported on use: a subject's modules load
#: only when it runs)
SUBJECTS: dict[str, Callable[[], Subject]] = {"zone-device": _zone_device, "vmap": _vmap}


def subject(name: str) -> Subject:
    """The registered subject ``name``; an unknown name lists the valid ones."""
    return lookup(SUBJECTS, name, "subject", more=", all")()


def selected(name: str) -> list[Subject]:
    """``--subject NAME`` or ``all`` (every subject, in registration order)."""
    if name == "all":
        return [make() for make in SUBJECTS.values()]
    return [subject(name)]

"""Second subject: arm64 page-table mapping of ioremap, vmalloc and vmap, fast (batched)
against slow (per page / per chunk).

The 2026 series "mm/vmalloc: Speed up ioremap, vmalloc and vmap with contiguous memory"
(Wen Jiang, Barry Song; v8 of 2026-09-17) maps physically contiguous runs with arm64
CONT_PTE blocks (up to 1M per call) and PMD blocks in one page-table walk.  This package
checks, for symbolic inputs (the virtual range, the protection, the page array as up to
``bound`` physically contiguous segments of 2^k pages at any pfn, or with bound ``ANY`` any
array of any length, the vmalloc shift, the initial page-table state), that the fast path
builds the translations of the slow path, and only well-formed blocks (docs/model.md).

API (the lead's integration contract):

* :data:`PATHS`, :data:`REVISIONS` (name -> :class:`~equiv.vmap.revisions.Revision`, with
  ``summary`` and the named ``choices``), :data:`DEFAULT_REVISION` (the latest the
  reference describes), :data:`MUTANTS` (name -> :class:`~equiv.vmap.mutants.Mutant`).
* :func:`check` -> :class:`equiv.engine.results.CellResult` (config ``arm64-4k``, ``ptype`` the path,
  ``order`` the bound: the maximal number of segments of the page array).
* :func:`self_test` -> :class:`equiv.engine.selftest.SelfTestResult`; :func:`bound_description`.

Trust statement.  Proofs come from the *local* model (:mod:`equiv.vmap.local`): what the
kernel loops did before the observed page (the step covering it, the walk covering it) is a
free variable constrained by facts, each justified by a lemma proved in the same run
(:mod:`equiv.vmap.lemmas`: the walks of the batching loop tile the range, each is called at
its first page and made of contiguous, aligned iterations, the flush covers the range on
both ends) or, for the structure of the loops themselves (slots and PTE steps visited in
order, ``*nr`` advancing with ``addr``), printed with every run as an assumption; the list,
fact by fact, is in :mod:`equiv.vmap.local` and docs/vmap-trust.md.  Tests check those facts
against the real steps and walks of concrete runs.  Counterexamples come from the local or
the exact (unrolled) model and are reported only after the concrete twin
(:mod:`equiv.vmap.twin`), an independent page-by-page mirror of the kernel loops,
reproduces them.  Trusted: the hand-written models (from
docs/model.md: mm/vmalloc.c BASE-C, POST-C1, POST-C2 as paraphrased;
arm64 vmalloc.h BASE-H, POST-H1), Bitwuzla / z3, and Python.  Not modelled: TLB maintenance
and what a misprogrammed CONT group does in hardware, concurrency (the trylock is an oracle),
KMSAN, ``vunmap`` itself (the unwind is argued from ``frame``), ``vmap_pfn``, other arches
than arm64-4K.  The named choices are printed with every cell (``CellResult.choices``).

Importing the package runs no solver.  Layout: ``arch`` (entries, hooks), ``inputs``,
``paths`` (the exact model, loops unrolled), ``local`` (the local model), ``lemmas``,
``obligations``, ``twin`` (the concrete page-by-page twin), ``cell`` (checking one cell),
``counterexample``, ``revisions``, ``mutants``, ``selftest``, ``names`` (the option
choices); the front (options, runs, registration) is :mod:`equiv.vmap.cli` and the report
lines are :mod:`equiv.vmap.present`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from equiv.vmap.names import PATHS

if TYPE_CHECKING:
    from equiv.engine.results import CellResult
    from equiv.engine.selftest import SelfTestResult

#: The API's other names, each loaded from its module on first use (PEP 562): importing
#: the package loads no model, so the command line can register the subject cheaply.
_LAZY = {"CONFIG": "equiv.vmap.cell", "VmapCounterexample": "equiv.vmap.counterexample",
         "MAX_SEG_ORDER": "equiv.vmap.inputs", "ConcreteCase": "equiv.vmap.inputs",
         "MUTANTS": "equiv.vmap.mutants", "Mutant": "equiv.vmap.mutants",
         "OBLIGATIONS": "equiv.vmap.obligations", "DEFAULT_REVISION": "equiv.vmap.revisions",
         "REVISIONS": "equiv.vmap.revisions", "Revision": "equiv.vmap.revisions"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'equiv.vmap' has no attribute {name!r}")


def check(
    path: str,
    bound: int,
    revision: str | None = None,
    mutant: str | None = None,
    timeout_ms: int = 60_000,
    rlimit: int | None = None,
    solver: str | None = None,
    trylock: str | None = None,
) -> CellResult:
    """Check every obligation of ``path`` for page arrays of up to ``bound`` segments.

    Args:
        path: one of :data:`PATHS`.
        bound: the maximal number of physically contiguous segments of the page array (each
            2^k pages, k in 0..9, at any pfn; vmalloc: chunks of 2^(shift-12) pages; ioremap
            is one contiguous range of any length and ignores it), or ``ANY``
            (:data:`equiv.vmap.names.ANY`: any number): see :func:`bound_description`.
        revision: a key of :data:`REVISIONS` (default :data:`DEFAULT_REVISION`).
        mutant: a key of :data:`MUTANTS` (a seeded bug applied to the revision), or None.
        timeout_ms: time limit of each solver query (UNKNOWN when it runs out).
        rlimit: z3 resource limit per query (z3 only).
        solver: "bitwuzla" or "z3"; None: Bitwuzla, or z3 when ``rlimit`` is given.
        trylock: POST-C1's ``mmap_read_trylock`` before freeing a present table:
            "succeeds" (the revision's default) or "oracle" (may fail per table slot).

    Returns:
        the cell's result; each counterexample is a :class:`VmapCounterexample`, replayed on
        the concrete twin before it was reported.

    Raises:
        InputError: an unknown path, revision or mutant, or a bound below 1.
    """
    from equiv.vmap.cell import check as _check
    from equiv.vmap.revisions import DEFAULT_REVISION

    return _check(path, bound, revision or DEFAULT_REVISION, mutant, timeout_ms, rlimit, solver,
                  trylock)


def self_test(jobs: int | None = None) -> SelfTestResult:
    """The mutation self-test (M1-M8 and X1-X6 on ``v8-fix``; :mod:`equiv.vmap.selftest`)."""
    from equiv.vmap.selftest import self_test as _self_test

    return _self_test(jobs)


def bound_description(bound: int | None) -> str:
    """What ``bound`` means, for every output that states it (None: a bound ``B``; ``ANY``:
    any number of segments)."""
    from equiv.vmap.inputs import MAX_SEG_ORDER
    from equiv.vmap.names import is_any

    if bound is not None and is_any(bound):
        return (
            "any number of segments: page arrays of any length (N < 2^31) and any shape, "
            "pages[] an arbitrary function of the index (vmap: any pfns, any runs; vmalloc: "
            "any number of chunks of 2^(shift-12) pages); ioremap: one contiguous range of "
            "up to 2^31 pages"
        )
    n = "B" if bound is None else str(bound)
    pages = f"B x {1 << MAX_SEG_ORDER}" if bound is None else f"{bound << MAX_SEG_ORDER}"
    return (
        f"page arrays of up to {n} physically contiguous segment{'s' * (bound != 1)} of 2^k "
        f"pages each (k in 0..{MAX_SEG_ORDER}, any pfn; vmap: up to {pages} pages; "
        f"vmalloc: up to {n} chunks of 2^(shift-12) pages); ioremap: one contiguous range of "
        "up to 2^31 pages, whatever the bound"
    )


__all__ = [
    "CONFIG",
    "DEFAULT_REVISION",
    "MUTANTS",
    "OBLIGATIONS",
    "PATHS",
    "REVISIONS",
    "ConcreteCase",
    "Mutant",
    "Revision",
    "VmapCounterexample",
    "bound_description",
    "check",
    "self_test",
]

"""First subject: ZONE_DEVICE memmap initialisation, the template fast path against the
per-pfn slow path.

Li Zhe's 2026 series "mm: optimize zone-device memmap initialization" (v1 of May 2026 to
v11 of 2026-08-31, queued in the mm tree) replaces ``__init_zone_device_page()``,
``memmap_init_compound()`` and ``memmap_init_zone_device()`` of mm/mm_init.c (v7.3-rc1)
with copies of a prepared template struct page.  This package checks, for symbolic inputs
(start pfn, number of pages, node, pgmap pointer, altmap, early sections, vmemmap and
direct-map bases, mobility grouping, and the initial contents of every struct page and
pageblock cell), that every byte of every struct page and every pageblock cell ends as the
slow path leaves it, for every pgmap type, compound order 0..PUD order, configuration
preset and revision of the series.

The model itself is the card's top-level modules, beside this package: the struct page
layout and memory (:mod:`equiv.page_model`), the slow path (:mod:`equiv.slow_path`), the
series' revisions (:mod:`equiv.template_path`), and what they need (:mod:`equiv.config`,
:mod:`equiv.memmap`, :mod:`equiv.loops`, :mod:`equiv.slow_variants`).  This package holds
everything that runs it.

Trust statement.  Trusted: the hand-written model (each function cites the kernel
function, file and snapshot it mirrors; docs/model.md lists them), z3 (and Bitwuzla or
cvc5 when chosen), and Python.  Points the kernel text leaves uncertain are named choices
printed with every result; every assumption a run makes is printed with its source, and
checked satisfiable (a cell whose assumptions contradict is VACUOUS, never PROVED).  Loop
summaries and the frame of each loop are lemmas proved in the same run
(:mod:`equiv.zone_device.check`).  Every counterexample is replayed concretely on both paths
(:mod:`equiv.zone_device.counterexample`) and on the independent twin
(:mod:`equiv.zone_device.twin`) before it is reported.  Each obligation has seeded-bug
controls (:mod:`equiv.zone_device.mutants`, run by :mod:`equiv.zone_device.selftest`).  The
6.12.117 model is tested against a compiled kernel's struct pages by ``--live``
(:mod:`equiv.zone_device.live`).  Not modelled: ``cond_resched()``, ``pr_debug``, the
page_ref tracepoint events unless ``--observe-events``, concurrency and memory ordering of
the non-temporal copy (a byte copy in the proofs; :mod:`equiv.zone_device.copy` checks the
primitives and their ordering separately), ``VM_BUG_ON``/``WARN`` reporting, the altmap
pages themselves.

Layout (the same front files as :mod:`equiv.vmap`): ``cli`` (options, runs, registration:
``SUBJECT``), ``names`` (the option vocabulary), ``cell`` (one cell and the matrix),
``obligations``, ``check`` (deciding a cell) with ``solver`` (its solvers, each holding the
assumptions its query needs) and ``minimise`` (choosing the counterexample shown, never the
verdict), ``counterexample``, ``mutants``, ``selftest``, ``twin``,
``present``; and ``explain``, ``estimate``, ``emit`` (KUnit and pytest regression tests),
``copy/`` (the copy primitives), ``source/`` (the C path: ``--linux``, ``--patch``,
``--btf``), ``live/`` (``--live``: a booted kernel's struct pages).

Importing the package runs no solver and loads no model.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The API, each name loaded from its module on first use (PEP 562).
_LAZY = {"CellSpec": "equiv.zone_device.cell", "run_cell": "equiv.zone_device.cell",
         "run_matrix": "equiv.zone_device.cell", "check_cell": "equiv.zone_device.check",
         "CheckRequest": "equiv.zone_device.check",
         "build_cell": "equiv.zone_device.obligations", "ROLES": "equiv.zone_device.obligations",
         "MUTANTS": "equiv.zone_device.mutants", "self_test": "equiv.zone_device.selftest",
         "DEFAULT_REVISION": "equiv.zone_device.names"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'equiv.zone_device' has no attribute {name!r}")


__all__ = sorted(_LAZY)

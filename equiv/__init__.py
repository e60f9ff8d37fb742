"""equiv: SMT equivalence proofs for Linux kernel fast paths.

First subject: the template fast path of "mm: optimize zone-device memmap initialization"
(Li Zhe, 2026) against the per-pfn slow path of mm/mm_init.c (v7.3-rc1), over a
byte-precise model of struct page.  Its model is at the top of this package
(:mod:`equiv.page_model`, :mod:`equiv.slow_path`, :mod:`equiv.template_path`, with
:mod:`equiv.config`, :mod:`equiv.memmap`, :mod:`equiv.loops`, :mod:`equiv.slow_variants`);
what runs it is :mod:`equiv.zone_device`.  Second subject: :mod:`equiv.vmap`.
The engine both run on is :mod:`equiv.engine` (with the reports, :mod:`equiv.report`); the
kernel-artefact readers are :mod:`equiv.linux`; the registry is :mod:`equiv.subjects`.

Importing the package runs no solver and loads no model: the names below are loaded from
their modules on first use, so ``import equiv.vmap`` does not load the zone-device model.

Entry point: ``python -m equiv.proofs`` (:func:`equiv.proofs.main`).
"""

from __future__ import annotations

import importlib
from typing import Any

#: The zone-device API: name -> the module it comes from (PEP 562 lazy attributes).
_API = {
    "CellResult": "equiv.engine.results", "ObligationResult": "equiv.engine.results",
    "Verdict": "equiv.engine.verdict", "check_cell": "equiv.zone_device.check",
    "CheckRequest": "equiv.zone_device.check",
    "DEFAULT": "equiv.config", "PRESETS": "equiv.config", "Config": "equiv.config",
    "preset": "equiv.config",
    "ConfigError": "equiv.engine.errors", "EquivError": "equiv.engine.errors",
    "InputError": "equiv.engine.errors", "InternalMismatch": "equiv.engine.errors",
    "WidthError": "equiv.engine.errors",
    "MemoryType": "equiv.memmap", "Scenario": "equiv.memmap",
    "build_cell": "equiv.zone_device.obligations",
    "FlagsLayout": "equiv.page_model", "Layout": "equiv.page_model",
    "PageState": "equiv.page_model",
    "REVISIONS": "equiv.template_path", "Revision": "equiv.template_path",
    "revision": "equiv.template_path",
}


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'equiv' has no attribute {name!r}")


__all__ = sorted(_API)

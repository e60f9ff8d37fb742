"""equiv: SMT equivalence proofs for Linux kernel fast paths.

First subject: the template fast path of "mm: optimize zone-device memmap initialization"
(Li Zhe, 2026) against the per-pfn slow path of mm/mm_init.c (v7.3-rc1), over a byte-precise
model of struct page.  Importing the package runs no solver.

Entry point: ``python -m equiv.proofs`` (:func:`equiv.proofs.main`).
"""

from __future__ import annotations

from equiv.check import CellResult, ObligationResult, Verdict, check_cell
from equiv.config import DEFAULT, PRESETS, Config, preset
from equiv.errors import ConfigError, EquivError, InputError, InternalMismatch, WidthError
from equiv.memmap import MemoryType, Scenario
from equiv.obligations import build_cell
from equiv.page_model import FlagsLayout, Layout, PageState
from equiv.template_path import REVISIONS, Revision, revision

__all__ = [
    "DEFAULT", "PRESETS", "REVISIONS", "CellResult", "Config", "ConfigError", "EquivError",
    "FlagsLayout", "InputError", "InternalMismatch", "Layout", "MemoryType", "ObligationResult",
    "PageState", "Revision", "Scenario", "Verdict", "WidthError", "build_cell", "check_cell",
    "preset", "revision",
]

"""The doctests in the pure helper modules run with the suite."""

from __future__ import annotations

import doctest

import pytest

import equiv.engine.bv
import equiv.engine.cache
import equiv.engine.errors
import equiv.engine.memo
import equiv.engine.options
import equiv.engine.verdict
import equiv.linux.kbuild
import equiv.linux.kconfig
import equiv.report.text
import equiv.zone_device.counterexample
import equiv.zone_device.live.boot
import equiv.zone_device.names
import equiv.zone_device.source.cint
import equiv.zone_device.source.cli


@pytest.mark.parametrize("module", [equiv.engine.bv, equiv.engine.errors, equiv.engine.cache,
                                    equiv.engine.memo,
                                    equiv.engine.options, equiv.engine.verdict, equiv.zone_device.source.cli,
                                    equiv.zone_device.source.cint,
                                    equiv.zone_device.counterexample, equiv.zone_device.names,
                                    equiv.zone_device.live.boot, equiv.linux.kbuild,
                                    equiv.linux.kconfig, equiv.report.text])
def test_doctests(module: object) -> None:
    """Every example in the module's docstrings holds."""
    res = doctest.testmod(module)  # type: ignore[arg-type]
    assert res.failed == 0 and res.attempted > 0

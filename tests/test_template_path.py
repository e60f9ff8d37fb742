"""The fast path and its revisions."""

from __future__ import annotations

import pytest
from attrs import evolve

from equiv.config import DEFAULT, PRESETS
from equiv.engine.errors import InputError
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType, Scenario
from equiv.page_model import Layout
from equiv.template_path import FastVariant, revision
from equiv.zone_device.cell import CellSpec, run_cell
from equiv.zone_device.check import CheckRequest, check_cell
from equiv.zone_device.obligations import build_cell


def test_unknown_revision_lists_valid_ones() -> None:
    """A bad revision name is an input error that names the choices."""
    with pytest.raises(InputError, match="valid: v11, v11-fix, v1, v2, v3, v4, v5"):
        revision("v12")


def test_bad_knob_is_rejected() -> None:
    """FastVariant validates its knobs."""
    with pytest.raises(InputError, match="tail_seed"):
        FastVariant(tail_seed="later")


@pytest.mark.parametrize("order", [0, 2, 9])
def test_v5_proved(order: int) -> None:
    """v5 (helper split, use_template switch) equals the slow path."""
    assert run_cell(CellSpec(config="x86_64-default", revision="v5", ptype=MemoryType.GENERIC,
                             order=order)).verdict \
        is Verdict.PROVED


def test_v5_with_tracepoint_switch_symbolic() -> None:
    """With DEBUG_PAGE_REF the v5 switch is a symbolic input; both branches are proved."""
    L = Layout.from_config(evolve(DEFAULT, DEBUG_PAGE_REF=True))
    res = check_cell(CheckRequest(problem=build_cell(Scenario(L, MemoryType.FS_DAX, 3), revision("v5"))))
    assert res.verdict is Verdict.PROVED
    assert res.assumptions and not any(a.startswith("page_ref tracepoints compiled out")
                                       for a in res.assumptions)


@pytest.mark.parametrize("rev", ["v1", "v2", "v3", "v4"])
@pytest.mark.parametrize(("config", "order"), [("x86_64-default", 2), ("x86_64-default", 9),
                                               ("x86_64-want-page-virtual", 2)])
def test_earlier_revisions_proved(rev: str, config: str, order: int) -> None:
    """v1 (head template only), v2 (fix the destination after the copy), v3 and v4 leave
    memory as the slow path does, also where `virtual` depends on the pfn."""
    assert run_cell(CellSpec(config=config, revision=rev, ptype=MemoryType.GENERIC,
                             order=order)).verdict is Verdict.PROVED


def test_revisions_list_their_unknowns() -> None:
    """Where a revision's text is unknown the model says so in its assumptions."""
    from equiv.template_path import REVISIONS

    for name in ("v1", "v2", "v3", "v4", "v5"):
        assert any("[N]" in a for a in REVISIONS[name].assumptions), name


class TestPageRefEvents:
    """page_ref_set tracepoint events as an observable beside memory (DEBUG_PAGE_REF)."""

    CFG = evolve(PRESETS["x86_64-debug-page-ref"], observe_events=True)

    def test_v11_equal_on_memory_but_not_on_events(self) -> None:
        """v11 copies templates unconditionally: copied heads emit no page_ref_set event, so the
        only difference is of the events kind."""
        res = run_cell(CellSpec(config=self.CFG, revision="v11", ptype=MemoryType.GENERIC, order=0))
        assert res.verdict is Verdict.REFUTED
        diffs = [d for o in res.obligations if o.counterexample for d in o.counterexample.diffs]
        assert diffs and all(d.names[0].startswith("page_ref_set tracepoint events") for d in diffs)

    @pytest.mark.parametrize("rev", ["v1", "v3", "v4", "v5"])
    def test_tracepoint_guard_makes_events_equal(self, rev: str) -> None:
        """v1-v5 fall back to the slow path while the tracepoint is enabled: events agree."""
        for order in (0, 2):
            assert run_cell(CellSpec(config=self.CFG, revision=rev, ptype=MemoryType.GENERIC,
                                     order=order)).verdict \
                is Verdict.PROVED, (rev, order)

    def test_observe_events_needs_debug_page_ref(self) -> None:
        """--observe-events on a config without DEBUG_PAGE_REF is an input error."""
        import io

        from equiv.proofs import main

        err = io.StringIO()
        assert main(["--observe-events"], out=io.StringIO(), err=err) == 3
        assert "needs a config with DEBUG_PAGE_REF" in err.getvalue()

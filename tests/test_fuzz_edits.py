"""Random seeded edits of the fast path through the checker: a verdict every time.

Each seed draws a configuration, a pgmap type, an order and one to three knobs of
:class:`~equiv.template_path.FastVariant` changed away from v11 (any of them, the seeded-bug
controls' edits and others), and checks the cell.  Whatever the edit does (writes a struct
page outside the slots the obligations name, copies a page without recorded history over
another, overruns a loop), the cell must end in PROVED, REFUTED, UNKNOWN (with the reason)
or VACUOUS, never in an exception; a REFUTED obligation carries its replayed counterexample.
An edit the model cannot represent is an input error naming the knob, never a crash.
"""

from __future__ import annotations

import random

import pytest
from attrs import fields

from equiv.config import preset
from equiv.engine.errors import InputError
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType, Scenario
from equiv.page_model import Layout
from equiv.template_path import REVISIONS, FastVariant, fast_path, with_variant
from equiv.zone_device.check import CheckRequest, check_cell
from equiv.zone_device.counterexample import counterexample_of
from equiv.zone_device.obligations import build_cell

#: every knob of FastVariant and values other than v11's
KNOBS: dict[str, tuple[object, ...]] = {
    "head_snapshot": ("before_init", "after_compound"),
    "tail_seed": ("before_prep_compound_tail", "after_prep_compound_head", "head_template"),
    "tail_refcount_reset": (False,),
    "refresh_section": (False,),
    "refresh_virtual": (False,),
    "copy_len_delta": (-8, -1),
    "tail_loop_start": (1, 3),
    "tail_loop_end_delta": (-1, 1),
    "tail_template_per_compound": (False,),
    "refresh_when": ("after", "destination"),
    "prep_compound_head": (False,),
    "prep_compound_head_when": ("before_tail_loop",),
    "set_head_when": ("after_tails", "after_prep_compound_head"),
    "first_compound_setup": (False,),
    "heads_loop_start": (0, 2),
    "heads_loop_end_delta": (-1, 1),
    "tail_refresh_pfn_delta": (-1, 1),
    "tail1_from_template": (True,),
    "tail_template": (False,),
    "tail1_prep_compound_tail": (False,),
    "tail_loop_end_last_only": (True,),
    "tail_loop_cond": ("!=",),
    "tail_write_delta": (-1, 1, 2),
    "first_head_delta": (-1, 1),
    "tail_last_copy_to": (0, 1, 2, 5),
}
CONFIGS = ("x86_64-default", "x86_64-want-page-virtual", "x86_64-section-in-flags")
TYPES = (MemoryType.GENERIC, MemoryType.FS_DAX, MemoryType.PRIVATE)

#: plain runs check these seeds; --runslow many more
SEEDS = [pytest.param(n, marks=() if n < 4 else pytest.mark.slow) for n in range(40)]


def test_every_knob_is_drawn() -> None:
    """A knob added to FastVariant is fuzzed too (and every value drawn is not v11's)."""
    assert set(KNOBS) == {f.name for f in fields(FastVariant)}
    v11 = REVISIONS["v11"].variant
    assert all(getattr(v11, k) not in vals for k, vals in KNOBS.items())


def _draw(rng: random.Random) -> tuple[str, MemoryType, int, dict[str, object]]:
    knobs = {k: rng.choice(KNOBS[k]) for k in rng.sample(sorted(KNOBS), rng.randint(1, 3))}
    return rng.choice(CONFIGS), rng.choice(TYPES), rng.choice((1, 2, 3)), knobs


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_edit_gets_a_verdict(seed: int) -> None:
    rng = random.Random(seed)
    config, ptype, order, knobs = _draw(rng)
    try:
        rev = with_variant(REVISIONS["v11"], **knobs)
    except InputError as e:  # a combination the model cannot represent: named, no crash
        assert any(k in str(e) for k in knobs), e
        return
    sc = Scenario(Layout.from_config(preset(config)), ptype, order, None)
    res = check_cell(CheckRequest(problem=build_cell(sc, rev, fast_path(rev)), minimise=False))
    what = (config, ptype.name, order, knobs, [(o.name, o.verdict) for o in res.obligations])
    assert res.verdict in (Verdict.PROVED, Verdict.REFUTED, Verdict.UNKNOWN, Verdict.VACUOUS), what
    for o in res.obligations:
        if o.verdict is Verdict.REFUTED:
            cx = counterexample_of(o)
            assert cx is not None and cx.diffs, what
            assert all(d.slow_provenance and d.fast_provenance for d in cx.diffs if d.size), what
        if o.verdict in (Verdict.UNKNOWN, Verdict.VACUOUS):
            assert o.reason, what

"""How ``--compare`` cells are grouped and tried (issue 18): a comparison with known
differences runs order by order (its class probe could never prove the class), a probe's
lemma tries run on a small budget, and the loops' owners name a key's compound and slot
by the very terms a key was built from."""

from __future__ import annotations

import z3
from attrs import evolve

from equiv.config import preset
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType, Scenario, key_compound, key_slot
from equiv.page_model import Layout
from equiv.zone_device.cell import (
    COMPARE,
    PROBE_LEMMA_TRY_RLIMIT,
    CellSpec,
    _known_differences,
    cell_paths,
    order_groups,
    run_cell,
)
from equiv.zone_device.obligations import build_cell


def _specs(name: str, orders: range) -> list[CellSpec]:
    return [CellSpec(config="x86_64-default", revision=name, ptype=t, order=o) for o in orders
            for t in (MemoryType.FS_DAX, MemoryType.GENERIC)]


def test_known_differences_run_order_by_order() -> None:
    """v6.12 (known differences) gets a group per order; a refactor claimed to change
    nothing and a plain revision keep their order classes (2-7, 8-18 on x86_64)."""
    v612 = _specs(COMPARE + "v6.12", range(2, 10))
    assert all(_known_differences(s) for s in v612)
    groups = order_groups(v612)
    assert [sorted({v612[i].order for i in g}) for g in groups] == [[o] for o in range(2, 10)]
    for name in (COMPARE + "v5-helper-split", "v11"):
        specs = _specs(name, range(2, 10))
        assert not any(_known_differences(s) for s in specs)
        rows = [sorted({specs[i].order for i in g}) for g in order_groups(specs)]
        assert rows == [list(range(2, 8)), [8, 9]], name


def test_seeded_slow_path_bug_keeps_classes() -> None:
    """A seeded slow-path bug lists no known difference: its class is tried (and fails
    over to each order, tests/test_order_classes.py)."""
    specs = _specs(COMPARE + "slow-split-inverted", range(2, 5))
    assert not any(_known_differences(s) for s in specs)
    assert len(order_groups(specs)) == 1


def test_key_parts_are_the_terms_of_the_key() -> None:
    """A key's compound and slot: the same value as z3's extracts for every key, and the
    very terms ``c`` and ``t`` of a concatenation (equiv.engine.bv.extract), in every
    loop's owner (equiv.memmap.compound_frame, tail_frame)."""
    sc = Scenario(Layout.from_config(preset("x86_64-default")), None, 3)
    c, t, n = z3.BitVec("c", 64), z3.BitVec("t", 64), z3.BitVec("n", 128)
    key = z3.Concat(c, t)
    hi, lo = key_compound(sc, key), key_slot(sc, key)
    assert isinstance(hi, z3.BitVecRef) and isinstance(lo, z3.BitVecRef)
    assert hi.eq(c) and lo.eq(t)
    for k in (key, n, z3.Concat(z3.Extract(127, 64, n) + 1, t),
              z3.Concat(z3.BitVecVal(7, 32), z3.Extract(31, 0, c), t)):
        s = z3.Solver()
        s.add(z3.Or(key_compound(sc, k) != z3.Extract(127, 64, k),
                    key_slot(sc, k) != z3.Extract(63, 0, k)))
        assert z3.unsat == s.check()


def test_v612_tails_lemmas_posed_once_per_compound_term() -> None:
    """At order 12 the 6.12 tails loop's lemmas are stated for two compounds (a page
    role's ``c``, the pageblock role's), not four (``c`` as three different terms)."""
    sc, rev, fast = cell_paths(CellSpec(config="x86_64-default", revision=COMPARE + "v6.12", ptype=None,
                                        order=12))
    p = build_cell(sc, rev, fast, first_form=True)
    tails = [lm for lm in p.lemmas
             if lm.loop == "memmap_init_compound.tails (6.12)" and lm.kind == "frame-write"]
    assert 2 == len(tails)


def test_probe_proves_the_v612_lemmas_on_the_small_try_budget() -> None:
    """With its first tries on :data:`PROBE_LEMMA_TRY_RLIMIT`, the all-types probe of order 3
    still proves every loop lemma (conjunct by conjunct), and the cells that take them
    are refuted as before (the pageblock bitmap)."""
    assert PROBE_LEMMA_TRY_RLIMIT < 100_000
    spec = CellSpec(config="x86_64-default", revision=COMPARE + "v6.12", ptype=None, order=3, rlimit=10**9,
                    minimise=False)
    probe = run_cell(spec, probe=True)
    lemmas = [o for o in probe.obligations if o.kind == "lemma"]
    assert lemmas and all(o.verdict is Verdict.PROVED for o in lemmas)
    cell = run_cell(evolve(spec, ptype=MemoryType.GENERIC), lemmas_from=probe)
    assert Verdict.REFUTED is cell.verdict
    refuted = {o.role for o in cell.obligations if o.verdict is Verdict.REFUTED}
    assert "pageblock" in refuted

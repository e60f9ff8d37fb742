"""The C path's deduplicated vmemmap (:class:`equiv.zone_device.source.cstate.VmemmapFold`,
:func:`equiv.memmap.storage_pfn`): struct pages a deduplicated compound's vmemmap shares are
one storage, as the hand model's :func:`equiv.memmap.vmemmap_namer` names them.

* ``storage_pfn`` is the hand model's fold in pfn terms: for every (compound, tail) of a
  concrete range the namer's key and the storage pfn name the same struct page; no fold with
  an altmap, in an early section or where the order cannot deduplicate.
* ``VmemmapFold.key``: the pfn itself where the oracle shows it is not aliased on the path,
  else a key equal to the storage pfn (checked in a model).
* The interpreter stores through the fold: ``bugs/22`` (the private word of tail 128 read
  before the tail loop and stored back after it) leaves tail 64's storage with its initial
  private word, concretely at order 9, and does not with one struct page per pfn.
* The dedup case is in scope of ``--patch``'s order-9 cell: its assumptions and the tail
  role's constraint hold together with a deduplicated compound and a tail past 64.
* Slow: at order 9 (x86_64-default, all five types at once) ``bugs/22`` REFUTED on tail
  64's ``private`` and ``harmless/21`` PROVED (the series itself: ``test_patch_proof.py``,
  orders 9 and 18).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import z3
from test_linux_tree import linux612  # noqa: F401  (the session fixture)

from equiv.config import PRESETS
from equiv.engine import bv
from equiv.engine.bv import CBV
from equiv.linux.patch import prepare
from equiv.memmap import (
    Scenario,
    concrete_inputs,
    deduplicated,
    geometry,
    input_assumptions,
    pfn_of,
    storage_pfn,
    symbolic_inputs,
    vmemmap_namer,
)
from equiv.page_model import PB_BITS, Layout, PageState
from equiv.zone_device.source.common import run_tree, side, side_layout
from equiv.zone_device.source.cstate import Oracle, VmemmapFold
from equiv.zone_device.source.files import FILES, load_tree

L = Layout.from_config(PRESETS["x86_64-default"])
DATA = Path(__file__).parent / "data" / "zone-device-backport-6.12"
SERIES = sorted((DATA / "series").glob("*.patch"))
M64 = (1 << 64) - 1


def _namer_pfn(sc: Scenario, first: int, key: int) -> int:
    c, s = key >> 64, key & M64
    return (first + (c << sc.order) + s) & M64


def test_storage_pfn_is_the_hand_models_fold() -> None:
    sc = Scenario(L, None, 9)
    first, nr = 0x48000 + 512 * 3, 512 * 3 + 100  # the last compound partial
    for altmap, early, folds in ((None, frozenset(), True),
                                 ((16, 16), frozenset(), False),
                                 (None, frozenset({first >> 15}), False)):
        start = first - (32 if altmap else 0)
        inp = concrete_inputs(L, start_pfn=start, nr_pages=nr + (32 if altmap else 0),
                              altmap=altmap, early=early)
        name = vmemmap_namer(sc, inp)
        g = geometry(sc, inp)
        assert int(g.start) == first
        for c in range(0, 5):
            for t in (0, 1, 63, 64, 127, 128, 129, 200, 255, 256, 511):
                pfn = int(pfn_of(sc, g, CBV(c, 64), CBV(t, 64)))
                aliased, stored = storage_pfn(sc, inp, CBV(pfn, 64))
                want = _namer_pfn(sc, first, int(name(CBV(c, 64), CBV(t, 64))))
                assert int(stored if aliased is True else CBV(pfn, 64)) == want, (altmap, c, t)
                in_range = c < 4  # 3 whole compounds and a partial one
                assert (aliased is True) == (folds and in_range and t >= 128), (altmap, c, t)
                if aliased is True:
                    assert want == first + (c << 9) + 64 + t % 64
    # an order that cannot deduplicate (2^7 = 128 struct pages fit the two vmemmap pages
    # kept): no fold at all
    assert storage_pfn(Scenario(L, None, 7), concrete_inputs(L, start_pfn=0, nr_pages=128),
                       CBV(100, 64))[0] is False


def test_fold_keys_symbolic() -> None:
    sc = Scenario(L, None, 9)
    inp, _ = symbolic_inputs(L)
    assume = [a.term for a in input_assumptions(sc, inp)]
    g = geometry(sc, inp)
    fold = VmemmapFold(lambda p: storage_pfn(sc, inp, p), Oracle(assume, timeout_ms=20_000))
    c = z3.BitVec("c", 64)
    head = pfn_of(sc, g, c, z3.BitVecVal(0, 64))
    in_range = bv.ult(c, g.ncompounds)
    # tail 1 is never aliased: its key is the pfn itself
    p1 = head + 1
    assert fold.key(p1, in_range).eq(p1)
    # tail 200 of a compound of the range: aliased where deduplicated, the pfn elsewhere
    p200 = head + 200
    k = fold.key(p200, in_range)
    assert not k.eq(p200)
    s = z3.Solver()
    s.add(*assume, in_range)
    for dedup, want in ((True, head + 72), (False, p200)):
        cond = deduplicated(sc, inp, head)
        assert isinstance(cond, z3.BoolRef)
        assert s.check(cond if dedup else z3.Not(cond), k != want) == z3.unsat, dedup
    assert s.check(deduplicated(sc, inp, head)) == z3.sat  # (the case exists)
    # a key the fold made is a storage key: folded once
    assert fold.key(k, True).eq(k)


def test_the_dedup_case_is_in_the_tail_role() -> None:
    """The order-9 cell of --patch: its assumptions, the tail role's constraint (tails 3..511
    of a compound of the range that are storage of their own) and a deduplicated compound
    with a tail from 64 on hold together."""
    sc = Scenario(L, None, 9)
    inp, _ = symbolic_inputs(L)
    g = geometry(sc, inp)
    c, t = z3.BitVec("c", 64), z3.BitVec("t", 64)
    aliased, _ = storage_pfn(sc, inp, pfn_of(sc, g, c, t))
    cons = z3.And(z3.ULT(c, g.ncompounds), z3.UGE(t, 3), z3.ULT(t, 512),
                  z3.Not(bv.as_z3_bool(aliased)))
    dedup = deduplicated(sc, inp, pfn_of(sc, g, c, z3.BitVecVal(0, 64)))
    assert isinstance(dedup, z3.BoolRef)
    s = z3.Solver()
    s.add(*(a.term for a in input_assumptions(sc, inp)), cons, dedup)
    assert s.check(z3.UGE(t, 64)) == z3.sat
    assert s.check(z3.UGE(t, 128)) == z3.unsat  # aliased: the storage of tail 64 + t % 64


def _private_of_tail64(root: Path, fold: bool) -> tuple[int, int]:
    """(initial, final) private word of tail 64's storage after one concrete order-9
    compound of a deduplicated vmemmap (no altmap, no early section)."""
    cfg = PRESETS["x86_64-default"]
    sd = side("t", load_tree(root), cfg)
    lay = side_layout(sd, cfg)
    sc = Scenario(lay, None, 9)
    start = 0x40000
    inp = concrete_inputs(lay, start_pfn=start, nr_pages=512, pgmap_type=4)

    def initial(pfn: object) -> PageState:
        v = int(pfn)  # type: ignore[call-overload]
        byte = (v * 37 + 11) & 0xFF
        return PageState(bits=CBV(int.from_bytes(bytes([byte | 1]) * lay.size, "little"),
                                  8 * lay.size), origin=((),) * lay.size)

    _, st = run_tree(sd, sc, inp, initial, lambda b: CBV(0, PB_BITS), None, fold=fold)
    off = next(a.offset for a in lay.atoms if a.name == "private")
    word = lambda pg: (int(pg.bits) >> (8 * off)) & M64  # noqa: E731
    return word(initial(CBV(start + 64, 64))), word(st.mem.read_any(CBV(start + 64, 64)))


def test_interpreter_stores_through_the_fold(linux612: Path, tmp_path: Path) -> None:  # noqa: F811
    root = prepare(linux612, FILES, [*SERIES, DATA / "bugs/22-aliased-tail-private-restored.patch"],
                   tmp_path / "t").root
    init, final = _private_of_tail64(root, fold=True)
    assert init != 0 and final == init  # tail 128's store went to tail 64's storage
    _, final = _private_of_tail64(root, fold=False)
    assert final == 0  # one struct page per pfn: tail 64 keeps the template's 0


# ---- the proofs at order 9 (slow) ------------------------------------------------------


def _cell9(linux: Path, tmp: Path, patch: str):  # type: ignore[no-untyped-def]
    from equiv.zone_device.source.patchproof import check_patch_cell

    cfg = PRESETS["x86_64-default"]
    root = prepare(linux, FILES, [*SERIES, DATA / patch], tmp / "t").root
    return check_patch_cell(side("base", load_tree(linux), cfg),
                            side("patched", load_tree(root), cfg), cfg, None, 9,
                            timeout_ms=120_000)


@pytest.mark.slow
def test_bug22_refuted_on_the_shared_storage(linux612: Path, tmp_path: Path) -> None:  # noqa: F811
    from equiv.engine.verdict import Verdict

    cell = _cell9(linux612, tmp_path, "bugs/22-aliased-tail-private-restored.patch")
    assert cell.verdict is Verdict.REFUTED, [(r.name, r.verdict, r.reason) for r in cell.roles]
    (r,) = [r for r in cell.roles if r.verdict is Verdict.REFUTED]
    assert r.name == "tail_equal" and dict(r.index)["t"] == 64
    assert any("private" in d.names for d in r.diffs), r.diffs


@pytest.mark.slow
def test_harmless21_proved_on_the_shared_storage(linux612: Path, tmp_path: Path) -> None:  # noqa: F811
    from equiv.engine.verdict import Verdict

    cell = _cell9(linux612, tmp_path, "harmless/21-aliased-tail-rewritten-from-template.patch")
    assert cell.verdict is Verdict.PROVED, [(r.name, r.verdict, r.reason) for r in cell.roles]

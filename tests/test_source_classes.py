"""Order classes in the source-derived proofs (``--linux``, ``--patch``): one proof with
``pgmap->vmemmap_shift`` a symbolic input over a class of orders, which stands for each
order's cell only when it proves everything (:func:`equiv.zone_device.source.fidelity.run_fidelity` and
:func:`equiv.zone_device.source.patchproof.run_patch_proof` with ``classes``).

The soundness controls: a class PROVED is PROVED at each of its orders, and a seeded bug
refuted at one order of a class makes the class's probe not PROVED, so each order is run
alone and the bug is refuted (with its counterexample) at its order.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import z3
from test_linux_tree import CFG, _mutated, linux612, tree612  # noqa: F401  (fixtures)

from equiv.engine.verdict import Verdict
from equiv.linux.ktree import KernelTree
from equiv.memmap import Scenario, assumptions, symbolic_inputs
from equiv.page_model import Layout
from equiv.zone_device.source import clemmas
from equiv.zone_device.source.clemmas import check_lemmas
from equiv.zone_device.source.common import order_not_covered
from equiv.zone_device.source.csummary import CLemma
from equiv.zone_device.source.fidelity import MODELS, check_fidelity_cell, run_fidelity, setup
from equiv.zone_device.source.files import load_tree
from equiv.zone_device.source.patchproof import run_patch_proof


def _class(lo: int, hi: int) -> tuple[Scenario, list[z3.BoolRef]]:
    L = Layout.from_config(CFG)
    sc = Scenario(L, None, lo, hi)
    inp, _ = symbolic_inputs(L)
    return sc, [a for _, a in assumptions(sc, inp)]


def test_each_order_of_a_class_is_covered_or_named() -> None:
    """order_not_covered: every role's constraint must hold at every order of the class
    (as each order's own cell requires: no role VACUOUS there)."""
    sc, assume = _class(2, 7)
    shift = sc.order_v
    assert isinstance(shift, z3.BitVecRef)
    c = z3.BitVec("c", 64)
    assert order_not_covered(sc, assume, [(z3.ULT(c, 5), (c,)), (c == 7, (c,))], 10_000) == ""
    why = order_not_covered(sc, assume, [(z3.ULT(c, 5), (c,)), (shift != 4, ())], 10_000)
    assert why == "order 4: a role's constraint cannot hold"


@pytest.mark.parametrize("budget", [clemmas.CLASS_LEMMA_MS, 1])
def test_class_lemmas_hold_at_every_order_or_fail(monkeypatch: pytest.MonkeyPatch,
                                                  budget: int) -> None:
    """check_lemmas over a class: a conjunct is proved over the whole class, or order by
    order (the budget of 1 ms sends it there); one false at a single order fails."""
    monkeypatch.setattr(clemmas, "CLASS_LEMMA_MS", budget)
    sc, assume = _class(2, 7)
    shift = sc.order_v
    assert isinstance(shift, z3.BitVecRef)
    k = z3.BitVec("k", 64)
    stride = z3.BitVecVal(1, 64) << shift
    holds = CLemma("l", "no-wrap", z3.ULT(k, 8), z3.ULT(k << shift, stride << 3))
    fails = CLemma("l", "frame-write", z3.BoolVal(True), z3.Not(z3.And(shift == 5, k == 1)))
    assert check_lemmas([holds], assume, 10_000, sc) == ""
    assert check_lemmas([fails], assume, 10_000, sc) == "loop lemma frame-write of l: sat"


@pytest.mark.slow
class TestClassProbe:
    def test_a_class_proved_is_proved_at_each_order(self, tree612: KernelTree) -> None:  # noqa: F811
        """x86_64-default, orders 2 and 3 (one class): the probe PROVED stands for both
        cells, and each order's own proof is PROVED too."""
        st = setup(tree612, CFG, MODELS["v6.12.y"])
        run = run_fidelity(st, [None], [2, 3], classes=True)
        assert [(2, Verdict.PROVED, (2, 3)), (3, Verdict.PROVED, (2, 3))] == \
            [(c.order, c.verdict, c.row_class) for c in run.cells]
        assert "orders_covered" in {r.name for r in run.cells[0].roles}
        assert [Verdict.PROVED] * 2 == [check_fidelity_cell(st, None, o).verdict for o in (2, 3)]

    def test_a_bug_at_one_order_of_a_class_falls_back_to_each_order(
            self, linux612: Path, tmp_path: Path) -> None:  # noqa: F811
        """Every tail's _refcount set to 1 at order 3 only: the class 2..3 is not PROVED,
        so order 2 is PROVED and order 3 REFUTED in their own cells (replayed: tail 1's
        _refcount 0 in the hand model, 1 in the tree), neither standing for a class."""
        root = _mutated(linux612, tmp_path, "mm/mm_init.c",
                        "\t\tset_page_count(page, 0);\n\n\t\t/*\n\t\t * The first tail",
                        "\t\tset_page_count(page, order == 3);\n\n\t\t/*\n\t\t * The first tail")
        st = setup(load_tree(root), CFG, MODELS["v6.12.y"])
        probe = check_fidelity_cell(st, None, 2, order_hi=3)
        assert probe.verdict is not Verdict.PROVED
        run = run_fidelity(st, [None], [2, 3], classes=True)
        assert [(2, Verdict.PROVED, None), (3, Verdict.REFUTED, None)] == \
            [(c.order, c.verdict, c.row_class) for c in run.cells]
        tail1 = next(r for r in run.cells[1].roles if r.name == "tail1_equal")
        assert ("_refcount", 0, 1) in [(d.names[0], d.slow, d.fast) for d in tail1.diffs]

    def test_the_patch_proof_falls_back_on_a_bug_at_one_order(
            self, linux612: Path, tmp_path: Path) -> None:  # noqa: F811
        """The patch proof (the tree against a copy with the bug above): the class 2..3 is
        not PROVED, order 2 is PROVED and order 3 REFUTED in their own cells."""
        root = _mutated(linux612, tmp_path, "mm/mm_init.c",
                        "\t\tset_page_count(page, 0);\n\n\t\t/*\n\t\t * The first tail",
                        "\t\tset_page_count(page, order == 3);\n\n\t\t/*\n\t\t * The first tail")
        run = run_patch_proof(linux612, root, CFG, [None], [2, 3], label="order-3 bug",
                              classes=True)
        assert [(2, Verdict.PROVED, None), (3, Verdict.REFUTED, None)] == \
            [(c.order, c.verdict, c.row_class) for c in run.cells]

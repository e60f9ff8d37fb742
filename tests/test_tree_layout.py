"""The C path's struct page layout is clang's layout of the tree (issue 45, point 5).

Quick, on stubs shaped like a tree's clang layout: 6.1's struct folio (``_folio_dtor``,
``_folio_order``, ``_pincount`` at page[1]+24) gives its own names and offsets, not the
model's; a model name the tree lacks is dropped; ``rcu_head`` is printed as mm_types.h
spells it; the page->flags layout is clang's, a field that is no C constant is left out and
named, and one the tree does not define has width 0.

With the 6.12 tree and generated headers: for x86_64-default the tree's layout has the same
atoms, labels and page->flags layout as the hand model of 6.12 (only LRU_REFS, a ``min()``
in 6.12, is left out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from test_linux_tree import linux612  # noqa: F401  (the session fixture)

from equiv.config import PRESETS
from equiv.engine.errors import InputError
from equiv.linux.cfront import Constant, Field, StructLayout
from equiv.page_model import Layout
from equiv.zone_device.source.common import model_for
from equiv.zone_device.source.ctyped import TypedTree
from equiv.zone_device.source.tree_layout import flags_from_tree, layout_from_tree

CFG = PRESETS["x86_64-default"]


def _f(path: str, type_: str, offset: int, size: int) -> Field:
    return Field(path=path, type=type_, offset=offset, size=size, bit_offset=8 * offset,
                 bit_width=None, in_union=False,
                 record=type_ == "atomic_t" or (type_.startswith("struct ")
                                                and not type_.endswith("*")))


#: struct page of 6.12/6.1 (include/linux/mm_types.h), the members a layout names
PAGE = StructLayout("page", "include/linux/mm_types.h:73", 64, 8, (
    _f("flags", "unsigned long", 0, 8),
    _f("lru", "struct list_head", 8, 16), _f("lru.next", "struct list_head *", 8, 8),
    _f("lru.prev", "struct list_head *", 16, 8),
    _f("compound_head", "unsigned long", 8, 8), _f("pgmap", "struct dev_pagemap *", 8, 8),
    _f("zone_device_data", "void *", 16, 8),
    _f("callback_head", "struct callback_head", 8, 16),
    _f("callback_head.next", "struct callback_head *", 8, 8),
    _f("mapping", "struct address_space *", 24, 8), _f("index", "unsigned long", 32, 8),
    _f("private", "unsigned long", 40, 8), _f("_mapcount", "atomic_t", 48, 4),
    _f("_refcount", "atomic_t", 52, 4), _f("memcg_data", "unsigned long", 56, 8),
))
#: 6.1's struct folio (include/linux/mm_types.h of 6.1.192): page[1] holds _flags_1,
#: __head, _folio_dtor, _folio_order, _total_mapcount, _pincount, _folio_nr_pages
FOLIO_61 = StructLayout("folio", "include/linux/mm_types.h:281", 128, 8, (
    _f("flags", "unsigned long", 0, 8), _f("page", "struct page", 0, 64),
    _f("page.flags", "unsigned long", 0, 8),
    _f("_flags_1", "unsigned long", 64, 8), _f("__head", "unsigned long", 72, 8),
    _f("_folio_dtor", "unsigned char", 80, 1), _f("_folio_order", "unsigned char", 81, 1),
    _f("_total_mapcount", "atomic_t", 84, 4), _f("_total_mapcount.counter", "int", 84, 4),
    _f("_pincount", "atomic_t", 88, 4), _f("_folio_nr_pages", "unsigned int", 92, 4),
    _f("_private_1", "unsigned long", 96, 8),
))


class Stub:
    """What :func:`layout_from_tree` asks of a :class:`TypedTree`."""

    def __init__(self, consts: Mapping[str, int | None], defined: Iterable[str] = (),
                 folio: StructLayout = FOLIO_61) -> None:
        self.consts, self.defined, self.folio = consts, set(defined), folio

    def layout(self, name: str) -> StructLayout:
        return PAGE if name == "page" else self.folio

    def constant(self, name: str) -> Constant | None:
        if name not in self.consts:
            return None
        return Constant(name=name, where="include/linux/page-flags-layout.h:1", type="int",
                        signed=True, size=4, pointer=False, value=self.consts[name])

    def macros_defined(self, names: Iterable[str]) -> frozenset[str]:
        return frozenset(n for n in names if n in self.defined)


#: the x86_64-default page->flags of 6.12 as clang evaluates it
FLAGS = {"__NR_PAGEFLAGS": 22, "ZONES_SHIFT": 3, "NODES_SHIFT": 6, "LAST_CPUPID_SHIFT": 14,
         "SECTIONS_WIDTH": 0, "SECTIONS_PGOFF": 64, "NODES_WIDTH": 6, "NODES_PGOFF": 58,
         "ZONES_WIDTH": 3, "ZONES_PGOFF": 55, "LAST_CPUPID_WIDTH": 14,
         "LAST_CPUPID_PGOFF": 41, "KASAN_TAG_WIDTH": 0, "KASAN_TAG_PGOFF": 41,
         "LRU_GEN_WIDTH": 0, "LRU_GEN_PGOFF": 41}


def _tree(stub: Stub) -> TypedTree:
    return stub  # type: ignore[return-value]  # duck-typed: the methods the module calls


def _labels(L: Layout, page: int) -> dict[int, list[str]]:
    return {a.offset: a.labels_for(page) for a in L.atoms}


def test_61_folio_names_and_offsets_are_the_trees() -> None:
    L = layout_from_tree(_tree(Stub(FLAGS)), CFG)
    tail1 = _labels(L, 1)
    assert "folio._folio_dtor" in tail1[16] and "folio._folio_order" in tail1[17]
    assert "folio._pincount" in tail1[24] and "folio._pincount" not in tail1.get(28, [])
    assert "folio.__head" in tail1[8]  # 6.1's name, for the model's _head_1
    assert next(v for v in L.views if v.name == "_head_1").shown == "__head"
    # the model's page[1] fields 6.1 has not are dropped
    assert not any(v.name in ("_large_mapcount", "_mm_ids") for v in L.views)
    assert "folio._total_mapcount" in tail1[20] and "folio._folio_nr_pages" in tail1[28]
    # struct page's own members: rcu_head as mm_types.h spells it, pgmap as 6.1's
    assert "rcu_head.next" in tail1[8] and "pgmap" in tail1[8]
    assert L.size == 64 and {a.offset for a in L.atoms} >= {16, 17, 18, 20, 24, 28, 32}


def test_flags_are_clangs_and_a_field_no_constant_is_left_out() -> None:
    fl = flags_from_tree(_tree(Stub({**FLAGS, "LRU_REFS_WIDTH": None},
                                    defined={"LAST_CPUPID_NOT_IN_PAGE_FLAGS"})))
    assert fl.nr_pageflags == 22 and fl.get("ZONES").pgoff == 55 and fl.get("NODES").width == 6
    assert fl.last_cpupid_not_in_page_flags and not fl.node_not_in_page_flags
    assert [f.name for f in fl.fields][-1] == "LRU_GEN" and len(fl.left_out) == 1
    assert fl.left_out[0].startswith("LRU_REFS_WIDTH")
    with pytest.raises(KeyError):
        fl.get("LRU_REFS")
    # a field the tree does not define (no MGLRU before 6.1): width 0 below the last one
    older = flags_from_tree(_tree(Stub({k: v for k, v in FLAGS.items()
                                        if not k.startswith("LRU_GEN")})))
    assert older.get("LRU_GEN").width == 0 and older.get("LRU_GEN").pgoff == 41


def test_a_tree_without_its_page_flags_is_refused() -> None:
    with pytest.raises(InputError, match="__NR_PAGEFLAGS"):
        flags_from_tree(_tree(Stub({k: v for k, v in FLAGS.items() if k != "__NR_PAGEFLAGS"})))
    with pytest.raises(InputError, match=r"ZONES_PGOFF.*not a constant clang evaluates"):
        flags_from_tree(_tree(Stub({**FLAGS, "ZONES_PGOFF": None})))


def test_612_layout_is_the_hand_models(linux612: Path) -> None:  # noqa: F811
    from equiv.zone_device.source.ctyped import typed_for
    from equiv.zone_device.source.files import load_tree

    tree = load_tree(linux612)
    try:
        typed = typed_for(tree, CFG)
    except InputError as e:
        if "no generated kernel headers" in str(e):
            pytest.skip(str(e))
        raise
    L = layout_from_tree(typed, CFG)
    M = model_for(tree, None).layout(Layout.from_config(CFG))
    assert L.size == M.size
    for page in (None, 1, 2):
        assert ([(a.offset, a.size, a.labels_for(page)) for a in L.atoms]
                == [(a.offset, a.size, a.labels_for(page)) for a in M.atoms])
    assert [f for f in M.flags.fields if f.name != "LRU_REFS"] == list(L.flags.fields)
    assert [n.split(" ")[0] for n in L.flags.left_out] == ["LRU_REFS_WIDTH"]


def test_the_hand_models_612_kasan_hw_tag_is_612s() -> None:
    """6.12's page-flags-layout.h gives HW tags 8 bits, as SW tags (the model's 2026 tree
    gives 4): the model's 6.12 variant has 6.12's, which the C path read from clang."""
    cfg = PRESETS["arm64-4k-kasan-hw"]
    assert Layout.from_config(cfg).flags.get("KASAN_TAG").width == 4
    assert Layout.from_config(cfg).named_for("6.12").flags.get("KASAN_TAG").width == 8


def test_the_scenarios_numbers_are_the_trees(monkeypatch: pytest.MonkeyPatch) -> None:
    """as_prepared's numbers: a value clang gives that the configuration does not say
    moves into the configuration and is printed from -> to; one that is no C constant
    keeps the configuration's value and is named."""
    from equiv.zone_device.source import prepared

    stub = Stub({"PAGE_SHIFT": 12, "SECTION_SIZE_BITS": 27, "pageblock_order": 9,
                 "NODES_SHIFT": 10, "MAX_PHYSMEM_BITS": None})
    monkeypatch.setattr(prepared, "typed_for", lambda tree, cfg: stub)
    got, lines = prepared._tree_numbers(None, CFG)  # type: ignore[arg-type]  # the stub reads no tree
    assert CFG.NODES_SHIFT == 6 and got.NODES_SHIFT == 10
    assert got.MAX_PHYSMEM_BITS == CFG.MAX_PHYSMEM_BITS and got.PAGE_SHIFT == 12
    text = " ".join(lines)
    assert "NODES_SHIFT 6 -> 10" in text and "NODES_SHIFT=10" in text
    assert "MAX_PHYSMEM_BITS (include/linux/page-flags-layout.h:1: no C constant) = 46" in text

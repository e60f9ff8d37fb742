"""Concrete golden values of the slow path, derived by hand from the reference (§1-§6)."""

from __future__ import annotations

import pytest
from attrs import evolve

from equiv.config import DEFAULT, HEAD_ENCODING, WANT_VIRTUAL
from equiv.engine.bv import CBV
from equiv.loops import Ctx
from equiv.memmap import MemoryType, Scenario, concrete_inputs, with_vmemmap
from equiv.page_model import Layout, PageState
from equiv.slow_path import compound_nr_pages, init_zone_device_page, memmap_init_zone_device

L = Layout.from_config(DEFAULT)
PGMAP = 0xFFFF888012340000
VMEMMAP = 0xFFFFEA0000000000


def run_slow(order: int, ptype: MemoryType = MemoryType.GENERIC, layout: Layout = L, **kw: object):  # type: ignore[no-untyped-def]
    sc = Scenario(layout, ptype, order)
    inp = concrete_inputs(layout, **kw)  # type: ignore[arg-type]
    return sc, memmap_init_zone_device(Ctx(False), sc, inp)


def field(page: PageState, name: str, p: int | None = None) -> int:
    return int(page.get(L, name, p))  # type: ignore[call-overload]


class TestInitZoneDevicePage:
    @pytest.mark.parametrize(("ptype", "ref"), [(MemoryType.FS_DAX, 0), (MemoryType.PRIVATE, 0),
                                                (MemoryType.COHERENT, 0),
                                                (MemoryType.PCI_P2PDMA, 0),
                                                (MemoryType.GENERIC, 1)])
    def test_order0_page(self, ptype: MemoryType, ref: int) -> None:
        """Reference §6 'final state of a ZONE_DEVICE order-0 page', node 3, NUMA_BALANCING."""
        _sc, mem = run_slow(0, ptype, start_pfn=0x1000, nr_pages=1, nid=3, pgmap=PGMAP)
        p = mem.read(CBV(0, 64), CBV(0, 64))
        assert field(p, "flags") == (3 << 58) | (4 << 55) | (0x3FFF << 41) | (1 << 13)
        assert field(p, "folio.pgmap") == PGMAP
        assert [field(p, n) for n in ("zone_device_data", "mapping", "index", "private")] == [0] * 4
        assert field(p, "_mapcount") == 0xFFFFFFFF
        assert field(p, "_refcount") == ref
        assert field(p, "memcg_data") == 0

    def test_lru_points_at_itself_before_pgmap_overwrites_it(self) -> None:
        """INIT_LIST_HEAD(&page->lru): lru.next is then overwritten by pgmap, lru.prev by NULL."""
        sc = Scenario(L, MemoryType.GENERIC, 0)
        inp = with_vmemmap(sc, concrete_inputs(L, start_pfn=5, nr_pages=1))
        page = inp.mem.read(CBV(0, 64), CBV(0, 64))
        out = init_zone_device_page(sc, inp, page, CBV(5, 64))
        assert out.origin is not None
        assert out.origin[8] == ("__init_single_page: mm_zero_struct_page",
                             "__init_single_page: INIT_LIST_HEAD(&page->lru)",
                             "__init_zone_device_page: page_folio(page)->pgmap = pgmap")
        assert out.origin[16][-1] == "__init_zone_device_page: page->zone_device_data = NULL"

    def test_want_page_virtual_sets_va(self) -> None:
        """Hypothetical WANT_PAGE_VIRTUAL: virtual = PAGE_OFFSET + (pfn << PAGE_SHIFT)."""
        LV = Layout.from_config(WANT_VIRTUAL)
        _sc, mem = run_slow(0, layout=LV, start_pfn=0x1234, nr_pages=1)
        p = mem.read(CBV(0, 64), CBV(0, 64))
        assert int(p.get(LV, "virtual")) == 0xFFFF888000000000 + (0x1234 << 12)  # type: ignore[call-overload]


class TestCompound:
    def test_order2_mask_encoding(self) -> None:
        """Order 2 on x86_64 (mask encoding): tails, page[1] folio fields, page[2] list."""
        _sc, mem = run_slow(2, MemoryType.FS_DAX, start_pfn=0x400, nr_pages=4, nid=0)
        c = CBV(0, 64)
        head, p1, p2, p3 = (mem.read(c, CBV(i, 64)) for i in range(4))
        base_flags = (4 << 55) | (0x3FFF << 41) | (1 << 13)
        assert field(head, "flags") == base_flags | (1 << 6)  # PG_head
        mask = ((1 << 64) - 1) & ~((1 << (2 + 6)) - 1) | 1  # GENMASK(63, order + 6) | 1
        assert field(p3, "compound_info") == mask
        assert field(p3, "mapping") == 0xDEAD000000000400  # TAIL_MAPPING
        assert field(p3, "_refcount") == 0
        assert field(p1, "_flags_1", 1) == base_flags | 2  # order in the low byte
        assert field(p1, "_large_mapcount", 1) == 0xFFFFFFFF
        assert field(p1, "_nr_pages_mapped", 1) == 0
        assert field(p1, "_entire_mapcount", 1) == 0xFFFFFFFF
        assert field(p1, "_pincount", 1) == 0
        assert field(p1, "_mm_id_mapcount[0]", 1) == 0xFFFFFFFF
        assert field(p1, "_mm_ids", 1) == 0
        assert field(p1, "_nr_pages", 1) == 4
        lst = VMEMMAP + (0x402 << 6) + 16
        assert field(p2, "_deferred_list.next", 2) == lst
        assert field(p2, "_deferred_list.prev", 2) == lst

    def test_head_encoding(self) -> None:
        """Without HUGETLB_PAGE_OPTIMIZE_VMEMMAP tails hold head | 1."""
        LH = Layout.from_config(HEAD_ENCODING)
        _sc, mem = run_slow(1, layout=LH, start_pfn=0x800, nr_pages=2)
        p1 = mem.read(CBV(0, 64), CBV(1, 64))
        assert int(p1.get(LH, "compound_info")) == (VMEMMAP + (0x800 << 6)) | 1  # type: ignore[call-overload]

    @pytest.mark.parametrize(("order", "altmap", "early", "want"), [
        (7, None, False, 128), (8, None, False, 128), (9, None, False, 128),
        (9, (1, 0), False, 512), (9, None, True, 512), (18, None, False, 128)])
    def test_compound_nr_pages(self, order: int, altmap: tuple[int, int] | None, early: bool,
                               want: int) -> None:
        """Only VMEMMAP_RESERVE_NR * PAGE_SIZE / 64 = 128 struct pages are written when the
        vmemmap is deduplicated: shift > 7, no altmap, not an early section."""
        sc = Scenario(L, MemoryType.GENERIC, order)
        inp = concrete_inputs(L, start_pfn=0, nr_pages=1 << order, altmap=altmap,
                              early=frozenset({0}) if early else frozenset())
        nr, _ = compound_nr_pages(sc, inp, CBV(0, 64))
        assert int(nr) == want  # type: ignore[call-overload]

    def test_deduplicated_tails_alias(self) -> None:
        """Order 9, optimised: tail 200 reads the struct page stored in slot 64 + 200 % 64,
        which a store to tail 72 or 200 reaches alike (one name per struct page)."""
        _sc, mem = run_slow(9, start_pfn=0x40000, nr_pages=512)
        assert int(mem.key(CBV(0, 64), CBV(200, 64))) == 64 + 200 % 64  # type: ignore[call-overload]
        assert int(mem.key(CBV(0, 64), CBV(72, 64))) == 64 + 200 % 64  # type: ignore[call-overload]
        assert mem.read(CBV(0, 64), CBV(200, 64)) is mem.read(CBV(0, 64), CBV(72, 64))
        assert field(mem.read(CBV(0, 64), CBV(200, 64)), "mapping") == 0xDEAD000000000400


class TestPageblock:
    def test_range_rounds_start_up(self) -> None:
        """pageblock_align() rounds up: the partial first pageblock is left alone."""
        _sc, mem = run_slow(0, start_pfn=0x100, nr_pages=0x500, garbage=0xF0)
        cells = {b: int(mem.read_pb(CBV(b, 64))) for b in range(4)}  # type: ignore[call-overload]
        assert cells[0] == 0xF0  # block 0 (pfn 0..511) starts before the range: untouched
        assert cells[1] == (0xF1 & ~0x17) | 1  # MIGRATE_MOVABLE
        assert cells[2] == (0xF2 & ~0x17) | 1
        assert cells[3] == 0xF3  # pfn 0x600 >= end 0x600

    def test_mobility_disabled_gives_unmovable(self) -> None:
        """init_pageblock_migratetype: MOVABLE becomes UNMOVABLE without mobility grouping."""
        _sc, mem = run_slow(0, start_pfn=0, nr_pages=512, garbage=0xFF, mobility_disabled=True)
        assert int(mem.read_pb(CBV(0, 64))) == 0xFF & ~0x17  # type: ignore[call-overload]


def test_nothing_written_without_pgmap() -> None:
    """WARN_ON_ONCE(!pgmap) returns before any store."""
    _sc, mem = run_slow(0, start_pfn=0, nr_pages=1, pgmap=0)
    assert mem.read(CBV(0, 64), CBV(0, 64)).origin == ((),) * 64  # empty chains: never written


def test_evolve_keeps_config_frozen() -> None:
    """Configs are frozen values; variants are made with evolve."""
    with pytest.raises(AttributeError):
        DEFAULT.NODES_SHIFT = 3  # type: ignore[misc]
    assert evolve(DEFAULT, NODES_SHIFT=3).NODES_SHIFT == 3

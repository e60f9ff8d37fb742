"""Differential tests: the independent concrete twin (equiv/zone_device/twin.py) against the
model's concrete run."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equiv.config import DEFAULT, PRESETS, Config
from equiv.engine.bv import CBV
from equiv.loops import Ctx
from equiv.memmap import MemoryType, Scenario, concrete_inputs
from equiv.page_model import Layout
from equiv.slow_path import memmap_init_zone_device
from equiv.template_path import REVISIONS, fast_path
from equiv.zone_device.twin import TwinConfig, TwinInputs, TwinResult, genmask, run

PGMAP = 0xFFFF888012340000
VMEMMAP = 0xFFFFEA0000000000
PAGE_OFFSET = 0xFFFF888000000000

#: (model config, twin config) pairs
CONFIGS: dict[str, tuple[Config, TwinConfig]] = {
    "default": (DEFAULT, TwinConfig()),
    "compound-info-head": (PRESETS["x86_64-compound-info-head"],
                           TwinConfig(HUGETLB_PAGE_OPTIMIZE_VMEMMAP=False)),
    "want-page-virtual": (PRESETS["x86_64-want-page-virtual"],
                          TwinConfig(size=80, WANT_PAGE_VIRTUAL=True)),
}


def initial_byte(g: int, c: int, s: int) -> int:
    return (g + 7 * c + 13 * s) & 0xFF or 0xA5


def twin_inputs(tcfg: TwinConfig, *, start_pfn: int, nr_pages: int, nid: int = 1, pgmap: int = PGMAP,
                altmap: tuple[int, int] | None = None, mobility_disabled: bool = False,
                early: frozenset[int] = frozenset(), garbage: int = 0x5A) -> TwinInputs:
    return TwinInputs(
        start_pfn=start_pfn, nr_pages=nr_pages, nid=nid, pgmap=pgmap, altmap=altmap,
        vmemmap_base=VMEMMAP, page_offset=PAGE_OFFSET, early_sections=early,
        mobility_disabled=mobility_disabled,
        initial=lambda c, s: bytes([initial_byte(garbage, c, s)]) * tcfg.size,
        initial_pb=lambda b: (garbage ^ b) & 0xFF)


def u64(b: bytes, off: int) -> int:
    return int.from_bytes(b[off:off + 8], "little")


def u32(b: bytes, off: int) -> int:
    return int.from_bytes(b[off:off + 4], "little")


def twin(name: str, ptype: int, order: int, path: str, **kw: object) -> TwinResult:
    tcfg = CONFIGS[name][1]
    return run(tcfg, ptype, order, twin_inputs(tcfg, **kw), path)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# (a) hand-computed checks of the twin itself (reference §5, §4, §6)

def test_flags_layout_worked_example() -> None:
    c = TwinConfig()
    assert (c.nodes_pgshift, c.zones_pgshift, c.last_cpupid_pgshift, c.last_cpupid_width) == (58, 55, 41, 14)


@pytest.mark.parametrize("ptype", range(1, 6))
def test_order0_page(ptype: int) -> None:
    nid, pfn = 5, 0x123456
    r = twin("default", ptype, 0, "slow", start_pfn=pfn, nr_pages=2, nid=nid)
    p = r.page(0, 0)
    assert u64(p, 0) == (nid << 58) | (4 << 55) | (0x3FFF << 41) | (1 << 13)
    assert u64(p, 8) == PGMAP
    assert p[16:48] == bytes(32)
    assert u32(p, 48) == 0xFFFFFFFF
    assert u32(p, 52) == (1 if ptype == 4 else 0)
    assert u64(p, 56) == 0
    assert r.page(2, 0) == bytes([initial_byte(0x5A, 2, 0)]) * 64        # past the range: untouched
    assert r.page(1, 0) == twin("default", ptype, 0, "fast", start_pfn=pfn, nr_pages=2, nid=nid).page(1, 0)


def test_compound_order2_mask_encoding() -> None:
    head_pfn = 0x200000
    r = twin("default", 1, 2, "slow", start_pfn=head_pfn, nr_pages=4, nid=2)
    head, t1, t2, t3 = (r.page(0, s) for s in range(4))
    base = (2 << 58) | (4 << 55) | (0x3FFF << 41) | (1 << 13)
    assert u64(head, 0) == base | (1 << 6)
    assert genmask(63, 8) | 1 == 0xFFFFFFFFFFFFFF01
    for t in (t1, t2, t3):
        assert u64(t, 8) == genmask(63, 8) | 1
        assert u32(t, 52) == 0
    assert u64(t3, 24) == 0xDEAD000000000400                               # TAIL_MAPPING
    assert u64(t1, 0) == base | 2                                           # folio order in _flags_1
    assert u32(t1, 16) == 0xFFFFFFFF and u32(t1, 20) == 0        # _large_mapcount, _nr_pages_mapped
    assert u32(t1, 24) == 0xFFFFFFFF and u32(t1, 28) == 0                   # _entire_mapcount, _pincount
    assert u64(t1, 32) == 0xFFFFFFFFFFFFFFFF and u64(t1, 40) == 0           # _mm_id_mapcount, _mm_ids
    assert u64(t1, 56) == 4                                                 # _nr_pages
    dl = VMEMMAP + (head_pfn + 2) * 64 + 16
    assert u64(t2, 16) == dl and u64(t2, 24) == dl                          # _deferred_list


def test_compound_head_encoding_and_virtual() -> None:
    r = twin("compound-info-head", 1, 1, "fast", start_pfn=0x400, nr_pages=4)
    assert u64(r.page(1, 1), 8) == (VMEMMAP + 0x402 * 64) | 1
    v = twin("want-page-virtual", 4, 2, "fast", start_pfn=0x400, nr_pages=8)
    for c in range(2):
        for s in range(4):
            assert u64(v.page(c, s), 64) == PAGE_OFFSET + ((0x400 + 4 * c + s) << 12)


def test_pageblocks() -> None:
    r = twin("default", 1, 0, "slow", start_pfn=0x3F0, nr_pages=0x420, garbage=0xFF)
    assert r.pageblock(1) == 0xFF ^ 1                                       # below ALIGN(start, 512)
    assert r.pageblock(2) == ((0xFF ^ 2) & ~0x17) | 1
    assert r.pageblock(3) == ((0xFF ^ 3) & ~0x17) | 1
    assert r.pageblock(4) == ((0xFF ^ 4) & ~0x17) | 1                       # 0x800 < end = 0x810
    assert r.pageblock(5) == 0xFF ^ 5
    m = twin("default", 1, 0, "slow", start_pfn=0x400, nr_pages=1, mobility_disabled=True, garbage=0x0F)
    assert m.pageblock(2) == (0x0F ^ 2) & ~0x17


# ---------------------------------------------------------------------------------------------
# (b) twin vs the model's concrete evaluation

def model_run(cfg: Config, ptype: int, order: int, path: str, *, start_pfn: int, nr_pages: int, nid: int,
              pgmap: int, altmap: tuple[int, int] | None, mobility_disabled: bool, early: frozenset[int],
              garbage: int):  # type: ignore[no-untyped-def]
    L = Layout.from_config(cfg)
    sc = Scenario(L, MemoryType(ptype), order)
    inp = concrete_inputs(L, start_pfn=start_pfn, nr_pages=nr_pages, nid=nid, pgmap=pgmap, altmap=altmap,
                          vmemmap_base=VMEMMAP, page_offset=PAGE_OFFSET,
                          mobility_disabled=mobility_disabled, early=early, garbage=garbage)
    if path == "slow":
        return memmap_init_zone_device(Ctx(False), sc, inp)
    return fast_path(REVISIONS["v11"])(Ctx(False), sc, inp)


def compare(name: str, ptype: int, order: int, **kw) -> None:  # type: ignore[no-untyped-def]
    cfg, tcfg = CONFIGS[name]
    size = Layout.from_config(cfg).size
    assert size == tcfg.size
    start, nr = kw["start_pfn"], kw["nr_pages"]
    first = start + sum(kw["altmap"]) if kw["altmap"] else start
    ncomp = max(0, -(-(start + nr - first) >> order))
    for path in ("slow", "fast"):
        mem = model_run(cfg, ptype, order, path, **kw)
        tw = run(tcfg, ptype, order, twin_inputs(tcfg, **kw), path)
        for c in range(ncomp + 1):
            for s in range(1 << order):
                want = tw.page(c, s)
                got = int(mem.load(CBV((c << 64) | s, 128)).bits).to_bytes(size, "little")  # raw slot
                assert got == want, (f"{path} compound {c} slot {s}:\n model {got.hex()}\n twin  "
                                     f"{want.hex()}")
        for b in range((start >> 9) - 1, ((start + nr) >> 9) + 2):
            assert int(mem.read_pb(CBV(b, 64))) == tw.pageblock(b), f"{path} pageblock {b}"


@st.composite
def scenarios(draw: st.DrawFn, orders: tuple[int, ...] = (0, 1, 2, 3, 4),
              max_compounds: int = 3) -> tuple:  # type: ignore[type-arg]
    name = draw(st.sampled_from(sorted(CONFIGS)))
    ptype = draw(st.integers(1, 5))
    o = draw(st.sampled_from(orders))
    step = 1 << o
    sec = draw(st.integers(1, 3))
    # start at or just below a section boundary, so compounds can straddle into the next section
    start = (sec << 15) + draw(st.integers(-3, 3)) * step
    ncomp = draw(st.integers(0, max_compounds))
    nr = ncomp * step
    # the model's assumption "reserve + free <= nr_pages" (equiv.memmap.assumptions): see
    # test_altmap_past_end for what v11 does outside it
    altmap = None
    if draw(st.booleans()):
        reserve = draw(st.integers(0, nr))
        altmap = (reserve, draw(st.integers(0, nr - reserve)))
    kw = dict(
        start_pfn=start, nr_pages=nr, nid=draw(st.integers(0, 63)),
        pgmap=draw(st.sampled_from([PGMAP, PGMAP, PGMAP, 0xFFFF8880DEAD0040, 0])),
        altmap=altmap, mobility_disabled=draw(st.booleans()),
        early=frozenset(draw(st.sets(st.integers(sec - 1, sec + 1)))),
        garbage=draw(st.integers(0, 255)))
    return name, ptype, o, kw


@settings(max_examples=300)
@given(scenarios())
def test_twin_matches_model(sc: tuple) -> None:  # type: ignore[type-arg]
    name, ptype, order, kw = sc
    compare(name, ptype, order, **kw)


@pytest.mark.slow
@settings(max_examples=5000)
@given(scenarios())
def test_twin_matches_model_long(sc: tuple) -> None:  # type: ignore[type-arg]
    name, ptype, order, kw = sc
    compare(name, ptype, order, **kw)


@pytest.mark.parametrize("early", [frozenset(), frozenset({1})])
def test_twin_matches_model_order9_dedup(early: frozenset[int]) -> None:
    """Order 9 on the 64-byte layout: 128 struct pages written per compound, tails >= 128 aliased
    (reference §3a, §9), unless the head sits in an early section."""
    compare("default", 3, 9, start_pfn=(1 << 15) - 512, nr_pages=3 * 512, nid=7, pgmap=PGMAP, altmap=None,
            mobility_disabled=False, early=early, garbage=0x33)


@pytest.mark.slow
@settings(max_examples=100)
@given(scenarios(orders=(8, 9), max_compounds=2))
def test_twin_matches_model_large_orders(sc: tuple) -> None:  # type: ignore[type-arg]
    """Orders 8 and 9: deduplicated vmemmap on the 64-byte layouts unless an altmap or an early
    section disables it; never on the 80-byte layout (size not a power of 2)."""
    name, ptype, order, kw = sc
    compare(name, ptype, order, **kw)


def test_altmap_past_end() -> None:
    """Outside the model's assumption ``reserve + free <= nr_pages`` (not reachable from
    memremap_pages: __add_pages() refuses such an altmap, equiv.memmap.SOURCES
    ["altmap-in-range"]): the v7.3 loop ``pfn < end_pfn`` writes nothing, but v11's
    ``if (!nr_pages) return;`` sees the wrapped, non-zero unsigned nr_pages and initialises the
    first head at ``start_pfn`` (past end_pfn) before its loop test (reference §3a, §7 patch 3)."""
    kw = dict(start_pfn=0x8000, nr_pages=2, altmap=(1, 3))
    slow = twin("default", 1, 1, "slow", **kw)
    fast = twin("default", 1, 1, "fast", **kw)
    untouched = bytes([initial_byte(0x5A, 0, 0)]) * 64
    assert slow.page(0, 0) == untouched
    assert fast.page(0, 0) != untouched and u64(fast.page(0, 0), 0) >> 6 & 1

"""Layout and flags formulas against the kernel's numbers (reference §5, §6)."""

from __future__ import annotations

import pytest
from attrs import evolve

from equiv.config import DEFAULT, Config
from equiv.engine.errors import ConfigError
from equiv.page_model import FlagsLayout, Layout


class TestFlagsLayout:
    def test_worked_example(self) -> None:
        """The reference's worked example: NODES 6, cpupid 14 (NR_CPUS 64), LRU_GEN, 22 flags
        (without PG_arch_2: x86_64 with X86_PAT off)."""
        cfg = evolve(DEFAULT, NODES_SHIFT=6, NR_CPUS=64, NUMA_BALANCING=True, LRU_GEN=True,
                     MEMORY_FAILURE=True, PAGE_IDLE_FLAG=False, ARCH_USES_PG_ARCH_2=False)
        fl = FlagsLayout.from_config(cfg)
        got = {f.name: (f.width, f.pgshift) for f in fl.fields}
        assert fl.nr_pageflags == 22
        assert got == {"SECTIONS": (0, 0), "NODES": (6, 58), "ZONES": (3, 55),
                       "LAST_CPUPID": (14, 41), "KASAN_TAG": (0, 0), "LRU_GEN": (3, 38),
                       "LRU_REFS": (2, 36)}
        assert not fl.last_cpupid_not_in_page_flags

    def test_maxsmp_cpupid_still_fits(self) -> None:
        """MAXSMP (NODES 10, NR_CPUS 8192 -> cpupid 21) fits even with 25 page flags (PG_arch_2
        of X86_PAT, and the two of PAGE_IDLE_FLAG)."""
        cfg = evolve(DEFAULT, NODES_SHIFT=10, NR_CPUS=8192, PAGE_IDLE_FLAG=True)
        fl = FlagsLayout.from_config(cfg)
        assert fl.nr_pageflags == 25
        assert fl.get("LAST_CPUPID").width == 21
        assert fl.get("NODES").pgshift == 54

    def test_cpupid_out_of_flags_adds_last_cpupid(self) -> None:
        """KASAN SW tags + MAXSMP + LRU_GEN push the cpupid out: struct page gains _last_cpupid."""
        cfg = evolve(DEFAULT, NODES_SHIFT=10, NR_CPUS=8192, KASAN_SW_TAGS=True, LRU_GEN=True)
        L = Layout.from_config(cfg)
        assert L.flags.last_cpupid_not_in_page_flags
        assert L.view("_last_cpupid").offset == 64
        assert L.size == 80

    def test_nodes_that_do_not_fit_are_a_config_error(self) -> None:
        """Under VMEMMAP the kernel #errors when NODES do not fit; so do we."""
        cfg = evolve(DEFAULT, NODES_SHIFT=40)
        with pytest.raises(ConfigError, match="does not fit"):
            FlagsLayout.from_config(cfg)


class TestLayout:
    @pytest.mark.parametrize(("knobs", "size"), [
        ({}, 64),
        ({"MEMCG": False, "SLAB_OBJ_EXT": False}, 64),  # 56 rounded up to 16-byte alignment
        ({"MEMCG": False, "SLAB_OBJ_EXT": False, "HAVE_ALIGNED_STRUCT_PAGE": False}, 56),
        ({"KMSAN": True}, 80),
        ({"WANT_PAGE_VIRTUAL": True}, 80),
        ({"WANT_PAGE_VIRTUAL": True, "HAVE_ALIGNED_STRUCT_PAGE": False}, 72),
        ({"KMSAN": True, "NODES_SHIFT": 10, "NR_CPUS": 8192, "KASAN_SW_TAGS": True,
          "LRU_GEN": True}, 96),
    ])
    def test_struct_page_size(self, knobs: dict[str, object], size: int) -> None:
        """sizeof(struct page) for the configs the v11 x86 patch names (64/80/96) and others."""
        assert Layout.from_config(evolve(DEFAULT, **knobs)).size == size  # type: ignore[arg-type]

    def test_offsets_of_struct_page_and_folio(self) -> None:
        """Offsets of reference §6 and the FOLIO_MATCH asserts."""
        L = Layout.from_config(DEFAULT)
        want = {("flags", None): 0, ("compound_info", None): 8, ("folio.pgmap", None): 8,
                ("zone_device_data", None): 16, ("mapping", None): 24, ("index", None): 32,
                ("private", None): 40, ("_mapcount", None): 48, ("_refcount", None): 52,
                ("memcg_data", None): 56, ("_flags_1", 1): 0, ("_large_mapcount", 1): 16,
                ("_nr_pages_mapped", 1): 20, ("_entire_mapcount", 1): 24, ("_pincount", 1): 28,
                ("_mm_id_mapcount[0]", 1): 32, ("_mm_id_mapcount[1]", 1): 36,
                ("_mm_ids", 1): 40, ("_nr_pages", 1): 56, ("_deferred_list.next", 2): 16,
                ("_deferred_list.prev", 2): 24}
        got = {(n, p): L.view(n, p).offset for n, p in want}
        assert got == want

    @pytest.mark.parametrize("cfg", [DEFAULT, evolve(DEFAULT, KMSAN=True),
                                     evolve(DEFAULT, WANT_PAGE_VIRTUAL=True)])
    def test_atoms_partition_every_byte(self, cfg: Config) -> None:
        """Obligations come from atoms, so the atoms must tile [0, sizeof) with no gap."""
        L = Layout.from_config(cfg)
        end = 0
        for a in L.atoms:
            assert a.offset == end
            end += a.size
        assert end == L.size

    def test_padding_is_an_atom(self) -> None:
        """Bytes no field covers (struct alignment padding) are still compared."""
        L = Layout.from_config(evolve(DEFAULT, WANT_PAGE_VIRTUAL=True))
        assert [a.name for a in L.atoms][-1] == "<padding>"


class TestKernelNames:
    """A run about an older kernel prints that kernel's field names: 6.12's mm_types.h has
    no compound_info (its word at offset 8 is compound_head, and pgmap of struct page)."""

    def test_612_names_the_word_at_8_as_612_does(self) -> None:
        base = Layout.from_config(DEFAULT)
        old = base.named_for("6.12")
        word8 = next(a for a in old.atoms if a.offset == 8)
        assert "compound_head" in word8.names_for(None) and "pgmap" in word8.names_for(None)
        assert not {"compound_info", "folio.pgmap"} & set(word8.names_for(None))
        assert old.view("compound_info").shown == "compound_head"  # the paths' name still
        assert next(a for a in base.atoms if a.offset == 8).names_for(None)[1] == "compound_info"
        assert [a.names_for(1) for a in old.atoms if a.offset != 8] == \
            [a.names_for(1) for a in base.atoms if a.offset != 8]

    def test_the_models_own_release_keeps_its_names(self) -> None:
        base = Layout.from_config(DEFAULT)
        assert base.named_for("7.3").atoms == base.atoms

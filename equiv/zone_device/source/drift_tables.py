"""The effects each hand-written model mirrors, per modelled function, in kernel terms.

One tuple of normalised statements per function (see :func:`equiv.zone_device.source.drift.effects` for the
normalisation).  They are kept beside the hand-written paths and change with them:

* ``v6.12.y`` is :mod:`equiv.zone_device.source.slow_v612y` (6.12.117).  The source-derived proof
checks the hand
  path against the text these lines were read from (Debian linux-source-6.12,
  6.12.117-1~deb12u1), so the table, the text and the hand path agree.
* ``v6.12`` is ``--compare v6.12`` (:func:`equiv.slow_variants._path_612`): the v6.12 release
  as the reference recalls it (per-page pageblock migratetype, no early_section() test), with
  the 2026 ``prep_compound_head()`` / ``set_compound_head()`` the hand path reuses.
* ``v7.3-rc1`` is :mod:`equiv.slow_path`, whose sources docs/model.md lists
  (§1-§4); no v7.3 tree was available to check it against.
"""

from __future__ import annotations

from attrs import frozen


@frozen
class Table:
    """The effects of every tabled function of one model."""

    functions: dict[str, tuple[str, ...]]


_V612Y: dict[str, tuple[str, ...]] = {
    '__init_single_page': (
        'mm_zero_struct_page(page);',
        'set_page_links(page, zone, nid, pfn);',
        'init_page_count(page);',
        'atomic_set(&page->_mapcount, -1);',
        'page_cpupid_reset_last(page);',
        'page_kasan_tag_reset(page);',
        'INIT_LIST_HEAD(&page->lru);',
    ),
    '__init_zone_device_page': (
        '__init_single_page(page, pfn, zone_idx, nid);',
        '__SetPageReserved(page);',
        'page->pgmap = pgmap;',
        'page->zone_device_data = NULL;',
        'if (pgmap->type == MEMORY_DEVICE_PRIVATE || pgmap->type == MEMORY_DEVICE_COHERENT)',
        'set_page_count(page, 0);',
        'end if',
    ),
    'compound_nr_pages': (
        'if (early_section(__pfn_to_section(pfn)) || !vmemmap_can_optimize(altmap, pgmap))',
        'return pgmap_vmemmap_nr(pgmap);',
        'end if',
        'return VMEMMAP_RESERVE_NR * (PAGE_SIZE / sizeof(struct page));',
    ),
    'memmap_init_compound': (
        'unsigned long pfn, end_pfn = head_pfn + nr_pages;',
        'unsigned int order = pgmap->vmemmap_shift;',
        '__SetPageHead(head);',
        'for (pfn = head_pfn + 1; pfn < end_pfn; pfn++)',
        'struct page *page = pfn_to_page(pfn);',
        '__init_zone_device_page(page, pfn, zone_idx, nid, pgmap);',
        'prep_compound_tail(head, pfn - head_pfn);',
        'set_page_count(page, 0);',
        'if (pfn == head_pfn + 1)',
        'prep_compound_head(head, order);',
        'end if',
        'end for',
    ),
    'memmap_init_zone_device': (
        'unsigned long pfn, end_pfn = start_pfn + nr_pages;',
        'struct pglist_data *pgdat = zone->zone_pgdat;',
        'struct vmem_altmap *altmap = pgmap_altmap(pgmap);',
        'unsigned int pfns_per_compound = pgmap_vmemmap_nr(pgmap);',
        'unsigned long zone_idx = zone_idx(zone);',
        'unsigned long start = jiffies;',
        'int nid = pgdat->node_id;',
        'if (WARN_ON_ONCE(!pgmap || zone_idx != ZONE_DEVICE))',
        'return;',
        'end if',
        'if (altmap)',
        'start_pfn = altmap->base_pfn + vmem_altmap_offset(altmap);',
        'nr_pages = end_pfn - start_pfn;',
        'end if',
        'for (pfn = start_pfn; pfn < end_pfn; pfn += pfns_per_compound)',
        'struct page *page = pfn_to_page(pfn);',
        '__init_zone_device_page(page, pfn, zone_idx, nid, pgmap);',
        'if (IS_ALIGNED(pfn, PAGES_PER_SECTION))',
        'end if',
        'if (pfns_per_compound == 1)',
        'continue;',
        'end if',
        'memmap_init_compound(page, pfn, zone_idx, nid, pgmap, compound_nr_pages(pfn, altmap, pgmap));',
        'end for',
        'pageblock_migratetype_init_range(start_pfn, nr_pages, MIGRATE_MOVABLE);',
    ),
    'pageblock_migratetype_init_range': (
        'const unsigned long end = pfn + nr_pages;',
        'for (pfn = pageblock_align(pfn); pfn < end; pfn += pageblock_nr_pages)',
        'set_pageblock_migratetype(pfn_to_page(pfn), migratetype);',
        'if (IS_ALIGNED(pfn, PAGES_PER_SECTION))',
        'end if',
        'end for',
    ),
    'prep_compound_head': (
        'struct folio *folio = (struct folio *)page;',
        'folio_set_order(folio, order);',
        'atomic_set(&folio->_large_mapcount, -1);',
        'atomic_set(&folio->_entire_mapcount, -1);',
        'atomic_set(&folio->_nr_pages_mapped, 0);',
        'atomic_set(&folio->_pincount, 0);',
        'if (order > 1)',
        'INIT_LIST_HEAD(&folio->_deferred_list);',
        'end if',
    ),
    'prep_compound_tail': (
        'struct page *p = head + tail_idx;',
        'p->mapping = TAIL_MAPPING;',
        'set_compound_head(p, head);',
        'set_page_private(p, 0);',
    ),
    'folio_set_order': (
        'if (WARN_ON_ONCE(!order || !folio_test_large(folio)))',
        'return;',
        'end if',
        'folio->_flags_1 = (folio->_flags_1 & ~0xffUL) | order;',
        'folio->_folio_nr_pages = 1U << order;',
    ),
    'set_compound_head': (
        'WRITE_ONCE(page->compound_head, (unsigned long)head + 1);',
    ),
    'set_page_links': (
        'set_page_zone(page, zone);',
        'set_page_node(page, node);',
    ),
    'set_page_zone': (
        'page->flags &= ~(ZONES_MASK << ZONES_PGSHIFT);',
        'page->flags |= (zone & ZONES_MASK) << ZONES_PGSHIFT;',
    ),
    'set_page_node': (
        'page->flags &= ~(NODES_MASK << NODES_PGSHIFT);',
        'page->flags |= (node & NODES_MASK) << NODES_PGSHIFT;',
    ),
    'set_page_count': (
        'atomic_set(&page->_refcount, v);',
        'if (page_ref_tracepoint_active(page_ref_set))',
        '__page_ref_set(page, v);',
        'end if',
    ),
    'init_page_count': (
        'set_page_count(page, 1);',
    ),
    'page_cpupid_reset_last': (
        'page->flags |= LAST_CPUPID_MASK << LAST_CPUPID_PGSHIFT;',
    ),
    'page_kasan_tag_reset': (
    ),
    '__mm_zero_struct_page': (
        'unsigned long *_pp = (void *)page;',
        'switch (sizeof(struct page))',
        'case 96',
        '_pp[11] = 0;',
        'case 88',
        '_pp[10] = 0;',
        'case 80',
        '_pp[9] = 0;',
        'case 72',
        '_pp[8] = 0;',
        'case 64',
        '_pp[7] = 0;',
        'case 56',
        '_pp[6] = 0;',
        '_pp[5] = 0;',
        '_pp[4] = 0;',
        '_pp[3] = 0;',
        '_pp[2] = 0;',
        '_pp[1] = 0;',
        '_pp[0] = 0;',
        'end switch',
    ),
    'set_page_private': (
        'page->private = private;',
    ),
    'pgmap_altmap': (
        'if (pgmap->flags & PGMAP_ALTMAP_VALID)',
        'return &pgmap->altmap;',
        'end if',
        'return NULL;',
    ),
    'pgmap_vmemmap_nr': (
        'return 1 << pgmap->vmemmap_shift;',
    ),
    'vmem_altmap_offset': (
        'if (altmap)',
        'return altmap->reserve + altmap->free;',
        'end if',
        'return 0;',
    ),
    '__vmemmap_can_optimize': (
        'unsigned long nr_pages;',
        'unsigned long nr_vmemmap_pages;',
        'if (!pgmap || !is_power_of_2(sizeof(struct page)))',
        'return false;',
        'end if',
        'nr_pages = pgmap_vmemmap_nr(pgmap);',
        'nr_vmemmap_pages = ((nr_pages * sizeof(struct page)) >> PAGE_SHIFT);',
        'return !altmap && (nr_vmemmap_pages > VMEMMAP_RESERVE_NR);',
    ),
}

_PREP_HEAD_2026 = (
    "struct folio *folio = (struct folio *)page;",
    "folio_set_order(folio, order);",
    "atomic_set(&folio->_large_mapcount, -1);",
    "if (IS_ENABLED(CONFIG_PAGE_MAPCOUNT))",
    "atomic_set(&folio->_nr_pages_mapped, 0);",
    "end if",
    "if (IS_ENABLED(CONFIG_MM_ID))",
    "folio->_mm_ids = 0;",
    "folio->_mm_id_mapcount[0] = -1;",
    "folio->_mm_id_mapcount[1] = -1;",
    "end if",
    "if (IS_ENABLED(CONFIG_64BIT) || order > 1)",
    "atomic_set(&folio->_pincount, 0);",
    "atomic_set(&folio->_entire_mapcount, -1);",
    "end if",
    "if (order > 1)",
    "INIT_LIST_HEAD(&folio->_deferred_list);",
    "end if",
)

_V612: dict[str, tuple[str, ...]] = {
    **_V612Y,
    "__init_zone_device_page": (
        "__init_single_page(page, pfn, zone_idx, nid);",
        "__SetPageReserved(page);",
        "page->pgmap = pgmap;",
        "page->zone_device_data = NULL;",
        "if (pageblock_aligned(pfn))",
        "set_pageblock_migratetype(page, MIGRATE_MOVABLE);",
        "end if",
        "if (pgmap->type == MEMORY_DEVICE_PRIVATE || pgmap->type == MEMORY_DEVICE_COHERENT)",
        "set_page_count(page, 0);",
        "end if",
    ),
    "compound_nr_pages": (
        "if (!vmemmap_can_optimize(altmap, pgmap))",
        "return pgmap_vmemmap_nr(pgmap);",
        "end if",
        "return VMEMMAP_RESERVE_NR * (PAGE_SIZE / sizeof(struct page));",
    ),
    "memmap_init_zone_device": tuple(
        s.replace("compound_nr_pages(pfn, altmap, pgmap)", "compound_nr_pages(altmap, pgmap)")
        for s in _V612Y["memmap_init_zone_device"]
        if not s.startswith("pageblock_migratetype_init_range(")),
    "prep_compound_head": _PREP_HEAD_2026,
}
del _V612["pageblock_migratetype_init_range"]

_V73: dict[str, tuple[str, ...]] = {
    **{k: _V612Y[k] for k in ("__init_single_page", "compound_nr_pages", "memmap_init_zone_device",
                               "pageblock_migratetype_init_range")},
    "__init_zone_device_page": (
        "__init_single_page(page, pfn, zone_idx, nid);",
        "__SetPageReserved(page);",
        "page_folio(page)->pgmap = pgmap;",
        "page->zone_device_data = NULL;",
        "switch (pgmap->type)",
        "case MEMORY_DEVICE_FS_DAX",
        "case MEMORY_DEVICE_PRIVATE",
        "case MEMORY_DEVICE_COHERENT",
        "case MEMORY_DEVICE_PCI_P2PDMA",
        "set_page_count(page, 0);",
        "break;",
        "case MEMORY_DEVICE_GENERIC",
        "break;",
        "end switch",
    ),
    "memmap_init_compound": (
        "unsigned long pfn, end_pfn = head_pfn + nr_pages;",
        "unsigned int order = pgmap->vmemmap_shift;",
        "__SetPageHead(head);",
        "for (pfn = head_pfn + 1; pfn < end_pfn; pfn++)",
        "struct page *page = pfn_to_page(pfn);",
        "__init_zone_device_page(page, pfn, zone_idx, nid, pgmap);",
        "prep_compound_tail(page, head, order);",
        "set_page_count(page, 0);",
        "end for",
        "prep_compound_head(head, order);",
    ),
    "prep_compound_tail": (
        "tail->mapping = TAIL_MAPPING;",
        "set_compound_head(tail, head, order);",
        "set_page_private(tail, 0);",
    ),
    "prep_compound_head": _PREP_HEAD_2026,
}

TABLES: dict[str, Table] = {
    "v6.12.y": Table(_V612Y),
    "v6.12": Table(_V612),
    "v7.3-rc1": Table(_V73),
}

__all__ = ["TABLES", "Table"]

"""Revisions of the series "mm/vmalloc: Speed up ioremap, vmalloc and vmap with contiguous
memory" (Wen Jiang, Barry Song, 2026) as knobs of one fast-path construction.

Sources (listed in docs/model.md): the mm-tree snapshots POST-C1
(``1054009064/linux`` mm/vmalloc.c @ 01bddf7cda69, "map contiguous pages in batches for vmap()
if possible") and POST-C2 (@ 36e4f471846e, "simplify vmap batching helper and limit scan by
PFN alignment"), the arm64 hook POST-H1 (``sjp38/linux`` arch/arm64/include/asm/vmalloc.h @
23c915831145).  The v8 patch text is unknown [N]; what the v8 cover letter says beyond the
snapshots is [M].  Every point the reference leaves open is a named choice, printed with
every result (:attr:`Revision.choices`).
"""

from __future__ import annotations

from attrs import evolve, field, frozen
from attrs.validators import in_, instance_of, not_

from equiv.engine.errors import lookup
from equiv.vmap.arch import Hook
from equiv.vmap.names import TRYLOCKS as TRYLOCKS  # re-exported with the revisions

#: choices every revision shares (printed with every result)
COMMON_CHOICES: tuple[str, ...] = (
    "arm64 4K granule, 4 levels (VA_BITS=48, p4d folded), 48-bit PA; "
    "CONFIG_HAVE_ARCH_HUGE_VMAP=y, HAVE_ARCH_HUGE_VMALLOC=y, HUGETLB_PAGE=y, KMSAN=n; "
    "no nohugeiomap / nohugevmalloc (ioremap_max_page_shift = 63)",
    "pud_sect_supported() is PAGE_SIZE == SZ_4K (6.12 pgtable.h), true here: ioremap may "
    "install PUD sections",
    "a present pmd/pud table where a block fits: BASE-C frees it unconditionally "
    "(pmd_present(*pmd) && !pmd_free_pte_page(), which returns 1 on arm64, after a blocking "
    "init_mm lock-unlock while ptdump runs [I]); POST-C1 frees it "
    "only under mmap_read_trylock(&init_mm) (ptdump exclusion) and otherwise maps the slot "
    "one level down. Default (trylock='succeeds'): the trylock succeeds (no concurrent "
    "ptdump); trylock='oracle' makes it a per-slot oracle of the fast path only. "
    "pmd/pud_set_huge() then succeed (the old entry is none or cleared: "
    "pgattr_change_is_safe)",
    "page-table allocation outcomes: a per-table oracle shared by both runs (P4); a run "
    "fails iff it attempts a failing allocation, so failures agree iff both runs attempt "
    "the same allocations",
    "pgprot_nx(): PTE_MAYBE_GP is PTE_GP (a BTI kernel, system_supports_bti_kernel()); "
    "both runs apply the same pgprot_nx, so the choice cannot split them",
    "num_pages_contiguous() compares pfns (nth_page) and returns >= 1 even for n <= 1",
    "flush_cache_vmap()'s arm64 body is [N]: the observable is its (start, end) argument",
    "a misprogrammed CONT group is reported by wf_block; what the TLB then returns ([I]: "
    "the OA/attrs of any one entry of the group) is not modelled",
    "vmap() areas come from get_vm_area_caller(): the VA is only page-aligned; the later "
    "patch 'align vm_area so vmap() can batch mappings' is [N] and not modelled",
    "ioremap areas: IOREMAP_MAX_ORDER on arm64 is [N]; the VA is any page-aligned address "
    "(a superset of the aligned VM_IOREMAP areas)",
    "v8's 'compound order' (cover letter [M]) is not modelled: the confirmed code has had no "
    "compound order since v3",
    "a PTE-level step of 2M (only seeded bug M2's 1UL << fls() reaches it) is modelled as "
    "512 CONT PTEs; POST-HT's arch_make_huge_pte()/set_huge_pte_at() would write one "
    "PMD-format entry (num_contig_ptes(PMD_SIZE) = 1). M2 is refuted either way",
    "clear_flush()'s init_mm case (dropped in v8 [M]) and TLB maintenance are not observed; "
    "pte_set_huge() (v8 [M]) writes the same PTE values as set_huge_pte_at() [I]",
)


@frozen
class Revision:
    """One revision of the fast paths (the slow paths are always BASE-C / BASE-H).

    The knobs default to the latest revision the reference describes; seeded bugs
    (:mod:`equiv.vmap.mutants`) are ``evolve``-d copies.  A knob takes only the values the
    model implements (its validator names them and the value it got).
    """

    name: str
    summary: str
    #: the arm64 hook of the fast paths (the slow paths use BASE-H's 64K-only hook)
    hook: Hook = field(factory=Hook)
    #: get_vmap_batch_order: "c2" (POST-C2: scan limited to 1 << __ffs(pfn)) or "c1"
    #: (POST-C1: order = min(ilog2(contig), __ffs(pfn)))
    batch_order: str = field(default="c2", validator=in_(("c1", "c2")))
    #: the PFN-alignment clamp of the batch order (M1 drops it)
    pfn_clamp: bool = True
    #: the PFN-0 guard ``if (pfn > 0)`` around __ffs (M7 drops it)
    pfn0_guard: bool = True
    #: the ``vm_shift(prot, PAGE_SIZE << order) == PAGE_SHIFT`` filter (M8 drops it)
    shift_filter: bool = True
    #: ``*nr += 1 << (PMD_SHIFT - PAGE_SHIFT)`` after a PMD block (M3 drops it)
    pmd_nr_increment: bool = True
    #: flush_cache_vmap's start: the saved ``addr`` (v3 fix) or ``map_addr`` (M4)
    flush_from: str = field(default="start", validator=in_(("start", "map_addr")))
    #: flush_cache_vmap's end: ``end`` (the kernel) or ``batch_end``, the end of the last
    #: batch (equiv's control X4: the flush misses the pages after a break in the batching)
    flush_to: str = field(default="end", validator=in_(("end", "batch_end")))
    #: the end of the final ``vmap_pages_range_noflush_walk(map_addr, end, ...)`` of
    #: ``vmap_pages_range_batched``: ``end`` (the kernel) or ``batch_end`` (equiv's control
    #: X3: the pages after a break in the batching are never mapped)
    final_walk_end: str = field(default="end", validator=in_(("end", "batch_end")))
    #: when ``vmap_pages_range_batched`` issues the pending walk: at every change of the
    #: batch shift ("change", the kernel) or only when the shift drops ("drop", equiv's
    #: equivalent control X6: a run of a higher order joins the pending walk, which maps it
    #: with the walk's smaller shift)
    walk_on: str = field(default="change", validator=in_(("change", "drop")))
    #: ``set_huge_pte_at()`` (POST-HT; v8's ``pte_set_huge()``) writes every PTE of a CONT
    #: step with PTE_CONT (True, the kernel); False is equiv's control X5: the last PTE of
    #: the step is written without it (a CONT group of 15 CONT entries and one not)
    cont_every_pte: bool = True
    #: batching loop step: ``i += 1U << (shift - PAGE_SHIFT)`` ("order") or Rezki's Oops
    #: ``i += 1U << shift`` ("shift", M5)
    batch_step: str = field(default="order", validator=in_(("order", "shift")))
    #: POST-C1's ``scoped_cond_guard(mmap_read_lock_try, return 0, &init_mm)`` around
    #: ``pmd/pud_free_*_page`` in ``vmap_try_huge_pmd/pud``: "succeeds" (no concurrent
    #: ptdump) or "oracle" (per table slot; then POST-C1 may map with PTEs a slot that BASE-C,
    #: which has no trylock, maps with a block).  The slow paths never consult it.
    trylock: str = field(default="succeeds", validator=in_(TRYLOCKS))
    #: extra pages added to ``max_steps`` of ``vmap_pages_range_batched``'s call
    #: ``get_vmap_batch_order(pages, prot, count - i, i)`` (mm/vmalloc.c POST-C1): 0 is the
    #: kernel; 1 is equiv's own control X1 (``count - i + 1``: num_pages_contiguous() may read
    #: ``pages[count]``)
    max_steps_slack: int = field(
        default=0,
        validator=[not_(instance_of(bool), msg="'max_steps_slack' must be 0 or 1, not a bool"), in_((0, 1))],
    )
    #: ``vmap_pages_pmd_range`` (mm/vmalloc.c POST-C1) calls ``pte_alloc_kernel_track`` (in
    #: ``vmap_pages_pte_range``) only after ``vmap_try_huge_pmd`` failed (False, the kernel);
    #: True is equiv's own control X2: the PTE table is allocated before the PMD attempt
    pte_alloc_first: bool = field(default=False, validator=instance_of(bool))
    #: the named choices this revision rests on
    choices: tuple[str, ...] = ()


_V8 = Revision(
    "v8",
    "v8 of 2026-09-17 (default, latest): mm-tree POST-C2 code (get_vmap_batch_order scans at "
    "most 1 << __ffs(pfn) pages, PFN-0 guard, *nr += 512 after a PMD block, errors "
    "propagated, flush from the saved start) with the multi-CONT arm64 hook (__fls)",
    choices=(
        "v8's patch text is [N]: modelled as the mm-tree snapshot POST-C2 "
        "(36e4f471846e; probably v5-v7 [I]) plus v8's pte_set_huge() [M]",
        "POST-C2's get_vmap_batch_order is modelled from the reference's paraphrase (§6), "
        "not from its text; the rest of the fast paths is POST-C1's text",
    ),
)

REVISIONS: dict[str, Revision] = {
    r.name: r
    for r in (
        _V8,
        evolve(
            _V8,
            name="mm-c1",
            summary="mm-tree POST-C1 (01bddf7cda69): order = min(ilog2(nr_contig), __ffs(pfn)) "
            "after the contiguity scan; otherwise as v8",
            batch_order="c1",
            choices=("POST-C1 snapshot text is confirmed [R]",),
        ),
        evolve(
            _V8,
            name="v8-fix",
            summary="v8 with the fix proposed in docs/findings/vmap-multi-cont-crosses-runs.md: "
            "arch_vmap_pte_range_map_size() also shrinks the size until addr and "
            "PFN_PHYS(pfn) are aligned to it (as powerpc/8xx arch_vmap_try_size())",
            hook=Hook(natural_align=True),
            choices=("a proposed fix, not posted code",),
        ),
    )
}

#: the revision checked when none is named
DEFAULT_REVISION = "v8"


def revision(name: str) -> Revision:
    """The revision ``name``.

    Raises:
        InputError: an unknown name (the message lists the valid ones).
    """
    return lookup(REVISIONS, name, "vmap revision")

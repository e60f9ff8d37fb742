"""arm64, 4K granule: page-table constants, entry encoding and the vmap arch hooks.

Mirrors (the texts are listed in docs/model.md):

* ``arch/arm64/include/asm/pgtable-hwdef.h`` / ``pgtable.h``: ``PTE_VALID``, ``PTE_TABLE_BIT``,
  ``PTE_CONT`` (bit 52), ``PTE_PXN``/``PTE_UXN``, ``pfn_pte()``, ``pte_mkcont()``,
  ``pgprot_nx()`` (``__pgprot_modify(prot, PTE_MAYBE_GP, PTE_PXN)``), ``mk_pmd_sect_prot()``
  / ``mk_pud_sect_prot()`` (clear the table bit, set the section type).
* ``arch/arm64/include/asm/vmalloc.h``: ``arch_vmap_pte_range_map_size()`` before the series
  (BASE-H, ``linux-mm`` @ 47729a9d66f7: one 64K CONT_PTE block) and after it (POST-H1,
  ``sjp38/linux`` @ 23c915831145: ``min3(end - addr, 1UL << max_page_shift, PMD_SIZE >> 1)``
  rounded down with ``1UL << __fls(size)``; POST-H2's ``rounddown_pow_of_two`` is the same
  value), ``arch_vmap_pte_supported_shift()``, ``arch_vmap_pmd_supported()`` (true),
  ``arch_vmap_pud_supported()`` (``pud_sect_supported()``: true with 4K pages [I]).
* ``mm/vmalloc.c``: ``vm_shift()`` (POST-C1).

Units: every address, size and pfn here is in **pages** (4K).  All the kernel arithmetic on
these paths is on multiples of ``PAGE_SIZE`` (``WARN_ON_ONCE(!PAGE_ALIGNED(end - addr))``),
so page units are exact; ``1UL << fls(size)`` in bytes is ``1 << fls(size)`` in pages.
Virtual page numbers are 36 bits (``VA_BITS=48``), pfns 36 bits (48-bit PA), array
indices 32 bits (``unsigned int`` / ``int`` in the kernel), entries 64 bits.
"""

from __future__ import annotations

from attrs import frozen

from equiv.engine import bv
from equiv.engine.bv import Cond, Val

PAGE_SHIFT = 12
CONT_PTE_SHIFT = 16
PMD_SHIFT = 21
PUD_SHIFT = 30
PGDIR_SHIFT = 39
#: sizes in pages
CONT_PTES = 1 << (CONT_PTE_SHIFT - PAGE_SHIFT)  # 16
PMD_PAGES = 1 << (PMD_SHIFT - PAGE_SHIFT)  # 512
PUD_PAGES = 1 << (PUD_SHIFT - PAGE_SHIFT)  # 262144
PGDIR_PAGES = 1 << (PGDIR_SHIFT - PAGE_SHIFT)
#: PMD_SIZE >> 1, the cap of the multi-CONT hook (1M)
HALF_PMD_PAGES = PMD_PAGES >> 1

VPN_BITS = 36
#: the top 16 bits of a kernel virtual address (TTBR1, VA_BITS=48)
KERNEL_VA_TOP = 0xFFFF << 48


def kernel_va(vpn: int) -> int:
    """The kernel virtual address of virtual page ``vpn`` (the model keeps 36-bit page
    numbers; the kernel's addresses have the top 16 bits set)."""
    return KERNEL_VA_TOP | (vpn << PAGE_SHIFT)
PFN_BITS = 36
IDX_BITS = 32
SHIFT_BITS = 32
ENTRY_BITS = 64

# entry bits (arm64 pgtable-hwdef.h)
PTE_VALID = 1 << 0
PTE_TABLE_BIT = 1 << 1
PTE_TYPE_PAGE = 3
PMD_TYPE_SECT = 1
PTE_GP = 1 << 50  # PTE_MAYBE_GP with CONFIG_ARM64_BTI_KERNEL
PTE_CONT = 1 << 52
PTE_PXN = 1 << 53
PTE_UXN = 1 << 54
OA_MASK = ((1 << 48) - 1) & ~((1 << PAGE_SHIFT) - 1)
#: what attribute normalisation masks off: output address, PTE_CONT, the type bits
NORMALISE_MASK = OA_MASK | PTE_CONT | 0x3

#: leaf levels (2-bit values in the model)
LEVEL_NONE, LEVEL_PTE, LEVEL_PMD, LEVEL_PUD = 0, 1, 2, 3
LEVEL_NAMES = {LEVEL_NONE: "none", LEVEL_PTE: "PTE", LEVEL_PMD: "PMD", LEVEL_PUD: "PUD"}


def pfn_pte(pfn: Val, prot: Val) -> Val:
    """``pfn_pte(pfn, prot)`` (arch/arm64/include/asm/pgtable.h, 6.12):
    ``__phys_to_pte_val(pfn << PAGE_SHIFT) | pgprot_val(prot)`` (48-bit PA, no LPA2:
    ``__phys_to_pte_val(phys)`` is ``phys``, the output address in bits 47..12)."""
    oa = bv.concat(bv.const_like(pfn, 0, ENTRY_BITS - PFN_BITS - PAGE_SHIFT), pfn,
                   bv.const_like(pfn, 0, PAGE_SHIFT))
    return oa | prot


def pte_mkcont(entry: Val) -> Val:
    """``arch_make_huge_pte(entry, ilog2(size), 0)`` for a CONT size (64K, and with POST-HT
    any multiple of 64K below 2M): ``pte_mkcont(entry)``, i.e. ``| PTE_CONT``
    (arch/arm64/mm/hugetlbpage.c, POST-HT ``damonitor/linux`` @ c55e85d1acd8).

    6.12's ``arch_make_huge_pte()`` first applies ``pte_mkhuge()`` (``& ~PTE_TABLE_BIT``) and
    its ``pte_mkcont()`` also sets ``PTE_TYPE_PAGE`` (pgtable.h); both forms give
    ``entry | PTE_CONT`` for the entries written here, whose prot has ``PTE_TYPE_PAGE`` set
    (the ``prot`` precondition of :func:`equiv.vmap.inputs.assumptions`)."""
    return entry | PTE_CONT


def mk_sect_prot(prot: Val) -> Val:
    """``mk_pmd_sect_prot()`` / ``mk_pud_sect_prot()`` (arch/arm64/include/asm/pgtable.h,
    6.12): ``(prot & ~PMD_TABLE_BIT) | PMD_TYPE_SECT``, as ``pmd_set_huge()`` /
    ``pud_set_huge()`` (arch/arm64/mm/mmu.c) build the block with ``pfn_pmd(pfn,
    mk_pmd_sect_prot(prot))``."""
    return (prot & ~PTE_TABLE_BIT) | PMD_TYPE_SECT


def pgprot_nx(prot: Val) -> Val:
    """``pgprot_nx()`` (arch/arm64/include/asm/pgtable.h, 6.12): ``__pgprot_modify(prot,
    PTE_MAYBE_GP, PTE_PXN)``.  ``PTE_MAYBE_GP`` is ``PTE_GP`` only if
    ``system_supports_bti_kernel()``, else 0; the model takes ``PTE_GP`` (a named choice,
    :data:`equiv.vmap.revisions.COMMON_CHOICES`; both runs apply the same ``pgprot_nx``)."""
    return (prot & ~PTE_GP) | PTE_PXN


def normalise(entry: Val) -> Val:
    """Reference §9 attribute normalisation: the entry without its output address, PTE_CONT
    and the table/block/section type bits."""
    return entry & ~NORMALISE_MASK


def entry_pfn(entry: Val) -> Val:
    """The output address of a leaf entry, as a pfn (bits 47..12)."""
    return bv.extract(entry, 47, PAGE_SHIFT)


@frozen
class Hook:
    """Which ``arch_vmap_pte_range_map_size()`` is compiled in, and seeded edits of it.

    ``multi=False`` is BASE-H (64K only); ``multi=True`` is the series' multi-CONT hook.
    """

    multi: bool = True
    #: ``1UL << __fls(size)`` (v3+); ``"fls"`` is the pre-v3 ``1UL << fls(size)`` (M2)
    round_down: str = "__fls"
    #: the ``IS_ALIGNED(PFN_PHYS(pfn), CONT_PTE_SIZE)`` guard (M6 deletes it)
    pfn_guard: bool = True
    #: the proposed fix of docs/findings: shrink the size until addr and PFN_PHYS(pfn) are
    #: aligned to it (as powerpc/8xx ``arch_vmap_try_size()`` requires)
    natural_align: bool = False

    @property
    def bounded(self) -> bool:
        """Does every size the hook returns fit before ``end``?  BASE-H returns 64K only
        when ``end - addr >= 64K``; the multi-CONT hook rounds ``min3(end - addr, ...)``
        down to a power of two (and the fix shrinks it further); only M2's ``1UL <<
        fls(size)`` rounds up, past ``end``, and the PTE loop then never ends."""
        return not self.multi or self.round_down != "fls"


def map_size_guards(addr_lo: Val, rem: Val, pfn: Val, max_page_shift: Val, hook: Hook) -> Cond:
    """The four early returns of ``arch_vmap_pte_range_map_size()`` (arm64 vmalloc.h, BASE-H
    ``linux-mm`` @ 47729a9d66f7 and POST-H1 ``sjp38/linux`` @ 23c915831145, in this order:
    ``max_page_shift < CONT_PTE_SHIFT``, ``end - addr < CONT_PTE_SIZE``, ``addr`` and
    ``PFN_PHYS(pfn)`` not 64K-aligned): it returns more than PAGE_SIZE iff none is taken
    (every variant returns at least CONT_PTE_SIZE then)."""
    return bv.and_(
        # max_page_shift >= CONT_PTE_SHIFT
        bv.not_(bv.ult(max_page_shift, CONT_PTE_SHIFT)),
        # end - addr >= CONT_PTE_SIZE
        bv.not_(bv.ult(rem, CONT_PTES)),
        # IS_ALIGNED(addr, CONT_PTE_SIZE)
        bv.is_aligned(addr_lo, 4),
        # IS_ALIGNED(PFN_PHYS(pfn), CONT_PTE_SIZE)
        bv.is_aligned(pfn, 4) if hook.pfn_guard else True,
    )


def arch_vmap_pte_range_map_size(addr_lo: Val, rem: Val, pfn: Val, max_page_shift: Val, hook: Hook) -> Val:
    """``arch_vmap_pte_range_map_size(addr, end, pfn, max_page_shift)``, in pages: BASE-H
    returns CONT_PTE_SIZE past the guards; POST-H1 ``size = min3(end - addr, 1UL <<
    max_page_shift, PMD_SIZE >> 1); size = 1UL << __fls(size)``.

    ``addr`` enters the hook only through its alignment (to 64K, and to at most 2M in the
    proposed fix) and through ``end - addr``, so the model passes those.

    Args:
        addr_lo: the low 9 bits of the virtual page number of ``addr``.
        rem: ``end - addr`` in pages (32 bits).
        pfn: the pfn ``addr`` is to map.
        max_page_shift: the caller's shift (32-bit ``unsigned int``).
        hook: the variant (BASE-H / POST-H1, seeded edits, the proposed fix).

    Returns:
        the number of pages the caller maps in one ``set_huge_pte_at`` (1: a single PTE), as
        a 32-bit value.
    """
    w = rem.size()
    one = bv.const_like(rem, 1, w)
    ok = map_size_guards(addr_lo, rem, pfn, max_page_shift, hook)
    if not hook.multi:
        return bv.ite(ok, bv.const_like(rem, CONT_PTES, w), one)
    # min3(end - addr, 1UL << max_page_shift, PMD_SIZE >> 1); the shift term only matters
    # below 1M, i.e. for max_page_shift < 20
    half = bv.const_like(rem, HALF_PMD_PAGES, w)
    lim = bv.ite(bv.ult(max_page_shift, 20), bv.pow2(bv.extract(max_page_shift, 4, 0) - 12, w, 7), half)
    size = bv.umin(bv.umin(rem, lim), half)
    # size <= 256 pages here: __fls over the low 9 bits is exact; fls(x) = __fls(x) + 1
    # gives twice the intended size
    size = bv.pow2floor(size, 9, twice=hook.round_down == "fls")
    if hook.natural_align:
        low = addr_lo | bv.extract(pfn, 8, 0)
        for sz in (512, 256, 128, 64, 32):
            misaligned = bv.not_(bv.is_aligned(low, sz.bit_length() - 1))
            size = bv.ite(bv.and_(bv.eq(size, sz), misaligned), bv.const_like(rem, sz >> 1, w), size)
    return bv.ite(ok, size, one)


def arch_vmap_pte_supported_shift(size: Val) -> Val:
    """``arch_vmap_pte_supported_shift(size)``: CONT_PTE_SHIFT for >= 64K, else PAGE_SHIFT."""
    return bv.ite(
        bv.ult(size, CONT_PTES),
        bv.const_like(size, PAGE_SHIFT, SHIFT_BITS),
        bv.const_like(size, CONT_PTE_SHIFT, SHIFT_BITS),
    )


def vm_shift(size: Val) -> Val:
    """``vm_shift(prot, size)`` (mm/vmalloc.c, POST-C1): PMD_SHIFT if
    ``arch_vmap_pmd_supported(prot)`` (true) and size >= PMD_SIZE, else
    ``arch_vmap_pte_supported_shift(size)``.  ``size`` in pages."""
    return bv.ite(
        bv.ult(size, PMD_PAGES), arch_vmap_pte_supported_shift(size),
        bv.const_like(size, PMD_SHIFT, SHIFT_BITS)
    )


def pud_sect_supported() -> bool:
    """``pud_sect_supported()``: ``PAGE_SIZE == SZ_4K`` (arch/arm64/include/asm/pgtable.h,
    6.12), so true here; ``arch_vmap_pud_supported()`` returns it (BASE-H, POST-H1)."""
    return True


def ge(a: Val, b: Val | int) -> Cond:
    """Unsigned ``a >= b``."""
    return bv.not_(bv.ult(a, b))

"""Concrete twin: both paths run page by page on plain ints, with real page tables.

An independent second implementation of the kernel functions :mod:`equiv.vmap.paths`
models (it shares only the entry-bit constants): byte addresses, 64-bit arithmetic, the C
loops as written (``do { next = pmd_addr_end(addr, end); ... } while (addr = next, addr !=
end)``), one PTE written per loop step, no macro-steps, no observation.  Every counterexample
the solver finds is replayed here before it is reported (REFUTED needs a concrete witness),
and the property tests check that the symbolic model, evaluated on concrete inputs, agrees
with this twin at every page.

Kernel sources mirrored: mm/vmalloc.c BASE-C (``linux-mm`` @ 00cc00cd1fb6) for the slow
paths, POST-C1 (``1054009064/linux`` @ 01bddf7cda69) and POST-C2 (reference §6) for the fast
paths; arch/arm64/include/asm/vmalloc.h BASE-H and POST-H1; arch/arm64/mm/hugetlbpage.c
POST-HT ``set_huge_pte_at`` (ncontig = size / 4K PTEs, consecutive pfns).
"""

from __future__ import annotations

from attrs import define, field

from equiv.vmap import arch
from equiv.vmap.arch import Hook
from equiv.vmap.inputs import ConcreteCase
from equiv.vmap.revisions import Revision

PAGE_SIZE = 1 << 12
CONT_PTE_SIZE = 1 << 16
PMD_SIZE = 1 << 21
PUD_SIZE = 1 << 30
PGDIR_SIZE = 1 << 39
M64 = (1 << 64) - 1
#: a loop that runs past its end is stopped after this many extra steps (the kernel would
#: write on past the PTE table)
RUNAWAY = 1


class _Stop(Exception):
    """A kernel BUG()/BUG_ON() or a runaway loop: the run stops here."""


@define
class Run:
    """The outcome of one concrete run of a path."""

    err: int = 0
    #: virtual page number -> (level, entry, va0 of the block, pages of the block)
    pud: dict[int, tuple[str, int]] = field(factory=dict)
    pmd: dict[int, tuple[str, int]] = field(factory=dict)
    pte: dict[int, int] = field(factory=dict)
    pgd: set[int] = field(factory=set)
    #: every leaf/table-free write: (what, first vpn, end vpn)
    writes: list[tuple[str, int, int]] = field(factory=list)
    #: attempted table allocations (the table was absent): (level, slot index)
    allocs: set[tuple[str, int]] = field(factory=set)
    reads: list[int] = field(factory=list)
    ub: list[int] = field(factory=list)
    #: loops that went past their end (kernel: ``addr != end`` never holds)
    runaway: list[str] = field(factory=list)
    bugs: list[str] = field(factory=list)
    flush: tuple[int, int] | None = None
    #: CONT steps: (first vpn, pages)
    steps: list[tuple[int, int]] = field(factory=list)
    #: walk calls of the batching loop: (first vpn, end vpn, idx, shift)
    walks: list[tuple[int, int, int, int]] = field(factory=list)

    def leaf(self, vpn: int) -> tuple[int, int, int, int]:
        """The effective leaf covering ``vpn``: (level, entry, va0, npages); level 0 when
        unmapped."""
        if vpn >> 27 not in self.pgd:
            return (arch.LEVEL_NONE, 0, 0, 0)
        u = self.pud.get(vpn >> 18)
        if u is None:
            return (arch.LEVEL_NONE, 0, 0, 0)
        if u[0] == "L":
            return (arch.LEVEL_PUD, u[1], vpn & ~(arch.PUD_PAGES - 1), arch.PUD_PAGES)
        s = self.pmd.get(vpn >> 9)
        if s is None:
            return (arch.LEVEL_NONE, 0, 0, 0)
        if s[0] == "L":
            return (arch.LEVEL_PMD, s[1], vpn & ~(arch.PMD_PAGES - 1), arch.PMD_PAGES)
        e = self.pte.get(vpn, 0)
        return (arch.LEVEL_PTE, e, vpn, 1) if e & arch.PTE_VALID else (arch.LEVEL_NONE, 0, 0, 0)

    def translation(self, vpn: int) -> int | None:
        """The pfn ``vpn`` maps to, or None."""
        lvl, e, va0, _ = self.leaf(vpn)
        if lvl == arch.LEVEL_NONE:
            return None
        return ((e & arch.OA_MASK) >> 12) + (vpn - va0 if lvl != arch.LEVEL_PTE else 0)


class Machine:
    """One run: the page tables (S0 from a :class:`ConcreteCase`), the page array, logs."""

    def __init__(
        self, case: ConcreteCase, rev: Revision, *, trylock: bool = False, fast: bool = False
    ) -> None:
        self.case, self.rev = case, rev
        #: the run is the fast path's: seeded edits of the shared helpers (X5's
        #: set_huge_pte_at) apply; the slow path (BASE-C, BASE-H) never has them
        self.fast = fast
        #: POST-C1's mmap_read_trylock(&init_mm) in vmap_try_huge_pmd/pud is consulted (the
        #: fast paths with Revision.trylock "oracle"); BASE-C has none
        self.use_trylock = trylock
        self.prot = 0  # the protection the page-array walks write
        self.r = Run()
        self.pfns = case.pfns()
        for kind, i in sorted(case.tables):
            if kind == "pgd":
                self.r.pgd.add(i)
        for kind, i in sorted(case.tables):  # a table exists only under a present parent
            if kind == "pud" and (i >> 9) in self.r.pgd:
                self.r.pud[i] = ("T", 0)
        for kind, i in sorted(case.tables):
            if kind == "pmd" and self.r.pud.get(i >> 9, ("", 0))[0] == "T":
                self.r.pmd[i] = ("T", 0)

    # ---- helpers --------------------------------------------------------------------
    def page(self, i: int) -> int | None:
        """``pages[i]`` as a pfn (None: out of the array, logged)."""
        self.r.reads.append(i)
        return self.pfns[i] if 0 <= i < len(self.pfns) else None

    def trylock(self, kind: str, idx: int) -> bool:
        return (kind, idx) not in self.case.trylock_fails

    def pud_alloc(self, addr: int) -> None:
        g = addr >> 39
        if g not in self.r.pgd:
            self.r.allocs.add(("pud", g))
            self.r.pgd.add(g)

    def pmd_alloc(self, addr: int) -> None:
        u = addr >> 30
        if u not in self.r.pud:
            self.r.allocs.add(("pmd", u))
            self.r.pud[u] = ("T", 0)

    def pte_alloc(self, addr: int) -> None:
        s = addr >> 21
        if s not in self.r.pmd:
            self.r.allocs.add(("pte", s))
            self.r.pmd[s] = ("T", 0)

    def write_pte(self, addr: int, entry: int) -> None:
        vpn = addr >> 12
        self.r.pte[vpn] = entry
        self.r.writes.append(("pte", vpn, vpn + 1))

    # ---- arch hooks (bytes) -----------------------------------------------------------
    @staticmethod
    def map_size(addr: int, end: int, pfn: int, maxs: int, hook: Hook) -> int:
        """arch_vmap_pte_range_map_size (BASE-H if not ``hook.multi``, else POST-H1)."""
        if maxs < 16 or end - addr < CONT_PTE_SIZE or addr % CONT_PTE_SIZE:
            return PAGE_SIZE
        if hook.pfn_guard and (pfn << 12) % CONT_PTE_SIZE:
            return PAGE_SIZE
        if not hook.multi:
            return CONT_PTE_SIZE
        size = min(end - addr, 1 << maxs, PMD_SIZE >> 1)
        size = 1 << (size.bit_length() - (1 if hook.round_down == "__fls" else 0))
        if hook.natural_align:
            while size > CONT_PTE_SIZE and (addr | (pfn << 12)) & (size - 1):
                size >>= 1
        return size

    def vmap_set_ptes(self, addr: int, end: int, pfn: int, prot: int, maxs: int, hook: Hook) -> int:
        size = self.map_size(addr, end, pfn, maxs, hook)
        if size != PAGE_SIZE:
            # set_huge_pte_at(&init_mm, addr, pte, arch_make_huge_pte(pfn_pte(pfn, prot),
            # ilog2(size), 0), size): ncontig = size / 4K PTEs, pfn advancing by one (POST-HT)
            n = size // PAGE_SIZE
            for k in range(n):
                # X5 (cont_every_pte False): the last PTE of the step without PTE_CONT
                cont = arch.PTE_CONT if self.rev.cont_every_pte or not self.fast or k != n - 1 else 0
                self.write_pte(addr + k * PAGE_SIZE, ((pfn + k) << 12) | prot | cont)
            self.r.steps.append((addr >> 12, size >> 12))
            return size
        self.write_pte(addr, (pfn << 12) | prot)
        return PAGE_SIZE

    # ---- vmap_range_noflush (ioremap; vmalloc chunks before the series) ---------------
    def vmap_range_noflush(self, addr: int, end: int, phys: int, prot: int, maxs: int, hook: Hook) -> int:
        if addr >= end:
            raise _Stop("BUG_ON(addr >= end) in vmap_range_noflush")
        while True:  # pgd loop (p4d folded; arch_vmap_p4d_supported() false)
            nxt = addr_end(addr, end, PGDIR_SIZE)
            err = self.vmap_pud_range(addr, nxt, phys, prot, maxs, hook)
            if err:
                return err
            phys += nxt - addr
            addr = nxt
            if addr == end:
                return 0

    def vmap_pud_range(self, addr: int, end: int, phys: int, prot: int, maxs: int, hook: Hook) -> int:
        self.pud_alloc(addr)
        while True:
            nxt = addr_end(addr, end, PUD_SIZE)
            if not self.try_huge("pud", addr, nxt, phys, prot, maxs):
                err = self.vmap_pmd_range(addr, nxt, phys, prot, maxs, hook)
                if err:
                    return err
            phys += nxt - addr
            addr = nxt
            if addr == end:
                return 0

    def vmap_pmd_range(self, addr: int, end: int, phys: int, prot: int, maxs: int, hook: Hook) -> int:
        self.pmd_alloc(addr)
        while True:
            nxt = addr_end(addr, end, PMD_SIZE)
            if not self.try_huge("pmd", addr, nxt, phys, prot, maxs):
                err = self.vmap_pte_range(addr, nxt, phys, prot, maxs, hook)
                if err:
                    return err
            phys += nxt - addr
            addr = nxt
            if addr == end:
                return 0

    def try_huge(self, level: str, addr: int, end: int, phys: int, prot: int, maxs: int) -> bool:
        """vmap_try_huge_pud / vmap_try_huge_pmd.  A present table is freed (arm64
        pmd_free_pte_page / pud_free_pmd_page return 1): BASE-C unconditionally
        (``pmd_present(*pmd) && !pmd_free_pte_page()``), POST-C1 only if
        ``mmap_read_trylock(&init_mm)`` succeeds (consulted when ``use_trylock``)."""
        size, shift = (PUD_SIZE, 30) if level == "pud" else (PMD_SIZE, 21)
        if maxs < shift or end - addr != size or addr % size or phys % size:
            return False
        if level == "pud" and not arch.pud_sect_supported():
            return False
        table = self.r.pud if level == "pud" else self.r.pmd
        idx = addr >> shift
        if idx in table:  # present: a table in S0
            if self.use_trylock and not self.trylock(level, idx):
                return False
            self.free_below(level, idx)
        entry = phys | int(arch.mk_sect_prot(prot))  # typed for both domains: int in, int out
        table[idx] = ("L", entry)
        self.r.writes.append((level, addr >> 12, (addr + size) >> 12))
        return True

    def free_below(self, level: str, idx: int) -> None:
        """pmd_free_pte_page / pud_free_pmd_page: the table and everything under it goes."""
        span = 18 if level == "pud" else 9
        lo, hi = idx << span, (idx + 1) << span
        del (self.r.pud if level == "pud" else self.r.pmd)[idx]
        if level == "pud":
            for s in [s for s in self.r.pmd if lo >> 9 <= s < hi >> 9]:
                del self.r.pmd[s]
        for p in [p for p in self.r.pte if lo <= p < hi]:
            del self.r.pte[p]
        self.r.writes.append((f"free {level}", lo, hi))

    def vmap_pte_range(self, addr: int, end: int, phys: int, prot: int, maxs: int, hook: Hook) -> int:
        if (end - addr) % PAGE_SIZE:
            return -22
        pfn = phys >> 12
        self.pte_alloc(addr)
        while True:
            if self.r.pte.get(addr >> 12, 0):
                self.r.bugs.append(f"BUG: remapping already mapped page at {addr:#x}")
                raise _Stop("BUG() in vmap_pte_range")
            size = self.vmap_set_ptes(addr, end, pfn, prot, maxs, hook)
            pfn += size >> 12
            addr += size
            if addr == end:
                return 0
            if addr > end:
                self.r.runaway.append(f"vmap_pte_range stepped past {end:#x} to {addr:#x}")
                raise _Stop("runaway")

    # ---- page-array walks ------------------------------------------------------------
    def small_pages(self, addr: int, end: int, prot: int) -> int:
        """vmap_small_pages_range_noflush (BASE-C)."""
        nr = [0]
        while True:
            nxt = addr_end(addr, end, PGDIR_SIZE)
            self.pud_alloc(addr)
            a2 = addr
            while True:  # pud level
                n2 = addr_end(a2, nxt, PUD_SIZE)
                self.pmd_alloc(a2)
                a3 = a2
                while True:  # pmd level
                    n3 = addr_end(a3, n2, PMD_SIZE)
                    self.pte_alloc(a3)
                    a4 = a3
                    while True:  # vmap_pages_pte_range (BASE)
                        page = self.page(nr[0])
                        if self.r.pte.get(a4 >> 12, 0):
                            return -12  # -EBUSY, mapped to -ENOMEM by the pmd level
                        if page is None:
                            return -12
                        self.write_pte(a4, (page << 12) | prot)
                        nr[0] += 1
                        a4 += PAGE_SIZE
                        if a4 == n3:
                            break
                    a3 = n3
                    if a3 == n2:
                        break
                a2 = n2
                if a2 == nxt:
                    break
            addr = nxt
            if addr == end:
                return 0

    def walk(self, addr: int, end: int, idx: int, shift: int) -> int:
        """vmap_pages_range_noflush_walk(addr, end, prot, pages + idx, shift) (POST-C1)."""
        if addr >= end:
            raise _Stop("BUG_ON(addr >= end) in vmap_pages_range_noflush_walk")
        self.r.walks.append((addr >> 12, end >> 12, idx, shift))
        nr = [0]
        while True:
            nxt = addr_end(addr, end, PGDIR_SIZE)
            err = self.pages_pud_range(addr, nxt, idx, nr, shift)
            if err:
                return err
            addr = nxt
            if addr == end:
                return 0

    def pages_pud_range(self, addr: int, end: int, idx: int, nr: list[int], shift: int) -> int:
        self.pud_alloc(addr)
        while True:
            nxt = addr_end(addr, end, PUD_SIZE)
            err = self.pages_pmd_range(addr, nxt, idx, nr, shift)
            if err:
                return err
            addr = nxt
            if addr == end:
                return 0

    def pages_pmd_range(self, addr: int, end: int, idx: int, nr: list[int], shift: int) -> int:
        self.pmd_alloc(addr)
        while True:
            nxt = addr_end(addr, end, PMD_SIZE)
            done = False
            if self.rev.pte_alloc_first:
                # seeded control X2: pte_alloc_kernel_track hoisted before the PMD attempt
                self.pte_alloc(addr)
            if shift >= 21:
                page = self.page(idx + nr[0])
                if page is None:
                    return -12
                if self.try_huge("pmd", addr, nxt, page << 12, self.prot, shift):
                    if self.rev.pmd_nr_increment:
                        nr[0] += 1 << (21 - 12)
                    done = True
            if not done:
                err = self.pages_pte_range(addr, nxt, idx, nr, shift)
                if err:
                    return err
            addr = nxt
            if addr == end:
                return 0

    def pages_pte_range(self, addr: int, end: int, idx: int, nr: list[int], shift: int) -> int:
        """vmap_pages_pte_range (POST-C1): checks on the first page of each step only."""
        self.pte_alloc(addr)
        while True:
            page = self.page(idx + nr[0])
            if self.r.pte.get(addr >> 12, 0):
                return -16  # -EBUSY
            if page is None:
                return -12  # -ENOMEM
            size = self.vmap_set_ptes(addr, end, page, self.prot, shift, self.rev.hook)
            nr[0] += size >> 12
            addr += size
            if addr == end:
                return 0
            if addr > end:
                self.r.runaway.append(f"vmap_pages_pte_range stepped past {end:#x} to {addr:#x}")
                raise _Stop("runaway")

    # ---- the batching loop -----------------------------------------------------------
    def ffs(self, pfn: int, where: int) -> int:
        if pfn == 0:
            self.r.ub.append(where)
            return self.case.ffs0_at(where)
        return (pfn & -pfn).bit_length() - 1

    def num_pages_contiguous(self, idx: int, n: int) -> int:
        first = self.page(idx)
        i = 1
        while i < n:
            p = self.page(idx + i)
            if p is None or first is None or p != first + i:
                break
            i += 1
        return i

    def batch_order(self, max_steps: int, idx: int) -> int:
        """get_vmap_batch_order (POST-C1 / POST-C2, with the seeded edits)."""
        rev = self.rev
        if rev.batch_order == "c1":
            c = self.num_pages_contiguous(idx, max_steps)
            if c < 2:
                return 0
            order = c.bit_length() - 1
            pfn = self.page(idx) or 0
            if rev.pfn_clamp and (pfn > 0 or not rev.pfn0_guard):
                order = min(order, self.ffs(pfn, idx))
        else:
            pfn = self.page(idx) or 0
            n = max_steps
            if rev.pfn_clamp and (pfn > 0 or not rev.pfn0_guard):
                n = min(n, (1 << self.ffs(pfn, idx)) & 0xFFFFFFFF)  # min_t(unsigned int, ...)
            c = self.num_pages_contiguous(idx, n)
            if c < 2:
                return 0
            order = c.bit_length() - 1
        if rev.shift_filter:
            size = PAGE_SIZE << order
            vm_shift = 21 if size >= PMD_SIZE else 16 if size >= CONT_PTE_SIZE else 12
            if vm_shift == 12:
                return 0
        return order

    def batched(self, addr: int, end: int) -> int:
        """vmap_pages_range_batched (POST-C1), the loop as in the kernel."""
        count = (end - addr) >> 12
        prev_shift, idx = 0, 0
        map_addr = batch_end = addr
        err = 0
        i = 0
        while i < count:
            # get_vmap_batch_order(pages, prot, count - i, i); X1: count - i + 1
            shift = 12 + self.batch_order(count - i + self.rev.max_steps_slack, i)
            if not i:
                prev_shift = shift
            # X6 (walk_on "drop"): the pending walk is issued only when the shift drops
            if shift != prev_shift and (self.rev.walk_on == "change" or shift < prev_shift):
                err = self.walk(map_addr, batch_end, idx, prev_shift)
                if err:
                    break
                prev_shift, map_addr, idx = shift, batch_end, i
            if shift == 12:
                break
            batch_end += 1 << shift
            i = (i + (1 << (shift - 12 if self.rev.batch_step == "order" else shift))) & 0xFFFFFFFF
        if not err and map_addr < end:
            # X3 (final_walk_end "batch_end"): the final walk ends at batch_end
            last = end if self.rev.final_walk_end == "end" else batch_end
            err = self.walk(map_addr, last, idx, prev_shift)
        # M4 (flush_from "map_addr"), X4 (flush_to "batch_end")
        lo = addr if self.rev.flush_from == "start" else map_addr
        hi = end if self.rev.flush_to == "end" else batch_end
        self.r.flush = (lo >> 12, hi >> 12)
        return err


def addr_end(addr: int, end: int, size: int) -> int:
    """pgd/pud/pmd_addr_end: ``(boundary - 1 < end - 1) ? boundary : end``."""
    boundary = (addr + size) & ~(size - 1) & M64
    return boundary if (boundary - 1) & M64 < (end - 1) & M64 else end


def run_slow(case: ConcreteCase, rev: Revision) -> Run:
    """The path before the series (BASE-C, BASE-H)."""
    m = Machine(case, rev)
    a, end = case.va << 12, (case.va + case.nr_pages) << 12
    try:
        if case.path == "ioremap":
            m.r.err = m.vmap_range_noflush(
                a, end, case.segments[0][1] << 12, arch_pgprot_nx(case.prot), 63, Hook(multi=False)
            )
        elif case.path == "vmap":
            m.prot = arch_pgprot_nx(case.prot)
            m.r.err = m.small_pages(a, end, m.prot)
        else:
            m.prot = case.prot
            if case.shift == 12:
                m.r.err = m.small_pages(a, end, m.prot)
            else:
                step = 1 << (case.shift - 12)
                addr = a
                for i in range(0, case.nr_pages, step):
                    m.r.err = m.vmap_range_noflush(
                        addr,
                        addr + (1 << case.shift),
                        (m.page(i) or 0) << 12,
                        case.prot,
                        case.shift,
                        Hook(multi=False),
                    )
                    if m.r.err:
                        break
                    addr += 1 << case.shift
    except _Stop as e:
        m.r.bugs.append(str(e))
    m.r.flush = (case.va, case.va + case.nr_pages)
    return m.r


def run_fast(case: ConcreteCase, rev: Revision) -> Run:
    """The path after the series, revision ``rev``."""
    m = Machine(case, rev, trylock=rev.trylock == "oracle", fast=True)
    a, end = case.va << 12, (case.va + case.nr_pages) << 12
    try:
        if case.path == "ioremap":
            m.r.err = m.vmap_range_noflush(
                a, end, case.segments[0][1] << 12, arch_pgprot_nx(case.prot), 63, rev.hook
            )
            m.r.flush = (case.va, case.va + case.nr_pages)
        elif case.path == "vmalloc":
            m.prot = case.prot
            m.r.err = m.walk(a, end, 0, case.shift)
            m.r.flush = (case.va, case.va + case.nr_pages)
        else:
            m.prot = arch_pgprot_nx(case.prot)
            m.r.err = m.batched(a, end)
    except _Stop as e:
        m.r.bugs.append(str(e))
        if m.r.flush is None:
            m.r.flush = (case.va, case.va + case.nr_pages) if case.path != "vmap" else None
    return m.r


def arch_pgprot_nx(prot: int) -> int:
    """pgprot_nx on a plain int."""
    return (prot & ~arch.PTE_GP) | arch.PTE_PXN

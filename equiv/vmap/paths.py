"""The exact model: the slow and fast paths of ioremap, vmalloc and vmap, observed at one
page, with every loop unrolled to a static bound.

It is what :mod:`equiv.vmap.cell` runs to search real counterexamples with few segments
when the local model (:mod:`equiv.vmap.local`, which proves) cannot, and what the property
tests compare with the concrete twin page by page.  Whatever it finds is replayed on the
twin before it is reported.  The kernel helpers here (``get_vmap_batch_order``, slot
arithmetic, the block decisions of :func:`huge_slots`) are shared with the local model, and
so are the leaves both build (:mod:`equiv.vmap.leaves`).

One program, two evaluators: every function here runs on z3 terms (a symbolic observed page
and symbolic inputs) or on concrete :class:`equiv.engine.bv.CBV` values.  A path is not run page by
page; it is *observed*: for the observed page ``v`` it computes the leaf the path leaves
covering ``v`` and the facts the obligations need about the steps around it.  Because ``v``
is symbolic over the whole range, one query covers every page.

**Positions** are 32-bit offsets in pages from the start of the range ``a`` (the virtual
address is ``a + off``); alignment of a virtual address is computed from the low bits of
``a + off``.  **Array indices** are positions plus an index *lag*: the kernel loops advance
``*nr`` (or ``pfn``) and ``addr`` in lock step (``pte += steps, *nr += steps, addr +=
size``; ``batch_end += 1UL << shift, i += 1U << (shift - PAGE_SHIFT)``), so the index of the
page at position ``x`` is ``x + lag`` with ``lag`` constant along a loop, and the pfn a step
writes at ``v`` is ``pfn(step start) + (v - step start)``, i.e. the linear extension of the
step's first segment to index ``v + lag`` (:meth:`equiv.vmap.inputs.Seg.pfn`).  The lag is
zero (built as no term at all) unless a seeded bug breaks a lock step: M3 (no ``*nr += 512``
after a PMD block) and M5 (``i += 1U << shift``) compute it from their own loops.  Building
these identities into the terms, instead of asking the solver to rediscover them through
ite-merged loop states, is what keeps the queries small.

Loops are unrolled to static bounds (:class:`Unroll`) with guards; a search counts only
runs that ended within the bounds (``unrolled``), and only pages the paths get to
(``reached``): a PTE loop that steps past its end never ends (``addr != end`` never holds;
the kernel writes on past the PTE table, and the twin stops the run there), so the slots and
walks after it are never mapped.  Each slot is observed as if the loops before it ended;
with a hook whose steps can pass the end (M2's ``fls``, :attr:`Hook.bounded`), that holds
for sure only in the first pmd slot of the first walk, the one page range the model then
counts:

* the batching loop of ``vmap_pages_range_batched`` (it decides which walk covers v);
* the PTE loop of the pmd slot of ``v``, in *macro-steps*: a run of block steps of one size
  (every step that starts inside the current physically linear piece and fits before the
  end gets the same size from the hook), or a run of single PTEs up to the next position
  where the hook could return more (within one piece the hook's guards are monotone).  The
  flag ``lemma`` says whether the hook returns, at the start of the step covering v, what
  the macro-step assumed (the property tests check it on concrete runs).

Each function names the kernel function (file, snapshot) it mirrors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import evolve, fields, frozen

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.vmap import arch
from equiv.vmap.arch import (
    IDX_BITS,
    LEVEL_PMD,
    LEVEL_PUD,
    PFN_BITS,
    PMD_PAGES,
    PUD_PAGES,
    VPN_BITS,
    Hook,
)
from equiv.vmap.inputs import Oracles, Seg, VmapInputs
from equiv.vmap.leaves import (
    OFF,
    Lag,
    Leaf,
    add_lag,
    block_leaf,
    ioremap_seg,
    lagged_pfn,
    leaf_ite,
    leaf_none,
    leaf_select,
    page_leaf,
    step_leaf,
)
from equiv.vmap.revisions import Revision

#: BASE-H: the arm64 hook before the series (64K CONT blocks only)
BASE_HOOK = Hook(multi=False)
#: ioremap_max_page_shift with CONFIG_HAVE_ARCH_HUGE_VMAP and no "nohugeiomap"
IOREMAP_MAX_PAGE_SHIFT = 63


@frozen
class Unroll:
    """Static unrolling bounds: batching iterations, pmd slots before v's (only M3 needs the
    slot loop), macro-steps of the PTE loop of v's slot."""

    batch: int
    slots: int
    steps: int

    @classmethod
    def initial(cls, path: str, bound: int, rev: Revision) -> Unroll:
        """First guess; :func:`equiv.vmap.cell.check` grows a bound that does not suffice."""
        batch = (16 if not rev.shift_filter or not rev.pfn_clamp else 6) * bound + 2
        steps = (12 if rev.hook.natural_align else 7) + (2 * bound if path != "ioremap" else 0)
        return cls(batch=batch, slots=bound + 2, steps=steps)

    def grown(self) -> Unroll:
        return Unroll(batch=2 * self.batch, slots=2 * self.slots, steps=2 * self.steps)


@frozen(kw_only=True, eq=False)
class PathObs:
    """What one path does, seen from the observed page ``v``."""

    leaf: Leaf
    #: every write of the steps around v (the PTE loop of its slot, its block) lies in [0, N)
    writes_inside: Cond
    #: every pages[] index those steps read lies in [0, N)
    reads_ok: Cond
    #: no step of v's PTE loop goes past the loop's end (``addr != end`` would never hold)
    no_overshoot: Cond
    #: every unrolled loop ended within its static bound
    unrolled: Cond
    #: the path gets to v's pmd slot: no PTE loop before it steps past its end (see the
    #: module docstring); known where the hook is bounded (:attr:`Hook.bounded`), and for
    #: the first pmd slot of the first walk (every run gets there), False elsewhere
    reached: Cond
    #: the macro-step covering v is exact (see the module docstring)
    lemma: Cond
    #: the path allocates (when absent in S0) the PTE table of v's pmd slot, the PMD table of
    #: v's pud slot, the PUD table of v's pgd slot
    needs_pte: Cond
    needs_pmd: Cond
    needs_pud: Cond
    #: v's pmd slot is mapped by one PMD (or PUD) block
    block_slot: Cond
    #: flush_cache_vmap's arguments (positions)
    flush_lo: Val
    flush_hi: Val
    #: __ffs(0) was evaluated (undefined behaviour)
    ub: Cond
    #: the shift of the walk / chunk that covers v (report only)
    shift: Val


_VALUE_FIELDS = ("flush_lo", "flush_hi", "shift")


def _fields(o: PathObs) -> dict[str, Any]:
    return {a.name: getattr(o, a.name) for a in fields(PathObs)}


# --------------------------------------------------------------------------- helpers


def va_low(inp: VmapInputs, off: Val, k: int) -> Val:
    """The low ``k`` bits of the virtual page number ``a + off``."""
    low: Val = bv.extract(inp.a, k - 1, 0)
    return low + bv.extract(off, k - 1, 0)


def vpn(inp: VmapInputs, off: Val) -> Val:
    """The virtual page number of position ``off``."""
    return inp.a + bv.zext(off, VPN_BITS)


def pud_present(o: Oracles, v: Val) -> Cond:
    """The pud entry of v's 1G slot holds a table in S0 (its PUD table exists: the pgd entry
    is present).  ``v`` is a virtual page number."""
    return bv.and_(o.pgd_table(bv.extract(v, VPN_BITS - 1, 27)), o.pud_table(bv.extract(v, VPN_BITS - 1, 18)))


def pmd_present(o: Oracles, v: Val) -> Cond:
    """The pmd entry of v's 2M slot holds a (PTE) table in S0."""
    return bv.and_(pud_present(o, v), o.pmd_table(bv.extract(v, VPN_BITS - 1, 9)))


def slot_of(inp: VmapInputs, v: Val, lo: Val, hi: Val, shift: int) -> tuple[Val, Val]:
    """The part ``[start, next)`` of v's ``2^shift``-page slot that a loop from ``lo`` to
    ``hi`` visits: the ``do { next = pXd_addr_end(addr, end); ... } while (addr = next,
    addr != end)`` loops visit every slot boundary between ``lo`` and ``hi``."""
    r = bv.zext(va_low(inp, v, shift), OFF)
    start = bv.ite(bv.ult(v - lo, r), lo, v - r)
    return start, bv.umin(v + (bv.const_like(v, 1 << shift, OFF) - r), hi)


def free_ok(present: Cond, lock: Cond, trylock: bool) -> Cond:
    """Whether ``vmap_try_huge_pmd/pud`` may replace a present table: POST-C1 only if
    ``mmap_read_trylock(&init_mm)`` succeeds (``lock``, when ``trylock``); BASE-C always
    (``pmd_present(*pmd) && !pmd_free_pte_page()``: arm64's ``pmd_free_pte_page`` /
    ``pud_free_pmd_page`` return 1, arch/arm64/mm/mmu.c 6.12)."""
    return bv.implies(present, lock) if trylock else True


def try_huge(
    inp: VmapInputs, bits: int, allowed: Cond, addr: Val, nxt: Val, first_pfn: Val, vv: Val,
    present: Cond, trylock: bool,
) -> Cond:
    """``vmap_try_huge_pud`` (``bits`` 18) / ``vmap_try_huge_pmd`` (``bits`` 9) of
    mm/vmalloc.c (BASE-C, POST-C1) for the slot ``[addr, nxt)``: ``allowed`` (max_page_shift
    and arch support), ``end - addr == SIZE``, the VA and the slot's first pfn aligned to
    SIZE, and a present table (``present``) replaceable (:func:`free_ok`, the trylock of the
    slot of page ``vv``)."""
    o = inp.oracles
    lock = (o.trylock_pud if bits == 18 else o.trylock_pmd)(bv.extract(vv, VPN_BITS - 1, bits))
    return bv.and_(
        allowed,
        bv.eq(nxt - addr, PUD_PAGES if bits == 18 else PMD_PAGES),
        bv.eq(va_low(inp, addr, bits), 0),
        bv.is_aligned(first_pfn, bits),
        free_ok(present, lock, trylock),
    )


@frozen(kw_only=True, eq=False)
class HugeSlots:
    """v's PUD slot ``[pud_addr, pud_next)`` and PMD slot ``[pmd_addr, pmd_next)`` of a
    walk, and whether one block maps each (``pud``, ``pmd``)."""

    pud_addr: Val
    pud_next: Val
    pud: Cond
    pmd_addr: Val
    pmd_next: Val
    pmd: Cond


def huge_slots(
    inp: VmapInputs, v: Val, lo: Val, hi: Val, max_page_shift: Val, pfn_of: Callable[[Val], Val],
    trylock: bool, pte_first: bool = False,
) -> HugeSlots:
    """The block decisions of ``vmap_range_noflush``'s walk ``[lo, hi)`` (mm/vmalloc.c
    BASE-C, POST-C1) at v's slots: ``vmap_try_huge_pud`` (``max_page_shift >= PUD_SHIFT``
    and ``pud_sect_supported()``) and ``vmap_try_huge_pmd`` (``max_page_shift >=
    PMD_SHIFT``), the slot's first pfn ``pfn_of(addr)``, a table present in S0 replaceable
    as :func:`free_ok` says (``trylock``).  ``pte_first``: seeded control X2, the slot's PTE
    table is present when the PMD attempt runs."""
    o = inp.oracles
    vv = vpn(inp, v)
    u_addr, u_next = slot_of(inp, v, lo, hi, 18)
    pud = try_huge(
        inp, 18, bv.and_(arch.ge(max_page_shift, arch.PUD_SHIFT), arch.pud_sect_supported()),
        u_addr, u_next, pfn_of(u_addr), vv, pud_present(o, vv), trylock,
    )
    s_addr, s_next = slot_of(inp, v, lo, hi, 9)
    pmd = try_huge(
        inp, 9, arch.ge(max_page_shift, arch.PMD_SHIFT), s_addr, s_next, pfn_of(s_addr), vv,
        True if pte_first else pmd_present(o, vv), trylock,
    )
    return HugeSlots(pud_addr=u_addr, pud_next=u_next, pud=pud, pmd_addr=s_addr, pmd_next=s_next, pmd=pmd)


def fast_trylock(rev: Revision) -> bool:
    """Whether the fast paths of ``rev`` consult the trylock oracle (:attr:`Revision.trylock`)."""
    return rev.trylock == "oracle"


def _ugt1(x: Val) -> Cond:
    return bv.not_(bv.ule(x, 1))


@frozen(kw_only=True, eq=False)
class Source:
    """Where a PTE loop takes its pfns from: the segment holding array index ``I`` (linear
    sources: one segment), and whether ``pages[I]`` is read and in bounds."""

    seg_at: Callable[[Val], Seg]
    read_ok: Callable[[Val], Cond]


def linear(sel: Seg) -> Source:
    """A physically contiguous source (``vmap_pte_range``: ``pfn += steps``)."""
    return Source(seg_at=lambda _i: sel, read_ok=lambda _i: True)


def array(inp: VmapInputs) -> Source:
    """The page array (``page_to_pfn(pages[*nr])``)."""
    return Source(seg_at=inp.pages.seg, read_ok=lambda i: bv.ult(i, inp.count))


@frozen(kw_only=True, eq=False)
class PteLoop:
    leaf: Leaf
    no_overshoot: Cond
    reads_ok: Cond
    inside: Cond
    lemma: Cond
    ended: Cond


def pte_loop(
    *,
    inp: VmapInputs,
    x0: Val,
    y1: Val,
    v: Val,
    lag: Lag,
    src: Source,
    shift: Val,
    prot: Val,
    hook: Hook,
    steps: int,
    cont_every: bool = True,
) -> PteLoop:
    """The PTE loop of one pmd slot, positions ``[x0, y1)``, in macro-steps.

    Mirrors ``vmap_pte_range()`` (ioremap and vmalloc chunks: ``pfn += steps``) and
    ``vmap_pages_pte_range()`` (POST-C1, page arrays: ``pfn = page_to_pfn(pages[*nr])`` at
    every step), both calling ``vmap_set_ptes()``: ``size = arch_vmap_pte_range_map_size()``;
    if more than one page, ``set_huge_pte_at(addr, arch_make_huge_pte(pfn_pte(pfn, prot)),
    size)`` writes ``size`` PTEs with consecutive pfns and PTE_CONT, else ``set_pte_at(
    pfn_pte(pfn, prot))``; then ``pte += steps, nr += steps, addr += size`` until ``addr ==
    end``.  The ``pte_none()`` check at each step holds: the range is none in S0 (P1) and no
    earlier step wrote past its own end (``no_overshoot``).
    """
    x = x0
    done: Cond = bv.not_(bv.ult(x0, y1))
    cases: list[tuple[Cond, Leaf]] = []
    no_over: Cond = True
    reads: Cond = True
    inside: Cond = True
    one = bv.const_like(x0, 1, OFF)
    probes: list[tuple[Cond, tuple[Val, Val, Val], Cond]] = []
    for _ in range(steps):
        act = bv.not_(done)
        i = add_lag(x, lag)
        sg = src.seg_at(i)
        pfn = sg.pfn(i)
        rem = y1 - x
        lo9 = va_low(inp, x, 9)
        size = arch.arch_vmap_pte_range_map_size(lo9, rem, pfn, shift, hook)
        big = _ugt1(size)
        piece = sg.end - i
        # a run of block steps of this size: every step that starts inside the piece and
        # fits before y1 gets the same size; a size past y1 is a single (overshooting) step
        mask = ~(size - 1)
        reps = bv.umin(rem & mask, (piece + size - 1) & mask)
        block_run = bv.ite(bv.ult(rem, size), size, bv.umax(reps, size))
        # a run of single PTEs: up to the next 64K-aligned position if the hook takes it
        # there, else to the end of the piece or of the loop
        d = bv.zext(16 - bv.extract(lo9, 3, 0), OFF)
        cand = bv.and_(
            bv.not_(bv.is_aligned(lo9, 4)),
            bv.ult(d, piece),
            bv.ult(d, rem),
            arch.map_size_guards(lo9 + bv.extract(d, 8, 0), rem - d, sg.pfn(i + d), shift, hook),
        )
        run = bv.ite(cand, d, bv.umax(bv.umin(piece, rem), one))
        length = bv.ite(big, block_run, run)
        end_x = x + length
        here = bv.and_(act, arch.ge(v, x), bv.ult(v, end_x))
        # the step covering v: for a block run, its size-aligned step
        step_x = bv.ite(big, x + ((v - x) & mask), v)
        leaf = step_leaf(
            v=v, va0=step_x, pfn_of=lagged_pfn(sg, lag), prot=prot, cont=big, size=size, cont_every=cont_every
        )
        cases.append((here, leaf))
        no_over = bv.and_(no_over, bv.implies(act, bv.ule(length, rem)))
        # pages[*nr] is read at every step start; the last is at length - size (block run)
        last = bv.ite(big, length - size, run - 1)
        reads = bv.and_(reads, bv.implies(act, src.read_ok(i + last)))
        inside = bv.and_(inside, bv.implies(act, bv.and_(bv.ule(end_x, inp.count), arch.ge(end_x, x))))
        # for the lemma: v's step start, its first pfn, and whether the macro-step assumed it
        probes.append(
            (here, (step_x, sg.pfn(add_lag(step_x, lag)), leaf.npages), bv.not_(bv.eq(step_x, x)))
        )
        x = bv.ite(act, end_x, x)
        done = bv.or_(done, bv.and_(act, bv.not_(bv.ult(x, y1))))
    # the macro-step is exact: at the start of v's own step the hook returns the run's step
    # size (a block run), or one page inside a run of single PTEs (the first step of a
    # macro-step is the hook's own result)
    z = bv.const_like(x0, 0, OFF)
    at = bv.select([(c, p[0]) for c, p, _ in probes], z)
    at_pfn = bv.select([(c, p[1]) for c, p, _ in probes], bv.const_like(x0, 0, PFN_BITS))
    want = bv.select([(c, p[2]) for c, p, _ in probes], one)
    inner = bv.select_cond([(c, n) for c, _, n in probes], False)
    got = arch.arch_vmap_pte_range_map_size(va_low(inp, at, 9), y1 - at, at_pfn, shift, hook)
    lemma = bv.implies(inner, bv.eq(got, want))
    return PteLoop(
        leaf=leaf_select(cases, leaf_none(x0)),
        no_overshoot=no_over,
        reads_ok=reads,
        inside=inside,
        lemma=lemma,
        ended=done,
    )


# --------------------------------------------------------------------------- walks


def vmap_range_noflush(
    *,
    inp: VmapInputs,
    lo: Val,
    hi: Val,
    sel: Seg,
    v: Val,
    prot: Val,
    max_page_shift: Val,
    hook: Hook,
    steps: int,
    trylock: bool,
    cont_every: bool = True,
) -> PathObs:
    """``vmap_range_noflush(addr, end, phys, prot, max_page_shift)`` (mm/vmalloc.c, BASE-C
    @ 00cc00cd1fb6 and POST-C1 @ 01bddf7cda69), observed at ``v``.

    The physical range is linear: the pfn at position ``x`` is ``sel.pfn(x)``.  pgd -> p4d
    -> pud -> pmd -> pte, ``phys += next - addr`` at every level.  ``vmap_try_huge_p4d``
    never succeeds (``arch_vmap_p4d_supported`` is false).  ``vmap_try_huge_pud/pmd``:
    max_page_shift, arch support, ``end - addr == SIZE``, VA and PA aligned; if the entry is
    present (a table in S0): BASE-C frees it unconditionally (``trylock=False``), POST-C1
    only under ``mmap_read_trylock(&init_mm)`` (``trylock=True``: the oracle); then
    ``pud/pmd_set_huge`` succeeds.  Otherwise the next level (allocating its table if
    absent), and at the bottom ``vmap_pte_range`` (BASE-C: the hook inline; POST-C1: via
    ``vmap_set_ptes``; the same writes).  The two differ only in the trylock and the hook.
    """
    h = huge_slots(inp, v, lo, hi, max_page_shift, sel.pfn, trylock)
    u_addr, u_next, pud = h.pud_addr, h.pud_next, h.pud
    s_addr, s_next, pmd = h.pmd_addr, h.pmd_next, h.pmd
    loop = pte_loop(
        inp=inp,
        x0=s_addr,
        y1=s_next,
        v=v,
        lag=None,
        src=linear(sel),
        shift=max_page_shift,
        prot=prot,
        hook=hook,
        steps=steps,
        cont_every=cont_every,
    )
    leaf = leaf_select(
        [
            (pud, block_leaf(LEVEL_PUD, u_addr, v, sel, None, prot)),
            (pmd, block_leaf(LEVEL_PMD, s_addr, v, sel, None, prot)),
        ],
        loop.leaf,
    )
    block = bv.or_(pud, pmd)
    inside_block = bv.ule(bv.ite(pud, u_next, s_next), inp.count)
    return PathObs(
        leaf=leaf,
        writes_inside=bv.or_(bv.and_(block, inside_block), bv.and_(bv.not_(block), loop.inside)),
        reads_ok=True,
        no_overshoot=bv.or_(block, loop.no_overshoot),
        unrolled=bv.or_(block, loop.ended),
        reached=True if hook.bounded else bv.eq(s_addr, lo),
        lemma=bv.or_(block, loop.lemma),
        needs_pte=bv.not_(block),
        needs_pmd=bv.not_(pud),
        needs_pud=True,
        block_slot=block,
        flush_lo=bv.const_like(v, 0, OFF),
        flush_hi=inp.count,
        ub=False,
        shift=max_page_shift,
    )


def _ioremap(inp: VmapInputs, v: Val, unroll: Unroll, rev: Revision | None) -> PathObs:
    """``vmap_page_range(addr, end, phys, prot)``'s walk of the ioremap range:
    ``vmap_range_noflush(addr, end, phys, pgprot_nx(prot), ioremap_max_page_shift)``, with
    BASE-C's code and BASE-H's 64K hook (``rev`` None: the slow path) or with the hook,
    trylock and CONT marking of revision ``rev`` (the fast path)."""
    return vmap_range_noflush(
        inp=inp,
        lo=bv.const_like(v, 0, OFF),
        hi=inp.count,
        sel=ioremap_seg(inp),
        v=v,
        prot=arch.pgprot_nx(inp.prot),
        max_page_shift=bv.const_like(v, IOREMAP_MAX_PAGE_SHIFT, 32),
        hook=BASE_HOOK if rev is None else rev.hook,
        steps=unroll.steps,
        trylock=False if rev is None else fast_trylock(rev),
        cont_every=True if rev is None else rev.cont_every_pte,
    )


def vmap_pages_range_noflush_walk(
    *,
    inp: VmapInputs,
    rev: Revision,
    lo: Val,
    hi: Val,
    lag: Lag,
    shift: Val,
    v: Val,
    prot: Val,
    unroll: Unroll,
) -> PathObs:
    """``vmap_pages_range_noflush_walk(addr, end, prot, pages + idx, shift)`` (POST-C1
    @ 01bddf7cda69), observed at ``v`` in [lo, hi); ``idx`` is ``lo + lag``.

    ``vmap_pages_{p4d,pud,pmd}_range`` visit the pmd slots of [lo, hi) in order (pud and pgd
    boundaries are pmd boundaries) with ``*nr`` carried.  In ``vmap_pages_pmd_range``: if
    ``shift >= PMD_SHIFT``, ``page = pages[*nr]`` and ``vmap_try_huge_pmd(pmd, addr, next,
    page_to_phys(page), prot, shift)``; on success ``*nr += 1 << (PMD_SHIFT -
    PAGE_SHIFT)`` (the v8 "*nr increment"), which keeps ``*nr`` in lock step with ``addr``
    since a PMD slot is full.  Otherwise ``vmap_pages_pte_range(..., shift)``
    (:func:`pte_loop`), which advances ``*nr`` by the slot's length.  No PUD attempt on this
    path.  Seeded bug M3 drops the increment: ``*nr`` then lags 512 behind per earlier PMD
    block of the walk, counted by unrolling the slot loop.
    """
    o = inp.oracles
    pg = inp.pages
    big = arch.ge(shift, arch.PMD_SHIFT)

    def pmd_ok(addr: Val, nxt: Val, lag_here: Lag) -> Cond:
        av = vpn(inp, addr)
        # X2 (pte_alloc_first): the slot's PTE table is present when vmap_try_huge_pmd runs
        present = True if rev.pte_alloc_first else pmd_present(o, av)
        return try_huge(inp, 9, big, addr, nxt, pg.pfn_at(add_lag(addr, lag_here)), av, present,
                        fast_trylock(rev))

    s_addr, s_next = slot_of(inp, v, lo, hi, 9)
    found: Cond = True
    slot_lag: Lag = lag
    if not rev.pmd_nr_increment:
        # count the PMD blocks of the walk before v's slot
        addr, npmd = lo, bv.const_like(v, 0, OFF)
        done: Cond = False
        for _ in range(unroll.slots):
            act = bv.and_(bv.not_(done), bv.ult(addr, s_addr))
            nxt = bv.umin(addr + (bv.const_like(v, PMD_PAGES, OFF)
                                   - bv.zext(va_low(inp, addr, 9), OFF)), hi)
            here_lag = add_lag(bv.const_like(v, 0, OFF) - npmd * PMD_PAGES, lag)
            npmd = bv.ite(bv.and_(act, pmd_ok(addr, nxt, here_lag)), npmd + 1, npmd)
            addr = bv.ite(act, nxt, addr)
            done = bv.not_(act)
        found = bv.not_(bv.ult(addr, s_addr))
        slot_lag = add_lag(bv.const_like(v, 0, OFF) - npmd * PMD_PAGES, lag)
    pmd = pmd_ok(s_addr, s_next, slot_lag)
    first = add_lag(s_addr, slot_lag)
    reads = bv.implies(big, bv.ult(first, pg.count))
    loop = pte_loop(
        inp=inp,
        x0=s_addr,
        y1=s_next,
        v=v,
        lag=slot_lag,
        src=array(inp),
        shift=shift,
        prot=prot,
        hook=rev.hook,
        steps=unroll.steps,
        cont_every=rev.cont_every_pte,
    )
    leaf = leaf_select(
        [(pmd, block_leaf(LEVEL_PMD, s_addr, v, pg.seg(first), slot_lag, prot))], loop.leaf
    )
    return PathObs(
        leaf=leaf,
        writes_inside=bv.or_(bv.and_(pmd, bv.ule(s_next, inp.count)), bv.and_(bv.not_(pmd), loop.inside)),
        reads_ok=bv.and_(reads, bv.or_(pmd, loop.reads_ok)),
        no_overshoot=bv.or_(pmd, loop.no_overshoot),
        unrolled=bv.and_(found, bv.or_(pmd, loop.ended)),
        reached=True if rev.hook.bounded else bv.eq(s_addr, lo),
        lemma=bv.or_(pmd, loop.lemma),
        needs_pte=True if rev.pte_alloc_first else bv.not_(pmd),
        needs_pmd=True,
        needs_pud=True,
        block_slot=pmd,
        flush_lo=bv.const_like(v, 0, OFF),
        flush_hi=inp.count,
        ub=False,
        shift=shift,
    )


def vmap_small_pages_range_noflush(*, inp: VmapInputs, v: Val, prot: Val) -> PathObs:
    """``vmap_small_pages_range_noflush(addr, end, prot, pages)`` (BASE-C @ 00cc00cd1fb6),
    observed at ``v``: the pmd-slot loop, then ``vmap_pages_pte_range`` one page per step:
    ``set_pte_at(&init_mm, addr, pte, mk_pte(pages[*nr], prot)); (*nr)++`` (the WARN_ON
    checks pass under P1/P2).  ``*nr`` and ``addr`` advance together, so page ``v`` gets
    ``pages[v]``; the slot of v reads ``pages[start .. next)``."""
    leaf = page_leaf(inp, v, prot)
    _, s_next = slot_of(inp, v, bv.const_like(v, 0, OFF), inp.count, 9)
    return PathObs(
        leaf=leaf,
        writes_inside=True,
        reads_ok=bv.ule(s_next, inp.count),
        no_overshoot=True,
        unrolled=True,
        reached=True,
        lemma=True,
        needs_pte=True,
        needs_pmd=True,
        needs_pud=True,
        block_slot=False,
        flush_lo=bv.const_like(v, 0, OFF),
        flush_hi=inp.count,
        ub=False,
        shift=bv.const_like(v, arch.PAGE_SHIFT, 32),
    )


def _merge(c: Cond, a: PathObs, b: PathObs) -> PathObs:
    """``c ? a : b`` field by field."""

    out: dict[str, Any] = {"leaf": leaf_ite(c, a.leaf, b.leaf)}
    for name in _VALUE_FIELDS:
        out[name] = bv.ite(c, getattr(a, name), getattr(b, name))
    for f in fields(PathObs):
        if f.name not in out:
            out[f.name] = bv.ite_cond(c, getattr(a, f.name), getattr(b, f.name))
    return PathObs(**out)


# --------------------------------------------------------------------------- slow paths


def slow_ioremap(inp: VmapInputs, v: Val, unroll: Unroll) -> PathObs:
    """``ioremap_page_range`` -> ``vmap_page_range(addr, end, phys, prot)`` (BASE-C):
    ``vmap_range_noflush(addr, end, phys, pgprot_nx(prot), ioremap_max_page_shift)`` with
    BASE-H's 64K hook, then ``flush_cache_vmap(addr, end)``."""
    return _ioremap(inp, v, unroll, None)


def slow_vmalloc(inp: VmapInputs, v: Val, unroll: Unroll) -> PathObs:
    """``__vmalloc_area_node`` -> ``vmap_pages_range(addr, end, prot, pages, page_shift)``
    -> ``__vmap_pages_range_noflush`` (BASE-C): with page_shift == PAGE_SHIFT,
    ``vmap_small_pages_range_noflush``; otherwise per chunk
    ``vmap_range_noflush(addr, addr + (1UL << page_shift), page_to_phys(pages[i]), prot,
    page_shift)`` for ``i += 1U << (page_shift - PAGE_SHIFT)``, each chunk an independent
    walk (a block never spans two chunks); then ``flush_cache_vmap(addr, end)``.  Observed at
    v: the chunk holding v (``a`` is chunk-aligned, P3)."""
    s = inp.shift
    chunk = bv.pow2(s - arch.PAGE_SHIFT, OFF, 9)
    first = v & ~(chunk - 1)
    per_chunk = vmap_range_noflush(
        inp=inp,
        lo=first,
        hi=first + chunk,
        sel=inp.pages.seg(first),
        v=v,
        prot=inp.prot,
        max_page_shift=s,
        hook=BASE_HOOK,
        steps=unroll.steps,
        trylock=False,
    )
    f = _fields(per_chunk)
    f.update(reads_ok=bv.ult(first, inp.count), flush_lo=bv.const_like(v, 0, OFF), flush_hi=inp.count)
    small = vmap_small_pages_range_noflush(inp=inp, v=v, prot=inp.prot)
    return _merge(bv.eq(s, arch.PAGE_SHIFT), small, PathObs(**f))


def slow_vmap(inp: VmapInputs, v: Val, unroll: Unroll) -> PathObs:
    """``vmap(pages, count, flags, prot)`` (BASE-C): ``vmap_pages_range(addr, addr + size,
    pgprot_nx(prot), pages, PAGE_SHIFT)`` -> ``vmap_small_pages_range_noflush``, one PTE per
    page; ``flush_cache_vmap(addr, end)``."""
    return vmap_small_pages_range_noflush(inp=inp, v=v, prot=arch.pgprot_nx(inp.prot))


# --------------------------------------------------------------------------- fast paths


def fast_ioremap(inp: VmapInputs, rev: Revision, v: Val, unroll: Unroll) -> PathObs:
    """``vmap_page_range`` after the series (POST-C1): the same ``vmap_range_noflush`` walk,
    whose ``vmap_pte_range`` now calls ``vmap_set_ptes`` with the multi-CONT hook (POST-H1)
    and advances by the returned size."""
    return _ioremap(inp, v, unroll, rev)


def fast_vmalloc(inp: VmapInputs, rev: Revision, v: Val, unroll: Unroll) -> PathObs:
    """``__vmap_pages_range_noflush`` after the series (POST-C1): ``WARN_ON(page_shift <
    PAGE_SHIFT)``, then one ``vmap_pages_range_noflush_walk(addr, end, prot, pages,
    page_shift)`` over the whole range (no per-chunk rewalk)."""
    return vmap_pages_range_noflush_walk(
        inp=inp,
        rev=rev,
        lo=bv.const_like(v, 0, OFF),
        hi=inp.count,
        lag=None,
        shift=inp.shift,
        v=v,
        prot=inp.prot,
        unroll=unroll,
    )


@frozen(kw_only=True, eq=False)
class BatchOrder:
    order: Val  # 32-bit
    ub: Cond
    #: every pages[] index get_vmap_batch_order reads (num_pages_contiguous: pages[idx] up to
    #: the first non-contiguous one or idx + n - 1) is < N
    reads_ok: Cond


def batch_max_steps(rev: Revision, count: Val, i: Val) -> Val:
    """``max_steps`` of ``vmap_pages_range_batched``'s ``get_vmap_batch_order(pages, prot,
    count - i, i)`` (mm/vmalloc.c POST-C1); seeded control X1 passes ``count - i + 1``."""
    return count - i + rev.max_steps_slack if rev.max_steps_slack else count - i


def get_vmap_batch_order(inp: VmapInputs, rev: Revision, max_steps: Val, idx: Val) -> BatchOrder:
    """``get_vmap_batch_order(pages, prot, max_steps, idx)`` (mm/vmalloc.c).

    POST-C1 (@ 01bddf7cda69)::

        nr_contig = num_pages_contiguous(&pages[idx], max_steps);
        if (nr_contig < 2) return 0;
        order = ilog2(nr_contig);
        pfn = page_to_pfn(pages[idx]);
        if (pfn > 0) order = min_t(int, order, __ffs(pfn));
        if (vm_shift(prot, PAGE_SIZE << order) == PAGE_SHIFT) return 0;
        return order;

    POST-C2 (@ 36e4f471846e), known only from the reference's paraphrase (§6; its text
    was not read, a named choice of the ``v8`` revision): ``n = max_steps; if (pfn > 0) n =
    min_t(unsigned int, n, 1UL << __ffs(pfn));`` then ``num_pages_contiguous(&pages[idx],
    n)``, ``ilog2`` and the same filter.  In POST-C1 ``__ffs`` is reached only when
    ``nr_contig >= 2``; in POST-C2 (as paraphrased) always.  ``__ffs(0)`` (the PFN-0 guard removed) yields an
    unconstrained value in 0..63 (oracle ``ffs0``) and raises the UB flag.
    """
    pg = inp.pages
    sg = pg.seg(idx)
    pfn = sg.pfn(idx)
    contig = sg.chain_end - idx  # pages[idx..] consecutive up to the end of the chain
    zero32 = bv.const_like(idx, 0, IDX_BITS)
    ffs_val, is_zero = bv.ffs(pfn, bv.zext(inp.oracles.ffs0(idx), IDX_BITS))
    guard: Cond = bv.not_(bv.eq(pfn, 0)) if rev.pfn0_guard else True
    ub = bv.and_(guard, is_zero) if rev.pfn_clamp else False
    nbits = max(inp.max_count, 2).bit_length()

    def num_pages_contiguous(n: Val) -> Val:
        # 1 for n <= 1, else min(n, contiguous length)
        return bv.umax(bv.umin(n, contig), bv.const_like(idx, 1, IDX_BITS))

    def scan_ok(n: Val) -> Cond:
        # num_pages_contiguous(&pages[idx], n) reads pages[idx + k] for k < n up to the first
        # one that breaks the chain (the chain ends at or before N): the last index read is
        # idx + min(n, contig + 1) - 1 (idx itself for n <= 1)
        return bv.ule(bv.umin(n, contig + 1), inp.count - idx)

    if rev.batch_order == "c1":
        c = num_pages_contiguous(max_steps)
        reads_ok = scan_ok(max_steps)
        # POST-C1 returns 0 on nr_contig < 2 before it reads the pfn: __ffs is not reached
        ub = bv.and_(ub, bv.not_(bv.ult(c, 2)))
        order = bv.fls(c, nbits, IDX_BITS)
        if rev.pfn_clamp:
            # min_t(int, order, __ffs(pfn)): both are small and non-negative here
            order = bv.ite(guard, bv.umin(order, ffs_val), order)
        order = bv.ite(bv.ult(c, 2), zero32, order)
    else:
        n = max_steps
        if rev.pfn_clamp:
            n = bv.ite(guard, bv.umin(n, bv.pow2(ffs_val, IDX_BITS, IDX_BITS - 1)), n)
        c = num_pages_contiguous(n)
        reads_ok = scan_ok(n)
        order = bv.ite(bv.ult(c, 2), zero32, bv.fls(c, nbits, IDX_BITS))
    if rev.shift_filter:
        size = bv.pow2(order, OFF, nbits)
        order = bv.ite(bv.eq(arch.vm_shift(size), arch.PAGE_SHIFT), zero32, order)
    return BatchOrder(order=order, ub=ub, reads_ok=reads_ok)


@frozen(kw_only=True, eq=False)
class Walk:
    """One ``vmap_pages_range_noflush_walk(map_addr, end, prot, pages + idx, shift)`` call
    of the batching loop: positions [lo, hi), ``idx = lo + lag``."""

    issued: Cond
    lo: Val
    hi: Val
    lag: Lag
    shift: Val


@frozen(kw_only=True, eq=False)
class BatchState:
    """The variables of ``vmap_pages_range_batched``'s loop (mm/vmalloc.c POST-C1): ``i``
    and ``idx`` (array indices), ``prev_shift`` (0 before the first iteration), ``batch_end``
    and ``map_addr`` (positions: pages from ``addr``).  Nothing here assumes the lock step
    ``batch_end == addr + i``: lemma ``batch_lock_step`` proves it."""

    i: Val
    idx: Val
    prev: Val
    bend: Val
    map_addr: Val

    @classmethod
    def initial(cls, like: Val) -> BatchState:
        """``i = 0, idx = 0, prev_shift = 0, map_addr = batch_end = addr``."""
        z = bv.const_like(like, 0, IDX_BITS)
        return cls(i=z, idx=z, prev=z, bend=z, map_addr=z)


@frozen(kw_only=True, eq=False)
class BatchIteration:
    """One iteration of the batching loop from a state where ``i < count``."""

    bo: BatchOrder
    #: ``PAGE_SHIFT + get_vmap_batch_order(...)``
    shift: Val
    #: ``prev_shift`` after ``if (!i) prev_shift = shift``
    prev: Val
    #: the pending walk is issued here (``vmap_pages_range_noflush_walk(map_addr,
    #: batch_end, prot, pages + idx, prev_shift)``): positions [map_addr, batch_end)
    issued: Cond
    #: the state after the walk's bookkeeping, before ``if (shift == PAGE_SHIFT) break``
    mid: BatchState
    #: ``shift == PAGE_SHIFT``: the loop is left by ``break`` (state ``mid``)
    brk: Cond
    #: the state after ``batch_end += 1UL << shift; i += 1U << (shift - PAGE_SHIFT)``
    after: BatchState


def batch_iteration(
    inp: VmapInputs, rev: Revision, st: BatchState, order: Val | None = None
) -> BatchIteration:
    """The body of the batching loop of ``vmap_pages_range_batched()`` (POST-C1, see
    :func:`vmap_pages_range_batched`), once, from ``st`` (with ``st.i < count``).  Shared by
    the exact model (unrolled) and the inductive lemmas of :mod:`equiv.vmap.lemmas`, so the
    lemmas are proved on the loop the model runs.  Seeded edits: M5 (``i += 1U << shift``),
    X1 (``count - i + 1``), X6 (the walk issued only when the shift drops).  ``order``:
    the value of ``get_vmap_batch_order()`` as a term of the caller's (a lemma that
    summarises it by what lemma ``batch_order_run`` proves about it), else its model."""
    count = inp.count
    nbits = max(inp.max_count, 2).bit_length()
    bo = get_vmap_batch_order(inp, rev, batch_max_steps(rev, count, st.i), st.i)
    if order is not None:
        bo = BatchOrder(order=order, ub=bo.ub, reads_ok=bo.reads_ok)
    shift = bo.order + arch.PAGE_SHIFT
    prev = bv.ite(bv.eq(st.i, 0), shift, st.prev)
    change = bv.not_(bv.eq(shift, prev))
    if rev.walk_on == "drop":
        change = bv.and_(change, bv.ult(shift, prev))
    mid = BatchState(
        i=st.i,
        idx=bv.ite(change, st.i, st.idx),
        prev=bv.ite(change, shift, prev),
        bend=st.bend,
        map_addr=bv.ite(change, st.bend, st.map_addr),
    )
    lock = rev.batch_step == "order"
    inc = bo.order if lock else shift
    after = BatchState(
        i=st.i + bv.pow2(inc, IDX_BITS, nbits if lock else IDX_BITS - 1),
        idx=mid.idx,
        prev=mid.prev,
        bend=st.bend + bv.pow2(bo.order, OFF, nbits),
        map_addr=mid.map_addr,
    )
    return BatchIteration(
        bo=bo, shift=shift, prev=prev, issued=change, mid=mid, brk=bv.eq(shift, arch.PAGE_SHIFT), after=after
    )


def final_walk(inp: VmapInputs, rev: Revision, st: BatchState) -> tuple[Cond, Val, Val]:
    """``if (map_addr < end) vmap_pages_range_noflush_walk(map_addr, end, prot, pages + idx,
    prev_shift)`` after the loop: (issued, first position, end position).  X3 ends it at
    ``batch_end`` instead of ``end``."""
    hi = inp.count if rev.final_walk_end == "end" else st.bend
    return bv.ult(st.map_addr, inp.count), st.map_addr, hi


def flush_range(inp: VmapInputs, rev: Revision, st: BatchState) -> tuple[Val, Val]:
    """``out: flush_cache_vmap(addr, end)`` (the v3 fix: the saved start), as positions;
    M4 flushes from ``map_addr``, X4 up to ``batch_end``."""
    lo = bv.const_like(inp.a, 0, OFF) if rev.flush_from == "start" else st.map_addr
    hi = inp.count if rev.flush_to == "end" else st.bend
    return lo, hi


@frozen(kw_only=True, eq=False)
class Batching:
    walks: tuple[Walk, ...]
    ended: Cond
    ub: Cond
    flush_lo: Val
    flush_hi: Val
    #: every pages[] index the loop's get_vmap_batch_order calls read is < N
    reads_ok: Cond


def vmap_pages_range_batched(inp: VmapInputs, rev: Revision, unroll: Unroll) -> Batching:
    """The batching loop of ``vmap_pages_range_batched(addr, end, prot, pages)`` (POST-C1
    @ 01bddf7cda69)::

        for (unsigned int i = 0; i < count; ) {
            unsigned int shift = PAGE_SHIFT + get_vmap_batch_order(pages, prot, count - i, i);
                                                    /* X1: count - i + 1 */
            if (!i) prev_shift = shift;
            if (shift != prev_shift) {              /* X6: && shift < prev_shift */
                err = vmap_pages_range_noflush_walk(map_addr, batch_end, prot, pages + idx,
                                                    prev_shift);
                if (err) goto out;
                prev_shift = shift; map_addr = batch_end; idx = i;
            }
            if (shift == PAGE_SHIFT) break;
            batch_end += 1UL << shift;
            i += 1U << (shift - PAGE_SHIFT);        /* M5: i += 1U << shift */
        }
        if (map_addr < end)
            err = vmap_pages_range_noflush_walk(map_addr, end, prot, pages + idx, prev_shift);
                                                    /* X3: (map_addr, batch_end, ...) */
    out:
        flush_cache_vmap(addr, end);                /* M4: flush_cache_vmap(map_addr, end) */
                                                    /* X4: flush_cache_vmap(addr, batch_end) */

    One iteration is :func:`batch_iteration`, unrolled here ``unroll.batch`` times.
    ``batch_end`` and ``i`` advance in lock step (``batch_end == addr + i`` pages, lemma
    ``batch_lock_step``), so the model tracks ``batch_end`` as ``i`` (the same term) and a
    walk's ``map_addr`` is ``addr + idx``; only M5 breaks that and tracks ``batch_end``
    apart.  Returns the walk calls in order (each guarded), whether the loop ended within
    the unrolling bound, the UB flag and the flush range.  Walk errors are not modelled
    here: under P1/P2 a walk fails only on a table allocation (obligation
    ``errors_agree``).
    """
    count = inp.count
    lock = rev.batch_step == "order"
    st = BatchState.initial(inp.a)
    live: Cond = True
    ub: Cond = False
    reads: Cond = True
    walks: list[Walk] = []
    for _ in range(unroll.batch):
        run = bv.and_(live, bv.ult(st.i, count))
        it = batch_iteration(inp, rev, st if not lock else evolve(st, bend=st.i))
        ub = bv.or_(ub, bv.and_(run, it.bo.ub))
        reads = bv.and_(reads, bv.implies(run, it.bo.reads_ok))
        walks.append(
            Walk(
                issued=bv.and_(run, it.issued),
                lo=st.map_addr,
                hi=st.i if lock else st.bend,
                lag=None if lock else st.idx - st.map_addr,
                shift=it.prev,
            )
        )
        go = bv.and_(run, bv.not_(it.brk))
        # the loop left (or never entered) keeps its state; a break keeps the walk's update
        nxt = state_select(go, it.after, state_select(run, it.mid, st))
        st = evolve(nxt, bend=nxt.i) if lock else nxt
        live = go
    ended = bv.not_(bv.and_(live, bv.ult(st.i, count)))
    issued, lo, hi = final_walk(inp, rev, evolve(st, bend=st.i) if lock else st)
    walks.append(Walk(issued=issued, lo=lo, hi=hi, lag=None if lock else st.idx - st.map_addr, shift=st.prev))
    flush_lo, flush_hi = flush_range(inp, rev, evolve(st, bend=st.i) if lock else st)
    return Batching(
        walks=tuple(walks), ended=ended, ub=ub, flush_lo=flush_lo, flush_hi=flush_hi, reads_ok=reads
    )


def state_select(c: Cond, a: BatchState, b: BatchState) -> BatchState:
    """``c ? a : b`` variable by variable."""
    return BatchState(
        i=bv.ite(c, a.i, b.i),
        idx=bv.ite(c, a.idx, b.idx),
        prev=bv.ite(c, a.prev, b.prev),
        bend=bv.ite(c, a.bend, b.bend),
        map_addr=bv.ite(c, a.map_addr, b.map_addr),
    )


def fast_vmap(
    inp: VmapInputs, rev: Revision, v: Val, unroll: Unroll, batching: Batching | None = None
) -> PathObs:
    """``vmap()`` after the series (POST-C1): ``vmap_pages_range_batched(addr, addr + size,
    pgprot_nx(prot), pages)``, observed at ``v``: the walk covering ``v`` (none: a hole)."""
    b = batching if batching is not None else vmap_pages_range_batched(inp, rev, unroll)
    cov = [(bv.and_(w.issued, arch.ge(v, w.lo), bv.ult(v, w.hi)), w) for w in b.walks]
    covered = bv.select_cond([(c, True) for c, _ in cov], False)
    # v's walk is the first one issued (no walk before it can have run away)
    first = bv.select_cond([(c, bv.and_(*[bv.not_(u.issued) for u in b.walks[:j]]))
                            for j, (c, _) in enumerate(cov)], False)

    def pick(f: Callable[[Walk], Val]) -> Val:
        return bv.select([(c, f(w)) for c, w in cov], f(b.walks[-1]))

    lag = None if b.walks[-1].lag is None else pick(lambda w: w.lag)
    obs = vmap_pages_range_noflush_walk(
        inp=inp,
        rev=rev,
        lo=pick(lambda w: w.lo),
        hi=pick(lambda w: w.hi),
        lag=lag,
        shift=pick(lambda w: w.shift),
        v=v,
        prot=arch.pgprot_nx(inp.prot),
        unroll=unroll,
    )
    f = _fields(obs)
    f.update(
        leaf=leaf_select([(covered, obs.leaf)], leaf_none(v)),
        unrolled=bv.and_(b.ended, bv.implies(covered, obs.unrolled)),
        reached=True if rev.hook.bounded else bv.and_(first, obs.reached),
        reads_ok=bv.and_(obs.reads_ok, b.reads_ok),
        flush_lo=b.flush_lo,
        flush_hi=b.flush_hi,
        ub=b.ub,
    )
    return PathObs(**f)


SLOW = {"ioremap": slow_ioremap, "vmalloc": slow_vmalloc, "vmap": slow_vmap}


def observe(path: str, inp: VmapInputs, rev: Revision, v: Val, unroll: Unroll) -> tuple[PathObs, PathObs]:
    """(slow, fast) observations of ``path`` at position ``v`` (0 <= v < N)."""
    slow = SLOW[path](inp, v, unroll)
    if path == "ioremap":
        fast = fast_ioremap(inp, rev, v, unroll)
    elif path == "vmalloc":
        fast = fast_vmalloc(inp, rev, v, unroll)
    else:
        fast = fast_vmap(inp, rev, v, unroll)
    return slow, fast

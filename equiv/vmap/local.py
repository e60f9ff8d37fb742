"""The local model: each path observed at one page, with no loop unrolled.

What the kernel loops did before reaching the observed page ``v`` (where the step covering
``v`` starts, which walk of ``vmap_pages_range_batched`` covers ``v`` and with which shift)
becomes *free* variables, constrained only by facts every run of the kernel satisfies.  The
query "some assignment of the inputs and of the free variables violates the obligation" is
then an over-approximation: UNSAT proves the obligation for every input of the bound, and the
query's size does not depend on the bound.  A SAT answer is only a candidate: it is replayed
on the concrete twin, and if the twin shows no violation the exact unrolled model
(:mod:`equiv.vmap.paths`) searches for a real counterexample.

Every assumption of this model, and where it is proved (the obligations a lemma supports are
in :data:`equiv.vmap.lemmas.FACTS` / ``EXTRA`` / ``GLOBAL``; an obligation is PROVED only if
every lemma it rests on is; docs/vmap-trust.md has the same list as a table):

1. **The slot loops** (``p4d/pud/pmd`` ``do { next = pXd_addr_end(addr, end); ... } while
   (addr = next, addr != end)``) visit every slot boundary between a walk's ends in order:
   v's PUD and PMD decisions are computed exactly (:func:`equiv.vmap.paths.slot_of`), no free
   variable.  *By the structure of the code* (printed with every run; the property tests
   check the model against the twin's real loops).
2. **PTE loop, one physically linear source** (ioremap; vmalloc chunks, which are aligned in
   VA and PA): positions before the first 64K-aligned position ``x_a`` of the loop are
   single PTEs; if the hook accepts ``x_a`` (its guards hold), block steps tile ``[x_a, x_a +
   ((end - x_a) & ~15))`` and single PTEs follow; the step covering ``v`` starts at some
   accepted aligned ``x`` in ``[x_a, v]`` (free) whose block reaches ``v``.  Needs every
   accepted step to be a multiple of 64K, at least 64K and not past the end, one page
   otherwise (lemma ``hook_tiles``), and acceptance to stay the same at every aligned
   position: constant VA-PA congruence of a linear source (ioremap: by the input's shape;
   vmalloc: lemma ``vmalloc_chunks_aligned``, from precondition P3).
3. **PTE loop over a page array** (vmap): the step covering ``v`` starts at a free ``x`` in
   ``v``'s slot, ``x <= v``, and either ``x == v`` and the hook returns one page, or the
   hook's block from ``x`` reaches ``v``.  Steps are at least one page (lemma
   ``hook_tiles``) and follow each other from the slot's start (*structure of the code*:
   ``pte += steps; *nr += steps; addr += size``).
4. **v lies in a walk** ``[lo, hi)`` of ``vmap_pages_range_batched`` (free) with a batch
   shift ``s``, ``hi <= N`` (lemma ``batch_walks_inside``: the walks are disjoint,
   contiguous from 0, inside [0, N), with a shift in ``PAGE_SHIFT + 0..``); every page of
   [0, N) lies in one (lemma ``batch_walks_tile``: none is empty and the last ends at N;
   needed by e_trans, e_enc and errors_agree, which are about every page of the range).
   Both need an iteration to end inside the array (lemma ``batch_order_inside``).
5. **The walk's pages**: it is called with ``pages + idx`` at its first page, ``idx == lo``
   (lemma ``batch_lock_step``: ``batch_end`` and ``map_addr`` in lock step with ``i`` and
   ``idx``).
6. **Run facts** (``run_facts``, assumed only by e_trans): if ``s > PAGE_SHIFT`` the walk is
   made of iterations of order ``o = s - 12`` starting at ``lo + k * 2^o``, each physically
   contiguous, inside the walk, its first pfn aligned to ``2^o``; ``v``, the step start
   ``x`` and the slot start of a PMD block each lie in one (lemma ``batch_runs``, with
   ``batch_order_run`` and ``chain_contiguous``).
7. **Within a walk ``*nr`` advances with ``addr``**: a PTE step by its size, a PMD block by
   512 (v8's ``*nr += 1 << (PMD_SHIFT - PAGE_SHIFT)``; ``vmap_try_huge_pmd`` maps only a
   full 2M slot).  *By the structure of the code* (printed with every run); under seeded bug
   M3 the model counts the lag (:func:`pmd_lag`), whose per-block run facts are run facts;
   with a page array of any number of runs (bound ``ANY``) the count of PMD blocks before
   v's slot is a free variable (any count the slots allow).
8. **The batching scan** (index_bound): ``get_vmap_batch_order``'s reads at a free
   iteration ``r < N``: any index, no lemma needed.
9. **Seeded bug M5** (``i += 1U << shift``) ends the loop after its first batched
   iteration; the model then has the single final walk over the whole range with that
   iteration's shift (``N < 2^16``), and no run facts: lemma ``batch_one_iteration``
   (instead of facts 4-6, whose lemmas M5 breaks; :data:`equiv.vmap.lemmas.M5_FACTS`).

Nothing here depends on the number of segments: with bound ``ANY`` the page array is a
:class:`~equiv.vmap.inputs.RunArray` (functions of the index) and the same facts are read at
the same few indices.

The obligations add (:mod:`equiv.vmap.obligations`): WF-block reads the entries of v's CONT
group from the step covering v (:attr:`~equiv.vmap.leaves.Leaf.entry_at`), which is sound
because the group lies inside that step and no other write reaches it (the steps of a PTE
loop follow each other; the walks are disjoint: lemma ``batch_walks_inside``); the flush
range of the fast vmap path is lemma ``batch_flush_covers`` (both ends, wherever the loop is
left, and the flush is reached: no walk is empty); the other paths flush
``flush_cache_vmap(addr, end)`` by their code.
"""

from __future__ import annotations

from collections.abc import Callable

import z3
from attrs import frozen

from equiv.engine import bv
from equiv.engine.bv import Cond, Val
from equiv.vmap import arch
from equiv.vmap.arch import IDX_BITS, LEVEL_PMD, LEVEL_PUD, PMD_PAGES, Hook
from equiv.vmap.inputs import Seg, VmapInputs
from equiv.vmap.leaves import (
    OFF,
    Lag,
    Leaf,
    add_lag,
    block_leaf,
    ioremap_seg,
    lagged_pfn,
    leaf_ite,
    page_leaf,
    step_leaf,
)
from equiv.vmap.paths import (
    BASE_HOOK,
    IOREMAP_MAX_PAGE_SHIFT,
    batch_max_steps,
    fast_trylock,
    get_vmap_batch_order,
    huge_slots,
    pmd_present,
    slot_of,
    try_huge,
    va_low,
    vpn,
)
from equiv.vmap.revisions import Revision


@frozen(kw_only=True, eq=False)
class LocalObs:
    """One path at the observed page, locally: the leaf covering it and the facts about the
    step that wrote it.  ``facts`` constrains the free variables (``free``)."""

    leaf: Leaf
    #: the step or block covering v lies in [0, N)
    writes_inside: Cond
    #: the pages[] reads of that step are in bounds
    reads_ok: Cond
    #: the step covering v ends by its loop's end
    no_overshoot: Cond
    needs_pte: Cond
    needs_pmd: Cond
    needs_pud: Cond
    block_slot: Cond
    facts: Cond
    free: dict[str, Val]
    shift: Val
    #: facts about the runs of the batching loop's walks (vmap, lemma ``batch_runs``), kept
    #: apart from ``facts``: only the obligations that rest on that lemma assume them
    run_facts: Cond = True
    #: the run facts without the PA alignment of the iterations: only for a search for
    #: candidates when the run facts' lemmas fail (what is found is replayed)
    contig_facts: Cond = True


class Fresh:
    """Free variables of one observation, with stable dotted names (symbolic only)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.made: dict[str, Val] = {}

    def var(self, name: str, width: int = OFF) -> Val:
        full = f"{self.prefix}.{name}"
        v: Val = z3.BitVec(full, width)
        self.made[full] = v
        return v


def _source_pfn(sel_at: Callable[[Val], Seg], lag: Lag) -> Callable[[Val], Val]:
    """The pfn of the page at position ``x`` of a source (index ``x + lag``)."""

    def pfn_of(x: Val) -> Val:
        i = add_lag(x, lag)
        return sel_at(i).pfn(i)

    return pfn_of


def tiled_loop(
    *,
    inp: VmapInputs,
    x0: Val,
    y1: Val,
    v: Val,
    sel_at: Callable[[Val], Seg],
    shift: Val,
    prot: Val,
    hook: Hook,
    fresh: Fresh,
    tag: str,
    lag: Lag = None,
    cont_every: bool = True,
) -> tuple[Leaf, Cond, Cond, Cond]:
    """The PTE loop ``[x0, y1)`` over a source whose acceptance is the same at every aligned
    position (a linear range, or vmalloc's aligned chunks), observed at ``v``; the page at
    position ``x`` is index ``x + lag`` of the source.

    Returns the leaf at v, the facts on the free step start, no-overshoot and inside."""

    pfn_of = _source_pfn(sel_at, lag)
    d = bv.zext(bv.const_like(x0, 0, 4) - bv.extract(va_low(inp, x0, 4), 3, 0), OFF)
    x_a = x0 + d
    pfn_a = pfn_of(x_a)
    acc = bv.and_(bv.ult(x_a, y1), arch.map_size_guards(va_low(inp, x_a, 9), y1 - x_a, pfn_a, shift, hook))
    t_end = x_a + ((y1 - x_a) & ~15)
    in_t = bv.and_(acc, arch.ge(v, x_a), bv.ult(v, t_end))
    x = fresh.var(f"{tag}.step")
    xi = add_lag(x, lag)
    sg = sel_at(xi)
    size = arch.arch_vmap_pte_range_map_size(va_low(inp, x, 9), y1 - x, sg.pfn(xi), shift, hook)
    facts = bv.and_(
        bv.implies(
            in_t,
            bv.and_(
                bv.eq(va_low(inp, x, 4), 0),
                arch.ge(x, x_a),
                bv.ule(x, v),
                bv.ult(v, x + size),
                arch.map_size_guards(va_low(inp, x, 9), y1 - x, sg.pfn(xi), shift, hook),
            ),
        ),
        bv.implies(bv.not_(in_t), bv.eq(x, v)),
    )
    leaf = step_leaf(
        v=v, va0=x, pfn_of=lagged_pfn(sg, lag), prot=prot, cont=in_t, size=size, cont_every=cont_every
    )
    no_over = bv.implies(in_t, bv.ule(size, y1 - x))
    inside = bv.ule(x + leaf.npages, inp.count)
    return leaf, facts, no_over, inside


def pmd_lag(
    *,
    inp: VmapInputs,
    lo: Val,
    hi: Val,
    v: Val,
    shift: Val,
    sel_at: Callable[[Val], Seg],
    lag: Lag,
    slots: int,
    trylock: bool,
    pte_first: bool = False,
    facts: list[Cond] | None = None,
    in_run: Callable[[Val], Cond] | None = None,
    fresh: Fresh | None = None,
) -> Lag:
    """Seeded bug M3 (no ``*nr += 512`` after a PMD block): the index lag at v's slot of a
    page-array walk from ``lo``, i.e. ``lag - 512 * (PMD blocks of the walk before v's
    slot)``, counting over the walk's slots in order (at most ``slots`` before v's).  The
    PMD decision is ``vmap_pages_pmd_range``'s (POST-C1); ``trylock``: whether its
    ``mmap_read_trylock`` is the oracle (:func:`equiv.vmap.paths.free_ok`).  With ``fresh``
    (a page array of any number of runs: no bound on the slots) the count is a free variable
    constrained only by the slots before v's (``facts``: appended to)."""
    o = inp.oracles
    s_addr, _ = slot_of(inp, v, lo, hi, 9)
    addr: Val = lo
    cur: Val = bv.const_like(v, 0, OFF) if lag is None else lag
    if fresh is not None:
        # any number of slots (a page array of any number of runs): any number k of PMD
        # blocks before v's slot, k * 512 <= s_addr - lo (the real count is one of them)
        k = fresh.var("fast.m3_blocks")
        if facts is not None:
            facts.append(bv.ule(k * PMD_PAGES, s_addr - lo))
            facts.append(bv.ule(k, (1 << (IDX_BITS - 9)) - 1))
        return cur - k * PMD_PAGES
    for _ in range(slots):
        act = bv.ult(addr, s_addr)
        nxt = bv.umin(addr + (bv.const_like(v, PMD_PAGES, OFF) - bv.zext(va_low(inp, addr, 9), OFF)), hi)
        av = vpn(inp, addr)
        i = addr + cur
        pmd = try_huge(
            inp, 9, bv.and_(act, arch.ge(shift, arch.PMD_SHIFT)), addr, nxt, sel_at(i).pfn(i), av,
            True if pte_first else pmd_present(o, av), trylock,
        )
        if facts is not None and in_run is not None:
            facts.append(bv.implies(pmd, in_run(addr)))
        cur = bv.ite(pmd, cur - PMD_PAGES, cur)
        addr = bv.ite(act, nxt, addr)
    return cur


def range_walk(
    *,
    inp: VmapInputs,
    lo: Val,
    hi: Val,
    sel_at: Callable[[Val], Seg],
    v: Val,
    prot: Val,
    max_page_shift: Val,
    hook: Hook,
    fresh: Fresh,
    tag: str,
    trylock: bool,
    lag: Lag = None,
    pte_first: bool = False,
    cont_every: bool = True,
) -> LocalObs:
    """``vmap_range_noflush`` (and the vmalloc walk, whose PMD decision is the same and which
    never tries PUD: pass ``max_page_shift`` < 30), observed at v: the PUD and PMD decisions
    of v's slots are the exact model's (:func:`equiv.vmap.paths.huge_slots`); the PTE loop is
    :func:`tiled_loop`.  ``lag``: the page at position x is source index ``x + lag``.
    ``trylock``: POST-C1's ``mmap_read_trylock`` before freeing a present table is the oracle
    (fast paths with :attr:`Revision.trylock` "oracle"); BASE-C frees unconditionally.
    ``pte_first``: seeded control X2 (:attr:`Revision.pte_alloc_first`), the page-array walk
    allocates the slot's PTE table before its PMD attempt (only with ``max_page_shift`` < 30)."""
    h = huge_slots(inp, v, lo, hi, max_page_shift, _source_pfn(sel_at, lag), trylock, pte_first)
    u_addr, u_next, pud = h.pud_addr, h.pud_next, h.pud
    s_addr, s_next, pmd = h.pmd_addr, h.pmd_next, h.pmd
    leaf, facts, no_over, inside = tiled_loop(
        inp=inp,
        x0=s_addr,
        y1=s_next,
        v=v,
        sel_at=sel_at,
        shift=max_page_shift,
        prot=prot,
        hook=hook,
        fresh=fresh,
        tag=tag,
        lag=lag,
        cont_every=cont_every,
    )
    leaf = leaf_ite(
        pud,
        block_leaf(LEVEL_PUD, u_addr, v, sel_at(add_lag(u_addr, lag)), lag, prot),
        leaf_ite(pmd, block_leaf(LEVEL_PMD, s_addr, v, sel_at(add_lag(s_addr, lag)), lag, prot), leaf),
    )
    block = bv.or_(pud, pmd)
    facts = bv.implies(bv.not_(block), facts)  # the PTE step exists only outside a block
    blk_end = bv.ite(pud, u_next, s_next)
    first = add_lag(bv.ite(block, bv.ite(pud, u_addr, s_addr), s_addr), lag)
    return LocalObs(
        leaf=leaf,
        writes_inside=bv.or_(bv.and_(block, bv.ule(blk_end, inp.count)), bv.and_(bv.not_(block), inside)),
        reads_ok=True if lag is None else bv.ult(first, inp.count),
        no_overshoot=bv.or_(block, no_over),
        needs_pte=True if pte_first else bv.not_(block),
        needs_pmd=bv.not_(pud),
        needs_pud=True,
        block_slot=block,
        facts=facts,
        free=dict(fresh.made),
        shift=max_page_shift,
    )


def _small(inp: VmapInputs, v: Val, prot: Val) -> LocalObs:
    return LocalObs(
        leaf=page_leaf(inp, v, prot),
        writes_inside=True,
        reads_ok=True,
        no_overshoot=True,
        needs_pte=True,
        needs_pmd=True,
        needs_pud=True,
        block_slot=False,
        facts=True,
        free={},
        shift=bv.const_like(v, arch.PAGE_SHIFT, 32),
    )


def _merge(c: Cond, a: LocalObs, b: LocalObs) -> LocalObs:
    def mc(x: Cond, y: Cond) -> Cond:
        return bv.ite_cond(c, x, y)

    return LocalObs(
        leaf=leaf_ite(c, a.leaf, b.leaf),
        writes_inside=mc(a.writes_inside, b.writes_inside),
        reads_ok=mc(a.reads_ok, b.reads_ok),
        no_overshoot=mc(a.no_overshoot, b.no_overshoot),
        needs_pte=mc(a.needs_pte, b.needs_pte),
        needs_pmd=mc(a.needs_pmd, b.needs_pmd),
        needs_pud=mc(a.needs_pud, b.needs_pud),
        block_slot=mc(a.block_slot, b.block_slot),
        facts=mc(a.facts, b.facts),
        run_facts=mc(a.run_facts, b.run_facts),
        contig_facts=mc(a.contig_facts, b.contig_facts),
        free={**a.free, **b.free},
        shift=bv.ite(c, a.shift, b.shift),
    )


# --------------------------------------------------------------------------- paths


def _ioremap(inp: VmapInputs, v: Val, fresh: Fresh, rev: Revision | None) -> LocalObs:
    """The walk of the ioremap range at v (:func:`equiv.vmap.paths.vmap_range_noflush`
    from ``vmap_page_range``): BASE-C's code with BASE-H's 64K hook (``rev`` None: the slow
    path) or with the hook, trylock and CONT marking of revision ``rev`` (the fast path)."""
    sel = ioremap_seg(inp)
    return range_walk(
        inp=inp,
        lo=bv.const_like(v, 0, OFF),
        hi=inp.count,
        sel_at=lambda _x: sel,
        v=v,
        prot=arch.pgprot_nx(inp.prot),
        max_page_shift=bv.const_like(v, IOREMAP_MAX_PAGE_SHIFT, 32),
        hook=BASE_HOOK if rev is None else rev.hook,
        fresh=fresh,
        tag="slow" if rev is None else "fast",
        trylock=False if rev is None else fast_trylock(rev),
        cont_every=True if rev is None else rev.cont_every_pte,
    )


def slow(path: str, inp: VmapInputs, v: Val, fresh: Fresh) -> LocalObs:
    """The slow path at v (the same kernel functions as :mod:`equiv.vmap.paths`)."""
    if path == "vmap":
        return _small(inp, v, arch.pgprot_nx(inp.prot))
    if path == "ioremap":
        return _ioremap(inp, v, fresh, None)
    s = inp.shift
    chunk = bv.pow2(s - arch.PAGE_SHIFT, OFF, 9)
    first = v & ~(chunk - 1)
    sel = inp.pages.seg(first)
    per_chunk = range_walk(
        inp=inp,
        lo=first,
        hi=first + chunk,
        sel_at=lambda _x: sel,
        v=v,
        prot=inp.prot,
        max_page_shift=s,
        hook=BASE_HOOK,
        fresh=fresh,
        tag="slow",
        trylock=False,
    )
    return _merge(bv.eq(s, arch.PAGE_SHIFT), _small(inp, v, inp.prot), per_chunk)


def fast(path: str, inp: VmapInputs, rev: Revision, v: Val, fresh: Fresh) -> LocalObs:
    """The fast path (revision ``rev``) at v."""
    if path == "ioremap":
        return _ioremap(inp, v, fresh, rev)
    zero = bv.const_like(v, 0, OFF)
    if path == "vmalloc":
        # one walk over the whole range: no PUD attempt (shift <= PMD_SHIFT < PUD_SHIFT); the
        # PTE loop of a slot sees aligned chunks (lemma vmalloc_chunks_aligned)
        lag = (
            None
            if rev.pmd_nr_increment
            else pmd_lag(
                inp=inp,
                lo=zero,
                hi=inp.count,
                v=v,
                shift=inp.shift,
                sel_at=inp.pages.seg,
                lag=None,
                slots=inp.bound + 1,
                trylock=fast_trylock(rev),
                pte_first=rev.pte_alloc_first,
                fresh=fresh if inp.unbounded else None,
            )
        )
        return range_walk(
            inp=inp,
            lo=zero,
            hi=inp.count,
            sel_at=inp.pages.seg,
            v=v,
            prot=inp.prot,
            max_page_shift=inp.shift,
            hook=rev.hook,
            fresh=fresh,
            tag="fast",
            trylock=fast_trylock(rev),
            lag=lag,
            pte_first=rev.pte_alloc_first,
            cont_every=rev.cont_every_pte,
        )
    return fast_vmap(inp, rev, v, fresh)


def fast_vmap(inp: VmapInputs, rev: Revision, v: Val, fresh: Fresh) -> LocalObs:
    """``vmap_pages_range_batched`` at v, locally (module docstring: walks, page-array PTE
    loops)."""
    o = inp.oracles
    pg = inp.pages
    prot = arch.pgprot_nx(inp.prot)
    lo, hi = fresh.var("fast.walk.lo"), fresh.var("fast.walk.hi")
    shift = fresh.var("fast.walk.shift", 32)
    order = shift - arch.PAGE_SHIFT
    nbits = max(inp.max_count, 2).bit_length()
    batched = bv.not_(bv.eq(shift, arch.PAGE_SHIFT))
    size_o = bv.pow2(order, OFF, nbits)

    def in_run(p: Val, aligned: bool = True) -> Cond:
        """p's iteration ``[r, r + 2^o)`` of the walk (r = lo + k * 2^o) is physically
        contiguous, ends inside the walk, and its first pfn is aligned to 2^o (lemma
        ``batch_runs``; without ``aligned``, the facts a seeded bug that drops the
        alignment clamp still keeps: a search for candidates only)."""
        r = lo + ((p - lo) & ~(size_o - 1))
        rs = pg.seg(r)
        return bv.implies(
            batched,
            bv.and_(
                bv.eq(pg.seg(p).off, rs.off),
                bv.is_aligned_dyn(rs.pfn(r), order) if aligned else True,
                bv.ule(r + size_o, hi),
            ),
        )

    # v lies in a walk inside [0, N) with a batch shift (lemmas batch_walks_inside /
    # batch_walks_tile); the run facts (lemma batch_runs) are kept apart (run_facts)
    walk = bv.and_(
        bv.ule(lo, v),
        bv.ult(v, hi),
        bv.ule(hi, inp.count),
        arch.ge(shift, arch.PAGE_SHIFT),
        bv.ult(shift, arch.PAGE_SHIFT + nbits),
    )
    if rev.batch_step == "shift":
        # seeded bug M5 (i += 1U << shift): after the first batched iteration i is past count
        # (shift >= 16 and count < 2^16 pages), so the loop ends and the final walk maps the
        # whole range [0, N) with the first iteration's shift; no run structure holds
        zi = bv.const_like(v, 0, IDX_BITS)
        first_bo = get_vmap_batch_order(inp, rev, batch_max_steps(rev, inp.count, zi), zi)
        first = first_bo.order + arch.PAGE_SHIFT
        walk = bv.and_(bv.eq(lo, 0), bv.eq(hi, inp.count), bv.eq(shift, first), bv.ult(inp.count, 1 << 16))

        def in_run(p: Val, aligned: bool = True) -> Cond:
            return True

    s_addr, s_next = slot_of(inp, v, lo, hi, 9)
    # seeded bug M3: *nr lags 512 behind per earlier PMD block of the walk
    lag_facts: list[Cond] = []
    lag = (
        None
        if rev.pmd_nr_increment
        else pmd_lag(
            inp=inp,
            lo=lo,
            hi=hi,
            v=v,
            shift=shift,
            sel_at=pg.seg,
            lag=None,
            slots=inp.bound + 1,
            trylock=fast_trylock(rev),
            pte_first=rev.pte_alloc_first,
            facts=lag_facts,
            in_run=in_run,
            fresh=fresh if inp.unbounded else None,
        )
    )
    # PMD attempt (shift >= PMD_SHIFT): pages[*nr] at the slot start
    sv = vpn(inp, s_addr)
    first_i = add_lag(s_addr, lag)
    first = pg.seg(first_i)
    pmd = try_huge(
        inp, 9, arch.ge(shift, arch.PMD_SHIFT), s_addr, s_next, first.pfn(first_i), sv,
        True if rev.pte_alloc_first else pmd_present(o, sv), fast_trylock(rev),
    )
    pmd_facts = bv.implies(pmd, in_run(s_addr))
    # the PTE step covering v
    x = fresh.var("fast.step")
    xi = add_lag(x, lag)
    sg = pg.seg(xi)
    size = arch.arch_vmap_pte_range_map_size(va_low(inp, x, 9), s_next - x, sg.pfn(xi), shift, rev.hook)
    big = bv.not_(bv.ule(size, 1))
    step = bv.and_(
        arch.ge(x, s_addr),
        bv.ule(x, v),
        bv.or_(bv.and_(bv.not_(big), bv.eq(x, v)), bv.and_(big, bv.ult(v, x + size))),
    )
    leaf_step = step_leaf(
        v=v, va0=x, pfn_of=lagged_pfn(sg, lag), prot=prot, cont=big, size=size, cont_every=rev.cont_every_pte
    )
    leaf = leaf_ite(pmd, block_leaf(LEVEL_PMD, s_addr, v, first, lag, prot), leaf_step)
    facts = bv.and_(walk, bv.implies(bv.not_(pmd), step))
    run_facts = bv.and_(in_run(v), pmd_facts, bv.implies(bv.not_(pmd), in_run(x)), *lag_facts)
    contig_facts = bv.and_(in_run(v, False), bv.implies(bv.not_(pmd), in_run(x, False)))
    # preferences for readable (and real) candidates: the first step of v's slot
    fresh.made["hint.step_is_slot_start"] = bv.eq(x, s_addr)
    end = bv.ite(pmd, s_next, x + leaf_step.npages)
    # the pages[] reads of get_vmap_batch_order at some iteration r of the batching loop
    # (free: any r < N; over-approximates the iterations the loop reaches)
    r = fresh.var("fast.batch.i")
    scan_ok = bv.implies(
        bv.ult(r, inp.count), get_vmap_batch_order(inp, rev, batch_max_steps(rev, inp.count, r), r).reads_ok
    )
    return LocalObs(
        leaf=leaf,
        writes_inside=bv.ule(end, inp.count),
        reads_ok=bv.and_(bv.ult(add_lag(bv.ite(pmd, s_addr, x), lag), inp.count), scan_ok),
        no_overshoot=bv.or_(pmd, bv.implies(big, bv.ule(size, s_next - x))),
        needs_pte=True if rev.pte_alloc_first else bv.not_(pmd),
        needs_pmd=True,
        needs_pud=True,
        block_slot=pmd,
        facts=facts,
        run_facts=run_facts,
        contig_facts=contig_facts,
        free=dict(fresh.made),
        shift=shift,
    )


def observe(path: str, inp: VmapInputs, rev: Revision, v: Val) -> tuple[LocalObs, LocalObs]:
    """(slow, fast) local observations of ``path`` at position ``v``."""
    fs, ff = Fresh("local"), Fresh("local")
    return slow(path, inp, v, fs), fast(path, inp, rev, v, ff)

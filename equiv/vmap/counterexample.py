"""Counterexamples of the page-table subject: read off a solver model, replayed on the twin.

A counterexample is only ever built from a concrete replay (:func:`replay`): the solver's
inputs become a :class:`~equiv.vmap.inputs.ConcreteCase`, both paths run page by page on
:mod:`equiv.vmap.twin`, and the obligation is checked on the concrete page tables.  What a
reviewer needs is kept: the page array as segments, the virtual range, the page where it goes
wrong, the slow and fast leaves there, the walks of the batching loop, and whether the defect
is undefined behaviour.
"""

from __future__ import annotations

import re
from typing import Any

import z3
from attrs import frozen

from equiv.engine.query import Query
from equiv.vmap import arch
from equiv.vmap.arch import IDX_BITS, PFN_BITS
from equiv.vmap.inputs import MAX_SEG_ORDER, ConcreteCase, RunArray, VmapInputs
from equiv.vmap.obligations import Violation, violations
from equiv.vmap.revisions import Revision
from equiv.vmap.twin import Run, run_fast, run_slow

#: arm64 PAGE_KERNEL (PROT_NORMAL: PTE_TYPE_PAGE | PTE_AF | PTE_SHARED | PTE_WRITE | PTE_PXN |
#: PTE_UXN, MT_NORMAL), the protection counterexamples prefer
PAGE_KERNEL = 0x0068000000000703
#: the largest range the twin replays (pages)
MAX_REPLAY_PAGES = 1 << 20
#: the most pages (vmalloc: chunks) read off a model of a page array of any number of runs
#: (they are read one by one)
MAX_RUN_ARRAY_PAGES = 1 << 14


@frozen
class LeafView:
    """One side's leaf at the page: level, raw entry, the pfn it maps the page to, and the
    block or CONT step that wrote it (first page of the range, size in pages)."""

    level: str
    entry: int
    pfn: int | None
    block_page: int
    block_pages: int
    cont: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "entry": hex(self.entry),
            "pfn": None if self.pfn is None else hex(self.pfn),
            "block_page": self.block_page,
            "block_pages": self.block_pages,
            "cont": self.cont,
        }


def leaf_view(case: ConcreteCase, r: Run, i: int) -> LeafView:
    """The leaf covering page ``i`` of the range in run ``r``."""
    lvl, e, va0, npg = r.leaf(case.va + i)
    start, size = va0 - case.va, npg
    if lvl == arch.LEVEL_PTE and e & arch.PTE_CONT:
        for s, n in r.steps:  # the set_huge_pte_at step that wrote it
            if s <= case.va + i < s + n:
                start, size = s - case.va, n
    return LeafView(
        level=arch.LEVEL_NAMES[lvl],
        entry=e,
        pfn=r.translation(case.va + i),
        block_page=start,
        block_pages=size,
        cont=bool(lvl == arch.LEVEL_PTE and e & arch.PTE_CONT),
    )


@frozen
class VmapCounterexample:
    """A replayed counterexample (frozen; ``to_json`` for machine-readable reports)."""

    obligation: str
    path: str
    revision: str
    mutant: str | None
    bound: int
    case: ConcreteCase
    #: the page (index into the range) where it shows, or None for a whole-call defect
    page: int | None
    expected_pfn: int | None
    slow: LeafView | None
    fast: LeafView | None
    #: the concrete violations (first few), one line each
    detail: tuple[str, ...]
    n_violations: int
    #: the defect is undefined behaviour (__ffs(0)), not a translation difference
    ub: bool
    #: walk calls of vmap_pages_range_batched: (first page, end page, pages[] index, shift)
    walks: tuple[tuple[int, int, int, int], ...]
    #: flush_cache_vmap ranges (pages relative to the range start), slow and fast
    flush: tuple[tuple[int, int] | None, tuple[int, int] | None]
    #: which model proposed it: the local model, or the exact (unrolled) one
    found_by: str
    choices: tuple[str, ...] = ()
    #: the revision's named trylock choice (:data:`equiv.vmap.revisions.TRYLOCKS`)
    trylock: str = "succeeds"

    @property
    def va(self) -> int:
        """Kernel virtual address of the range start."""
        return arch.kernel_va(self.case.va)

    def to_cache(self) -> dict[str, Any]:
        """The result cache's payload: the concrete input, the page the solver pointed at
        and the model that proposed it (the counterexample is replayed again on load:
        :func:`equiv.vmap.cell.load_counterexample`)."""
        return {"case": self.case.to_json(), "page": self.page, "found_by": self.found_by}

    def to_json(self) -> dict[str, Any]:
        return {
            "obligation": self.obligation,
            "path": self.path,
            "revision": self.revision,
            "mutant": self.mutant,
            "bound": self.bound,
            "inputs": self.case.to_json(),
            "page": self.page,
            "page_va": None if self.page is None else hex(self.va + (self.page << arch.PAGE_SHIFT)),
            "expected_pfn": None if self.expected_pfn is None else hex(self.expected_pfn),
            "slow": None if self.slow is None else self.slow.to_json(),
            "fast": None if self.fast is None else self.fast.to_json(),
            "violations": list(self.detail),
            "n_violations": self.n_violations,
            "undefined_behaviour": self.ub,
            "walks": [{"first_page": a, "end_page": b, "index": i, "shift": s} for a, b, i, s in self.walks],
            "flush": {"slow": self.flush[0], "fast": self.flush[1]},
            "found_by": self.found_by,
            "replayed": True,
        }


def _power_pieces(pfns: list[int], kmax: int) -> list[tuple[int, int]]:
    """``pfns`` as segments ``(k, first pfn)`` of 2^k contiguous pages (k <= kmax): each
    physically contiguous run cut into powers of two, largest first.

    >>> _power_pieces([5, 6, 7, 9], 9)
    [(1, 5), (0, 7), (0, 9)]
    """
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(pfns):
        j = i + 1
        while j < len(pfns) and pfns[j] == pfns[j - 1] + 1:
            j += 1
        while i < j:
            k = min(kmax, (j - i).bit_length() - 1)
            out.append((k, pfns[i]))
            i += 1 << k
    return out


def read_points(q: Query, pg: RunArray) -> list[z3.ExprRef]:
    """The index terms ``pg`` was read at that the query ``q`` knows (a cell's queries
    share the array, each reads it at some of them)."""
    names = set(re.findall(r"\(declare-fun \|?([^\s|()]+)", q.smt2()))
    return [t for t in pg.reads.values() if _symbols(t) <= names]


def _symbols(t: z3.ExprRef) -> set[str]:
    """The names of the uninterpreted constants of ``t`` (a DAG walk, each node once)."""
    seen: set[int] = set()
    out: set[str] = set()
    todo = [t]
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(e.decl().name())
        todo += e.children()
    return out


def _run_array_segments(
    q: Query, inp: VmapInputs, pg: RunArray, n: int
) -> tuple[tuple[int, int], ...] | None:
    """The concrete array of a model of a :class:`~equiv.vmap.inputs.RunArray`, as segments.

    vmalloc: every chunk's pfn, read off the model (the chunk shape holds by construction).
    vmap: the model fixes ``off`` and ``run_end`` only at the indices the query reads; from
    each of them (in index order) its run ``[k, run_end(k))`` gets pfns ``off(k) + i``, and
    the pages no such run covers get pfns that continue no neighbour (one-page runs, far
    from the others).  The replay on the twin decides whether the array shows the violation.
    """
    mask = (1 << PFN_BITS) - 1
    if pg.path == "vmalloc":
        o = int(q.value(inp.shift)) - arch.PAGE_SHIFT
        if n >> o > MAX_RUN_ARRAY_PAGES:
            return None
        return tuple(
            (o, (int(q.value(pg.off_fn(z3.BitVecVal(c, IDX_BITS)))) << o) & mask) for c in range(n >> o)
        )
    if n > MAX_RUN_ARRAY_PAGES:
        return None
    pfns: list[int | None] = [None] * n
    points = sorted({int(q.value(t)) for t in read_points(q, pg)} | {0})
    for k in points:
        if k >= n or pfns[k] is not None:
            continue
        off = int(q.value(pg.off_fn(z3.BitVecVal(k, IDX_BITS))))
        end = int(q.value(pg.run_end(z3.BitVecVal(k, IDX_BITS))))
        for i in range(k, min(max(end, k + 1), n)):
            if pfns[i] is not None:
                break
            pfns[i] = (off + i) & mask
    used = {p for p in pfns if p is not None}
    far = (max(used, default=0) + 2) | 1  # odd pfns two apart: no two contiguous
    out: list[int] = []
    for p in pfns:
        if p is None:
            while far in used or far - 1 in used or far + 1 in used:
                far += 2
            p, far = far, far + 2
        out.append(p)
    return tuple(_power_pieces(out, MAX_SEG_ORDER))


def read_case(q: Query, path: str, inp: VmapInputs) -> ConcreteCase | None:
    """The concrete input of a SAT model (None if the range is too long to replay)."""
    pg = inp.pages
    va = int(q.value(inp.a))
    n = int(q.value(pg.count))
    if n > MAX_REPLAY_PAGES:
        return None
    segs: list[tuple[int, int]] = []
    if isinstance(pg, RunArray):
        runs = _run_array_segments(q, inp, pg, n)
        if runs is None:
            return None
        segs = list(runs)
    else:
        for j in range(pg.nseg):
            act = pg.active[j]
            if not (act if isinstance(act, bool) else q.value(act)):
                break
            base = int(q.value(pg.base[j]))
            size = int(q.value(pg.order[j])) if pg.order is not None else int(q.value(pg.length[j]))
            segs.append((size, base))
    shift = int(q.value(inp.shift))
    o = inp.oracles
    tables: set[tuple[str, int]] = set()
    fails: set[tuple[str, int]] = set()
    last = va + n - 1
    for kind, span, fn, width in (
        ("pgd", 27, o.pgd_table, 9),
        ("pud", 18, o.pud_table, 18),
        ("pmd", 9, o.pmd_table, 27),
    ):
        for idx in range(va >> span, (last >> span) + 1):
            if q.value(fn(z3.BitVecVal(idx, width))):
                tables.add((kind, idx))
            if kind != "pgd":
                try_fn = o.trylock_pud if kind == "pud" else o.trylock_pmd
                if not q.value(try_fn(z3.BitVecVal(idx, width))):
                    fails.add((kind, idx))
    case = ConcreteCase(
        path=path,
        va=va,
        prot=int(q.value(inp.prot)),
        segments=tuple(segs),
        shift=shift,
        tables=frozenset(tables),
        trylock_fails=frozenset(fails),
    )
    if path == "vmap":
        zeros = [i for i, p in enumerate(case.pfns()) if p == 0]
        ffs0 = tuple((i, int(q.value(o.ffs0(z3.BitVecVal(i, 32))))) for i in zeros)
        case = ConcreteCase(
            path=path,
            va=va,
            prot=case.prot,
            segments=case.segments,
            shift=shift,
            tables=case.tables,
            trylock_fails=case.trylock_fails,
            ffs0=ffs0,
        )
    return case


@frozen
class Replay:
    """The concrete runs of a case and the violations of one obligation."""

    case: ConcreteCase
    slow: Run
    fast: Run
    violations: tuple[Violation, ...]


def replay(case: ConcreteCase, rev: Revision, obligation: str) -> Replay:
    """Run both paths of ``case`` on the twin and check ``obligation`` concretely."""
    rs, rf = run_slow(case, rev), run_fast(case, rev)
    return Replay(case, rs, rf, tuple(violations(obligation, case, rs, rf)))


def simplify(rp: Replay, rev: Revision, obligation: str) -> Replay:
    """Drop what the violation does not need: S0 tables, trylock failures and ``__ffs(0)``
    values one at a time, and the protection to PAGE_KERNEL, keeping each change only if the
    replay still shows a violation of ``obligation``."""
    from attrs import evolve

    cur = rp
    trials: list[ConcreteCase] = []
    for x in sorted(cur.case.trylock_fails):
        trials.append(evolve(cur.case, trylock_fails=cur.case.trylock_fails - {x}))
    for x in sorted(cur.case.tables):
        trials.append(evolve(cur.case, tables=cur.case.tables - {x}))
    if cur.case.prot != PAGE_KERNEL:
        trials.append(evolve(cur.case, prot=PAGE_KERNEL))
    for t in trials:
        # re-apply the same removal to the current case (earlier removals may have been kept)
        cand = evolve(
            cur.case,
            trylock_fails=cur.case.trylock_fails & t.trylock_fails,
            tables=cur.case.tables & t.tables,
            prot=t.prot,
        )
        if cand == cur.case:
            continue
        rp2 = replay(cand, rev, obligation)
        if rp2.violations:
            cur = rp2
    return cur


def build(
    rp: Replay,
    *,
    obligation: str,
    rev: Revision,
    mutant: str | None,
    bound: int,
    page: int | None,
    found_by: str,
) -> VmapCounterexample:
    """The counterexample of a replay that shows violations (``page``: the page the solver
    pointed at; the first violating page is shown if that one is not among them)."""
    case = rp.case
    pages = [v.page for v in rp.violations if v.page is not None]
    shown = page if page is not None and page in pages else (pages[0] if pages else None)
    if obligation == "ub_ffs0":
        shown = None
    detail = [v.detail for v in rp.violations if v.page == shown] or [v.detail for v in rp.violations]
    in_range = shown is not None and 0 <= shown < case.nr_pages
    return VmapCounterexample(
        obligation=obligation,
        path=case.path,
        revision=rev.name,
        mutant=mutant,
        bound=bound,
        case=case,
        page=shown if in_range else None,
        expected_pfn=case.pfns()[shown] if in_range and shown is not None else None,
        slow=leaf_view(case, rp.slow, shown) if in_range and shown is not None else None,
        fast=leaf_view(case, rp.fast, shown) if in_range and shown is not None else None,
        detail=tuple(detail[:4]),
        n_violations=len(rp.violations),
        ub=bool(rp.fast.ub),
        walks=tuple((a - case.va, b - case.va, i, s) for a, b, i, s in rp.fast.walks),
        flush=(
            None if rp.slow.flush is None else (rp.slow.flush[0] - case.va, rp.slow.flush[1] - case.va),
            None if rp.fast.flush is None else (rp.fast.flush[0] - case.va, rp.fast.flush[1] - case.va),
        ),
        found_by=found_by,
        choices=rev.choices,
        trylock=rev.trylock,
    )

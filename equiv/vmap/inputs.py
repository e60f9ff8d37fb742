"""Inputs of the page-table subject: the virtual range, the protection, the page array as
physically contiguous segments, the vmalloc shift, and the initial page-table state.

The page array ``pages[0..N)`` is given as up to ``bound`` *segments*: segment ``j`` covers
indices ``[start_j, start_j + len_j)`` and maps them to pfns ``base_j + (i - start_j)``.  For
vmap ``len_j = 2^k_j`` with ``k_j`` in 0..9 and ``base_j`` arbitrary (non-contiguous,
misaligned and mixed-order runs; adjacent segments may also be physically contiguous, which
merges them into a longer run); for vmalloc every segment is one ``2^(shift-12)`` chunk
(reference §9 P3); for ioremap one segment of any length (``p[i] = phys/4K + i``).

For the cell of *any* number of segments (bound :data:`ANY`) the array is not a tuple of
segments but a function: :class:`RunArray` (vmap: ``pages[i] = off(i) + i`` with ``off`` and
the end of ``i``'s physically contiguous run uninterpreted, so any array of any length and
any number of runs; vmalloc: every chunk an uninterpreted 2^(shift-12)-aligned pfn).  The
queries read it at a few symbolic indices only (the observed page, the step, the walk, the
iteration), so their size does not depend on the array's.

The initial table state S0 is given by oracles over table slots: whether a PUD table hangs
under a pgd entry, a PMD table under a pud entry, a PTE table under a pmd entry
(precondition P1: no leaf maps any page of the range; an entry covering part of the range is
none or a table), and the ``mmap_read_trylock`` outcome per slot (P4).  Symbolic inputs are
z3 constants with stable dotted names; concrete inputs are :class:`equiv.engine.bv.CBV` and plain
callables, so the same model runs on both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3
from attrs import field, frozen

from equiv.engine import bv
from equiv.engine.bv import CBV, Cond, Val
from equiv.engine.errors import WidthError
from equiv.vmap import arch
from equiv.vmap.arch import IDX_BITS, PFN_BITS, SHIFT_BITS, VPN_BITS
from equiv.vmap.names import ANY as ANY  # re-exported: the bound values are the model's too
from equiv.vmap.names import MAX_SEGMENTS as MAX_SEGMENTS
from equiv.vmap.names import PATHS as PATHS  # re-exported: the paths are the model's too
from equiv.vmap.names import AnyBound as AnyBound
from equiv.vmap.names import is_any as is_any

#: largest segment order of a vmap page array (reference issue: k from 0 to 9)
MAX_SEG_ORDER = 9
#: vmalloc shifts vm_shift() can return on arm64-4K
VMALLOC_SHIFTS = (arch.PAGE_SHIFT, arch.CONT_PTE_SHIFT, arch.PMD_SHIFT)

Oracle = Callable[[Val], Cond]

def _width(expected: int) -> Callable[[object, object, Val], None]:
    def check(_inst: object, attr: object, value: Val) -> None:
        if value.size() != expected:
            raise WidthError(
                f"{getattr(attr, 'name', attr)}: {value.size()} bits, expected "
                f"{expected}; build inputs with equiv.vmap.inputs helpers"
            )

    return check


@frozen(kw_only=True, eq=False)
class Seg:
    """One segment, selected by an array index: index ``x`` of it maps to pfn ``off + x``
    (``off = base - start``, modulo 2^36), from index ``start`` up to ``end``; its physically
    contiguous chain ends at index ``chain_end``.  Segments of one contiguous chain have the
    same ``off``: that is what contiguity means here, and it keeps the solver's work on
    translations an equality of offsets rather than sums."""

    off: Val
    start: Val
    end: Val
    chain_end: Val

    def pfn(self, x: Val) -> Val:
        """The pfn of index ``x`` if the segment's linearity extended to it: ``off + x``.
        For an ``x`` of the segment, ``pages[x]``; for an ``x`` past it, the pfn a block step
        starting in the segment writes at ``x``."""
        return self.off + bv.zext(x, PFN_BITS)


@frozen(kw_only=True, eq=False)
class PageArray:
    """``pages[]`` as segments (see the module docstring); derived fields are computed by
    :meth:`build`."""

    active: tuple[Cond, ...]
    length: tuple[Val, ...]  # pages, IDX_BITS
    base: tuple[Val, ...]  # pfn, PFN_BITS
    #: the segment order k_j (vmap, vmalloc) or None (ioremap: one segment of any length)
    order: tuple[Val, ...] | None
    start: tuple[Val, ...]
    count: Val
    #: array index where the physically contiguous chain beginning at segment j ends
    chain_end: tuple[Val, ...]
    #: ``base_j - start_j``: index i of segment j maps to pfn ``off_j + i``
    off: tuple[Val, ...]

    @classmethod
    def build(
        cls,
        active: tuple[Cond, ...],
        length: tuple[Val, ...],
        base: tuple[Val, ...],
        order: tuple[Val, ...] | None = None,
    ) -> PageArray:
        """Derive starts, the count and the contiguous chains from the segments."""
        for x in length:
            _width(IDX_BITS)(None, "length", x)
        for x in base:
            _width(PFN_BITS)(None, "base", x)
        n = len(length)
        zero = bv.const_like(length[0], 0, IDX_BITS)
        starts: list[Val] = []
        acc = zero
        for j in range(n):
            starts.append(acc)
            acc = acc + bv.ite(active[j], length[j], zero)
        ends = [starts[j] + length[j] for j in range(n)]
        offs = tuple(base[j] - bv.zext(starts[j], PFN_BITS) for j in range(n))
        chain: list[Val] = [ends[-1]]
        for j in range(n - 2, -1, -1):
            # segment j+1 continues segment j physically: base[j+1] == base[j] + len[j]
            contiguous = bv.and_(active[j + 1], bv.eq(offs[j + 1], offs[j]))
            chain.insert(0, bv.ite(contiguous, chain[0], ends[j]))
        return cls(
            active=active,
            length=length,
            base=base,
            order=order,
            start=tuple(starts),
            count=acc,
            chain_end=tuple(chain),
            off=offs,
        )

    @property
    def nseg(self) -> int:
        return len(self.length)

    def _cases(self, x: Val) -> list[Cond]:
        # segment j (j >= 1) holds x if it is active and x >= its start (later ones win)
        return [bv.and_(self.active[j], arch.ge(x, self.start[j])) for j in range(1, self.nseg)]

    def seg(self, x: Val) -> Seg:
        """The segment holding array index ``x`` (meaningful for ``x < count``)."""
        sel = Seg(
            off=self.off[0],
            start=self.start[0],
            end=self.start[0] + self.length[0],
            chain_end=self.chain_end[0],
        )
        for j, c in enumerate(self._cases(x), 1):
            sel = Seg(
                off=bv.ite(c, self.off[j], sel.off),
                start=bv.ite(c, self.start[j], sel.start),
                end=bv.ite(c, self.start[j] + self.length[j], sel.end),
                chain_end=bv.ite(c, self.chain_end[j], sel.chain_end),
            )
        return sel

    def pfn_at(self, x: Val) -> Val:
        """``page_to_pfn(pages[x])``."""
        return self.seg(x).pfn(x)


@frozen(kw_only=True, eq=False)
class RunArray:
    """``pages[]`` of any length and any number of runs (the cell of bound :data:`ANY`).

    vmap: ``page_to_pfn(pages[i]) = off(i) + i`` (36-bit) for an uninterpreted ``off``, and
    the end of the physically contiguous run from ``pages[i]`` is an uninterpreted
    ``run_end(i)``, clamped into ``(i, N]``.  By definition of ``run_end``, ``off`` is the
    same at every index of ``[i, run_end(i))`` (:meth:`run_def`): the lemmas state that
    definition at the indices they name.  Any array is one such pair of functions, so a
    query over them covers every array of every length (N < 2^31) and every number of runs.

    vmalloc: chunk ``c`` (pages ``[c << o, (c + 1) << o)``, ``o = shift - 12``) maps pfns
    ``(base(c) << o) + (i & (2^o - 1))`` for an uninterpreted ``base``: every chunk is
    contiguous and aligned to its size by construction (P3), any number of chunks.
    """

    path: str
    count: Val
    #: vmap: index -> pfn offset; vmalloc: chunk index -> chunk pfn >> o
    off_fn: z3.FuncDeclRef
    #: vmap: index -> end of its run (before the clamp); vmalloc: None
    end_fn: z3.FuncDeclRef | None
    #: vmalloc: the chunk order o = shift - 12 (0, 4 or 9); vmap: None
    chunk_order: Val | None = None
    #: every index term the model read the array at (a solver model's values there are
    #: what a counterexample's concrete array keeps: :func:`equiv.vmap.counterexample.read_case`)
    reads: dict[int, Val] = field(factory=dict)

    nseg = 0  # no segment variables (the bounded cells' PageArray has them)

    def run_end(self, x: Val) -> Val:
        """The end of the run from ``pages[x]``, in ``(x, N]`` (for ``x < N``)."""
        assert self.end_fn is not None
        e: Val = self.end_fn(x)
        return bv.ite(bv.ule(e, x), x + 1, bv.ite(bv.ult(self.count, e), self.count, e))

    def _chunk(self, x: Val) -> tuple[Val, Val]:
        """vmalloc: (first pfn of x's chunk, first index of x's chunk)."""
        o = self.chunk_order
        assert o is not None
        first: Val = bv.const_like(x, 0, PFN_BITS)
        start: Val = x
        for k in (arch.CONT_PTE_SHIFT - arch.PAGE_SHIFT, arch.PMD_SHIFT - arch.PAGE_SHIFT):
            c = z3.LShR(x, k)
            first = bv.ite(bv.eq(o, k), bv.zext(self.off_fn(c), PFN_BITS) << k, first)
            start = bv.ite(bv.eq(o, k), c << k, start)
        first = bv.ite(bv.eq(o, 0), self.off_fn(x), first)
        return first, start

    def seg(self, x: Val) -> Seg:
        """The run (vmap) or chunk (vmalloc) holding index ``x``, as a :class:`Seg`."""
        if self.path == "vmalloc":
            first, start = self._chunk(x)
            o = self.chunk_order
            assert o is not None
            end = start + bv.pow2(o, IDX_BITS, MAX_SEG_ORDER)
            return Seg(off=first - bv.zext(start, PFN_BITS), start=start, end=end, chain_end=end)
        if isinstance(x, z3.ExprRef):
            self.reads.setdefault(x.get_id(), x)
        end = self.run_end(x)
        return Seg(off=self.off_fn(x), start=x, end=end, chain_end=end)

    def pfn_at(self, x: Val) -> Val:
        """``page_to_pfn(pages[x])``."""
        return self.seg(x).pfn(x)

    def run_def(self, i: Val, u: Val) -> Cond:
        """The definition of ``run_end`` at (i, u): an index u of the run from ``pages[i]``
        has the same offset (vmap; vmalloc: true by construction)."""
        if self.path == "vmalloc":
            return True
        return bv.implies(
            bv.and_(bv.ule(i, u), bv.ult(u, self.run_end(i)), bv.ult(u, self.count)),
            bv.eq(self.off_fn(u), self.off_fn(i)),
        )

    def mention(self) -> list[z3.ExprRef]:
        """Terms to declare in every query (so that a model can be read at any index)."""
        zero = z3.BitVecVal(0, IDX_BITS)
        out: list[z3.ExprRef] = [self.off_fn(zero)]
        if self.end_fn is not None:
            out.append(self.end_fn(zero))
        if isinstance(self.count, z3.ExprRef):
            out.append(self.count)
        return out


Pages = PageArray | RunArray


@frozen(kw_only=True, eq=False)
class Oracles:
    """S0 and the shared oracles (P1, P4), as functions of a table slot index.

    Slot indices: pgd ``vpn >> 27`` (9 bits), pud ``vpn >> 18`` (18 bits), pmd ``vpn >> 9``
    (27 bits).  ``ffs0`` is the value ``__ffs(0)`` yields (undefined behaviour: unconstrained
    in 0..63), by array index of the batching step that evaluates it.
    """

    pgd_table: Oracle
    pud_table: Oracle
    pmd_table: Oracle
    trylock_pud: Oracle
    trylock_pmd: Oracle
    ffs0: Callable[[Val], Val]


@frozen(kw_only=True, eq=False)
class VmapInputs:
    """Everything one path reads.  ``shift`` is vmalloc's page_shift (12 for the others)."""

    path: str
    a: Val = field(validator=_width(VPN_BITS))
    prot: Val = field(validator=_width(arch.ENTRY_BITS))
    pages: Pages
    shift: Val = field(validator=_width(SHIFT_BITS))
    oracles: Oracles
    bound: int

    @property
    def unbounded(self) -> bool:
        """The page array has any number of segments (:class:`RunArray`)."""
        return isinstance(self.pages, RunArray)

    @property
    def count(self) -> Val:
        return self.pages.count

    @property
    def end(self) -> Val:
        """``a + N`` (virtual page number of the end of the range)."""
        return self.a + bv.zext(self.count, VPN_BITS)

    @property
    def max_count(self) -> int:
        """The largest N the assumptions allow (sizes the bit-vector helpers)."""
        if self.unbounded:
            return MAX_SEGMENTS
        if self.path == "vmap":
            return self.bound << MAX_SEG_ORDER
        if self.path == "vmalloc":
            return self.bound << (arch.PMD_SHIFT - arch.PAGE_SHIFT)
        return (1 << IDX_BITS) - 1


def symbolic_inputs(path: str, bound: int) -> VmapInputs:
    """Fresh symbolic inputs for ``path`` with up to ``bound`` segments (ioremap: one segment
    of any length, whatever the bound; :data:`ANY`: a :class:`RunArray`)."""
    nseg = 1 if path == "ioremap" else bound
    shift = (
        z3.BitVec("vmalloc.shift", SHIFT_BITS)
        if path == "vmalloc"
        else z3.BitVecVal(arch.PAGE_SHIFT, SHIFT_BITS)
    )
    oracles = _oracles()
    a = z3.BitVec("va.start_vpn", VPN_BITS)
    prot = z3.BitVec("prot", arch.ENTRY_BITS)
    if is_any(bound) and path != "ioremap":
        vmalloc = path == "vmalloc"
        idx = z3.BitVecSort(IDX_BITS)
        runs = RunArray(
            path=path,
            count=z3.BitVec("pages.count", IDX_BITS),
            off_fn=z3.Function("pages.chunk_pfn" if vmalloc else "pages.off", idx, z3.BitVecSort(PFN_BITS)),
            end_fn=None if vmalloc else z3.Function("pages.run_end", idx, idx),
            chunk_order=bv.zext(shift - arch.PAGE_SHIFT, IDX_BITS) if vmalloc else None,
        )
        return VmapInputs(path=path, a=a, prot=prot, pages=runs, shift=shift, oracles=oracles, bound=bound)
    active: list[Cond] = []
    length: list[Val] = []
    base: list[Val] = []
    order: list[Val] | None = []
    for j in range(nseg):
        active.append(z3.BoolVal(True) if j == 0 else z3.Bool(f"pages.seg{j}.present"))
        base.append(z3.BitVec(f"pages.seg{j}.pfn", PFN_BITS))
        if path == "ioremap":
            length.append(z3.BitVec("ioremap.nr_pages", IDX_BITS))
            order = None
        else:
            k = (shift - arch.PAGE_SHIFT) if path == "vmalloc" else z3.BitVec(f"pages.seg{j}.order", IDX_BITS)
            assert order is not None
            order.append(k)
            length.append(bv.pow2(k, IDX_BITS, MAX_SEG_ORDER))
    pages = PageArray.build(
        tuple(active), tuple(length), tuple(base), None if order is None else tuple(order)
    )
    return VmapInputs(path=path, a=a, prot=prot, pages=pages, shift=shift, oracles=oracles, bound=bound)


def _oracles() -> Oracles:
    """The symbolic S0 and allocation oracles (uninterpreted functions of a slot)."""
    bool_fn = {
        n: z3.Function(f"s0.{n}", z3.BitVecSort(w), z3.BoolSort())
        for n, w in (
            ("pgd_table", 9),
            ("pud_table", 18),
            ("pmd_table", 27),
            ("trylock_pud", 18),
            ("trylock_pmd", 27),
        )
    }
    ffs0 = z3.Function("ub.ffs0", z3.BitVecSort(IDX_BITS), z3.BitVecSort(6))
    return Oracles(
        pgd_table=bool_fn["pgd_table"],
        pud_table=bool_fn["pud_table"],
        pmd_table=bool_fn["pmd_table"],
        trylock_pud=bool_fn["trylock_pud"],
        trylock_pmd=bool_fn["trylock_pmd"],
        ffs0=ffs0,
    )


@frozen
class ConcreteCase:
    """A concrete input, as a reviewer would write it (also what a counterexample holds).

    ``segments`` are ``(order_or_length, pfn)`` pairs: for vmap and vmalloc the first item is
    the order k (2^k pages), for ioremap the number of pages.  ``tables`` lists the slots
    (``("pgd"|"pud"|"pmd", index)``) that hold a table in S0; ``trylock_fails`` the slots
    where ``mmap_read_trylock`` fails; ``ffs0`` what ``__ffs(0)`` yields, by the array index
    of the batching step that evaluates it (default 0).
    """

    path: str
    va: int  # virtual page number of the start
    prot: int
    segments: tuple[tuple[int, int], ...]
    shift: int = arch.PAGE_SHIFT
    tables: frozenset[tuple[str, int]] = frozenset()
    trylock_fails: frozenset[tuple[str, int]] = frozenset()
    ffs0: tuple[tuple[int, int], ...] = ()

    def ffs0_at(self, idx: int) -> int:
        """What ``__ffs(0)`` yields at batching step ``idx``."""
        return dict(self.ffs0).get(idx, 0)

    @property
    def nr_pages(self) -> int:
        if self.path == "ioremap":
            return sum(n for n, _ in self.segments)
        return sum(1 << k for k, _ in self.segments)

    def pfns(self) -> list[int]:
        """``page_to_pfn(pages[i])`` for every i."""
        out: list[int] = []
        for k, b in self.segments:
            n = k if self.path == "ioremap" else 1 << k
            out += [b + j for j in range(n)]
        return out

    def inputs(self, bound: int | None = None) -> VmapInputs:
        """The same input as model values (:class:`CBV`), so the symbolic model runs on it."""
        segs = self.segments
        nseg = len(segs) if bound is None else max(bound, len(segs))
        if self.path == "ioremap":
            nseg = 1
        active = tuple(j < len(segs) for j in range(nseg))
        pad = [(0, 0)] * (nseg - len(segs))
        length: tuple[Val, ...]
        if self.path == "ioremap":
            length = (CBV(segs[0][0], IDX_BITS),)
            order = None
        else:
            length = tuple(CBV(1 << k, IDX_BITS) for k, _ in [*segs, *pad])
            order = tuple(CBV(k, IDX_BITS) for k, _ in [*segs, *pad])
        base = tuple(CBV(b, PFN_BITS) for _, b in [*segs, *pad])
        pages = PageArray.build(active, length, base, order)
        tables, fails = self.tables, self.trylock_fails

        def member(kind: str, pool: frozenset[tuple[str, int]]) -> Oracle:
            return lambda idx: (kind, bv.to_int(idx)) in pool

        oracles = Oracles(
            pgd_table=member("pgd", tables),
            pud_table=member("pud", tables),
            pmd_table=member("pmd", tables),
            trylock_pud=lambda idx: ("pud", bv.to_int(idx)) not in fails,
            trylock_pmd=lambda idx: ("pmd", bv.to_int(idx)) not in fails,
            ffs0=lambda i: CBV(self.ffs0_at(bv.to_int(i)), 6),
        )
        return VmapInputs(
            path=self.path,
            a=CBV(self.va, VPN_BITS),
            prot=CBV(self.prot, arch.ENTRY_BITS),
            pages=pages,
            shift=CBV(self.shift, SHIFT_BITS),
            oracles=oracles,
            bound=nseg,
        )

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ConcreteCase:
        """The inverse of :meth:`to_json` (for cached counterexamples)."""

        def slots(names: list[str]) -> frozenset[tuple[str, int]]:
            return frozenset((s.split("[")[0], int(s.split("[")[1].rstrip("]"), 16)) for s in names)

        key = "nr_pages" if d["path"] == "ioremap" else "order"
        return cls(
            path=d["path"],
            va=(int(d["va"], 16) & ((1 << (VPN_BITS + arch.PAGE_SHIFT)) - 1)) >> arch.PAGE_SHIFT,
            prot=int(d["prot"], 16),
            segments=tuple((int(s[key]), int(s["pfn"], 16)) for s in d["segments"]),
            shift=int(d["shift"]),
            tables=slots(d["s0_tables"]),
            trylock_fails=slots(d["trylock_fails"]),
            ffs0=tuple(sorted((int(i), int(v)) for i, v in d["ffs0"].items())),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "va": hex(arch.kernel_va(self.va)),
            "prot": hex(self.prot),
            "segments": [
                {"order" if self.path != "ioremap" else "nr_pages": k, "pfn": hex(b)}
                for k, b in self.segments
            ],
            "nr_pages": self.nr_pages,
            "shift": self.shift,
            "s0_tables": sorted(f"{k}[{i:#x}]" for k, i in self.tables),
            "trylock_fails": sorted(f"{k}[{i:#x}]" for k, i in self.trylock_fails),
            "ffs0": {str(i): v for i, v in self.ffs0},
        }


def assumptions(inp: VmapInputs) -> list[tuple[str, Cond]]:
    """The named preconditions of a cell (reference §9 P1-P4 and the input shape)."""
    pg, a, n = inp.pages, inp.a, inp.count
    out: list[tuple[str, Cond]] = []
    top = 1 << VPN_BITS
    out.append(
        (
            "range: 1 <= N < 2^31 pages and [va, va + N pages) lies inside the 48-bit VA space",
            bv.and_(
                bv.not_(bv.eq(n, 0)),
                bv.ult(n, 1 << 31),
                bv.ult(
                    bv.zext(a, VPN_BITS + 1) + bv.zext(n, VPN_BITS + 1), bv.const_like(a, top, VPN_BITS + 1)
                ),
            ),
        )
    )
    p = inp.prot
    out.append(
        (
            "prot: a valid page protection (PTE_TYPE_PAGE) without output address or PTE_CONT bits",
            bv.and_(bv.eq(p & arch.OA_MASK, 0), bv.eq(p & arch.PTE_CONT, 0), bv.eq(p & 3, 3)),
        )
    )
    if isinstance(pg, RunArray):
        out += _run_assumptions(inp, pg)
    else:
        out += _segment_assumptions(inp, pg)
    out.append(
        (
            "S0 (P1): no leaf maps a page of the range; entries covering part of it are "
            "none or tables (oracles per slot); P4: allocation outcomes are shared oracles; "
            "POST-C1's mmap_read_trylock (BASE-C has none) as Revision.trylock says",
            True,
        )
    )
    out.append(
        (
            "local model, by the structure of the code (no lemma; the property tests check it "
            "against the twin's loops): the page-table loops visit their range in order "
            "(pXd_addr_end slots; PTE steps advance pte, *nr or pfn, and addr together); a PMD "
            "block of vmap_pages_pmd_range advances *nr by 512 (M3's missing increment is "
            "counted). Every other fact of the local model is a lemma proved in the same run "
            "(docs/vmap-trust.md)",
            True,
        )
    )
    return out


def _segment_assumptions(inp: VmapInputs, pg: PageArray) -> list[tuple[str, Cond]]:
    """The shape of a page array of up to ``inp.bound`` segments."""
    a = inp.a
    out: list[tuple[str, Cond]] = []
    seg_ok: list[Cond] = []
    for j in range(pg.nseg):
        fits = bv.ult(
            bv.zext(pg.base[j], PFN_BITS + 1) + bv.zext(pg.length[j], PFN_BITS + 1),
            bv.const_like(a, 1 << PFN_BITS, PFN_BITS + 1),
        )
        seg_ok.append(bv.implies(pg.active[j], fits))
        if j:
            seg_ok.append(bv.implies(pg.active[j], pg.active[j - 1]))
    out.append(
        (
            "pfns: every segment lies inside the 48-bit PA space; segments are used in "
            "order (P2: every page is a valid page, pfn 0 included)",
            bv.and_(*seg_ok),
        )
    )
    if inp.path == "vmap":
        assert pg.order is not None
        out.append(
            (
                f"vmap page array: 1..{inp.bound} segments, each 2^k contiguous pages at "
                f"any pfn, k in 0..{MAX_SEG_ORDER}",
                bv.and_(*[bv.ule(k, MAX_SEG_ORDER) for k in pg.order]),
            )
        )
    elif inp.path == "vmalloc":
        assert pg.order is not None
        s = inp.shift
        chunk_ok = [bv.is_aligned_dyn(pg.base[j], pg.order[j]) for j in range(pg.nseg)]
        out.append(
            (
                f"vmalloc (P3): shift in {{12, 16, 21}}; 1..{inp.bound} chunks of "
                "2^(shift-12) contiguous pages, each at a pfn aligned to its size; va "
                "aligned to 1 << shift",
                bv.and_(
                    bv.or_(*[bv.eq(s, v) for v in VMALLOC_SHIFTS]),
                    bv.is_aligned_dyn(a, pg.order[0]),
                    *chunk_ok,
                ),
            )
        )
    else:
        out.append(
            (
                "ioremap: one physically contiguous range of N < 2^32 pages at any page-aligned va and phys",
                True,
            )
        )
    return out


def _run_assumptions(inp: VmapInputs, pg: RunArray) -> list[tuple[str, Cond]]:
    """The shape of a page array of any number of runs (:class:`RunArray`)."""
    if inp.path == "vmap":
        return [
            (
                "vmap page array of any length and any number of segments: pages[i] has pfn "
                "off(i) + i for an arbitrary function off (any 36-bit pfns: P2, pfn 0 "
                "included); run_end(i) is any index in (i, N] such that off is the same on "
                "[i, run_end(i)) (the end of pages[i]'s physically contiguous run is one; "
                "stated at the indices the lemmas name)",
                True,
            )
        ]
    o = pg.chunk_order
    assert o is not None
    s = inp.shift
    return [
        (
            "vmalloc (P3) with any number of chunks: shift in {12, 16, 21}; N a multiple of "
            "2^(shift-12); chunk c maps 2^(shift-12) contiguous pages from an arbitrary pfn "
            "aligned to its size; va aligned to 1 << shift",
            bv.and_(
                bv.or_(*[bv.eq(s, v) for v in VMALLOC_SHIFTS]),
                bv.is_aligned_dyn(inp.a, o),
                bv.is_aligned_dyn(pg.count, o),
            ),
        )
    ]

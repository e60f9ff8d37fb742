"""The conditional operator, initialiser lists, compound literals and loops to ``>``,
``>=`` and ``!=`` bounds or counting down in the C interpreter
(:mod:`equiv.zone_device.source.cexpr`, :mod:`equiv.zone_device.source.csummary`), each on
small C of its own (the small ``struct page`` of ``test_cstmt``), run concretely where C's
answer is known and, for forks and summaries, symbolically with the summary's lemmas
decided.  Quick: no kernel tree.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest
import z3
from test_cstmt import _bytes, _num, _page, _run, _symbolic, _ul, _valid

from equiv.zone_device.source.cexpr import AGGREGATE_INIT, ATOMIC_INIT
from equiv.zone_device.source.cinterp import TRUSTED, CInt, InterpError, Ptr
from equiv.zone_device.source.clemmas import check_lemmas

#: byte offsets of the small struct page's members
FLAGS, LRU, MAPPING, INDEX, PRIVATE, MAPCOUNT, REFCOUNT, EXTRA = 0, 8, 24, 32, 40, 48, 52, 56


def _field(page: int, off: int, size: int = 8) -> int:
    return (page >> (8 * off)) & ((1 << (8 * size)) - 1)


class TestConditional:
    CODE = """
static inline unsigned long t_max(unsigned long a, unsigned long b)
{
	return a > b ? a : b;
}

static inline unsigned long t_elvis(unsigned long a, unsigned long b)
{
	return a ?: b;
}

static inline unsigned long t_only_one_arm(unsigned long a)
{
	unsigned long n = 0;

	n = a ? (n += 5) : (n += 7);
	return n;
}

static inline void t_pick(struct page *p, struct page *q, unsigned long c)
{
	struct page t;

	t.index = 99;
	memcpy(p, c ? q : &t, sizeof(*p));
}
"""

    def test_values(self, tmp_path: Path) -> None:
        """``a > b ? a : b``; GNU ``a ?: b`` is ``a`` when it is non-zero; only the arm
        selected runs (its side effect alone is seen)."""
        it, st = _run(tmp_path, self.CODE)
        assert [5, 7] == [_num(it.call("t_max", [_ul(a), _ul(b)], st)[1])
                          for a, b in ((5, 3), (2, 7))]
        assert [4, 9] == [_num(it.call("t_elvis", [_ul(a), _ul(9)], st)[1]) for a in (4, 0)]
        assert [5, 7] == [_num(it.call("t_only_one_arm", [_ul(a)], st)[1]) for a in (1, 0)]

    def test_pointers_to_two_objects_fork_the_statement(self, tmp_path: Path) -> None:
        """``c ? q : &t`` points to a struct page or to a struct local: no single term, so
        the statement runs once per arm; the page written is ``q``'s copy on one half of
        the path condition, the local's on the other."""
        it, st, n, assume = _symbolic(tmp_path, self.CODE)
        c = z3.BitVec("c", 64)
        pages = [Ptr("page", "struct page", idx=z3.BitVecVal(x, 64)) for x in (0x10, 0x20)]
        st2, _ = it.call("t_pick", [*pages, CInt(c)], st)
        got = st2.mem.read_any(z3.BitVecVal(0x10, 64), True).bits
        q = st.mem.read_any(z3.BitVecVal(0x20, 64), True).bits
        assert isinstance(got, z3.BitVecRef) and isinstance(q, z3.BitVecRef)
        assert _valid(z3.Implies(c != 0, got == q), assume)
        index = z3.Extract(8 * INDEX + 63, 8 * INDEX, got)
        assert _valid(z3.Implies(c == 0, index == 99), assume)
        del n

    def test_pointers_concretely(self, tmp_path: Path) -> None:
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call("t_pick", [_page(0x10), _page(0x20), _ul(1)], st)
        assert _bytes(st2, 0x10) == _bytes(st, 0x20)
        st3, _ = it.call("t_pick", [_page(0x10), _page(0x20), _ul(0)], st)
        assert _field(_bytes(st3, 0x10), INDEX) == 99


class TestInitialisers:
    #: include/linux/types.h's ATOMIC_INIT, which the tree's files read define
    ATOMIC = "#define ATOMIC_INIT(i) { (i) }\n"
    CODE = ATOMIC + """
static inline void t_literal(struct page *page, unsigned long x)
{
	*page = (struct page){ .flags = x, ._refcount = ATOMIC_INIT(1),
				._mapcount = { -1 }, .lru.next = NULL };
}

static inline void t_reads_before(struct page *page)
{
	*page = (struct page){ .index = page->index + 1 };
}

static inline void t_declared(struct page *page)
{
	struct page t = { .private = 7, .lru = { .prev = 0 } };
	struct page z = { 0 };
	struct page e = { };

	t.extra = z.extra + e.extra;
	*page = t;
}

static inline void t_overlap(struct page *page)
{
	*page = (struct page){ .lru.next = 0, .lru = { .prev = 0 } };
}

static inline void t_positional(struct page *page)
{
	*page = (struct page){ 1, };
}

static inline void t_atomic(struct page *page)
{
	atomic_t a = ATOMIC_INIT(5);

	page->_refcount = a;
}
"""

    def test_compound_literal(self, tmp_path: Path) -> None:
        """Named members take their values (``ATOMIC_INIT(1)`` and ``{ -1 }`` into an
        ``atomic_t``), every other byte zero, padding included; the run says so."""
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call("t_literal", [_page(0x10), _ul(0xABCD)], st)
        got = _bytes(st2, 0x10)
        want = 0xABCD | (0xFFFFFFFF << (8 * MAPCOUNT)) | (1 << (8 * REFCOUNT))
        assert got == want
        assert {AGGREGATE_INIT} <= it.trusted_used <= set(TRUSTED)
        assert ATOMIC_INIT in it.interpreted and ATOMIC_INIT not in TRUSTED

    def test_initialisers_read_the_object_as_it_was(self, tmp_path: Path) -> None:
        """``*page = (struct page){ .index = page->index + 1 }`` reads ``page->index``
        before the assignment (C11 6.5.2.5: the literal is an object of its own)."""
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call("t_reads_before", [_page(0x10)], st)
        assert _bytes(st2, 0x10) == (_field(_bytes(st, 0x10), INDEX) + 1) << (8 * INDEX)

    def test_declarations(self, tmp_path: Path) -> None:
        """``struct page t = { .private = 7 }``, ``{ 0 }`` and ``{ }``: the rest zero."""
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call("t_declared", [_page(0x10)], st)
        assert _bytes(st2, 0x10) == 7 << (8 * PRIVATE)

    @pytest.mark.parametrize(("fn", "why"), [("t_overlap", "overlaps an earlier one"),
                                             ("t_positional", "positional initialiser")])
    def test_refused(self, tmp_path: Path, fn: str, why: str) -> None:
        """Overlapping designators (a union's other member) and positional initialisers
        other than ``{ 0 }`` stop the run."""
        it, st = _run(tmp_path, self.CODE)
        with pytest.raises(InterpError, match=why):
            it.call(fn, [_page(0x10)], st)

    def test_atomic_init_only_from_the_text(self, tmp_path: Path) -> None:
        """``ATOMIC_INIT`` is expanded from the text that defines it (include/linux/types.h
        in a tree), never trusted: where no file read defines it, the run stops, for a
        member of a compound literal and for an ``atomic_t`` local alike."""
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call("t_literal", [_page(0x10), _ul(3)], st)
        assert _field(_bytes(st2, 0x10), REFCOUNT, 4) == 1
        assert "ATOMIC_INIT" in it.interpreted and ATOMIC_INIT not in it.trusted_used
        it, st = _run(tmp_path, self.CODE.removeprefix(self.ATOMIC))
        with pytest.raises(InterpError, match="ATOMIC_INIT is not defined"):
            it.call("t_literal", [_page(0x10), _ul(3)], st)
        with pytest.raises(InterpError, match="ATOMIC_INIT"):
            it.call("t_atomic", [_page(0x10)], st)

    def test_atomic_init_of_a_local(self, tmp_path: Path) -> None:
        """An atomic_t local (an integer here: its counter, as clang lays atomic_t out)
        initialised by ATOMIC_INIT (its braced body's one member) and assigned to a struct
        page's atomic_t member."""
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call("t_atomic", [_page(0x10)], st)
        assert _field(_bytes(st2, 0x10), REFCOUNT, 4) == 5
        assert "ATOMIC_INIT" in it.interpreted


class TestLoopDirections:
    CODE = """
static inline void t_gt(unsigned long base, unsigned long n)
{
	unsigned long pfn;

	for (pfn = base; base + n > pfn; pfn++)
		pfn_to_page(pfn)->index = pfn;
}

static inline void t_ne(unsigned long base, unsigned long n)
{
	unsigned long pfn = base;

	while (pfn != base + n) {
		pfn_to_page(pfn)->index = pfn;
		pfn++;
	}
}

static inline void t_down(unsigned long base, unsigned long n)
{
	unsigned long pfn;

	for (pfn = base + n; pfn > base; pfn--)
		pfn_to_page(pfn - 1)->index = pfn;
}

static inline void t_down_ge(unsigned long base, unsigned long n)
{
	long i;

	for (i = n - 1; i >= 0; i--)
		pfn_to_page(base + i)->index = i;
}

static inline void t_down_forever(unsigned long base, unsigned long n)
{
	unsigned long i;

	for (i = n; i >= 0; i--)
		pfn_to_page(base + i)->index = i;
}

static inline void t_gt_return(unsigned long base, unsigned long n)
{
	unsigned long pfn;

	for (pfn = base; base + n > pfn; pfn++) {
		if (pfn_to_page(pfn)->private) {
			return;
		}
		pfn_to_page(pfn)->index = pfn;
	}
}

static inline void t_ne_step2(unsigned long base, unsigned long n)
{
	unsigned long pfn;

	for (pfn = base; pfn != base + n; pfn += 2)
		pfn_to_page(pfn)->index = pfn;
}
"""

    WANT: ClassVar[dict[str, str]] = {"t_gt": "p", "t_ne": "p", "t_down": "p+1", "t_down_ge": "p-base"}

    @pytest.mark.parametrize("fn", ["t_gt", "t_ne", "t_down", "t_down_ge"])
    def test_concrete(self, tmp_path: Path, fn: str) -> None:
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call(fn, [_ul(0x100), _ul(5)], st)
        for p in range(0xFE, 0x108):
            got = _bytes(st2, p)
            if 0x100 <= p < 0x105:
                want = {"p": p, "p+1": p + 1, "p-base": p - 0x100}[self.WANT[fn]]
                assert _field(got, INDEX) == want, (fn, hex(p))
            else:
                assert got == _bytes(st, p), (fn, hex(p))

    @pytest.mark.parametrize("fn", ["t_gt", "t_ne", "t_down", "t_down_ge"])
    def test_summarised_and_exact(self, tmp_path: Path, fn: str) -> None:
        """``hi > v``, ``v != hi``, ``v > lo`` counting down and a signed index counting
        down to ``>= 0`` are summarised, their lemmas hold, and each page of the range gets
        the value the loop stores, any other keeps its bytes."""
        it, st, n, assume = _symbolic(tmp_path, self.CODE)
        base = z3.BitVec("base", 64)
        st2, _ = it.call(fn, [CInt(base), CInt(n)], st)
        p = z3.BitVec("p", 64)
        got = st2.mem.read_any(p, True).bits  # a summary's lemmas are recorded as it is read
        old = st.mem.read_any(p, True).bits
        assert it.summarised and it.lemmas
        assert "" == check_lemmas(it.lemmas, assume, 30_000)
        assert isinstance(got, z3.BitVecRef) and isinstance(old, z3.BitVecRef)
        index = z3.Extract(8 * INDEX + 63, 8 * INDEX, got)
        want = {"p": p, "p+1": p + 1, "p-base": p - base}[self.WANT[fn]]
        inside = z3.ULT(p - base, n)
        assert _valid(z3.Implies(inside, index == want), assume)
        assert _valid(z3.Implies(z3.Not(inside), got == old), assume)

    @pytest.mark.parametrize("fn", ["t_down_forever", "t_ne_step2"])
    def test_a_loop_that_does_not_end_fails_its_lemma(self, tmp_path: Path, fn: str) -> None:
        """An unsigned index counting down to ``>= 0`` wraps instead of ending; ``!=`` with
        step 2 and an odd distance steps over its bound: the no-wrap lemma fails, so
        nothing built on the summary is PROVED."""
        it, st, n, assume = _symbolic(tmp_path, self.CODE)
        st2, _ = it.call(fn, [CInt(z3.BitVec("base", 64)), CInt(n)], st)
        st2.mem.read_any(z3.BitVec("p", 64), True)  # the lemmas of what is read
        assert check_lemmas(it.lemmas, assume, 30_000).startswith("loop lemma no-wrap")

    def test_an_early_return_names_the_loop(self, tmp_path: Path) -> None:
        """A loop left by ``return`` from a nested block, its bound written first, is
        unrolled up to the bound, then the run stops naming its file:line and the reason
        for the loop's own variable (never a result)."""
        it, st, n, _ = _symbolic(tmp_path, self.CODE)
        with pytest.raises(InterpError, match=r"t.h:\d+: for loop in t_gt_return may run "
                                              r"more than 32 times .*break, return or goto"):
            it.call("t_gt_return", [CInt(z3.BitVec("base", 64)), CInt(n)], st)

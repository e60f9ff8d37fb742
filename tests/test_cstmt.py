"""Ordinary C in the C interpreter (:mod:`equiv.zone_device.source.cstmt`,
:mod:`equiv.zone_device.source.cint`): loops of every kind, ``goto``, early ``return``,
integer conversions, struct copies and struct locals built by helpers, each on small C of
its own, run concretely (the C's answer is known) and, for the loop summaries,
symbolically with the summary's lemmas decided.

The small C holds its own ``struct page`` (64 bytes, the last 4 padding) and the enums the
interpreter reads, so these tests need no kernel tree; the test at the end runs 6.12's
``__init_single_page()`` on a struct page on the stack from the real tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import z3
from test_linux_tree import linux612, tree612  # noqa: F401  (the session fixtures)

from equiv.config import PRESETS
from equiv.engine.bv import CBV
from equiv.linux.ktree import KernelTree, parser
from equiv.memmap import Scenario, concrete_inputs, symbolic_inputs
from equiv.page_model import Layout, PageState
from equiv.zone_device.source.cinterp import TRUSTED, CCond, CInt, Interp, InterpError, Oracle, Ptr, State
from equiv.zone_device.source.cinterp import initial_state as initial
from equiv.zone_device.source.clemmas import check_lemmas
from equiv.zone_device.source.cloops import first_tested, loop_parts
from equiv.zone_device.source.cstmt import STRUCT_COPY
from equiv.zone_device.source.csummary import PEEL
from equiv.zone_device.source.ctyped import TypedTree
from equiv.zone_device.source.fidelity import MODELS, setup
from equiv.zone_device.source.files import FILES, macro_env

CFG = PRESETS["x86_64-default"]
PSIZE = 64

PRELUDE = """
typedef struct { int counter; } atomic_t;
typedef _Bool bool;
struct list_head {
	struct list_head *next, *prev;
};

enum memory_type {
	MEMORY_DEVICE_PRIVATE = 1,
	MEMORY_DEVICE_COHERENT,
};

enum pageflags {
	PG_locked,
	PG_head,
	PG_reserved,
};

struct page {
	unsigned long flags;
	struct list_head lru;
	void *mapping;
	unsigned long index;
	unsigned long private;
	atomic_t _mapcount;
	atomic_t _refcount;
	unsigned int extra;
};

struct folio {
	struct page page;
	struct page __page_1;
};
"""


def _pattern(pfn: int) -> int:
    """The initial bytes of the struct page of ``pfn``: every byte distinct per pfn."""
    return int.from_bytes(bytes((pfn * 7 + i) & 0xFF for i in range(PSIZE)), "little")


def _tree(tmp: Path, code: str) -> KernelTree:
    (tmp / "t.h").write_text(PRELUDE + code)
    return KernelTree.load(tmp, ["t.h"])


def _run(tmp: Path, code: str) -> tuple[Interp, State]:
    """A concrete interpreter over the small C ``code`` and the state before it runs."""
    tree = _tree(tmp, code)
    env = macro_env(CFG)
    layout = Layout.from_config(CFG)
    inp = concrete_inputs(layout, start_pfn=0x1000, nr_pages=64)
    it = Interp(tree, env, TypedTree.standalone(tmp, "t.h"), Scenario(layout, None, 0), inp, None)
    assert it.psize == PSIZE
    return it, initial(inp, lambda pfn: PageState(bits=CBV(_pattern(int(pfn)), 8 * PSIZE),
                                                  origin=((),) * PSIZE), it.canon)


def _num(v: object) -> int:
    if isinstance(v, CCond):
        return int(bool(v.c))
    assert isinstance(v, CInt) and isinstance(v.v, CBV), v
    return v.v.value


def _signed(v: object) -> int:
    n = _num(v)
    return n - (1 << 64) if n >> 63 else n


def _ul(n: int) -> CInt:
    return CInt(CBV(n % (1 << 64), 64))


def _int(n: int) -> CInt:
    return CInt(CBV(n % (1 << 64), 64), True, 32)


def _page(pfn: int) -> Ptr:
    return Ptr("page", "struct page", idx=CBV(pfn, 64), off=0)


def _bytes(st: State, pfn: int) -> int:
    return int(st.mem.read(CBV(pfn, 64)).bits)


class TestLoops:
    CODE = """
static inline unsigned long t_while(unsigned long n)
{
	unsigned long i = 0, s = 0;

	while (i < n) {
		s += i;
		i++;
	}
	return s;
}

static inline int t_do(int n)
{
	int c = 0;

	do {
		c++;
	} while (c < n);
	return c;
}

static inline unsigned long t_do_continue(unsigned long n)
{
	unsigned long i = 0, s = 0;

	do {
		i++;
		if (i == 2)
			continue;
		if (i == 5)
			break;
		s += i;
	} while (i < n);
	return s;
}

static inline unsigned long t_while_pre(unsigned long n)
{
	unsigned long i = 0, s = 0;

	while (++i < n)
		s += i;
	return s;
}

static inline int t_for_int(unsigned long n, int lo)
{
	int c = 0;

	for (int i = lo; i < n; i++)
		c++;
	return c;
}

static inline int t_for_scope(void)
{
	int i = 7, c = 0;

	for (int i = 0; i < 3; i++)
		c += i;
	return i * 100 + c;
}

static inline unsigned long t_for_uchar(void)
{
	unsigned long c = 0;
	unsigned char k;

	for (k = 250; k != 4; k++)
		c++;
	return c;
}
"""

    def test_while_and_do(self, tmp_path: Path) -> None:
        """``while`` tests first; ``do`` runs its body once before its first test;
        ``continue`` in a ``do`` goes to the test, ``break`` leaves (C11 6.8.5, 6.8.6.2)."""
        it, st = _run(tmp_path, self.CODE)
        assert [0, 0, 10] == [_num(it.call("t_while", [_ul(n)], st)[1]) for n in (0, 1, 5)]
        assert [1, 1, 3] == [_num(it.call("t_do", [_int(n)], st)[1]) for n in (-1, 0, 3)]
        assert [1, 1 + 3, 1 + 3 + 4] == [_num(it.call("t_do_continue", [_ul(n)], st)[1])
                                         for n in (1, 3, 9)]
        assert [0, 0, 1 + 2 + 3] == [_num(it.call("t_while_pre", [_ul(n)], st)[1])
                                     for n in (0, 1, 4)]

    def test_an_int_index_against_an_unsigned_long_bound(self, tmp_path: Path) -> None:
        """``for (int i = lo; i < n; i++)``: ``i`` converted to unsigned long in the
        comparison (C11 6.3.1.8), so a negative ``lo`` is huge and the loop never runs."""
        it, st = _run(tmp_path, self.CODE)
        for n, lo, want in ((5, 2, 3), (5, -1, 0), (0, 0, 0)):
            got = it.call("t_for_int", [_ul(n), _int(lo)], st)[1]
            assert want == _num(got), (n, lo)

    def test_a_for_declaration_is_scoped_to_the_loop(self, tmp_path: Path) -> None:
        """The ``i`` a ``for`` declares hides the outer ``i`` only in the loop (6.8.5p5);
        an ``unsigned char`` index wraps at 256 (6.3.1.3)."""
        it, st = _run(tmp_path, self.CODE)
        assert 700 + 3 == _num(it.call("t_for_scope", [], st)[1])
        assert 10 == _num(it.call("t_for_uchar", [], st)[1])


class TestConversions:
    CODE = """
static inline int t_int_vs_uint(void)
{
	int a = -1;
	unsigned int b = 1;

	return a < b;
}

static inline int t_long_vs_uint(void)
{
	long a = -1;
	unsigned int b = 1;

	return a < b;
}

static inline int t_int_wraps(void)
{
	int x = 2147483647;

	x++;
	return x < 0;
}

static inline unsigned long t_uchar_wraps(void)
{
	unsigned char c = 255;

	c++;
	return c;
}

static inline int t_literals(void)
{
	return (-1 < 0) * 100 + (-1 < 0u) * 10 + (0xffffffff > 0);
}

static inline unsigned long t_int_shift(void)
{
	return (1 << 31) + 0UL;
}

static inline int t_values(void)
{
	int i = 0, a, b;
	unsigned char c;

	a = ++i;
	b = i++;
	return a * 1000 + b * 100 + (c = 300);
}
"""

    def test_usual_arithmetic_conversions(self, tmp_path: Path) -> None:
        """``int < unsigned int`` compares as unsigned int (-1 is UINT_MAX), ``long <
        unsigned int`` as long (C11 6.3.1.8); integer constants have C's types
        (6.4.4.1: ``0u`` unsigned, ``0xffffffff`` unsigned int)."""
        it, st = _run(tmp_path, self.CODE)
        assert 0 == _num(it.call("t_int_vs_uint", [], st)[1])
        assert 1 == _num(it.call("t_long_vs_uint", [], st)[1])
        assert 101 == _num(it.call("t_literals", [], st)[1])

    def test_arithmetic_wraps_in_its_type(self, tmp_path: Path) -> None:
        """``int`` arithmetic wraps at 32 bits (the kernel's -fno-strict-overflow),
        ``unsigned char`` at 8 after the promotion and conversion back; ``1 << 31`` is an
        int (INT_MIN), sign-extended to unsigned long."""
        it, st = _run(tmp_path, self.CODE)
        assert 1 == _num(it.call("t_int_wraps", [], st)[1])
        assert 0 == _num(it.call("t_uchar_wraps", [], st)[1])
        assert (1 << 64) - (1 << 31) == _num(it.call("t_int_shift", [], st)[1])

    def test_values_of_increments_and_assignments(self, tmp_path: Path) -> None:
        """``++i`` is the new value, ``i++`` the old (6.5.3.1, 6.5.2.4); an assignment's
        value is the stored one, converted (6.5.16p3: ``(c = 300)`` is 44)."""
        it, st = _run(tmp_path, self.CODE)
        assert 1000 + 100 + 44 == _num(it.call("t_values", [], st)[1])


class TestJumps:
    CODE = """
static inline int t_goto(int n)
{
	int r = 1;

	if (n)
		goto out;
	r = 2;
out:
	return r;
}

static inline unsigned long t_goto_out_of_loop(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < 10; i++) {
		if (i == n)
			goto done;
	}
	return 100;
done:
	return i;
}

static inline unsigned long t_goto_next(unsigned long n)
{
	unsigned long i, s = 0;

	for (i = 0; i < n; i++) {
		if (i & 1)
			goto next;
		s += i;
next:
		;
	}
	return s;
}

static inline int t_goto_back(int n)
{
again:
	n++;
	if (n < 3)
		goto again;
	return n;
}

static inline int t_nested_return(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < 8; i++) {
		if (i == n) {
			if (i & 1)
				return 1;
			return 2;
		}
	}
	return 3;
}

static inline int t_shadow(int n)
{
	int r = 0;

	if (n) {
		int r = 5;

		n = r;
	}
	return n;
}
"""

    def test_goto_forward(self, tmp_path: Path) -> None:
        """``goto`` to a later label of the function, out of a loop, and to a label at the
        end of a loop's body (C11 6.8.6.1)."""
        it, st = _run(tmp_path, self.CODE)
        assert [2, 1] == [_num(it.call("t_goto", [_int(n)], st)[1])
                          for n in (0, 1)]
        assert [3, 100] == [_num(it.call("t_goto_out_of_loop", [_ul(n)], st)[1])
                            for n in (3, 20)]
        assert 0 + 2 + 4 == _num(it.call("t_goto_next", [_ul(6)], st)[1])

    def test_goto_backward_is_refused(self, tmp_path: Path) -> None:
        it, st = _run(tmp_path, self.CODE)
        with pytest.raises(InterpError, match=r"t.h:\d+: goto again in t_goto_back: no such "
                                              "label later"):
            it.call("t_goto_back", [_int(0)], st)

    def test_early_return_from_nested_blocks(self, tmp_path: Path) -> None:
        it, st = _run(tmp_path, self.CODE)
        assert [2, 1, 3] == [_num(it.call("t_nested_return", [_ul(n)], st)[1])
                             for n in (0, 3, 9)]

    def test_a_declaration_hiding_another_is_refused(self, tmp_path: Path) -> None:
        it, st = _run(tmp_path, self.CODE)
        with pytest.raises(InterpError, match="r declared where another r is in scope"):
            it.call("t_shadow", [_int(1)], st)


class TestStructCopies:
    CODE = """
static inline void t_assign(struct page *a, struct page *b)
{
	*a = *b;
}

static inline void t_local(struct page *a, struct page *b)
{
	struct page t;

	t = *a;
	t.index = 5;
	*b = t;
}

static inline void t_init(struct page *a, struct page *b)
{
	struct page t = *a;

	b[0] = t;
}

static void t_callee(struct page *dst, struct page v)
{
	v.index = 7;
	*dst = v;
}

static inline void t_by_value(struct page *a, struct page *b)
{
	t_callee(b, *a);
}

static inline void t_wrong_type(struct page *a)
{
	*a = a->lru;
}

static inline void t_pointer(struct page *a)
{
	struct page t;

	t = a;
}

static inline void t_subscript(struct page *a)
{
	a[2].index = 9;
}

static inline void t_zero(struct page *a)
{
	struct page t;
	unsigned long *p = (void *)&t;
	int i;

	for (i = 0; i < 8; i++)
		p[i] = 0;
	t.lru.next = &t.lru;
	*a = t;
}

static inline int t_same(void)
{
	struct page t, u;

	return (&t.lru == &t.lru) * 10 + (&t.lru == &u.lru);
}
"""

    def test_struct_assignment_copies_every_byte(self, tmp_path: Path) -> None:
        """``*a = *b`` copies the 64 bytes, padding included (the last 4 bytes of this
        struct page: 60 bytes of members), with provenance; the source is unchanged; the
        run reports the copy among its trusted models."""
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call("t_assign", [_page(10), _page(11)], st)
        assert _pattern(11) == _bytes(st2, 10) and _pattern(11) == _bytes(st2, 11)
        chain = st2.mem.read(CBV(10, 64)).origin
        assert chain is not None and all("t.h:" in c[-1] for c in chain)
        assert STRUCT_COPY in it.trusted_used and STRUCT_COPY in TRUSTED  # reported

    def test_struct_locals(self, tmp_path: Path) -> None:
        """A struct local assigned from a page, changed, assigned to another; declared
        with an initialiser (C11 6.7.9p13); passed by value (6.5.2.2p7: the callee
        changes its own copy)."""
        it, st = _run(tmp_path, self.CODE)
        index = 32  # offset of index in this struct page
        five = (_pattern(10) & ~(((1 << 64) - 1) << 8 * index)) | (5 << 8 * index)
        assert five == _bytes(it.call("t_local", [_page(10), _page(11)], st)[0], 11)
        assert _pattern(10) == _bytes(it.call("t_init", [_page(10), _page(11)], st)[0], 11)
        st2, _ = it.call("t_by_value", [_page(10), _page(11)], st)
        assert five ^ (5 << 8 * index) ^ (7 << 8 * index) == _bytes(st2, 11)
        assert _pattern(10) == _bytes(st2, 10)

    def test_what_is_not_a_struct_copy_is_refused(self, tmp_path: Path) -> None:
        it, st = _run(tmp_path, self.CODE)
        with pytest.raises(InterpError, match="struct assignment of a struct list_head"):
            it.call("t_wrong_type", [_page(10)], st)
        with pytest.raises(InterpError, match="a is not a struct"):
            it.call("t_pointer", [_page(10)], st)

    def test_subscripts_step_by_the_element(self, tmp_path: Path) -> None:
        """``a[2]`` of a struct page pointer is the struct page two after (C11 6.5.2.1);
        ``p[i]`` of an ``unsigned long *`` into a struct local, its i-th word."""
        it, st = _run(tmp_path, self.CODE)
        st2, _ = it.call("t_subscript", [_page(10)], st)
        assert 9 == (_bytes(st2, 12) >> 8 * 32) & ((1 << 64) - 1)
        assert _pattern(10) == _bytes(st2, 10)
        st3, _ = it.call("t_zero", [_page(10)], st)
        slot = next(k for k in st3.stack if k.startswith("t_zero.t@"))
        assert (int(it.local_addr(slot)) + 8) << 64 == _bytes(st3, 10)

    def test_pointers_to_struct_locals_compare_by_object(self, tmp_path: Path) -> None:
        it, st = _run(tmp_path, self.CODE)
        assert 10 == _num(it.call("t_same", [], st)[1])


def _symbolic(tmp: Path, code: str, n_max: int = 1000
              ) -> tuple[Interp, State, z3.BitVecRef, list[z3.BoolRef]]:
    """A symbolic interpreter that summarises loops, over ``code``, with a symbolic ``n``
    of at most ``n_max``, a symbolic ``base`` below 2**40 and symbolic struct pages."""
    tree = _tree(tmp, code)
    env = macro_env(CFG)
    layout = Layout.from_config(CFG)
    inp, _ = symbolic_inputs(layout)
    n = z3.BitVec("n", 64)
    assume = [z3.ULE(n, n_max), z3.ULT(z3.BitVec("base", 64), 1 << 40)]
    it = Interp(tree, env, TypedTree.standalone(tmp, "t.h"), Scenario(layout, None, 0), inp,
                Oracle(assume, timeout_ms=30_000), summarise=True)
    pages = z3.Array("pages", z3.BitVecSort(64), z3.BitVecSort(8 * PSIZE))
    return it, initial(inp, lambda pfn: PageState(bits=z3.Select(pages, pfn)), it.canon), n, \
        assume


def _valid(claim: z3.BoolRef, assume: list[z3.BoolRef]) -> bool:
    s = z3.Solver()
    s.add(*assume, z3.Not(claim))
    return s.check() == z3.unsat


class TestSummaries:
    CODE = """
static inline void t_while(unsigned long base, unsigned long n)
{
	unsigned long pfn = base;

	while (pfn < base + n) {
		pfn_to_page(pfn)->index = pfn;
		pfn++;
	}
}

static inline void t_do(unsigned long base, unsigned long n)
{
	unsigned long pfn = base;

	if (!n)
		return;
	do {
		pfn_to_page(pfn)->index = pfn;
	} while (++pfn < base + n);
}

static inline void t_int(unsigned long base, unsigned long n)
{
	for (int i = 0; i < n; i++)
		pfn_to_page(base + i)->index = i;
}

static inline void t_break(unsigned long base, unsigned long n)
{
	unsigned long pfn = base;

	while (pfn < base + n) {
		if (pfn_to_page(pfn)->private)
			break;
		pfn_to_page(pfn)->index = pfn;
		pfn++;
	}
}
"""

    @pytest.mark.parametrize("fn", ["t_while", "t_do", "t_int"])
    def test_summarised_and_exact(self, tmp_path: Path, fn: str) -> None:
        """``while`` with its step last in the body, ``do`` stepping in its condition
        (``++pfn < end``) and a ``for`` over an ``int`` index are summarised, their lemmas
        hold, and every page of the range gets its index, any other keeps its bytes.
        (A summary records its lemmas when its memory is first read: the page is read
        first.)"""
        it, st, n, assume = _symbolic(tmp_path, self.CODE)
        base = z3.BitVec("base", 64)
        st2, _ = it.call(fn, [CInt(base), CInt(n)], st)
        p = z3.BitVec("p", 64)
        got = st2.mem.read_any(p, True).bits
        old = st.mem.read_any(p, True).bits
        assert it.summarised and it.lemmas
        assert "" == check_lemmas(it.lemmas, assume, 30_000)
        assert isinstance(got, z3.BitVecRef) and isinstance(old, z3.BitVecRef)
        index = z3.Extract(8 * 32 + 63, 8 * 32, got)
        want = p - base if fn == "t_int" else p
        inside = z3.ULT(p - base, n)
        assert _valid(z3.Implies(inside, index == want), assume)
        assert _valid(z3.Implies(z3.Not(inside), got == old), assume)

    def test_an_int_index_that_may_wrap_fails_its_lemma(self, tmp_path: Path) -> None:
        """With ``n`` up to 2**40 the ``int`` index would pass INT_MAX: the no-wrap lemma
        fails, so nothing built on the summary is PROVED."""
        it, st, n, assume = _symbolic(tmp_path, self.CODE, 1 << 40)
        base = z3.BitVec("base", 64)
        st2, _ = it.call("t_int", [CInt(base), CInt(n)], st)
        st2.mem.read_any(z3.BitVec("p", 64), True)  # (the summary's lemmas, recorded)
        assert check_lemmas(it.lemmas, assume, 30_000).startswith("loop lemma no-wrap")

    PEELED = """
static inline void t_first_writes_next(unsigned long base, unsigned long n)
{
	unsigned long pfn;

	for (pfn = base; pfn < base + n; pfn++) {
		pfn_to_page(pfn)->index = pfn;
		if (pfn == base)
			pfn_to_page(base + 1)->private = 7;
	}
}

static inline void t_reads_around(unsigned long base, unsigned long n)
{
	unsigned long pfn;

	for (pfn = base; pfn < base + n; pfn++)
		pfn_to_page(pfn)->private =
			pfn_to_page(base - 1)->index + pfn_to_page(pfn + 1)->index;
}

static inline void t_reads_back(unsigned long base, unsigned long n)
{
	unsigned long pfn;

	for (pfn = base; pfn < base + n; pfn++) {
		if (pfn == base + 1)
			pfn_to_page(pfn)->private = pfn_to_page(base)->index;
		pfn_to_page(pfn)->index = pfn;
	}
}

static inline void t_reads_back_down(unsigned long base, unsigned long n)
{
	unsigned long pfn;

	for (pfn = base + n; pfn > base; pfn--) {
		if (pfn < base + n - 1)
			pfn_to_page(pfn - 1)->private = pfn_to_page(pfn)->private + 1;
		else
			pfn_to_page(pfn - 1)->private = 0;
	}
}
"""

    @pytest.mark.parametrize(("fn", "peeled"), [("t_while", 0), ("t_do", 1),
                                                ("t_first_writes_next", 1)])
    def test_a_loop_peels_as_few_iterations_as_its_summary_follows(
            self, tmp_path: Path, fn: str, peeled: int) -> None:
        """A symbolic run summarises a loop from its first iteration where it can; a ``do``
        loop after one (its first runs without the test); a loop whose first iteration
        writes the next one's page after one (the summary from iteration 0 stops the run,
        and is dropped with what it recorded); and the summary is exact."""
        it, st, n, assume = _symbolic(tmp_path, self.CODE + self.PEELED)
        base = z3.BitVec("base", 64)
        st2, _ = it.call(fn, [CInt(base), CInt(n)], st)
        assert [peeled] == list(it.peeled.values())
        p = z3.BitVec("p", 64)
        got = st2.mem.read_any(p, True).bits
        assert isinstance(got, z3.BitVecRef)
        assert "" == check_lemmas(it.lemmas, assume, 30_000)
        inside = z3.ULT(p - base, n)
        assert _valid(z3.Implies(inside, z3.Extract(8 * 32 + 63, 8 * 32, got) == p), assume)
        if fn == "t_first_writes_next":
            assert _valid(z3.Implies(z3.UGE(n, 2), z3.Extract(
                8 * 40 + 63, 8 * 40, st2.mem.read_any(base + 1, True).bits) == 7), assume)

    @pytest.mark.parametrize(("loop", "tested"), [
        ("for (pfn = head + 1; pfn < end; pfn++) if (pfn == head+1) f();", True),
        ("for (unsigned long pfn = head + 1; pfn < end; pfn++) { if (head + 1 == pfn) f(); }",
         True),
        ("for (pfn = head + 1; pfn < end; pfn++) if (pfn == head + 2) f();", False),
        ("for (pfn = head + 1; pfn < end; pfn++) if (pfn != head + 1) f();", False),
        ("for (i = head + 1; pfn < end; pfn++) if (pfn == head + 1) f();", False),
        ("while (pfn < end) { if (pfn == head + 1) f(); pfn++; }", False),
    ])
    def test_a_loop_that_tests_for_its_first_value(self, loop: str, tested: bool) -> None:
        """:func:`first_tested`: ``for (v = e; ...)`` whose body tests ``v == e`` (either
        way round, spaces aside) runs its first iteration as written before any summary;
        another value, another test, another variable or no ``for`` initialiser do not."""
        src = f"void g(void) {{ {loop} }}".encode()
        body = parser().parse(src).root_node.children[0].child_by_field_name("body")
        assert body is not None
        node = body.named_children[0]
        assert tested == first_tested(src, loop_parts(node), "pfn")

    def test_reads_of_pages_no_earlier_iteration_wrote_are_in_its_frame(self, tmp_path: Path
                                                                         ) -> None:
        """Each iteration reads the page before the range (no iteration writes it) and the
        next iteration's page (not yet written): the frame-read lemma holds from iteration
        0, and the summary gives every page what the loop as written does."""
        it, st, n, assume = _symbolic(tmp_path, self.CODE + self.PEELED)
        base = z3.BitVec("base", 64)
        st2, _ = it.call("t_reads_around", [CInt(base), CInt(n)], st)
        p = z3.BitVec("p", 64)
        got = st2.mem.read_any(p, True).bits
        assert [0] == list(it.peeled.values())
        assert "" == check_lemmas(it.lemmas, assume, 30_000)

        def index(q: z3.BitVecRef) -> z3.BitVecRef:
            return z3.Extract(8 * 32 + 63, 8 * 32, st.mem.read_any(q, True).bits)

        want = index(base - 1) + index(p + 1)
        assert _valid(z3.Implies(z3.ULT(p - base, n),
                                 z3.Extract(8 * 40 + 63, 8 * 40, got) == want), assume)

    def test_a_summary_from_too_early_an_iteration_fails_its_lemma(self, tmp_path: Path
                                                                   ) -> None:
        """The second iteration reads the page the first wrote (an earlier iteration's
        block): summarised from iteration 0 the loop's frame-read lemma fails (and the
        page's value would be the entry's, not the first iteration's); from iteration
        ``PEEL`` it holds and the page is right.
        (Why a cell whose lemmas fail is proved again with every loop peeled ``PEEL``
        times: ``patchproof._again``, ``fidelity.check_fidelity_cell``.)"""
        for least, why in ((0, "loop lemma frame-read of t.h:"), (PEEL, "")):
            it, st, n, assume = _symbolic(tmp_path, self.CODE + self.PEELED)
            it.peel_least = least
            base = z3.BitVec("base", 64)
            st2, _ = it.call("t_reads_back", [CInt(base), CInt(n)], st)
            private = z3.Extract(8 * 40 + 63, 8 * 40, st2.mem.read_any(base + 1, True).bits)
            assert [least] == list(it.peeled.values())
            assert check_lemmas(it.lemmas, assume, 30_000).startswith(why)
            assert (least == PEEL) == _valid(z3.Implies(z3.UGE(n, 2), private == base), assume)

    def test_a_falling_loop_that_reads_the_block_before_fails_its_lemma(self, tmp_path: Path
                                                                         ) -> None:
        """Counting down, iteration ``k >= 2`` reads the page iteration ``k - 1`` wrote (the
        one above its own, below the first block): an earlier iteration's block, however
        many iterations are peeled (the seeded bug of the falling side of
        ``LoopSummary.earlier``, whose earlier blocks lie above the current one)."""
        for least in (0, PEEL):
            it, st, n, assume = _symbolic(tmp_path, self.CODE + self.PEELED)
            it.peel_least = least
            base = z3.BitVec("base", 64)
            st2, _ = it.call("t_reads_back_down", [CInt(base), CInt(n)], st)
            st2.mem.read_any(z3.BitVec("p", 64), True)  # the lemmas of what is read
            assert it.summarised
            assert check_lemmas(it.lemmas, assume, 30_000).startswith(
                "loop lemma frame-read of t.h:"), least

    def test_a_loop_the_summary_cannot_take_stops_the_run(self, tmp_path: Path) -> None:
        """A loop left by ``break`` is unrolled up to the bound, then the run stops naming
        the loop's file:line and why it was not summarised (never a result)."""
        it, st, n, _ = _symbolic(tmp_path, self.CODE)
        with pytest.raises(InterpError, match=r"t.h:\d+: while loop in t_break may run more "
                                              r"than 32 times .*break, return or goto"):
            it.call("t_break", [CInt(z3.BitVec("base", 64)), CInt(n)], st)


def test_init_single_page_on_the_stack(linux612: Path, tree612: KernelTree,  # noqa: F811
                                       tmp_path: Path) -> None:
    """6.12's ``__init_single_page()`` (mm/mm_init.c) on a struct page on the stack, then
    copied to the memmap, leaves the bytes it leaves when run on the memmap itself, but
    for ``lru`` (``INIT_LIST_HEAD`` stores each object's own address)."""
    files = [*FILES, "t.h"]
    for f in FILES:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(linux612 / f, tmp_path / f)
    (tmp_path / "t.h").write_text(
        "static void t_stack(struct page *page, unsigned long pfn)\n"
        "{\n\tstruct page t;\n\n\t__init_single_page(&t, pfn, ZONE_DEVICE, 1);\n"
        "\t*page = t;\n}\n")
    tree = KernelTree.load(tmp_path, files)
    stp = setup(tree612, CFG, MODELS["v6.12.y"])
    layout = stp.model.layout(Layout.from_config(CFG))
    inp = concrete_inputs(layout, start_pfn=0x1000, nr_pages=64)
    it = Interp(tree, stp.env, stp.typed, Scenario(layout, None, 0), inp, None)
    size = it.psize
    st = initial(inp, lambda pfn: PageState(bits=CBV(_pattern(int(pfn)) % (1 << 8 * size),
                                                     8 * size), origin=((),) * size),
                 it.canon)
    nid = CInt(CBV(1, 64), True, 32)
    zone = CInt(CBV(CFG.ZONE_DEVICE_IDX, 64))
    on_stack, _ = it.call("t_stack", [_page(0x1005), _ul(0x1005)], st)
    in_place, _ = it.call("__init_single_page", [_page(0x1005), _ul(0x1005), zone, nid], st)
    lru = it.structs["page"].member("lru")
    assert lru is not None
    keep = ((1 << 8 * size) - 1) ^ (((1 << 128) - 1) << 8 * lru.offset)
    a, b = _bytes(on_stack, 0x1005), _bytes(in_place, 0x1005)
    assert a & keep == b & keep
    assert "__init_single_page" in it.interpreted
    slot = next(k for k in on_stack.stack if k.startswith("t_stack.t@"))
    stack_lru = int(it.local_addr(slot)) + lru.offset
    assert [stack_lru, stack_lru] == [(a >> 8 * (lru.offset + o)) & ((1 << 64) - 1)
                                      for o in (0, 8)]

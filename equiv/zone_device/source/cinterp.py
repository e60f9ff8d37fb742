"""A small symbolic interpreter for the C of the ZONE_DEVICE memmap initialisation.

It runs kernel functions from a tree's own text (:mod:`equiv.linux.ktree`) over the model's
:class:`~equiv.page_model.PageState` bytes, in either domain of :mod:`equiv.engine.bv` (z3 terms for
proofs, plain integers for replaying a counterexample).  Supported C: declarations,
assignments (``=`` and the compound ``op=``) to locals and to struct fields through
clang's layout of the tree's structs, calls to other interpreted
functions and
function-like macros of the parsed files, ``if``/``else``, ``switch`` with fall-through,
``for``, ``while`` and ``do ... while`` loops, ``goto`` to a later label, ``return`` /
``break`` / ``continue`` from any depth, ``c ? a : b`` (joined by an ``ite``, or forking
the statement when its arms cannot be one value), initialiser lists and compound literals
of a struct (the rest zero; :mod:`equiv.zone_device.source.cexpr`) (loops:
:mod:`equiv.zone_device.source.cstmt`: with
``summarise`` a loop's first few iterations (as few as the summary can follow, at most
:data:`~equiv.zone_device.source.csummary.PEEL`) run as written, the rest summarised from
the C by
:mod:`equiv.zone_device.source.csummary` with its lemmas recorded in
:attr:`Interp.lemmas`; without, or for a loop the summary cannot take: unrolled, and a
loop must end within :data:`~equiv.zone_device.source.cstmt.MAX_TRIPS` iterations on
every feasible path, else the run is refused), integers of their C types with C's
promotions and usual arithmetic conversions (:mod:`equiv.zone_device.source.cint`), casts
(``(void)`` included, and ``(typeof(x))`` of a
variable, macro argument or cast: ``IS_ALIGNED``, ``ALIGN``), ``sizeof`` of a type or of an
expression (clang's value for the ``sizeof`` written there),
``&``/``*``/``->``/``.``/``[]``, GNU statement expressions ``({ ...; e; })``, pointer
differences (struct pages; ``zone_idx``'s into ``pgdat->node_zones``), unsigned ``/`` and ``%``,
struct locals (``struct page template;``: bytes of their own, arbitrary until written, their
address passed to callees, any helper may build one), struct assignment and struct
arguments by value (copies of every byte), ``memcpy``/``memset`` (trusted, byte by byte
with provenance), and preprocessor conditionals resolved by the configuration.  C scopes
end with their block.

A symbolic branch forks the state; states are merged (``ite`` on every differing value) where
the branches join, each selected by what its path condition adds to the shared part
(:func:`join_guards`), so merged values do not nest the path conditions of every earlier join.
Whether a branch is feasible is asked of an *oracle* (a z3 solver holding the assumptions), so
loops with symbolic bounds end where the assumptions end them; a branch the assumptions force
keeps the path condition it had.

Helpers are run from the text wherever there is one: the files read
(:data:`equiv.zone_device.source.files.FILES`: ``INIT_LIST_HEAD`` of include/linux/list.h,
``is_power_of_2``, ``IS_ALIGNED`` / ``ALIGN``, ``pageblock_align``, ``zone_idx``,
``pfn_to_section_nr``, ``ATOMIC_INIT`` of include/linux/types.h, ``WRITE_ONCE`` of
include/asm-generic/rwonce.h as a ``do { ... } while (0)`` statement macro run where it is
used), then the headers clang compiled, read where clang found the definition
(:meth:`Interp.header_definition`: ``atomic_set`` down to the arch's ``arch_atomic_set``);
constants are clang's constant evaluation (:meth:`Interp.constant`).  The rest (no C text:
assembly, token-pasted functions, global variables the model does not hold, or a file not
read) is *trusted*: :data:`TRUSTED` maps each to its model and why, and every run records
which were used (:attr:`Interp.trusted_used`); the helpers run from the text are in
:attr:`Interp.interpreted` with their file:line.

Types: every size, member offset, union view, integer width and signedness, the declared
type of every parameter and local of a function clang typed, and the type a binary operator
computes in are clang's (:class:`~equiv.zone_device.source.ctyped.TypedTree`: the tree's
``mm/mm_init.c`` parsed on one configuration's headers), never read from the declarations
here; a ``sizeof`` clang did not evaluate where it is written stops the run.  What the text
still gives: which function or macro runs, the statements and the expressions' values.

Memory: struct pages are addressed by pfn (``pfn_to_page(pfn)``, SPARSEMEM_VMEMMAP); a page
pointer is ``(pfn, byte offset)``, so ``&folio->_deferred_list`` lands in page ``pfn + 2``.
Its numeric value (stored by ``INIT_LIST_HEAD`` or ``set_compound_head``) is
``vmemmap_base + pfn * sizeof(struct page) + offset``.  Pages are kept per pfn term; two pfn
terms are told apart by simplifying their difference to a constant, and a pair that cannot be
told apart stops the run (:class:`InterpError`), never silently aliases.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from functools import partial
from typing import NoReturn

import z3
from attrs import evolve, frozen

from equiv.engine import bv
from equiv.engine.bv import CBV, Cond, Val
from equiv.engine.errors import InputError
from equiv.linux.ktree import (
    Definition,
    KernelTree,
    Node,
    Preprocessor,
    active_children,
    child,
    parser,
    text,
)
from equiv.linux.skipped import ClangBranches
from equiv.memmap import Inputs, Scenario, storage_pfn
from equiv.page_model import PageState, extend_chain, ite_page, splice
from equiv.zone_device.source import cdefs, cexpr, cint
from equiv.zone_device.source.cint import INT, IntType
from equiv.zone_device.source.cstate import (
    BaseLayer,
    CCond,
    CInt,
    Frame,
    InterpError,
    KeyCanon,
    Lazy,
    Loc,
    MergeLayer,
    Oracle,
    Outcome,
    PageStore,
    Poison,
    Ptr,
    Slot,
    State,
    Value,
    VmemmapFold,
)
from equiv.zone_device.source.cstmt import (
    MAX_TRIPS,
    STRUCT_COPY,
    at_label,
    const_of,
    copy_struct,
    goto,
    is_aggregate,
    new_slot,
    run_loop,
    scoped,
    step_text,
    struct_arg,
    unresolved,
)
from equiv.zone_device.source.csummary import PEEL, CLemma
from equiv.zone_device.source.ctyped import TypedTree
from equiv.zone_device.source.src_layout import source_structs
from equiv.zone_device.source.standins import CHECKED

#: Deepest call nesting.
MAX_DEPTH = 24


# ---- trusted helpers -------------------------------------------------------------------------


@frozen
class Trusted:
    """A helper not interpreted from the text, and its model."""

    name: str
    model: str


#: the trusted key of the calls without effect on memory
NO_EFFECT = "cond_resched, pr_debug, BUILD_BUG_ON, compiletime_assert, VM_BUG_ON*, fallthrough"


def _t(name: str, model: str, why: str) -> tuple[str, Trusted]:
    return name, Trusted(name, f"{model}; not interpreted: {why}")


#: Helpers (functions, macros, variables) and modelling choices taken from the model rather
#: than the tree's text, each with its model and why it is not interpreted.  Everything else
#: runs from the text: the files read (:data:`~equiv.zone_device.source.files.FILES`), the
#: static inline helpers and macros of the headers clang compiled (``atomic_set`` down to
#: the arch's ``arch_atomic_set``: :meth:`Interp.header_definition`), and the constants
#: clang evaluates (:meth:`Interp.constant`).
TRUSTED: dict[str, Trusted] = dict((
    _t("pfn_to_page", "SPARSEMEM_VMEMMAP: vmemmap + pfn (the struct page of pfn)",
       "vmemmap is the global vmemmap_base (placed by KASLR), and struct pages are addressed "
       "by pfn here"),
    _t("__va", "PAGE_OFFSET + address (direct map)",
       "PAGE_OFFSET is the global page_offset_base; reached only under WANT_PAGE_VIRTUAL, "
       "which no .config of a preset sets"),
    _t("__SetPage*", "__set_bit(PG_*, &page->flags): non-atomic OR of the bit "
                     "(bit numbers from the tree's enum pageflags)",
       "page-flags.h's token-pasting PAGEFLAG macros make these functions: no text of "
       "theirs to read"),
    _t("folio_test_large", "test_bit(PG_head, &folio->flags)",
       "its folio_test_head() is made by page-flags.h's FOLIO_FLAG token-pasting macros"),
    _t("__pfn_to_section", "the mem_section of pfn >> PFN_SECTION_SHIFT",
       "the global mem_section array is not modelled"),
    _t("memcpy", "the bytes of the source, in order, each keeping its provenance",
       "the arch string routine (assembly) is not C"),
    _t("memcpy_flushcache", "as memcpy: the same bytes (the store-ordering question is "
                            "--copy-primitive's)", "the arch routine's non-temporal stores"),
    _t("memset", "every byte the fill value", "the arch string routine (assembly) is not C"),
    _t(cexpr.AGGREGATE_INIT, "the bytes an initialiser list or compound literal does not "
       "name are zero, padding included (C11 6.7.9p10/p21 zero the members; GCC clears the "
       "whole object)", "a choice about padding, which C leaves unspecified"),
    _t(STRUCT_COPY, "every byte of the struct copied, padding included, as memcpy of sizeof "
       "would (GCC copies the whole object)",
       "a choice about padding, which C11 6.2.6.1p6 leaves unspecified"),
    _t("early_section", "the symbolic input early_section(section number)",
       "section_mem_map & SECTION_IS_EARLY of the global mem_section array, not modelled"),
    _t("pgmap->*, altmap->*, zone->*, pgdat->*", "input objects: pgmap->type, "
       "->vmemmap_shift (the order), ->flags (PGMAP_ALTMAP_VALID iff altmap valid), "
       "altmap->base_pfn (the range start), ->reserve, ->free, zone->zone_pgdat->node_id "
       "(nid); zone is &zone->zone_pgdat->node_zones[ZONE_DEVICE] (the ZONE_DEVICE zone)",
       "the caller's objects: the inputs of the proof"),
    _t("set_pageblock_migratetype", "UNMOVABLE if grouping by mobility is disabled, "
       "else the migratetype into bits 0..2 (MIGRATETYPE_MASK) of the pageblock bitmap cell "
       "(equiv/zone_device/source/slow_v612y.py)",
       "set_pfnblock_flags_mask()'s try_cmpxchg() loop (inline assembly) on the section's "
       "pageblock bitmap, modelled as one cell per pageblock"),
    _t("init_pageblock_migratetype", "the model's init_pageblock_migratetype on the pageblock "
       "bitmap cell", "its text is the 2026 mm tree's, checked against no tree here"),
    _t("page_folio", "the page itself (after __init_single_page the page is not a tail) [M]",
       "a _Generic over _compound_head(), whose page_fixed_fake_head() tests a static key"),
    _t("kasan_enabled", "true (tag-based KASAN configs only) [M]",
       "a static key under KASAN_HW_TAGS"),
    _t("page_kasan_tag_set", "the KASAN_TAG field of flags := tag ^ 0xff",
       "a try_cmpxchg() loop (inline assembly)"),
    _t(NO_EFFECT, "no effect on memory (compiletime_assert: a check the build makes)",
       "scheduling, printing, compile-time checks and debug-only checks"),
    _t("WARN_ON_ONCE, WARN_ON, unlikely, likely", "the value of the condition",
       "the warning is the arch's bug table (inline assembly); likely() is "
       "__builtin_expect()"),
    _t("jiffies, jiffies_to_msecs", "0 (only printed)",
       "a global variable; kernel/time/time.c is not read"),
))


# ---- the interpreter -----------------------------------------------------------------------


class Interp:
    """Runs functions of one kernel tree for one scenario and one set of inputs."""

    def __init__(self, tree: KernelTree, env: Preprocessor, typed: TypedTree,
                 sc: Scenario, inp: Inputs, oracle: Oracle | None,
                 interpret: frozenset[str] | None = None, *, summarise: bool = False,
                 label: str = "c",
                 stack_init: Callable[[str, int], PageState] | None = None,
                 fold: bool = False, peel: int = PEEL, peel_least: int = 0) -> None:
        self.tree, self.menv, self.sc, self.inp = tree, env, sc, inp
        #: clang's types of the tree: every size, offset, integer type and conversion
        self.clang = typed
        structs = source_structs(typed)
        self.structs = structs
        self.oracle = oracle
        self.symbolic = bv.is_sym(inp.start_pfn)
        self.cfg = sc.layout.config
        self.psize = structs["page"].size
        self.interpreted: dict[str, str] = {}  # function -> file:line
        self.trusted_used: set[str] = set()
        #: the enumerators the stand-ins read (memory types, page flags): clang's values
        self.enums: dict[str, int] = {}
        for e in ("memory_type", "pageflags"):
            self.enums.update(typed.enumerators(e))
        self.depth = 0
        self.canon = KeyCanon(oracle)
        #: restrict which tree functions are interpreted (others must be trusted)
        self.only = interpret
        #: summarise loops (:mod:`equiv.zone_device.source.csummary`) instead of unrolling them
        self.summarise = summarise
        #: iterations of a summarised loop run as written before its summary (a loop that
        #: ends within them needs none: the search over a few compounds runs the loops over
        #: compounds as written and summarises only the loops within a compound)
        self.peel = peel
        #: in the symbolic domain a loop peels as few iterations as its summary can follow,
        #: from this many up to ``peel`` (:func:`~equiv.zone_device.source.cstmt.peeled_summary`;
        #: ``peel`` for exactly that many)
        self.peel_least = peel_least
        #: the fewest iterations each summarised loop ("file:line function") was peeled
        self.peeled: dict[str, int] = {}
        #: names this run's symbols (two trees in one query must not share stack symbols)
        self.label = label
        self._stack_init = stack_init
        #: the loop-summary lemmas this run relies on
        self.lemmas: list[CLemma] = []
        #: loops summarised: "file:line function"
        self.summarised: set[str] = set()
        #: loop summaries made so far (a loop summarised again, in another path or
        #: iteration, counts again)
        self.summaries = 0
        #: the runs of the statements being executed (:func:`~equiv.zone_device.source.cexpr.forking`)
        self.forks: list[cexpr.ForkCtx] = []
        self._ids = 0
        #: with ``fold``, struct pages are stored by their storage under a deduplicated
        #: vmemmap (:class:`~equiv.zone_device.source.cstate.VmemmapFold`); else one per pfn
        self.fold = VmemmapFold(partial(storage_pfn, sc, inp), oracle) if fold else None

    def storage(self, pfn: Val, pc: Cond) -> Val:
        """The storage key of ``pfn_to_page(pfn)`` on the path ``pc``: the pfn itself, or
        where the run folds a deduplicated vmemmap (``fold``) the pfn whose struct page
        shares its storage (:class:`~equiv.zone_device.source.cstate.VmemmapFold`)."""
        return pfn if self.fold is None else self.fold.key(pfn, pc)

    def fresh_id(self) -> int:
        self._ids += 1
        return self._ids

    def stack_init(self, slot: str, size: int) -> PageState:
        """The bytes of a struct local before it is written: arbitrary (one symbol per
        declaration site; a replay takes the counterexample's value).  Held as the bytes
        of a struct page (:class:`~equiv.page_model.PageState`): a struct local of
        another size is not modelled."""
        if size % 8 or not 56 <= size <= 96:
            raise InterpError(f"{slot}: a struct local of {size} bytes is not modelled (one "
                              "the size of a struct page is)")
        if self._stack_init is not None:
            return self._stack_init(f"stack.{self.label}.{slot}", size)
        if self.symbolic:
            return PageState(bits=z3.BitVec(f"stack.{self.label}.{slot}", 8 * size))
        return PageState(bits=CBV(int.from_bytes(b"\xa5" * size, "little"), 8 * size),
                         origin=((),) * size)

    def local_addr(self, slot: str) -> Val:
        """The address of a struct local as a number (stored by ``INIT_LIST_HEAD`` on a
        struct page built on the stack): arbitrary, one 64-bit value per stack slot,
        unrelated to any other address.  It is the low 64 bits of a symbol the size of a
        struct page, so that a replay reads it from the counterexample as it reads a struct
        local's bytes (:meth:`stack_init`).  Distinct objects are told apart by their slots
        where pointers are compared, not by these numbers."""
        name = f"stack.{self.label}.&{slot}"
        if self._stack_init is not None:
            return bv.extract(self._stack_init(name, self.psize).bits, 63, 0)
        if self.symbolic:
            return z3.Extract(63, 0, z3.BitVec(name, 8 * self.psize))
        return CBV(0xFFFFC90000000000 + (zlib.crc32(slot.encode()) & 0xFFFF) * 0x100, 64)

    # -- helpers on values ------------------------------------------------------------------

    def c64(self, v: int) -> Val:
        return bv.const_like(self.inp.start_pfn, v, 64)

    def as_int(self, v: Value) -> Val:
        if isinstance(v, CInt):
            return v.v
        if isinstance(v, CCond):
            return bv.ite(v.c, self.c64(1), self.c64(0))
        if not isinstance(v, Ptr):
            raise InterpError(f"{_what(v)} used as an integer")
        return self.ptr_addr(v)

    def as_cond(self, v: Value) -> Cond:
        if isinstance(v, CCond):
            return v.c
        if isinstance(v, CInt):
            return bv.ne(v.v, self.c64(0))
        if not isinstance(v, Ptr):
            raise InterpError(f"{_what(v)} used as a condition")
        if v.region == "null":
            return False
        if v.region == "obj":
            return v.nonnull
        return True

    def ptr_addr(self, p: Ptr) -> Val:
        if p.region == "null":
            return self.c64(0)
        if p.region == "obj":
            if p.addr is None:
                raise InterpError(f"the address of input object {p.obj} is not modelled")
            return p.addr
        if p.region == "local":
            a = self.local_addr(p.obj)
            return a + p.off if p.off else a
        assert p.idx is not None
        base = self.inp.vmemmap_base
        if self.psize & (self.psize - 1) == 0:
            a = base + (p.idx << bv.ilog2(self.psize))
        else:
            a = base + p.idx * self.psize
        return a + p.off if p.off else a

    def norm(self, idx: Val, off: int) -> tuple[Val, int]:
        q, r = divmod(off, self.psize)
        return (idx + q if q else idx), r

    def convert(self, ctype: str, v: Value) -> Value:
        """C conversion on assignment / parameter passing to ``ctype``."""
        ct = ctype.replace("const ", "").replace("volatile ", "").strip()
        if ct.endswith("*"):
            if isinstance(v, Ptr):
                return evolve(v, ctype=ct[:-1].strip())
            if isinstance(v, CInt) and not bv.is_sym(v.v) and int(v.v) == 0:
                return Ptr("null", ct[:-1].strip())
            if isinstance(v, CInt) and ct.replace(" ", "") == "void*":
                return v  # an address held as a number (``__va(...)`` into ``page->virtual``)
            raise InterpError(f"integer converted to pointer type {ctype}")
        if isinstance(v, Ptr):
            return CInt(self.ptr_addr(v))
        x = self.as_int(v)
        if ct in ("bool", "_Bool"):
            return CCond(bv.ne(x, self.c64(0)))
        to = self.scalar_type(ct)  # atomic_t: its int counter (atomic_t locals are integers)
        if to is None:
            raise InterpError(f"conversion to {ctype}: not an integer type clang knows here")
        return CInt(cint.convert(x, self.int_type_of(v), to), to[1], to[0])

    def int_type_of(self, v: Value) -> IntType:
        """The C type of an integer operand: its own; ``int`` for a truth value (the type
        of a comparison or ``!``, C11 6.5.8p6, 6.5.3.3p5); ``unsigned long`` for a
        pointer's address."""
        if isinstance(v, CInt):
            return v.ctype
        if isinstance(v, CCond):
            return INT
        return cint.UNSIGNED_LONG

    # -- entry points -------------------------------------------------------------------------

    def call(self, name: str, args: list[Value], state: State) -> tuple[State, Value | None]:
        """Call an interpreted (or trusted) function."""
        def given(v: Value) -> Callable[[State], tuple[State, Value]]:
            return lambda st: (st, v)

        return self._call(name, [given(a) for a in args], state, None)

    # -- functions ---------------------------------------------------------------------------

    def _call(self, name: str, args: list[Callable[[State], tuple[State, Value]]], state: State,
              site: tuple[Frame, Node] | None) -> tuple[State, Value | None]:
        trusted = self._trusted(name, args, state, site)
        if trusted is not None:
            return trusted
        d = self.tree.find(name, self.menv, "function")
        m = self.tree.find(name, self.menv, "macro")
        if d is None and m is None:  # a header the files read are not: where clang found it
            h = self.header_definition(name)
            d, m = (h, None) if h is not None and h.kind == "function" else (None, h)
        if d is None and m is None:  # another .c file: its own unit (the linker's join)
            d = self.other_unit_definition(name)
        if d is not None and (self.only is None or name in self.only):
            return self._run_function(d, args, state, site)
        if m is not None and m.node.type == "preproc_function_def" and site is not None:
            return self._expand_macro(m, site, state)
        if m is not None and m.node.type == "preproc_def":  # #define f other_function
            body = m.node.child_by_field_name("value")
            alias = text(m.src, body).strip() if body is not None else ""
            if alias.isidentifier() and alias != name:
                self.interpreted.setdefault(name, m.where)
                return self._call(alias, args, state, site)
        where = f" at {site[0].at(site[1])}" if site else ""
        raise InterpError(f"call to {name}(){where}: not defined in the parsed files and not "
                          "a trusted helper; model it or add its file")

    def other_unit_definition(self, name: str) -> Definition | None:
        """:func:`~equiv.zone_device.source.cdefs.other_unit_definition` of this tree.

        Raises:
            InterpError: two files define it, or one cannot be compiled.
        """
        try:
            return cdefs.other_unit_definition(self.tree, self.menv, self.clang, name)
        except InputError as e:
            raise InterpError(f"call to {name}(): {e}") from None

    def stand_in_checked(self, name: str) -> None:
        """Check that the tree's definitions the stand-in ``name`` paraphrases are a text
        it was checked against, before it is applied
        (:func:`~equiv.zone_device.source.cdefs.stand_in_problem`; once per tree and
        process, and :func:`~equiv.zone_device.source.common.side` asks before workers
        fork).  Only on a kernel tree read as clang compiled it: every run of the C path;
        the interpreter's unit tests over small C files under a hand
        :class:`~equiv.linux.ktree.MacroEnv` have no kernel text to check.

        Raises:
            InterpError: a definition is missing, or their digest is no checked version's
                (the cell is UNKNOWN, naming them).
        """
        if name not in CHECKED or not isinstance(self.menv, ClangBranches):
            return
        problem = cdefs.stand_in_problem(self.tree, self.menv, self.clang, name)
        if problem is not None:
            raise InterpError(problem)

    def header_definition(self, name: str) -> Definition | None:
        """:func:`~equiv.zone_device.source.cdefs.header_definition` of this tree."""
        return cdefs.header_definition(self.clang, name)

    def _run_function(self, d: Definition, args: list[Callable[[State], tuple[State, Value]]],
                      state: State, site: tuple[Frame, Node] | None = None
                      ) -> tuple[State, Value | None]:
        depth = self.depth
        try:  # a statement forked by a conditional leaves a call by an exception
            return self._run_body(d, args, state, site)
        finally:
            self.depth = depth

    def _run_body(self, d: Definition, args: list[Callable[[State], tuple[State, Value]]],
                  state: State, site: tuple[Frame, Node] | None) -> tuple[State, Value | None]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise InterpError(f"call depth over {MAX_DEPTH} at {d.name}")
        self.interpreted.setdefault(d.name, d.where)
        params = self.param_types(d)
        if len(params) != len(args):
            raise InterpError(f"{d.name} at {d.where} takes {len(params)} arguments, "
                              f"called with {len(args)}")
        nodes = child(site[1], "arguments").named_children if site is not None else None
        env: dict[str, tuple[str, Value]] = {}
        for i, ((n, t), a) in enumerate(zip(params, args, strict=True)):
            if is_aggregate(t):  # a struct passed by value: a copy (C11 6.5.2.2p7)
                state, v = struct_arg(self, f"{d.name}.{n}@arg", t, a,
                                      None if nodes is None else nodes[i], site or d.where, state)
            else:
                state, v = a(state)
                v = self.convert(t, v)
            env[n] = (t, v)
        caller_env = state.env
        st = evolve(state, env=env)
        frame = Frame(d.src, d.file, d.name, {})
        body = d.body
        assert body is not None
        out = self.block(frame, body, st)
        unresolved(d.name, d.where, out)
        finals: list[tuple[State, Value | None]] = [(s, None) for s in out.normal] + out.ret
        self.depth -= 1
        if not finals:
            raise InterpError(f"no path through {d.name} is feasible")
        st2, ret = self.merge_returns(finals)
        rt = self.return_type(d)
        if ret is not None and rt is not None:  # as if assigned (C11 6.8.6.4p3)
            ret = self.convert(rt, ret)
        return evolve(st2, env=caller_env), ret

    def _expand_macro(self, m: Definition, site: tuple[Frame, Node],
                      state: State) -> tuple[State, Value | None]:
        frame, call = site
        args = child(call, "arguments").named_children
        params = m.params
        body = m.node.child_by_field_name("value")
        if body is None or len(params) != len(args):
            raise InterpError(f"macro {m.name} at {m.where}: cannot expand")
        self.interpreted.setdefault(m.name, m.where)
        bound = {p: Lazy(a, frame.src, frame) for p, a in zip(params, args, strict=True)}
        if text(m.src, body).lstrip().startswith("{"):  # ATOMIC_INIT(i): { (i) }
            return self._braced_scalar(m, body, bound, state)
        if text(m.src, body).lstrip().startswith("do"):  # WRITE_ONCE: do { ... } while (0)
            return self._statement_macro(m, body, bound, site, state)
        node, src = _parse_expr(text(m.src, body))
        mframe = Frame(src, m.file, m.name, bound, body.start_point[0] + 1, fold=True)
        return self.expr(mframe, node, state)

    def _statement_macro(self, m: Definition, body: Node, bound: dict[str, Lazy],
                         site: tuple[Frame, Node], state: State) -> tuple[State, Value | None]:
        """A macro whose body is a statement (``do { ... } while (0)``: ``WRITE_ONCE`` and
        ``__WRITE_ONCE``, include/asm-generic/rwonce.h) run as that statement where it is
        used, its arguments substituted.  Its lines are the use's (``file:line`` of the
        call, as the compiler's expansion has them), so a store it makes is attributed to
        the line that wrote ``WRITE_ONCE``.

        Raises:
            InterpError: a ``return`` or ``goto`` leaving the macro's statement.
        """
        frame, call = site
        node, src = _parse_stmt(text(m.src, body))
        mframe = Frame(src, frame.file, m.name, bound, frame.first_line + call.start_point[0],
                       fold=True)
        out = self.stmt(mframe, node, state)
        if out.ret or out.goto or not out.normal:
            raise InterpError(f"{frame.at(call)}: macro {m.name} ({m.where}) does not end "
                              "normally (a return or goto out of a statement macro is not "
                              "modelled)")
        return self.merge(out.normal), None

    def _braced_scalar(self, m: Definition, body: Node, bound: dict[str, Lazy],
                       state: State) -> tuple[State, Value]:
        """A macro whose body is a braced initialiser of one member (``ATOMIC_INIT(i)``,
        include/linux/types.h: ``{ (i) }``) used where a value is (``atomic_t v =
        ATOMIC_INIT(i)``: an ``atomic_t`` local is held as its one ``int`` counter, so the
        braces initialise that counter, C11 6.7.9p13/p20): the value of that member.

        Raises:
            InterpError: any other braced body.
        """
        init, src = cexpr.parse_init(text(m.src, body))
        items = cexpr.init_items(init)
        if len(items) != 1 or items[0].type == "initializer_pair":
            raise InterpError(f"macro {m.name} at {m.where}: a braced initialiser of "
                              f"{len(items)} members used as a value")
        mframe = Frame(src, m.file, m.name, bound, body.start_point[0] + 1, fold=True)
        return self.expr(mframe, items[0], state)

    def _object_macro(self, name: str, state: State) -> tuple[State, Value] | None:
        m = self.tree.find(name, self.menv, "macro") or self.header_definition(name)
        if m is None or m.node.type != "preproc_def":
            return None
        body = m.node.child_by_field_name("value")
        if body is None:
            return None
        node, src = _parse_expr(text(m.src, body))
        self.interpreted.setdefault(name, m.where)
        return self.expr(Frame(src, m.file, name, {}, body.start_point[0] + 1), node, state)

    # -- merging ------------------------------------------------------------------------------

    def merge(self, states: list[State]) -> State:
        """One state for states that reach the same point on exclusive paths."""
        return self._merge(states)[0]

    def _merge(self, states: list[State]) -> tuple[State, list[Cond]]:
        if len(states) == 1:
            return states[0], [True]
        pc, pcs = join_guards([s.pc for s in states], self.oracle)
        env: dict[str, tuple[str, Value]] = {}
        for name, (t, _) in states[0].env.items():
            if all(name in s.env for s in states):
                vs = [s.env[name][1] for s in states]
                try:
                    env[name] = (t, self.merge_values(pcs, vs))
                except InterpError:
                    continue  # not mergeable: dead after the join (checked when read)
        base = states[0].mem
        keys: dict[tuple[int, int], Val] = {}
        for st in states:
            for k, _ in st.mem.pages:
                keys.setdefault(base.canon.canon(k), k)
        pages: list[tuple[Val, PageState]] = []
        when: dict[tuple[int, int], Cond] = {}
        for ck, k in keys.items():
            vals = [st.mem.read(k, st.pc) for st in states]
            pages.append((k, self._ite_pages(pcs, vals)))
            wrote: list[Cond] = []
            for st in states:
                i = st.mem.index.get(ck)
                wrote.append(False if i is None else st.mem.when.get(ck, True))
            if not all(w is True for w in wrote):
                when[ck] = self._ite_cond(pcs, wrote)
        blocks: list[Val] = []
        for st in states:
            for b, _ in st.mem.pbs:
                if not any(self._same_key(b, b2) for b2 in blocks):
                    blocks.append(b)
        pbs = [(b, self._ite_val(pcs, [st.mem.read_pb(b, st.pc) for st in states]))
               for b in blocks]
        below = base.below
        if any(st.mem.below is not below for st in states):
            below = MergeLayer(pcs, [st.mem for st in states])
        mem = PageStore(below, base.symbolic, base.canon, pages, pbs=pbs, when=when)
        stack: dict[str, PageState | None] = {}
        for name in {n for st in states for n in st.stack}:
            slots = [st.stack.get(name) for st in states]
            live = [p for p in slots if p is not None]
            stack[name] = None if len(live) < len(slots) else self._ite_pages(pcs, live)
        return State(pc=pc, env=env, mem=mem, stack=stack), pcs

    def _same_key(self, a: Val, b: Val) -> bool:
        same = self.canon.same(a, b)
        if same is None:
            raise InterpError(f"cannot tell pageblock {a} from {b} apart")
        return same

    def _ite_pages(self, pcs: list[Cond], vals: list[PageState]) -> PageState:
        acc = vals[-1]
        for c, v in zip(reversed(pcs[:-1]), reversed(vals[:-1]), strict=True):
            if v is acc or (self.symbolic and not isinstance(v.bits, CBV) and v.bits.eq(acc.bits)):
                continue
            acc = ite_page(c, v, acc)
        return acc

    def merge_values(self, pcs: list[Cond], vs: list[Value]) -> Value:
        first = vs[0]
        if all(v is first for v in vs):
            return first
        poisoned = [v for v in vs if isinstance(v, Poison)]
        if poisoned:
            return poisoned[0]
        if any(isinstance(v, Slot) for v in vs):
            if all(isinstance(v, Slot) and v.slot == first.slot for v in vs):  # type: ignore[union-attr]
                return first
            raise InterpError("struct locals merged")
        if all(isinstance(v, Ptr) for v in vs):
            ps = [v for v in vs if isinstance(v, Ptr)]  # all of them
            live = [p for p in ps if p.region != "null"]
            if not live:
                return ps[0]
            p0 = live[0]
            if p0.region == "obj" and all(p.region == "null" or (p.region == "obj" and p.obj == p0.obj)
                                          for p in ps):
                nn = self._ite_cond(pcs, [p.nonnull if p.region == "obj" else False for p in ps])
                return evolve(p0, nonnull=nn)
            if p0.region == "page" and all(p.region == "page" and p.off == p0.off for p in ps):
                return evolve(p0, idx=self._ite_val(pcs, [p.idx for p in ps]))
            if p0.region == "local" and all(p.region == "local" and p.obj == p0.obj
                                            and p.off == p0.off for p in ps):
                return p0
            raise InterpError("pointers to different objects merged")
        if any(isinstance(v, Ptr) for v in vs):
            raise InterpError("pointer merged with an integer")
        if all(isinstance(v, CCond) for v in vs):
            return CCond(self._ite_cond(pcs, [v.c for v in vs if isinstance(v, CCond)]))
        types = [self.int_type_of(v) for v in vs]
        t = types[0]
        for u in types[1:]:
            t = t if u == t else cint.common_type(t, u)
        return CInt(self._ite_val(pcs, [cint.convert(self.as_int(v), u, t)
                                        for v, u in zip(vs, types, strict=True)]), t[1], t[0])

    def _ite_val(self, pcs: list[Cond], vals: list[Val]) -> Val:
        acc = vals[-1]
        for c, v in zip(reversed(pcs[:-1]), reversed(vals[:-1]), strict=True):
            acc = bv.ite(c, v, acc)
        return acc

    def _ite_cond(self, pcs: list[Cond], cs: list[Cond]) -> Cond:
        acc = cs[-1]
        for c, v in zip(reversed(pcs[:-1]), reversed(cs[:-1]), strict=True):
            acc = bv.or_(bv.and_(c, v), bv.and_(bv.not_(c), acc))
        return acc

    def merge_returns(self, finals: list[tuple[State, Value | None]]) -> tuple[State, Value | None]:
        st, sel = self._merge([s for s, _ in finals])
        vals = [v for _, v in finals]
        if all(v is None for v in vals):
            return st, None
        return st, self.merge_values(sel, [v if v is not None else CInt(self.c64(0)) for v in vals])

    def split(self, state: State, c: Cond, check: str = "") -> tuple[State | None, State | None]:
        """The state under ``c`` and under ``!c``.  ``check`` names the sides whose
        feasibility is asked of the oracle ("y", "n", "yn"); an unchecked infeasible side is
        kept: its effects are guarded by an unsatisfiable condition, so merging it is exact.
        When a checked side is infeasible, the other is the state itself, path condition
        unchanged (the assumptions imply the branch: ``pfn < end_pfn`` of a tail loop whose
        trip count the bounds fix), so a forced branch adds nothing to later joins."""
        if not isinstance(c, bool) and self.symbolic:
            sc = z3.simplify(c)
            c = True if z3.is_true(sc) else False if z3.is_false(sc) else c
        if isinstance(c, bool):
            return (state, None) if c else (None, state)
        if not self.symbolic:
            raise InterpError("symbolic condition in a concrete run")
        assert self.oracle is not None
        c = z3.simplify(c)
        yes, no = bv.and_(state.pc, c), bv.and_(state.pc, bv.not_(c))
        ok_yes = "y" not in check or self.oracle.feasible(yes)
        ok_no = "n" not in check or self.oracle.feasible(no)
        if ok_yes != ok_no:  # one side is infeasible: the other is the whole state, and its
            # path condition stays as it was (equivalent under the assumptions, and smaller)
            return (state, None) if ok_yes else (None, state)
        return (evolve(state, pc=yes) if ok_yes else None,
                evolve(state, pc=no) if ok_no else None)

    def guarded(self, run: Callable[[State], Outcome], st: State) -> Outcome:
        """Run a branch entered without a feasibility check; if it fails, it must be
        infeasible (then it is dropped) or the failure stands."""
        try:
            return run(st)
        except InterpError:
            if self.oracle is not None and not isinstance(st.pc, bool) and \
                    not self.oracle.feasible(st.pc):
                return Outcome()
            raise

    # -- statements -----------------------------------------------------------------------

    def block(self, frame: Frame, node: Node, state: State) -> Outcome:
        """The statements of a block in sequence; a labelled one is also entered by the
        block's earlier ``goto`` statements to its label
        (:func:`~equiv.zone_device.source.cstmt.at_label`)."""
        out = Outcome()
        cur: State | None = state
        for stmt in active_children(frame.src, node, self.menv):
            if stmt.type in ("{", "}", "comment") or not stmt.is_named:
                continue
            if stmt.type == "labeled_statement":
                cur, stmt = at_label(self, frame, stmt, cur, out)
            if cur is None:
                continue  # unreachable in sequence; a later label may be reached by goto
            o = self.stmt(frame, stmt, cur)
            out.jumps(o)
            out.brk += o.brk
            out.cont += o.cont
            cur = self.merge(o.normal) if o.normal else None
        if cur is not None:
            out.normal.append(cur)
        return out

    def stmt(self, frame: Frame, node: Node, state: State) -> Outcome:
        """The states leaving the statement ``node``; run once per arm of a conditional in
        it whose arms cannot be joined (:func:`~equiv.zone_device.source.cexpr.forking`)."""
        if node.type == "compound_statement":
            return self._stmt(frame, node, state)
        return cexpr.forking(self, partial(self._stmt, frame, node), state, frame.at(node))

    def _stmt(self, frame: Frame, node: Node, state: State) -> Outcome:
        t = node.type
        out = Outcome()
        if t == "compound_statement":  # a C scope: its declarations end with it
            o = self.block(frame, node, state)
            end = scoped(state.env)
            o.normal, o.cont, o.brk = ([end(st) for st in sts] for sts in (o.normal, o.cont, o.brk))
            o.goto = [(lb, end(st)) for lb, st in o.goto]
            return o
        if t == "expression_statement":
            if node.named_children:
                e = node.named_children[0]
                if e.type == "identifier" and text(frame.src, e) == "fallthrough":
                    self.trusted_used.add(NO_EFFECT)
                    out.normal.append(state)
                    return out
                state, _ = self.expr(frame, e, state)
            out.normal.append(state)
            return out
        if t == "declaration":
            for d in node.children_by_field_name("declarator"):
                name, full, ctype, ptr = self.declared(frame, node, d)
                init = d.child_by_field_name("value") if d.type == "init_declarator" else None
                if name in state.env:
                    raise InterpError(f"{frame.at(d)}: {name} declared where another "
                                      f"{name} is in scope (hiding it is not modelled)")
                if not ptr and is_aggregate(ctype):
                    slot = f"{frame.fn}.{name}@{d.start_point[0] + 1}"
                    size = self.elem_size(ctype, frame, d)
                    state = new_slot(self, state, slot, ctype, size, name, full)
                    if init is not None and cexpr.is_initialiser(init):
                        state, _ = cexpr.init_struct(self, frame, d, Loc(
                            "var", name=name, ctype=ctype), init, state)
                    elif init is not None:  # initialised from another struct (C11 6.7.9p13)
                        state, _ = copy_struct(self, frame, d, Loc("var", name=name,
                                                                  ctype=ctype), init, state)
                    continue
                if init is not None:
                    state, v = self.expr(frame, init, state)
                    v = self.convert(full, v)
                else:
                    v = CInt(self.c64(0))  # uninitialised: never read before written here
                state = evolve(state, env={**state.env, name: (full, v)})
            out.normal.append(state)
            return out
        if t == "if_statement":
            cond_node = child(node, "condition")
            state, cv = self.expr(frame, cond_node, state)
            yes, no = self.split(state, self.as_cond(cv))
            for st, branch in ((yes, node.child_by_field_name("consequence")),
                               (no, node.child_by_field_name("alternative"))):
                if st is None:
                    continue
                if branch is None:
                    out.normal.append(st)
                    continue
                if branch.type == "else_clause":
                    branch = branch.named_children[0]
                o = self.guarded(partial(self.stmt, frame, branch), st)
                out.normal += o.normal
                out.jumps(o)
                out.brk += o.brk
                out.cont += o.cont
            return out
        if t == "return_statement":
            rv: Value | None = None
            if node.named_children:
                state, rv = self.expr(frame, node.named_children[0], state)
            out.ret.append((state, rv))
            return out
        if t == "break_statement":
            out.brk.append(state)
            return out
        if t == "continue_statement":
            out.cont.append(state)
            return out
        if t in ("for_statement", "while_statement", "do_statement"):
            return run_loop(self, frame, node, state)
        if t == "goto_statement":
            return goto(frame, node, state)
        if t == "labeled_statement":  # not in a block: reached in sequence only
            return self.stmt(frame, node.named_children[-1], state)
        if t == "switch_statement":
            return self.switch(frame, node, state)
        if t in ("preproc_ifdef", "preproc_if"):
            return self.block(frame, node, state)
        if t == "comment":
            out.normal.append(state)
            return out
        raise InterpError(f"{frame.at(node)}: statement "
                          f"{t} not supported: {text(frame.src, node)[:60]!r}")

    def switch(self, frame: Frame, node: Node, state: State) -> Outcome:
        out = Outcome()
        state, xv = self.expr(frame, child(node, "condition"), state)
        xt = cint.promote(self.int_type_of(xv))  # the promoted type (C11 6.8.4.2p5)
        x = cint.convert(self.as_int(xv), self.int_type_of(xv), xt)
        cases = [c for c in active_children(frame.src, child(node, "body"), self.menv)
                 if c.type == "case_statement"]
        labels: list[Val | None] = []
        for c in cases:
            v = c.child_by_field_name("value")
            if v is None:
                labels.append(None)
            else:
                state, label = self.expr(frame, v, state)
                labels.append(cint.convert(self.as_int(label), self.int_type_of(label), xt))
        any_label = bv.or_(*(bv.eq(x, lv) for lv in labels if lv is not None))
        falling: State | None = None
        for c, lv in zip(cases, labels, strict=True):
            match = bv.not_(any_label) if lv is None else bv.eq(x, lv)
            enter, _ = self.split(state, match)
            entries = [s for s in (falling, enter) if s is not None]
            falling = None
            if not entries:
                continue
            cur: State | None = self.merge(entries)
            for s in c.named_children:
                if s == c.child_by_field_name("value") or cur is None:
                    continue
                o = self.stmt(frame, s, cur)
                out.jumps(o)
                out.normal += o.brk
                out.cont += o.cont
                cur = self.merge(o.normal) if o.normal else None
            falling = cur
        if falling is not None:
            out.normal.append(falling)
        if not any(lv is None for lv in labels):
            _, none = self.split(state, bv.not_(any_label))
            if none is not None:
                out.normal.append(none)
        return out

    # -- expressions -------------------------------------------------------------------------

    def expr(self, frame: Frame, node: Node, state: State) -> tuple[State, Value]:
        t = node.type
        src = frame.src
        if t == "parenthesized_expression":
            if node.named_children[-1].type == "compound_statement":  # ({ ...; e; })
                return self._statement_expression(frame, node.named_children[-1], state)
            return self.expr(frame, node.named_children[-1], state)
        if t == "number_literal":
            try:
                n, (bits, signed) = cint.literal(text(src, node))
            except ValueError as e:
                raise InterpError(f"{frame.at(node)}: {e}") from None
            return state, CInt(self.c64(n), signed, bits)
        if t in ("true", "false"):
            return state, CCond(t == "true")
        if t == "null":
            return state, Ptr("null", "void")
        if t == "identifier":
            return self.ident(frame, node, state)
        if t == "call_expression":
            return self.call_expr(frame, node, state)
        if t == "field_expression":
            state, loc = self.lvalue(frame, node, state)
            return state, self.load(loc, state)
        if t == "subscript_expression":
            state, loc = self.lvalue(frame, node, state)
            return state, self.load(loc, state)
        if t == "pointer_expression":
            op = node.children[0].type
            if op == "&":
                state, loc = self.lvalue(frame, child(node, "argument"), state)
                return state, self.address_of(loc, state)
            state, loc = self.lvalue(frame, node, state)
            return state, self.load(loc, state)
        if t == "assignment_expression":
            return self.assign(frame, node, state)
        if t == "update_expression":
            arg = child(node, "argument")
            op = text(src, child(node, "operator"))
            state, loc = self.lvalue(frame, arg, state)
            old = self.load(loc, state)
            new = self.arith("+" if op == "++" else "-", old, CInt(self.c64(1), True, 32))
            state = self.store(frame, node, loc, new, state)
            if node.children[0].type in ("++", "--"):  # ++E: E's new value (C11 6.5.3.1p2)
                return state, self.load(loc, state)
            return state, old
        if t == "unary_expression":
            op = text(src, child(node, "operator"))
            state, v = self.expr(frame, child(node, "argument"), state)
            if op == "!":
                return state, CCond(bv.not_(self.as_cond(v)))
            pt = cint.promote(self.int_type_of(v))  # C11 6.5.3.3: the promoted type
            x = cint.convert(self.as_int(v), self.int_type_of(v), pt)
            if op == "~":
                return state, self._fold(frame, self.typed(~x, pt), v)
            if op == "-":
                return state, self.typed(self.c64(0) - x, pt)
            if op == "+":
                return state, CInt(x, pt[1], pt[0])
        if t == "binary_expression":
            op = text(src, child(node, "operator"))
            state, a = self.expr(frame, child(node, "left"), state)
            if op in ("&&", "||"):
                ca = self.as_cond(a)
                if isinstance(ca, bool) and ca == (op == "||"):
                    return state, CCond(ca)
                state, b = self.expr(frame, child(node, "right"), state)
                cb = self.as_cond(b)
                return state, CCond(bv.and_(ca, cb) if op == "&&" else bv.or_(ca, cb))
            state, b = self.expr(frame, child(node, "right"), state)
            return state, self._fold(frame, self.binop(op, a, b, frame, node), a, b)
        if t == "cast_expression":
            tn = self.type_name(frame, child(node, "type"), state)
            state, v = self.expr(frame, child(node, "value"), state)
            return state, self.cast(frame, node, tn, v)
        if t == "sizeof_expression":
            n, st_ = self.sizeof_at(frame, node)
            return state, CInt(self.c64(n), st_[1], st_[0])
        if t == "conditional_expression":
            return cexpr.conditional(self, frame, node, state)
        if t == "comma_expression":
            state, _ = self.expr(frame, child(node, "left"), state)
            return self.expr(frame, child(node, "right"), state)
        raise InterpError(f"{frame.at(node)}: expression {t} not "
                          f"supported: {text(src, node)[:60]!r}")

    def _statement_expression(self, frame: Frame, block: Node,
                              state: State) -> tuple[State, Value]:
        """GNU C's statement expression ``({ s1; ...; e; })`` (``RELOC_HIDE``,
        include/linux/compiler.h, under ``absolute_pointer``): its statements run in a scope
        of their own, and its value is that of its last statement, an expression.

        Raises:
            InterpError: no last expression, or a statement in it that branches, returns
                or jumps (not modelled).
        """
        items = [c for c in active_children(frame.src, block, self.menv)
                 if c.is_named and c.type != "comment"]
        if not items or items[-1].type != "expression_statement" or not items[-1].named_children:
            raise InterpError(f"{frame.at(block)}: a statement expression without a last "
                              "expression")
        end = scoped(state.env)
        for st in items[:-1]:
            o = self.stmt(frame, st, state)
            if o.ret or o.goto or o.brk or o.cont or len(o.normal) != 1:
                raise InterpError(f"{frame.at(st)}: a statement expression whose statements "
                                  "branch or jump is not modelled")
            state = o.normal[0]
        state, v = self.expr(frame, items[-1].named_children[0], state)
        return end(state), v

    def _fold(self, frame: Frame, r: Value, *operands: Value) -> Value:
        """``r``, folded to a numeral if it is an integer operation of a function-like macro's
        body on numerals only (``(__typeof__(x))(a) - 1`` and ``~(mask)`` of
        ``__ALIGN_KERNEL`` / ``__ALIGN_KERNEL_MASK``, include/uapi/linux/const.h): the
        constant the compiler folds, so it is one numeral wherever the body uses it."""
        if not frame.fold or not isinstance(r, CInt) or not all(
                isinstance(o, CInt) and _numeral(o.v) for o in operands):
            return r
        return CInt(z3.simplify(r.v), r.signed, r.bits)

    def cast(self, frame: Frame, node: Node, tn: str, v: Value) -> Value:
        """``(tn)v``: ``(void)`` is 0, a pointer cast keeps the pointee's address under the new
        pointee type (an integer cast to a pointer is refused), an integer cast converts."""
        if tn == "void":
            return CInt(self.c64(0))
        if tn.endswith("*"):
            if isinstance(v, Ptr):
                return evolve(v, ctype=tn[:-1].strip())
            if tn.replace("const", "").replace("volatile", "").replace(" ", "") == "void*":
                return self.convert(tn, v)  # an address held as a number (RELOC_HIDE's)
            raise InterpError(f"{frame.at(node)}: integer cast to a pointer")
        return self.convert(tn, v)

    def type_name(self, frame: Frame, node: Node, state: State) -> str:
        """The type name ``node`` as written, each ``typeof(x)`` in it
        (``(volatile typeof(x) *)`` of ``__WRITE_ONCE``, include/asm-generic/rwonce.h)
        replaced by :meth:`type_of` ``x``."""
        found = [n for n in walk(node) if n.type == "macro_type_specifier"
                 and text(frame.src, child(n, "name")) in ("typeof", "__typeof__", "__typeof")]
        if not found:
            return " ".join(text(frame.src, node).split())
        out, at = b"", node.start_byte
        for n in found:
            operand = " ".join(text(frame.src, child(n, "type")).split())
            if not operand.isidentifier():
                raise InterpError(f"{frame.at(n)}: typeof({operand[:40]}) in a type name not "
                                  "modelled (typeof of a name is)")
            tn = self._typeof_name(frame, n, operand, state)
            out += frame.src[at:n.start_byte] + tn.encode()
            at = n.end_byte
        return " ".join((out + frame.src[at:node.end_byte]).decode().split())

    def _typeof_name(self, frame: Frame, node: Node, name: str, state: State) -> str:
        if name in frame.macro_args:
            lz = frame.macro_args[name]
            return self.type_of(lz.frame, lz.node, state)
        if name in state.env:
            return state.env[name][0]
        raise InterpError(f"{frame.at(node)}: typeof({name}): no such variable")

    def type_of(self, frame: Frame, node: Node, state: State) -> str:
        """The C type of ``typeof(node)``, for the operands the kernel's arithmetic macros give
        it (``IS_ALIGNED(x, a)`` in include/linux/align.h, ``__ALIGN_KERNEL(x, a)`` in
        include/uapi/linux/const.h): a local or parameter (its declared type), a macro
        argument (the type of what was passed) or a cast (its type).  Not evaluated, as in C.

        Raises:
            InterpError: any other operand (an expression whose type would need C's usual
                arithmetic conversions).
        """
        t = node.type
        if t == "parenthesized_expression":
            return self.type_of(frame, node.named_children[-1], state)
        if t == "identifier":
            name = text(frame.src, node)
            if name in frame.macro_args:
                lz = frame.macro_args[name]
                return self.type_of(lz.frame, lz.node, state)
            if name in state.env:
                return state.env[name][0]
        if t == "cast_expression":
            return self.type_name(frame, child(node, "type"), state)
        if t == "field_expression":  # the member's type, as clang declares it
            _, loc = self.lvalue(frame, node, state)
            return loc.ctype if loc.kind in ("mem", "local") else \
                self._not_typed(frame, node)
        return self._not_typed(frame, node)

    @staticmethod
    def _not_typed(frame: Frame, node: Node) -> NoReturn:
        raise InterpError(f"{frame.at(node)}: typeof({text(frame.src, node)[:40]}) not "
                          "modelled (typeof of a variable, a macro argument, a cast or a "
                          "member is)")

    def _typeof_cast(self, frame: Frame, fn: Node, state: State) -> str | None:
        """The type of a ``(typeof(x))`` / ``(__typeof__(x))`` cast, which tree-sitter parses as
        the callee of a call (``(typeof(x))(a)``); None if ``fn`` is not one."""
        if fn.type != "parenthesized_expression" or len(fn.named_children) != 1:
            return None
        inner = fn.named_children[0]
        if inner.type != "call_expression":
            return None
        if text(frame.src, child(inner, "function")) not in ("typeof", "__typeof__", "__typeof"):
            return None
        args = child(inner, "arguments").named_children
        if len(args) != 1:
            raise InterpError(f"{frame.at(fn)}: typeof with {len(args)} operands")
        return self.type_of(frame, args[0], state)

    def ident(self, frame: Frame, node: Node, state: State) -> tuple[State, Value]:
        name = text(frame.src, node)
        if name in frame.macro_args:
            lz = frame.macro_args[name]
            return self.expr(lz.frame, lz.node, state)
        if name in state.env:
            v = state.env[name][1]
            if isinstance(v, Poison):
                raise InterpError(f"{frame.at(node)}: {name} is read after "
                                  f"the loop at {v.where}, whose value there is not followed "
                                  "(the loop is summarised)")
            return state, v
        if name in self.enums:  # an enumeration constant: an int (C11 6.7.2.2p3)
            return state, CInt(self.c64(self.enums[name]), True, 32)
        c = self.constant(name)
        if c is not None:
            return state, c
        if name == "NULL":
            return state, Ptr("null", "void")
        got = self._object_macro(name, state)
        if got is not None:
            return got
        if name == "jiffies":
            self.trusted_used.add("jiffies, jiffies_to_msecs")
            return state, CInt(self.c64(0))
        raise InterpError(f"{frame.at(node)}: unknown name {name}")

    def constant(self, name: str) -> Value | None:
        """The constant ``name`` as clang types and evaluates it under the configuration's
        headers (:meth:`TypedTree.constant`: a macro of
        :data:`~equiv.zone_device.source.ctyped.CONSTANTS` such as ``PAGE_SHIFT``,
        ``TAIL_MAPPING`` or ``ZONES_PGSHIFT``, or an enumeration constant such as
        ``ZONE_DEVICE``), recorded as run from where it is defined; a pointer constant
        (``TAIL_MAPPING``) is its address.  Where the model's configuration has the same
        constant (:meth:`model_constants`), the two must agree.

        Raises:
            InterpError: clang does not evaluate it to a constant, or its value is not the
                model's.
        """
        got = self.clang.constant(name)
        if got is None:
            return None
        if got.value is None:
            raise InterpError(f"{name} ({got.where}) is not a constant clang evaluates under "
                              f"config {self.cfg.name}")
        model = self.model_constants().get(name)
        if model is not None and model & ((1 << 64) - 1) != got.value:
            raise InterpError(f"{name} is {got.value:#x} in clang's evaluation of the tree "
                              f"({got.where}) but {model:#x} in the model's config "
                              f"{self.cfg.name}: the model does not describe this tree")
        self.interpreted.setdefault(name, got.where)
        t = None if got.pointer or got.size is None else self.clang.int_type(got.type)
        if t is None:
            return CInt(self.c64(got.value))
        return CInt(self.c64(got.value), t[1], t[0])

    def _clang_int(self, name: str) -> int:
        """The macro ``name`` as clang evaluates it in the tree (:meth:`constant`: checked
        against the model's value where the model has one).

        Raises:
            InterpError: the tree has no such constant.
        """
        got = self.constant(name)
        c = self.clang.constant(name)
        if got is None or c is None or c.value is None:
            raise InterpError(f"{name}: not a constant of this tree clang evaluates")
        return c.value

    def model_constants(self) -> dict[str, int]:
        """The constants the model's configuration and page-flags layout
        (:class:`~equiv.page_model.FlagsLayout`) give, which clang's must equal."""
        cfg, fl = self.cfg, self.sc.layout.flags
        table: dict[str, int] = {
            "PAGE_SHIFT": cfg.PAGE_SHIFT, "PAGE_SIZE": cfg.page_size,
            "PFN_SECTION_SHIFT": cfg.pfn_section_shift,
            "PAGES_PER_SECTION": 1 << cfg.pfn_section_shift,
            "pageblock_order": cfg.PAGEBLOCK_ORDER, "pageblock_nr_pages": 1 << cfg.PAGEBLOCK_ORDER,
            "TAIL_MAPPING": 0x400 + cfg.POISON_POINTER_DELTA,
            "POISON_POINTER_DELTA": cfg.POISON_POINTER_DELTA, "ZONE_DEVICE": cfg.ZONE_DEVICE_IDX,
            "MIGRATE_MOVABLE": 1, "KASAN_TAG_KERNEL": cfg.KASAN_TAG_KERNEL,
            "LAST_CPUPID_MASK": fl.last_cpupid_mask, "LAST_CPUPID_SHIFT": fl.last_cpupid_shift,
        }
        for f in fl.fields:
            table[f"{f.name}_PGSHIFT"] = f.pgshift
            table[f"{f.name}_PGOFF"] = f.pgoff
            table[f"{f.name}_WIDTH"] = f.width
            if f.name != "LAST_CPUPID":
                table[f"{f.name}_MASK"] = f.mask
        return table

    def arith(self, op: str, a: Value, b: Value) -> Value:
        return self.binop(op, a, b, None, None)

    def binop(self, op: str, a: Value, b: Value, frame: Frame | None, node: Node | None) -> Value:
        if isinstance(a, Ptr) and op in ("+", "-") and isinstance(b, CInt | CCond):
            n = self.as_int(b)
            if a.region != "page":
                raise InterpError("arithmetic on a non-memmap pointer")
            if a.ctype not in ("struct page", "struct folio"):
                raise InterpError(f"pointer arithmetic on {a.ctype} *")
            assert a.idx is not None
            step = n if a.ctype == "struct page" else n * (self.structs["folio"].size // self.psize)
            return evolve(a, idx=a.idx + step if op == "+" else a.idx - step)
        if isinstance(a, Ptr) and isinstance(b, Ptr) and op in ("==", "!="):
            if "obj" in (a.region, b.region):
                raise InterpError("comparison of object pointers")
            if a.region == b.region == "local":  # one object or two (C11 6.5.9p6)
                eqc: Cond = a.obj == b.obj and a.off == b.off
            else:
                eqc = bv.eq(self.ptr_addr(a), self.ptr_addr(b))
            return CCond(eqc if op == "==" else bv.not_(eqc))
        if isinstance(a, Ptr) and isinstance(b, Ptr) and op == "-":
            if "obj" in (a.region, b.region):
                (arr_a, ia), (arr_b, ib) = self.element(a), self.element(b)
                if arr_a != arr_b:
                    raise InterpError(f"difference of pointers into {arr_a} and {arr_b}")
                d = const_of(ia - ib)
                return CInt(ia - ib if d is None else self.c64(d), True)
            if a.region != "page" or b.region != "page":
                raise InterpError(f"difference of pointers to {a.region} and {b.region}")
            assert a.idx is not None and b.idx is not None
            return CInt(a.idx - b.idx, True)
        return self.int_binop(op, a, b, frame, node)

    def common_type(self, ta: IntType, tb: IntType, frame: Frame | None, node: Node | None,
                    op: str) -> IntType:
        """The type operator ``op`` at ``node`` computes in: clang's, after its implicit
        conversions (:meth:`operator_type`), where clang typed the operator there; else C's
        usual arithmetic conversions of the operands' types
        (:func:`~equiv.zone_device.source.cint.common_type`)."""
        t = self.operator_type(frame, node) if frame is not None and node is not None else None
        return cint.common_type(ta, tb) if t is None else t

    def operator_type(self, frame: Frame, node: Node) -> IntType | None:
        """The integer type clang converts both operands of the binary expression ``node``
        to (:meth:`TypedTree.binary`: ``i < nr_pages`` with an ``int i`` and an ``unsigned
        long nr_pages`` is ``unsigned long``); None where clang has no such operator (a
        macro's body) or its operands are not integers of one type (a shift)."""
        if frame.first_line != 1 or frame.fold or node.type != "binary_expression":
            return None
        lhs, rhs = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        if lhs is None or rhs is None or op is None:
            return None
        b = self.clang.binary(frame.fn, frame.at(node), text(frame.src, op),
                              text(frame.src, lhs), text(frame.src, rhs))
        if b is None:
            return None
        lt, rt = self.int_type(b.lhs.type), self.int_type(b.rhs.type)
        return lt if lt is not None and lt == rt else None

    def typed(self, v: Val, t: IntType) -> CInt:
        """The result ``v`` of an operation in type ``t``, reduced to it (an unsigned type
        modulo ``2**w``, C11 6.2.5p9; a signed one wraps, as under the kernel's
        ``-fno-strict-overflow``: :mod:`equiv.zone_device.source.cint`)."""
        return CInt(v if t[0] >= 64 else bv.c_convert(v, t[0], t[1]), t[1], t[0])

    def int_binop(self, op: str, a: Value, b: Value, frame: Frame | None,
                  node: Node | None) -> Value:
        """An operator on two integers: a shift in its promoted left operand's type (C11
        6.5.7p3), any other in the usual arithmetic conversions' common type (6.3.1.8:
        ``int < unsigned long`` compares as ``unsigned long``); a comparison is an ``int``
        0 or 1."""
        ta, tb = self.int_type_of(a), self.int_type_of(b)
        if op in ("<<", ">>"):
            t = cint.promote(ta)
            x = cint.convert(self.as_int(a), ta, t)
            y = self.as_int(b)
            return self.typed(bv.c_shl(x, y), t) if op == "<<" else \
                CInt(bv.c_shr(x, y, t[1]), t[1], t[0])
        t = self.common_type(ta, tb, frame, node, op)
        x, y = cint.convert(self.as_int(a), ta, t), cint.convert(self.as_int(b), tb, t)
        signed = t[1]
        if op in ("+", "-", "*"):
            return self.typed(x + y if op == "+" else x - y if op == "-" else x * y, t)
        if op in ("/", "%"):
            yc = const_of(y)
            if yc == 0:
                where = f"{frame.at(node)}: " if frame and node else ""
                raise InterpError(f"{where}division by zero")
            if signed:
                raise InterpError("signed division not modelled")
            if isinstance(x, CBV) and isinstance(y, CBV):
                return CInt(CBV(x.value // y.value if op == "/" else x.value % y.value, 64),
                            False, t[0])
            xs = x if isinstance(x, z3.BitVecRef) else z3.BitVecVal(int(x), 64)
            ys = y if isinstance(y, z3.BitVecRef) else z3.BitVecVal(int(y), 64)
            return CInt(z3.UDiv(xs, ys) if op == "/" else z3.URem(xs, ys), False, t[0])
        if op in ("&", "|", "^"):  # of two values extended alike: extended alike
            return CInt(x & y if op == "&" else x | y if op == "|" else x ^ y, signed, t[0])
        if op == "==":
            return CCond(bv.eq(x, y))
        if op == "!=":
            return CCond(bv.ne(x, y))
        if op in ("<", "<=", ">", ">="):
            lo, hi = (x, y) if op in ("<", "<=") else (y, x)
            strict = op in ("<", ">")
            if signed:
                return CCond(bv.c_slt(lo, hi) if strict else bv.not_(bv.c_slt(hi, lo)))
            return CCond(bv.ult(lo, hi) if strict else bv.ule(lo, hi))
        where = f"{frame.at(node)}: " if frame and node else ""
        raise InterpError(f"{where}operator {op} not supported")

    # -- lvalues and memory ------------------------------------------------------------------

    def lvalue(self, frame: Frame, node: Node, state: State) -> tuple[State, Loc]:
        t = node.type
        src = frame.src
        if t == "parenthesized_expression":
            return self.lvalue(frame, node.named_children[-1], state)
        if t == "identifier":
            name = text(src, node)
            if name in frame.macro_args:
                lz = frame.macro_args[name]
                return self.lvalue(lz.frame, lz.node, state)
            if name not in state.env:
                raise InterpError(f"{frame.at(node)}: assignment to "
                                  f"unknown name {name}")
            ct = state.env[name][0]
            return state, Loc("var", name=name, ctype=ct)
        if t == "field_expression":
            arg = child(node, "argument")
            fname = text(src, child(node, "field"))
            arrow = node.children[1].type == "->"
            if arrow:
                state, base = self.expr(frame, arg, state)
                if not isinstance(base, Ptr):
                    raise InterpError(f"{frame.at(node)}: -> on a non-pointer")
                return state, self.member(base, fname, frame, node)
            state, loc = self.lvalue(frame, arg, state)
            return state, self.member(self.address_of(loc, state), fname, frame, node)
        if t == "subscript_expression":
            state, base = self.expr(frame, child(node, "argument"), state)
            state, iv = self.expr(frame, child(node, "index"), state)
            if not isinstance(base, Ptr) or base.region not in ("page", "local"):
                raise InterpError(f"{frame.at(node)}: subscript of a pointer that is not "
                                  "into the memmap or a struct local")
            i = const_of(self.as_int(iv))
            if i is None:
                raise InterpError(f"{frame.at(node)}: symbolic array index")
            size = self.elem_size(base.ctype, frame, node)
            if i >= 1 << 63:
                i -= 1 << 64  # a negative index (C11 6.5.2.1p2: *(p + i))
            return state, self.ploc(base, i * size, size, base.ctype)
        if t == "pointer_expression" and node.children[0].type == "*":
            state, p = self.expr(frame, child(node, "argument"), state)
            if not isinstance(p, Ptr) or p.region not in ("page", "local"):
                raise InterpError(f"{frame.at(node)}: dereference of a "
                                  "non-memmap pointer")
            return state, self.ploc(p, 0, self.elem_size(p.ctype, frame, node), p.ctype)
        raise InterpError(f"{frame.at(node)}: lvalue {t} not supported")

    def member(self, base: Ptr, fname: str, frame: Frame, node: Node) -> Loc:
        if base.region == "obj":
            self.trusted_used.add("pgmap->*, altmap->*, zone->*, pgdat->*")
            return Loc("obj", name=f"{base.obj}.{fname}")
        if base.region not in ("page", "local"):
            raise InterpError(f"{frame.at(node)}: -> on NULL")
        rec = self.clang.record(base.ctype)  # clang's layout of the struct
        if rec is None:
            raise InterpError(f"{frame.at(node)}: member {fname} of "
                              f"{base.ctype}, not a struct clang knows here")
        hit = [f for f in rec.fields if f.path == fname]
        if not hit:
            raise InterpError(f"{frame.at(node)}: {base.ctype} has no "
                              f"member {fname} in this tree")
        return self.ploc(base, hit[0].offset, hit[0].size, hit[0].type)

    def ploc(self, p: Ptr, off: int, size: int, ctype: str) -> Loc:
        """The lvalue ``size`` bytes at ``off`` past pointer ``p`` (memmap or struct local)."""
        if p.region == "local":
            return Loc("local", name=p.obj, off=p.off + off, size=size, ctype=ctype)
        if p.region != "page":
            raise InterpError(f"access through a pointer to {p.region} {p.obj}".rstrip())
        assert p.idx is not None
        idx, o = self.norm(p.idx, p.off + off)
        return Loc("mem", idx=idx, off=o, size=size, ctype=ctype)

    def address_of(self, loc: Loc, state: State | None = None) -> Ptr:
        if loc.kind == "mem":
            return Ptr("page", loc.ctype, idx=loc.idx, off=loc.off)
        if loc.kind == "local":
            return Ptr("local", loc.ctype, obj=loc.name, off=loc.off)
        if loc.kind == "var" and state is not None:
            v = state.env[loc.name][1]
            if isinstance(v, Slot):
                return Ptr("local", v.ctype, obj=v.slot, off=0)
        if loc.kind == "obj":
            obj, _, fld = loc.name.partition(".")
            if (obj, fld) == ("pgmap", "altmap"):
                return Ptr("obj", "struct vmem_altmap", obj="altmap", nonnull=True)
        raise InterpError(f"address of {loc.kind} {loc.name} not modelled")

    def element(self, p: Ptr) -> tuple[str, Val]:
        """An input-object pointer as (array, index), for pointer differences: the zone passed
        is ``&zone->zone_pgdat->node_zones[ZONE_DEVICE]`` (the input-object model), so
        ``zone_idx(zone)`` (include/linux/mmzone.h) is ZONE_DEVICE from the macro's text."""
        if p.region != "obj":
            raise InterpError(f"difference of an input-object pointer and a {p.region} pointer")
        if p.idx is not None:
            return p.obj, p.idx
        if p.obj == "zone":
            self.trusted_used.add("pgmap->*, altmap->*, zone->*, pgdat->*")
            return "pgdat.node_zones", self.c64(self.cfg.ZONE_DEVICE_IDX)
        raise InterpError(f"input object {p.obj} is not an array element")

    def obj_field(self, name: str) -> Value:
        inp, sc = self.inp, self.sc
        if name == "pgmap.type":
            return CInt(bv.c_convert(bv.concat(bv.const_like(inp.pgmap_type, 0, 32), inp.pgmap_type)
                                     if bv.width(inp.pgmap_type) == 32 else inp.pgmap_type, 32, True),
                        True, 32)
        if name == "pgmap.vmemmap_shift":
            if not sc.is_class:  # unsigned int vmemmap_shift (include/linux/memremap.h)
                return CInt(self.c64(sc.order), False, 32)
            # an order class: the symbolic compound order (equiv.memmap.Scenario.order_v),
            # in the symbolic domain only (a class is never replayed concretely)
            if not self.symbolic:
                raise InterpError("an order class has no concrete vmemmap_shift")
            return CInt(sc.order_v, False, 32)
        if name == "pgmap.flags":
            return CInt(bv.ite(inp.altmap_valid, self.c64(1), self.c64(0)), False, 32)
        if name == "altmap.base_pfn":
            return CInt(inp.start_pfn)
        if name == "altmap.reserve":
            return CInt(inp.altmap_reserve)
        if name == "altmap.free":
            return CInt(inp.altmap_free)
        if name == "zone.zone_pgdat":
            return Ptr("obj", "struct pglist_data", obj="pgdat", nonnull=True)
        if name == "pgdat.node_id":
            return CInt(bv.c_convert(inp.nid, 32, True), True, 32)
        if name == "pgdat.node_zones":  # the array, as a pointer to its first element
            return Ptr("obj", "struct zone", obj="pgdat.node_zones", idx=self.c64(0))
        raise InterpError(f"input object field {name} not modelled")

    def load(self, loc: Loc, state: State) -> Value:
        if loc.kind == "var":
            return state.env[loc.name][1]
        if loc.kind == "obj":
            return self.obj_field(loc.name)
        aggregate = is_aggregate(loc.ctype)
        if loc.kind == "local":
            if aggregate:
                return Ptr("local", loc.ctype, obj=loc.name, off=loc.off)
            page = self.slot_bytes(loc.name, state)
            self._inside(loc, page)
        else:
            assert loc.idx is not None
            if aggregate:
                return Ptr("page", loc.ctype, idx=loc.idx, off=loc.off)  # an aggregate: its address
            page = state.mem.read(self.storage(loc.idx, state.pc), state.pc)
        raw = page.load(loc.off, loc.size)
        w = 8 * loc.size
        t = self.scalar_type(loc.ctype)
        signed = t[1] if t is not None else False
        return CInt(bv.c_convert(bv.concat(bv.const_like(raw, 0, 64 - w), raw) if w < 64 else raw, w,
                                 signed), signed, min(w, 64))

    @staticmethod
    def _inside(loc: Loc, obj: PageState) -> None:
        """A struct local's bytes ``loc`` lie inside it (C11 6.5.6p8: nothing past it)."""
        if loc.off < 0 or loc.off + loc.size > obj.size:
            raise InterpError(f"access to bytes {loc.off}..{loc.off + loc.size} of struct local "
                              f"{loc.name} ({obj.size} bytes)")

    def store(self, frame: Frame, node: Node, loc: Loc, v: Value, state: State) -> State:
        if loc.kind == "var":
            t = state.env[loc.name][0]
            return evolve(state, env={**state.env, loc.name: (t, self.convert(t, v))})
        if loc.kind not in ("mem", "local"):
            raise InterpError(f"{frame.at(node)}: store to input object "
                              f"{loc.name}")
        x = self.as_int(v)
        val = bv.extract(x, 8 * loc.size - 1, 0)
        step = step_text(frame, node)
        if loc.kind == "local":
            obj = self.slot_bytes(loc.name, state)
            self._inside(loc, obj)
            slot = obj.store(loc.off, loc.size, val, step)
            return evolve(state, stack={**state.stack, loc.name: slot})
        assert loc.idx is not None
        key = self.storage(loc.idx, state.pc)
        page = state.mem.read(key, state.pc)
        return evolve(state, mem=state.mem.write(key, page.store(loc.off, loc.size, val, step),
                                                 state.pc))

    def slot_bytes(self, slot: str, state: State) -> PageState:
        got = state.stack.get(slot, None)
        if got is None:
            raise InterpError(f"struct local {slot} is read after a summarised loop that "
                              "changes it" if slot in state.stack else f"no struct local {slot}")
        return got

    def assign(self, frame: Frame, node: Node, state: State) -> tuple[State, Value]:
        """``E1 = E2`` and ``E1 op= E2`` (C11 6.5.16): the value stored is E2's converted to
        E1's type, and so is the expression's value; a struct is copied whole
        (:func:`~equiv.zone_device.source.cstmt.copy_struct`)."""
        op = text(frame.src, child(node, "operator"))
        state, loc = self.lvalue(frame, child(node, "left"), state)
        if op == "=" and self.is_struct(loc, state):
            if cexpr.is_initialiser(child(node, "right")):
                return cexpr.init_struct(self, frame, node, loc, child(node, "right"), state)
            return copy_struct(self, frame, node, loc, child(node, "right"), state)
        state, v = self.expr(frame, child(node, "right"), state)
        if op != "=":
            v = self.arith(op[:-1], self.load(loc, state), v)
        state = self.store(frame, node, loc, v, state)
        return state, self.load(loc, state)

    def is_struct(self, loc: Loc, state: State) -> bool:
        """Does ``loc`` designate a struct object (a struct local, or struct bytes)?"""
        if loc.kind == "var":
            return isinstance(state.env[loc.name][1], Slot)
        return loc.kind in ("mem", "local") and is_aggregate(loc.ctype)

    def loc_size(self, loc: Loc, state: State) -> int:
        """The size of the object ``loc`` designates."""
        if loc.kind == "var":
            v = state.env[loc.name][1]
            if isinstance(v, Slot):
                return self.slot_size(v.slot, state)
            n = self.sizeof_type(loc.ctype)
            if n is None:
                raise InterpError(f"sizeof {loc.ctype} ({loc.name}) is not known to clang")
            return n
        return loc.size

    def declared(self, frame: Frame, decl: Node, d: Node) -> tuple[str, str, str, bool]:
        """A local's ``(name, type, pointee or own type, is a pointer)``: the type clang
        declares it with (:meth:`TypedTree.variable`), where clang has the local (in a
        function's text); the declaration as written in a macro's body."""
        name, ptr = _declarator_name(frame.src, d)
        var = None
        if frame.first_line == 1 and not frame.fold:
            var = self.clang.variable(frame.fn, name, d.start_point[0] + 1)
        if var is None:
            ctype = _decl_type(frame.src, decl)
            return name, ctype + " *" if ptr else ctype, ctype, ptr
        full = " ".join(w for w in var.type.split() if w not in ("const", "volatile"))
        ptr = var.kind == "POINTER"
        return name, full, full[:-1].strip() if ptr else full, ptr

    def param_types(self, d: Definition) -> list[tuple[str, str]]:
        """A function's parameters and the types clang declares them with (as written for a
        function clang does not have)."""
        params = _param_types(d)
        ft = self.clang.function(d.name)
        if ft is None:
            return params
        typed = [(v.name, v.type) for v in ft.variables if v.parameter]
        if [n for n, _ in typed] != [n for n, _ in params]:
            raise InterpError(f"{d.name} at {d.where}: clang's parameters "
                              f"{[n for n, _ in typed]} are not the text's {[n for n, _ in params]}")
        return typed

    def return_type(self, d: Definition) -> str | None:
        """The integer (or ``bool``) type clang says ``d`` returns; None for ``void``, a
        pointer or any other type (its value is passed back as it is)."""
        ft = self.clang.function(d.name)
        rt = ft.result if ft is not None else _return_type(d)
        return rt if rt is not None and self.int_type(rt) is not None else None

    def sizeof_type(self, ctype: str) -> int | None:
        """``sizeof`` of a type name, clang's (:meth:`TypedTree.sizeof_type`); None for a
        type clang does not know here."""
        return self.clang.sizeof_type(ctype)

    def int_type(self, ctype: str) -> IntType | None:
        """The width and signedness clang gives the integer type ``ctype``; None for any
        other type."""
        return self.clang.int_type(ctype)

    def scalar_type(self, ctype: str) -> IntType | None:
        """:meth:`int_type`, or for a struct of one integer member that fills it
        (``atomic_t``: ``int counter``) that member's type, as clang lays it out."""
        t = self.int_type(ctype)
        if t is not None:
            return t
        rec = self.clang.record(ctype)
        if rec is not None and len(rec.fields) == 1 and rec.fields[0].size == rec.size:
            return self.int_type(rec.fields[0].type)
        return None

    def sizeof_at(self, frame: Frame, node: Node) -> tuple[int, IntType]:
        """The value and type clang gives the ``sizeof`` expression ``node``, found by where
        it is written (:meth:`TypedTree.sizeof_at`): in a function, that function's; in a
        macro's body, every expansion clang made in the functions run so far (which must
        agree).  A ``sizeof`` of a type name clang has not evaluated there is clang's
        ``sizeof`` of that type, of clang's ``size_t``.

        Raises:
            InterpError: clang has no such ``sizeof`` (never a size computed here).
        """
        src = frame.src
        whole = text(src, node)
        operand = whole[whole.index("sizeof") + len("sizeof"):]
        fns = [frame.fn] if frame.first_line == 1 and not frame.fold else list(self.interpreted)
        try:
            n = self.clang.sizeof_at(fns, frame.at(node), operand)
        except InputError as e:
            raise InterpError(str(e)) from None
        t = self.clang.sizeof_type_at(fns, frame.at(node), operand) if n is not None else \
            self.int_type("size_t")
        if n is not None and t is not None:
            return n, t
        type_node = node.child_by_field_name("type")
        if type_node is not None and t is not None:
            name = " ".join(text(src, type_node).split())
            size = self.sizeof_type(name)
            if size is not None:
                return size, t
        raise InterpError(f"{frame.at(node)}: {whole!r}: clang evaluated no such sizeof there")

    def elem_size(self, ctype: str, frame: Frame, node: Node) -> int:
        """:meth:`sizeof_type`, or an error naming the expression."""
        n = self.sizeof_type(ctype)
        if n is None:
            raise InterpError(f"{frame.at(node)}: sizeof {ctype} not known "
                              f"({text(frame.src, node)[:50]!r})")
        return n

    # -- calls --------------------------------------------------------------------------------

    def call_expr(self, frame: Frame, node: Node, state: State) -> tuple[State, Value]:
        fn = child(node, "function")
        cast_to = self._typeof_cast(frame, fn, state)
        if cast_to is not None:  # (typeof(x))(a): a cast, not a call
            operands = child(node, "arguments").named_children
            if len(operands) != 1:
                raise InterpError(f"{frame.at(node)}: typeof cast of {len(operands)} operands")
            state, operand = self.expr(frame, operands[0], state)
            return state, self.cast(frame, node, cast_to, operand)
        name = text(frame.src, fn)
        if name in frame.macro_args:  # a macro parameter naming a function: not used here
            raise InterpError(f"indirect call through macro argument {name}")
        args = child(node, "arguments").named_children

        def thunk(a: Node) -> Callable[[State], tuple[State, Value]]:
            return lambda st: self.expr(frame, a, st)

        st, v = self._call(name, [thunk(a) for a in args], state, (frame, node))
        return st, v if v is not None else CInt(self.c64(0))

    def _trusted(self, name: str, args: list[Callable[[State], tuple[State, Value]]], state: State,
                 site: tuple[Frame, Node] | None) -> tuple[State, Value | None] | None:
        def ev(i: int) -> Value:
            nonlocal state
            state, v = args[i](state)
            return v

        def use(key: str) -> None:
            self.stand_in_checked(key)
            self.trusted_used.add(key)

        frame_node = site if site is not None else None
        if name in ("cond_resched", "pr_debug", "BUILD_BUG_ON", "VM_BUG_ON", "VM_BUG_ON_PAGE",
                    "VM_BUG_ON_FOLIO", "VM_WARN_ON_ONCE", "VM_WARN_ON", "compiletime_assert"):
            use(NO_EFFECT)
            return state, None
        if name in ("WARN_ON_ONCE", "WARN_ON", "unlikely", "likely"):
            use("WARN_ON_ONCE, WARN_ON, unlikely, likely")
            return state, ev(0)
        if name == "jiffies_to_msecs":
            use("jiffies, jiffies_to_msecs")
            return state, CInt(self.c64(0))
        if name in ("memcpy", "memcpy_flushcache", "memset"):
            use(name)
            if site is None:
                raise InterpError(f"{name} needs a call site")
            d = ev(0)
            src = ev(1)
            nv = const_of(self.as_int(ev(2)))
            where = step_text(*site)
            if nv is None:
                raise InterpError(f"{where}: {name} of a symbolic length")
            if not isinstance(d, Ptr) or (name != "memset" and not isinstance(src, Ptr)):
                raise InterpError(f"{where}: {name} on a non-pointer")
            if name == "memset":
                state = self.copy_bytes(d, None, self.as_int(src), nv, state, where)
            else:
                assert isinstance(src, Ptr)
                state = self.copy_bytes(d, src, None, nv, state, where)
            return state, (d if name != "memcpy_flushcache" else None)
        if name == "pfn_to_page":
            use(name)
            return state, Ptr("page", "struct page", idx=self.as_int(ev(0)), off=0)
        if name == "__va":
            use(name)
            return state, CInt(self.inp.page_offset + self.as_int(ev(0)))
        if name.startswith("__SetPage") or name.startswith("__ClearPage"):
            use("__SetPage*")
            flag = "PG_" + name.removeprefix("__SetPage").removeprefix("__ClearPage").lower()
            if flag not in self.enums:
                raise InterpError(f"{name}: no {flag} in the tree's enum pageflags")
            p = ev(0)
            if not isinstance(p, Ptr) or p.region not in ("page", "local") or site is None:
                raise InterpError(f"{name} on a non-memmap pointer")
            frame, call = site
            loc = self.ploc(p, 0, 8, "unsigned long")
            old = self.as_int(self.load(loc, state))
            bit = self.c64(1 << self.enums[flag])
            new = old | bit if name.startswith("__Set") else old & ~bit
            return self.store(frame, call, loc, CInt(new), state), None
        if name == "folio_test_large":
            use(name)
            p = ev(0)
            assert isinstance(p, Ptr)
            f = self.as_int(self.load(self.ploc(p, 0, 8, "unsigned long"), state))
            return state, CCond(bv.ne(f & (1 << self.enums["PG_head"]), self.c64(0)))
        if name == "__pfn_to_section":
            use(name)
            nr = bv.lshr(self.as_int(ev(0)), self.cfg.pfn_section_shift)
            return state, CInt(nr)  # stands for &mem_section[nr]
        if name == "early_section":
            use(name)
            return state, CCond(self.inp.early_section(self.as_int(ev(0))))
        if name in ("set_pageblock_migratetype", "init_pageblock_migratetype"):
            use(name)
            p = ev(0)
            mt = self.as_int(ev(1))
            if not isinstance(p, Ptr) or p.region != "page":
                raise InterpError(f"{name} on a non-memmap pointer")
            assert p.idx is not None
            from equiv.slow_path import init_pageblock_migratetype
            from equiv.zone_device.source.slow_v612y import set_pageblock_migratetype_612
            b = bv.lshr(p.idx, self.cfg.PAGEBLOCK_ORDER)
            old = state.mem.read_pb(b, state.pc)
            if const_of(mt) != 1:
                raise InterpError(f"{name} with a migratetype other than MIGRATE_MOVABLE")
            cell = (set_pageblock_migratetype_612(self.inp, old, 1)
                    if name == "set_pageblock_migratetype"
                    else init_pageblock_migratetype(self.sc, self.inp, old, 1))
            return evolve(state, mem=state.mem.write_pb(b, cell, state.pc)), None
        if name == "page_folio":
            use(name)
            p = ev(0)
            assert isinstance(p, Ptr)
            return state, evolve(p, ctype="struct folio")
        if name == "kasan_enabled":
            use(name)
            return state, CCond(True)
        if name == "page_kasan_tag_set":
            use(name)
            p, tag = ev(0), self.as_int(ev(1))
            assert isinstance(p, Ptr) and site is not None
            # the field as clang evaluates the tree's KASAN_TAG_PGSHIFT and KASAN_TAG_MASK
            # (checked against the model's where it has them: constant())
            shift, mask = (self._clang_int(n) for n in ("KASAN_TAG_PGSHIFT", "KASAN_TAG_MASK"))
            loc = self.ploc(p, 0, 8, "unsigned long")
            f = self.as_int(self.load(loc, state))
            f = (f & ~(mask << shift)) | (((tag ^ 0xFF) & mask) << shift)
            return self.store(site[0], site[1], loc, CInt(f), state), None
        del frame_node
        return None

    def copy_bytes(self, dst: Ptr, src: Ptr | None, fill: Val | None, n: int, state: State,
                   step: str) -> State:
        """``memcpy(dst, src, n)`` (or ``memset(dst, fill, n)`` when ``src`` is None) on
        whole bytes: each destination byte takes the source byte and its provenance chain,
        extended by this step."""
        if n < 0:
            raise InterpError(f"{step}: negative length {n}")
        if n == 0:
            return state
        for p in (dst, src):
            if p is not None and p.region not in ("page", "local"):
                raise InterpError(f"{step}: copy through a pointer to {p.region} {p.obj}".rstrip())

        def split(p: Ptr) -> tuple[str, Val | None, int]:
            if p.region == "local":
                return "local", None, p.off
            assert p.idx is not None
            idx, off = self.norm(p.idx, p.off)
            return "mem", self.storage(idx, state.pc), off

        def get(kind: str, idx: Val | None, slot: str, st: State) -> PageState:
            if kind == "local":
                return self.slot_bytes(slot, st)
            assert idx is not None
            return st.mem.read(idx, st.pc)

        dk, di, doff = split(dst)
        if dk == "local" and doff + n > self.slot_size(dst.obj, state):
            raise InterpError(f"{step}: copy of {n} bytes overflows struct local {dst.obj}")
        if dk == "mem" and doff + n > self.psize:
            raise InterpError(f"{step}: copy of {n} bytes crosses a struct page boundary "
                              "(not modelled)")
        dpage = get(dk, di, dst.obj, state)
        if src is not None:
            sk, si, soff = split(src)
            if soff + n > (self.slot_size(src.obj, state) if sk == "local" else self.psize):
                raise InterpError(f"{step}: copy of {n} bytes reads past its source")
            spage = get(sk, si, src.obj, state)
            val = bv.extract(spage.bits, 8 * (soff + n) - 1, 8 * soff)
            chains = None if spage.origin is None else spage.origin[soff:soff + n]
        else:
            assert fill is not None
            byte = bv.extract(fill, 7, 0)
            val = bv.concat(*([byte] * n)) if n > 1 else byte
            chains = None
        bits = splice(dpage.bits, 8 * doff, val) if n < dpage.size else val
        origin = None
        # a source without write history passes none on (a replay then records more)
        if dpage.origin is not None and (src is None or chains is not None):
            new = ([extend_chain(c, step) for c in chains] if chains is not None
                   else [extend_chain((), step)] * n)
            origin = dpage.origin[:doff] + tuple(new) + dpage.origin[doff + n:]
        page = PageState(bits=bits, origin=origin, events=dpage.events)
        if dk == "local":
            return evolve(state, stack={**state.stack, dst.obj: page})
        assert di is not None
        return evolve(state, mem=state.mem.write(di, page, state.pc))

    def slot_size(self, slot: str, state: State) -> int:
        return self.slot_bytes(slot, state).size


# ---- small C helpers -----------------------------------------------------------------------


def _what(v: Value) -> str:
    if isinstance(v, Slot):
        return f"struct local {v.slot}"
    if isinstance(v, Poison):
        return f"{v.name} (after the summarised loop at {v.where})"
    return type(v).__name__


def _numeral(v: Val) -> bool:
    """A z3 numeral (a constant of the symbolic domain, not yet folded into the terms)."""
    return isinstance(v, z3.BitVecRef) and z3.is_bv_value(v)


def join_guards(pcs: list[Cond], oracle: Oracle | None) -> tuple[Cond, list[Cond]]:
    """The path condition of the join of exclusive paths ``pcs`` and, for each path, the
    condition that selects it in an ``ite`` chain (the last one is the chain's default).

    The paths share their leading conjuncts (the path condition before they split), so
    those are left out of each selector: the merged values are read only under the
    merged path condition, where they hold.  A selector also drops a conjunct that the
    ``else`` of an earlier one-literal selector already implies (loop exits: ``!c0``,
    ``c0 && !c1``, ``c0 && c1 && !c2`` select as ``!c0``, ``!c1``, ``!c2``).  The merged
    path condition is the shared part alone when the paths cover it: structurally (both
    sides of a split) or, as the oracle decides, under the assumptions (a loop whose
    next trip is infeasible).  Exclusive paths stay exclusive under these selectors, so
    the ``ite`` chain picks, on each path, that path's values.  Without the shared
    factor, each join would wrap the path conditions of the joined paths in one more
    ``Or(And(...))`` layer, and every merged struct page would carry them.

    Args:
        pcs: the path conditions of the joined states, pairwise exclusive under the
            assumptions (each path leads to the join in one way).
        oracle: decides coverage under the assumptions; None: structural coverage only.

    Returns:
        The merged path condition (exact under the assumptions) and one selector per path.
    """
    lists = [conjuncts(pc) for pc in pcs]
    shared = {x.get_id() for x in lists[0]}
    for lst in lists[1:]:
        shared &= {x.get_id() for x in lst}
    common = [x for x in lists[0] if x.get_id() in shared]
    rests = [[x for x in lst if x.get_id() not in shared] for lst in lists]
    known: dict[int, z3.BoolRef] = {}  # literals true in the else of earlier selectors
    outside: list[Cond] = []  # the else of every earlier selector
    sel: list[Cond] = []
    covered = False
    for i, rest in enumerate(rests):
        if covered:  # an earlier path covers the rest: these are infeasible
            sel.append(False)
            continue
        r = [x for x in rest if x.get_id() not in known]
        g = bv.and_(*r)
        sel.append(g)
        if not r:
            covered = True
            continue
        if i == len(rests) - 1:
            break
        outside.append(bv.not_(g))
        if len(r) == 1:
            neg = _negate(r[0])
            known[neg.get_id()] = neg
    if not covered and oracle is not None:
        gap = bv.and_(*common, *outside, bv.not_(sel[-1]))
        try:
            covered = not oracle.feasible(gap)
        except InterpError:
            covered = False  # undecided: keep the exact disjunction
    pc = bv.and_(*common) if covered else bv.and_(*common, bv.or_(*(bv.and_(*r) for r in rests)))
    return pc, sel


def conjuncts(c: Cond) -> list[z3.BoolRef]:
    """The conjuncts of a path condition, nested ``And`` flattened, first occurrence first."""
    if isinstance(c, bool):
        return [] if c else [z3.BoolVal(False)]
    out: dict[int, z3.BoolRef] = {}
    stack = [c]
    while stack:
        x = stack.pop()
        if z3.is_and(x):
            stack.extend(reversed(x.children()))
        elif not z3.is_true(x):
            out.setdefault(x.get_id(), x)
    return list(out.values())


def _negate(c: z3.BoolRef) -> z3.BoolRef:
    """``!c``, with ``!!x`` written ``x`` (so a literal and its negation pair up by id)."""
    return c.arg(0) if z3.is_not(c) else z3.Not(c)


def _param_types(d: Definition) -> list[tuple[str, str]]:
    out = []
    for p in d.parameter_declarations:
        t = _decl_type(d.src, p)
        dn = p.child_by_field_name("declarator")
        if dn is None:
            continue  # (void)
        name, ptr = _declarator_name(d.src, dn)
        out.append((name, t + " *" if ptr else t))
    return out


def _return_type(d: Definition) -> str | None:
    """The integer (or ``bool``) type ``d`` returns; None for ``void``, a pointer or any
    other type (its value is passed back as it is)."""
    dn = d.node.child_by_field_name("declarator")
    tn = d.node.child_by_field_name("type")
    if dn is None or tn is None or dn.type != "function_declarator":
        return None
    return " ".join(text(d.src, tn).split())


def _decl_type(src: bytes, node: Node) -> str:
    t = child(node, "type")
    quals = [text(src, c) for c in node.children if c.type == "type_qualifier"]
    base = " ".join(text(src, t).split())
    del quals
    return base


def _declarator_name(src: bytes, d: Node) -> tuple[str, bool]:
    ptr = False
    while d.type != "identifier":
        if d.type == "pointer_declarator":
            ptr = True
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            raise InterpError(f"declarator {text(src, d)!r} not supported")
        d = nxt
    return text(src, d), ptr


#: Process-wide memo: a macro body's parse tree by its text (pure: the same text always
#: parses to the same tree), so each body is parsed once per process.
_EXPR_CACHE: dict[str, tuple[Node, bytes]] = {}


def _parse_expr(body: str) -> tuple[Node, bytes]:
    """Parse a macro body as a C expression (wrapped in a function)."""
    hit = _EXPR_CACHE.get(body)
    if hit is not None:
        return hit
    src = f"void __equiv_macro(void) {{ {body.replace(chr(92) + chr(10), ' ')} ; }}".encode()
    tree = parser().parse(src)
    fn = tree.root_node.children[0]
    stmt = child(fn, "body").named_children[0]
    if stmt.type != "expression_statement" or not stmt.named_children:
        raise InterpError(f"macro body {body!r} is not an expression")
    out = (stmt.named_children[0], src)
    _EXPR_CACHE[body] = out
    return out


#: Process-wide memo: a statement macro body's parse tree by its text (pure).
_STMT_CACHE: dict[str, tuple[Node, bytes]] = {}


def _parse_stmt(body: str) -> tuple[Node, bytes]:
    """Parse a macro body as one C statement (wrapped in a function), on one line."""
    hit = _STMT_CACHE.get(body)
    if hit is not None:
        return hit
    one = " ".join(body.replace(chr(92) + chr(10), " ").split())
    src = f"void __equiv_macro(void) {{ {one} ; }}".encode()
    fn = parser().parse(src).root_node.children[0]
    stmts = [c for c in child(fn, "body").named_children if c.type != "comment"]
    if not stmts or stmts[0].type not in ("do_statement", "compound_statement"):
        raise InterpError(f"macro body {body[:60]!r} is not a statement")
    _STMT_CACHE[body] = (stmts[0], src)
    return _STMT_CACHE[body]


def walk(node: Node) -> Iterator[Node]:
    """Every node below ``node``, pre-order."""
    yield node
    for c in node.children:
        yield from walk(c)


def initial_state(inp: Inputs, initial: Callable[[Val], PageState], canon: KeyCanon,
                  initial_pb: Callable[[Val], Val] | None = None) -> State:
    """The state before the first statement: nothing written."""
    base = BaseLayer(initial, initial_pb if initial_pb is not None else inp.mem.read_pb)
    return State(pc=True, env={}, mem=PageStore(base, bv.is_sym(inp.start_pfn), canon), stack={})


__all__ = ["MAX_TRIPS", "NO_EFFECT", "TRUSTED", "CCond", "CInt", "Interp", "InterpError", "Oracle",
           "PageStore", "Ptr", "State", "Trusted", "initial_state", "join_guards", "walk"]

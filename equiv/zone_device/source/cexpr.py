"""Expressions of the C interpreter beyond single values: the conditional operator, compound
literals and initialiser lists (:class:`equiv.zone_device.source.cinterp.Interp` calls these
with itself).

* **``c ? a : b``** (C11 6.5.15) and GNU ``c ?: b`` (the condition's value when it is
  non-zero, evaluated once).  Only the arm the condition selects is evaluated, on the
  state split by the condition.  When both arms are feasible their values are joined as
  the interpreter joins any two paths: an ``ite`` on the condition (``z3.If``) for
  integers, truth values and pointers into one object (:meth:`Interp.merge_values`).  Two
  values that cannot be one term (pointers to different objects, such as
  ``c ? page : &template``) *fork* the statement that holds the conditional: it is run
  again once per arm, each run taking its arm on its half of the path condition (an arm
  the assumptions exclude is dropped), and the states leaving the runs join after the
  statement (:func:`forking`; a pointer that would still point to either object there is
  not followed: reading it stops the run).  A statement forks at most :data:`MAX_FORKS`
  times.
* **Initialiser lists and compound literals** of a struct (6.7.9, 6.5.2.5):
  ``struct page t = { .private = 0 };``, ``*page = (struct page){ .flags = x };``.  The
  object is built in a temporary first (so the initialisers read the memory as it was
  before the assignment, ``*page = (struct page){ .flags = page->flags }``), then copied
  whole into its destination.  Every byte not named is zero: the members (6.7.9p10,
  p19, p21: as an object of static storage duration) and the padding, which C leaves
  unspecified and GCC clears with the members (it zeroes the whole object, then stores the
  named members); the run records that choice as the trusted :data:`AGGREGATE_INIT`.
  Designators name members (``.lru.next`` or ``.lru = { .next = ... }``, members of
  anonymous structs and unions included); initialisers apply in order and two that
  overlap stop the run (a union's members: 6.7.9p19 leaves the bytes of the other member
  unspecified).  An ``atomic_t`` member takes ``ATOMIC_INIT(i)`` (include/linux/types.h:
  ``{ (i) }``, expanded from the tree's text; a tree whose files read do not define it
  stops the run) or ``{ i }``.  Positional initialisers are taken only as ``{ }`` and
  ``{ 0 }`` (the whole object zero); array designators are not modelled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from attrs import evolve

from equiv.engine.bv import Cond, Val
from equiv.linux.ktree import KernelTree, Node, Preprocessor, child, parser, text
from equiv.page_model import PageState
from equiv.zone_device.source.cstate import (
    Frame,
    InterpError,
    Lazy,
    Loc,
    Oracle,
    Outcome,
    Ptr,
    State,
    Value,
)
from equiv.zone_device.source.cstmt import is_aggregate, same_type, step_text, struct_object

#: Most runs of one statement forked by conditionals whose arms cannot be joined.
MAX_FORKS = 16
#: the trusted-helper key of the zeroing of what an initialiser list does not name
AGGREGATE_INIT = "struct initialiser list, compound literal"
#: the macro an ``atomic_t`` is initialised with (include/linux/types.h, read from the text)
ATOMIC_INIT = "ATOMIC_INIT"


class ForkCtx:
    """One run of a statement: the arms its unjoinable conditionals take, in the order they
    are met (:func:`forking`)."""

    def __init__(self, decisions: list[bool]) -> None:
        self.decisions = decisions
        #: unjoinable conditionals met so far in this run
        self.count = 0


class Fork(Exception):
    """A conditional of the statement run under ``ctx`` whose arms cannot be joined and
    that has no decision yet: the statement is run again once per arm."""

    def __init__(self, ctx: ForkCtx) -> None:
        super().__init__("fork")
        self.ctx = ctx


class Dead(Exception):
    """The arm a run of the statement under ``ctx`` takes is infeasible: the run is
    dropped."""

    def __init__(self, ctx: ForkCtx) -> None:
        super().__init__("dead")
        self.ctx = ctx


class Host(Protocol):
    """The interpreter as these expressions call it back
    (:class:`equiv.zone_device.source.cinterp.Interp` is one)."""

    symbolic: bool
    oracle: Oracle | None
    #: the runs of the statements being executed, innermost last
    forks: list[ForkCtx]
    trusted_used: set[str]

    def expr(self, frame: Frame, node: Node, state: State) -> tuple[State, Value]:
        """The value of the expression ``node`` and the state after it."""
        ...

    def as_cond(self, v: Value) -> Cond:
        """A C value as a truth value."""
        ...

    def split(self, state: State, c: Cond, check: str = "") -> tuple[State | None, State | None]:
        """The state under ``c`` and under ``!c`` (None: infeasible)."""
        ...

    def _merge(self, states: list[State]) -> tuple[State, list[Cond]]:
        """One state for states on exclusive paths, and each path's selector."""
        ...

    def merge_values(self, pcs: list[Cond], vs: list[Value]) -> Value:
        """One value for values on exclusive paths (``pcs``)."""
        ...

    def c64(self, v: int) -> Val:
        """``v`` as a 64-bit value of the run's domain."""
        ...

    def address_of(self, loc: Loc, state: State | None = None) -> Ptr:
        """A pointer to the object ``loc``."""
        ...

    def loc_size(self, loc: Loc, state: State) -> int:
        """The size in bytes of the object ``loc``."""
        ...

    def member(self, base: Ptr, fname: str, frame: Frame, node: Node) -> Loc:
        """The member ``fname`` of the struct ``base`` points to."""
        ...

    def store(self, frame: Frame, node: Node, loc: Loc, v: Value, state: State) -> State:
        """``state`` with ``v`` stored in ``loc``."""
        ...

    def copy_bytes(self, dst: Ptr, src: Ptr | None, fill: Val | None, n: int, state: State,
                   step: str) -> State:
        """``memcpy(dst, src, n)`` (``memset`` with ``fill`` when ``src`` is None)."""
        ...

    def stack_init(self, slot: str, size: int) -> PageState:
        """The bytes of a struct local before it is written."""
        ...

    def lvalue(self, frame: Frame, node: Node, state: State) -> tuple[State, Loc]:
        """The object the expression ``node`` designates."""
        ...

    #: the tree's text and the configuration's macros
    tree: KernelTree
    menv: Preprocessor
    #: the helpers run from the text, with their file:line
    interpreted: dict[str, str]


# ---- the conditional operator ----------------------------------------------------------------


def conditional(it: Host, frame: Frame, node: Node, state: State) -> tuple[State, Value]:
    """``c ? a : b`` (or ``c ?: b``): the value of the arm the condition selects."""
    state, cv = it.expr(frame, child(node, "condition"), state)
    yes, no = it.split(state, it.as_cond(cv))
    cons = node.child_by_field_name("consequence")

    def arm(st: State, which: bool) -> tuple[State, Value]:
        if which:
            return (st, cv) if cons is None else it.expr(frame, cons, st)
        return it.expr(frame, child(node, "alternative"), st)

    res: list[tuple[bool, State, Value]] = []
    for st, which in ((yes, True), (no, False)):
        if st is None:
            continue
        try:
            res.append((which, *arm(st, which)))
        except InterpError:
            if yes is not None and no is not None and it.oracle is not None and \
                    not it.oracle.feasible(st.pc):
                continue  # an arm the assumptions exclude
            raise
    if not res:
        raise InterpError(f"{frame.at(node)}: no arm of the conditional is feasible")
    if len(res) == 1:
        return res[0][1], res[0][2]
    try:
        st2, sel = it._merge([s for _, s, _ in res])
        return st2, it.merge_values(sel, [v for _, _, v in res])
    except InterpError as e:
        why = str(e)
    ctx = it.forks[-1] if it.forks else None
    if ctx is None:
        raise InterpError(f"{frame.at(node)}: the arms of "
                          f"{' '.join(text(frame.src, node).split())[:50]!r} cannot be joined "
                          f"({why}) and no statement holds it")
    i = ctx.count
    ctx.count += 1
    if i >= len(ctx.decisions):
        raise Fork(ctx)
    for which, st, v in res:
        if which == ctx.decisions[i]:
            if it.oracle is not None and it.symbolic and not it.oracle.feasible(st.pc):
                raise Dead(ctx)
            return st, v
    raise Dead(ctx)


def forking(it: Host, run: Callable[[State], Outcome], state: State, where: str) -> Outcome:
    """``run(state)`` (one statement), run again once per arm of each conditional in it
    whose arms cannot be joined (:func:`conditional`); the outcomes of the runs together."""
    pending: list[list[bool]] = [[]]
    out = Outcome()
    forks = 0
    while pending:
        ctx = ForkCtx(pending.pop())
        it.forks.append(ctx)
        try:
            o = run(state)
        except Fork as f:
            if f.ctx is not ctx:
                raise
            forks += 1
            if forks > MAX_FORKS:
                raise InterpError(f"{where}: the statement forks more than {MAX_FORKS} times "
                                  "on conditionals whose arms cannot be joined") from None
            pending += [[*ctx.decisions, False], [*ctx.decisions, True]]
            continue
        except Dead as d:
            if d.ctx is not ctx:
                raise
            continue
        finally:
            it.forks.pop()
        if not ctx.decisions:
            return o
        out.normal += o.normal
        out.jumps(o)
        out.brk += o.brk
        out.cont += o.cont
    return out


# ---- initialiser lists and compound literals ----------------------------------------------


def is_initialiser(node: Node | None) -> bool:
    """Is ``node`` (inside parentheses) an initialiser list or a compound literal?"""
    while node is not None and node.type == "parenthesized_expression" and \
            node.named_child_count == 1:
        node = node.named_children[0]
    return node is not None and node.type in ("initializer_list", "compound_literal_expression")


def init_struct(it: Host, frame: Frame, node: Node, dst: Loc, init: Node,
                state: State) -> tuple[State, Value]:
    """``dst = init`` for a struct object ``dst`` and an initialiser list or compound literal
    ``init`` (``node`` is the statement, for the provenance): the object built in a
    temporary, every byte not named zero, then copied whole into ``dst``."""
    while init.type == "parenthesized_expression" and init.named_child_count == 1:
        init = init.named_children[0]
    to = it.address_of(dst, state)
    size = it.loc_size(dst, state)
    if init.type == "compound_literal_expression":
        tn = " ".join(text(frame.src, child(init, "type")).split())
        if not same_type(tn, to.ctype):
            raise InterpError(f"{frame.at(init)}: a compound literal of type {tn} assigned to "
                              f"a {to.ctype}")
        init = child(init, "value")
    if init.type != "initializer_list":
        raise InterpError(f"{frame.at(init)}: initialiser {text(frame.src, init)[:50]!r} "
                          "not modelled")
    step = step_text(frame, node)
    tmp = f"{frame.fn}.(initialiser)@{frame.at(init)}:{init.start_point[1]}"
    it.trusted_used.add(AGGREGATE_INIT)
    state = evolve(state, stack={**state.stack, tmp: it.stack_init(tmp, size)})
    obj = Ptr("local", to.ctype, obj=tmp, off=0)
    state = it.copy_bytes(obj, None, it.c64(0), size, state, step)
    state = _fill(it, frame, node, obj, init, state, [])
    state = it.copy_bytes(to, obj, None, size, state, step)
    return evolve(state, stack={n: p for n, p in state.stack.items() if n != tmp}), to


def init_items(init: Node) -> list[Node]:
    return [c for c in init.named_children if c.type != "comment"]


def _fill(it: Host, frame: Frame, node: Node, obj: Ptr, init: Node, state: State,
          done: list[tuple[int, int]]) -> State:
    """The members ``init`` names stored into the zeroed struct ``obj`` points to, in order;
    ``done`` holds the byte ranges initialised so far (relative to the outermost object)."""
    items = init_items(init)
    positional = [c for c in items if c.type != "initializer_pair"]
    if positional:
        if len(items) == 1 and text(frame.src, items[0]).strip() == "0":
            return state  # { 0 }: the whole object zero, as it already is
        raise InterpError(f"{frame.at(init)}: positional initialiser "
                          f"{text(frame.src, init)[:50]!r} not modelled (designated "
                          "initialisers, '{ }' and '{ 0 }' are)")
    for pair in items:
        loc: Loc | None = None
        base = obj
        for d in pair.children_by_field_name("designator"):
            if d.type != "field_designator":
                raise InterpError(f"{frame.at(pair)}: designator {text(frame.src, d)!r} not "
                                  "modelled (member designators are)")
            if loc is not None:
                base = it.address_of(loc, state)
            fname = text(frame.src, d.named_children[-1])
            loc = it.member(base, fname, frame, pair)
        if loc is None:
            raise InterpError(f"{frame.at(pair)}: initialiser without a designator")
        lo, hi = loc.off, loc.off + loc.size
        if any(lo < b and a < hi for a, b in done):
            raise InterpError(f"{frame.at(pair)}: initialiser "
                              f"{text(frame.src, pair)[:50]!r} overlaps an earlier one (the "
                              "other members of a union are then unspecified: not modelled)")
        state = _member(it, frame, node, loc, child(pair, "value"), state, done)
        done.append((lo, hi))
    return state


def _member(it: Host, frame: Frame, node: Node, loc: Loc, value: Node, state: State,
            done: list[tuple[int, int]]) -> State:
    """One member ``loc`` initialised by ``value``."""
    counter = loc.ctype in ("atomic_t", "atomic_long_t")
    if value.type == "call_expression" and \
            text(frame.src, child(value, "function")) == "ATOMIC_INIT":
        got = _macro(it, ATOMIC_INIT)
        args = child(value, "arguments").named_children
        if got is None:  # include/linux/types.h: #define ATOMIC_INIT(i) { (i) }
            raise InterpError(f"{frame.at(value)}: ATOMIC_INIT is not defined in the files "
                              "read (include/linux/types.h)")
        params, body, where = got
        if len(params) != len(args):
            raise InterpError(f"{frame.at(value)}: ATOMIC_INIT ({where}) takes "
                              f"{len(params)} operands")
        bound = {p: Lazy(a, frame.src, frame) for p, a in zip(params, args, strict=True)}
        expanded, msrc = parse_init(body)
        file, _, line = where.rpartition(":")
        mframe = Frame(msrc, file, "ATOMIC_INIT", bound, int(line) if line.isdigit() else 1)
        return _member(it, mframe, node, loc, expanded, state, done)
    if value.type == "initializer_list":
        if counter:
            items = init_items(value)
            if len(items) != 1 or items[0].type == "initializer_pair":
                raise InterpError(f"{frame.at(value)}: {loc.ctype} initialised by "
                                  f"{text(frame.src, value)[:40]!r}")
            return _counter(it, frame, node, loc, items[0], state)
        if not is_aggregate(loc.ctype):
            raise InterpError(f"{frame.at(value)}: a braced initialiser of a {loc.ctype}")
        return _fill(it, frame, node, it.address_of(loc, state), value, state, done)
    if is_aggregate(loc.ctype):  # a member struct from another struct object (6.7.9p13)
        state, src, n = struct_object(it, frame, value, state)  # type: ignore[arg-type]
        if not same_type(src.ctype, loc.ctype) or n != loc.size:
            raise InterpError(f"{frame.at(value)}: a {src.ctype} initialising a {loc.ctype}")
        return it.copy_bytes(it.address_of(loc, state), src, None, n, state,
                             step_text(frame, node))
    if counter:
        raise InterpError(f"{frame.at(value)}: {loc.ctype} initialised by a scalar")
    state, v = it.expr(frame, value, state)
    return it.store(frame, node, loc, v, state)


def _counter(it: Host, frame: Frame, node: Node, loc: Loc, value: Node, state: State) -> State:
    """An ``atomic_t`` member's ``counter`` (its only member, at offset 0) set to ``value``."""
    state, v = it.expr(frame, value, state)
    size = 4 if loc.ctype == "atomic_t" else 8
    ctype = "int" if size == 4 else "long"
    return it.store(frame, node, Loc(loc.kind, name=loc.name, idx=loc.idx, off=loc.off,
                                     size=size, ctype=ctype), v, state)


def _macro(it: Host, name: str) -> tuple[list[str], str, str] | None:
    """The function-like macro ``name`` of the parsed files: its parameters, body text and
    file:line; None if they define none."""
    m = it.tree.find(name, it.menv, "macro")
    if m is None or m.node.type != "preproc_function_def":
        return None
    body = m.node.child_by_field_name("value")
    if body is None:
        return None
    it.interpreted.setdefault(name, m.where)
    return list(m.params), text(m.src, body), m.where


#: Process-wide memo: an initialiser macro body's parse tree by its text (pure).
_INIT_CACHE: dict[str, tuple[Node, bytes]] = {}


def parse_init(body: str) -> tuple[Node, bytes]:
    """Parse a macro body as an initialiser (``{ (i) }``)."""
    hit = _INIT_CACHE.get(body)
    if hit is not None:
        return hit
    src = f"void __equiv_macro(void) {{ int __v = {body.replace(chr(92) + chr(10), ' ')} ; }}"
    fn = parser().parse(src.encode()).root_node.children[0]
    decl = child(fn, "body").named_children[0]
    d = decl.child_by_field_name("declarator") if decl.type == "declaration" else None
    v = d.child_by_field_name("value") if d is not None else None
    if v is None:
        raise InterpError(f"macro body {body!r} is not an initialiser")
    _INIT_CACHE[body] = (v, src.encode())
    return _INIT_CACHE[body]


__all__ = ["AGGREGATE_INIT", "ATOMIC_INIT", "MAX_FORKS", "Dead", "Fork", "ForkCtx", "Host",
           "conditional", "forking", "init_items", "init_struct", "is_initialiser",
           "parse_init"]

"""Statements of the C interpreter beyond the straight line: loops, ``goto`` and copies of
whole structs (:class:`equiv.zone_device.source.cinterp.Interp` calls these with itself).

* **Loops** (C11 6.8.5): ``for``, ``while`` and ``do ... while``.  A loop the summary can
  follow (:func:`equiv.zone_device.source.cloops.loop_shape`) runs its first
  few iterations as written (as few as the summary can follow, up to the run's ``peel``,
  :data:`~equiv.zone_device.source.csummary.PEEL` by default: :func:`peeled_summary`) and
  the rest as a :class:`~equiv.zone_device.source.csummary.LoopSummary` whose lemmas the
  run records; any
  other loop is unrolled, and must end within a bound on every feasible path, else the run
  stops (:class:`InterpError`) naming the loop's file:line and why the summary cannot take
  it: never a result that assumed the loop ended.  A ``for`` loop's declared index (``for
  (int i = 2; ...)``) is scoped to the loop (6.8.5p5): after it, the name is what it was
  before (another variable it hid, or nothing).  The index may have any integer type; the
  condition compares it in the usual arithmetic conversions' common type with the bound
  (6.3.1.8), and its increments convert back to its type (6.5.16.2, 6.3.1.3).
* **goto** (6.8.6.1) to a label later in an enclosing block: the states that jump are
  carried (:attr:`~equiv.zone_device.source.cstate.Outcome.goto`) up to the block that
  holds the label and joined there with the state that reaches it in sequence.  A jump
  backwards or into a block never finds its label and stops the run.
* **Struct copies**: assignment of a struct (6.5.16.1p2: the value of the right operand
  replaces the object's; ``*page = *template``, ``template = *page``), a struct local
  initialised from another (6.7.9p13) and a struct argument passed by value (6.5.2.2p7,
  each parameter a new object holding the argument's value).  Each copies every byte of
  the object, padding included, with its provenance, as ``memcpy`` of ``sizeof`` would:
  C leaves the padding's value after an assignment unspecified (6.2.6.1p6), GCC copies
  the whole object.  Only an object may be copied (a struct local, ``*p``, ``p->member``,
  ``p[i]``, of the same struct type); a struct returned by a function is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import z3
from attrs import evolve

from equiv.engine import bv
from equiv.engine.bv import CBV, Cond, Val
from equiv.linux.ktree import Node, child, text
from equiv.memmap import Scenario
from equiv.page_model import PageState
from equiv.zone_device.source.cint import INT, IntType, common_type, convert
from equiv.zone_device.source.cloops import LoopParts, LoopShape, first_tested, loop_parts, loop_shape
from equiv.zone_device.source.cstate import (
    CCond,
    CInt,
    Frame,
    InterpError,
    Loc,
    Outcome,
    Ptr,
    Slot,
    State,
    Value,
)
from equiv.zone_device.source.csummary import CONCRETE_UNROLL, Interprets, LoopSummary

#: Most iterations of one loop on one path.
MAX_TRIPS = 300
#: the trusted-helper key under which a run reports that it copied a struct whole
STRUCT_COPY = "struct assignment, struct argument by value"
#: the same bound for a loop the summaries cannot follow, in a run that summarises loops
MAX_TRIPS_SUMMARISED = 32
#: and for such a loop whose body summarises loops: each unrolled iteration then stacks a
#: summary's layers on the state, and 32 of them took minutes and gigabytes (6.12.117 with
#: the backport's patches 1-2 and seeded bug 08: its heads loop over compounds, the old
#: tail loop summarised in each); the run ends sooner, in the same InterpError (an UNKNOWN
#: of the summarised proof, then the bounded search)
MAX_TRIPS_NESTED = 8


class Host(Interprets, Protocol):
    """The interpreter as these statements call it back
    (:class:`equiv.zone_device.source.cinterp.Interp` is one)."""

    #: summarise loops instead of unrolling them
    summarise: bool
    #: iterations of a summarised loop run as written before its summary: at most (and, in
    #: the concrete domain, exactly) this many
    peel: int
    #: the fewest iterations a summarised loop is peeled in the symbolic domain
    peel_least: int
    #: the fewest iterations each summarised loop ("file:line function") was peeled
    peeled: dict[str, int]
    sc: Scenario
    #: loops summarised: "file:line function"
    summarised: set[str]
    #: loop summaries made so far
    summaries: int
    #: the trusted helpers (and modelling choices) the run used
    trusted_used: set[str]

    def expr(self, frame: Frame, node: Node, state: State) -> tuple[State, Value]:
        """The value of the expression ``node`` and the state after it."""
        ...

    def lvalue(self, frame: Frame, node: Node, state: State) -> tuple[State, Loc]:
        """The object the expression ``node`` designates."""
        ...

    def split(self, state: State, c: Cond, check: str = "") -> tuple[State | None, State | None]:
        """The state under ``c`` and under ``!c`` (None: infeasible)."""
        ...

    def as_cond(self, v: Value) -> Cond:
        """A C value as a truth value."""
        ...

    def address_of(self, loc: Loc, state: State | None = None) -> Ptr:
        """A pointer to the object ``loc``."""
        ...

    def loc_size(self, loc: Loc, state: State) -> int:
        """The size in bytes of the object ``loc``."""
        ...

    def copy_bytes(self, dst: Ptr, src: Ptr | None, fill: Val | None, n: int, state: State,
                   step: str) -> State:
        """``memcpy(dst, src, n)`` with provenance ``step``."""
        ...

    def stack_init(self, slot: str, size: int) -> PageState:
        """The bytes of a struct local before it is written."""
        ...

    def sizeof_type(self, ctype: str) -> int | None:
        """``sizeof`` of a type name; None if not known."""
        ...

    def int_type(self, ctype: str) -> IntType | None:
        """The width and signedness of an integer type name (clang's); None for another."""
        ...

    def operator_type(self, frame: Frame, node: Node) -> IntType | None:
        """The type clang computes binary expression ``node`` in; None if not known."""
        ...

    def slot_size(self, slot: str, state: State) -> int:
        """The size of the struct local in stack slot ``slot``."""
        ...


def const_of(v: Val) -> int | None:
    """The value of a constant (concrete, or a z3 numeral); None if symbolic."""
    if isinstance(v, CBV):
        return v.value
    s = z3.simplify(v)
    return s.as_long() if z3.is_bv_value(s) else None


def step_text(frame: Frame, node: Node) -> str:
    """A store's provenance: the file, line and text of the statement."""
    return f"{frame.at(node)}: {' '.join(text(frame.src, node).split())[:70]}"


# ---- loops --------------------------------------------------------------------------------


def run_loop(it: Host, frame: Frame, node: Node, state: State) -> Outcome:
    """A ``for``, ``while`` or ``do`` statement: the states leaving it."""
    loop = loop_parts(node)
    out = Outcome()
    declared: dict[str, tuple[str, Value] | None] = {}
    if loop.init is not None:
        if loop.init.type == "declaration":
            for d in loop.init.children_by_field_name("declarator"):
                name = declared_name(frame.src, d)
                declared[name] = state.env.get(name)
            state = it.stmt(frame, loop.init, evolve(
                state, env={n: v for n, v in state.env.items() if n not in declared})).normal[0]
        else:
            state, _ = it.expr(frame, loop.init, state)
    exits: list[State] = []
    shape = loop_shape(frame.src, loop) if it.summarise else "loops are unrolled in this run"
    untested = loop.kind == "do"
    if isinstance(shape, str):
        # a concrete run's loop ends by itself; a symbolic one must end within the bound
        # (a smaller one where loops are summarised: a loop of that run that the summary
        # cannot follow is one over pfns, whose unrolling would only end at the bound)
        bound = (MAX_TRIPS_SUMMARISED if it.summarise else MAX_TRIPS) \
            if it.symbolic else 1 << 62
        made = it.summaries
        cur = trips(it, frame, loop, state, min(bound, MAX_TRIPS_NESTED), out, exits, untested)
        if cur is not None and it.summarise and it.symbolic and it.summaries > made:
            raise InterpError(f"{frame.at(node)}: {loop.kind} loop in {frame.fn} may run more "
                              f"than {MAX_TRIPS_NESTED} times under the assumptions (the loop "
                              f"summary cannot take it: {shape}; its body summarises loops, "
                              f"so it is unrolled at most {MAX_TRIPS_NESTED} times)")
        if cur is not None and bound > MAX_TRIPS_NESTED:
            cur = trips(it, frame, loop, cur, bound - MAX_TRIPS_NESTED, out, exits)
        if cur is not None:
            why = f" (the loop summary cannot take it: {shape})" if it.summarise else ""
            raise InterpError(f"{frame.at(node)}: {loop.kind} loop in {frame.fn} may run more "
                              f"than {bound} times under the assumptions{why}")
    else:
        after = peeled_summary(it, frame, loop, shape, state, out, exits, untested)
        if after is not None:
            exits.append(after)
    if exits:
        out.normal.append(it.merge(exits))
    if declared:
        out.normal = [_unscope(st, declared) for st in out.normal]
        out.goto = [(lb, _unscope(st, declared)) for lb, st in out.goto]
    return out


def _unscope(st: State, declared: dict[str, tuple[str, Value] | None]) -> State:
    """``st`` with the names a ``for`` declared back to what they were before it."""
    env = {n: v for n, v in st.env.items() if n not in declared}
    env.update({n: v for n, v in declared.items() if v is not None})
    return evolve(st, env=env)


def trips(it: Host, frame: Frame, loop: LoopParts, state: State, n: int, out: Outcome,
          exits: list[State], untested: bool = False) -> State | None:
    """Run up to ``n`` iterations as written (the first without its test if ``untested``:
    a ``do`` loop's); the state entering the next one (its test not yet evaluated), or
    None if every path has left the loop.  States leaving by the test or ``break`` go to
    ``exits``, by ``return`` or ``goto`` to ``out``."""
    cur: State | None = state
    for i in range(n):
        if cur is None:
            break
        if loop.cond is not None and not (untested and i == 0):
            cur, cv = it.expr(frame, loop.cond, cur)
            yes, no = it.split(cur, it.as_cond(cv), check="yn")
        else:
            yes, no = cur, None
        if no is not None:
            exits.append(no)
        if yes is None:
            return None
        o = it.guarded(lambda s2: it.stmt(frame, loop.body, s2), yes)
        out.jumps(o)
        exits += o.brk
        nxt = o.normal + o.cont
        if not nxt:
            return None
        cur = it.merge(nxt)
        if loop.update is not None:
            cur, _ = it.expr(frame, loop.update, cur)
    return cur


def peeled_summary(it: Host, frame: Frame, loop: LoopParts, shape: LoopShape, state: State,
                   out: Outcome, exits: list[State], untested: bool) -> State | None:
    """A loop the summary can follow, entered in ``state``: its first iterations run as
    written, the rest summarised (:func:`summarised`); the state after the summary, or None
    (every path left the loop within the peeled iterations, or a concrete run ran it as
    written).

    How many are peeled: in the concrete domain (a counterexample's replay) always
    ``it.peel``; in the symbolic domain as few as the summary can follow, from
    ``it.peel_least`` (at least one for a ``do`` loop, whose first iteration runs without
    its test, and for a loop whose body tests for its first value, :func:`first_tested`)
    up to ``it.peel``: a summary that stops the run (:class:`InterpError`, e.g. the
    first tail of a 6.12 compound writes page[2] through ``prep_compound_head()``, which
    the summary from iteration 0 cannot tell apart from the next iteration's page) is
    dropped with what it recorded, one more iteration runs as written, and the rest is
    summarised again.  Sound at any count: every summary rests on its lemmas, proved
    before any verdict; peeling fewer iterations only means fewer paths and page roles to
    decide (measured: the backport series' cells about 2x faster than with two peeled).
    A replay may peel more than its proof did: a summary from a later iteration follows
    the loop wherever one from an earlier iteration does (the earlier one's frame lemmas
    show the peeled iterations write their own blocks only)."""
    most = it.peel
    least = max(it.peel_least, 1 if untested or first_tested(frame.src, loop, shape.var) else 0)
    n = most if not it.symbolic else min(least, most)
    cur = trips(it, frame, loop, state, n, out, exits, untested)
    while cur is not None:
        made = len(it.lemmas)
        try:
            after = summarised(it, frame, loop, shape, cur, out, exits)
            if after is not None:
                where = f"{frame.at(loop.node)} {frame.fn}"
                it.peeled[where] = min(n, it.peeled.get(where, n))
            return after
        except InterpError:
            if n >= most:
                raise
            del it.lemmas[made:]  # the dropped summary's (its inner loops')
        cur = trips(it, frame, loop, cur, 1, out, exits, untested and n == 0)
        n += 1
    return None


def summarised(it: Host, frame: Frame, loop: LoopParts, shape: LoopShape, cur: State,
               out: Outcome, exits: list[State]) -> State | None:
    """The state after the rest of a loop, entered in ``cur`` before a test (see
    :mod:`equiv.zone_device.source.csummary`); None if a concrete run ran it as written."""
    where = frame.at(loop.node)
    entry = cur
    if shape.pre is not None:  # the condition's increment, before its first comparison
        cur, _ = it.expr(frame, shape.pre, cur)
    v = cur.env.get(shape.var)
    index = it.int_type(v[0]) if v is not None else None
    if v is None or not isinstance(v[1], CInt) or index is None:
        raise InterpError(f"{where}: loop variable {shape.var} is not of an integer type "
                          "(the summary needs one)")
    lo = v[1].v
    _, hv = it.expr(frame, shape.bound, cur)
    if not isinstance(hv, CInt | CCond):
        raise InterpError(f"{where}: the bound of loop variable {shape.var} is not an integer")
    bound = hv.ctype if isinstance(hv, CInt) else INT
    cmp_clang = it.operator_type(frame, shape.bound.parent) if shape.bound.parent else None
    if cmp_clang is not None and cmp_clang != common_type(index, bound):
        raise InterpError(f"{where}: clang compares {shape.var} with its bound as {cmp_clang}, "
                          f"the summary as {common_type(index, bound)}")
    hi = it.as_int(hv)
    log2: z3.BitVecRef | None = None
    if shape.step is None:
        step: int | None = 1
    else:
        _, sv = it.expr(frame, shape.step, cur)
        step = const_of(it.as_int(sv))
        if step is None:
            log2 = class_stride(it, it.as_int(sv), cur.pc)
            step = 0 if log2 is None else 1
    if step is None or step <= 0:
        raise InterpError(f"{where}: loop step is not a positive constant")
    if not it.symbolic:  # a concrete replay runs a short loop as written
        cmp = common_type(index, bound)
        lo_c, hi_c = convert(lo, index, cmp), convert(hi, bound, cmp)
        a, z = (hi_c, lo_c) if shape.down else (lo_c, hi_c)  # low end first
        below = bv.c_slt(a, z) if cmp[1] else bv.ult(a, z)
        span = const_of(bv.ite(below, z - a, it.c64(0)))
        if span is not None and span // step <= CONCRETE_UNROLL:
            rest = trips(it, frame, loop, entry, CONCRETE_UNROLL + 2, out, exits)
            assert rest is None
            return None
    summary = LoopSummary(it, frame, loop.node, shape, cur, lo, hi, step, log2, index=index,
                          bound=bound)
    it.summarised.add(f"{where} {frame.fn}")
    it.summaries += 1
    return summary.exit_state()


def class_stride(it: Host, step: Val, pc: Cond) -> z3.BitVecRef | None:
    """For a loop whose step is not a constant: in an order class (symbolic domain,
    with an oracle), the class's symbolic order if the step is proved equal to the
    compound size ``1 << order`` wherever the loop runs (the step of the loop over a
    range's compounds, ``pfns_per_compound``), else None."""
    if not (it.sc.is_class and it.symbolic and it.oracle is not None):
        return None
    log2 = it.sc.order_v
    stride = it.sc.stride_v
    assert isinstance(log2, z3.BitVecRef) and isinstance(stride, z3.BitVecRef)
    if not isinstance(step, z3.BitVecRef) or step.size() != 64:
        return None
    try:
        if it.oracle.feasible(bv.and_(pc, step != stride)):
            return None
    except InterpError:  # undecided: no summary (an error below)
        return None
    return log2


# ---- goto ---------------------------------------------------------------------------------


def goto(frame: Frame, node: Node, state: State) -> Outcome:
    """``goto label;``: the state leaves every statement up to the block holding the label."""
    out = Outcome()
    out.goto.append((text(frame.src, child(node, "label")), state))
    return out


def at_label(it: Host, frame: Frame, node: Node, cur: State | None,
             out: Outcome) -> tuple[State | None, Node]:
    """Reaching ``label: stmt`` in a block whose statements so far left ``out``: the join
    of the state reaching it in sequence (``cur``) and those that jumped to it (taken out
    of ``out.goto``); and the labelled statement."""
    while node.type == "labeled_statement":
        label = text(frame.src, child(node, "label"))
        came = [st for lb, st in out.goto if lb == label]
        out.goto = [(lb, st) for lb, st in out.goto if lb != label]
        states = ([cur] if cur is not None else []) + came
        cur = it.merge(states) if states else None
        node = node.named_children[-1]
    return cur, node


def unresolved(fn: str, where: str, out: Outcome) -> None:
    """Raise if a ``goto`` of the function ``fn`` found no label later in a block that
    encloses it."""
    if out.goto:
        labels = ", ".join(sorted({lb for lb, _ in out.goto}))
        raise InterpError(f"{where}: goto {labels} in {fn}: no such label later in an "
                          "enclosing block (a backward goto, or one into a block, is not "
                          "modelled)")


# ---- struct copies ------------------------------------------------------------------------


def is_aggregate(ctype: str) -> bool:
    """Is ``ctype`` a struct or union type (an object copied whole), not a pointer?
    (``atomic_t`` and ``atomic_long_t``, structs of one counter, are read as integers.)"""
    ct = " ".join(w for w in ctype.split() if w not in ("const", "volatile"))
    return ct.startswith(("struct ", "union ")) and not ct.endswith("*")


def same_type(a: str, b: str) -> bool:
    """Do the type names denote the same type, qualifiers aside?"""
    def norm(t: str) -> str:
        return " ".join(w for w in t.split() if w not in ("const", "volatile"))
    return norm(a) == norm(b)


def struct_object(it: Host, frame: Frame, node: Node, state: State) -> tuple[State, Ptr, int]:
    """The struct object the expression ``node`` designates, as a pointer to it and its
    size: a struct local, ``*p``, ``p->member``, ``s.member`` or ``p[i]``.

    Raises:
        InterpError: any other expression (a call returning a struct, a compound literal).
    """
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "identifier" and text(frame.src, node) in frame.macro_args:
        lz = frame.macro_args[text(frame.src, node)]
        return struct_object(it, lz.frame, lz.node, state)
    ok = node.type in ("identifier", "field_expression", "subscript_expression") or (
        node.type == "pointer_expression" and node.children[0].type == "*")
    if not ok:
        raise InterpError(f"{frame.at(node)}: struct value {text(frame.src, node)[:50]!r} "
                          "not modelled (a struct object is: a struct local, *p, p->member, "
                          "p[i])")
    state, loc = it.lvalue(frame, node, state)
    if loc.kind == "var":
        v = state.env[loc.name][1]
        if not isinstance(v, Slot):
            raise InterpError(f"{frame.at(node)}: {loc.name} is not a struct")
    elif not is_aggregate(loc.ctype):
        raise InterpError(f"{frame.at(node)}: {text(frame.src, node)[:50]!r} is not a struct "
                          f"({loc.ctype})")
    return state, it.address_of(loc, state), it.loc_size(loc, state)


def copy_struct(it: Host, frame: Frame, node: Node, dst: Loc, src: Node,
                state: State) -> tuple[State, Value]:
    """``dst = src`` for a struct: every byte of the object ``src`` designates copied into
    ``dst`` (``node`` is the statement, for the provenance)."""
    size = it.loc_size(dst, state)
    to = it.address_of(dst, state)
    state, frm, n = struct_object(it, frame, src, state)
    if not same_type(to.ctype, frm.ctype) or n != size:
        raise InterpError(f"{frame.at(node)}: struct assignment of a {frm.ctype} ({n} bytes) "
                          f"to a {to.ctype} ({size} bytes)")
    it.trusted_used.add(STRUCT_COPY)
    return it.copy_bytes(to, frm, None, size, state, step_text(frame, node)), to


def new_slot(it: Host, state: State, slot: str, ctype: str, size: int,
             name: str, full: str) -> State:
    """``state`` with a struct local ``name`` of type ``ctype`` in stack slot ``slot``, its
    bytes arbitrary (:meth:`Host.stack_init`)."""
    return evolve(state, env={**state.env, name: (full, Slot(slot, ctype))},
                  stack={**state.stack, slot: it.stack_init(slot, size)})


def struct_arg(it: Host, slot: str, ctype: str, arg: Callable[[State], tuple[State, Value]],
               node: Node | None, site: tuple[Frame, Node] | str,
               state: State) -> tuple[State, Value]:
    """A parameter of struct type ``ctype`` passed by value, as stack slot ``slot``: a new
    object holding the argument's bytes (:func:`pass_struct`).  At a call site (``site``
    the caller's frame and call, ``node`` the argument) the argument must designate a
    struct object (:func:`struct_object`); called from Python (``site`` the function's
    file:line), a struct local or a pointer to the struct."""
    if not isinstance(site, str) and node is not None:
        where = site[0].at(site[1])
        state, src, size = struct_object(it, site[0], node, state)
    else:
        where = site if isinstance(site, str) else site[0].at(site[1])
        state, v = arg(state)
        got = it.sizeof_type(v.ctype) if isinstance(v, Ptr) else None
        if isinstance(v, Slot):
            src, size = Ptr("local", v.ctype, obj=v.slot), it.slot_size(v.slot, state)
        elif isinstance(v, Ptr) and got is not None:
            src, size = v, got
        else:
            raise InterpError(f"{where}: struct argument {slot} is not a struct")
    return pass_struct(it, state, slot, ctype, src, size, where)


def pass_struct(it: Host, state: State, slot: str, ctype: str, src: Ptr, size: int,
                where: str) -> tuple[State, Slot]:
    """A struct argument passed by value to a parameter of type ``ctype``: a new object
    (stack slot ``slot``) holding a copy of the ``size`` bytes ``src`` points to."""
    if not same_type(src.ctype, ctype) or src.region not in ("page", "local"):
        raise InterpError(f"{where}: a {src.ctype} passed as a {ctype}")
    it.trusted_used.add(STRUCT_COPY)
    state = evolve(state, stack={**state.stack, slot: it.stack_init(slot, size)})
    state = it.copy_bytes(Ptr("local", ctype, obj=slot), src, None, size, state,
                          f"{where}: argument passed by value")
    return state, Slot(slot, ctype)


def declared_name(src: bytes, d: Node) -> str:
    """The name a declarator declares."""
    while d.type != "identifier":
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            raise InterpError(f"declarator {text(src, d)!r} not supported")
        d = nxt
    return text(src, d)


def scoped(before: dict[str, tuple[str, Value]]) -> Callable[[State], State]:
    """The end of a block's scope (C11 6.2.1p4): the names declared in it are dropped."""
    def end(st: State) -> State:
        if all(n in before for n in st.env):
            return st
        return evolve(st, env={n: v for n, v in st.env.items() if n in before})
    return end


__all__ = ["MAX_TRIPS", "MAX_TRIPS_NESTED", "MAX_TRIPS_SUMMARISED", "STRUCT_COPY", "Host",
           "at_label", "class_stride", "const_of",
           "copy_struct", "declared_name", "goto", "is_aggregate", "new_slot",
           "pass_struct", "run_loop", "same_type", "scoped", "step_text", "struct_arg", "struct_object",
           "summarised", "trips", "unresolved"]

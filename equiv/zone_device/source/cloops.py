"""The syntax of a C loop the interpreter may summarise: its parts and its shape.

:func:`loop_parts` splits a ``for``, ``while`` or ``do`` statement (C11 6.8.5) of the
tree-sitter tree into its parts; :func:`loop_shape` decides whether the loop has the shape
:class:`equiv.zone_device.source.csummary.LoopSummary` can follow (one variable stepped by a
constant once per iteration towards a bound the body does not change, no exit from the
body: the conditions are listed in :mod:`equiv.zone_device.source.csummary`) and returns
that shape, or the reason it has none; :func:`first_tested` says whether the body tests
the variable for its first value (where a summary starts after one peeled iteration).
Purely syntactic: no z3 and no memory here.
"""

from __future__ import annotations

from attrs import frozen

from equiv.linux.ktree import Node, text
from equiv.zone_device.source.cstate import InterpError


@frozen
class LoopParts:
    """A loop statement's parts: ``for (init; cond; update) body``, ``while (cond) body`` or
    ``do body while (cond);`` (C11 6.8.5)."""

    kind: str  # "for", "while", "do"
    node: Node
    init: Node | None
    cond: Node | None
    update: Node | None
    body: Node


def loop_parts(node: Node) -> LoopParts:
    """The parts of a ``for_statement``, ``while_statement`` or ``do_statement``."""
    kind = {"for_statement": "for", "while_statement": "while", "do_statement": "do"}[node.type]
    body = node.child_by_field_name("body")
    if body is None:
        raise InterpError(f"a {kind} loop without a body")
    return LoopParts(kind, node, node.child_by_field_name("initializer"),
                     node.child_by_field_name("condition"),
                     node.child_by_field_name("update"), body)


@frozen
class LoopShape:
    """A loop the summary can follow: iteration ``k`` runs ``body`` with ``var`` at
    ``lo + k * step`` while ``var < bound`` (``op`` ``<=``: ``var <= bound``; ``!=``:
    ``var != bound``); with ``down``, ``var`` at ``lo - k * step`` while ``var > bound``
    (``>=``, ``!=``).  The step is taken in one place:
    the ``for`` update, the last statement of the body (``while (v < n) { ...; v++; }``,
    run with the body, its effect on ``var`` then replaced by the next iteration's value) or
    the condition itself (``pre``: ``do ... while (++v < n)``, evaluated once before the
    summary starts, then before each test)."""

    var: str
    op: str  # "<", "<=" or "!=" (falling: ">", ">=" or "!=")
    bound: Node  # right side of the condition
    step: Node | None  # None: ``v++`` / ``++v``
    body: Node
    #: identifiers the body assigns, increments or takes the address of
    assigned: frozenset[str]
    #: the increment inside the condition (``++v`` of ``++v < n``), if that is the step
    pre: Node | None = None
    #: the variable falls (``v--``, ``v -= S``) to its bound
    down: bool = False


def _walk(node: Node) -> list[Node]:
    out = [node]
    for c in node.children:
        out += _walk(c)
    return out


def _ident(src: bytes, node: Node | None) -> str | None:
    while node is not None and node.type == "parenthesized_expression":
        node = node.named_children[-1] if node.named_children else None
    return text(src, node) if node is not None and node.type == "identifier" else None


def _text(src: bytes, node: Node | None) -> str:
    return text(src, node) if node is not None else ""


def _bare(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[-1]
    return node


_LOOPS = ("for_statement", "while_statement", "do_statement")


def _labels(src: bytes, node: Node) -> set[str]:
    return {_text(src, n.child_by_field_name("label")) for n in _walk(node)
            if n.type == "labeled_statement"}


def _escapes(src: bytes, node: Node, inner: set[str] | None = None) -> bool:
    """Does ``node`` (a loop's body) hold a ``return``, a ``goto`` to a label outside it, or
    a ``break`` that leaves the loop?"""
    if inner is None:
        inner = _labels(src, node)
    for c in node.children:
        if c.type == "return_statement":
            return True
        if c.type == "goto_statement":
            if _text(src, c.child_by_field_name("label")) not in inner:
                return True
            continue
        if c.type == "break_statement":
            return True
        if c.type in (*_LOOPS, "switch_statement"):
            if any(d.type == "return_statement" or (d.type == "goto_statement" and _text(
                    src, d.child_by_field_name("label")) not in inner) for d in _walk(c)):
                return True
            continue
        if _escapes(src, c, inner):
            return True
    return False


def _continues(node: Node) -> bool:
    """Does ``node`` hold a ``continue`` of the loop whose body it is?"""
    for c in node.children:
        if c.type == "continue_statement":
            return True
        if c.type not in _LOOPS and _continues(c):
            return True
    return False


def increment(src: bytes, node: Node | None,
              prefix: bool = False) -> tuple[str, Node | None] | None:
    """``(v, step)`` if ``node`` adds a step to the variable ``v``: ``v++``, ``++v`` (step
    None: 1), ``v += S`` or ``v = v + S`` (step ``S``); with ``prefix``, only those whose
    value is the new one (not ``v++``); else None."""
    got = stepping(src, node, prefix)
    return None if got is None or got[2] else (got[0], got[1])


def stepping(src: bytes, node: Node | None,
             prefix: bool = False) -> tuple[str, Node | None, bool] | None:
    """``(v, step, down)`` if ``node`` adds a step to the variable ``v`` (``down`` False:
    ``v++``, ``++v``, ``v += S``, ``v = v + S``) or takes one from it (``down`` True:
    ``v--``, ``--v``, ``v -= S``, ``v = v - S``); ``step`` None stands for 1.  With
    ``prefix``, only those whose value is the new one (not ``v++``); else None."""
    node = _bare(node)
    if node is None:
        return None
    if node.type == "expression_statement" and node.named_children:
        node = _bare(node.named_children[0])
        assert node is not None
    if node.type == "update_expression":
        var = _ident(src, node.child_by_field_name("argument"))
        op = _text(src, node.child_by_field_name("operator"))
        if var is None or op not in ("++", "--"):
            return None
        if prefix and node.children[0].type != op:
            return None
        return var, None, op == "--"
    if node.type != "assignment_expression":
        return None
    var = _ident(src, node.child_by_field_name("left"))
    op = _text(src, node.child_by_field_name("operator"))
    right = node.child_by_field_name("right")
    if var is None or right is None:
        return None
    if op in ("+=", "-="):
        return var, right, op == "-="
    r = _bare(right)
    if op == "=" and r is not None and r.type == "binary_expression" and \
            _text(src, r.child_by_field_name("operator")) in ("+", "-") and \
            _ident(src, r.child_by_field_name("left")) == var:
        return var, r.child_by_field_name("right"), \
            _text(src, r.child_by_field_name("operator")) == "-"
    return None


def _last_statement(body: Node) -> Node | None:
    if body.type != "compound_statement":
        return body
    kids = [c for c in body.named_children if c.type != "comment"]
    return kids[-1] if kids else None


#: a comparison seen from its other side (``hi > v`` is ``v < hi``)
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
#: the comparisons that continue a loop rising (``v++``) or falling (``v--``) to its bound,
#: by the summary's name for them: ``<`` (strict), ``<=`` (inclusive), ``!=`` (up to it)
_UP = {"<": "<", "<=": "<=", "!=": "!="}
_DOWN = {">": "<", ">=": "<=", "!=": "!="}


def first_tested(src: bytes, loop: LoopParts, var: str) -> bool:
    """Does the body test whether the loop variable is still its first value: ``for (v = e;
    ...)`` whose body holds ``v == e`` or ``e == v`` (the same text, spaces aside)?  Such a
    first iteration is not like the others (6.12's tail loop: ``if (pfn == head_pfn + 1)
    prep_compound_head(head, order);``), so a symbolic run does not try to summarise the
    loop from it (:func:`~equiv.zone_device.source.cstmt.peeled_summary`); only a matter
    of speed, the lemmas decide either way."""
    init = loop.init
    if init is None:
        return False
    if init.type == "expression_statement" and init.named_children:
        init = init.named_children[0]
    if init.type == "assignment_expression":
        left, first = init.child_by_field_name("left"), init.child_by_field_name("right")
    elif init.type == "declaration":
        ds = [d for d in init.children_by_field_name("declarator")
              if d.type == "init_declarator"]
        if len(ds) != 1:
            return False
        left, first = ds[0].child_by_field_name("declarator"), ds[0].child_by_field_name("value")
    else:
        return False
    if _ident(src, left) != var or first is None:
        return False

    def norm(n: Node) -> str:
        return "".join(text(src, n).split())

    want = norm(first)
    for n in _walk(loop.body):
        if n.type != "binary_expression" or n.child_by_field_name("operator") is None:
            continue
        op = n.child_by_field_name("operator")
        if op is None or text(src, op) != "==":
            continue
        a, b = n.child_by_field_name("left"), n.child_by_field_name("right")
        if a is None or b is None:
            continue
        if (_ident(src, a) == var and norm(b) == want) or \
                (_ident(src, b) == var and norm(a) == want):
            return True
    return False


def loop_shape(src: bytes, loop: LoopParts) -> LoopShape | str:
    """The loop's shape if the summary can follow it, else why not (it is then unrolled)."""
    cond = _bare(loop.cond)
    if cond is None:
        return "it has no condition"
    bad = "its condition is not 'v < bound', 'v <= bound', 'v > bound', 'v >= bound' or " \
        "'v != bound' (either way round)"
    op0 = _text(src, cond.child_by_field_name("operator"))
    if cond.type != "binary_expression" or op0 not in _MIRROR:
        return bad
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    reasons: list[tuple[bool, str]] = []  # (the side's variable is stepped, why not)
    for side, bound, op in ((left, right, op0), (right, left, _MIRROR[op0])):
        if side is None or bound is None:
            continue
        got = _stepped_shape(src, loop, side, bound, op)
        if isinstance(got, LoopShape):
            return got
        if got[1]:
            reasons.append(got)
    # why not, for the side whose variable the loop steps, else for the side written first
    return next((w for stepped, w in reasons if stepped), reasons[0][1] if reasons else bad)


def _stepped_shape(src: bytes, loop: LoopParts, side: Node, bound: Node,
                   op: str) -> LoopShape | tuple[bool, str]:
    """The shape of a loop whose condition is ``side op bound``, ``side`` being the loop
    variable or its prefix step (``++v``); else whether the loop steps that variable at all
    and why the summary cannot take it ("" if ``side`` is not a variable)."""
    pre = stepping(src, side, prefix=True)
    var = pre[0] if pre is not None else _ident(src, side)
    if var is None:
        return False, ""
    up = stepping(src, loop.update) if loop.update is not None else None
    last = _last_statement(loop.body)
    tail = stepping(src, last) if last is not None else None
    stepped = pre is not None or any(x is not None and x[0] == var for x in (up, tail))
    steps: list[tuple[Node | None, Node | None, bool]] = []  # (step, statement, down)
    if pre is not None:
        steps.append((pre[1], None, pre[2]))
    if loop.update is not None:
        if up is None or up[0] != var:
            return stepped, f"its update is not a constant step of {var}"
        steps.append((up[1], None, up[2]))
    if tail is not None and tail[0] == var:
        steps.append((tail[1], last, tail[2]))
    if len(steps) != 1:
        return stepped, f"{var} is not stepped exactly once per iteration"
    step, trailing, down = steps[0]
    dir_op = (_DOWN if down else _UP).get(op)
    if dir_op is None:
        return True, f"{var} {'falls' if down else 'rises'} but the condition is '{var} {op} bound'"
    op = dir_op
    if _escapes(src, loop.body):
        return True, "the body leaves it by break, return or goto"
    if trailing is not None and _continues(loop.body):
        return True, "the body continues past its step"
    assigned: set[str] = set()
    for n in _walk(loop.body):
        if trailing is not None and trailing.start_byte <= n.start_byte < trailing.end_byte:
            continue
        if n.type == "assignment_expression":
            name = _ident(src, n.child_by_field_name("left"))
        elif n.type == "update_expression":
            name = _ident(src, n.child_by_field_name("argument"))
        elif n.type == "pointer_expression" and n.children and n.children[0].type == "&":
            name = _ident(src, n.child_by_field_name("argument"))
        else:
            continue
        if name is not None:
            assigned.add(name)
    if var in assigned:
        return True, f"the body changes {var}"
    for n in [bound, *([step] if step is not None else [])]:
        for m in _walk(n):
            if m.type == "call_expression" or (m.type == "identifier" and
                                               text(src, m) in assigned | {var}):
                return True, "its bound or step may change in the loop"
    return LoopShape(var, op, bound, step, loop.body, frozenset(assigned),
                     _bare(side) if pre is not None else None, down)


__all__ = ["LoopParts", "LoopShape", "first_tested", "increment", "loop_parts", "loop_shape",
           "stepping"]

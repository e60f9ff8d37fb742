"""Drift report: does a kernel tree still do what the model mirrors?

Each modelled function is reduced to its *effects* in kernel terms: one line per statement
(calls, field stores, declarations with their initialisers, ``if``/``else``, ``for`` and
``switch`` headers and their ends, ``return``), whitespace and comments dropped, the
preprocessor conditionals resolved for the configuration, and statements with no effect on
memory (``cond_resched()``, ``pr_debug()``, ``BUILD_BUG_ON()``, ``fallthrough``) left out.  The
effects of the tree are compared with the effects each model mirrors
(:mod:`equiv.zone_device.source.drift_tables`, kept beside the hand-written paths and checked against a real
tree by the source-derived proof): ``matches``, ``differs`` (with the first differing
statement on each side and its line in the tree) or ``missing``.  Structs and enums are
compared by member offsets and enumerator values.
"""

from __future__ import annotations

from collections.abc import Iterator

from attrs import frozen

from equiv.linux.ktree import (
    KernelTree,
    Node,
    Parent,
    Preprocessor,
    active_children,
    child,
    enum_values,
    text,
)
from equiv.page_model import Layout
from equiv.zone_device.source.drift_tables import TABLES
from equiv.zone_device.source.src_layout import SrcStruct, compare_with_model

#: statements that do not change memory and are left out of the effects
QUIET = ("cond_resched(", "pr_debug(", "BUILD_BUG_ON(", "fallthrough", "VM_BUG_ON")


@frozen
class Effect:
    """One normalised statement and its line in the tree (0 for a table entry)."""

    text: str
    line: int = 0


def _norm(s: str) -> str:
    return " ".join(s.split())


def effects(src: bytes, body: Node, env: Preprocessor) -> list[Effect]:
    """The effects of a function body (a compound statement), in order."""
    return list(_effects(src, body, env))


def _effects(src: bytes, node: Parent, env: Preprocessor) -> Iterator[Effect]:
    for c in active_children(src, node, env):
        t = c.type
        line = c.start_point[0] + 1
        if t in ("{", "}", "comment") or not c.is_named:
            continue
        if t == "compound_statement":
            yield from _effects(src, c, env)
        elif t in ("expression_statement", "declaration", "return_statement", "break_statement",
                   "continue_statement"):
            s = _norm(text(src, c))
            if not s.startswith(QUIET) and s != ";":
                yield Effect(s, line)
        elif t == "if_statement":
            yield Effect(f"if {_norm(text(src, child(c, 'condition')))}", line)
            yield from _stmt(src, child(c, "consequence"), env)
            alt = c.child_by_field_name("alternative")
            if alt is not None:
                yield Effect("else", alt.start_point[0] + 1)
                yield from _stmt(src, alt.named_children[0], env)
            yield Effect("end if", c.end_point[0] + 1)
        elif t == "for_statement":
            body = child(c, "body")
            head = _norm(text(src, c)[:body.start_byte - c.start_byte])
            yield Effect(head, line)
            yield from _stmt(src, body, env)
            yield Effect("end for", c.end_point[0] + 1)
        elif t == "switch_statement":
            yield Effect(f"switch {_norm(text(src, child(c, 'condition')))}", line)
            for case in active_children(src, child(c, "body"), env):
                if case.type != "case_statement":
                    continue
                label = case.child_by_field_name("value")
                yield Effect(f"case {_norm(text(src, label))}" if label is not None else "default",
                             case.start_point[0] + 1)
                for sub in case.named_children:
                    if sub != label:
                        yield from _stmt(src, sub, env)
            yield Effect("end switch", c.end_point[0] + 1)
        else:
            yield Effect(f"<{t}> {_norm(text(src, c))[:60]}", line)


def _stmt(src: bytes, node: Node, env: Preprocessor) -> Iterator[Effect]:
    from equiv.linux.ktree import Body

    yield from _effects(src, Body([node]), env)


@frozen
class DriftRow:
    """One modelled definition compared with the tree."""

    name: str
    kind: str  # "function", "struct", "enum"
    where: str | None  # file:line in the tree, or None (missing)
    verdict: str  # "matches", "differs", "missing"
    model_stmt: str = ""  # first differing statement: the model's ...
    tree_stmt: str = ""  # ... and the tree's
    tree_line: int = 0


@frozen
class DriftReport:
    """Every modelled definition of one model against one tree."""

    tree: str
    version: str
    model: str
    config: str
    rows: tuple[DriftRow, ...]
    assumed_undefined: tuple[str, ...]
    missing_files: tuple[str, ...]
    #: how the configuration's headers were made (:func:`~equiv.zone_device.source.prepared.as_prepared`)
    kbuild: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(r.verdict == "matches" for r in self.rows) and not self.missing_files


def compare_effects(model: tuple[str, ...], tree: list[Effect]) -> tuple[str, str, str, int]:
    """``(verdict, model statement, tree statement, tree line)`` of the first difference."""
    for i in range(max(len(model), len(tree))):
        m = model[i] if i < len(model) else "<end of function>"
        t = tree[i] if i < len(tree) else Effect("<end of function>", 0)
        if m != t.text:
            return "differs", m, t.text, t.line
    return "matches", "", "", 0


def _model_enums() -> dict[str, dict[str, int]]:
    """The enumerator values the model uses (memmap.MemoryType, page_model.PG_*)."""
    from equiv.memmap import MemoryType
    from equiv.page_model import PG_head, PG_reserved

    return {"memory_type": {t.kname: int(t) for t in MemoryType},
            "pageflags": {"PG_head": PG_head, "PG_reserved": PG_reserved}}


def drift_report(tree: KernelTree, env: Preprocessor, model: str, config: str,
                 layout: Layout | None = None,
                 structs: dict[str, SrcStruct] | None = None) -> DriftReport:
    """Compare every function tabled for ``model``, the model's struct page / folio layout
    (``layout``, against the tree's ``structs``) and the enumerators it uses with ``tree``."""
    table = TABLES[model]
    rows: list[DriftRow] = []
    for name, want in table.functions.items():
        d = tree.find(name, env, "function")
        if d is None or d.body is None:
            rows.append(DriftRow(name, "function", None, "missing"))
            continue
        got = effects(d.src, d.body, env)
        verdict, m, t, line = compare_effects(want, got)
        rows.append(DriftRow(name, "function", d.where, verdict, m, t, line))
    if layout is not None and structs is not None:
        rep = compare_with_model(layout, structs)
        for sname, prefix in (("page", "page"), ("folio", "folio")):
            bad = [r for r in rep.rows if r.struct.startswith(prefix) and r.verdict != "matches"]
            where = structs[sname].where
            if sname == "page" and rep.page_size[0] != rep.page_size[1]:
                rows.append(DriftRow("struct page", "struct", where, "differs",
                                     f"sizeof {rep.page_size[0]}", f"sizeof {rep.page_size[1]}"))
            elif bad:
                r = bad[0]
                rows.append(DriftRow(f"struct {sname}", "struct", where, "differs",
                                     f"{r.struct} {r.view} @{r.model[0]} size {r.model[1]}",
                                     f"{r.kernel_name} @{r.tree[0]} size {r.tree[1]}" if r.tree
                                     else f"no {r.view}"))
            else:
                rows.append(DriftRow(f"struct {sname}", "struct", where, "matches"))
    for ename, want_vals in _model_enums().items():
        d = tree.find(ename, env, "enum")
        if d is None:
            rows.append(DriftRow(f"enum {ename}", "enum", None, "missing"))
            continue
        vals = enum_values(tree, ename, env)
        verdict, m, t = "matches", "", ""
        for k, v in want_vals.items():
            if vals.get(k) != v:
                verdict, m, t = "differs", f"{k} = {v}", f"{k} = {vals.get(k, 'absent')}"
                break
        rows.append(DriftRow(f"enum {ename}", "enum", d.where, verdict, m, t))
    guards = {n for n in env.assumed_undefined if n.endswith(("_H", "_H_"))}
    return DriftReport(str(tree.root), tree.version, model, config, tuple(rows),
                       tuple(sorted(env.assumed_undefined - guards)), tree.missing_files)


__all__ = ["DriftReport", "DriftRow", "Effect", "compare_effects", "drift_report", "effects"]

"""Reading a kernel source tree: the files a caller names, parsed with tree-sitter-c.

``--linux PATH`` names a kernel tree (a checkout or an unpacked tarball).  Of it, only the
files the caller names are read (:meth:`KernelTree.load` takes the list; the zone-device
subject's is :data:`equiv.zone_device.source.files.FILES`); each is parsed with tree-sitter's C grammar,
which tolerates the kernel's macros (``__meminit``, ``__ref``, ``static_assert`` at file
scope, ...) without a preprocessor run.  Preprocessor conditionals (``#ifdef``, ``#if``,
``#else``, ``#elif``) are kept in the syntax tree and resolved here by a
:class:`Preprocessor` the caller gives: on the C path the compiler's own decisions
(:class:`equiv.linux.skipped.ClangBranches`, the lines clang skipped for the configuration),
so "the definition of ``page_cpupid_reset_last`` for this config" is one of several in
mm.h, picked as clang picked it.  :class:`MacroEnv` (a hand list of macros) remains for
readers of the hand models' own tables.

What is indexed: function definitions, function-like and object-like ``#define``\\ s,
``struct``/``union`` definitions and ``enum`` definitions, each with its file, line and the
preprocessor conditions around it.

No subject knowledge lives here: which files to read and which macros a configuration
defines are parameters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

import tree_sitter as ts
import tree_sitter_c as tsc
from attrs import define, field, frozen, setters

from equiv.engine.errors import InputError

#: Read too when present: the version numbers.
MAKEFILE = "Makefile"

Node = ts.Node


@cache
def parser() -> ts.Parser:
    """The tree-sitter C parser (one per process)."""
    return ts.Parser(ts.Language(tsc.language()))


def text(src: bytes, node: Node) -> str:
    """The source text of ``node``."""
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def child(node: Node, name: str) -> Node:
    """The child of ``node`` in field ``name``, for a field the grammar always fills in a
    node of this type (``child_by_field_name`` is None only for an absent optional field)."""
    c = node.child_by_field_name(name)
    assert c is not None, f"{node.type} without {name}"
    return c


class Parent(Protocol):
    """Anything with children: a syntax node or the taken branch of a conditional."""

    @property
    def children(self) -> list[Node]: ...


class Preprocessor(Protocol):
    """Who decides which branch of a preprocessor conditional is compiled.

    :meth:`taken` answers for one branch node (``preproc_if``, ``preproc_ifdef``,
    ``preproc_elif``, ``preproc_elifdef`` or ``preproc_else``) of the text ``src``, given
    that every earlier branch of its chain was not taken.  The C path's one is clang's
    (:class:`equiv.linux.skipped.ClangBranches`: the lines the compiler's preprocessor
    skipped); :class:`MacroEnv` is a hand list of macros, for readers of the hand models'
    own tables only.  ``assumed_undefined`` names what was guessed rather than decided
    (always empty for clang's)."""

    @property
    def assumed_undefined(self) -> set[str]: ...

    def taken(self, src: bytes, branch: Node) -> bool: ...


@define
class MacroEnv:
    """Which preprocessor macros are defined, and their values, for one configuration.

    ``values`` holds every macro that is defined (value 1 for a plain ``CONFIG_X=y``);
    a name not in it is undefined.  ``known`` lists the names the caller's configuration
    decides (defined or not).  Both are fixed at construction.

    Mutable on purpose: ``assumed_undefined`` grows on read.  Every :meth:`defined` (and so
    :meth:`value`) of a name outside ``known`` and ``values`` resolves it as undefined and
    adds it there, so after a pass over the tree the set holds every macro whose value was
    assumed rather than decided (the drift report prints it).  It is a record of this
    environment's reads, not a process-wide memo: build one environment per run, read the
    set after the pass, and note that a copy sent to a worker process grows there only.
    """

    values: dict[str, int] = field(on_setattr=setters.frozen)
    known: frozenset[str] = field(on_setattr=setters.frozen)
    #: grows on read: the names tested but not decided by the configuration
    assumed_undefined: set[str] = field(factory=set, eq=False)

    def defined(self, name: str) -> bool:
        """Is ``name`` defined?  A name the configuration does not decide is taken as
        undefined and recorded in ``assumed_undefined``."""
        if name not in self.known and name not in self.values:
            self.assumed_undefined.add(name)
        return name in self.values

    def value(self, name: str) -> int:
        """The value of ``name`` (0 when undefined, as cpp does)."""
        return self.values.get(name, 0) if self.defined(name) else 0

    def taken(self, src: bytes, branch: Node) -> bool:
        """Is ``branch`` taken (:class:`Preprocessor`), by evaluating its condition here."""
        t = branch.type
        if t in ("preproc_ifdef", "preproc_elifdef"):
            name = text(src, child(branch, "name"))
            neg = branch.children[0].type in ("#ifndef", "#elifndef")
            return self.defined(name) != neg
        if t in ("preproc_if", "preproc_elif"):
            return bool(eval_condition(src, child(branch, "condition"), self))
        return True  # preproc_else


# ---- preprocessor conditions ------------------------------------------------------------


def eval_condition(src: bytes, node: Node, env: MacroEnv) -> int:
    """Value of an ``#if`` expression: ``defined``, ``IS_ENABLED``, ``!``, ``&&``, ``||``,
    comparisons, integer literals and macro names (0 when undefined, as cpp does)."""
    t = node.type
    if t == "preproc_defined":
        ident = next(c for c in node.children if c.type == "identifier")
        return int(env.defined(text(src, ident)))
    if t == "number_literal":
        return int(text(src, node).rstrip("uUlL"), 0)
    if t == "identifier":
        return env.value(text(src, node))
    if t == "parenthesized_expression":
        return eval_condition(src, node.named_children[0], env)
    if t == "unary_expression":
        op = text(src, child(node, "operator"))
        v = eval_condition(src, child(node, "argument"), env)
        return {"!": int(not v), "-": -v, "~": ~v}[op]
    if t == "binary_expression":
        op = text(src, child(node, "operator"))
        a = eval_condition(src, child(node, "left"), env)
        if op == "&&":
            return int(bool(a) and bool(eval_condition(src, child(node, "right"), env)))
        if op == "||":
            return int(bool(a) or bool(eval_condition(src, child(node, "right"), env)))
        b = eval_condition(src, child(node, "right"), env)
        ops = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b,
               "+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b}
        return int(ops[op])
    if t == "call_expression":
        fn = text(src, child(node, "function"))
        args = child(node, "arguments").named_children
        if fn in ("IS_ENABLED", "IS_BUILTIN") and args:
            return int(env.defined(text(src, args[0])))
    raise InputError(f"cannot evaluate preprocessor condition {text(src, node)!r}; "
                     "valid: defined(X), IS_ENABLED(X), !, &&, ||, comparisons of macros")


def active_children(src: bytes, node: Parent, env: Preprocessor) -> Iterator[Node]:
    """The children of ``node`` with every preprocessor conditional replaced by the
    children of its branch taken under ``env`` (recursively)."""
    for c in node.children:
        if c.type in ("preproc_ifdef", "preproc_if"):
            body = taken_branch(src, c, env)
            if body is not None:
                yield from active_children(src, body, env)
        else:
            yield c


class Body:
    """A pseudo node: a list of children (the taken branch of a conditional)."""

    def __init__(self, children: list[Node]) -> None:
        self.children = children


def taken_branch(src: bytes, node: Node, env: Preprocessor) -> Body | None:
    """The children of the branch of ``#if/#ifdef ... #elif ... #else ... #endif`` taken."""
    cur: Node | None = node
    while cur is not None:
        alt = cur.child_by_field_name("alternative")
        if env.taken(src, cur):
            skip = {"name", "condition", "alternative"}
            kids = [c for i, c in enumerate(cur.children)
                    if cur.field_name_for_child(i) not in skip and c.type not in
                    ("#if", "#ifdef", "#ifndef", "#elif", "#elifdef", "#elifndef", "#else",
                     "#endif", "\n")]
            return Body(kids)
        cur = alt
    return None


# ---- the index ----------------------------------------------------------------------------


@frozen(eq=False)
class Definition:
    """One definition in the tree: a function, macro, struct/union or enum."""

    kind: str  # "function", "macro", "struct", "enum"
    name: str
    file: str
    line: int
    node: Node
    src: bytes
    #: the preprocessor conditions around it, outermost first: (node, taken-branch) pairs
    conds: tuple[tuple[Node, int], ...]

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def active(self, env: Preprocessor) -> bool:
        """Is this definition compiled under ``env``?"""
        for cond, idx in self.conds:
            branch: Node | None = cond
            k = 0
            chosen = None
            while branch is not None:
                if env.taken(self.src, branch):
                    chosen = k
                    break
                branch = branch.child_by_field_name("alternative")
                k += 1
            if chosen != idx:
                return False
        return True

    @property
    def body(self) -> Node | None:
        """A function's compound statement."""
        return self.node.child_by_field_name("body")

    @property
    def parameter_declarations(self) -> list[Node]:
        """A function's ``parameter_declaration`` nodes, in order."""
        decl = self.node.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        assert decl is not None
        return [p for p in child(decl, "parameters").named_children
                if p.type == "parameter_declaration"]

    @property
    def params(self) -> list[str]:
        """A function's or a function-like macro's parameter names."""
        if self.kind == "macro":
            ps = self.node.child_by_field_name("parameters")
            return [text(self.src, c) for c in ps.named_children] if ps else []
        out = []
        for p in self.parameter_declarations:
            d = p.child_by_field_name("declarator")
            while d is not None and d.type != "identifier":
                d = d.child_by_field_name("declarator")
            if d is not None:
                out.append(text(self.src, d))
        return out


def _function_name(src: bytes, node: Node) -> str | None:
    d = node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    if d is None:
        return None
    name = d.child_by_field_name("declarator")
    while name is not None and name.type not in ("identifier", "field_identifier"):
        name = name.child_by_field_name("declarator")
    return text(src, name) if name is not None else None


@frozen(eq=False)
class KernelTree:
    """The parsed files of one kernel tree and the index of their definitions."""

    root: Path
    version: str  # "6.12.117", or "unknown"
    sources: dict[str, bytes]
    defs: dict[str, list[Definition]]
    missing_files: tuple[str, ...]

    @classmethod
    def load(cls, root: str | Path, files: Sequence[str]) -> KernelTree:
        """Parse ``files`` (paths relative to the root) of the tree at ``root``; those
        absent are listed in ``missing_files``.  The version is read from its Makefile.

        Raises:
            InputError: ``root`` is not a directory or holds none of ``files``.
        """
        path = Path(root)
        if not path.is_dir():
            raise InputError(f"--linux {root!r} is not a directory; give the root of a kernel "
                             "source tree (the folder holding mm/ and include/)")
        sources: dict[str, bytes] = {}
        missing = []
        for f in files:
            p = path / f
            if p.is_file():
                sources[f] = p.read_bytes()
            else:
                missing.append(f)
        if not sources:
            raise InputError(f"--linux {root!r} holds none of {', '.join(files)}; give the root "
                             "of a kernel source tree")
        return cls.of_texts(path, sources, missing)

    @classmethod
    def of_texts(cls, root: str | Path, texts: Mapping[str, bytes],
                 missing: Sequence[str] = ()) -> KernelTree:
        """The tree at ``root`` holding the given texts (relative path -> bytes: what a
        compiler read, a patched text included) instead of what is on disk; ``missing``
        lists the files asked for that it lacks."""
        path = Path(root)
        out = cls(root=path, version=makefile_version(path) or "unknown", sources={},
                  defs={}, missing_files=tuple(missing))
        for f, src in texts.items():
            out.add_file(f, src)
        return out

    def add_file(self, file: str, src: bytes) -> None:
        """Read one more file (relative path, its text) into the index, as :meth:`load`
        does; a file already read is left as it is."""
        if file in self.sources:
            return
        self.sources[file] = src
        tree = parser().parse(src)
        for d in _index(file, src, tree.root_node, ()):
            self.defs.setdefault(d.name, []).append(d)

    def find(self, name: str, env: Preprocessor, kind: str | None = None) -> Definition | None:
        """The definition of ``name`` compiled under ``env`` (the first, in file order), or None."""
        for d in self.defs.get(name, ()):
            if (kind is None or d.kind == kind) and d.active(env):
                return d
        return None


def definition_lines(root: str | Path,
                     wanted: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The line of each (file, function) definition of ``wanted`` in the tree at ``root``
    (the first definition in the file when the preprocessor keeps several); pairs whose
    function the file does not define are left out.

    Raises:
        InputError: ``root`` is not a directory or lacks one of the files.
    """
    path = Path(root)
    files = sorted({f for f, _ in wanted})
    if not path.is_dir():
        raise InputError(f"--kernel-tree {str(root)!r} is not a directory; give the root of a "
                         "kernel source tree (the folder holding mm/ and include/)")
    absent = [f for f in files if not (path / f).is_file()]
    if absent:
        raise InputError(f"--kernel-tree {str(root)!r} has no {absent[0]}; give the root of a "
                         "kernel source tree")
    tree = KernelTree.load(path, files)
    out: dict[tuple[str, str], int] = {}
    for f, fn in wanted:
        lines = [d.line for d in tree.defs.get(fn, ()) if d.kind == "function" and d.file == f]
        if lines:
            out[(f, fn)] = min(lines)
    return out


def makefile_version(root: Path) -> str | None:
    """The tree's ``KERNELVERSION`` as its top Makefile spells it: ``VERSION.PATCHLEVEL``,
    then ``.SUBLEVEL`` when set, then ``EXTRAVERSION`` (the Makefile's own
    ``KERNELVERSION = $(VERSION)$(if $(PATCHLEVEL),.$(PATCHLEVEL)$(if $(SUBLEVEL),
    .$(SUBLEVEL)))$(EXTRAVERSION)``); None without a readable Makefile naming VERSION and
    PATCHLEVEL."""
    try:
        text = (root / MAKEFILE).read_text(errors="replace")
    except OSError:
        return None
    found = {k: re.search(rf"^{k}[ \t]*=[ \t]*(\S*)", text, re.MULTILINE)
             for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION")}
    if not (found["VERSION"] and found["PATCHLEVEL"]):
        return None
    parts = [m.group(1) if m else "" for m in found.values()]
    return ".".join(p for p in parts[:3] if p) + parts[3]


def _index(file: str, src: bytes, node: Node,
           conds: tuple[tuple[Node, int], ...]) -> Iterator[Definition]:
    for c in node.children:
        t = c.type
        if t in ("preproc_ifdef", "preproc_if"):
            branch: Node | None = c
            k = 0
            while branch is not None:
                yield from _index(file, src, branch, (*conds, (c, k)))
                branch = branch.child_by_field_name("alternative")
                k += 1
            continue
        if t in ("preproc_else", "preproc_elif", "preproc_elifdef"):
            continue  # reached through "alternative" above
        line = c.start_point[0] + 1
        if t == "function_definition":
            name = _function_name(src, c)
            if name:
                yield Definition("function", name, file, line, c, src, conds)
        elif t in ("preproc_function_def", "preproc_def"):
            name = text(src, child(c, "name"))
            yield Definition("macro", name, file, line, c, src, conds)
        elif t in ("struct_specifier", "union_specifier", "enum_specifier") or (
                t == "declaration" and c.child_by_field_name("type") is not None):
            d = _type_definition(file, src, c if t != "declaration" else child(c, "type"), conds)
            if d is not None:
                yield d
        elif t == "expression_statement" or t == "type_definition":
            for s in c.named_children:
                d = _type_definition(file, src, s, conds)
                if d is not None:
                    yield d
        elif t == "ERROR":
            yield from _index(file, src, c, conds)


def _type_definition(file: str, src: bytes, spec: Node,
                     conds: tuple[tuple[Node, int], ...]) -> Definition | None:
    """``spec`` as a definition if it is a struct, union or enum specifier with a body and a
    name, else None."""
    name = spec.child_by_field_name("name")
    if spec.type not in ("struct_specifier", "union_specifier", "enum_specifier") or \
            spec.child_by_field_name("body") is None or name is None:
        return None
    kind = "enum" if spec.type == "enum_specifier" else "struct"
    return Definition(kind, text(src, name), file, spec.start_point[0] + 1, spec, src, conds)


def enum_values(tree: KernelTree, name: str, env: Preprocessor) -> dict[str, int]:
    """The enumerators of ``enum name`` under ``env``, with their values (C rules: each is
    the previous plus one unless given; values may name earlier enumerators)."""
    d = tree.find(name, env, "enum")
    if d is None:
        raise InputError(f"enum {name} not found in {tree.root}")
    out: dict[str, int] = {}
    nxt = 0
    for e in active_children(d.src, child(d.node, "body"), env):
        if e.type != "enumerator":
            continue
        ename = text(d.src, child(e, "name"))
        v = e.child_by_field_name("value")
        if v is not None:
            vt = text(d.src, v).strip()
            nxt = out[vt] if vt in out else int(vt.rstrip("uUlL"), 0) if re.fullmatch(
                r"-?(0x[0-9a-fA-F]+|\d+)[uUlL]*", vt) else _enum_expr(vt, out)
        out[ename] = nxt
        nxt += 1
    return out


def _enum_expr(expr: str, known: dict[str, int]) -> int:
    m = re.fullmatch(r"\(?\s*(\w+)\s*([+-])\s*(\d+)\s*\)?", expr)
    if m and m.group(1) in known:
        return known[m.group(1)] + (int(m.group(3)) if m.group(2) == "+" else -int(m.group(3)))
    return -1  # not needed by the model; marked as unknown


__all__ = ["MAKEFILE", "Body", "Definition", "KernelTree", "MacroEnv", "Parent", "Preprocessor",
           "active_children", "child", "definition_lines", "enum_values", "eval_condition",
           "parser", "taken_branch", "text"]

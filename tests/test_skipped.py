"""equiv.linux.skipped: every ``#if`` branch the tree-sitter reader takes is the one clang took.

No kernel tree: small C files written to a temporary directory, parsed by libclang with the
detailed preprocessing record (as :func:`equiv.linux.cfront.parse` does with ``macros``) and
read by :class:`equiv.linux.ktree.KernelTree` under :class:`~equiv.linux.skipped.ClangBranches`.
The oracle is clang itself: the declarations its translation unit holds are the ones the
reader must find active.

* chains (``#if``/``#elif``/``#else``, ``#ifdef``, ``#ifndef``, C23's ``#elifdef``), empty
  branches, conditionals nested inside a skipped branch, ``#if`` expressions of
  ``defined``, integer comparisons and the kernel's ``IS_ENABLED``;
* what is not decided (:class:`~equiv.linux.skipped.Undecided`): an unguarded header
  included twice, a file the unit never reads, a text that is none of the reader's files;
  a guarded header included twice is decided;
* a property: random nests of conditionals over a few macros, each branch declaring one
  name, give under ``ClangBranches`` exactly the declarations clang compiled;
* four faults these tests found, now fixed: a header re-entered while open, one compiled
  twice after its guard was undefined, two files of one text, a ``..`` include path.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from clang import cindex
from hypothesis import given
from hypothesis import strategies as st

from equiv.linux.cfront import Unit
from equiv.linux.ktree import KernelTree, Node, active_children, parser, taken_branch, text
from equiv.linux.skipped import ClangBranches, Skipped, Undecided, skipped

_K = cindex.CursorKind
#: the nodes of one branch of a conditional, as tree-sitter-c names them
BRANCHES = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else")


# ---- helpers ------------------------------------------------------------------------------


def _unit(root: Path, main: str, args: Sequence[str] = (),
          others: Mapping[str, str] | None = None) -> Unit:
    """``t.c`` (text ``main``) and the files ``others`` written under ``root``, ``t.c``
    parsed by clang with the detailed preprocessing record; no clang error allowed."""
    for name, body in {**(others or {}), "t.c": main}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
    tu = cindex.Index.create().parse(
        str(root / "t.c"), args=["-std=gnu11", "-nostdinc", f"-I{root}", *args],
        options=cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    errors = [d.spelling for d in tu.diagnostics if d.severity >= cindex.Diagnostic.Error]
    assert not errors, errors
    return Unit(tu, "t.c", (root,))


def _reader(root: Path, unit: Unit, files: Sequence[str] = ("t.c",)
            ) -> tuple[KernelTree, ClangBranches]:
    """The files read by tree-sitter, and clang's decisions on them."""
    tree = KernelTree.load(root, list(files))
    return tree, ClangBranches.of(skipped(unit), tree.sources.items())


def _name(src: bytes, node: Node) -> str | None:
    """The name a declaration or function definition declares."""
    d = node.child_by_field_name("declarator")
    while d is not None and d.type != "identifier":
        d = d.child_by_field_name("declarator")
    return text(src, d) if d is not None else None


def _active(tree: KernelTree, env: ClangBranches, file: str = "t.c") -> list[str]:
    """The names declared at file scope in ``file``'s branches taken under ``env``."""
    src = tree.sources[file]
    return [n for c in active_children(src, parser().parse(src).root_node, env)
            if c.type in ("declaration", "function_definition") and (n := _name(src, c))]


def _compiled(unit: Unit, file: str = "t.c") -> list[str]:
    """The variables and functions clang declared at file scope from ``file``."""
    return [str(c.spelling) for c in unit.tu.cursor.get_children()
            if c.kind in (_K.VAR_DECL, _K.FUNCTION_DECL) and c.location.file is not None
            and unit.name(os.path.normpath(c.location.file.name)) == file]


def _branch_nodes(node: Node) -> Iterator[Node]:
    """Every branch node under ``node`` (chains' alternatives and nested ones)."""
    for c in node.children:
        if c.type in BRANCHES:
            yield c
        yield from _branch_nodes(c)


def _taken_by_line(tree: KernelTree, env: ClangBranches, file: str = "t.c") -> dict[int, bool]:
    """``env``'s answer for every branch of ``file``, by the line of its directive."""
    src = tree.sources[file]
    return {b.start_point[0] + 1: env.taken(src, b)
            for b in _branch_nodes(parser().parse(src).root_node)}


def _top(tree: KernelTree, file: str = "t.c") -> list[Node]:
    """The file-scope conditionals of ``file`` (first branch of each chain)."""
    return [c for c in parser().parse(tree.sources[file]).root_node.children
            if c.type in ("preproc_if", "preproc_ifdef")]


# ---- chains -------------------------------------------------------------------------------


def test_an_elif_chain_takes_its_first_true_branch(tmp_path: Path) -> None:
    unit = _unit(tmp_path, "#if 0\nint a;\n#elif 0\nint b;\n#elif 1\nint c;\n#endif\n"
                           "#if 1\nint d;\n#elif 1\nint e;\n#else\nint f;\n#endif\n")
    tree, env = _reader(tmp_path, unit)
    assert _compiled(unit) == ["c", "d"]
    assert _active(tree, env) == ["c", "d"]
    src = tree.sources["t.c"]
    first, second = _top(tree)
    body = taken_branch(src, first, env)
    assert body is not None and [text(src, c) for c in body.children] == ["int c;"]
    # the first chain: lines 1 and 3 skipped, 5 taken; the second: 8 taken (the rest of
    # the chain is never asked: the first true branch ends the walk)
    assert env.decided == {("t.c", 1): False, ("t.c", 3): False, ("t.c", 5): True,
                           ("t.c", 8): True}
    assert second.start_point[0] + 1 == 8
    # every branch, asked on its own: the skipped ranges say which one clang took
    assert _taken_by_line(tree, env) == {1: False, 3: False, 5: True, 8: True, 10: False,
                                         12: False}


@pytest.mark.parametrize("defined", [True, False])
def test_ifdef_and_ifndef_pick_the_definition_clang_compiled(tmp_path: Path, defined: bool) -> None:
    main = ("#ifdef X\nint f(void) { return 1; }\n#else\nint f(void) { return 2; }\n#endif\n"
            "#ifndef X\nint g(void) { return 3; }\n#else\nint g(void) { return 4; }\n#endif\n"
            "#ifdef X\nint only_x;\n#endif\n")
    unit = _unit(tmp_path, main, ["-DX"] if defined else [])
    tree, env = _reader(tmp_path, unit)
    for fn, want in (("f", 1 if defined else 2), ("g", 4 if defined else 3)):
        d = tree.find(fn, env, "function")
        assert d is not None and f"return {want};" in text(d.src, d.node)
        clang = [c for c in unit.top(_K.FUNCTION_DECL)[fn] if c.is_definition()]
        assert [c.extent.start.line for c in clang] == [d.line]
    assert _active(tree, env) == _compiled(unit)
    assert ("only_x" in _active(tree, env)) is defined
    assert env.decided[("t.c", 1)] is defined and env.decided[("t.c", 6)] is not defined
    if defined:  # the #else lines are asked only when the first branch is not taken
        assert ("t.c", 3) not in env.decided and env.decided[("t.c", 8)] is True
    else:
        assert env.decided[("t.c", 3)] is True and ("t.c", 8) not in env.decided


def test_elifdef_and_elifndef(tmp_path: Path) -> None:
    """C23's ``#elifdef``/``#elifndef`` (clang: an extension of gnu11, a warning)."""
    main = "#ifdef A\nint a;\n#elifndef B\nint not_b;\n#elifdef C\nint c;\n#else\nint none;\n#endif\n"
    for args, want in (([], ["not_b"]), (["-DB", "-DC"], ["c"]), (["-DB"], ["none"]),
                       (["-DA"], ["a"])):
        unit = _unit(tmp_path, main, args)
        tree, env = _reader(tmp_path, unit)
        assert _compiled(unit) == want and _active(tree, env) == want, args


@pytest.mark.parametrize("defined", [True, False])
def test_empty_branches(tmp_path: Path, defined: bool) -> None:
    """A branch without a line of code: taken or not as clang decided, still a body."""
    unit = _unit(tmp_path, "#ifdef C\n#else\n#endif\nint after;\n#if 0\n#endif\n"
                           "#ifdef C\n#endif\n", ["-DC"] if defined else [])
    tree, env = _reader(tmp_path, unit)
    src = tree.sources["t.c"]
    chain, zero, lone = _top(tree)
    body = taken_branch(src, chain, env)
    assert body is not None and body.children == []  # #ifdef C or #else: both empty
    assert taken_branch(src, zero, env) is None
    assert (taken_branch(src, lone, env) is not None) is defined
    assert _active(tree, env) == _compiled(unit) == ["after"]
    want = {1: defined, 2: not defined, 5: False, 7: defined}
    assert _taken_by_line(tree, env) == want
    assert env.decided == {("t.c", line): v for line, v in want.items()}


NESTED = """\
#ifdef OUTER
#if 1
int inner_if;
#else
int inner_else;
#endif
#ifndef NOPE
int inner_ifndef;
#endif
#else
int outer_else;
#endif
"""


@pytest.mark.parametrize("outer", [True, False])
def test_a_conditional_inside_a_skipped_branch_is_not_taken(tmp_path: Path, outer: bool) -> None:
    """``#if 1`` and ``#ifndef NOPE`` are true, but inside a skipped ``#ifdef OUTER`` clang
    did not take them: asked on their own, they are not taken."""
    unit = _unit(tmp_path, NESTED, ["-DOUTER"] if outer else [])
    tree, env = _reader(tmp_path, unit)
    want = ["inner_if", "inner_ifndef"] if outer else ["outer_else"]
    assert _compiled(unit) == want and _active(tree, env) == want
    assert _taken_by_line(tree, env) == {1: outer, 2: outer, 4: False, 7: outer, 10: not outer}


EXPRESSIONS = """\
#if defined(A) && A >= 2
int a_ge_2;
#elif defined(A) && A == 1
int a_eq_1;
#elif !defined(A) || (B + 1) * 2 > 5
int no_a_or_b_ge_2;
#else
int otherwise;
#endif
#if defined A && defined(B) && A < B
int a_lt_b;
#endif
#if (A | B) == 3 && !(A & B)
int disjoint;
#endif
"""


@pytest.mark.parametrize(("args", "want"), [
    ([], ["no_a_or_b_ge_2"]),
    (["-DA=1"], ["a_eq_1"]),
    (["-DA=2", "-DB=1"], ["a_ge_2", "disjoint"]),
    (["-DA=0", "-DB=3"], ["no_a_or_b_ge_2", "a_lt_b", "disjoint"]),
    (["-DA=0", "-DB=1"], ["otherwise", "a_lt_b"]),
])
def test_if_expressions(tmp_path: Path, args: list[str], want: list[str]) -> None:
    unit = _unit(tmp_path, EXPRESSIONS, args)
    tree, env = _reader(tmp_path, unit)
    assert _compiled(unit) == want
    assert _active(tree, env) == want
    assert all(f == "t.c" for f, _ in env.decided) and len(env.decided) >= 3


KCONFIG = """\
#define __ARG_PLACEHOLDER_1 0,
#define __take_second_arg(__ignored, val, ...) val
#define __is_defined(x) ___is_defined(x)
#define ___is_defined(val) ____is_defined(__ARG_PLACEHOLDER_##val)
#define ____is_defined(arg1_or_junk) __take_second_arg(arg1_or_junk 1, 0)
#define IS_ENABLED(option) __is_defined(option)
#if IS_ENABLED(CONFIG_FOO)
int foo_enabled;
#else
int foo_disabled;
#endif
"""


@pytest.mark.parametrize(("args", "want"), [([], "foo_disabled"), (["-DCONFIG_FOO=1"], "foo_enabled"),
                                             (["-DCONFIG_FOO=2"], "foo_disabled")])
def test_is_enabled_as_the_kernel_expands_it(tmp_path: Path, args: list[str], want: str) -> None:
    """include/linux/kconfig.h's ``IS_ENABLED``: a symbol defined as 2 is not enabled (only
    ``1`` pastes into ``__ARG_PLACEHOLDER_1``); the compiler's expansion decides, not
    whether the name is defined."""
    unit = _unit(tmp_path, KCONFIG, args)
    tree, env = _reader(tmp_path, unit)
    assert _compiled(unit) == [want] and _active(tree, env) == [want]


# ---- what is not decided -------------------------------------------------------------------

HEADER = "#ifdef M\nint hm;\n#else\nint hnm;\n#endif\n"


def test_an_unguarded_header_included_twice_is_undecided(tmp_path: Path) -> None:
    unit = _unit(tmp_path, '#include "h.h"\n#define M\n#include "h.h"\n', others={"h.h": HEADER})
    tree, env = _reader(tmp_path, unit, ["t.c", "h.h"])
    assert sorted(_compiled(unit, "h.h")) == ["hm", "hnm"]  # one of each inclusion
    assert skipped(unit).repeated == {"h.h": 2}
    with pytest.raises(Undecided, match=r"t\.c reads h\.h 2 times \(no include guard stops it\)"):
        _active(tree, env, "h.h")
    assert _active(tree, env) == []  # t.c itself has no conditional: nothing asked
    assert env.decided == {}


def test_a_header_included_once_is_decided(tmp_path: Path) -> None:
    unit = _unit(tmp_path, '#define M\n#include "h.h"\n', others={"h.h": HEADER})
    tree, env = _reader(tmp_path, unit, ["t.c", "h.h"])
    assert _compiled(unit, "h.h") == _active(tree, env, "h.h") == ["hm"]
    assert env.decided == {("h.h", 1): True}


@pytest.mark.parametrize("guard", ["macro", "pragma"])
def test_a_guarded_header_included_twice_is_decided(tmp_path: Path, guard: str) -> None:
    header = ("#ifndef G_H\n#define G_H\n" + HEADER + "#endif\n" if guard == "macro"
              else "#pragma once\n" + HEADER)
    unit = _unit(tmp_path, '#include "g.h"\n#define M\n#include "g.h"\n', others={"g.h": header})
    tree, env = _reader(tmp_path, unit, ["t.c", "g.h"])
    assert skipped(unit).repeated == {}
    # read once, before M was defined
    assert _compiled(unit, "g.h") == _active(tree, env, "g.h") == ["hnm"]
    assert env.decided[("g.h", 3 if guard == "macro" else 2)] is False
    assert all(f == "g.h" for f, _ in env.decided)


def test_a_file_the_unit_never_reads_is_undecided(tmp_path: Path) -> None:
    unit = _unit(tmp_path, '#include "h.h"\nint main_only;\n',
                 others={"h.h": HEADER, "other.h": "#ifdef M\nint om;\n#endif\n",
                         "other.c": "#if 1\nint oc;\n#endif\n"})
    tree, env = _reader(tmp_path, unit, ["t.c", "h.h", "other.h", "other.c"])
    assert _active(tree, env, "h.h") == ["hnm"]
    for f in ("other.h", "other.c"):
        with pytest.raises(Undecided, match=rf"{f.replace('.', '[.]')} is not read when clang "
                                            r"compiles t\.c"):
            _active(tree, env, f)


def test_a_text_that_is_not_one_of_the_readers_files_is_undecided(tmp_path: Path) -> None:
    unit = _unit(tmp_path, "#if 1\nint a;\n#endif\n")
    _, env = _reader(tmp_path, unit)
    other = b"#if 1\nint b;\n#endif\n"
    node = parser().parse(other).root_node.children[0]
    with pytest.raises(Undecided, match="not one of the files read"):
        env.taken(other, node)
    assert env.decided == {}


def test_skipped_taken_names_the_file(tmp_path: Path) -> None:
    """The bare :class:`Skipped`: its rule ``start <= line < end`` on ranges it holds."""
    s = Skipped("t.c", {"t.c": ((1, 5), (10, 12))}, frozenset({"t.c", "h.h", "r.h"}), {"r.h": 3})
    assert [s.taken("t.c", n) for n in (1, 4, 5, 9, 10, 11, 12)] == \
        [False, False, True, True, False, False, True]
    assert s.taken("h.h", 1)  # entered, nothing skipped
    with pytest.raises(Undecided, match=r"x\.h is not read"):
        s.taken("x.h", 1)
    with pytest.raises(Undecided, match=r"t\.c reads r\.h 3 times \(no include guard stops it\)"):
        s.taken("r.h", 1)


# ---- the property: random nests, clang's declarations ------------------------------------

MACROS = ("A", "B", "C")

_atoms = st.one_of(
    st.sampled_from(MACROS).map(lambda m: f"defined({m})"),
    st.sampled_from(MACROS).map(lambda m: f"defined {m}"),
    st.sampled_from(MACROS),
    st.tuples(st.sampled_from(MACROS), st.sampled_from(["==", "!=", "<", ">="]),
              st.integers(0, 2)).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
    st.sampled_from(["0", "1"]),
)
_exprs = st.recursive(_atoms, lambda e: st.one_of(
    e.map(lambda x: f"!({x})"),
    st.tuples(e, st.sampled_from(["&&", "||"]), e).map(lambda t: f"({t[0]} {t[1]} {t[2]})")),
    max_leaves=4)

#: a branch: its directive's words, and the items of its body
_first = st.one_of(_exprs.map(lambda x: f"#if {x}"),
                   st.sampled_from(MACROS).map(lambda m: f"#ifdef {m}"),
                   st.sampled_from(MACROS).map(lambda m: f"#ifndef {m}"))
_middle = st.one_of(_exprs.map(lambda x: f"#elif {x}"),
                    st.sampled_from(MACROS).map(lambda m: f"#elifdef {m}"),
                    st.sampled_from(MACROS).map(lambda m: f"#elifndef {m}"))


def _chain(depth: int) -> st.SearchStrategy[list[tuple[str, list[object]]]]:
    """One chain: ``[(directive, body)]``, ``#endif`` implied; a body's items are the
    branch's own declaration (None) and nested chains (below ``depth``)."""
    inner: st.SearchStrategy[list[object]] = (
        st.just([None]) if depth == 0 else
        st.lists(st.one_of(st.just(None), _chain(depth - 1)), max_size=2).map(lambda xs: [None, *xs]))
    return st.tuples(st.tuples(_first, inner),
                     st.lists(st.tuples(_middle, inner), max_size=2),
                     st.one_of(st.none(), inner.map(lambda b: ("#else", b)))).map(
        lambda t: [t[0], *t[1], *([t[2]] if t[2] is not None else [])])


_files = st.lists(_chain(2), min_size=1, max_size=3)
_defines = st.fixed_dictionaries({m: st.one_of(st.none(), st.integers(0, 2)) for m in MACROS})


def _render(chains: list[list[tuple[str, list[object]]]]) -> str:
    """The C text: each declaration item a distinct name, alternately a variable and a
    function."""
    lines: list[str] = []
    count = 0

    def item(x: object) -> None:
        nonlocal count
        if x is None:
            count += 1
            lines.append(f"int v{count};" if count % 2 else f"int f{count}(void) {{ return {count}; }}")
        else:
            chain(x)  # type: ignore[arg-type]

    def chain(c: list[tuple[str, list[object]]]) -> None:
        for directive, body in c:
            lines.append(directive)
            for x in body:
                item(x)
        lines.append("#endif")

    for c in chains:
        chain(c)
    return "\n".join(lines) + "\n"


@given(chains=_files, defines=_defines)
def test_random_nests_take_what_clang_compiled(chains: list[list[tuple[str, list[object]]]],
                                               defines: dict[str, int | None]) -> None:
    main = _render(chains)
    args = [f"-D{m}={v}" for m, v in defines.items() if v is not None]
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        unit = _unit(root, main, args)
        tree, env = _reader(root, unit)
        want = _compiled(unit)
        assert sorted(_active(tree, env)) == sorted(want), (main, args)
        # every branch asked on its own: taken only where clang compiled its declaration
        src = tree.sources["t.c"]
        lines = main.splitlines()
        for line, taken in _taken_by_line(tree, env).items():
            own = lines[line]  # the line after the directive: the branch's own declaration
            name = own.split()[1].split("(")[0].rstrip(";")
            assert (name in want) is taken, (main, args, line)
        assert all(f == "t.c" and lines[n - 1].startswith("#") for f, n in env.decided)
        assert src == main.encode()


# ---- faults found by these tests, fixed ------------------------------------------------------


def test_two_files_with_the_same_text(tmp_path: Path) -> None:
    """Two files of one text whose branches clang took otherwise (b.h skipped whole by the
    guard a.h defined): which one a definition is read from cannot say which was compiled,
    so neither is decided (it was: b.h's ranges answered for a.h)."""
    guarded = "#ifndef G_H\n#define G_H\n#ifdef X\nint ax;\n#else\nint anx;\n#endif\n#endif\n"
    unit = _unit(tmp_path, '#include "a.h"\n#include "b.h"\n', ["-DX"],
                 others={"a.h": guarded, "b.h": guarded})
    tree, env = _reader(tmp_path, unit, ["t.c", "a.h", "b.h"])
    assert _compiled(unit, "a.h") == ["ax"]  # b.h: its #ifndef G_H skipped whole
    with pytest.raises(Undecided, match=r"a\.h and b\.h have the same text"):
        _active(tree, env, "a.h")


def test_a_guarded_header_reentered_while_open(tmp_path: Path) -> None:
    """A guarded header included again while it is still open (a.h -> b.h -> a.h, as 6.12's
    mmzone.h -> memory_hotplug.h -> mmzone.h): the nested entry's whole-file skip is left
    out, the first entry's branches stand (every branch of a.h was "not taken")."""
    unit = _unit(tmp_path, '#define M\n#include "a.h"\n', others={
        "a.h": '#ifndef A_H\n#define A_H\n#include "b.h"\n#ifdef M\nint am;\n#else\nint anm;\n'
               '#endif\n#endif\n',
        "b.h": '#ifndef B_H\n#define B_H\n#include "a.h"\nint b;\n#endif\n'})
    tree, env = _reader(tmp_path, unit, ["t.c", "a.h", "b.h"])
    assert _compiled(unit, "a.h") == ["am"] and _compiled(unit, "b.h") == ["b"]
    assert _active(tree, env, "b.h") == ["b"]
    assert _active(tree, env, "a.h") == ["am"]
    assert env.skipped.reentered == {"a.h": ((1, 9),)}


def test_a_header_read_twice_after_its_guard_is_undefined(tmp_path: Path) -> None:
    """A guarded header whose guard is #undef'd and that is included again is compiled
    twice: per inclusion, so not decided (its two reads' ranges were merged)."""
    header = "#ifndef G_H\n#define G_H\n" + HEADER + "#endif\n"
    unit = _unit(tmp_path, '#define M\n#include "g.h"\n#undef M\n#undef G_H\n#include "g.h"\n',
                 others={"g.h": header})
    tree, env = _reader(tmp_path, unit, ["t.c", "g.h"])
    assert _compiled(unit, "g.h") == ["hm", "hnm"]
    with pytest.raises(Undecided, match=r"t\.c reads g\.h 2 times"):
        _active(tree, env, "g.h")


def test_a_header_included_through_a_dotdot_path(tmp_path: Path) -> None:
    """A header included by a path with '..' is named as the tree names it."""
    (tmp_path / "sub").mkdir()
    unit = _unit(tmp_path, '#define M\n#include "sub/../h.h"\n', others={"h.h": HEADER})
    tree, env = _reader(tmp_path, unit, ["t.c", "h.h"])
    assert _active(tree, env, "h.h") == _compiled(unit, "h.h") == ["hm"]

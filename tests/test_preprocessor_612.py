"""The C path's preprocessor on Debian's 6.12 tree: every ``#if`` branch is the compiler's.

Slow (Debian's linux-source-6.12 and a configuration's generated headers, as
tests/test_patch_proof.py):

* the four patches of ``tests/data/zone-device-backport-6.12/preprocessor`` put the
  ``__SetPageReserved(page)`` store of ``__init_zone_device_page`` under a conditional
  (``#ifndef CONFIG_SMP``, ``#ifdef CONFIG_SMP``, ``#if !defined(CONFIG_X86_64) &&
  !defined(CONFIG_ARM64)``, ``#if CONFIG_PGTABLE_LEVELS >= 4``) on top of the backport
  series: a symbol the configuration sets and one it does not, both ways, decided as the
  build decides: the store dropped (01, 03) is REFUTED on ``flags``, the store kept (02,
  04) PROVED;
* every branch the interpreter asked about (:attr:`ClangBranches.decided
  <equiv.linux.skipped.ClangBranches>`) checked against clang's cursors of the same
  translation unit, independently of the skipped ranges the decision came from: a branch
  decided taken whose body holds code (a declaration, a statement, a ``#define``, an
  ``#include``, a macro's use) has a cursor on one of those lines, a branch decided not
  taken has none in its body.  On the base tree and on the trees of patches 01 and 02,
  whose new directive is among the decisions.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from attrs import frozen
from clang import cindex
from test_linux_tree import linux612  # noqa: F401  (the session fixture)

from equiv.config import PRESETS
from equiv.engine.bv import CBV
from equiv.linux.cfront import Unit
from equiv.linux.ktree import Node, parser, text
from equiv.linux.patch import prepare
from equiv.linux.skipped import ClangBranches
from equiv.memmap import MemoryType, Scenario, concrete_inputs
from equiv.page_model import PB_BITS, PageState
from equiv.proofs import main
from equiv.zone_device.source.common import Side, run_tree, side, side_layout
from equiv.zone_device.source.files import FILES, load_tree

DATA = Path(__file__).parent / "data" / "zone-device-backport-6.12"
SERIES = sorted((DATA / "series").glob("*.patch"))
PP = {p.name[:2]: p for p in sorted((DATA / "preprocessor").glob("*.patch"))}
CFG = PRESETS["x86_64-default"]

#: a branch node of a conditional, as tree-sitter-c names them
BRANCHES = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else")
#: the tokens of a branch that are its directive, not its body
DIRECTIVE_TOKENS = ("#if", "#ifdef", "#ifndef", "#elif", "#elifdef", "#elifndef", "#else",
                    "#endif", "\n")
#: body nodes that are no code clang keeps a cursor for: comments, ``#undef``/``#pragma``/
#: ``#error`` (``preproc_call``), and nested conditionals (their own decisions)
NOT_CODE = ("comment", "preproc_call", "preproc_if", "preproc_ifdef")


# ---- the patches, through the command line --------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("patch", "orders", "verdict"), [
    ("01", "0,2", "REFUTED"), ("02", "0", "PROVED"), ("03", "0", "REFUTED"),
    ("04", "0", "PROVED")])
def test_a_store_under_a_config_conditional(linux612: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
                                            patch: str, orders: str, verdict: str) -> None:
    """01 ``#ifndef CONFIG_SMP`` and 03 ``#if !defined(CONFIG_X86_64) && ...``: x86_64-default
    sets the symbols, so the build drops the store and PG_reserved is never set; 02
    ``#ifdef CONFIG_SMP`` and 04 ``#if CONFIG_PGTABLE_LEVELS >= 4`` keep it."""
    code = main(["--linux", str(linux612), *(a for p in [*SERIES, PP[patch]] for a in ("--patch", str(p))),
                 "--orders", orders, "--types", "GENERIC", "--no-times"])
    out, err = capsys.readouterr()
    assert code == (1 if verdict == "REFUTED" else 0), out[-3000:] + err
    assert out.rstrip().endswith(f"verdict: {verdict}"), out[-3000:]
    cells = re.findall(r"^\s+MEMORY_DEVICE_GENERIC\s+order (\d+)\s+(\w+)", out, re.MULTILINE)
    assert cells == [(o, verdict) for o in orders.split(",")], cells
    if verdict == "REFUTED":
        # the differing field is named (flags alone), with the store the base made
        fields = set(re.findall(r"^\s+([\w.\[\]]+) @\d+ \(\d+ bytes\): base 0x", out, re.MULTILINE))
        assert fields == {"flags"}, out[-3000:]
        assert re.search(r"mm/mm_init\.c:\d+: __SetPageReserved\(page\)", out), out[-3000:]
    else:
        assert not re.search(r" @\d+ \(\d+ bytes\): base 0x", out), out[-3000:]


# ---- every decision against clang's cursors -------------------------------------------------


@frozen
class Decision:
    """One branch decided by :class:`ClangBranches`, as checked against clang's cursors."""

    file: str
    line: int  #: of the branch's directive
    taken: bool  #: the decision
    directive: str  #: its first line
    code: frozenset[int]  #: lines of the body's own code (nested conditionals left out)
    body: frozenset[int]  #: every line of the body (nested conditionals included)
    cursors: frozenset[int]  #: lines of ``body`` that hold one of clang's cursors

    @property
    def checkable(self) -> bool:
        """A taken branch needs code of its own to show a cursor; a branch not taken needs
        a body to show that none is there."""
        return bool(self.code) if self.taken else bool(self.body)

    @property
    def agrees(self) -> bool:
        return bool(self.cursors & self.code) if self.taken else not self.cursors

    def __str__(self) -> str:
        return (f"{self.file}:{self.line} {self.directive!r} decided "
                f"{'taken' if self.taken else 'not taken'}: {len(self.code)} lines of code, "
                f"cursors on {len(self.cursors)} of its {len(self.body)} lines")


def _cursor_lines(unit: Unit) -> dict[str, set[int]]:
    """Every line (expansion site) holding one of clang's cursors, by file (its normalised
    absolute name): declarations, statements, expressions, and the preprocessing record's
    macro definitions, macro uses and inclusions; the whole unit, recursively."""
    lib = cindex.conf.lib
    names: dict[int, str] = {}
    out: dict[str, set[int]] = {}
    f, line = cindex.c_object_p(), ctypes.c_uint()
    col, off = ctypes.c_uint(), ctypes.c_uint()

    def visit(c: cindex.Cursor, _parent: cindex.Cursor, _data: object) -> int:
        lib.clang_getInstantiationLocation(lib.clang_getCursorLocation(c), ctypes.byref(f),
                                           ctypes.byref(line), ctypes.byref(col), ctypes.byref(off))
        if f:
            key = ctypes.cast(f, ctypes.c_void_p).value or 0
            name = names.get(key)
            if name is None:
                name = names[key] = os.path.normpath(str(cindex.File(f).name))
            out.setdefault(name, set()).add(int(line.value))
        return 2  # CXChildVisit_Recurse

    lib.clang_visitChildren(unit.tu.cursor, cindex.callbacks["cursor_visit"](visit), None)
    return out


def _branch_at(node: Node, row: int) -> Node | None:
    """The branch node whose directive starts on ``row`` (0-based)."""
    if node.type in BRANCHES and node.start_point[0] == row:
        return node
    for c in node.children:
        if c.start_point[0] <= row <= c.end_point[0]:
            found = _branch_at(c, row)
            if found is not None:
                return found
    return None


def _lines(nodes: list[Node]) -> frozenset[int]:
    return frozenset(n for c in nodes for n in range(c.start_point[0] + 1, c.end_point[0] + 2))


def _decisions(sd: Side, env: ClangBranches) -> Iterator[Decision]:
    """Each of ``env``'s decisions with the lines of its body and clang's cursors there."""
    cursors = _cursor_lines(sd.typed.unit)
    trees: dict[str, Node] = {}
    for (file, line), taken in sorted(env.decided.items()):
        src = sd.tree.sources[file]
        if file not in trees:
            trees[file] = parser().parse(src).root_node
        b = _branch_at(trees[file], line - 1)
        assert b is not None, f"{file}:{line}: decided, but no branch of a conditional starts there"
        kids = [c for i, c in enumerate(b.children)
                if b.field_name_for_child(i) not in ("name", "condition", "alternative")
                and c.type not in DIRECTIVE_TOKENS]
        body = _lines(kids)
        # the file clang read for the reader's text: the same path, not the same relative
        # name (a header of the packaged tree may share it)
        have = cursors.get(os.path.normpath(str(sd.tree.root / file)), set())
        yield Decision(file, line, taken, text(src, b).splitlines()[0],
                       _lines([c for c in kids if c.type not in NOT_CODE]), body,
                       frozenset(have & body))


def _concrete_runs(sd: Side) -> None:
    """``memmap_init_zone_device`` run on concrete inputs: order 0 of GENERIC without an
    altmap, order 1 of PRIVATE with one (the interpreter's reads decide the branches)."""
    L = side_layout(sd, CFG)
    for order, nr, ptype, altmap in ((0, 2, MemoryType.GENERIC, None),
                                     (1, 8, MemoryType.PRIVATE, (1, 2))):
        inp = concrete_inputs(L, start_pfn=0x40000, nr_pages=nr, pgmap_type=int(ptype),
                              altmap=altmap)

        def initial(_pfn: object) -> PageState:
            return PageState(bits=CBV(0x5A, 8 * L.size), origin=((),) * L.size)

        def cell(_b: object) -> CBV:
            return CBV(3, PB_BITS)

        run_tree(sd, Scenario(L, ptype, order), inp, initial, cell, None)


@pytest.fixture(scope="module", params=["base", "01", "02"])
def decisions(request: pytest.FixtureRequest, linux612: Path,  # noqa: F811
              tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Decision]]:
    """The tree (base, or the series and a preprocessor patch), run by the interpreter, and
    its branch decisions checked against clang's cursors."""
    variant = str(request.param)
    root = linux612 if variant == "base" else prepare(
        linux612, FILES, [*SERIES, PP[variant]], tmp_path_factory.mktemp(f"pp{variant}") / "t").root
    sd = side(variant, load_tree(root), CFG)
    assert isinstance(sd.env, ClangBranches)
    _concrete_runs(sd)
    return variant, list(_decisions(sd, sd.env))


#: the new directive of a patch, and clang's decision for x86_64-default (CONFIG_SMP=y)
NEW = {"01": ("#ifndef CONFIG_SMP", False), "02": ("#ifdef CONFIG_SMP", True)}


@pytest.mark.slow
def test_the_decisions_are_checked(decisions: tuple[str, list[Decision]]) -> None:
    """Enough of the decisions can be checked (a body of code), and a patch's new directive
    is among them, decided as the build decides and agreeing with clang's cursors."""
    variant, got = decisions
    checked = [d for d in got if d.checkable]
    empty = [d for d in got if not d.checkable]
    print(f"{variant}: {len(got)} decisions, {len(checked)} checked, {len(empty)} without a "
          f"body of code (not checkable): {', '.join(f'{d.file}:{d.line}' for d in empty)}")
    assert len(checked) >= 20, "\n".join(map(str, got))
    assert {d.taken for d in checked} == {True, False}
    if variant in NEW:
        directive, taken = NEW[variant]
        mine = [d for d in got if d.file == "mm/mm_init.c" and d.directive == directive]
        assert len(mine) == 1 and mine[0].taken is taken and mine[0].checkable and mine[0].agrees, \
            "\n".join(map(str, mine))


@pytest.mark.slow
def test_every_decision_is_the_branch_clang_took(decisions: tuple[str, list[Decision]]) -> None:
    _, got = decisions
    wrong = [d for d in got if d.checkable and not d.agrees]
    assert not wrong, "decided against clang's cursors:\n" + "\n".join(map(str, wrong))

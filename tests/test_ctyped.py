"""equiv.zone_device.source.ctyped: the C interpreter's types are clang's.

On Debian's linux-source-6.12 ``mm/mm_init.c`` (tests/test_linux_tree.py's ``linux612``),
typed for ``x86_64-default`` on the headers :func:`equiv.zone_device.source.files.headers_for`
gives (skipped, saying why, where those headers are not unpacked):

* ``sizeof`` and ``offsetof`` of every member of ``struct page``, written in C and evaluated
  by clang's constant evaluator, equal the record layout :class:`TypedTree` hands the
  interpreter; that layout equals the model's (:mod:`equiv.page_model`, as ``--btf``
  compares) and the running kernel's BTF (``/sys/kernel/btf/vmlinux``) for every member
  both name;
* a ``sizeof`` is answered by where it is written: ``sizeof(template)`` of a
  ``struct page *`` is 8 (the false proof of issue 31), ``sizeof(*template)`` 64;
* integer types (the kernel's typedefs, ``bool``, enums), pointers and the conversion of an
  ``int`` index compared with an ``unsigned long`` bound.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clang import cindex
from test_linux_tree import linux612  # noqa: F401  (the session fixture)

from equiv.config import PRESETS
from equiv.engine.errors import InputError
from equiv.linux import cfront
from equiv.linux.btf import Btf
from equiv.page_model import Layout
from equiv.zone_device.source.ctyped import FILE, TypedTree, typed_for
from equiv.zone_device.source.files import headers_for, load_tree
from equiv.zone_device.source.layout_check import EXPAND_PAGE
from equiv.zone_device.source.src_layout import compare_with_model, source_structs

CFG = PRESETS["x86_64-default"]

#: a function appended to mm/mm_init.c: one sizeof and one offsetof of a member per line,
#: then the expressions of issue 31
PROBE = "equiv_probe"


def _cache() -> Path:
    return Path(os.environ["EQUIV_TEST_USER_CACHE"]) / "equiv"  # set by conftest.py


@pytest.fixture(scope="module")
def typed(linux612: Path) -> TypedTree:  # noqa: F811
    try:
        return typed_for(load_tree(linux612), CFG, cache=_cache())
    except InputError as e:
        if "no generated kernel headers" in str(e):
            pytest.skip(str(e))
        raise


def _probe_text(paths: list[str]) -> str:
    body = "".join(f"\tn += sizeof(((struct page *)0)->{p}); "
                   f"n += __builtin_offsetof(struct page, {p});\n" for p in paths)
    return (f"\nunsigned long {PROBE}(struct page *page, struct page *template,\n"
            "\t\t\t  unsigned long nr_pages);\n"
            f"unsigned long {PROBE}(struct page *page, struct page *template,\n"
            "\t\t\t  unsigned long nr_pages)\n{\n\tunsigned long n = 0;\n\n" + body +
            "\tmemcpy(page, template, sizeof(template));\n"
            "\tmemcpy(page, template, sizeof(*template));\n"
            "\tfor (int i = 2; i < nr_pages; i++)\n\t\tn += i;\n"
            "\treturn n;\n}\n")


@pytest.fixture(scope="module")
def probed(typed: TypedTree, linux612: Path) -> tuple[TypedTree, int, list[str]]:  # noqa: F811
    """``mm/mm_init.c`` with :data:`PROBE` appended, typed; the line of its first member
    line and the members (every one of struct page but bitfields)."""
    paths = [f.path for f in typed.layout("page").fields if f.bit_width is None]
    text = (linux612 / FILE).read_text()
    first = text.count("\n") + 9
    tt = TypedTree.parse(linux612, {FILE: (text + _probe_text(paths)).encode()},
                         typed.headers)
    return tt, first, paths


def _offsetofs(tt: TypedTree) -> dict[int, int]:
    """Line -> clang's value of the ``__builtin_offsetof`` on it, in :data:`PROBE`."""
    fn = next(c for c in tt.unit.tu.cursor.get_children()
              if c.kind == cindex.CursorKind.FUNCTION_DECL and c.spelling == PROBE and c.is_definition())
    out: dict[int, int] = {}
    for c in fn.walk_preorder():
        tok = tt.unit.first_token(c) if c.kind.is_expression() else None
        if tok is not None and tok.spelling == "__builtin_offsetof":
            v = cfront.evaluate(c)
            if v is not None:
                out.setdefault(c.location.line, v)
    return out


def test_sizeof_and_offsetof_of_every_member_are_the_layouts(
        probed: tuple[TypedTree, int, list[str]]) -> None:
    tt, first, paths = probed
    lay = tt.layout("page")
    assert len(paths) > 30  # the union views and named members' members included
    offs = _offsetofs(tt)
    got = {p: (tt.sizeof_at([PROBE], f"{FILE}:{first + i}", f"(((struct page *)0)->{p})"),
               offs.get(first + i)) for i, p in enumerate(paths)}
    assert got == {p: (lay.field(p).size, lay.field(p).offset) for p in paths}
    assert tt.sizeof_type("struct page") == lay.size == 64


def test_sizeof_is_answered_by_where_it_is_written(
        probed: tuple[TypedTree, int, list[str]]) -> None:
    tt, first, paths = probed
    line = first + len(paths)
    assert tt.sizeof_at([PROBE], f"{FILE}:{line}", "(template)") == 8
    assert tt.sizeof_at([PROBE], f"{FILE}:{line + 1}", "(*template)") == 64
    assert tt.sizeof_at([PROBE], f"{FILE}:{line}", "(*template)") is None


def test_an_int_index_compares_as_unsigned_long(probed: tuple[TypedTree, int, list[str]]) -> None:
    tt, first, paths = probed
    b = tt.binary(PROBE, f"{FILE}:{first + len(paths) + 2}", "<", "i", "nr_pages")
    assert b is not None
    assert (b.lhs.written, b.lhs.type, b.rhs.type) == ("int", "unsigned long", "unsigned long")
    assert tt.int_type(b.lhs.type) == (64, False) and tt.int_type(b.lhs.written) == (32, True)
    i = tt.variable(PROBE, "i", first + len(paths) + 2)
    assert i is not None and (i.type, i.size, i.signed) == ("int", 4, True)


def test_integer_pointer_and_struct_types(typed: TypedTree) -> None:
    assert {t: typed.int_type(t) for t in (
        "int", "unsigned long", "unsigned long int", "u64", "s32", "bool", "enum zone_type",
        "char", "size_t", "phys_addr_t")} == {
        "int": (32, True), "unsigned long": (64, False), "unsigned long int": (64, False),
        "u64": (64, False), "s32": (32, True), "bool": (8, False), "enum zone_type": (32, False),
        "char": (8, False), "size_t": (64, False), "phys_addr_t": (64, False)}
    assert [typed.sizeof_type(t) for t in ("struct page *", "const struct page *", "u64 *",
                                            "struct list_head", "atomic_t")] == [8, 8, 8, 16, 4]
    assert typed.int_type("struct page") is None and typed.int_type("struct page *") is None
    atomic = typed.record("atomic_t")
    assert atomic is not None and [(f.path, f.offset, f.size, f.type) for f in atomic.fields] == \
        [("counter", 0, 4, "int")]
    lh = typed.record("struct list_head")
    assert lh is not None and [(f.path, f.offset) for f in lh.fields] == [("next", 0), ("prev", 8)]
    assert typed.type_info("no_such_type_t") is None


def test_struct_page_equals_the_models_layout(typed: TypedTree) -> None:
    """Every struct page view of the x86_64-default model is where clang puts it."""
    rep = compare_with_model(Layout.from_config(CFG), source_structs(typed))
    page_rows = [r for r in rep.rows if r.struct == "page"]
    assert len(page_rows) > 15
    assert [r for r in page_rows if r.verdict != "matches"] == []
    assert rep.page_size == (64, 64)


def test_struct_page_equals_this_machines_btf(typed: TypedTree) -> None:
    """The running kernel may be another release: every member both name is at the same
    offset with the same size."""
    path = Path("/sys/kernel/btf/vmlinux")
    if not path.is_file():
        pytest.skip(f"{path} is missing: the running kernel has no BTF")
    btf = Btf.from_file(str(path))
    if (btf.arch() or ("?",))[0] != "x86_64":
        pytest.skip(f"the running kernel is not x86_64 ({btf.arch()}): another layout")
    theirs, ours = btf.members("page", expand=EXPAND_PAGE), typed.layout("page").members(EXPAND_PAGE)
    both = set(theirs) & set(ours)
    assert {"flags", "lru.next", "compound_head", "zone_device_data", "mapping", "private",
            "_mapcount", "_refcount", "memcg_data"} <= both
    assert {p: ours[p] for p in both} == {p: theirs[p] for p in both}
    assert btf.struct_size("page") == typed.layout("page").size


def test_no_headers_for_a_hypothetical_preset_one_input_error_line(tmp_path: Path) -> None:
    from equiv.config import PRESETS

    with pytest.raises(InputError) as e:
        headers_for(tmp_path, PRESETS["x86_64-want-page-virtual"], tmp_path)
    assert "\n" not in str(e.value) and "hypothetical" in str(e.value)

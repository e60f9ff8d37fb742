"""struct page / struct folio layout computed from a kernel tree's include/linux/mm_types.h.

For one configuration (:func:`equiv.zone_device.source.files.macro_env`), the members of ``struct page`` and
``struct folio`` are laid out with the C rules for LP64 (each member at the next multiple of
its alignment, unions at offset 0 of their own, anonymous structs and unions flattened into
their parent's names, the struct padded to its alignment, ``_struct_page_alignment`` =
``2 * sizeof(unsigned long)`` with ``CONFIG_HAVE_ALIGNED_STRUCT_PAGE``).  Member types are
sized from :data:`TYPES` (trusted: the headers that define them are not read).

:func:`compare_with_model` lists, for every view of the model's
:class:`~equiv.page_model.Layout`, whether the tree puts a member of that name at the same
offset and size (the BTF check, :mod:`equiv.zone_device.source.layout_check`, does the same against a built
kernel).
"""

from __future__ import annotations

import re

from attrs import frozen

from equiv.engine.errors import InputError
from equiv.linux.ktree import Definition, KernelTree, MacroEnv, Node, active_children, child, text
from equiv.page_model import Layout

#: sizeof / alignof of the member types struct page and folio use (LP64), trusted.
TYPES: dict[str, tuple[int, int]] = {
    "unsigned long": (8, 8), "long": (8, 8), "pgoff_t": (8, 8), "atomic_long_t": (8, 8),
    "swp_entry_t": (8, 8), "memdesc_flags_t": (8, 8), "unsigned int": (4, 4), "int": (4, 4),
    "atomic_t": (4, 4), "unsigned short": (2, 2), "mm_id_mapcount_t": (4, 4), "mm_id_t": (4, 4),
    "struct list_head": (16, 8), "struct rcu_head": (16, 8), "struct callback_head": (16, 8),
    "struct llist_node": (8, 8), "unsigned char": (1, 1), "bool": (1, 1),
}
#: members of the fixed-layout types, for ``page->lru.next`` and the like
SUBFIELDS: dict[str, tuple[tuple[str, int, int, str], ...]] = {
    "struct list_head": (("next", 0, 8, "struct list_head *"), ("prev", 8, 8, "struct list_head *")),
    "struct rcu_head": (("next", 0, 8, "void *"), ("func", 8, 8, "void *")),
    "struct callback_head": (("next", 0, 8, "void *"), ("func", 8, 8, "void *")),
    "atomic_t": (("counter", 0, 4, "int"),),
    "memdesc_flags_t": (("f", 0, 8, "unsigned long"),),
}


@frozen
class Member:
    """One named member (flattened through anonymous structs/unions)."""

    name: str  # dotted path, e.g. "lru.next"
    offset: int
    size: int
    ctype: str  # "unsigned long", "struct list_head", "struct page *", ...


@frozen
class SrcStruct:
    """A laid-out struct from the tree: size, alignment, members, where it is defined."""

    name: str
    size: int
    align: int
    members: tuple[Member, ...]
    where: str

    def member(self, name: str) -> Member | None:
        for m in self.members:
            if m.name == name:
                return m
        return None


def _type_name(src: bytes, node: Node) -> str:
    s = " ".join(text(src, child(node, "type")).split())
    return s


def _decl_name(src: bytes, d: Node | None) -> tuple[str, int, bool]:
    """(name, array count or 1, is a pointer) of a field declarator."""
    count, ptr = 1, False
    while d is not None and d.type != "field_identifier":
        if d.type == "array_declarator":
            size = d.child_by_field_name("size")
            count *= int(text(src, size), 0) if size is not None else 0
        elif d.type == "pointer_declarator":
            ptr = True
        d = d.child_by_field_name("declarator")
    return (text(src, d) if d is not None else "", count, ptr)


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


class _Layouter:
    def __init__(self, tree: KernelTree, env: MacroEnv) -> None:
        self.tree, self.env = tree, env
        self.done: dict[str, SrcStruct] = {}

    def struct(self, name: str) -> SrcStruct:
        if name in self.done:
            return self.done[name]
        d = self.tree.find(name, self.env, "struct")
        if d is None:
            raise InputError(f"struct {name} not found in {self.tree.root}; is it a kernel tree?")
        size, align, members = self._fields(d, child(d.node, "body"),
                                            d.node.type == "union_specifier")
        if name == "page" and _page_aligned(d) and self.env.defined("CONFIG_HAVE_ALIGNED_STRUCT_PAGE"):
            align = max(align, 16)
        size = _align(size, align)
        out = SrcStruct(name, size, align, tuple(members), d.where)
        self.done[name] = out
        return out

    def _sizeof(self, ctype: str) -> tuple[int, int]:
        if ctype.endswith("*"):
            return 8, 8
        if ctype in TYPES:
            return TYPES[ctype]
        m = re.fullmatch(r"struct (\w+)", ctype)
        if m and m.group(1) in ("page", "folio"):
            s = self.struct(m.group(1))
            return s.size, s.align
        raise InputError(f"member type {ctype!r} of struct page/folio has no known size; "
                         f"known: {', '.join(TYPES)}")

    def _fields(self, d: Definition, body: Node, union: bool) -> tuple[int, int, list[Member]]:
        src = d.src
        off, size, align = 0, 0, 1
        members: list[Member] = []
        for f in active_children(src, body, self.env):
            if f.type != "field_declaration":
                continue
            t = f.child_by_field_name("type")
            declarators = f.children_by_field_name("declarator")
            body_t = t.child_by_field_name("body") if t is not None else None
            if t is not None and t.type in ("struct_specifier", "union_specifier") and \
                    body_t is not None:
                s, a, sub = self._fields(d, body_t, t.type == "union_specifier")
                s = _align(s, a)
                prefix = ""
                if declarators:
                    prefix = _decl_name(src, declarators[0])[0] + "."
                at = 0 if union else _align(off, a)
                if prefix:
                    members.append(Member(prefix[:-1], at, s, "anon"))
                members += [Member(prefix + m.name, at + m.offset, m.size, m.ctype) for m in sub]
                align = max(align, a)
                off = at if union else at + s
                size = max(size, at + s)
                continue
            base = _type_name(src, f)
            for dn in declarators:
                name, count, ptr = _decl_name(src, dn)
                ctype = base + " *" if ptr else base
                s1, a = self._sizeof(ctype)
                at = 0 if union else _align(off, a)
                members.append(Member(name, at, s1 * count, ctype if count == 1 else
                                      f"{ctype}[{count}]"))
                for sub_name, so, ss, st in SUBFIELDS.get(ctype, ()):
                    members.append(Member(f"{name}.{sub_name}", at + so, ss, st))
                if count > 1:
                    for i in range(count):
                        members.append(Member(f"{name}[{i}]", at + i * s1, s1, ctype))
                align = max(align, a)
                off = at if union else at + s1 * count
                size = max(size, at + s1 * count)
        return size, align, members


def _page_aligned(d: Definition) -> bool:
    """``struct page {...} _struct_page_alignment;``: the attribute macro follows the body."""
    after = d.src[d.node.end_byte:d.node.end_byte + 64].decode("utf-8", "replace")
    return after.lstrip().startswith("_struct_page_alignment")


def source_structs(tree: KernelTree, env: MacroEnv) -> dict[str, SrcStruct]:
    """struct page and struct folio of ``tree`` under ``env``.

    Raises:
        InputError: a struct is missing or a member type has no known size.
    """
    lay = _Layouter(tree, env)
    return {"page": lay.struct("page"), "folio": lay.struct("folio")}


#: model view name -> member names the kernel may use for it (renames between releases)
ALIASES: dict[str, tuple[str, ...]] = {
    "compound_info": ("compound_info", "compound_head"),
    "index": ("index", "__folio_index"),
    "folio.pgmap": ("pgmap",),
    "flags": ("flags", "flags.f"),
}


@frozen
class LayoutRow:
    """One model view compared with the tree."""

    struct: str
    view: str
    kernel_name: str | None
    model: tuple[int, int]
    tree: tuple[int, int] | None

    @property
    def verdict(self) -> str:
        if self.tree is None:
            return "missing"
        return "matches" if self.tree == self.model else "differs"


@frozen
class SrcLayoutReport:
    """The model's layout against the tree's text, for one configuration."""

    config: str
    page_size: tuple[int, int]  # (model, tree)
    rows: tuple[LayoutRow, ...]
    where: tuple[str, str]

    @property
    def ok(self) -> bool:
        return self.page_size[0] == self.page_size[1] and all(r.verdict == "matches"
                                                               for r in self.rows)


def compare_with_model(layout: Layout, structs: dict[str, SrcStruct]) -> SrcLayoutReport:
    """Every view of ``layout`` against the tree's member of the same (or aliased) name."""
    page, folio = structs["page"], structs["folio"]
    rows = []
    for v in layout.views:
        if v.page is None:
            st, names, base = page, ALIASES.get(v.name, (v.name,)), 0
        else:
            st, names, base = folio, (v.name,), v.page * page.size
        hit = None
        for n in names:
            m = st.member(n)
            if m is not None:
                hit = m
                break
        tree_pos = None if hit is None else (hit.offset - base, hit.size)
        rows.append(LayoutRow("page" if v.page is None else f"folio page[{v.page}]", v.name,
                              hit.name if hit else None, (v.offset, v.size), tree_pos))
    return SrcLayoutReport(layout.config.name, (layout.size, page.size), tuple(rows),
                           (page.where, folio.where))


__all__ = ["TYPES", "LayoutRow", "Member", "SrcLayoutReport", "SrcStruct", "compare_with_model",
           "source_structs"]

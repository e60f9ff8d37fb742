"""struct page / struct folio layout of a kernel tree, as clang lays them out.

For one configuration, the members of ``struct page`` and ``struct folio`` are clang's
record layout (:class:`equiv.zone_device.source.ctyped.TypedTree`, through
:func:`equiv.linux.cfront.struct_layout`): anonymous structs and unions flattened into their
parent's names, a named member's members after a dot (``lru.next``), every offset and size
clang's own.  Nothing here lays a struct out.

:func:`compare_with_model` lists, for every view of the model's
:class:`~equiv.page_model.Layout`, whether the tree puts a member of that name at the same
offset and size (the BTF check, :mod:`equiv.zone_device.source.layout_check`, does the same
against a built kernel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attrs import frozen

from equiv.linux.cfront import StructLayout
from equiv.page_model import Layout

if TYPE_CHECKING:
    from equiv.zone_device.source.ctyped import TypedTree


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


def from_clang(lay: StructLayout) -> SrcStruct:
    """``lay`` (clang's) as the interpreter reads a struct: every member by its dotted path."""
    return SrcStruct(lay.name, lay.size, lay.align,
                     tuple(Member(f.path, f.offset, f.size, f.type) for f in lay.fields),
                     lay.where)


def source_structs(typed: TypedTree) -> dict[str, SrcStruct]:
    """struct page and struct folio as clang lays them out for ``typed``'s configuration.

    Raises:
        InputError: a struct is missing.
    """
    return {"page": from_clang(typed.layout("page")), "folio": from_clang(typed.layout("folio"))}


#: model view name -> member names the kernel may use for it (renames between releases)
ALIASES: dict[str, tuple[str, ...]] = {
    "compound_info": ("compound_info", "compound_head"),
    "index": ("index", "__folio_index"),
    "folio.pgmap": ("pgmap",),
    "_head_1": ("_head_1", "__head"),  # 6.1's struct folio
    "flags": ("flags", "flags.f"),
    # ``#define rcu_head callback_head`` (include/linux/types.h): clang names the member
    # as the preprocessor leaves it
    "rcu_head.next": ("rcu_head.next", "callback_head.next"),
    "rcu_head.func": ("rcu_head.func", "callback_head.func"),
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
    """The model's layout against clang's layout of the tree, for one configuration."""

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
            st, names, base = folio, ALIASES.get(v.name, (v.name,)), v.page * page.size
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


__all__ = ["LayoutRow", "Member", "SrcLayoutReport", "SrcStruct", "compare_with_model", "from_clang",
           "source_structs"]

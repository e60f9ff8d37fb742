"""The struct page layout a C-path proof runs on, taken from clang's layout of the tree.

A ``--patch`` / ``--against`` / ``--per-patch`` proof compares the memory two kernel trees
leave, byte for byte.  Which bytes there are, how they are cut into atoms (the unit of an
obligation and of a reported difference) and what a counterexample calls them come from the
tree at hand, as clang compiles it for the configuration
(:class:`~equiv.zone_device.source.ctyped.TypedTree`):

* ``sizeof(struct page)`` and every member's offset and size: clang's record layout of
  ``struct page`` (include/linux/mm_types.h), anonymous unions flattened;
* the struct folio fields that overlay the tail pages of a large folio (``_flags_1``,
  ``_large_mapcount``, ``_deferred_list``, ..., and 6.1's ``_folio_dtor``/``_folio_order``),
  by where clang puts them in struct folio;
* the page->flags layout (include/linux/page-flags-layout.h, include/linux/mmzone.h):
  ``__NR_PAGEFLAGS``, ``ZONES_SHIFT``, ``NODES_SHIFT``, ``LAST_CPUPID_SHIFT``, each field's
  ``*_PGOFF`` and ``*_WIDTH``, and whether ``LAST_CPUPID_NOT_IN_PAGE_FLAGS`` /
  ``NODE_NOT_IN_PAGE_FLAGS`` are defined, all as clang evaluates them.

A member is called by the model's name (:class:`~equiv.page_model.Layout`, which the hand
paths write by) where the tree has that member, under one of its kernel names
(:data:`~equiv.zone_device.source.src_layout.ALIASES`), and printed by the tree's name
(:attr:`~equiv.page_model.View.shown`: ``compound_head`` on 6.12).  A model name the tree
lacks is dropped; a member of the tree that covers bytes no named member covers is added
under its own name (6.1's folio ``_folio_order``).  So the offsets, sizes, atoms and printed
names are the tree's; only the order in which the names of one atom are listed follows the
model.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import evolve

from equiv.config import Config
from equiv.engine.errors import InputError
from equiv.linux.cfront import Field, StructLayout
from equiv.page_model import FlagsField, FlagsLayout, Layout, View, atoms_of
from equiv.zone_device.source.ctyped import TypedTree
from equiv.zone_device.source.src_layout import ALIASES

#: the page->flags sections from the MSB down (include/linux/page-flags-layout.h), as
#: :class:`~equiv.page_model.FlagsLayout` lists them
FLAG_FIELDS = ("SECTIONS", "NODES", "ZONES", "LAST_CPUPID", "KASAN_TAG", "LRU_GEN", "LRU_REFS")

def _value(typed: TypedTree, name: str) -> int | None:
    """clang's value of the macro ``name``; None when the tree does not define it.

    Raises:
        InputError: the tree defines it, but not as a constant clang evaluates.
    """
    c = typed.constant(name)
    if c is None:
        return None
    if c.value is None:
        raise InputError(f"{name} ({c.where}): not a constant clang evaluates under this "
                         "configuration; the page->flags layout cannot be taken from the tree")
    v = c.value
    return v - (1 << 64) if c.signed and v >> 63 else v


def flags_from_tree(typed: TypedTree) -> FlagsLayout:
    """page->flags as clang evaluates page-flags-layout.h for the tree's configuration.  A
    field whose ``*_WIDTH`` the tree does not define (MGLRU's before 6.1) has width 0; one
    whose width or offset is no constant C expression (6.12's ``LRU_REFS_WIDTH``, a
    ``min()`` the kernel's compiler folds only when optimising) is left out and named in
    :attr:`~equiv.page_model.FlagsLayout.left_out`.

    Raises:
        InputError: clang gives no ``__NR_PAGEFLAGS`` or ``ZONES_PGOFF``.
    """
    def need(name: str) -> int:
        v = _value(typed, name)
        if v is None:
            raise InputError(f"{name}: not defined in the tree's headers under this "
                             "configuration; the page->flags layout cannot be taken from "
                             "the tree")
        return v

    nr = need("__NR_PAGEFLAGS")
    fields: list[FlagsField] = []
    below = 64
    left_out: list[str] = []
    for f in FLAG_FIELDS:
        try:
            width = _value(typed, f"{f}_WIDTH") or 0
            pgoff = _value(typed, f"{f}_PGOFF")
        except InputError as e:
            # 6.12's LRU_REFS_WIDTH is a min(): a statement expression, no C constant; the
            # field is left out, and reading it is then an error of the interpreter's
            left_out.append(str(e).split(":", 1)[0])
            continue
        pgoff = below - width if pgoff is None else pgoff
        fields.append(FlagsField(f, width, pgoff))
        below = pgoff
    need("ZONES_PGOFF")
    defined = typed.macros_defined(("LAST_CPUPID_NOT_IN_PAGE_FLAGS", "NODE_NOT_IN_PAGE_FLAGS"))
    return FlagsLayout(
        nr_pageflags=nr,
        zones_shift=_value(typed, "ZONES_SHIFT") or 0,
        nodes_shift=_value(typed, "NODES_SHIFT") or 0,
        last_cpupid_shift=_value(typed, "LAST_CPUPID_SHIFT") or 0,
        last_cpupid_not_in_page_flags="LAST_CPUPID_NOT_IN_PAGE_FLAGS" in defined,
        node_not_in_page_flags="NODE_NOT_IN_PAGE_FLAGS" in defined,
        fields=tuple(fields),
        left_out=tuple(left_out),
    )


def _pages_of_folio(folio: StructLayout) -> set[str]:
    """The paths of struct folio's members that are whole struct pages (``page``,
    ``__page_1``): their members are struct page's, not the folio's own."""
    return {f.path for f in folio.fields if f.type == "struct page"}


def _own(folio: StructLayout) -> list[Field]:
    pages = _pages_of_folio(folio)
    return [f for f in folio.fields
            if f.path not in pages and f.path.split(".", 1)[0] not in pages]


def layout_from_tree(typed: TypedTree, cfg: Config) -> Layout:
    """struct page and its folio overlays as clang lays them out for ``typed``'s
    configuration, named as the module docstring says (``cfg``: the configuration the
    proof runs, as the tree prepared it).

    Raises:
        InputError: the tree has no struct page or struct folio, or no page->flags layout
            clang evaluates.
    """
    page, folio = typed.layout("page"), typed.layout("folio")
    size = page.size
    by_path = {f.path: f for f in page.fields}
    folio_own = _own(folio)
    folio_by_path = {f.path: f for f in folio_own}
    views: list[View] = []
    for v in Layout.from_config(cfg).views:
        if v.page is None:
            names = ALIASES.get(v.name, (v.name,))
            hit = next((by_path[n] for n in names if n in by_path), None)
            if hit is None and v.name.startswith("folio."):
                short = v.name.removeprefix("folio.")
                f = folio_by_path.get(short)
                if f is not None and f.offset < size:
                    views.append(View(v.name, f.offset, f.size, None, _kernel(v.name, f"folio.{f.path}")))
                continue
            if hit is not None:
                views.append(View(v.name, hit.offset, hit.size, None, _kernel(v.name, hit.path)))
            continue
        names = ALIASES.get(v.name, (v.name,))
        hit = next((folio_by_path[n] for n in names if n in folio_by_path), None)
        if hit is not None and hit.offset // size == v.page:
            views.append(View(v.name, hit.offset - v.page * size, hit.size, v.page,
                              _kernel(v.name, hit.path)))
    views += _uncovered(page.fields, views, size, None)
    for k in range(1, folio.size // size + 1):
        own = [f for f in folio_own if f.offset // size == k
               and f.offset + f.size <= (k + 1) * size]
        shifted = [evolve(f, offset=f.offset - k * size) for f in own]
        views += _uncovered(shifted, views, size, k)
    vs = tuple(views)
    return Layout(config=cfg, flags=flags_from_tree(typed), size=size, views=vs,
                  atoms=atoms_of(vs, size))


#: members clang names otherwise than the header spells them, because a macro renames the
#: type: ``#define rcu_head callback_head`` (include/linux/types.h) makes struct page's
#: ``struct rcu_head rcu_head;`` the member ``callback_head`` after preprocessing.  A report
#: prints the header's spelling, which a reviewer finds in mm_types.h.
SPELLED: dict[str, str] = {"callback_head": "rcu_head"}


def _kernel(model: str, path: str) -> str:
    """The name a report prints for the model view ``model`` found as ``path`` ("" when
    they are the same)."""
    head, dot, rest = path.partition(".")
    path = SPELLED.get(head, head) + dot + rest
    return "" if path == model else path


def _uncovered(fields: Sequence[Field], views: list[View], size: int, page: int | None
               ) -> list[View]:
    """The members of ``fields`` (offsets within one struct page) that lie wholly on bytes
    no view of ``views`` for ``page`` covers (struct page's own views for None, the folio's
    overlay of that page otherwise), outermost first, each under its own name."""
    covered = bytearray(size)
    for v in views:
        if v.page == page:
            covered[v.offset:v.offset + v.size] = b"\x01" * v.size
    out = []
    for f in sorted(fields, key=lambda f: (f.path.count("."), f.offset)):
        if f.size == 0 or f.bit_width is not None or f.offset + f.size > size:
            continue
        if not any(covered[f.offset:f.offset + f.size]):
            out.append(View(f.path, f.offset, f.size, page))
            covered[f.offset:f.offset + f.size] = b"\x01" * f.size
    return out


__all__ = ["FLAG_FIELDS", "flags_from_tree", "layout_from_tree"]

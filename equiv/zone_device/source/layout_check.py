"""Does the model's struct page match a built kernel's?  Compare :class:`Layout` with BTF.

For every view of the model's layout (struct page members under all their union names, and
the struct folio fields that land in page[1] and page[2]) the kernel's offset and size are
looked up in the BTF of ``struct page`` / ``struct folio`` and compared; so is
``sizeof(struct page)``.  Kernel names that changed between releases are accepted as
aliases and reported (e.g. the 2026 ``compound_info`` is ``compound_head`` before it).
Kernel members of struct page the model has no name for are listed as *unnamed views*: they
are fine if they lie within bytes the model covers (every byte is an atom of the model).
"""

from __future__ import annotations

from attrs import frozen

from equiv.linux.btf import Btf, Member
from equiv.page_model import Layout, View

#: model view name -> kernel member paths to try, in order (first is the model's own name)
ALIASES: dict[str, tuple[str, ...]] = {
    "compound_info": ("compound_info", "compound_head"),
    "index": ("index", "__folio_index"),
    "rcu_head.next": ("rcu_head.next", "callback_head.next"),
    "rcu_head.func": ("rcu_head.func", "callback_head.func"),
}
EXPAND_PAGE = ("lru", "buddy_list", "pcp_list", "rcu_head", "callback_head")
EXPAND_FOLIO = ("lru", "_deferred_list")


@frozen
class Row:
    """One compared field."""

    struct: str  # "page" or "folio"
    model_name: str
    kernel_name: str | None
    model_offset: int
    model_size: int
    kernel_offset: int | None
    kernel_size: int | None

    @property
    def verdict(self) -> str:
        if self.kernel_offset is None:
            return "MISSING"
        if (self.kernel_offset, self.kernel_size) != (self.model_offset, self.model_size):
            return "MISMATCH"
        return "MATCH"


@frozen
class LayoutReport:
    """All compared fields, the struct sizes, and kernel views the model does not name."""

    config: str
    btf: str
    rows: tuple[Row, ...]
    unnamed: tuple[Member, ...]
    uncovered: tuple[Member, ...]

    @property
    def ok(self) -> bool:
        return all(r.verdict == "MATCH" for r in self.rows) and not self.uncovered


def _lookup(members: dict[str, Member], name: str) -> tuple[str, Member] | None:
    for cand in ALIASES.get(name, (name,)):
        if cand in members:
            return cand, members[cand]
        base, _, idx = cand.partition("[")
        if idx and base in members:  # array element, e.g. _mm_id_mapcount[1]
            m = members[base]
            i = int(idx.rstrip("]"))
            return cand, Member(cand, m.offset + 4 * i, 4, m.bit_offset + 32 * i, 0)
    return None


def check_layout(layout: Layout, btf: Btf) -> LayoutReport:
    """Compare ``layout`` with the kernel's ``struct page`` and ``struct folio`` in ``btf``.

    Raises:
        equiv.linux.btf.BtfError: the blob has no struct page or struct folio.
    """
    page = btf.members("page", expand=EXPAND_PAGE)
    folio = btf.members("folio", expand=EXPAND_FOLIO)
    rows = [Row("page", "sizeof(struct page)", "sizeof(struct page)", layout.size, 0,
                btf.struct_size("page"), 0)]
    named: set[str] = set()
    for v in layout.views:
        rows.append(_row(v, layout, page, folio, named))
    ksize = btf.struct_size("page")
    unnamed = tuple(m for p, m in sorted(page.items(), key=lambda x: (x[1].offset, x[0]))
                    if p not in named and "." not in p)
    uncovered = tuple(m for m in page.values() if m.offset + m.size > layout.size
                      and m.offset + m.size <= ksize)
    return LayoutReport(layout.config.name, btf.name, tuple(rows), unnamed, uncovered)


def _row(v: View, layout: Layout, page: dict[str, Member], folio: dict[str, Member],
         named: set[str]) -> Row:
    if v.page is None:
        name = v.name.removeprefix("folio.")
        table, struct = (folio, "folio") if v.name.startswith("folio.") else (page, "page")
        hit = _lookup(table, name)
        if hit is not None and struct == "page":
            named.add(hit[0])
        return Row(struct, v.name, hit[0] if hit else None, v.offset, v.size,
                   hit[1].offset if hit else None, hit[1].size if hit else None)
    hit = _lookup(folio, v.name)
    base = v.page * layout.size
    return Row("folio", f"{v.name} (page[{v.page}]+{v.offset})", hit[0] if hit else None,
               base + v.offset, v.size, hit[1].offset if hit else None,
               hit[1].size if hit else None)

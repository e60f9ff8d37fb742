"""The names the vmap subject's options choose from: the mapping paths, the named trylock
choice and the bound of any number of segments (:data:`ANY`).  Imports nothing, so the
command line can offer them without loading the model (:mod:`equiv.vmap.inputs` and
:mod:`equiv.vmap.revisions` re-export them)."""

from __future__ import annotations

#: the mapping paths, one matrix column each
PATHS = ("ioremap", "vmalloc", "vmap")
#: the named choice of POST-C1's mmap_read_trylock (:attr:`~equiv.vmap.revisions.Revision.trylock`),
#: default first
TRYLOCKS = ("succeeds", "oracle")

#: the most segments a page array can have: N < 2^31 pages (precondition "range"), each
#: segment at least one page
MAX_SEGMENTS = (1 << 31) - 1


class AnyBound(int):
    """The bound of the unbounded cell: every page array the preconditions allow (at most
    :data:`MAX_SEGMENTS` segments, one page each, since N < 2^31).  An ``int`` (the reports
    sort and key cells by it, and JSON shows the number) that prints as ``any``."""

    def __new__(cls) -> AnyBound:
        return super().__new__(cls, MAX_SEGMENTS)

    def __reduce__(self) -> tuple[type[AnyBound], tuple[()]]:
        return (AnyBound, ())

    def __repr__(self) -> str:
        return "ANY"

    def __str__(self) -> str:
        return "any"

    def __format__(self, spec: str) -> str:
        spec = spec[:-1] if spec[-1:] in ("d", "n") else spec
        if spec[:1].isdigit():  # a width: right-aligned like a number
            spec = ">" + spec
        return format("any", spec)


#: the bound of the cell of any number of segments (``--bounds any``)
ANY = AnyBound()


def is_any(bound: int) -> bool:
    """``bound`` is :data:`ANY` (also after a trip through pickle)."""
    return isinstance(bound, AnyBound)


__all__ = ["ANY", "MAX_SEGMENTS", "PATHS", "TRYLOCKS", "AnyBound", "is_any"]

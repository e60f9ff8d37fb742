"""A bounded process-wide memo: the least recently used entries are dropped past a size.

The C path keeps what clang parsed (a translation unit of ``mm/mm_init.c`` with its detailed
preprocessing record is about 100 MB) per process, so that a worker's later cells reuse it.
A process that reads many trees (a test worker running dozens of patched copies, a
``--per-patch`` run over a long series) must not keep every one: a slow-suite worker that
did reached 12 GB.  :class:`Lru` keeps the ``keep`` entries used last.

Every process-wide memo registers how to empty it (:func:`on_forget`; an :class:`Lru`
does so itself), and :func:`forget_all` empties them all: what a long-lived process that
runs unrelated proofs (a test worker between test files) calls to start afresh.  Emptying
a memo never changes an answer, only what is computed again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


#: how to empty each process-wide memo (:func:`on_forget`)
_FORGET: list[Callable[[], None]] = []


def on_forget(clear: Callable[[], None]) -> None:
    """Register ``clear`` (a memo's own emptying) with :func:`forget_all`."""
    _FORGET.append(clear)


def forget_all() -> None:
    """Empty every registered process-wide memo."""
    for clear in _FORGET:
        clear()


class Lru(Generic[K, V]):
    """A dict of at most ``keep`` entries; a read or a write makes an entry the newest.

    >>> m: Lru[str, int] = Lru(2)
    >>> m.put("a", 1); m.put("b", 2); m.put("a", 1); m.put("c", 3)
    >>> sorted(m.keys())
    ['a', 'c']
    """

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._d: OrderedDict[K, V] = OrderedDict()
        on_forget(self.clear)

    def get(self, key: K) -> V | None:
        """The entry of ``key`` (now the newest), or None."""
        if key not in self._d:
            return None
        self._d.move_to_end(key)
        return self._d[key]

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key`` (the newest), dropping the oldest past :attr:`keep`."""
        self._d[key] = value
        self._d.move_to_end(key)
        while len(self._d) > self.keep:
            self._d.popitem(last=False)

    def keys(self) -> list[K]:
        return list(self._d)

    def clear(self) -> None:
        self._d.clear()

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: object) -> bool:
        return key in self._d


__all__ = ["Lru", "forget_all", "on_forget"]

"""Where a kernel function is defined, when the translation unit that calls it does not say.

clang compiles one ``.c`` file at a time: a call from ``mm/mm_init.c`` to a function of
another file (``vmem_altmap_offset`` of ``mm/memremap.c`` on 6.1, ``__init_single_page`` of
``mm/page_alloc.c`` before 6.4) leaves only its declaration in that unit.  The linker, not
the compiler, joins the two.  :func:`candidates` names the ``.c`` files of a directory whose
text spells a definition of the name (a line that starts a declaration and names it before
a parenthesis); which of them really defines it under the configuration is clang's answer
for each candidate's own unit (:meth:`equiv.zone_device.source.ctyped.TypedTree.follow`),
never this text search's.

Only the caller's directory is searched (``mm/`` for the memmap code): a callee elsewhere is
not found, and the interpreter stops there (UNKNOWN naming the call), never guesses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path


def _spelled(name: str) -> re.Pattern[bytes]:
    # a line starting with a type word (not indented, not a directive or comment), naming
    # the function before its parameter list, with no ; before it on the line
    return re.compile(rb"^[A-Za-z_][^;\n]*\b" + re.escape(name.encode()) + rb"\s*\(",
                      re.MULTILINE)


def definition_sites(text: bytes, name: str) -> Iterator[tuple[int, int]]:
    """The places ``(line, column)``, 1-based, columns in bytes as clang counts them, where
    ``text`` spells ``name`` as a definition may (the pattern :func:`candidates` searches
    for): where clang's cursor at the name says whether it is one it compiled."""
    for m in _spelled(name).finditer(text):
        at = m.start() + m.group(0).rfind(name.encode())
        line_start = text.rfind(b"\n", 0, at) + 1
        yield text.count(b"\n", 0, at) + 1, at - line_start + 1


def candidates(roots: Iterable[Path], directory: str, name: str,
               skip: str = "") -> Iterator[str]:
    """The ``.c`` files of ``directory`` (relative to each root, the first root's copy of a
    file first) whose text may define ``name``, relative paths in sorted order, ``skip``
    left out."""
    pattern = _spelled(name)
    seen: set[str] = {skip}
    for root in roots:
        base = root / directory
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*.c")):
            rel = str(path.relative_to(root))
            if rel in seen:
                continue
            seen.add(rel)
            data = path.read_bytes()
            if name.encode() in data and pattern.search(data):
                yield rel


__all__ = ["candidates", "definition_sites"]

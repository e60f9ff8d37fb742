"""Which preprocessor branches the compiler took: the lines clang skipped.

The C path reads a kernel's text with tree-sitter (:mod:`equiv.linux.ktree`), which keeps
``#if``/``#ifdef``/``#elif``/``#else`` in the syntax tree.  Which branch is compiled is
decided here by the compiler, never by a list of macros: clang preprocesses the translation
unit with the configuration's ``autoconf.h`` and the tree's headers
(:func:`equiv.linux.cfront.parse`, with the detailed preprocessing record), and libclang's
``clang_getAllSkippedRanges`` lists every range of lines its preprocessor skipped.

**What a skipped range is** (clang's ``PreprocessingRecord::SourceRangeSkipped``, checked
on small files by ``tests/test_skipped.py``): it starts on the line of the directive whose
branch was not taken (``#if 0``, or the ``#else`` after a taken branch) and ends on the
line of the directive that ends the skipping (the next ``#elif``/``#else``/``#endif`` of
the chain that is reached); consecutive untaken branches make one range.  So a branch
whose directive is on line ``L`` is taken exactly when no range has ``start <= L < end``:
``L`` is neither the start of a skipped range nor inside one (a nested conditional inside
a skipped branch is not taken), and a range's last line is the directive that resumed.

**What is not decided** (an :class:`Undecided` error, which the interpreter reports as
UNKNOWN naming the file, never a guess):

* a file the translation unit never read (a ``.c`` file other than the unit's, a header it
  does not include): clang's preprocessor did not see its conditionals;
* a header whose body the unit compiles more than once (no include guard, or one undefined
  in between): each inclusion may take other branches, and the skipped ranges do not say
  which inclusion skipped what.  (libclang's ``get_includes`` does not list an
  ``#include`` its guard let clang skip without reading the file, so its count is of
  real reads.)

A guarded header is read once, except when it is included again while it is still being
read (include/linux/mmzone.h includes itself through memory_hotplug.h): that second entry
skips the whole body under the guard, one range from the ``#ifndef`` to its ``#endif``.
Such a range is recognised (the guard's ``#define`` on the next line is in clang's record
of the macros defined, so the first entry took the body) and left out.

File names are normalised (``sub/../h.h`` is ``h.h``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from attrs import field, frozen
from clang import cindex

from equiv.engine.errors import InputError
from equiv.linux import cfront
from equiv.linux.cfront import Unit
from equiv.linux.ktree import Node


class Undecided(InputError):
    """A preprocessor branch the compiler's run does not decide (see the module)."""


@frozen
class Skipped:
    """The preprocessor's decisions in one translation unit: per file (relative to the
    unit's roots) the skipped line ranges ``(start, end)``, the files it read, and the
    unguarded headers it included more than once (their decisions are per inclusion)."""

    unit: str  #: the translation unit's file (``mm/mm_init.c``)
    ranges: Mapping[str, tuple[tuple[int, int], ...]]
    entered: frozenset[str]
    repeated: Mapping[str, int] = field(factory=dict)
    #: guarded headers entered again while being read: the whole-body ranges of the later
    #: entries, left out of ``ranges`` (:func:`_reentry`)
    reentered: Mapping[str, tuple[tuple[int, int], ...]] = field(factory=dict)

    def taken(self, file: str, line: int) -> bool:
        """Is the branch whose directive is on ``line`` of ``file`` compiled?

        Raises:
            Undecided: ``file`` is not part of the unit, or is an unguarded header the
                unit includes more than once.
        """
        if file not in self.entered:
            raise Undecided(f"{file} is not read when clang compiles {self.unit}: its "
                            "preprocessor conditionals are not decided by the compiler")
        if file in self.repeated:
            raise Undecided(f"{self.unit} reads {file} {self.repeated[file]} times (no "
                            "include guard stops it): clang's choice of its #if branches "
                            "is per inclusion")
        return not any(s <= line < e for s, e in self.ranges.get(file, ()))


def skipped(unit: Unit) -> Skipped:
    """The :class:`Skipped` of ``unit`` (parsed with the detailed preprocessing record,
    ``cfront.parse(..., macros=True)``), files named relative to its roots."""
    tu = unit.tu
    lib = cfront._lib()

    named: dict[str, str] = {}

    def rel(path: str) -> str:
        got = named.get(path)
        if got is None:
            got = named[path] = unit.name(os.path.normpath(path))
        return got

    ranges: dict[str, list[tuple[int, int]]] = {}
    reentered: dict[str, list[tuple[int, int]]] = {}
    lines: dict[str, list[bytes]] = {}  # each file's lines, split once
    got = lib.clang_getAllSkippedRanges(tu.obj)
    try:
        for i in range(got.contents.count):
            r = got.contents.ranges[i]
            f = r.start.file
            if f is None:
                continue
            span = (int(r.start.line), int(r.end.line))
            into = reentered if _reentry(unit, f, span[0], lines) else ranges
            into.setdefault(rel(f.name), []).append(span)
    finally:
        lib.clang_disposeSourceRangeList(got)
    entered = {unit.file}
    count: dict[str, int] = {}
    for inc in tu.get_includes():  # an include its guard made clang skip is not listed
        if inc.include is None:
            continue
        r = rel(inc.include.name)
        entered.add(r)
        count[r] = count.get(r, 0) + 1
    # read more than once with its body compiled more than once: per-inclusion decisions
    repeated = {r: n for r, n in count.items() if n - len(reentered.get(r, ())) > 1}
    return Skipped(unit.file, {f: tuple(sorted(v)) for f, v in ranges.items()},
                   frozenset(entered), repeated, {f: tuple(v) for f, v in reentered.items()})


_GUARD = re.compile(rb"\s*#\s*ifndef\s+(\w+)\s*$")
_DEFINE = re.compile(rb"\s*#\s*define\s+(\w+)\b")


def _reentry(unit: Unit, file: cindex.File, line: int, lines: dict[str, list[bytes]]) -> bool:
    """Is the skipped range starting on ``line`` of ``file`` a guarded header entered again
    while it was still being read (a header that includes itself through others, as
    include/linux/mmzone.h does through memory_hotplug.h)?  Then its include guard
    ``#ifndef X`` on ``line`` was false and the whole body skipped, though the first entry
    took it: that entry's ``#define X`` on the next line is in clang's record of the macros
    defined (the cursor at the name, looked up by its place).  Such a range says nothing
    of the first entry's branches.  ``lines`` keeps
    each file's lines, split once."""
    if file.name not in lines:
        lines[file.name] = unit.contents(file).split(b"\n")
    text = lines[file.name]
    if not 0 < line <= len(text):
        return False
    m = _GUARD.match(text[line - 1])
    if m is None:
        return False
    name = m.group(1).decode()
    nxt = text[line] if line < len(text) else b""
    d = _DEFINE.match(nxt)
    if d is None or d.group(1) != m.group(1):
        return False
    # the cursor clang recorded where the #define names the macro (none if it was skipped)
    at = cindex.SourceLocation.from_position(unit.tu, file, line + 1, d.end() - len(name) + 1)
    c = cindex.Cursor.from_location(unit.tu, at)
    return bool(c.kind == cindex.CursorKind.MACRO_DEFINITION and c.spelling == name)


@frozen(eq=False)
class ClangBranches:
    """The :class:`equiv.linux.ktree.Preprocessor` of the C path: a branch of a file's text
    is taken when the compiler took it (:meth:`Skipped.taken`).  ``units`` are the
    translation units whose decisions count (the entry file's first; a ``.c`` file of
    another unit is added with :meth:`add` when the interpreter follows a call into it):
    a file is decided by every unit that read it, and they must agree (a header that two
    units compile otherwise is not decided).  ``files`` maps each text the reader holds
    (its bytes) to its relative names; ``decided`` records every answer given,
    ``(file, line) -> taken``, for reports and tests (it grows on read)."""

    units: list[Skipped]
    files: dict[bytes, tuple[str, ...]]
    decided: dict[tuple[str, int], bool] = field(factory=dict)

    @property
    def skipped(self) -> Skipped:
        """The entry file's unit."""
        return self.units[0]

    @property
    def assumed_undefined(self) -> set[str]:
        """Nothing is assumed: every branch is the compiler's."""
        return set()

    @classmethod
    def of(cls, skipped: Skipped, texts: Iterable[tuple[str, bytes]]) -> ClangBranches:
        """The branches of the texts ``(relative name, bytes)`` the reader holds (two files
        of the same text are both kept: a branch is decided when both agree)."""
        out = cls([skipped], {})
        out.add_texts(texts)
        return out

    def add_texts(self, texts: Iterable[tuple[str, bytes]]) -> None:
        """Hold the texts ``(relative name, bytes)`` too."""
        for f, src in texts:
            if f not in self.files.get(src, ()):
                self.files[src] = (*self.files.get(src, ()), f)

    def add(self, skipped: Skipped, texts: Iterable[tuple[str, bytes]]) -> None:
        """Count the decisions of another unit, and hold its texts."""
        if all(u is not skipped for u in self.units):
            self.units.append(skipped)
        self.add_texts(texts)

    def _taken(self, file: str, line: int) -> bool:
        readers = [u for u in self.units if file in u.entered]
        if len(readers) <= 1:
            return (readers or self.units)[0].taken(file, line)
        got = {u.taken(file, line) for u in readers}
        if len(got) != 1:
            raise Undecided(f"{file}:{line}: {readers[0].unit} and another unit read compile "
                            "this conditional otherwise: which unit's branch runs is not one "
                            "answer")
        return got.pop()

    def taken(self, src: bytes, branch: Node) -> bool:
        """Is ``branch`` compiled (see :class:`equiv.linux.ktree.Preprocessor`)?

        Raises:
            Undecided: the text is not one of the reader's files, two files of the text or
                two units disagree, or as :meth:`Skipped.taken`.
        """
        names = self.files.get(src)
        if names is None:
            raise Undecided("a preprocessor conditional in a text that is not one of the "
                            "files read for this translation unit: not decided by the "
                            "compiler")
        line = branch.start_point[0] + 1
        got = {self._taken(f, line) for f in names}
        if len(got) != 1:
            raise Undecided(f"{' and '.join(names)} have the same text but clang took "
                            f"other branches at line {line} of each: which file a "
                            "definition is read from does not say which was compiled")
        for f in names:
            self.decided[(f, line)] = next(iter(got))
        return got.pop()


__all__ = ["ClangBranches", "Skipped", "Undecided", "skipped"]

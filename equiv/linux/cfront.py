"""Kernel C typed by a C compiler's front end: clang, through the ``libclang`` wheel.

Every answer here (a type, a ``sizeof``, a field offset, a union view, an implicit conversion,
the signedness and width of a variable) is clang's own, read from its typed syntax tree
(``clang.cindex``); nothing is computed from declarations by this module.

**Input.**  A kernel source tree (its ``include/``, ``arch/<arch>/include/`` and the
directory of the file, e.g. all of ``mm/``: ``mm/internal.h`` includes ``"vma.h"``) and the
generated headers of one configuration, :class:`Headers`: the role of Kbuild's
``$(srctree)`` for headers (Debian's ``linux-headers-<abi>-common``) and of its
``$(objtree)`` (``linux-headers-<abi>-<flavour>``: ``include/generated/autoconf.h``,
``bounds.h`` with ``NR_PAGEFLAGS``, ``asm-offsets.h``, ``include/config/``), or one prepared
tree (``make olddefconfig prepare``) playing both.  :func:`clang_args` lays them out as the
kernel's top Makefile does (``LINUXINCLUDE``, ``USERINCLUDE``, the three ``-include``\\ s),
the tree's own headers before the packaged ones, with the ``KBUILD_CFLAGS`` that change a
type (``-std=gnu11``, ``-funsigned-char``, ``-fshort-wchar``) and the ``-Werror=``\\ s of
``scripts/Makefile.extrawarn`` that make a build fail (an undeclared function is an error).
Neither ``-fms-extensions`` (not a 6.12 build flag: under it a tagged struct declared inside a
struct becomes an anonymous member) nor ``-Wno-everything`` (it silences the error for an
undeclared function) is passed.

**Parse time** of Debian's linux-source-6.12 ``mm/mm_init.c`` (6.12.117, and 6.12.118
against the same 6.12.117 headers: 0 errors either way) with Debian's 6.12.117 amd64 headers,
749 files read, on a 2-core machine shared with other work (load average 3): cold (the first
:func:`parse` of a fresh process, libclang loaded) 0.4-1.5 s, warm (another parse in the same
process) 0.4-0.9 s; then :func:`struct_layout` of ``struct page`` and :func:`function_types` of
``__init_zone_device_page``, ``memmap_init_compound`` and ``memmap_init_zone_device`` take
0.2-0.4 s together.  libclang itself loads in 0.02 s.

**What the Python bindings lack, bound here with ctypes** (functions of libclang's stable C
API, present in the wheel's ``libclang.so``): the operator of a binary expression
(``clang_getCursorBinaryOperatorKind``), the value of a constant expression
(``clang_Cursor_Evaluate``: clang's own constant evaluator, the one that folds ``sizeof``),
anonymous members (``clang_Cursor_isAnonymousRecordDecl``; the bindings' ``is_anonymous``
also says True for a named member of an unnamed union type), a type without its
qualifiers (``clang_getUnqualifiedType``) and the text clang read
(``clang_getFileContents``, the patched text for a patched file) and the lines the
preprocessor skipped (``clang_getAllSkippedRanges``: :mod:`equiv.linux.skipped`).

**Macros.**  A cursor's location is the expansion site: for code from a macro's body, where
the macro is used (``file:line`` in every answer is that one).  libclang gives no spelling
location (its ``clang_getSpellingLocation`` answers the expansion site too), but
``clang_tokenize`` lexes from the spelling location of a range's start, so the tokens as
written are read from there (:meth:`Unit.spelled`): a ``sizeof`` in a macro's body has its
operator and operand as the macro spells them, and ``spelled`` says where.

**Implicit conversions.**  The bindings show clang's ``ImplicitCastExpr`` as
``UNEXPOSED_EXPR`` whose type is the converted type; the kind of cast (``IntegralCast``,
``LValueToRValue``, ...) is not in the C API (``clang -Xclang -ast-dump=json`` prints it).
A conversion here is an unexposed expression with one child whose unqualified canonical
type differs from the child's.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from attrs import field, frozen
from clang import cindex

from equiv.engine.errors import InputError
from equiv.linux.btf import Member

#: ``KBUILD_CFLAGS`` of the kernel's top Makefile that change what a type is
TYPE_FLAGS = ("-std=gnu11", "-funsigned-char", "-fshort-wchar")
#: where the build's own flags are not known (Debian's packaged headers): the top Makefile's
#: optimisation for CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE, the default (``__OPTIMIZE__``)
DEFAULT_FLAGS = ("-O2",)
#: ``scripts/Makefile.extrawarn``'s errors that clang knows: code the kernel build rejects
ERROR_FLAGS = ("-Werror=implicit-function-declaration", "-Werror=implicit-int",
               "-Werror=return-type", "-Werror=strict-prototypes",
               "-Werror=incompatible-pointer-types")
#: the headers forced into every kernel C file (``USERINCLUDE`` and ``c_flags``), in order
FORCED = ("include/linux/compiler-version.h", "include/linux/kconfig.h",
          "include/linux/compiler_types.h")
#: bytes of text read from where an expression is written, for its spelling
WINDOW = 4096
#: a Debian flavour's last word -> (the kernel's ``SRCARCH``, clang's target)
DEBIAN_ARCHES = {"amd64": ("x86", "x86_64-linux-gnu"), "arm64": ("arm64", "aarch64-linux-gnu")}

_K = cindex.CursorKind
_T = cindex.TypeKind
_SIGNED = frozenset({_T.SCHAR, _T.CHAR_S, _T.SHORT, _T.INT, _T.LONG, _T.LONGLONG, _T.INT128})
_UNSIGNED = frozenset({_T.BOOL, _T.CHAR_U, _T.UCHAR, _T.USHORT, _T.UINT, _T.ULONG,
                       _T.ULONGLONG, _T.UINT128, _T.CHAR16, _T.CHAR32})
_RECORDS = frozenset({_K.STRUCT_DECL, _K.UNION_DECL})
_OPERATORS = frozenset({_K.BINARY_OPERATOR, _K.COMPOUND_ASSIGNMENT_OPERATOR})
_TRAITS = ("sizeof", "__alignof__", "__alignof", "_Alignof", "alignof")


@frozen
class Headers:
    """The headers of one kernel configuration, in Kbuild's two roles.

    ``source`` plays ``$(srctree)`` for headers (``include/``, ``arch/<arch>/include/`` and
    their ``uapi/``: Debian's ``linux-headers-<abi>-common``); ``build`` plays
    ``$(objtree)`` (``include/generated/``, ``arch/<arch>/include/generated/``,
    ``include/config/``, ``.config``: Debian's ``linux-headers-<abi>-<flavour>``).  A tree
    after ``make prepare`` is both (:meth:`prepared`).
    """

    source: Path
    build: Path
    arch: str = "x86"  #: the kernel's ``SRCARCH``
    target: str = "x86_64-linux-gnu"  #: clang's ``--target``
    #: the flags the tree's build gives every C file (``-std``, ``-funsigned-char``, ``-O2``,
    #: ...: :func:`equiv.linux.kbuild.c_flags`); empty when not asked of the build (Debian's
    #: packaged headers): then :data:`TYPE_FLAGS` and :data:`DEFAULT_FLAGS`
    cflags: tuple[str, ...] = ()

    @classmethod
    def debian(cls, usr_src: Path, abi: str, flavour: str) -> Headers:
        """Debian's two packages as unpacked under ``usr_src`` (``.../usr/src``): for ``abi``
        ``6.12.117+deb12`` and ``flavour`` ``amd64``, ``linux-headers-6.12.117+deb12-common``
        and ``linux-headers-6.12.117+deb12-amd64``.

        Raises:
            InputError: a flavour of an architecture not in :data:`DEBIAN_ARCHES`.
        """
        word = flavour.rsplit("-", 1)[-1]
        if word not in DEBIAN_ARCHES:
            raise InputError(f"Debian flavour {flavour!r}: unknown architecture {word!r}; "
                             f"valid: {', '.join(DEBIAN_ARCHES)}")
        arch, target = DEBIAN_ARCHES[word]
        return cls(usr_src / f"linux-headers-{abi}-common", usr_src / f"linux-headers-{abi}-{flavour}",
                   arch, target)

    @classmethod
    def prepared(cls, tree: Path, arch: str = "x86", target: str = "x86_64-linux-gnu") -> Headers:
        """A kernel tree configured and prepared in place (``make olddefconfig prepare``)."""
        return cls(tree, tree, arch, target)


def _sources(tree: Path, headers: Headers) -> list[Path]:
    return [tree] if tree.resolve() == headers.source.resolve() else [tree, headers.source]


def clang_args(tree: Path, file: str, headers: Headers) -> list[str]:
    """The arguments clang needs to compile ``file`` (relative to ``tree``) as Kbuild would.

    The include directories are those of the top Makefile's ``LINUXINCLUDE`` (which ends
    with ``USERINCLUDE``), each ``$(srctree)`` directory first from ``tree`` then from
    ``headers.source``, each ``$(objtree)`` one from ``headers.build``, then the file's own
    directory (Kbuild's ``-I $(srctree)/$(src)``), then that directory of ``headers.source``
    when it is another tree (the whole tree behind a tree of a few files); only directories
    that exist are named.

    Raises:
        InputError: ``headers.build`` has no ``include/generated/autoconf.h`` (not the
            generated headers of a configuration), or a forced header is in neither source.
    """
    autoconf = headers.build / "include" / "generated" / "autoconf.h"
    if not autoconf.is_file():
        raise InputError(f"{autoconf} is missing: {headers.build} is not the generated headers "
                         "of a kernel configuration (Debian's linux-headers-<abi>-<flavour>, "
                         "or a tree after make olddefconfig prepare)")
    srcs, a = _sources(tree, headers), headers.arch
    dirs: list[Path] = []
    for sub, gen in ((f"arch/{a}/include", f"arch/{a}/include/generated"),
                     ("include", "include"),
                     (f"arch/{a}/include/uapi", f"arch/{a}/include/generated/uapi"),
                     ("include/uapi", "include/generated/uapi")):
        dirs += [s / sub for s in srcs]
        dirs.append(headers.build / gen)
    flags = headers.cflags or ("-D__KERNEL__", *TYPE_FLAGS, *DEFAULT_FLAGS)
    out = ["-nostdinc", f"--target={headers.target}", *flags, *ERROR_FLAGS]
    seen: set[Path] = set()
    for d in dirs:
        if d.is_dir() and d not in seen:
            seen.add(d)
            out.append(f"-I{d}")
    for forced in FORCED:
        found = [s / forced for s in srcs if (s / forced).is_file()]
        if not found:
            raise InputError(f"{forced} is in neither {' nor '.join(map(str, srcs))}: not a kernel "
                             "tree or headers of the kernel's layout")
        out += ["-include", str(found[0])]
    stem = file.removesuffix(".c")
    base = Path(stem).name
    # the file's directory, then the same directory of the headers' tree (a tree of the
    # files a reader needs lacks mm/vma.h, which mm/internal.h includes as "vma.h")
    local = [str((s / file).parent) for s in srcs if (s / file).parent.is_dir()]
    out += [f"-I{d}" for d in dict.fromkeys([str((tree / file).parent), *local])]
    out += [f'-DKBUILD_MODFILE="{stem}"', f'-DKBUILD_BASENAME="{base}"',
            f'-DKBUILD_MODNAME="{base}"', f"-D__KBUILD_MODNAME=kmod_{base}"]
    return out


# --- the C API calls the bindings lack ----------------------------------------------------


class _CXString(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("private_flags", ctypes.c_uint)]


class RangeList(ctypes.Structure):
    """libclang's ``CXSourceRangeList`` (:mod:`equiv.linux.skipped`)."""

    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(cindex.SourceRange))]


@cache
def _lib() -> ctypes.CDLL:
    """A second handle on the bindings' ``libclang.so`` (its own function prototypes, so the
    bindings' are left as they set them)."""
    lib = ctypes.CDLL(cindex.conf.get_filename())
    for name, res, args in (
        ("clang_getCString", ctypes.c_char_p, [_CXString]),
        ("clang_disposeString", None, [_CXString]),
        ("clang_getCursorBinaryOperatorKind", ctypes.c_int, [cindex.Cursor]),
        ("clang_getBinaryOperatorKindSpelling", _CXString, [ctypes.c_int]),
        ("clang_Cursor_Evaluate", ctypes.c_void_p, [cindex.Cursor]),
        ("clang_EvalResult_getKind", ctypes.c_int, [ctypes.c_void_p]),
        ("clang_EvalResult_isUnsignedInt", ctypes.c_uint, [ctypes.c_void_p]),
        ("clang_EvalResult_getAsUnsigned", ctypes.c_ulonglong, [ctypes.c_void_p]),
        ("clang_EvalResult_getAsLongLong", ctypes.c_longlong, [ctypes.c_void_p]),
        ("clang_EvalResult_dispose", None, [ctypes.c_void_p]),
        ("clang_Cursor_isAnonymousRecordDecl", ctypes.c_uint, [cindex.Cursor]),
        ("clang_getUnqualifiedType", cindex.Type, [cindex.Type]),
        ("clang_getFileContents", ctypes.c_void_p,
         [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]),
        ("clang_getAllSkippedRanges", ctypes.POINTER(RangeList), [ctypes.c_void_p]),
        ("clang_disposeSourceRangeList", None, [ctypes.POINTER(RangeList)]),
    ):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def _string(s: _CXString) -> str:
    lib = _lib()
    try:
        raw = lib.clang_getCString(s)
        return raw.decode("utf-8", "replace") if raw else ""
    finally:
        lib.clang_disposeString(s)


def _operator(c: cindex.Cursor) -> str:
    lib = _lib()
    return _string(lib.clang_getBinaryOperatorKindSpelling(lib.clang_getCursorBinaryOperatorKind(c)))


_EVAL_INT = 1


def evaluate(c: cindex.Cursor) -> int | None:
    """The integer value clang's constant evaluator gives expression ``c``
    (``clang_Cursor_Evaluate``), or None where it is not an integer constant."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(c)
    if not res:
        return None
    try:
        if lib.clang_EvalResult_getKind(res) != _EVAL_INT:
            return None
        if lib.clang_EvalResult_isUnsignedInt(res):
            return int(lib.clang_EvalResult_getAsUnsigned(res))
        return int(lib.clang_EvalResult_getAsLongLong(res))
    finally:
        lib.clang_EvalResult_dispose(res)


def _anonymous_member(field: cindex.Cursor) -> bool:
    """True for a member with no name whose members are its parent's (C11 6.7.2.1p13)."""
    decl = field.type.get_canonical().get_declaration()
    return decl.kind in _RECORDS and bool(_lib().clang_Cursor_isAnonymousRecordDecl(decl))


def _unqualified(t: cindex.Type) -> str:
    return str(_lib().clang_getUnqualifiedType(t.get_canonical()).spelling)


# --- a parsed file ------------------------------------------------------------------------


def _index() -> cindex.Index:
    """A new clang index for each parse (0.3 ms): parses may run in threads of their own
    (:func:`equiv.zone_device.source.patchproof._read_sides`), and libclang does not promise
    that one index may be used from several threads at once; each unit keeps its own."""
    return cindex.Index.create()


@frozen(eq=False)
class Unit:
    """One parsed C file: clang's translation unit, and the roots that file names in its
    answers are given relative to (the tree, then the headers' two roots)."""

    tu: cindex.TranslationUnit
    file: str  #: the parsed file, relative to the tree (``mm/mm_init.c``)
    roots: tuple[Path, ...]
    _top: dict[Any, dict[str, list[cindex.Cursor]]] = field(factory=dict, init=False,
                                                            repr=False)
    _kinds: dict[int, list[cindex.Cursor]] = field(factory=dict, init=False, repr=False)

    def top(self, kind: Any) -> dict[str, list[cindex.Cursor]]:
        """The cursors of the file's scope of ``kind`` (a ``CursorKind``) by name, in the
        order clang read them (one walk of the scope, kept; each kind's names read the
        first time it is asked: of the 45,000 cursors of ``mm/mm_init.c``'s scope, a third
        are macro uses and includes, never asked, whose names cost as much as the walk)."""
        if not self._kinds:
            by_kind: dict[int, list[cindex.Cursor]] = {}
            tu = self.tu

            def visit(child: cindex.Cursor, _parent: cindex.Cursor, _data: object) -> int:
                child._tu = tu  # as the bindings' get_children: the unit outlives the cursor
                # the CXCursor's own kind field (clang_getCursorKind returns it), read
                # without a call into libclang
                by_kind.setdefault(child._kind_id, []).append(child)
                return 1  # CXChildVisit_Continue

            cindex.conf.lib.clang_visitChildren(tu.cursor, cindex.callbacks["cursor_visit"](visit),
                                                None)
            self._kinds.update(by_kind)
        if kind not in self._top:
            names: dict[str, list[cindex.Cursor]] = {}
            for c in self._kinds.get(kind.value, ()):
                names.setdefault(str(c.spelling), []).append(c)
            self._top[kind] = names
        return self._top[kind]

    def name(self, path: str) -> str:
        """``path`` relative to the first root it is under (as it is otherwise)."""
        return _relative(self.roots, path)

    def where(self, loc: cindex.SourceLocation) -> str:
        """``file:line`` of ``loc``'s expansion site (for code from a macro: where the macro
        is used)."""
        return f"{self.name(loc.file.name) if loc.file else '?'}:{loc.line}"

    def _buffer(self, file: cindex.File) -> tuple[int, int]:
        size = ctypes.c_size_t()
        buf = _lib().clang_getFileContents(self.tu.obj, file.obj, ctypes.byref(size))
        return (buf or 0), (size.value if buf else 0)

    def contents(self, file: cindex.File) -> bytes:
        """The text of ``file`` as clang read it (the replaced text for a patched file)."""
        buf, size = self._buffer(file)
        return ctypes.string_at(buf, size) if buf else b""

    def text(self, file: cindex.File, start: int, end: int) -> str:
        """Bytes ``start:end`` of ``file`` as clang read it, whitespace runs made one space."""
        buf, size = self._buffer(file)
        start, end = max(0, start), min(end, size)
        if not buf or end <= start:
            return ""
        return " ".join(ctypes.string_at(buf + start, end - start).decode("utf-8", "replace").split())

    def source(self, c: cindex.Cursor) -> str:
        """The text of ``c`` at its expansion site (for code from a macro: the macro's use);
        "" when its ends are not in one file in order."""
        s, e = c.extent.start, c.extent.end
        if s.file is None or e.file is None or s.file.name != e.file.name or e.offset < s.offset:
            return ""
        return self.text(s.file, s.offset, e.offset)

    def first_token(self, c: cindex.Cursor) -> cindex.Token | None:
        """``c``'s first token as written (see :meth:`spelled`), or None."""
        start = c.extent.start
        first = list(self.tu.get_tokens(extent=cindex.SourceRange.from_locations(start, start)))
        return first[0] if first and first[0].location.file is not None else None

    def spelled(self, c: cindex.Cursor) -> list[cindex.Token]:
        """The tokens from where ``c`` begins as written (inside a macro's definition for
        code from a macro's body) to at most :data:`WINDOW` bytes on; [] when clang has no
        text there.

        libclang gives only file locations for code from macros (its
        ``clang_getSpellingLocation`` answers the expansion site), but ``clang_tokenize``
        lexes from the spelling location of a range's start: the one token of the empty
        range at ``c``'s start is its first token as written, and the tokens are read on
        from that token's own (file) location."""
        first = self.first_token(c)
        if first is None:
            return []
        loc = first.location
        size = self._buffer(loc.file)[1]
        end = cindex.SourceLocation.from_offset(self.tu, loc.file, min(loc.offset + WINDOW, size))
        return list(self.tu.get_tokens(extent=cindex.SourceRange.from_locations(loc, end)))


@lru_cache(maxsize=1 << 16)
def _relative(roots: tuple[Path, ...], path: str) -> str:
    """``path`` relative to the first of ``roots`` it is under (memoised: a unit names the
    same few hundred files thousands of times)."""
    p = Path(path)
    for r in roots:
        if p.is_relative_to(r):
            return str(p.relative_to(r))
    return path


def parse(tree: Path, file: str, headers: Headers, *, text: str | None = None,
          extra: str = "", files: Mapping[str, str] | None = None,
          include: Sequence[Path] = (), macros: bool = False) -> Unit:
    """``file`` of ``tree`` (relative, e.g. ``mm/mm_init.c``) parsed and typed by clang with
    :func:`clang_args`.

    ``text`` replaces the file's own text (a patched file) and ``extra`` is appended to it
    (code typed in the file's scope, e.g. a function written by a test); both reach clang as
    an unsaved file under the file's own name, so its ``#include "..."`` still resolve.
    ``files`` replaces the text of other files of the tree (relative paths: a patched
    header) the same way; ``include`` adds directories searched after all others (the
    file's own directory in a tree that holds the rest of it).  ``macros`` keeps clang's
    record of the macros defined (``PARSE_DETAILED_PROCESSING_RECORD``), for
    :func:`macro_constants` to say where each is defined.

    Raises:
        InputError: a missing tree, file or headers; an error clang reports (the first one,
            as ``file:line: message``, with the number of others).
    """
    if not tree.is_dir():
        raise InputError(f"{tree}: not a directory (the kernel tree to parse {file} in)")
    path = tree / file
    if text is None and not path.is_file():
        raise InputError(f"{path}: no such file in the kernel tree {tree}")
    args = clang_args(tree, file, headers) + [f"-idirafter{d}" for d in include]
    unsaved: list[tuple[str, str]] = [(str(tree / f), t) for f, t in (files or {}).items()
                                      if f != file]
    if text is not None or extra:
        unsaved.append((str(path), (path.read_text() if text is None else text) + extra))
    try:
        tu = _index().parse(str(path), args=args, unsaved_files=unsaved,
                            options=_MACROS if macros else 0)
    except cindex.TranslationUnitLoadError as e:
        raise InputError(f"{path}: clang could not load it ({e})") from None
    roots = tuple(dict.fromkeys([tree, headers.source, headers.build]))
    errors = [d for d in tu.diagnostics if d.severity >= cindex.Diagnostic.Error]
    if errors:
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        loc = errors[0].location
        where = f"{_relative(roots, loc.file.name)}:{loc.line}" if loc.file else "clang"
        raise InputError(f"{where}: {errors[0].spelling}{more}")
    return Unit(tu, file, roots)


# --- constants ----------------------------------------------------------------------------

_MACROS = cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
#: the function :func:`constant_probe` appends to a file
PROBE = "__equiv_constants"
_TYPE, _BITS = "__equiv_type_", "__equiv_bits_"


def constant_probe(names: Iterable[str]) -> str:
    """C text to append to a file (:func:`parse`'s ``extra``, with ``macros``) that makes
    clang type and evaluate each object-like macro of ``names`` the file defines at its end:
    a function :data:`PROBE` whose locals are ``__auto_type __equiv_type_N = (N);`` (the
    macro's expansion, with its own type) and ``unsigned long long __equiv_bits_N =
    (unsigned long long)(N);`` (its value as 64 bits, a pointer's address included), each
    under ``#ifdef N`` (a macro the file does not define is not asked).  A macro that is
    not a constant there (a variable's name) is typed and not evaluated."""
    body = "".join(f"#ifdef {n}\n\t__auto_type {_TYPE}{n} = ({n});\n"
                   f"\tunsigned long long {_BITS}{n} = (unsigned long long)({n});\n#endif\n"
                   for n in names)
    return f"\nstatic void __attribute__((unused)) {PROBE}(void)\n{{\n{body}}}\n"


@frozen(kw_only=True)
class Constant:
    """An object-like macro or an enumeration constant, as clang types and evaluates it."""

    name: str
    where: str  #: ``file:line`` of its (last) definition
    type: str  #: its canonical type (``int``, ``unsigned long``, ``void *``)
    signed: bool | None  #: :func:`signedness` (None: not an integer type)
    size: int | None  #: ``sizeof`` its type
    pointer: bool
    value: int | None  #: clang's constant evaluation, as 64 bits two's complement; None if not a constant


def macro_constants(unit: Unit) -> dict[str, Constant]:
    """The macros :func:`constant_probe` asked about, as clang types and evaluates them in
    ``unit`` (parsed with that probe and ``macros``); {} when it has no probe."""
    fn = _definition(unit, frozenset({_K.FUNCTION_DECL}), PROBE)
    if fn is None:
        return {}
    defs = unit.top(_K.MACRO_DEFINITION)
    typed: dict[str, cindex.Type] = {}
    bits: dict[str, int | None] = {}
    for c in fn.walk_preorder():
        if c.kind != _K.VAR_DECL:
            continue
        name = str(c.spelling)
        init = [k for k in c.get_children() if k.kind.is_expression()]
        if name.startswith(_TYPE):
            typed[name.removeprefix(_TYPE)] = c.type.get_canonical()
        elif name.startswith(_BITS) and init:
            v = evaluate(init[-1])
            bits[name.removeprefix(_BITS)] = None if v is None else v & ((1 << 64) - 1)
    out: dict[str, Constant] = {}
    for name, t in typed.items():
        where = unit.where(defs[name][-1].location) if defs.get(name) else "?"
        out[name] = Constant(name=name, where=where, type=str(t.spelling), signed=signedness(t),
                             size=_size(t), pointer=t.kind == _T.POINTER, value=bits.get(name))
    return out


def enum_constants(unit: Unit) -> dict[str, Constant]:
    """Every enumeration constant of the file's scope (C11 6.7.2.2p3: of type ``int``), with
    the value clang gives it, where it is declared."""
    out: dict[str, Constant] = {}
    for decls in unit.top(_K.ENUM_DECL).values():
        for e in decls:
            for c in e.get_children():
                if c.kind == _K.ENUM_CONSTANT_DECL:
                    t = c.type.get_canonical()
                    out[str(c.spelling)] = Constant(
                        name=str(c.spelling), where=unit.where(c.location), type=str(t.spelling),
                        signed=signedness(t), size=_size(t), pointer=False,
                        value=int(c.enum_value) & ((1 << 64) - 1))
    return out


# --- struct layouts -----------------------------------------------------------------------


@frozen(kw_only=True)
class Field:
    """One member of a struct, at any depth, as clang lays it out.

    ``path`` names it as C code does from the outer struct: members of anonymous structs and
    unions are the parent's (``compound_head``), a named member's own members follow a dot
    (``lru.next``).  Offsets are from the start of the outer struct.
    """

    path: str
    type: str  #: as declared (``atomic_t``, ``struct list_head``, ``unsigned int``)
    offset: int  #: bytes (``bit_offset // 8``)
    size: int  #: bytes: ``sizeof`` its type (its declared type for a bitfield; 0 for a flexible array)
    bit_offset: int
    bit_width: int | None  #: a bitfield's width in bits; None for other members
    in_union: bool  #: some struct or union around it, below the outer struct, is a union
    record: bool  #: its type is a struct or union whose members are listed after it


@frozen
class StructLayout:
    """``sizeof``, ``_Alignof`` and every member (:class:`Field`, in declaration order, depth
    first) of one struct or union."""

    name: str
    where: str  #: ``file:line`` of the definition
    size: int
    align: int
    fields: tuple[Field, ...]

    def field(self, path: str) -> Field:
        """The member at ``path``.

        Raises:
            InputError: no such member.
        """
        for f in self.fields:
            if f.path == path:
                return f
        raise InputError(f"struct {self.name} ({self.where}) has no member {path!r}")

    def members(self, expand: Iterable[str] = ()) -> dict[str, Member]:
        """The members as :meth:`equiv.linux.btf.Btf.members` gives them from BTF, so the
        two can be compared key by key: those of the struct itself (anonymous structs and
        unions descended into), and one level of each named member in ``expand``; a
        bitfield's size is its width in whole bytes."""
        wanted = frozenset(expand)
        out: dict[str, Member] = {}
        for f in self.fields:
            head, dot, rest = f.path.partition(".")
            if dot and (head not in wanted or "." in rest):
                continue
            width = f.bit_width or 0
            size = (width + 7) // 8 if width else f.size
            out.setdefault(f.path, Member(f.path, f.offset, size, f.bit_offset, width))
        return out


def _definition(unit: Unit, kinds: frozenset[Any], name: str) -> cindex.Cursor | None:
    """The first file-scope definition of ``name`` among ``kinds`` in ``unit`` (its index,
    :meth:`Unit.top`, built once)."""
    found = [c for k in kinds for c in unit.top(k).get(name, ()) if c.is_definition()]
    return found[0] if found else None


def struct_layout(unit: Unit, name: str) -> StructLayout:
    """The layout of ``struct name`` (or ``union name``) as clang computes it:
    ``Type.get_size``, ``get_align`` and each member's ``get_field_offsetof``, recursing
    into every struct or union member.

    Raises:
        InputError: the file defines no such struct or union at file scope.
    """
    decl = _definition(unit, _RECORDS, name)
    if decl is None:
        raise InputError(f"{unit.file}: no definition of struct or union {name!r}")
    out: list[Field] = []
    _fields(decl, 0, "", False, out)
    return StructLayout(name, unit.where(decl.location), int(decl.type.get_size()),
                        int(decl.type.get_align()), tuple(out))


def _fields(record: cindex.Cursor, base: int, prefix: str, in_union: bool, out: list[Field]) -> None:
    union = in_union or record.kind == _K.UNION_DECL
    for f in record.type.get_fields():
        bits = base + int(f.get_field_offsetof())
        inner = f.type.get_canonical().get_declaration()
        nested = inner.kind in _RECORDS
        if _anonymous_member(f):
            _fields(inner, bits, prefix, union, out)
            continue
        path = prefix + str(f.spelling)
        width = int(f.get_bitfield_width()) if f.is_bitfield() else None
        out.append(Field(path=path, type=str(f.type.spelling), offset=bits // 8,
                         size=_size(f.type) or 0, bit_offset=bits, bit_width=width,
                         in_union=union, record=nested))
        if nested:
            _fields(inner, bits, path + ".", union, out)


# --- the types of a function --------------------------------------------------------------


def signedness(t: cindex.Type) -> bool | None:
    """True for a signed integer type, False for an unsigned one (``_Bool`` included), None
    for any other type; from the canonical type's kind (an enum by its underlying type;
    plain ``char`` is unsigned under the kernel's ``-funsigned-char``)."""
    c = t.get_canonical()
    if c.kind == _T.ENUM:
        c = c.get_declaration().enum_type.get_canonical()
    if c.kind in _SIGNED:
        return True
    if c.kind in _UNSIGNED:
        return False
    return None


def _size(t: cindex.Type) -> int | None:
    n = int(t.get_size())
    return n if n >= 0 else None


@frozen(kw_only=True)
class Variable:
    """A parameter or local variable of a function, typed by clang."""

    name: str
    where: str  #: ``file:line`` of its declaration (the macro's use for a macro's local)
    type: str  #: as declared
    canonical: str  #: typedefs resolved (``unsigned long`` for ``size_t``)
    kind: str  #: the canonical type's ``TypeKind``: ``INT``, ``ULONG``, ``POINTER``, ``RECORD``, ...
    size: int | None  #: bytes; None for a type without a constant size (a VLA)
    signed: bool | None  #: :func:`signedness`
    parameter: bool
    static: bool


@frozen(kw_only=True)
class TraitExpr:
    """A ``sizeof`` or ``_Alignof`` (clang's ``UnaryExprOrTypeTraitExpr``) and its value.

    ``value`` is clang's constant evaluation of the expression (``clang_Cursor_Evaluate``),
    never a size looked up here; None where it is not a constant (a VLA operand).  For an
    expression operand, ``operand_type`` is that expression's type (whose ``get_size`` is
    the ``sizeof``); for a type operand it is None (libclang does not expose the type
    argument) and ``operand`` spells the type.
    """

    where: str  #: ``file:line`` where it is evaluated (a macro's use)
    spelled: str  #: ``file:line`` where it is written (a macro's definition, or ``where``)
    operator: str  #: ``sizeof``, ``_Alignof``, ``__alignof__``, ...
    operand: str  #: the operand as written, without the operator
    operand_type: str | None
    value: int | None
    type: str = ""  #: the expression's own type (``unsigned long``: ``size_t``)


@frozen
class Operand:
    """One side of a binary operator: its text, the type it has as written and the type the
    operator computes with, after clang's implicit conversions (the same when none)."""

    text: str
    written: str
    type: str


@frozen(kw_only=True)
class BinaryOp:
    """A binary operator, comparison or assignment (compound ones included) and the types
    of its operands after clang's usual arithmetic conversions and integer promotions."""

    where: str
    spelled: str
    operator: str  #: ``<``, ``=``, ``+=``, ...
    lhs: Operand
    rhs: Operand
    type: str  #: the result's type


@frozen(kw_only=True)
class Conversion:
    """One implicit conversion clang inserted (an integer promotion, an arithmetic
    conversion, an array or function decaying to a pointer, a conversion on assignment, on
    a call's argument or on return) that changes the unqualified canonical type."""

    where: str
    spelled: str
    text: str  #: the converted expression as written
    from_type: str
    to_type: str
    context: str  #: the cursor kind around it: ``BINARY_OPERATOR``, ``CALL_EXPR``, ``RETURN_STMT``, ...


@frozen(kw_only=True)
class FunctionTypes:
    """What clang says about the types in one function definition."""

    name: str
    where: str
    result: str  #: the return type
    variables: tuple[Variable, ...]  #: parameters in order, then locals in source order
    traits: tuple[TraitExpr, ...]  #: every ``sizeof``/``_Alignof``, in source order
    operators: tuple[BinaryOp, ...]  #: every binary operator, in source order (outer first)
    conversions: tuple[Conversion, ...]

    def variable(self, name: str) -> Variable:
        """The first parameter or local named ``name``.

        Raises:
            InputError: none.
        """
        for v in self.variables:
            if v.name == name:
                return v
        raise InputError(f"{self.name}() ({self.where}) has no parameter or local {name!r}")


def function_types(unit: Unit, name: str) -> FunctionTypes:
    """The types clang gives the parameters, locals, ``sizeof``/``_Alignof`` expressions,
    binary operators and implicit conversions of the definition of function ``name``.

    Raises:
        InputError: the file defines no function ``name``.
    """
    fn = _definition(unit, frozenset({_K.FUNCTION_DECL}), name)
    if fn is None:
        raise InputError(f"{unit.file}: no definition of function {name!r}")
    variables = [_variable(unit, p, parameter=True) for p in fn.get_arguments()]
    traits: list[TraitExpr] = []
    ops: list[BinaryOp] = []
    convs: list[Conversion] = []
    for c, parent in _walk(fn, None):
        if c.kind == _K.VAR_DECL:
            variables.append(_variable(unit, c, parameter=False))
        elif c.kind == _K.CXX_UNARY_EXPR:
            traits.append(_trait(unit, c))
        elif c.kind in _OPERATORS:
            ops.append(_binary(unit, c))
        elif c.kind == _K.UNEXPOSED_EXPR and parent is not None:
            conv = _conversion(unit, c, parent)
            if conv is not None:
                convs.append(conv)
    return FunctionTypes(name=name, where=unit.where(fn.location), result=str(fn.result_type.spelling),
                         variables=tuple(variables), traits=tuple(traits), operators=tuple(ops),
                         conversions=tuple(convs))


def _walk(c: cindex.Cursor,
          parent: cindex.Cursor | None) -> Iterator[tuple[cindex.Cursor, cindex.Cursor | None]]:
    yield c, parent
    for ch in c.get_children():
        yield from _walk(ch, c)


def _variable(unit: Unit, c: cindex.Cursor, *, parameter: bool) -> Variable:
    t = c.type
    return Variable(name=str(c.spelling), where=unit.where(c.location), type=str(t.spelling),
                    canonical=str(t.get_canonical().spelling), kind=str(t.get_canonical().kind.name),
                    size=_size(t), signed=signedness(t), parameter=parameter,
                    static=c.storage_class == cindex.StorageClass.STATIC)


def _spelled(unit: Unit, c: cindex.Cursor) -> str:
    """``file:line`` where ``c`` begins as written (its expansion site when unknown)."""
    tok = unit.first_token(c)
    return unit.where(tok.location if tok is not None else c.location)


_PREFIX = frozenset({"*", "&", "-", "+", "!", "~", "++", "--"})
_POSTFIX = frozenset({"[", "(", ".", "->", "++", "--"})
_CLOSE = {"(": ")", "[": "]"}


def _balanced(tokens: list[cindex.Token], i: int) -> int:
    """The index after the bracket that closes the one at ``i`` (``len(tokens)`` if none)."""
    opening, depth = tokens[i].spelling, 0
    for j in range(i, len(tokens)):
        t = tokens[j].spelling
        depth += (t == opening) - (t == _CLOSE[opening])
        if depth == 0:
            return j + 1
    return len(tokens)


def _operand_end(tokens: list[cindex.Token], i: int) -> int:
    """The index after the operand of a ``sizeof`` whose operand starts at ``i``: a
    parenthesised one, or a unary expression (prefix operators, a name or literal or
    parenthesised expression, postfix subscripts, calls and member accesses)."""
    n = len(tokens)
    while i < n and tokens[i].spelling in _PREFIX:
        i += 1
    if i >= n:
        return n
    i = _balanced(tokens, i) if tokens[i].spelling == "(" else i + 1
    while i < n and tokens[i].spelling in _POSTFIX:
        t = tokens[i].spelling
        i = _balanced(tokens, i) if t in _CLOSE else i + (2 if t in (".", "->") else 1)
    return min(i, n)


def _trait(unit: Unit, c: cindex.Cursor) -> TraitExpr:
    tokens = unit.spelled(c)
    word = tokens[0].spelling if tokens and tokens[0].spelling in _TRAITS else "?"
    operand = ""
    if word != "?" and len(tokens) > 1:
        last = tokens[_operand_end(tokens, 1) - 1]
        operand = unit.text(tokens[1].location.file, tokens[1].extent.start.offset,
                            last.extent.end.offset)
    kids = [k for k in c.get_children() if k.kind.is_expression()]
    spelled = unit.where(tokens[0].location if tokens else c.location)
    return TraitExpr(where=unit.where(c.location), spelled=spelled, operator=word, operand=operand,
                     operand_type=str(kids[0].type.spelling) if kids else None, value=evaluate(c),
                     type=str(c.type.get_canonical().spelling))


def _written(c: cindex.Cursor) -> cindex.Cursor:
    """Below clang's implicit conversions: the expression as written."""
    while c.kind == _K.UNEXPOSED_EXPR:
        kids = list(c.get_children())
        if len(kids) != 1 or not kids[0].kind.is_expression():
            break
        c = kids[0]
    return c


def _binary(unit: Unit, c: cindex.Cursor) -> BinaryOp:
    lhs, rhs = list(c.get_children())[:2]
    sides = [Operand(unit.source(s), str(_written(s).type.spelling), str(s.type.spelling))
             for s in (lhs, rhs)]
    return BinaryOp(where=unit.where(c.location), spelled=_spelled(unit, c),
                    operator=_operator(c), lhs=sides[0], rhs=sides[1], type=str(c.type.spelling))


def _conversion(unit: Unit, c: cindex.Cursor, parent: cindex.Cursor) -> Conversion | None:
    kids = list(c.get_children())
    if len(kids) != 1 or not kids[0].kind.is_expression():
        return None
    src = kids[0]
    if _unqualified(src.type) == _unqualified(c.type):
        return None
    return Conversion(where=unit.where(c.location), spelled=_spelled(unit, c),
                      text=unit.source(c),
                      from_type=str(src.type.spelling), to_type=str(c.type.spelling),
                      context=str(parent.kind.name))


__all__ = [
    "DEBIAN_ARCHES", "ERROR_FLAGS", "FORCED", "PROBE", "TYPE_FLAGS", "BinaryOp", "Constant",
    "Conversion", "Field", "FunctionTypes", "Headers", "Operand", "StructLayout", "TraitExpr",
    "Unit", "Variable", "clang_args", "constant_probe", "enum_constants", "evaluate",
    "function_types", "macro_constants", "parse", "signedness", "struct_layout",
]

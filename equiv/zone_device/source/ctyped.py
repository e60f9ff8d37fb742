"""The types of a kernel tree's ``mm/mm_init.c`` as clang gives them, for the C interpreter.

:class:`TypedTree` parses the tree's ``mm/mm_init.c`` (with the patched texts of the files a
``--patch`` run changed) through :mod:`equiv.linux.cfront` (libclang, on the headers of one
configuration: :func:`equiv.zone_device.source.files.headers_for`) and answers every
question about a type that the interpreter (:mod:`equiv.zone_device.source.cinterp`) asks:

* the layout of ``struct page``, ``struct folio`` and of every struct or typedef'd struct
  the interpreter reaches (``struct list_head``, ``atomic_t``): offsets, sizes and the union
  views, all from clang's record layout (:func:`equiv.linux.cfront.struct_layout`);
* the value of every ``sizeof`` *by where it is written* (clang's constant evaluator,
  ``clang_Cursor_Evaluate``): ``sizeof(template)`` of a ``struct page *`` is 8, never the
  struct's size;
* the width and signedness of an integer type named anywhere (``int``, ``unsigned long``,
  the kernel's typedefs ``u64``, ``pgoff_t``, ``enum zone_type``), and ``sizeof`` of any
  type name: a name of the kernel's is looked up among the file's own typedefs and tags,
  any other (``unsigned long int``, ``struct page *``) in a one-line file clang parses for
  the same target;
* the declared type of every parameter and local of a function, and the types in which a
  binary operator computes after clang's implicit conversions (an ``int`` index compared
  with an ``unsigned long`` bound compares as ``unsigned long``);
* the value and type of the constants the kernel's C names (:data:`CONSTANTS`: the arch,
  section, pageblock and poison macros and the page-flags layout's shifts, widths and
  masks, under the configuration's headers), by clang's constant evaluator on a probe
  appended to the file (:func:`equiv.linux.cfront.constant_probe`), and of every
  enumeration constant (``ZONE_DEVICE``, ``MIGRATE_MOVABLE``), with where each is defined.

Nothing here computes a size, an offset or a conversion from a declaration: every number is
clang's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from attrs import frozen
from clang import cindex

from equiv.config import Config
from equiv.engine.errors import InputError
from equiv.engine.memo import Lru
from equiv.linux import cfront
from equiv.linux.callgraph import candidates, definition_sites
from equiv.linux.cfront import (
    BinaryOp,
    Constant,
    FunctionTypes,
    Headers,
    StructLayout,
    Unit,
    Variable,
)
from equiv.linux.ktree import KernelTree
from equiv.linux.skipped import ClangBranches, Skipped, skipped

#: the file the interpreter runs, relative to the tree
FILE = "mm/mm_init.c"

#: an integer type: (width in bits, signed)
IntType = tuple[int, bool]

#: the page-flags layout's sections (include/linux/page-flags-layout.h, include/linux/mm.h)
_FLAG_FIELDS = ("SECTIONS", "NODES", "ZONES", "LAST_CPUPID", "KASAN_TAG", "LRU_GEN", "LRU_REFS")
#: the object-like macros whose values clang evaluates for the interpreter
#: (:meth:`TypedTree.constant`): arch and poison constants (arch/*/include/asm/page_types.h,
#: include/linux/mmzone.h, include/linux/pageblock-flags.h, include/linux/poison.h,
#: include/linux/mm.h) and the page-flags layout (include/linux/page-flags-layout.h,
#: include/linux/mm.h)
CONSTANTS = ("PAGE_SHIFT", "PAGE_SIZE", "PFN_SECTION_SHIFT", "PAGES_PER_SECTION",
             "SECTION_SIZE_BITS", "pageblock_order", "pageblock_nr_pages", "TAIL_MAPPING",
             "POISON_POINTER_DELTA", "KASAN_TAG_KERNEL", "LAST_CPUPID_SHIFT", "ZONES_SHIFT",
             "NODES_SHIFT", "MAX_NUMNODES", "MAX_PHYSMEM_BITS",
             *(f"{f}_{w}" for f in _FLAG_FIELDS for w in ("PGSHIFT", "PGOFF", "WIDTH", "MASK")))

_K = cindex.CursorKind
_T = cindex.TypeKind
_RECORDS = frozenset({_K.STRUCT_DECL, _K.UNION_DECL})


@frozen
class TypeInfo:
    """What clang says about one type name."""

    spelling: str  #: as asked (qualifiers dropped)
    canonical: str  #: typedefs resolved
    size: int | None  #: ``sizeof``; None for an incomplete type or ``void``
    int_type: IntType | None  #: for an integer type (``_Bool`` and enums included)
    record: str | None  #: for a struct or union: the name :meth:`TypedTree.layout` takes
    pointer: bool


def _words(ctype: str) -> str:
    return " ".join(w for w in ctype.replace("*", " * ").split()
                    if w not in ("const", "volatile")).replace(" *", "*").replace("*", " *").strip()


def _info(spelling: str, t: cindex.Type, record: str | None) -> TypeInfo:
    c = t.get_canonical()
    size = int(c.get_size())
    signed = cfront.signedness(c)
    width = size * 8 if signed is not None and size > 0 else None
    return TypeInfo(spelling=spelling, canonical=str(c.spelling),
                    size=size if size >= 0 else None,
                    int_type=None if width is None or signed is None else (width, signed),
                    record=record, pointer=c.kind == _T.POINTER)


@cache
def _probe_index() -> cindex.Index:
    return cindex.Index.create()


class TypedTree:
    """One configuration's clang view of one tree's ``mm/mm_init.c`` (see the module's
    docstring).  Parsed once; answers are memoised."""

    def __init__(self, unit: Unit, headers: Headers) -> None:
        self.unit, self.headers = unit, headers
        #: where the unit was parsed from (:meth:`parse`): the tree, the whole tree behind a
        #: patched copy, and the texts that replace files of it
        self.root: Path | None = None
        self.full: Path | None = None
        self.sources: Mapping[str, bytes] = {}
        #: the units of other ``.c`` files whose functions the interpreter runs
        #: (:meth:`follow`), by file, and which unit defines each such function
        self.others: dict[str, TypedTree] = {}
        self.owner: dict[str, TypedTree] = {}
        self._layouts: dict[str, StructLayout] = {}
        self._functions: dict[str, FunctionTypes | None] = {}
        self._types: dict[str, TypeInfo | None] = {}
        self._names: dict[str, cindex.Cursor] | None = None
        self._constants: dict[str, Constant] | None = None
        self._skipped: Skipped | None = None
        #: answers other modules keep per typed tree (:mod:`equiv.zone_device.source.cdefs`:
        #: header definitions, stand-in checks), dropped with it
        self.memo: dict[tuple[str, str], object] = {}

    @classmethod
    def parse(cls, root: Path, sources: Mapping[str, bytes], headers: Headers,
              full: Path | None = None, file: str = FILE) -> TypedTree:
        """``file`` (``mm/mm_init.c``) of the tree at ``root`` whose files (relative paths)
        have the texts ``sources`` (a patched tree's; the others as on disk), typed with
        ``headers``.  ``full`` is a whole tree to parse in when ``root`` holds only the
        mirrored files (a patched copy): ``sources`` then replace its texts.  Where neither
        holds ``mm/``'s other headers, those of ``headers.source`` are read.

        Raises:
            InputError: no such file; a clang error (one line).
        """
        tree = root if full is None else full
        texts = {f: t.decode("utf-8", "replace") for f, t in sources.items()}
        if file not in texts and not (tree / file).is_file():
            raise InputError(f"{root}: no {file} to type with clang")
        include = [headers.source / "mm"] if (headers.source / "mm").is_dir() else []
        unit = cfront.parse(tree, file, headers, text=texts.get(file), files=texts,
                            include=include,
                            extra=cfront.constant_probe(CONSTANTS) if file == FILE else "",
                            macros=True)
        out = cls(unit, headers)
        out.root, out.full, out.sources = root, full, sources
        return out

    @classmethod
    def standalone(cls, root: Path, file: str, target: str = "x86_64-linux-gnu") -> TypedTree:
        """``file`` of ``root`` typed on its own (no kernel headers: a test's small C file
        that declares the types it uses), for clang's ``target``.  Such a file may call
        what it does not declare and hold code clang rejects on purpose (what the
        interpreter must refuse): clang's errors are not raised, and an expression clang
        could not type has no answer here (the interpreter then stops, never guesses)."""
        path = root / file
        args = ["-x", "c", f"--target={target}", "-nostdinc", *cfront.TYPE_FLAGS]
        tu = _probe_index().parse(str(path), args=args)
        return cls(Unit(tu, file, (root,)), Headers(root, root, target=target))

    # -- structs --------------------------------------------------------------------------

    def layout(self, name: str) -> StructLayout:
        """clang's layout of ``struct name`` (or ``union name``) of the file's scope.

        Raises:
            InputError: no such struct.
        """
        if name not in self._layouts:
            self._layouts[name] = cfront.struct_layout(self.unit, name)
        return self._layouts[name]

    def _index(self) -> dict[str, cindex.Cursor]:
        """Type names of the file's scope: ``struct x``/``union x``/``enum x`` of each
        definition and each typedef's name, to their declarations."""
        if self._names is None:
            names: dict[str, cindex.Cursor] = {}
            for n, decls in self.unit.top(_K.TYPEDEF_DECL).items():
                names.setdefault(n, decls[0])
            for kind, word in ((_K.STRUCT_DECL, "struct"), (_K.UNION_DECL, "union"),
                               (_K.ENUM_DECL, "enum")):
                for n, decls in self.unit.top(kind).items():
                    defs = [c for c in decls if c.is_definition()]
                    if n and defs:
                        names.setdefault(f"{word} {n}", defs[0])
            self._names = names
        return self._names

    def type_info(self, ctype: str) -> TypeInfo | None:
        """clang's answer for the type name ``ctype`` (qualifiers ignored), or None when it
        names no type of the file or of C."""
        key = _words(ctype)
        if key not in self._types:
            self._types[key] = self._lookup(key)
        return self._types[key]

    def _lookup(self, key: str) -> TypeInfo | None:
        decl = self._index().get(key)
        if decl is not None:
            t = decl.underlying_typedef_type if decl.kind == _K.TYPEDEF_DECL else decl.type
            rec = t.get_canonical().get_declaration()
            record = None
            if rec.kind in _RECORDS:
                record = str(rec.spelling) if rec.spelling and not _anonymous(rec) else key
            return _info(key, t, record)
        if key.endswith("*"):
            pointee = key[:-1].strip()
            if self.type_info(pointee) is None and pointee != "void":
                return None
            # a pointer's size does not depend on what it points to on the kernel's
            # targets; clang says how big one is for this target
            return self._probe(key if pointee.split()[0] in _C_WORDS else "void *", key)
        return self._probe(key, key) if key.split()[0] in _C_WORDS else None

    def _probe(self, ctype: str, spelling: str) -> TypeInfo | None:
        """A type of C itself (no kernel name in it), typed by clang in a one-line file
        for the configuration's target with the kernel's type flags."""
        src = f"{'struct ' + ctype.split()[1] + ';' if ctype.startswith(('struct ', 'union ')) else ''}" \
              f"typedef {ctype} __equiv_t;\n"
        args = [f"--target={self.headers.target}", "-nostdinc",
                *(self.headers.cflags or cfront.TYPE_FLAGS)]
        tu = _probe_index().parse("equiv_type.c", args=args, unsaved_files=[("equiv_type.c", src)])
        if any(d.severity >= cindex.Diagnostic.Error for d in tu.diagnostics):
            return None
        for c in tu.cursor.get_children():
            if c.kind == _K.TYPEDEF_DECL and c.spelling == "__equiv_t":
                return _info(spelling, c.underlying_typedef_type, None)
        return None

    def int_type(self, ctype: str) -> IntType | None:
        """``(bits, signed)`` of an integer type name (``bool``, enums and the kernel's
        typedefs included), None for any other type."""
        info = self.type_info(ctype)
        return None if info is None else info.int_type

    def sizeof_type(self, ctype: str) -> int | None:
        """``sizeof`` of a type name; None when clang knows no such complete type."""
        info = self.type_info(ctype)
        return None if info is None else info.size

    def record(self, ctype: str) -> StructLayout | None:
        """The layout of the struct or union ``ctype`` names (``struct page``, ``atomic_t``),
        None for any other type."""
        info = self.type_info(ctype)
        if info is None or info.record is None:
            return None
        if info.record == _words(ctype) and not ctype.startswith(("struct ", "union ")):
            return self._typedef_layout(info.record)
        return self.layout(info.record)

    def _typedef_layout(self, name: str) -> StructLayout:
        """The layout of a typedef of an unnamed struct (``atomic_t``)."""
        if name not in self._layouts:
            decl = self._index()[name]
            rec = decl.underlying_typedef_type.get_canonical().get_declaration()
            out: list[cfront.Field] = []
            cfront._fields(rec, 0, "", False, out)
            t = rec.type
            self._layouts[name] = StructLayout(name, self.unit.where(rec.location),
                                               int(t.get_size()), int(t.get_align()), tuple(out))
        return self._layouts[name]

    # -- constants -------------------------------------------------------------------------

    def constant(self, name: str) -> Constant | None:
        """clang's value and type of the macro ``name`` of :data:`CONSTANTS` (as the file
        defines it at its end) or of the enumeration constant ``name``; None for any other
        name, or one the file does not define."""
        if self._constants is None:
            self._constants = {**cfront.enum_constants(self.unit),
                               **cfront.macro_constants(self.unit)}
        return self._constants.get(name)

    def macros_defined(self, names: Iterable[str]) -> frozenset[str]:
        """Those of ``names`` the unit defines as a macro where clang read it (a
        ``#define`` on a line the preprocessor skipped is not one; an ``#undef`` is not
        followed: the page-flags layout's flags, the one use, are never undefined)."""
        defs = self.unit.top(_K.MACRO_DEFINITION)
        return frozenset(n for n in names if n in defs)

    def enumerators(self, name: str) -> dict[str, int]:
        """The enumerators of ``enum name`` with clang's values (the definition clang
        compiled, under this configuration).

        Raises:
            InputError: the unit defines no such enum.
        """
        decls = [d for d in self.unit.top(_K.ENUM_DECL).get(name, ()) if d.is_definition()]
        if not decls:
            raise InputError(f"enum {name}: not defined in {self.unit.file} as clang "
                             "compiled it")
        return {str(c.spelling): int(c.enum_value) for c in decls[0].get_children()
                if c.kind == _K.ENUM_CONSTANT_DECL}

    # -- the preprocessor -------------------------------------------------------------------

    def skipped(self) -> Skipped:
        """The lines clang's preprocessor skipped in this unit, file by file
        (:func:`equiv.linux.skipped.skipped`)."""
        if self._skipped is None:
            self._skipped = skipped(self.unit)
        return self._skipped

    def branches(self, tree: KernelTree) -> ClangBranches:
        """The :class:`~equiv.linux.ktree.Preprocessor` the interpreter reads ``tree``'s
        texts under: every ``#if`` branch decided as clang decided it in this unit."""
        return ClangBranches.of(self.skipped(), tree.sources.items())

    # -- definitions ------------------------------------------------------------------------

    def definition(self, name: str) -> tuple[Path, str, int] | None:
        """Where clang found the definition of the function or macro ``name`` compiled in
        this configuration (a static inline helper of a header the tree's file includes,
        an arch's own one included): the root it is read under, the file relative to it
        and the line the definition starts on; None if clang has none (a declaration only,
        a macro-generated function: its text is the generating macro's use)."""
        found = [c for c in self.unit.top(_K.FUNCTION_DECL).get(name, ()) if c.is_definition()]
        macros = self.unit.top(_K.MACRO_DEFINITION).get(name, ())
        start = found[0].extent.start if found else macros[-1].location if macros else None
        if start is None or start.file is None:
            return None
        path = Path(start.file.name)
        for root in self.unit.roots:
            if path.is_relative_to(root):
                return root, str(path.relative_to(root)), int(start.line)
        return None

    def read(self, path: Path) -> bytes:
        """The text of the file at ``path`` as clang read it in this unit (a patched text
        where one replaced the file's), else as it is on disk."""
        f = self.unit.tu.get_file(str(path))
        got = self.unit.contents(f) if f is not None else b""
        return got or path.read_bytes()

    # -- functions -------------------------------------------------------------------------

    def function(self, name: str) -> FunctionTypes | None:
        """clang's types in the definition of function ``name`` (None: the file defines no
        such function, e.g. a macro), in this unit or in the unit of another ``.c`` file
        :meth:`follow` found it in."""
        if name not in self._functions:
            try:
                self._functions[name] = cfront.function_types(self.unit, name)
            except InputError:
                self._functions[name] = None
        got = self._functions[name]
        if got is None and name in self.owner:
            return self.owner[name].function(name)
        return got

    def follow(self, name: str) -> tuple[str, bytes, TypedTree] | None:
        """The ``.c`` file, its text and its unit that define the external function
        ``name`` this unit calls but does not define (``vmem_altmap_offset`` of 6.1's
        mm/memremap.c, ``__init_single_page`` of mm/page_alloc.c before 6.4), compiled
        under the same configuration: the files of this file's directory that spell a
        definition of it (:func:`equiv.linux.callgraph.candidates`) are parsed, and the
        one whose unit clang compiles a non-static definition of ``name`` in is the
        callee.  None when none does.

        Raises:
            InputError: two files define it (which one links is not decided here), or a
                clang error in a candidate.
        """
        if name in self.owner:
            t = self.owner[name]
            return t.unit.file, t.sources[t.unit.file], t
        if self.root is None:
            return None
        found: list[tuple[str, TypedTree]] = []
        roots = [r for r in (self.root, self.full, self.headers.source) if r is not None]
        for file in candidates(list(dict.fromkeys(roots)),
                               str(Path(self.unit.file).parent), name, skip=self.unit.file):
            if file not in self.others:  # its text as the reader reads it (a patched copy's)
                self.others[file] = self._other_unit(file)
            if _defines(self.others[file].unit, name, file):
                found.append((file, self.others[file]))
        if len(found) > 1:
            raise InputError(f"{name}() is defined, not static, in {found[0][0]} and "
                             f"{found[1][0]} under this configuration: which one links is "
                             "not decided here")
        if not found:
            return None
        file, t = found[0]
        self.owner[name] = t
        return file, t.sources[file], t

    def _other_unit(self, file: str) -> TypedTree:
        """``file``'s own unit, parsed with this tree's texts; one per process for the same
        clang input (:data:`_OTHER_UNITS`: the whole tree parsed in, the headers, the file's
        text and every header text that replaces the tree's), so that a patched tree whose
        patches change no header shares the base's unit (a unit of mm/page_alloc.c holds
        some 300 MB)."""
        assert self.root is not None
        texts = {**self.sources, file: self._text(file)}
        key = (str(self.full or self.root), self.headers, file, texts[file],
               hash(tuple(sorted((f, hash(t)) for f, t in texts.items() if f.endswith(".h")))))
        hit = _OTHER_UNITS.get(key)
        # a .c text the unit #includes must be the same too (the key holds headers only)
        if hit is None or any(f in hit.skipped().entered and hit.sources.get(f) != t
                              for f, t in texts.items() if not f.endswith(".h")):
            hit = TypedTree.parse(self.root, texts, self.headers, self.full, file)
            _OTHER_UNITS.put(key, hit)
        return hit

    def _text(self, file: str) -> bytes:
        """``file``'s text as this tree has it: a replaced text, else the tree's copy (a
        patched copy holds the files a patch changed), else the whole tree's."""
        if file in self.sources:
            return self.sources[file]
        for root in (self.root, self.full, self.headers.source):
            if root is not None and (root / file).is_file():
                return (root / file).read_bytes()
        raise InputError(f"{file}: not in {self.root}")

    def variable(self, fn: str, name: str, line: int | None = None) -> Variable | None:
        """The parameter (``line`` None) or local ``name`` of function ``fn`` declared on
        ``line`` of its file, as clang types it; None if clang has no such one."""
        ft = self.function(fn)
        if ft is None:
            return None
        for v in ft.variables:
            if v.name != name:
                continue
            if line is None and v.parameter:
                return v
            if line is not None and not v.parameter and v.where.rsplit(":", 1)[-1] == str(line):
                return v
        return None

    def sizeof_at(self, functions: Iterable[str], where: str, operand: str) -> int | None:
        """The value clang gives the ``sizeof`` written at ``where`` (``file:line``) with
        ``operand`` (as written, parentheses included; whitespace ignored), in any of
        ``functions`` (for one in a macro's body: every expansion clang made in them).

        Returns None when clang evaluated no such ``sizeof`` there.

        Raises:
            InputError: two evaluations of it disagree (a macro's ``sizeof`` of one of its
                arguments, expanded with operands of two sizes).
        """
        want = "".join(operand.split())
        values: set[int | None] = set()
        for t in self._traits(functions, where, want):
            values.add(t.value)
        if not values:
            return None
        if len(values) > 1 or None in values:
            raise InputError(f"{where}: sizeof{operand} has {len(values)} values in clang's "
                             f"expansions ({', '.join(sorted(map(str, values)))})")
        return values.pop()

    def sizeof_type_at(self, functions: Iterable[str], where: str, operand: str) -> IntType | None:
        """The integer type clang gives the ``sizeof`` of :meth:`sizeof_at` (``size_t``:
        ``unsigned long``), None if it has no such one or its expansions differ in type."""
        types = {t.type for t in self._traits(functions, where, "".join(operand.split()))}
        return self.int_type(types.pop()) if len(types) == 1 else None

    def _traits(self, functions: Iterable[str], where: str, want: str) -> list[cfront.TraitExpr]:
        out = []
        for fn in functions:
            ft = self.function(fn)
            if ft is None:
                continue
            out += [t for t in ft.traits if t.operator == "sizeof" and t.spelled == where
                    and "".join(t.operand.split()) == want]
        return out

    def binary(self, fn: str, where: str, operator: str, lhs: str, rhs: str) -> BinaryOp | None:
        """clang's typing of the binary operator ``lhs operator rhs`` written at ``where``
        in function ``fn`` (operands as written; whitespace ignored); None if none, or if
        more than one such operator there is typed differently."""
        ft = self.function(fn)
        if ft is None:
            return None
        wl, wr = "".join(lhs.split()), "".join(rhs.split())
        hits = {(b.lhs.type, b.rhs.type, b.type): b for b in ft.operators
                if b.spelled == where and b.operator == operator
                and "".join(b.lhs.text.split()) == wl and "".join(b.rhs.text.split()) == wr}
        return next(iter(hits.values())) if len(hits) == 1 else None


#: the typed trees of this process (:func:`typed_for`), the last 6 used: a series' base and
#: four patched trees, and one more (each holds a translation unit of some 100 MB)
_TYPED: Lru[tuple[str, str, Headers, int], TypedTree] = Lru(6)
#: the units of other ``.c`` files (:meth:`TypedTree._other_unit`), by their clang input,
#: the last 4 used
_OTHER_UNITS: Lru[tuple[str, Headers, str, bytes, int], TypedTree] = Lru(4)


def typed_for(tree: KernelTree, cfg: Config, full: Path | None = None,
              cache: Path | None = None) -> TypedTree:
    """``tree`` (its texts, patched ones included) typed by clang for ``cfg``, on the headers
    :func:`equiv.zone_device.source.files.headers_for` gives; ``full`` as in
    :meth:`TypedTree.parse` (default: ``tree``'s root when it holds ``mm/`` whole, else
    none).  Memoised per process on the texts.

    Raises:
        InputError: no headers for ``cfg``; a clang error.
    """
    from equiv.zone_device.source.files import headers_for

    headers = headers_for(tree.root if full is None else full, cfg, cache)
    texts = dict(tree.sources)
    if full is not None:  # a patched copy: every file it holds is the patched tree's
        for p in sorted(tree.root.rglob("*")):
            rel = str(p.relative_to(tree.root))
            if p.is_file() and rel not in texts and p.suffix in (".c", ".h"):
                texts[rel] = p.read_bytes()
    key = (str(tree.root), str(full), headers,
           hash(tuple(sorted((f, hash(t)) for f, t in texts.items()))))
    got = _TYPED.get(key)
    if got is None:
        got = TypedTree.parse(tree.root, texts, headers, full)
        _TYPED.put(key, got)
    return got


def require_entry(tree: KernelTree, typed: TypedTree, cfg: Config) -> None:
    """Refuse a tree and configuration under which clang compiles no
    ``memmap_init_zone_device()`` (:data:`~equiv.zone_device.source.files.ENTRY`), in
    ``mm/mm_init.c``'s unit (``typed``) or another ``.c`` file of ``mm/`` (5.17 to 6.3 have
    it in mm/page_alloc.c), with one line naming the configuration and how it was prepared.

    Raises:
        InputError: not compiled.
    """
    from equiv.zone_device.source.files import ENTRY, prepared_notes

    if typed.function(ENTRY) is not None or typed.follow(ENTRY) is not None:
        return
    raise InputError(f"{tree.root} (linux {tree.version}): under config {cfg.name} clang "
                     f"compiles no {ENTRY}() in mm/ (is CONFIG_ZONE_DEVICE set? it depends "
                     "on MEMORY_HOTPLUG, MEMORY_HOTREMOVE and SPARSEMEM_VMEMMAP); "
                     + "; ".join(prepared_notes(typed.headers)))


#: the words a type of C itself starts with
_C_WORDS = frozenset({"void", "char", "short", "int", "long", "signed", "unsigned", "_Bool",
                      "float", "double", "struct", "union", "enum", "__int128"})


def _defines(unit: Unit, name: str, file: str) -> bool:
    """Does clang compile a definition of the function ``name`` with external linkage in
    ``file`` of ``unit``?  Asked by place, not by indexing the unit (a walk of every
    cursor of mm/page_alloc.c's unit, 0.4 s): at each spelling of a definition of ``name``
    in the text clang read (:func:`~equiv.linux.callgraph.definition_sites`), the cursor
    clang recorded at the name must be a definition of it, not static; a spelling on a
    line the preprocessor skipped has no such cursor."""
    main = unit.tu.spelling  # the file the unit compiled, as clang was given it
    if unit.name(os.path.normpath(main)) != file:
        return any(c.is_definition() and c.storage_class != cindex.StorageClass.STATIC
                   and c.location.file is not None and unit.name(c.location.file.name) == file
                   for c in unit.top(_K.FUNCTION_DECL).get(name, ()))
    f = unit.tu.get_file(main)
    for line, col in definition_sites(unit.contents(f), name):
        c = cindex.Cursor.from_location(
            unit.tu, cindex.SourceLocation.from_position(unit.tu, f, line, col))
        if (c is not None and c.kind == _K.FUNCTION_DECL and c.spelling == name
                and c.is_definition() and c.storage_class != cindex.StorageClass.STATIC):
            return True
    return False


def _anonymous(rec: cindex.Cursor) -> bool:
    return bool(cfront._lib().clang_Cursor_isAnonymousRecordDecl(rec)) or not rec.spelling \
        or "(unnamed" in str(rec.spelling) or "(anonymous" in str(rec.spelling)


__all__ = ["CONSTANTS", "FILE", "IntType", "TypeInfo", "TypedTree", "require_entry", "typed_for"]

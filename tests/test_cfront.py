"""equiv.linux.cfront: kernel C typed by clang (the ``libclang`` wheel).

The first part needs no kernel: a small C file and a fake headers layout written here,
whose answers are C's (sizes and offsets of LP64 x86-64, the usual arithmetic conversions).

The second part types Debian's ``mm/mm_init.c`` and compares ``struct page`` with three
other sources.  Which kernel is which:

* the tree: ``mm/``, ``include/`` and ``arch/x86/include/`` of linux-source-6.12, from the
  tarball the live check and tests/test_linux_tree.py's ``linux612`` read
  (:func:`equiv.zone_device.live.ctext.tarball`): 6.12.117 (the live check's pinned
  ``packages.DEB_VERSION``) when that version's ``.deb`` can be had, else the installed
  package (6.12.118 since December 2026); unpacked once into the user's cache;
* the generated headers: Debian's 6.12.117 amd64 ones (``linux-headers-6.12.117+deb12-common``
  and ``-amd64``), as :func:`equiv.zone_device.live.packages.fetch` unpacks them into the
  user's cache.  They are not downloaded here (about 120 MB with the kernel image): the
  tests skip, saying so, until ``packages.fetch()`` has run once;
* the BTF of those headers' ``vmlinux`` (6.12.117, the kernel the headers configure), and
  the BTF of the running kernel (``/sys/kernel/btf/vmlinux``, whatever release it is);
* the model's layout of the ``x86_64-default`` preset (:mod:`equiv.page_model`), compared as
  ``--btf`` compares it (:func:`equiv.zone_device.source.layout_check.check_layout`).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import tarfile
import time
from pathlib import Path

import pytest
from host_lock import host_lock

from equiv.config import PRESETS
from equiv.engine.errors import InputError
from equiv.linux import cfront
from equiv.linux.btf import Btf
from equiv.linux.cfront import FunctionTypes, Headers, StructLayout, Unit
from equiv.page_model import Layout
from equiv.zone_device.live import ctext, packages
from equiv.zone_device.source.layout_check import EXPAND_PAGE, check_layout

SMALL = r"""#include <linux/which.h>
#ifndef WHICH_TREE
#error "the tree's include/ must come before the headers' include/"
#endif
#ifndef CONFIG_SMALL
#error "kconfig.h did not include generated/autoconf.h"
#endif
#define SZ(x) sizeof(x)

enum small_kind { SMALL_A = -1, SMALL_B = 1 };
enum small_flag { SMALL_F = 1 };

struct list_head { struct list_head *next, *prev; };

struct page {
	unsigned long flags;
	union {
		struct {
			struct list_head lru;
			void *mapping;
		};
		struct {
			unsigned long compound_head;
		};
		struct {
			void *pgmap;
			void *zone_device_data;
		};
	};
	unsigned int order:3, dirty:1, node:12;
	union {
		int _mapcount;
		unsigned int page_type;
	} u;
	int _refcount;
};

__meminit unsigned long copy(struct page *page, struct page *template, unsigned long n)
{
	struct page tmpl;
	unsigned long total = 0;
	unsigned int k = 0;
	char c = 'a';
	_Bool b = 1;
	enum small_kind e = SMALL_A;
	enum small_flag f = SMALL_F;

	for (int i = 2; i < n; i++)
		total += sizeof(template);
	while (k < n) {
		total += sizeof(*template);
		k++;
	}
	*page = *template;
	tmpl = *page;
	total += SZ(tmpl) + _Alignof(struct page) + (c + 1) + b + e + f;
	return total + sizeof(struct page *);
}

int vla(int n)
{
	char buf[n];

	return sizeof(buf);
}
"""


def _line(text: str, needle: str) -> int:
    """The 1-based line of ``text`` holding ``needle`` (once)."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def _fake(root: Path) -> tuple[Path, Headers]:
    """A tree with ``mm/small.c`` and a headers layout with the three forced headers."""
    tree, hdr = root / "tree", root / "headers"
    for d in (tree / "mm", tree / "include/linux", hdr / "include/linux", hdr / "include/generated"):
        d.mkdir(parents=True)
    (tree / "mm/small.c").write_text(SMALL)
    (tree / "include/linux/which.h").write_text("#define WHICH_TREE 1\n")
    (hdr / "include/linux/which.h").write_text("#define WHICH_HEADERS 1\n")
    (hdr / "include/linux/compiler-version.h").write_text("")
    (hdr / "include/linux/kconfig.h").write_text("#include <generated/autoconf.h>\n")
    (hdr / "include/linux/compiler_types.h").write_text(
        '#define __meminit __attribute__((__section__(".meminit.text")))\n')
    (hdr / "include/generated/autoconf.h").write_text("#define CONFIG_SMALL 1\n")
    return tree, Headers(hdr, hdr)


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Headers]:
    return _fake(tmp_path_factory.mktemp("cfront"))


@pytest.fixture(scope="module")
def small(fake: tuple[Path, Headers]) -> Unit:
    return cfront.parse(fake[0], "mm/small.c", fake[1])


@pytest.fixture(scope="module")
def copy_fn(small: Unit) -> FunctionTypes:
    return cfront.function_types(small, "copy")


# --- the arguments ----------------------------------------------------------------------------

def test_the_arguments_follow_kbuild(fake: tuple[Path, Headers]) -> None:
    """The tree's include/ before the headers', generated headers after them, the forced
    headers in the top Makefile's order, the type-changing flags and the module names."""
    tree, h = fake
    args = cfront.clang_args(tree, "mm/small.c", h)
    incs = [a[2:] for a in args if a.startswith("-I")]
    assert incs == [str(tree / "include"), str(h.source / "include"), str(tree / "mm")]
    forced = [args[i + 1] for i, a in enumerate(args) if a == "-include"]
    assert forced == [str(h.source / f) for f in cfront.FORCED]
    assert {"-funsigned-char", "-std=gnu11", "--target=x86_64-linux-gnu", "-nostdinc",
            "-Werror=implicit-function-declaration"} <= set(args)
    assert '-DKBUILD_MODFILE="mm/small"' in args and '-DKBUILD_MODNAME="small"' in args


def test_the_debian_layout() -> None:
    h = Headers.debian(Path("/u"), "6.12.117+deb12", "amd64")
    assert h == Headers(Path("/u/linux-headers-6.12.117+deb12-common"),
                        Path("/u/linux-headers-6.12.117+deb12-amd64"), "x86", "x86_64-linux-gnu")
    assert Headers.debian(Path("/u"), "6.12.117+deb12", "cloud-arm64").target == "aarch64-linux-gnu"
    with pytest.raises(InputError, match="unknown architecture 'mips'"):
        Headers.debian(Path("/u"), "6.12.117+deb12", "mips")
    assert Headers.prepared(Path("/t")) == Headers(Path("/t"), Path("/t"))


# --- struct layouts ---------------------------------------------------------------------------

def test_a_struct_with_unions_and_bitfields(small: Unit) -> None:
    lay = cfront.struct_layout(small, "page")
    assert (lay.size, lay.align, lay.where) == (48, 8, f"mm/small.c:{_line(SMALL, 'struct page {')}")
    got = {f.path: (f.offset, f.size, f.type, f.in_union) for f in lay.fields}
    u = got.pop("u")
    assert u[:2] == (36, 4) and u[2].startswith("union (unnamed union at ") and not u[3]
    assert got == {
        "flags": (0, 8, "unsigned long", False),
        "lru": (8, 16, "struct list_head", True),
        "lru.next": (8, 8, "struct list_head *", True),
        "lru.prev": (16, 8, "struct list_head *", True),
        "mapping": (24, 8, "void *", True),
        "compound_head": (8, 8, "unsigned long", True),
        "pgmap": (8, 8, "void *", True),
        "zone_device_data": (16, 8, "void *", True),
        "order": (32, 4, "unsigned int", False),
        "dirty": (32, 4, "unsigned int", False),
        "node": (32, 4, "unsigned int", False),
        "u._mapcount": (36, 4, "int", True),
        "u.page_type": (36, 4, "unsigned int", True),
        "_refcount": (40, 4, "int", False),
    }
    decl = next(c for c in small.tu.cursor.get_children() if c.spelling == "page" and c.is_definition())
    assert all(decl.type.get_offset(f.path) == f.bit_offset for f in lay.fields if "." not in f.path)
    bits = {f.path: (f.bit_offset, f.bit_width) for f in lay.fields if f.bit_width is not None}
    assert bits == {"order": (256, 3), "dirty": (259, 1), "node": (260, 12)}
    assert lay.field("lru").record and not lay.field("flags").record
    with pytest.raises(InputError, match="has no member 'nope'"):
        lay.field("nope")


def test_members_as_btf_gives_them(small: Unit) -> None:
    """One level of the named members asked for; a bitfield's size in whole bytes."""
    m = cfront.struct_layout(small, "page").members(["lru"])
    assert list(m) == ["flags", "lru", "lru.next", "lru.prev", "mapping", "compound_head", "pgmap",
                       "zone_device_data", "order", "dirty", "node", "u", "_refcount"]
    assert (m["node"].size, m["node"].bitfield_size, m["node"].bit_offset) == (2, 12, 260)


def test_an_unknown_struct_is_an_input_error(small: Unit) -> None:
    with pytest.raises(InputError, match="no definition of struct or union 'folio'"):
        cfront.struct_layout(small, "folio")


# --- the types of a function ------------------------------------------------------------------

def test_variables_have_clangs_types(copy_fn: FunctionTypes) -> None:
    """Width and signedness from the canonical type: -funsigned-char makes char unsigned,
    an enum is signed as its underlying type is (int with a negative value, else unsigned)."""
    got = {v.name: (v.type, v.kind, v.size, v.signed, v.parameter) for v in copy_fn.variables}
    assert got == {
        "page": ("struct page *", "POINTER", 8, None, True),
        "template": ("struct page *", "POINTER", 8, None, True),
        "n": ("unsigned long", "ULONG", 8, False, True),
        "tmpl": ("struct page", "RECORD", 48, None, False),
        "total": ("unsigned long", "ULONG", 8, False, False),
        "k": ("unsigned int", "UINT", 4, False, False),
        "c": ("char", "CHAR_U", 1, False, False),
        "b": ("_Bool", "BOOL", 1, False, False),
        "e": ("enum small_kind", "ENUM", 4, True, False),
        "f": ("enum small_flag", "ENUM", 4, False, False),
        "i": ("int", "INT", 4, True, False),
    }
    assert copy_fn.variable("i").where == f"mm/small.c:{_line(SMALL, 'for (int i')}"
    assert copy_fn.result == "unsigned long"
    with pytest.raises(InputError, match="no parameter or local 'x'"):
        copy_fn.variable("x")


def test_sizeof_of_a_pointer_is_not_the_size_of_the_struct(copy_fn: FunctionTypes) -> None:
    """Values from clang's constant evaluator; for a macro's sizeof, ``where`` is the use
    and ``spelled`` the macro's body."""
    got = [(t.operator, t.operand, t.operand_type, t.value) for t in copy_fn.traits]
    assert got == [
        ("sizeof", "(template)", "struct page *", 8),
        ("sizeof", "(*template)", "struct page", 48),
        ("sizeof", "(x)", "struct page", 48),
        ("_Alignof", "(struct page)", None, 8),
        ("sizeof", "(struct page *)", None, 8),
    ]
    macro = copy_fn.traits[2]
    assert macro.where == f"mm/small.c:{_line(SMALL, 'SZ(tmpl)')}"
    assert macro.spelled == f"mm/small.c:{_line(SMALL, '#define SZ')}"
    assert copy_fn.traits[0].where == copy_fn.traits[0].spelled == \
        f"mm/small.c:{_line(SMALL, 'total += sizeof(template)')}"


def test_a_vla_has_no_constant_size(small: Unit) -> None:
    fn = cfront.function_types(small, "vla")
    assert [(t.operand, t.operand_type, t.value) for t in fn.traits] == [("(buf)", "char[n]", None)]
    assert fn.variable("buf").size is None


def test_int_index_against_unsigned_long_bound(copy_fn: FunctionTypes) -> None:
    """``i < n`` with ``int i`` and ``unsigned long n`` compares as unsigned long."""
    less = [op for op in copy_fn.operators if op.operator == "<"]
    assert [(op.lhs, op.rhs, op.type) for op in less] == [
        (cfront.Operand("i", "int", "unsigned long"),
         cfront.Operand("n", "unsigned long", "unsigned long"), "int"),
        (cfront.Operand("k", "unsigned int", "unsigned long"),
         cfront.Operand("n", "unsigned long", "unsigned long"), "int"),
    ]
    assert less[0].where == f"mm/small.c:{_line(SMALL, 'for (int i')}"
    assert less[1].where == f"mm/small.c:{_line(SMALL, 'while (k < n)')}"


def test_struct_assignment_is_typed_as_struct(copy_fn: FunctionTypes) -> None:
    assigns = [op for op in copy_fn.operators if op.operator == "="]
    assert [(op.lhs.text, op.rhs.text, op.lhs.type, op.rhs.type, op.type) for op in assigns] == [
        ("*page", "*template", "struct page", "struct page", "struct page"),
        ("tmpl", "*page", "struct page", "struct page", "struct page"),
    ]


def test_implicit_conversions(copy_fn: FunctionTypes) -> None:
    """Every conversion that changes a type, in order: initialisers (a character constant
    is an int), the loop indices to unsigned long, ``c`` promoted to int then the sum to
    unsigned long, ``_Bool`` and the enums to unsigned long; none for an lvalue read."""
    got = [(int(c.where.rsplit(":")[1]), c.text, c.from_type, c.to_type, c.context)
           for c in copy_fn.conversions]
    total = _line(SMALL, "total += SZ(tmpl)")
    assert got == [
        (_line(SMALL, "long total = 0"), "0", "int", "unsigned long", "VAR_DECL"),
        (_line(SMALL, "int k = 0"), "0", "int", "unsigned int", "VAR_DECL"),
        (_line(SMALL, "char c = "), "'a'", "int", "char", "VAR_DECL"),
        (_line(SMALL, "_Bool b = 1"), "1", "int", "_Bool", "VAR_DECL"),
        (_line(SMALL, "e = SMALL_A"), "SMALL_A", "int", "enum small_kind", "VAR_DECL"),
        (_line(SMALL, "f = SMALL_F;"), "SMALL_F", "int", "enum small_flag", "VAR_DECL"),
        (_line(SMALL, "for (int i"), "i", "int", "unsigned long", "BINARY_OPERATOR"),
        (_line(SMALL, "while (k < n)"), "k", "unsigned int", "unsigned long", "BINARY_OPERATOR"),
        (total, "(c + 1)", "int", "unsigned long", "BINARY_OPERATOR"),
        (total, "c", "char", "int", "BINARY_OPERATOR"),
        (total, "b", "_Bool", "unsigned long", "BINARY_OPERATOR"),
        (total, "e", "enum small_kind", "unsigned long", "BINARY_OPERATOR"),
        (total, "f", "enum small_flag", "unsigned long", "BINARY_OPERATOR"),
    ]


# --- a patched file, appended code, errors ----------------------------------------------------

def test_replaced_text_and_appended_code(fake: tuple[Path, Headers]) -> None:
    tree, h = fake
    patched = SMALL.replace("total += sizeof(template);", "total += sizeof(*template);")
    extra = "\nunsigned long probe(struct page *p)\n{\n\treturn sizeof(p) + copy(p, p, 1);\n}\n"
    u = cfront.parse(tree, "mm/small.c", h, text=patched, extra=extra)
    assert [t.value for t in cfront.function_types(u, "copy").traits][:2] == [48, 48]
    probe = cfront.function_types(u, "probe")
    assert probe.where == f"mm/small.c:{len(patched.splitlines()) + 2}"
    assert [(t.operand, t.value) for t in probe.traits] == [("(p)", 8)]
    assert (tree / "mm/small.c").read_text() == SMALL


@pytest.mark.parametrize(("text", "message"), [
    ("int f(void) { return g(); }\n", r"^mm/small\.c:1: call to undeclared function 'g'"),
    ("int f(void) { return 1 }\nint h(void) { return x; }\n",
     r"^mm/small\.c:1: expected ';' after return statement \(and 1 more errors\)$"),
])
def test_a_clang_error_is_one_input_error_line(fake: tuple[Path, Headers], text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as e:
        cfront.parse(fake[0], "mm/small.c", fake[1], text=text)
    assert "\n" not in str(e.value)


def test_missing_inputs_are_input_errors(fake: tuple[Path, Headers], tmp_path: Path) -> None:
    tree, h = fake
    with pytest.raises(InputError, match="not a directory"):
        cfront.parse(tmp_path / "nope", "mm/small.c", h)
    with pytest.raises(InputError, match=r"mm/none\.c: no such file"):
        cfront.parse(tree, "mm/none.c", h)
    with pytest.raises(InputError, match=r"autoconf\.h is missing"):
        cfront.parse(tree, "mm/small.c", Headers(h.source, tmp_path))
    empty = tmp_path / "empty"
    (empty / "include/generated").mkdir(parents=True)
    (empty / "include/generated/autoconf.h").write_text("")
    with pytest.raises(InputError, match=r"include/linux/compiler-version\.h is in neither"):
        cfront.parse(tree, "mm/small.c", Headers(empty, empty))
    with pytest.raises(InputError, match="no definition of function 'nope'"):
        cfront.function_types(cfront.parse(tree, "mm/small.c", h), "nope")


# --- Debian's mm/mm_init.c ----------------------------------------------------------------------

#: the directories of linux-source-6.12 that mm/mm_init.c reads (all of mm/: internal.h
#: includes "vma.h")
TREE_DIRS = ("mm/", "include/", "arch/x86/include/")


def _version(tree: Path) -> str:
    make = (tree / "Makefile").read_text()
    v = [re.search(rf"^{k} = (\d+)", make, re.MULTILINE) for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL")]
    return ".".join(m.group(1) if m else "?" for m in v)


@pytest.fixture(scope="module")
def source612() -> Path:
    """``mm/``, ``include/``, ``arch/x86/include/`` and the Makefile of linux-source-6.12,
    unpacked once from :func:`ctext.tarball` into ``<user cache>/equiv/cfront``, again when
    the tarball changes (about 20 s)."""
    user = Path(os.environ["EQUIV_TEST_USER_CACHE"]) / "equiv"  # set by conftest.py
    with host_lock():  # one process unpacks, the others wait: tests/host_lock.py
        src = ctext.tarball(user)
        if not src.is_file():
            pytest.skip(f"no linux-source-6.12 tarball: {src} is missing "
                        f"(apt-get install {ctext.TOP})")
        root = user / "cfront" / ctext.TOP
        stamp = root / ".equiv-tarball"
        st = src.stat()
        made_from = f"{src} {st.st_size} {st.st_mtime_ns}\n"
        if not stamp.is_file() or stamp.read_text() != made_from:
            shutil.rmtree(root, ignore_errors=True)
            names = tuple(f"{ctext.TOP}/{d}" for d in TREE_DIRS)
            with tarfile.open(src, "r:xz") as tar:
                for m in tar:
                    if m.name.startswith(names) or m.name == f"{ctext.TOP}/Makefile":
                        tar.extract(m, root.parent, filter="data")
            stamp.write_text(made_from)
    return root


def _unpacked(h: Headers) -> bool:
    return (h.build / "include/generated/autoconf.h").is_file() and (h.source / "include").is_dir()


@pytest.fixture(scope="module")
def debian_headers(request: pytest.FixtureRequest) -> Headers:
    """Debian's 6.12.117 amd64 generated headers, where ``packages.fetch()`` unpacked them in
    the user's cache; with ``--runslow`` (CI) fetched there first when missing, so CI runs
    these tests instead of skipping them."""
    cache = Path(os.environ["EQUIV_TEST_USER_CACHE"]) / "equiv" / "live"
    usr_src = packages.KernelFiles(cache / "root").headers.parent
    h = Headers.debian(usr_src, packages.ABI, packages.FLAVOUR)
    if not _unpacked(h) and request.config.getoption("--runslow"):
        with host_lock():  # apt-get and dpkg-deb one at a time: tests/host_lock.py
            packages.fetch(cache)
    if not _unpacked(h):
        pytest.skip(f"Debian's {packages.UPSTREAM_VERSION} headers are not unpacked under {usr_src}: "
                    "run python -c 'from pathlib import Path; from equiv.zone_device.live import "
                    f"packages; packages.fetch(Path(\"{cache}\"))' once (downloads about 120 MB)")
    return h


@pytest.fixture(scope="module")
def mm_init(debian_headers: Headers, source612: Path) -> Unit:
    return cfront.parse(source612, "mm/mm_init.c", debian_headers)


@pytest.fixture(scope="module")
def page612(mm_init: Unit) -> StructLayout:
    return cfront.struct_layout(mm_init, "page")


def _headers_btf(h: Headers) -> Btf:
    """The BTF of the headers' ``vmlinux`` (its ``.BTF`` section, found through the ELF64
    section headers: ``e_shoff`` at 0x28, ``e_shentsize``/``e_shnum``/``e_shstrndx`` at
    0x3A..0x3F; each header's name, offset and size at 0, 0x18 and 0x20)."""
    if not (h.build / "vmlinux").is_file():
        pytest.skip(f"{h.build}/vmlinux is missing: the headers package ships no BTF")
    data = (h.build / "vmlinux").read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    entsize, num, strndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i: int) -> tuple[int, int, int]:
        base = shoff + i * entsize
        name, = struct.unpack_from("<I", data, base)
        off, size = struct.unpack_from("<QQ", data, base + 0x18)
        return name, off, size

    names_off = header(strndx)[1]
    for i in range(num):
        name, off, size = header(i)
        if data[names_off + name:data.index(b"\0", names_off + name)] == b".BTF":
            return Btf.from_bytes(data[off:off + size], f"{h.build}/vmlinux")
    raise AssertionError(f"{h.build}/vmlinux has no .BTF section")


class _ClangAsBtf:
    """What :func:`check_layout` reads of a :class:`Btf`, answered by clang."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self.name = f"clang: {unit.file}"

    def members(self, name: str, expand: tuple[str, ...] = ()) -> dict[str, object]:
        return dict(cfront.struct_layout(self.unit, name).members(expand))

    def struct_size(self, name: str) -> int:
        return cfront.struct_layout(self.unit, name).size


class TestDebianMmInit:
    @pytest.mark.slow
    def test_ci_has_the_headers(self, debian_headers: Headers) -> None:
        """Under --runslow the headers are fetched, never skipped for being absent (the
        fixture skips only where the fetch could not run)."""
        assert _unpacked(debian_headers)

    def test_it_parses_without_errors_in_seconds(self, debian_headers: Headers, source612: Path) -> None:
        t0 = time.monotonic()
        u = cfront.parse(source612, "mm/mm_init.c", debian_headers)
        assert time.monotonic() - t0 < 30
        assert re.fullmatch(r"6\.12\.\d+", _version(source612))
        assert len(list(u.tu.get_includes())) > 300

    def test_struct_page_is_64_bytes_with_its_union_views(self, page612: StructLayout) -> None:
        assert page612.size == 64 and page612.where.startswith("include/linux/mm_types.h:")
        got = {p: page612.field(p).offset for p in (
            "flags", "lru", "mapping", "index", "private", "_mapcount", "_refcount", "memcg_data",
            "compound_head", "pgmap", "zone_device_data")}
        assert got == {"flags": 0, "lru": 8, "mapping": 24, "index": 32, "private": 40,
                       "_mapcount": 48, "_refcount": 52, "memcg_data": 56, "compound_head": 8,
                       "pgmap": 8, "zone_device_data": 16}
        assert page612.field("_refcount").type == "atomic_t" and page612.field("_refcount").size == 4

    def test_struct_page_equals_the_btf_of_the_headers_kernel(
            self, mm_init: Unit, page612: StructLayout, debian_headers: Headers) -> None:
        """Every member BTF lists, and no other, at the same offset and size, in the same
        order; struct folio too."""
        btf = _headers_btf(debian_headers)
        assert page612.members(EXPAND_PAGE) == btf.members("page", expand=EXPAND_PAGE)
        assert page612.size == btf.struct_size("page")
        folio = cfront.struct_layout(mm_init, "folio")
        assert folio.members(["lru", "_deferred_list"]) == btf.members("folio", ["lru", "_deferred_list"])

    def test_struct_page_equals_this_machines_btf(self, page612: StructLayout) -> None:
        """The running kernel may be another release (a 6.18 here): every member both name
        is at the same place; renamed ones (6.18's ``__folio_index`` for ``index``) are in
        one of them only."""
        path = Path("/sys/kernel/btf/vmlinux")
        if not path.is_file():
            pytest.skip(f"{path} is missing: the running kernel has no BTF")
        btf = Btf.from_file(str(path))
        if (btf.arch() or ("?",))[0] != "x86_64":
            pytest.skip(f"the running kernel is not x86_64 ({btf.arch()}): another layout")
        theirs, ours = btf.members("page", expand=EXPAND_PAGE), page612.members(EXPAND_PAGE)
        both = set(theirs) & set(ours)
        assert {"flags", "lru.next", "compound_head", "zone_device_data", "mapping", "private",
                "_mapcount", "_refcount", "memcg_data"} <= both
        assert {p: ours[p] for p in both} == {p: theirs[p] for p in both}
        assert btf.struct_size("page") == page612.size

    def test_struct_page_equals_the_models_layout(self, mm_init: Unit, debian_headers: Headers) -> None:
        """As ``--btf`` compares: every struct page view of the x86_64-default model matches;
        the whole report (struct folio's rows, which differ where the model follows a later
        kernel) is the one the headers' BTF gives."""
        layout = Layout.from_config(PRESETS["x86_64-default"])
        ours = check_layout(layout, _ClangAsBtf(mm_init))
        page_rows = [r for r in ours.rows if r.struct == "page"]
        assert len(page_rows) > 15 and all(r.verdict == "MATCH" for r in page_rows), \
            [r for r in page_rows if r.verdict != "MATCH"]
        theirs = check_layout(layout, _headers_btf(debian_headers))
        assert (ours.rows, ours.unnamed, ours.uncovered) == (theirs.rows, theirs.unnamed, theirs.uncovered)

    def test_the_three_functions_are_typed(self, mm_init: Unit) -> None:
        fns = {n: cfront.function_types(mm_init, n) for n in (
            "__init_zone_device_page", "memmap_init_compound", "memmap_init_zone_device")}
        assert all(f.where.startswith("mm/mm_init.c:") for f in fns.values())
        z = fns["memmap_init_zone_device"]
        per = z.variable("pfns_per_compound")
        assert (per.type, per.size, per.signed) == ("unsigned int", 4, False)
        assert (z.variable("nid").type, z.variable("nid").signed) == ("int", True)
        step = [op for op in z.operators if op.operator == "+=" and op.rhs.text == "pfns_per_compound"]
        assert [(op.lhs.type, op.rhs.written, op.rhs.type) for op in step] == \
            [("unsigned long", "unsigned int", "unsigned long")]

    def test_appended_code_is_typed_in_the_files_scope(self, debian_headers: Headers,
                                                       source612: Path) -> None:
        """The false proof's ``sizeof(template)``: 8, not 64; an ``int`` index against an
        ``unsigned long`` bound; a template on the stack."""
        extra = ("\nstatic void __maybe_unused equiv_probe(struct page *page, struct page *template,\n"
                 "\t\t\t\t\t unsigned long nr_pages)\n{\n\tstruct page tmpl;\n\n"
                 "\tmemcpy(page, template, sizeof(template));\n"
                 "\tmemcpy(page, template, sizeof(*template));\n"
                 "\tfor (int i = 2; i < nr_pages; i++)\n\t\tpage[i] = *template;\n"
                 "\t__init_single_page(&tmpl, 0, 0, 0);\n\t*page = tmpl;\n"
                 "\tmemcpy(page, &tmpl, sizeof(tmpl));\n}\n")
        u = cfront.parse(source612, "mm/mm_init.c", debian_headers, extra=extra)
        fn = cfront.function_types(u, "equiv_probe")
        mine = [(t.operand, t.operand_type, t.value) for t in fn.traits
                if t.spelled.startswith("mm/mm_init.c")]
        assert mine == [("(template)", "struct page *", 8), ("(*template)", "struct page", 64),
                        ("(tmpl)", "struct page", 64)]
        less = [op for op in fn.operators if op.operator == "<" and op.rhs.text == "nr_pages"]
        assert [(op.lhs.written, op.lhs.type) for op in less] == [("int", "unsigned long")]
        assigns = [op.lhs.type for op in fn.operators if op.operator == "=" and op.rhs.type == "struct page"]
        assert assigns == ["struct page", "struct page"]

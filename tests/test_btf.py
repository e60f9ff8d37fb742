"""Tests of the raw BTF reader and struct flattening (equiv.linux.btf)."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from equiv.engine.errors import InputError
from equiv.linux.btf import Btf, BtfBuilder, BtfError, Kind, Member

VMLINUX = "/sys/kernel/btf/vmlinux"


def mini_page() -> BtfBuilder:
    """A miniature ``struct page`` with an anonymous union of anonymous structs."""
    b = BtfBuilder()
    ulong = b.int_type("unsigned long", 8)
    sint = b.int_type("int", 4)
    voidp = b.ptr(0)
    lhp = b.ptr(b.next_id + 1)  # forward reference to struct list_head, created next
    lh = b.struct("list_head", 16, [("next", lhp, 0), ("prev", lhp, 64)])
    s1 = b.struct("", 24, [("lru", lh, 0), ("mapping", voidp, 128)])
    s2 = b.struct("", 8, [("compound_info", ulong, 0)])
    u = b.union("", 24, [("", s1, 0), ("", s2, 0)])
    b.struct("page", 40, [("flags", ulong, 0), ("", u, 64), ("_refcount", sint, 256)])
    return b


def layout(members: dict[str, Member]) -> dict[str, tuple[int, int]]:
    """Path -> (byte offset, byte size)."""
    return {p: (m.offset, m.size) for p, m in members.items()}


def with_header(blob: bytes, **fields: int) -> bytes:
    """``blob`` with some little-endian header fields replaced."""
    names = ["magic", "version", "flags", "hdr_len", "type_off", "type_len", "str_off", "str_len"]
    values = dict(zip(names, struct.unpack_from("<HBBIIIII", blob), strict=True))
    values.update(fields)
    return struct.pack("<HBBIIIII", *values.values()) + blob[24:]


class TestMiniPage:
    """Flattening a struct page shaped like the kernel's."""

    def test_members_expanded(self) -> None:
        """Anonymous unions and structs are flattened and ``lru`` is expanded one level."""
        btf = Btf.from_bytes(mini_page().to_bytes())
        assert layout(btf.members("page", expand=["lru"])) == {
            "flags": (0, 8), "lru": (8, 16), "lru.next": (8, 8), "lru.prev": (16, 8),
            "mapping": (24, 8), "compound_info": (8, 8), "_refcount": (32, 4),
        }

    def test_struct_size(self) -> None:
        """struct_size reports the size fields of page and list_head."""
        btf = Btf.from_bytes(mini_page().to_bytes())
        assert (btf.struct_size("page"), btf.struct_size("list_head")) == (40, 16)

    def test_no_expand(self) -> None:
        """Without ``expand`` a struct member is recorded only by its own name."""
        members = Btf.from_bytes(mini_page().to_bytes()).members("page")
        assert "lru" in members and not any("." in p for p in members)

    def test_member_fields(self) -> None:
        """A Member carries bit offset and a zero bitfield size for ordinary members."""
        m = Btf.from_bytes(mini_page().to_bytes()).members("page")["_refcount"]
        assert m == Member("_refcount", 32, 4, 256, 0)

    def test_big_endian(self) -> None:
        """A big-endian blob (bytes EB 9F) parses to the same layout as the little-endian one."""
        le, be = mini_page().to_bytes(), mini_page().to_bytes(big_endian=True)
        assert be[:2] == b"\xeb\x9f" and le[:2] == b"\x9f\xeb"
        assert Btf.from_bytes(be).members("page", ["lru"]) == Btf.from_bytes(le).members("page", ["lru"])

    def test_has_struct(self) -> None:
        """has_struct is true for structs only, not unions, forward declarations or unknown names."""
        b = mini_page()
        b.raw(Kind.FWD, "folio", 0, 0)
        b.union("pu", 8, [])
        btf = Btf.from_bytes(b.to_bytes())
        assert btf.has_struct("page") and btf.has_struct("list_head")
        assert not any(btf.has_struct(n) for n in ("folio", "pu", "nope"))


class TestRoundTrip:
    """Builder output parses and member sizes resolve through every kind."""

    def test_typedef_const_volatile(self) -> None:
        """Member types resolve through typedef, const, volatile, restrict and type_tag."""
        b = BtfBuilder()
        sint = b.int_type("int", 4)
        atomic = b.typedef("atomic_t", b.struct("", 4, [("counter", sint, 0)]))
        cv = b.raw(Kind.VOLATILE, "", 0, b.const(atomic))
        tagged = b.raw(Kind.TYPE_TAG, "rcu", 0, b.raw(Kind.RESTRICT, "", 0, b.ptr(sint)))
        b.struct("s", 16, [("_refcount", atomic, 0), ("cv", cv, 32), ("p", tagged, 64)])
        btf = Btf.from_bytes(b.to_bytes())
        assert layout(btf.members("s", expand=["_refcount", "cv"])) == {
            "_refcount": (0, 4), "_refcount.counter": (0, 4), "cv": (4, 4), "cv.counter": (4, 4),
            "p": (8, 8),
        }

    def test_arrays(self) -> None:
        """Array sizes multiply through nesting; a flexible array has size 0."""
        b = BtfBuilder()
        ulong = b.int_type("unsigned long", 8)
        b.struct("s", 72, [("a", b.array(ulong, 3), 0), ("m", b.array(b.array(ulong, 2), 3), 192),
                           ("flex", b.array(ulong, 0), 576)])
        assert layout(Btf.from_bytes(b.to_bytes()).members("s")) == {
            "a": (0, 24), "m": (24, 48), "flex": (72, 0)}

    def test_bitfields_kind_flag(self) -> None:
        """In a kind_flag struct the offset word packs bitfield size (high 8) and bit offset (low 24)."""
        b = BtfBuilder()
        uint = b.int_type("unsigned int", 4)
        b.struct("s", 8, [("a", uint, 0, 3), ("b", uint, 3, 9), ("c", uint, 32)])
        m = Btf.from_bytes(b.to_bytes()).members("s")
        assert m["a"] == Member("a", 0, 1, 0, 3)
        assert m["b"] == Member("b", 0, 2, 3, 9)
        assert m["c"] == Member("c", 4, 4, 32, 0)

    def test_bitfield_old_style(self) -> None:
        """Without kind_flag a bitfield is an INT whose encoding has fewer bits than its size."""
        b = BtfBuilder()
        u3 = b.raw(Kind.INT, "unsigned int", 0, 4, struct.pack("<I", (2 << 16) | 3))
        b.struct("s", 4, [("x", u3, 8)])
        assert Btf.from_bytes(b.to_bytes()).members("s")["x"] == Member("x", 1, 1, 10, 3)

    def test_trailing_data_of_every_kind(self) -> None:
        """Every kind's trailing data is skipped correctly, so the struct after them parses."""
        b = BtfBuilder()
        sint = b.int_type("int", 4)
        enum = b.raw(Kind.ENUM, "e", 2, 4, bytes(16))
        enum64 = b.raw(Kind.ENUM64, "e64", 3, 8, bytes(36))
        flt = b.raw(Kind.FLOAT, "double", 0, 8)
        proto = b.raw(Kind.FUNC_PROTO, "", 2, sint, bytes(16))
        b.raw(Kind.FUNC, "f", 0, proto)
        var = b.raw(Kind.VAR, "v", 0, sint, bytes(4))
        b.raw(Kind.DATASEC, ".data", 1, 4, struct.pack("<III", var, 0, 4))
        b.raw(Kind.DECL_TAG, "tag", 0, sint, bytes(4))
        b.raw(Kind.FWD, "later", 0, 0)
        b.struct("s", 24, [("e", enum, 0), ("e64", enum64, 64), ("d", flt, 128)])
        btf = Btf.from_bytes(b.to_bytes())
        assert len(btf) == 11
        assert layout(btf.members("s")) == {"e": (0, 4), "e64": (8, 8), "d": (16, 8)}

    def test_first_struct_with_members(self) -> None:
        """Of several structs sharing a name, the first with members is used."""
        b = BtfBuilder()
        sint = b.int_type("int", 4)
        b.struct("dup", 0, [])
        b.struct("dup", 4, [("first", sint, 0)])
        b.struct("dup", 8, [("second", sint, 0)])
        btf = Btf.from_bytes(b.to_bytes())
        assert (btf.struct_size("dup"), list(btf.members("dup"))) == (4, ["first"])

    def test_first_path_wins(self) -> None:
        """When union views repeat a path, the first occurrence is kept."""
        b = BtfBuilder()
        sint, slong = b.int_type("int", 4), b.int_type("long", 8)
        u = b.union("", 8, [("", b.struct("", 8, [("x", slong, 0)]), 0),
                            ("", b.struct("", 4, [("x", sint, 0)]), 0)])
        b.struct("s", 8, [("", u, 0)])
        assert layout(Btf.from_bytes(b.to_bytes()).members("s")) == {"x": (0, 8)}

    def test_anonymous_padding_skipped(self) -> None:
        """An anonymous non-composite member (``int :4``) is not recorded."""
        b = BtfBuilder()
        uint = b.int_type("unsigned int", 4)
        b.struct("s", 4, [("", uint, 0, 4), ("y", uint, 4, 4)])
        assert list(Btf.from_bytes(b.to_bytes()).members("s")) == ["y"]

    def test_builder_rejects_odd_trailing_data(self) -> None:
        """The builder refuses trailing data that is not whole u32 words."""
        with pytest.raises(ValueError, match="whole u32s"):
            BtfBuilder().raw(Kind.VAR, "v", 0, 1, b"\0\0")


class TestErrors:
    """Malformed input raises BtfError with a message saying what is wrong."""

    def test_is_input_error(self) -> None:
        """BtfError is an InputError, so the CLI reports it as bad input."""
        assert issubclass(BtfError, InputError)

    def test_empty(self) -> None:
        """Empty bytes are reported as empty."""
        with pytest.raises(BtfError, match=r"BTF blob <bytes>: is empty; pass a raw BTF file"):
            Btf.from_bytes(b"")

    def test_elf_magic(self) -> None:
        """An ELF file is rejected by its magic, with a hint at the right file."""
        with pytest.raises(BtfError, match=r"vmlinux.o is not a BTF blob: magic 0x7f45 \(expected 0xeb9f\); "
                                           r"pass a raw BTF file such as /sys/kernel/btf/vmlinux"):
            Btf.from_bytes(b"\x7fELF\x02\x01\x01" + bytes(57), name="vmlinux.o")

    def test_short_header(self) -> None:
        """A blob shorter than the header is reported with both lengths."""
        with pytest.raises(BtfError, match=r"too short for a BTF header \(10 bytes, need 24\)"):
            Btf.from_bytes(mini_page().to_bytes()[:10])

    def test_bad_version(self) -> None:
        """Only BTF version 1 is accepted."""
        with pytest.raises(BtfError, match="unsupported BTF version 2 \\(expected 1\\)"):
            Btf.from_bytes(with_header(mini_page().to_bytes(), version=2))

    def test_bad_hdr_len(self) -> None:
        """A header length below 24 is rejected."""
        with pytest.raises(BtfError, match="header length 8 is outside 24"):
            Btf.from_bytes(with_header(mini_page().to_bytes(), hdr_len=8))

    def test_truncated_strings(self) -> None:
        """Cutting the end of the blob truncates the string section the header describes."""
        blob = mini_page().to_bytes()
        with pytest.raises(BtfError, match=rf"truncated blob: header puts the string section at bytes "
                                           rf"\d+..{len(blob)} but the blob has {len(blob) - 5} bytes"):
            Btf.from_bytes(blob[:-5])

    def test_truncated_types(self) -> None:
        """Cutting into the type section is reported against the type section."""
        with pytest.raises(BtfError, match=r"truncated blob: header puts the type section at bytes 24\.\.\d+ "
                                           r"but the blob has 40 bytes"):
            Btf.from_bytes(mini_page().to_bytes()[:40])

    def test_type_record_cut(self) -> None:
        """A type_len that ends inside a type record is reported with the bytes needed and present."""
        blob = mini_page().to_bytes()
        type_len = struct.unpack_from("<I", blob, 12)[0]
        with pytest.raises(BtfError, match=r"truncated type section \(need 48 bytes at \d+, have 44\)"):
            Btf.from_bytes(with_header(blob, type_len=type_len - 4))

    def test_unknown_kind(self) -> None:
        """A kind number outside 1..19 is rejected with its type id."""
        b = mini_page()
        b.raw(25, "", 0, 0)
        with pytest.raises(BtfError, match=r"unknown BTF kind 25 for type id 10 at byte \d+"):
            Btf.from_bytes(b.to_bytes())

    def test_unknown_struct(self) -> None:
        """Asking for a missing struct names it and suggests close names."""
        btf = Btf.from_bytes(mini_page().to_bytes(), name="/x")
        with pytest.raises(BtfError, match=r"BTF blob /x: no struct named 'pag'; did you mean page"):
            btf.members("pag")
        with pytest.raises(BtfError, match=r"no struct named 'folio'$"):
            btf.struct_size("folio")

    def test_type_id_out_of_range(self) -> None:
        """A member referring past the last type id is reported when the struct is read."""
        b = BtfBuilder()
        b.struct("s", 8, [("x", 7, 0)])
        with pytest.raises(BtfError, match=r"type id 7 out of range 1\.\.1"):
            Btf.from_bytes(b.to_bytes()).members("s")

    def test_name_offset_out_of_range(self) -> None:
        """A name offset past the string section is rejected."""
        b = BtfBuilder()
        b.raw(Kind.STRUCT, "", 0, 0)
        blob = bytearray(b.to_bytes())
        blob[24:28] = struct.pack("<I", 999)
        with pytest.raises(BtfError, match=r"name offset 999 outside the string section"):
            Btf.from_bytes(bytes(blob))

    def test_unterminated_string(self) -> None:
        """A string section whose last name lacks its NUL is rejected."""
        blob = mini_page().to_bytes()
        str_len = struct.unpack_from("<I", blob, 20)[0]
        with pytest.raises(BtfError, match=r"truncated string section \(string at offset \d+ has no NUL\)"):
            Btf.from_bytes(with_header(blob, str_len=str_len - 1)[:-1])

    def test_typedef_cycle(self) -> None:
        """A typedef that refers to itself is reported instead of looping."""
        b = BtfBuilder()
        b.typedef("loop", 1)
        b.struct("s", 8, [("x", 1, 0)])
        with pytest.raises(BtfError, match="too long \\(a cycle\\?\\)"):
            Btf.from_bytes(b.to_bytes()).members("s")

    def test_anonymous_cycle(self) -> None:
        """A struct that contains itself anonymously is reported instead of recursing forever."""
        b = BtfBuilder()
        b.struct("s", 8, [("", 1, 0)])
        with pytest.raises(BtfError, match="nested too deep"):
            Btf.from_bytes(b.to_bytes()).members("s")

    def test_unsized_member(self) -> None:
        """A member whose type has no size (void, a function) is reported with its kind."""
        b = BtfBuilder()
        b.struct("s", 8, [("f", b.raw(Kind.FUNC_PROTO, "", 0, 0), 0)])
        with pytest.raises(BtfError, match=r"type id 1 \(FUNC_PROTO\) has no size"):
            Btf.from_bytes(b.to_bytes()).members("s")

    def test_unreadable_path(self, tmp_path: Path) -> None:
        """A missing file is reported with its path and the OS reason."""
        missing = str(tmp_path / "missing")
        with pytest.raises(BtfError, match=rf"cannot read BTF file {missing}: No such file"):
            Btf.from_file(missing)

    def test_from_file(self, tmp_path: Path) -> None:
        """from_file reads a blob written to disk and labels it with its path."""
        path = str(tmp_path / "page.btf")
        Path(path).write_bytes(mini_page().to_bytes())
        btf = Btf.from_file(path)
        assert btf.name == path and btf.struct_size("page") == 40


@pytest.mark.skipif(not os.path.exists(VMLINUX), reason=f"{VMLINUX} is not available on this machine")
class TestVmlinux:
    """The running kernel's BTF."""

    def test_struct_page(self) -> None:
        """struct page is found, 8-byte aligned in size, with flags at 0 and lru.next at 8."""
        btf = Btf.from_file(VMLINUX)
        size = btf.struct_size("page")
        assert size % 8 == 0 and 56 <= size <= 96
        members = btf.members("page", expand=["lru"])
        assert members["flags"].offset == 0
        assert members["lru.next"].offset == 8
        assert "_refcount" in members

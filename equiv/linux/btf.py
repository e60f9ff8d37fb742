"""Reader of raw Linux BTF (BPF Type Format) blobs, and flattened struct layouts.

A raw BTF blob (what ``/sys/kernel/btf/vmlinux`` holds) is a 24-byte header (magic 0xEB9F,
version 1, flags, hdr_len, then type_off/type_len and str_off/str_len, both relative to the
end of the header), a type section and a string section.  The magic is a u16 in the blob's
byte order: bytes 9F EB mean little-endian, EB 9F big-endian.  Each type is a 12-byte
``struct btf_type`` (name_off, info, size-or-type; info has vlen in bits 0-15, kind in bits
24-28, kind_flag in bit 31) followed by kind-specific data:

======================================================  =========================
kind                                                    trailing bytes
======================================================  =========================
PTR, FWD, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC,     0
FLOAT, TYPE_TAG
INT, VAR, DECL_TAG                                      4
ARRAY (type, index_type, nelems)                        12
STRUCT, UNION (btf_member), DATASEC, ENUM64             12 * vlen
ENUM, FUNC_PROTO (btf_param)                            8 * vlen
======================================================  =========================

Type ids start at 1 (0 is void).  Layout per include/uapi/linux/btf.h and
https://docs.kernel.org/bpf/btf.html.  Split BTF (kernel modules, whose ids and string
offsets continue those of vmlinux) is not supported.  BTF has no pointer size; pointers
are taken to be 8 bytes (64-bit kernels).
"""

from __future__ import annotations

import difflib
import struct
from collections.abc import Iterable, Sequence
from enum import IntEnum

from attrs import frozen

from equiv.engine.errors import InputError

MAGIC = 0xEB9F
HDR_LEN = 24
PTR_SIZE = 8  # BTF does not record it; every kernel equiv models is 64-bit


#: arch -> a struct only that arch's kernel defines (arch/x86/include/asm/processor.h,
#: arch/arm64/include/asm/cpu.h): the arch of a vmlinux BTF
ARCH_STRUCTS = {"x86_64": "cpuinfo_x86", "arm64": "cpuinfo_arm64"}


class BtfError(InputError):
    """A BTF blob is unreadable or malformed, or lacks what was asked of it."""


class Kind(IntEnum):
    """BTF_KIND_* from include/uapi/linux/btf.h."""

    INT = 1
    PTR = 2
    ARRAY = 3
    STRUCT = 4
    UNION = 5
    ENUM = 6
    FWD = 7
    TYPEDEF = 8
    VOLATILE = 9
    CONST = 10
    RESTRICT = 11
    FUNC = 12
    FUNC_PROTO = 13
    VAR = 14
    DATASEC = 15
    FLOAT = 16
    DECL_TAG = 17
    TYPE_TAG = 18
    ENUM64 = 19


# kind -> (fixed trailing bytes, trailing bytes per vlen entry)
_TRAILING: dict[int, tuple[int, int]] = {
    Kind.INT: (4, 0), Kind.PTR: (0, 0), Kind.ARRAY: (12, 0), Kind.STRUCT: (0, 12),
    Kind.UNION: (0, 12), Kind.ENUM: (0, 8), Kind.FWD: (0, 0), Kind.TYPEDEF: (0, 0),
    Kind.VOLATILE: (0, 0), Kind.CONST: (0, 0), Kind.RESTRICT: (0, 0), Kind.FUNC: (0, 0),
    Kind.FUNC_PROTO: (0, 8), Kind.VAR: (4, 0), Kind.DATASEC: (0, 12), Kind.FLOAT: (0, 0),
    Kind.DECL_TAG: (4, 0), Kind.TYPE_TAG: (0, 0), Kind.ENUM64: (0, 12),
}
_MODIFIERS = frozenset({Kind.TYPEDEF, Kind.CONST, Kind.VOLATILE, Kind.RESTRICT, Kind.TYPE_TAG})
_SIZED = frozenset({Kind.INT, Kind.FLOAT, Kind.STRUCT, Kind.UNION, Kind.ENUM, Kind.ENUM64})
_COMPOSITE = frozenset({Kind.STRUCT, Kind.UNION})

MemberSpec = tuple[str, int, int] | tuple[str, int, int, int]
"""A :class:`BtfBuilder` member: (name, type id, bit offset[, bitfield size in bits])."""


@frozen
class Member:
    """One flattened member of a struct.

    ``offset`` is in bytes from the start of the outer struct and ``bit_offset`` is the same
    position in bits (``offset == bit_offset // 8``; they differ only for bitfields).
    ``bitfield_size`` is 0 for ordinary members; for bitfields ``size`` is
    ``ceil(bitfield_size / 8)``.
    """

    path: str
    offset: int  # bytes
    size: int  # bytes
    bit_offset: int
    bitfield_size: int


@frozen
class _Type:
    kind: Kind
    kind_flag: bool
    vlen: int
    name_off: int
    size_or_type: int
    data_off: int  # blob offset of the trailing data


class Btf:
    """A parsed raw BTF blob; build it with :meth:`from_bytes` or :meth:`from_file`."""

    def __init__(self, data: bytes, name: str) -> None:
        self.name = name
        self._data = data
        if not data:
            raise self._error("is empty; pass a raw BTF file such as /sys/kernel/btf/vmlinux")
        if data[:2] not in (b"\x9f\xeb", b"\xeb\x9f"):
            raise BtfError(f"{name} is not a BTF blob: magic 0x{data[:2].hex()} (expected 0xeb9f); "
                           "pass a raw BTF file such as /sys/kernel/btf/vmlinux")
        self._bo = "<" if data[:2] == b"\x9f\xeb" else ">"
        if len(data) < HDR_LEN:
            raise self._error(f"too short for a BTF header ({len(data)} bytes, need {HDR_LEN})")
        _, version, _, hdr_len, type_off, type_len, str_off, str_len = self._unpack("HBBIIIII", 0)
        if version != 1:
            raise self._error(f"unsupported BTF version {version} (expected 1)")
        if not HDR_LEN <= hdr_len <= len(data):
            raise self._error(f"header length {hdr_len} is outside {HDR_LEN}..{len(data)}")
        for what, off, length in (("type", type_off, type_len), ("string", str_off, str_len)):
            start = hdr_len + off
            if start + length > len(data):
                raise self._error(f"truncated blob: header puts the {what} section at bytes "
                                  f"{start}..{start + length} but the blob has {len(data)} bytes")
        self._str_start, self._str_end = hdr_len + str_off, hdr_len + str_off + str_len
        self._types: list[_Type] = []
        self._structs: dict[str, list[int]] = {}
        pos, end = hdr_len + type_off, hdr_len + type_off + type_len
        while pos < end:
            if end - pos < 12:
                raise self._error(f"truncated type section (need 12 bytes at {pos}, have {end - pos})")
            name_off, info, size_or_type = self._unpack("III", pos)
            raw_kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
            if raw_kind not in _TRAILING:
                raise self._error(f"unknown BTF kind {raw_kind} for type id {len(self._types) + 1} "
                                  f"at byte {pos}")
            fixed, per = _TRAILING[raw_kind]
            need = 12 + fixed + per * vlen
            if end - pos < need:
                raise self._error(f"truncated type section (need {need} bytes at {pos}, have {end - pos})")
            kind = Kind(raw_kind)
            self._types.append(_Type(kind, bool(info >> 31), vlen, name_off, size_or_type, pos + 12))
            if kind == Kind.STRUCT:
                self._structs.setdefault(self._str(name_off), []).append(len(self._types))
            pos += need

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> Btf:
        """Parse ``data``; ``name`` only labels error messages."""
        return cls(bytes(data), name)

    @classmethod
    def from_file(cls, path: str) -> Btf:
        """Read and parse the raw BTF file at ``path`` (e.g. /sys/kernel/btf/vmlinux)."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise BtfError(f"cannot read BTF file {path}: {e.strerror or e}") from e
        return cls(data, str(path))

    def __len__(self) -> int:
        """Number of types (the largest valid type id)."""
        return len(self._types)

    def has_struct(self, name: str) -> bool:
        """Whether a ``struct name`` (kind STRUCT, not a forward declaration) exists."""
        return name in self._structs

    def arch(self) -> tuple[str, str] | None:
        """The architecture of the kernel this BTF describes, and the type that tells, from
        a struct only that arch defines (``struct cpuinfo_x86``, ``struct cpuinfo_arm64``);
        None when the blob has neither (e.g. a hand-made blob)."""
        for arch, struct_name in ARCH_STRUCTS.items():
            if self.has_struct(struct_name):
                return arch, f"struct {struct_name}"
        return None

    def struct_size(self, name: str) -> int:
        """``sizeof(struct name)`` in bytes."""
        return self._type(self._struct_id(name)).size_or_type

    def members(self, name: str, expand: Iterable[str] = ()) -> dict[str, Member]:
        """The flattened named members of ``struct name``, by path, in declaration order.

        Anonymous struct/union members are descended into.  A named member whose name is in
        ``expand`` and whose type is a struct or union also contributes its own flattened
        members as ``"name.sub"`` (one level).  When a path occurs twice the first wins.
        """
        out: dict[str, Member] = {}
        self._flatten(self._struct_id(name), 0, "", frozenset(expand), out, 0)
        return out

    # -- internals -------------------------------------------------------------------------

    def _error(self, what: str) -> BtfError:
        return BtfError(f"BTF blob {self.name}: {what}")

    def _unpack(self, fmt: str, pos: int) -> tuple[int, ...]:
        return struct.unpack_from(self._bo + fmt, self._data, pos)

    def _str(self, off: int) -> str:
        start = self._str_start + off
        if not self._str_start <= start < self._str_end:
            raise self._error(f"name offset {off} outside the string section "
                              f"({self._str_end - self._str_start} bytes; split/module BTF is unsupported)")
        nul = self._data.find(b"\0", start, self._str_end)
        if nul < 0:
            raise self._error(f"truncated string section (string at offset {off} has no NUL)")
        return self._data[start:nul].decode("utf-8", errors="replace")

    def _type(self, tid: int) -> _Type:
        if not 1 <= tid <= len(self._types):
            raise self._error(f"type id {tid} out of range 1..{len(self._types)}")
        return self._types[tid - 1]

    def _struct_id(self, name: str) -> int:
        ids = self._structs.get(name)
        if not ids:
            close = difflib.get_close_matches(name, self._structs, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise self._error(f"no struct named {name!r}{hint}")
        return next((i for i in ids if self._types[i - 1].vlen > 0), ids[0])

    def _resolve(self, tid: int) -> int:
        """Follow typedef/const/volatile/restrict/type_tag to the underlying type id."""
        for _ in range(64):
            if tid == 0 or self._type(tid).kind not in _MODIFIERS:
                return tid
            tid = self._type(tid).size_or_type
        raise self._error(f"modifier chain through type id {tid} is too long (a cycle?)")

    def _size(self, tid: int, depth: int = 0) -> int:
        tid = self._resolve(tid)
        t = self._type(tid) if tid else None
        if t is not None and t.kind in _SIZED:
            return t.size_or_type
        if t is not None and t.kind == Kind.PTR:
            return PTR_SIZE
        if t is not None and t.kind == Kind.ARRAY and depth < 32:
            elem, _, nelems = self._unpack("III", t.data_off)
            return self._size(elem, depth + 1) * nelems
        what = "void" if t is None else t.kind.name
        raise self._error(f"type id {tid} ({what}) has no size")

    def _flatten(self, tid: int, base: int, prefix: str, expand: frozenset[str],
                 out: dict[str, Member], depth: int) -> None:
        if depth > 32:
            raise self._error(f"anonymous members nested too deep at type id {tid} (a cycle?)")
        t = self._type(tid)
        for i in range(t.vlen):
            name_off, mtype, moff = self._unpack("III", t.data_off + 12 * i)
            bits, bsz = (moff & 0xFFFFFF, moff >> 24) if t.kind_flag else (moff, 0)
            bits += base
            name, target = self._str(name_off), self._resolve(mtype)
            tkind = self._type(target).kind if target else None
            if not name:
                if tkind in _COMPOSITE:
                    self._flatten(target, bits, prefix, expand, out, depth + 1)
                continue  # anonymous bitfield padding
            if not t.kind_flag and tkind == Kind.INT:  # old-style bitfield: INT encodes it
                (enc,) = self._unpack("I", self._type(target).data_off)
                nr_bits, int_off = enc & 0xFF, (enc >> 16) & 0xFF
                if int_off or nr_bits != 8 * self._type(target).size_or_type:
                    bits, bsz = bits + int_off, nr_bits
            size = (bsz + 7) // 8 if bsz else self._size(target)
            path = prefix + name
            out.setdefault(path, Member(path, bits // 8, size, bits, bsz))
            if name in expand and tkind in _COMPOSITE:
                self._flatten(target, bits, path + ".", frozenset(), out, depth + 1)


class BtfBuilder:
    """Builds raw little- or big-endian BTF blobs in pure Python, for tests.

    Type ids are assigned in call order starting at 1; :attr:`next_id` is the id the next
    call will return, so a forward reference (e.g. ``struct list_head *`` inside
    ``struct list_head``) is ``b.ptr(b.next_id + 1)`` followed by ``b.struct(...)``.
    """

    def __init__(self) -> None:
        self._types: list[tuple[int, int, int, bytes]] = []  # name_off, info, size_or_type, extra
        self._strings: dict[str, int] = {"": 0}
        self._strtab = bytearray(b"\0")

    @property
    def next_id(self) -> int:
        """The id the next type added will get."""
        return len(self._types) + 1

    def _name(self, s: str) -> int:
        if s not in self._strings:
            self._strings[s] = len(self._strtab)
            self._strtab += s.encode() + b"\0"
        return self._strings[s]

    def raw(self, kind: int, name: str, vlen: int, size_or_type: int, extra: bytes = b"",
            kind_flag: bool = False) -> int:
        """Add a type with any kind number and hand-made trailing data (little-endian u32s)."""
        if len(extra) % 4:
            raise ValueError(f"trailing data must be whole u32s, got {len(extra)} bytes")
        info = (int(kind_flag) << 31) | ((kind & 0x1F) << 24) | vlen
        self._types.append((self._name(name), info, size_or_type, extra))
        return len(self._types)

    def int_type(self, name: str, size: int) -> int:
        """``name`` as a BTF INT of ``size`` bytes (encoding 0, all bits used)."""
        return self.raw(Kind.INT, name, 0, size, struct.pack("<I", size * 8))

    def ptr(self, target: int) -> int:
        """A pointer to type ``target``."""
        return self.raw(Kind.PTR, "", 0, target)

    def typedef(self, name: str, target: int) -> int:
        """``typedef <target> name``."""
        return self.raw(Kind.TYPEDEF, name, 0, target)

    def const(self, target: int) -> int:
        """``const <target>``."""
        return self.raw(Kind.CONST, "", 0, target)

    def array(self, elem: int, nelems: int, index_type: int = 0) -> int:
        """``<elem>[nelems]``; ``index_type`` is ignored by readers and defaults to void."""
        return self.raw(Kind.ARRAY, "", 0, 0, struct.pack("<III", elem, index_type, nelems))

    def struct(self, name: str, size: int, members: Sequence[MemberSpec], kind_flag: bool = False) -> int:
        """``struct name`` of ``size`` bytes; members are (name, type id, bit offset[, bitfield bits]).

        A member with bitfield bits sets kind_flag, as does ``kind_flag=True``.
        """
        return self._composite(Kind.STRUCT, name, size, members, kind_flag)

    def union(self, name: str, size: int, members: Sequence[MemberSpec], kind_flag: bool = False) -> int:
        """``union name``; as :meth:`struct`."""
        return self._composite(Kind.UNION, name, size, members, kind_flag)

    def _composite(self, kind: Kind, name: str, size: int, members: Sequence[MemberSpec],
                   kind_flag: bool) -> int:
        kind_flag = kind_flag or any(len(m) == 4 and m[3] for m in members)
        extra = b""
        for m in members:
            bsz = m[3] if len(m) == 4 else 0
            off = (bsz << 24) | m[2] if kind_flag else m[2]
            extra += struct.pack("<III", self._name(m[0]), m[1], off)
        return self.raw(kind, name, len(members), size, extra, kind_flag)

    def to_bytes(self, big_endian: bool = False) -> bytes:
        """The raw BTF blob: header, type section, string section."""
        bo = ">" if big_endian else "<"
        tsec = bytearray()
        for name_off, info, size_or_type, extra in self._types:
            tsec += struct.pack(bo + "III", name_off, info, size_or_type)
            words = struct.unpack(f"<{len(extra) // 4}I", extra)  # trailing data is all u32s
            tsec += struct.pack(f"{bo}{len(words)}I", *words)
        hdr = struct.pack(bo + "HBBIIIII", MAGIC, 1, 0, HDR_LEN, 0, len(tsec), len(tsec), len(self._strtab))
        return hdr + bytes(tsec) + bytes(self._strtab)

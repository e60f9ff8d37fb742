"""Reading a kernel ``.config`` into {symbol: value}: plain text, or compressed with gzip
(``/proc/config.gz``), xz (Debian's ``linux-config-*`` packages ship
``/usr/src/linux-config-6.12/config.amd64_none_amd64.xz``), bzip2, or zstd where Python
has a reader for it (3.14's ``compression.zstd``), each told by its magic bytes.

Generic: every ``CONFIG_X=...`` line is kept (``CONFIG_`` prefix dropped, quotes stripped);
``# CONFIG_X is not set`` and absent symbols are left out.  What a subject makes of the
symbols is its business (the zone-device configuration: :func:`equiv.config.from_kconfig`).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
from collections.abc import Callable
from pathlib import Path

from equiv.engine.errors import InputError

_LINE = re.compile(r"^CONFIG_([A-Za-z0-9_]+)=(.*)$")


def parse(text: str) -> dict[str, str]:
    """Symbol -> value (``y``, ``m``, a number or a string without quotes); unset symbols omitted."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2).strip().strip('"')
    return out


def _zstd(data: bytes) -> bytes:
    """zstd data decompressed by Python's own reader (3.14 on), else an input error saying
    how to decompress it (no zstd reader is a dependency of equiv)."""
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise LookupError("zstd") from None
    try:
        out: bytes = zstd.decompress(data)
    except zstd.ZstdError as e:
        raise ValueError(str(e)) from None
    return out


#: magic bytes -> (compression, decompressor, the command that decompresses a file)
COMPRESSIONS: dict[bytes, tuple[str, Callable[[bytes], bytes], str]] = {
    b"\x1f\x8b": ("gzip", gzip.decompress, "gunzip -k"),
    b"\xfd7zXZ\x00": ("xz", lzma.decompress, "unxz -k"),
    b"BZh": ("bzip2", bz2.decompress, "bunzip2 -k"),
    b"\x28\xb5\x2f\xfd": ("zstd", _zstd, "unzstd"),
}


def _decompressed(path: str, raw: bytes) -> bytes:
    """``raw`` decompressed if its magic bytes name a compression of :data:`COMPRESSIONS`."""
    for magic, (name, decompress, command) in COMPRESSIONS.items():
        if not raw.startswith(magic):
            continue
        try:
            return decompress(raw)
        except LookupError:
            raise InputError(f"--kconfig {path!r} is {name}-compressed and this Python has no "
                             f"{name} reader; decompress it first ({command} {path}) and give "
                             "the text .config") from None
        except (OSError, EOFError, ValueError, lzma.LZMAError) as e:
            raise InputError(f"--kconfig {path!r}: corrupt {name} data ({e})") from None
    return raw


def read_text(path: str) -> str:
    """The text of the .config at ``path``, decompressed when it is gzip, xz, bzip2 or
    zstd data (:data:`COMPRESSIONS`).

    Raises:
        InputError: unreadable, corrupt compressed data, a compression this Python cannot
            read (zstd before 3.14: the line says how to decompress it), or not UTF-8 text.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read --kconfig {path!r}: {e.strerror}") from None
    raw = _decompressed(path, raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"--kconfig {path!r} is not a text .config (not UTF-8, nor gzip, xz, "
                         "bzip2 or zstd data)") from None


def read(path: str) -> dict[str, str]:
    """:func:`parse` of the .config at ``path`` (plain or compressed: :func:`read_text`).

    Raises:
        InputError: as :func:`read_text`.
    """
    return parse(read_text(path))


__all__ = ["COMPRESSIONS", "parse", "read", "read_text"]

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
import os
import re
from collections.abc import Callable, Iterable, Mapping
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


# ---- editing a .config and checking it after olddefconfig -------------------------------

#: a ``.config`` line that sets a symbol, and one that says it is not set
SET = re.compile(r"^(CONFIG_\w+)=(.*)$")
NOT_SET = re.compile(r"^# (CONFIG_\w+) is not set$")


def values(text: str) -> dict[str, str]:
    """A ``.config``'s symbols by whole name with their values as written; ``# CONFIG_X is
    not set`` is ``"n"``.

    >>> values('CONFIG_A=y\\n# CONFIG_B is not set\\nCONFIG_C="x"\\n# comment\\n')
    {'CONFIG_A': 'y', 'CONFIG_B': 'n', 'CONFIG_C': '"x"'}
    """
    out: dict[str, str] = {}
    for line in text.splitlines():
        if m := SET.match(line):
            out[m.group(1)] = m.group(2)
        elif m := NOT_SET.match(line):
            out[m.group(1)] = "n"
    return out


#: the first line every Kconfig front end (``conf``, ``mconf``, ...) writes to a ``.config``
GENERATED = "# Automatically generated file; DO NOT EDIT."


def is_whole(text: str) -> bool:
    """Is ``text`` a whole ``.config`` as Kconfig writes it (its first lines say so), not a
    fragment of a few symbols to merge over a ``defconfig``?

    >>> is_whole(GENERATED + "\\n# Linux/x86 6.1.192 Kernel Configuration\\nCONFIG_X=y\\n")
    True
    >>> is_whole("CONFIG_ZONE_DEVICE=y\\n")
    False
    """
    return GENERATED in text.lstrip("\n").splitlines()[:3]


def line(name: str, value: str) -> str:
    """The ``.config`` line that sets ``name`` to ``value`` (``"n"``: not set).

    >>> line("CONFIG_X", "n"), line("CONFIG_Y", "8192")
    ('# CONFIG_X is not set', 'CONFIG_Y=8192')
    """
    return f"# {name} is not set" if value == "n" else f"{name}={value}"


def edit(text: str, changes: Mapping[str, str]) -> str:
    """``text`` with every line of a changed symbol removed and the changes appended in order.

    >>> edit("CONFIG_A=y\\nCONFIG_B=m\\n", {"CONFIG_A": "n", "CONFIG_Z": "4"})
    'CONFIG_B=m\\n# CONFIG_A is not set\\nCONFIG_Z=4\\n'
    """
    kept = [ln for ln in text.splitlines()
            if not ((m := SET.match(ln) or NOT_SET.match(ln)) and m.group(1) in changes)]
    return "\n".join(kept + [line(n, v) for n, v in changes.items()]) + "\n"


def unmet(asked: Mapping[str, str], text: str | Mapping[str, str]) -> list[tuple[str, str, str]]:
    """``(name, asked, got)`` for every symbol of ``asked`` whose value in the ``.config``
    ``text`` (or its :func:`values`) is another; a symbol absent from it is ``"n"`` (Kconfig
    writes no line for a symbol whose dependencies are not met).

    >>> unmet({"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": "4"}, "CONFIG_A=m\\n")
    [('CONFIG_A', 'y', 'm'), ('CONFIG_C', '4', 'n')]
    """
    got = values(text) if isinstance(text, str) else text
    return [(n, v, got.get(n, "n")) for n, v in asked.items() if got.get(n, "n") != v]


def kconfig_files(tree: Path) -> Iterable[Path]:
    """The Kconfig files of ``tree`` (``Kconfig`` and ``Kconfig.*`` anywhere but in
    ``Documentation/`` and ``tools/``), in a stable order."""
    for top, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not (top == str(tree) and d in ("Documentation", "tools"))
                         and not d.startswith("."))
        for f in sorted(files):
            if f == "Kconfig" or f.startswith("Kconfig."):
                yield Path(top) / f


_ENTRY = re.compile(r"^\s*(?:menu)?config\s+(\w+)\s*$")


def defined(tree: Path, names: Iterable[str]) -> set[str]:
    """The symbols of ``names`` (whole names) that some Kconfig file of ``tree`` defines
    (a ``config X`` or ``menuconfig X`` entry)."""
    want = {n.removeprefix("CONFIG_") for n in names}
    found: set[str] = set()
    for f in kconfig_files(tree):
        for ln in f.read_text(errors="replace").splitlines():
            if (m := _ENTRY.match(ln)) and m.group(1) in want:
                found.add(m.group(1))
    return {f"CONFIG_{n}" for n in found}


def explain(tree: Path, name: str, srcarch: str | None = None, limit: int = 4) -> str:
    """Where ``tree``'s Kconfig decides ``name`` (a whole name): the ``depends on`` and
    ``def_bool``/``default`` lines of its entries and the ``select`` lines naming it, each as
    ``file:line: text`` (of ``arch/<srcarch>/`` only, among the arches, when given); at most
    ``limit`` of them, ``""`` when there are none."""
    sym = name.removeprefix("CONFIG_")
    select = re.compile(rf"^\s*select\s+{sym}\b")
    out: list[str] = []
    for f in kconfig_files(tree):
        rel = f.relative_to(tree)
        if srcarch and rel.parts[0] == "arch" and rel.parts[1] != srcarch:
            continue
        inside = False
        for i, ln in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if m := _ENTRY.match(ln):
                inside = m.group(1) == sym
            elif re.match(r"^\s*(?:choice|endchoice|menu|endmenu|if|endif|comment|source)\b", ln):
                inside = False
            text = ln.strip()
            if (inside and re.match(r"(?:depends on|def_bool|def_tristate|default)\b", text)) \
                    or select.match(ln):
                out.append(f"{rel}:{i}: {text}")
    return "; ".join(out[:limit]) + (" ..." if len(out) > limit else "")


__all__ = [
    "COMPRESSIONS",
    "NOT_SET",
    "SET",
    "defined",
    "edit",
    "explain",
    "kconfig_files",
    "line",
    "parse",
    "read",
    "read_text",
    "unmet",
    "values",
]

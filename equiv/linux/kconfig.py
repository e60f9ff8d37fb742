"""Reading a kernel ``.config`` (plain or gzip, e.g. /proc/config.gz) into {symbol: value}.

Generic: every ``CONFIG_X=...`` line is kept (``CONFIG_`` prefix dropped, quotes stripped);
``# CONFIG_X is not set`` and absent symbols are left out.  What a subject makes of the
symbols is its business (the zone-device configuration: :func:`equiv.config.from_kconfig`).
"""

from __future__ import annotations

import gzip
import re
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


def read_text(path: str) -> str:
    """The text of the .config at ``path``, gunzipped when it is gzip data.

    Raises:
        InputError: unreadable, corrupt gzip data, or not UTF-8 text.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read --kconfig {path!r}: {e.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise InputError(f"--kconfig {path!r}: corrupt gzip data ({e})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"--kconfig {path!r} is not a text .config (not UTF-8)") from None


def read(path: str) -> dict[str, str]:
    """:func:`parse` of the .config at ``path`` (plain or gzip).

    Raises:
        InputError: as :func:`read_text`.
    """
    return parse(read_text(path))


__all__ = ["parse", "read", "read_text"]

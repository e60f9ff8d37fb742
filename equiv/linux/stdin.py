"""``--patch -``: the patches on standard input.

``git format-patch --stdout BASE.. | python -m equiv.proofs --linux TREE --patch -`` hands
the mails (or an mbox, or a diff) to equiv on standard input; :mod:`equiv.linux.patch`
reads them as it reads a file.  The stream is read to its end once (the patches are read
to check them, to apply them and to apply them step by step), and never from a terminal.
"""

from __future__ import annotations

import sys

from equiv.engine.errors import InputError

#: ``--patch -``: the mails, mbox or diff on standard input (``git format-patch --stdout
#: base.. | python -m equiv.proofs --linux TREE --patch -``)
STDIN = "-"
#: standard input as read, by the identity of the stream read: read once per process (the
#: patches are read to check, to apply and to apply step by step), a new stream afresh
_STDIN: dict[int, bytes] = {}


def stdin_patches() -> bytes:
    """What standard input holds, read to its end once for each stream.

    Raises:
        InputError: standard input is a terminal (nothing is piped in).
    """
    stream = sys.stdin
    if stream is None or stream.isatty():
        raise InputError("--patch - reads the patches from standard input, which is a "
                         "terminal here: pipe them in (git format-patch --stdout BASE.. | "
                         "python -m equiv.proofs --linux TREE --patch -) or name a file")
    key = id(stream)
    if key not in _STDIN:
        _STDIN.clear()
        _STDIN[key] = stream.buffer.read()
    return _STDIN[key]


__all__ = ["STDIN", "stdin_patches"]

"""One test process at a time for what the machine has one of.

``python -m pytest --runslow -n 2`` (``.ci/run``) runs two workers, and other runs may share
the machine.  Two things must not happen in two processes at once:

* apt-get (the linux612 fixture, linux-config-6.12, :func:`equiv.zone_device.live.host.install_missing`):
  dpkg's lock makes a second apt-get fail at once rather than wait, and a test would then
  fail or skip on a missing package that the other process was installing;
* unpacking linux-source-6.12 into the user's cache (:func:`equiv.zone_device.live.ctext.source_tree`,
  kept across sessions): a second process would find the first one's files half-written.

A file lock (``flock``) in the temporary directory orders them; the kernel drops it when
its holder exits, so a killed run leaves nothing to clean up.
"""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: the lock's file (its content is never read: only its flock matters)
LOCK = Path(tempfile.gettempdir()) / "equiv-tests-host.lock"


@contextmanager
def host_lock() -> Iterator[None]:
    """Hold the machine-wide test lock for the ``with`` block (waits for it)."""
    with LOCK.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)

"""The result cache: decided queries and whole cells, on disk, shared between runs.

Two kinds of entry, each one small JSON file under the cache directory (default: the
user's cache directory, ``platformdirs.user_cache_dir("equiv")``):

* ``query/``: the answer (``unsat``, or ``sat`` for a satisfiability check) of one solver
  query, keyed by the SHA-256 of the query's exact SMT-LIB text, the deciding solver(s)
  and their versions, the tool version and the resource budget (rlimit).  An UNKNOWN answer
  is never stored.
* ``cell/``: the result of one matrix cell (verdicts, counterexamples), keyed by the cell's
  full description (configuration, revision, pgmap type, order, seeded bug, obligation
  filter, budget, solver) and a fingerprint of the tool's own source, and listing the
  query keys its verdicts rest on.  A cell entry is used only when every one of those
  query entries is present, so a cached verdict is always backed by the cached answer of
  the exact query; a cell with an UNKNOWN obligation is stored only when every query it
  posed was decided (the UNKNOWN then follows from decided answers, e.g. a refuted loop
  lemma: the seeded bugs of the self-test), never when a budget ran out.

Integrity: every entry names its format, kind and key and carries the SHA-256 of its
payload; an entry that does not parse (not UTF-8, not JSON), or whose format, kind, key or
digest is wrong (corrupt, truncated, or written by another tool), is ignored, recomputed
and reported, never trusted.  Problems are reported once per run and kind
(:meth:`Cache.summary`), however many entries they concern: a cache that cannot be written
costs one line, not one per cell.
Writers are safe under concurrency: an entry is written to a temporary file in the same
directory and renamed into place (atomic on POSIX), so readers see an old entry, a new
one, or none; concurrent writers of one key write the same content.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import platformdirs
import z3

FORMAT = "equiv-cache/1"
TOOL_VERSION = "0.1.0"


def default_dir() -> str:
    """The default cache directory (``$XDG_CACHE_HOME/equiv`` on Linux)."""
    return platformdirs.user_cache_dir("equiv")


@cache
def source_fingerprint() -> str:
    """SHA-256 over the tool's own Python sources: a cell entry made by other code is never
    used (the queries a cell poses are a function of the sources and its description)."""
    h = hashlib.sha256(TOOL_VERSION.encode())
    root = Path(__file__).parent.parent  # the whole equiv package, not only the engine
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


@cache
def solver_versions(mode: str) -> str:
    """The versions of the solver(s) a query is decided by (``z3``, ``cvc5``, ``bitwuzla``
    or ``all``); part of every key."""
    versions = [f"z3 {z3.get_version_string()}"]
    if mode in ("cvc5", "all"):
        import cvc5
        versions.append(f"cvc5 {getattr(cvc5, '__version__', '?')}")
    if mode in ("bitwuzla", "all"):
        import bitwuzla
        versions.append(f"bitwuzla {bitwuzla.version()}")
    return f"{mode}: " + ", ".join(versions)


def query_key(smt2: str, mode: str, rlimit: int | None = None) -> str:
    """Key of one query: its exact SMT-LIB text, the solver(s) and versions, the tool, and
    the deterministic resource budget (so a verdict never depends on what is cached: with a
    budget too small to decide a query, a warm run says UNKNOWN like a cold one)."""
    h = hashlib.sha256(f"{FORMAT}\0{TOOL_VERSION}\0{solver_versions(mode)}\0{rlimit}\0".encode())
    h.update(smt2.encode())
    return h.hexdigest()


def cell_key(description: dict[str, Any]) -> str:
    """Key of one cell: its canonical description and the tool's source fingerprint."""
    text = json.dumps(description, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{FORMAT}\0{source_fingerprint()}\0{text}".encode()).hexdigest()


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


#: One problem with one cache entry: what went wrong (the same text for every entry it
#: concerns) and the entry's path.
Problem = tuple[str, str]


class Cache:
    """One cache directory.  ``problems`` collects one :data:`Problem` per ignored or
    unwritable entry (:meth:`summary` reports them); ``hits`` and ``stores`` count per
    kind."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)
        self._root = str(self.root)
        self.problems: list[Problem] = []
        self.hits: dict[str, int] = {"query": 0, "cell": 0}
        self.stores: dict[str, int] = {"query": 0, "cell": 0}
        #: query answers this handle has read (a query entry's content is a
        #: function of its key, so it is read once per run: the cells of a self-test rest
        #: on many of the same vacuity queries)
        self._answers: dict[str, Any] = {}

    def _path(self, kind: str, key: str) -> Path:
        return Path(self._file(kind, key))

    def _file(self, kind: str, key: str) -> str:
        return os.path.join(self._root, kind, key[:2], f"{key}.json")

    def get(self, kind: str, key: str) -> Any | None:
        """The payload stored under ``key``, or None (absent, or ignored as corrupt)."""
        if kind == "query" and key in self._answers:
            self.hits[kind] += 1
            return self._answers[key]
        path = self._file(kind, key)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (FileNotFoundError, NotADirectoryError):  # absent (put reports the latter)
            return None
        except OSError as e:
            self.problems.append((f"cannot read cache entries ({e.strerror})", str(path)))
            return None
        try:
            doc = json.loads(data.decode("utf-8"))  # UnicodeDecodeError is a ValueError
            ok = (isinstance(doc, dict) and doc.get("format") == FORMAT and doc.get("kind") == kind
                  and doc.get("key") == key and doc.get("digest") == _digest(doc.get("payload")))
        except (ValueError, TypeError):
            ok = False
        if not ok:
            self.problems.append(("ignored corrupt or foreign cache entries (recomputed)",
                                  str(path)))
            return None
        self.hits[kind] += 1
        if kind == "query":
            self._answers[key] = doc["payload"]
        return doc["payload"]

    def put(self, kind: str, key: str, payload: Any) -> None:
        """Store ``payload`` atomically (temporary file + rename); errors are reported, not
        raised (a cache that cannot be written only costs time).  A query answer this
        handle has read or written already is not written again (a query entry's content is
        a function of its key; many cells of one run pose the same queries)."""
        if kind == "query" and self._answers.get(key) == payload:
            return
        path = self._path(kind, key)
        doc = {"format": FORMAT, "kind": kind, "key": key, "digest": _digest(payload),
               "payload": payload}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f, sort_keys=True)
            os.replace(tmp, path)
        except OSError as e:
            self.problems.append((f"cannot write to the cache {self.root} ({e.strerror}), "
                                  "results not stored", str(path)))
            return
        self.stores[kind] += 1
        if kind == "query":
            self._answers[key] = payload

    def summary(self) -> list[str]:
        """One line per kind of problem met in this run (each with the number of entries it
        concerns and the first of them), in the order first met.

        >>> c = Cache("/nonexistent")
        >>> c.problems += [("ignored corrupt entries", "/a"), ("ignored corrupt entries", "/b"),
        ...                ("ignored corrupt entries", "/a")]
        >>> c.summary()
        ['ignored corrupt entries: 2 entries, first /a']
        """
        seen: dict[str, dict[str, None]] = {}
        for what, path in self.problems:
            seen.setdefault(what, {})[path] = None
        return [f"{what}: {len(paths)} entr{'y' if len(paths) == 1 else 'ies'}, first "
                f"{next(iter(paths))}" for what, paths in seen.items()]

"""Issue 17: faults and options.  No input gives a traceback or exit 1 (the code for
"refuted"): bad input is one line and exit 3, a crash is one line and exit 4 with the
traceback written to a file, Ctrl-C is ``equiv: interrupted`` and exit 130, and a damaged
cache costs one line per run."""

from __future__ import annotations

import io
import random
from pathlib import Path

from equiv.proofs import main

SMALL = ["--types", "GENERIC,FS_DAX", "--orders", "0-1", "--no-times", "--quiet"]



def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json"))


class TestCache:
    def test_random_bytes_in_entries_are_ignored_reported_once_and_recomputed(
            self, tmp_path: Path) -> None:
        """Non-UTF-8 bytes in every cell and query entry: no traceback, the same result,
        one line on stderr for the whole run (the query entries are read by workers)."""
        cold = run(*SMALL, "--cache-dir", str(tmp_path))
        assert cold[0] == 0
        rnd = random.Random(17)
        damaged = entries(tmp_path)
        assert len(damaged) > 4
        for path in damaged:
            path.write_bytes(b"\xff\xfe" + bytes(rnd.randrange(256) for _ in range(200)))
        code, out, err = run(*SMALL, "--cache-dir", str(tmp_path))
        assert (code, out) == cold[:2], "recomputed, same result"
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("equiv: cache: ignored corrupt or foreign cache entries")
        assert "Traceback" not in err

    def test_an_unwritable_cache_is_one_line_per_run(self, tmp_path: Path) -> None:
        """A cache whose entries cannot be written (here the kind directories are files,
        which fails for root too): one line, not one per cell or query."""
        (tmp_path / "cell").write_text("")
        (tmp_path / "query").write_text("")
        code, _, err = run(*SMALL, "--cache-dir", str(tmp_path))
        assert code == 0
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith(f"equiv: cache: cannot write to the cache {tmp_path} ")

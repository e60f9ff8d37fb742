"""The command line: exit codes, one-line errors, and golden text/JSON output.

Regenerate the golden files after an intended format change with
``pytest tests/test_cli.py --update-golden`` and review the diff like code.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from equiv.proofs import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


class TestExitCodes:
    def test_proved_is_0(self) -> None:
        """All obligations proved: exit 0."""
        code, out, _ = run("--types", "GENERIC", "--orders", "0-1", "--jobs", "1")
        assert code == 0
        assert "(2 cells)" in out and "30 proved" in out

    def test_refuted_is_1(self) -> None:
        """A counterexample: exit 1."""
        code, out, _ = run("--types", "GENERIC", "--orders", "2", "--jobs", "1",
                           "--mutant", "mutant_tail_keeps_type_refcount")
        assert code == 1
        assert "REFUTED" in out

    def test_unknown_is_2(self) -> None:
        """An exhausted budget: exit 2 (unknown is never success)."""
        code, out, _ = run("--types", "GENERIC", "--orders", "1", "--rlimit", "1", "--jobs", "1")
        assert code == 2
        assert "UNKNOWN" in out

    @pytest.mark.parametrize(("argv", "msg"), [
        (["--types", "DAX"], "unknown pgmap type 'DAX'; valid: PRIVATE, COHERENT, FS_DAX"),
        (["--orders", "19"], "order 19 out of range; valid: 0..18"),
        (["--orders", "3-1"], "bad --orders '3-1'"),
        (["--revision", "v7"], "unknown revision 'v7'; valid: v11, v11-fix, v1, v2, v3, v4, v5"),
        (["--config", "sparc"], "unknown config 'sparc'; valid: x86_64-default"),
        (["--format", "xml"], "unknown --format 'xml'; valid: text, json"),
        (["--mutant", "nope"], "unknown mutant 'nope'; valid: mutant_"),
        (["--timeout-ms", "0"], "--timeout-ms must be positive"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ])
    def test_bad_input_is_3(self, argv: list[str], msg: str) -> None:
        """Bad input: one line naming the problem and the valid choices, exit 3."""
        code, out, err = run(*argv)
        assert code == 3
        assert out == ""
        assert err.count("\n") == 1 and err.startswith("equiv: error: ")
        assert msg in err

    def test_no_traceback_from_the_real_entry_point(self) -> None:
        """``python -m equiv.proofs`` with bad input prints one line, no traceback."""
        p = subprocess.run([sys.executable, "-m", "equiv.proofs", "--orders", "x"],
                           capture_output=True, text=True, check=False)
        assert p.returncode == 3
        assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


def run_process(*argv: str) -> tuple[int, str]:
    """Run the real entry point in a fresh process (z3's models depend on the terms built
    before a query, so golden output is taken the way a user gets it)."""
    p = subprocess.run([sys.executable, "-m", "equiv.proofs", "--no-cache", *argv], capture_output=True,
                       text=True, check=False)
    return p.returncode, p.stdout


class TestGolden:
    def test_text_proved(self, golden) -> None:  # type: ignore[no-untyped-def]
        """The matrix format, pinned."""
        _, out = run_process("--types", "FS_DAX,GENERIC", "--orders", "0-2", "--no-times", "--jobs", "1")
        golden("proved.txt", out)

    def test_text_refuted(self, golden) -> None:  # type: ignore[no-untyped-def]
        """The counterexample format, pinned (values come from a deterministic solver run)."""
        _, out = run_process("--types", "GENERIC", "--orders", "2", "--no-times", "--jobs", "1",
                             "--mutant", "mutant_tail_keeps_type_refcount")
        golden("refuted.txt", out)

    def test_text_explain(self, golden) -> None:  # type: ignore[no-untyped-def]
        """The --explain format, pinned."""
        _, out = run_process("--types", "GENERIC", "--orders", "2", "--no-times", "--jobs", "1",
                             "--explain", "_refcount")
        golden("explain.txt", out)

    def test_json_refuted(self, golden) -> None:  # type: ignore[no-untyped-def]
        """The JSON format, pinned; one record per obligation with the required keys."""
        _, out = run_process("--types", "GENERIC", "--orders", "2", "--no-times", "--jobs", "1",
                             "--format", "json", "--mutant", "mutant_short_copy")
        golden("refuted.json", out)
        doc = json.loads(out)
        assert doc["schema"] == "equiv.proofs/2"
        for rec in doc["records"]:
            assert {"subject", "revision", "config", "pgmap_type", "order", "role",
                    "verdict", "counterexample"} <= rec.keys()
        refuted = [r for r in doc["records"] if r["verdict"] == "REFUTED"]
        assert refuted and all(r["counterexample"]["fields"] for r in refuted)

    def test_json_output_file_has_times(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        """--output writes the report to a file; timed JSON carries seconds per record."""
        path = tmp_path / "r.json"
        code, out, _ = run("--types", "GENERIC", "--orders", "0", "--format", "json",
                           "--output", str(path), "--jobs", "1")
        assert code == 0 and out == ""
        doc = json.loads(path.read_text())
        assert all(isinstance(r["seconds"], float) for r in doc["records"])


def test_list_names_assumptions_of_each_revision() -> None:
    """--list shows what is assumed about each revision (e.g. v5's unknown text)."""
    code, out, _ = run("--list")
    assert code == 0
    assert "v5 template/tail patch text unknown [N]" in out
    assert "mutant_short_copy" in out

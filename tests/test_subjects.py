"""The subject registry: every subject is served by the same command, formats and exit codes;
a subject's own options are refused for another subject."""

from __future__ import annotations

import io

from equiv.proofs import main
from equiv.subjects import REGISTRY as SUBJECTS
from equiv.subjects import subject


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_every_subject_is_registered_completely() -> None:
    for name in SUBJECTS:
        s = subject(name)
        assert s.name == name and s.summary and s.list_lines()


def test_unknown_subject_is_a_one_line_error() -> None:
    code, out, err = run("--subject", "nope")
    assert code == 3 and out == ""
    assert err == f"equiv: error: unknown subject 'nope'; valid: {', '.join(SUBJECTS)}, all\n"


def test_list_names_each_subject() -> None:
    code, out, _ = run("--list", "--subject", "all")
    assert code == 0
    for name in SUBJECTS:
        assert f"subject {name}: " in out


def test_zone_device_is_the_default_subject() -> None:
    a = run("--types", "GENERIC", "--orders", "0", "--no-times", "--no-cache", "--quiet")
    b = run("--subject", "zone-device", "--types", "GENERIC", "--orders", "0", "--no-times",
            "--no-cache", "--quiet")
    assert a == b and a[0] == 0


def test_subject_specific_names_need_one_subject() -> None:
    code, _, err = run("--subject", "all", "--revision", "v11")
    assert code == 3 and "--revision names differ per subject" in err

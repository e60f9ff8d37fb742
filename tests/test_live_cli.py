"""``python -m equiv.proofs --live`` / ``--live-from``: the command, its reports and its errors.

The fast tests compare the recorded run in ``tests/data/live`` (see test_live_compare.py for
how it is cut from a real run); seeded differences are made in a copy, either in the dump
(one byte of one struct page) or in the model (a slow-path bug monkeypatched into the
6.12.117 hand path).  The slow test runs the whole thing: fetch, build, two boots of Debian's
6.12.117 under TCG (or KVM where it works), every default namespace compared in full.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from host_lock import host_lock
from junitparser import JUnitXml
from test_linux_tree import linux612  # noqa: F401  (the fixture)

from equiv.proofs import main
from equiv.zone_device.live import dump, host, packages
from equiv.zone_device.live import run as live_run
from equiv.zone_device.live.boot import Namespace
from equiv.zone_device.live.present import step_source
from equiv.zone_device.live.run import DEFAULT_NAMESPACES, RECORD, load_recorded

DATA = Path(__file__).parent / "data" / "live"
GOLDEN = Path(__file__).parent / "golden" / "live_from.txt"


@pytest.fixture(autouse=True)
def no_c_text(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The C text's second prediction needs linux-source-6.12 and takes seconds per
    namespace: off here, except in the tests named ``test_the_c_text...`` (which use the
    tree)."""
    if not request.node.name.startswith("test_the_c_text"):
        monkeypatch.setattr(live_run, "source_tree",
                            lambda: (None, "not used in this test"))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def recorded_copy(tmp: Path) -> Path:
    """A copy of the recorded run, with every dump's pages unpacked (so a byte can be
    changed)."""
    import gzip

    dst = tmp / "run"
    shutil.copytree(DATA, dst)
    for gz in dst.glob("*/pages.gz"):
        (gz.parent / "pages").write_bytes(gzip.decompress(gz.read_bytes()))
        gz.unlink()
    return dst


def flip(run_dir: Path, name: str, pfn: int, offset: int, xor: int) -> None:
    """Flip bits of one byte of one struct page in the dump ``name``."""
    pages = run_dir / name / "pages"
    data = bytearray(pages.read_bytes())
    m = re.search(rb"start_pfn=(\d+) .* record=(\d+)", bytes(data[:128]))
    assert m
    data[128 + (pfn - int(m.group(1))) * int(m.group(2)) + 16 + offset] ^= xor
    pages.write_bytes(bytes(data))


def normalise(text: str) -> str:
    return text.replace(str(DATA), "tests/data/live")


# ---- the recorded run ------------------------------------------------------------------


def test_recorded_run_is_the_same_as_the_model() -> None:
    code, out, err = run("--live-from", str(DATA), "--no-times", "--quiet")
    assert code == 0, out + err
    assert err == ""
    assert all(len(ln) <= 72 for ln in out.splitlines()), out
    assert "4 namespace(s): 4 SAME" in out
    assert "aliased tail 172" in out  # devdax 1G --map mem: the deduplicated tails


def test_recorded_run_golden(golden: Callable[[str, str], None]) -> None:
    """The text report's format, pinned (regenerate: --update-golden, as every golden)."""
    _, out, _ = run("--live-from", str(DATA), "--no-times", "--quiet")
    golden(GOLDEN.name, normalise(out))


def test_header_names_the_kernel() -> None:
    _, out, _ = run("--live-from", str(DATA), "--no-times", "--quiet")
    rec = json.loads((DATA / RECORD).read_text())
    assert re.search(r"^kernel +6\.12\.117\+deb12-amd64$", out, re.M)
    assert f"{packages.PACKAGES[0]} {packages.DEB_VERSION}" in out
    assert f"sha256 {rec['config_sha256'][:16]}" in out
    assert "namespaces  " + ", ".join(e["name"] for e in rec["namespaces"]) in out


def test_json_report(tmp_path: Path) -> None:
    code, out, _ = run("--live-from", str(DATA), "--format", "json", "--quiet",
                       "--report", f"junit={tmp_path / 'j.xml'}",
                       "--report", f"sarif={tmp_path / 's.sarif'}")
    assert code == 0
    doc = json.loads(out)
    rec = json.loads((DATA / RECORD).read_text())
    assert doc["kernel"]["config_sha256"] == rec["config_sha256"]
    assert doc["exit_code"] == 0 and [n["verdict"] for n in doc["namespaces"]] == ["SAME"] * 4
    xml = JUnitXml.fromfile(str(tmp_path / "j.xml"))
    assert (xml.tests, xml.failures, xml.errors) == (4, 0, 0)
    sarif = json.loads((tmp_path / "s.sarif").read_text())
    assert sarif["runs"][0]["results"] == []
    assert sarif["runs"][0]["properties"]["config_sha256"] == rec["config_sha256"]


def test_a_repeated_boot_is_recorded_and_reported(tmp_path: Path) -> None:
    """A boot repeated after the guest kernel crashed (boot.boot_and_dump) is written to
    run.json and shown by every report of the run, also when re-read with --live-from."""
    dst = tmp_path / "run"
    shutil.copytree(DATA, dst)
    rec = json.loads((DATA / RECORD).read_text())
    why = ("boot 2: the guest kernel crashed 11 s into the boot (TCG), before the guest "
           "script ran (Kernel panic - not syncing: Fatal exception in interrupt)")
    live_run._write_record(dst, live_run._kernel_of(rec), rec["accelerator"],
                           [(e["name"], e["dump"]) for e in rec["namespaces"]], [why])
    code, out, _ = run("--live-from", str(dst), "--no-times", "--quiet",
                       "--report", f"json={tmp_path / 'r.json'}",
                       "--report", f"junit={tmp_path / 'j.xml'}")
    assert code == 0
    assert "note: boot 2: the guest kernel crashed 11 s into the boot (TCG), before" in out
    note = out[out.index("note:"):]
    assert "Fatal exception in\n    interrupt)" in note and all(len(ln) <= 72 for ln in note.splitlines())
    assert json.loads((tmp_path / "r.json").read_text())["notes"] == [why]
    assert f'name="note_1" value="{why}"' in (tmp_path / "j.xml").read_text()
    _, out, _ = run("--live-from", str(DATA), "--no-times", "--quiet", "--format", "json")
    assert json.loads(out)["notes"] == []


def test_junit_keeps_to_the_strict_schema() -> None:
    """<testsuites> carries only the attributes Jenkins' junit-10.xsd allows, and its time
    is the sum of its suites'."""
    from test_cli_faults import _check_junit

    _, out, _ = run("--live-from", str(DATA), "--format", "junit", "--quiet")
    _check_junit(out)


def test_sarif_is_valid_sarif_2_1_0(tmp_path: Path) -> None:
    """The SARIF log validates against OASIS's SARIF 2.1.0 schema, clean and with a
    difference."""
    from test_formats import sarif_errors

    _, out, _ = run("--live-from", str(DATA), "--format", "sarif", "--quiet")
    assert sarif_errors(json.loads(out)) == []
    d = recorded_copy(tmp_path)
    flip(d, "devdax-1G-mem", 0x100000 + 5, 8, 0x08)
    code, out, _ = run("--live-from", str(d), "--format", "sarif", "--quiet")
    doc = json.loads(out)
    assert code == 1 and len(doc["runs"][0]["results"]) == 1
    assert sarif_errors(doc) == []


# ---- seeded differences ----------------------------------------------------------------


def test_a_changed_byte_is_a_counterexample(tmp_path: Path) -> None:
    """One byte of tail 2's compound_head in compound 1 of devdax-2M-dev, changed: exit 1,
    the field under its kernel names, the live and model values and what they mean, the
    provenance traced to prep_compound_tail in mm/internal.h, in every format."""
    d = recorded_copy(tmp_path)
    first = 0x100000 + 2560
    flip(d, "devdax-2M-dev", first + 512 + 2, 8, 0x40)
    code, out, _ = run("--live-from", str(d), "--no-times", "--quiet",
                       "--report", f"json={tmp_path / 'r.json'}",
                       "--report", f"sarif={tmp_path / 'r.sarif'}",
                       "--report", f"junit={tmp_path / 'r.xml'}")
    assert code == 1
    assert "devdax-2M-dev: DIFFERENT" in out
    assert f"pfn {first + 514:#x} (compound 1, tail 2)" in out
    assert "compound_head" in out
    assert f"(struct page of pfn {first + 512:#x} | 1)" in out  # the model's value
    assert f"(struct page of pfn {first + 513:#x} | 1)" in out  # the changed value's meaning
    assert "[mm/internal.h:722]" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    ns = {n["name"]: n for n in doc["namespaces"]}["devdax-2M-dev"]
    (diff,) = ns["differences"]
    assert (diff["compound"], diff["tail"], diff["offset"], diff["size"]) == (1, 2, 8, 8)
    assert diff["live"] ^ diff["model"] == 0x40
    assert {"step": "prep_compound_tail (6.12): set_compound_head",
            "source": "mm/internal.h:722"} in diff["provenance"][0]
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    (res,) = sarif["runs"][0]["results"]
    loc = res["locations"][0]["physicalLocation"]
    assert (loc["artifactLocation"]["uri"], loc["region"]["startLine"]) == ("mm/internal.h", 722)
    xml = JUnitXml.fromfile(str(tmp_path / "r.xml"))
    assert (xml.tests, xml.failures) == (4, 1)


def test_a_changed_pageblock_is_reported(tmp_path: Path) -> None:
    d = recorded_copy(tmp_path)
    pb = d / "devdax-4K-mem" / "pageblocks"
    pb.write_text(pb.read_text().replace("1049088 1", "1049088 2"))
    code, out, _ = run("--live-from", str(d), "--no-times", "--quiet")
    assert code == 1
    assert "pageblock of pfn 0x100200: migratetype live 2, model 1" in out


def test_an_aliased_tail_difference_names_the_tail(tmp_path: Path) -> None:
    """The deduplicated vmemmap: struct page 200 of the 1G compound is read through the
    alias of slot 72; a change there is reported at pfn +200, tail 200."""
    d = recorded_copy(tmp_path)
    flip(d, "devdax-1G-mem", 0x100000 + 200, 24, 0x01)
    code, out, _ = run("--live-from", str(d), "--no-times", "--quiet", "--format", "json")
    assert code == 1
    ns = {n["name"]: n for n in json.loads(out)["namespaces"]}["devdax-1G-mem"]
    (diff,) = ns["differences"]
    assert (diff["pfn"], diff["tail"], diff["offset"]) == (0x100000 + 200, 200, 24)
    assert diff["model_meaning"].endswith("TAIL_MAPPING")
    assert {"role": "aliased tail", "compared": 172, "differing": 1} in ns["roles"]


def test_a_seeded_slow_path_bug_in_the_model_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model run with a seeded slow-path bug (prep_compound_tail() of 6.12 without its
    ``mapping = TAIL_MAPPING`` store) against the unchanged recorded dumps: every tail >= 2
    of every compound differs at offset 24, and nothing else."""
    from equiv.zone_device.source import slow_v612y

    original = slow_v612y.prep_compound_tail_612

    def no_tail_mapping(sc: Any, page: Any, head_addr: Any) -> Any:
        out = original(sc, page, head_addr)
        return out.set(sc.layout, "mapping", page.get(sc.layout, "mapping"),
                       "seeded bug: mapping left as it was")

    monkeypatch.setattr(slow_v612y, "prep_compound_tail_612", no_tail_mapping)
    rec = load_recorded(DATA)
    assert rec.exit_code == 1
    by = {r.name: r.comparison for r in rec.namespaces}
    c = by["devdax-2M-dev"]
    assert c is not None
    assert {d.offset for d in c.diffs} <= {24, 28}  # mapping, two atoms of a tail's union
    assert all("mapping" in d.names for d in c.diffs)
    assert {d.tail for d in c.diffs} == set(range(2, 512))
    assert all(d.live_meaning.endswith("TAIL_MAPPING") for d in c.diffs)
    assert by["devdax-4K-mem"] is not None and by["devdax-4K-mem"].clean  # order 0: no tails
    assert by["fsdax-2M-dev"] is not None and by["fsdax-2M-dev"].clean


def test_a_missing_dump_is_not_compared_and_not_success(tmp_path: Path) -> None:
    d = recorded_copy(tmp_path)
    shutil.rmtree(d / "fsdax-2M-dev")
    code, out, _ = run("--live-from", str(d), "--no-times", "--quiet")
    assert code == 2
    assert "fsdax-2M-dev    NOT COMPARED" in out
    assert "no 'layout' file" in out


# ---- the kernel text the provenance names ----------------------------------------------


def test_every_model_step_has_a_kernel_line() -> None:
    rec = load_recorded(DATA)
    steps = {s for r in rec.namespaces if r.comparison
             for d in r.comparison.diffs for ch in d.provenance for s in ch}
    assert steps == set()  # clean: nothing to trace; the table is checked below
    # (the lines themselves: test_linux_tree.py::test_live_kernel_text_lines)
    for step in ("__init_single_page: mm_zero_struct_page",
                 "__init_zone_device_page (6.12.y): __SetPageReserved",
                 "memmap_init_compound: __SetPageHead", "set_page_links: set_page_node",
                 "prep_compound_tail (6.12): set_compound_head"):
        assert step_source(step) is not None, step


# ---- the second prediction: the C text of linux-source-6.12 ---------------------------


@pytest.mark.slow
def test_the_c_text_agrees_and_sees_a_changed_byte(request: pytest.FixtureRequest,
                                                   tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """mm/mm_init.c of linux-source-6.12 interpreted on each recorded dump's first compound:
    the same as the live struct pages; a byte changed in tail 1 is reported by the C text
    too, with the C line that wrote it.  (Slow: about 30 s of interpretation.)"""
    tree = request.getfixturevalue("linux612")
    monkeypatch.setattr(live_run, "source_tree", lambda: (tree, ""))
    rec = load_recorded(DATA)
    assert rec.exit_code == 0
    ct = {r.name: r.ctext for r in rec.namespaces}
    assert all(t is not None and t.reason is None and not t.diffs for t in ct.values()), ct
    assert [t.compared for t in ct.values() if t] == [512, 64, 128, 64]
    d = recorded_copy(tmp_path)
    flip(d, "devdax-2M-dev", 0x100000 + 2560 + 1, 32, 0x02)  # page[1]'s _folio_nr_pages
    code, out, _ = run("--live-from", str(d), "--no-times", "--quiet", "--format", "json")
    assert code == 1
    ns = {n["name"]: n for n in json.loads(out)["namespaces"]}["devdax-2M-dev"]
    (cdiff,) = ns["c_text"]["differences"]
    assert (cdiff["tail"], cdiff["offset"]) == (1, 32)
    assert any(st["source"] and st["source"].startswith(("mm/internal.h:", "include/"))
               for st in cdiff["provenance"][-1]), cdiff["provenance"]
    assert len(ns["differences"]) == 1  # and the hand model's


# ---- bad input: one line, exit 3 -------------------------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (["--live", "devdax-3M-dev"], "namespace align '3M': valid: 4K, 2M, 1G"),
    (["--live", "devdax-2M-dev", "devdax-2M-dev"], "namespace devdax-2M-dev is named twice"),
    (["--live", "--live-from", "x"], "give one"),
    (["--live-out", "/tmp/x"], "--live-out DIR is the run directory of --live"),
    (["--live", "--config", "arm64-64k"], "does not take --config"),
    (["--live", "--kconfig", "/proc/config.gz"], "does not take --kconfig"),
    (["--live", "--format", "markdown"], "reports in text, json, junit, sarif"),
    (["--live-from", "/nonexistent"], "not a directory"),
    (["--live-from", "/tmp"], "no run.json"),
    (["--live-kernel", "all-types"], "--live-kernel chooses the kernel --live boots"),
    (["--live", "--live-kernel", "fedora"], "--live-kernel 'fedora': valid: debian, all-types"),
    (["--live", "--patch", "README.md"], "takes --patch only as --live --live-kernel all-types"),
    (["--live", "--live-kernel", "all-types", "--patch", "/nonexistent.patch"],
     "--patch '/nonexistent.patch': no such file"),
    (["--live", "hmm-4K-mem"], "hmm-4K-mem needs --live-kernel all-types"),
    (["--live", "p2pdma-2M-mem", "--live-kernel", "all-types"], "use p2pdma-4K-mem"),
])
def test_bad_live_input(argv: list[str], message: str) -> None:
    code, out, err = run(*argv)
    assert code == 3
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("equiv: error: ") and message in err, err


def test_a_changed_config_is_refused(tmp_path: Path) -> None:
    d = recorded_copy(tmp_path)
    (d / "config").write_text((d / "config").read_text() + "CONFIG_NUMA=y\n")
    code, _, err = run("--live-from", str(d))
    assert code == 3 and "config is not the recorded one" in err


# ---- the real thing --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.xdist_group("host")  # boots/installs: tests/conftest.py
def test_the_whole_live_check(tmp_path: Path) -> None:
    """Fetch, build, boot (two boots: the 512 MiB and the 2 GiB region), dump and compare
    every default namespace in full: all the same as the model.  About 5 minutes under
    TCG on 2 cores."""
    with host_lock():  # dpkg's lock: tests/host_lock.py
        host.install_missing([*host.FETCH_TOOLS, *host.BUILD_TOOLS, *host.BOOT_TOOLS,
                             packages.DEPMOD_TOOL])
    t0 = time.monotonic()
    code, out, err = run("--live", "--live-out", str(tmp_path / "run"), "--quiet",
                         "--format", "json")
    took = time.monotonic() - t0
    assert code == 0, out + err
    doc = json.loads(out)
    got = {n["name"]: n for n in doc["namespaces"]}
    assert list(got) == list(DEFAULT_NAMESPACES)
    for name, n in got.items():
        assert n["verdict"] == "SAME", (name, n)
        assert n["struct_pages_compared"] > 0 and n["pageblocks_compared"] > 0
    assert doc["kernel"]["release"] == packages.RELEASE
    assert took < 20 * 60
    # the dumps' basic facts (layout constants, pgmap, heads and tails, pageblocks)
    from test_live_boot import check_dump_facts

    check_dump_facts(packages.fetch(), dump.load(Path(got["devdax-2M-dev"]["dump"])),
                     dump.load(Path(got["devdax-4K-mem"]["dump"])))
    # the COHERENT pgmaps the dump module made: what the comparison does not look at
    from test_live_other_types import check_coherent

    for name in ("coherent-2M-dev", "coherent-2M-mem"):
        check_coherent(Path(got[name]["dump"]), Namespace.parse(name), got[name]["first_pfn"])

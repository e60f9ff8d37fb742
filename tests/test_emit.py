"""``--emit-tests DIR``: a pytest replay and a KUnit sketch per counterexample."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from equiv.proofs import main
from equiv.zone_device.counterexample import Counterexample

ROOT = Path(__file__).resolve().parent.parent

#: (argv, expected number of files) of the runs whose tests are emitted: a seeded bug on the
#: tails (tail1, tail2, tail t >= 3), one on the heads loop (head), and a configuration that
#: is not a preset (x86_64-debug-page-ref with --observe-events; the events kind)
RUNS = [
    (["--mutant", "mutant_tail_keeps_type_refcount", "--types", "GENERIC", "--orders", "2"], 6),
    (["--mutant", "mutant_heads_loop_one_short", "--types", "GENERIC", "--orders", "0"], 2),
    (["--config", "x86_64-debug-page-ref", "--observe-events", "--types", "GENERIC",
      "--orders", "1"], 2),
]
STEM = "test_equiv_x86_64_default_v11_generic_o{order}_{ob}_equal_{mutant}"
TAIL1 = STEM.format(order=2, ob="tail1", mutant="mutant_tail_keeps_type_refcount")
HEAD = STEM.format(order=0, ob="head", mutant="mutant_heads_loop_one_short")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def run_pytest(directory: Path) -> subprocess.CompletedProcess[str]:
    """Run the emitted tests in a fresh interpreter, importing equiv from this checkout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(directory)], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)


@pytest.fixture(scope="module")
def emitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The directory the three runs emitted into, and what each wrote on stderr."""
    d = tmp_path_factory.mktemp("emitted")
    errs = []
    for argv, _ in RUNS:
        code, out, err = run(*argv, "--emit-tests", str(d), "--jobs", "1", "--quiet")
        assert code == 1 and "REFUTED" in out
        errs.append(err)
    return d, errs


def expected_words(text: str) -> list[int]:
    """The ``equiv_expected[]`` words of a KUnit sketch."""
    body = text.split("equiv_expected[", 1)[1].split("};", 1)[0]
    return [int(v, 16) for v in re.findall(r"^\t(0x[0-9a-f]{16})UL,$", body, re.M)]


class TestEmitTests:
    def test_one_note_per_run_on_stderr(self, emitted: tuple[Path, list[str]]) -> None:
        """Each run writes one line on stderr naming how many files it wrote, and where."""
        d, errs = emitted
        assert errs == [f"equiv: wrote {n} test file{'s' * (n != 1)} to {d}\n" for _, n in RUNS]

    def test_file_names(self, emitted: tuple[Path, list[str]]) -> None:
        """A .py and a .kunit.c per counterexample, named after the cell, safe as module names."""
        d, _ = emitted
        names = sorted(p.name for p in d.iterdir())
        assert len(names) == sum(n for _, n in RUNS)
        assert f"{TAIL1}.py" in names and f"{TAIL1}.kunit.c" in names
        assert f"{HEAD}.py" in names and f"{HEAD}.kunit.c" in names
        assert "test_equiv_x86_64_debug_page_ref_v11_generic_o1_head_equal.py" in names
        assert all(re.fullmatch(r"test_equiv_[a-z0-9_]+\.(py|kunit\.c)", n) for n in names)

    def test_emitted_pytest_files_pass(self, emitted: tuple[Path, list[str]]) -> None:
        """The emitted pytest files replay their counterexamples through the model and pass."""
        d, _ = emitted
        p = run_pytest(d)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "5 passed" in p.stdout

    def test_tampered_record_fails(self, emitted: tuple[Path, list[str]],
                                   tmp_path: Path) -> None:
        """An emitted test checks something: a wrong recorded fast value makes it fail."""
        d, _ = emitted
        text = (d / f"{TAIL1}.py").read_text()
        assert text.count('"fast": "0x1"') == 1
        (tmp_path / f"{TAIL1}.py").write_text(text.replace('"fast": "0x1"', '"fast": "0x2"'))
        p = run_pytest(tmp_path)
        assert p.returncode == 1, p.stdout + p.stderr
        assert "the replay no longer shows the recorded divergence" in p.stdout
        assert "slow 0x0, fast 0x2" in p.stdout and "slow 0x0, fast 0x1" in p.stdout

    def test_pytest_file_docstring(self, emitted: tuple[Path, list[str]]) -> None:
        """The docstring says what it reproduces, how it was found, and that it is generated."""
        d, _ = emitted
        text = (d / f"{TAIL1}.py").read_text()
        assert "counterexample to tail1_equal of MEMORY_DEVICE_GENERIC, order 2" in text
        assert "--obligation tail1_equal" in text and "--mutant mutant_tail_keeps_type_refcount" in text
        assert "when the fast path is fixed it fails - delete it then" in text
        assert "do not edit" in text and "--emit-tests DIR" in text
        assert "CONFIG = 'x86_64-default'" in text

    def test_non_preset_config_is_rebuilt_from_its_fields(self, emitted: tuple[Path, list[str]]
                                                          ) -> None:
        """A configuration that is not a preset is embedded as its fields (Config(**fields))."""
        d, _ = emitted
        text = (d / "test_equiv_x86_64_debug_page_ref_v11_generic_o1_head_equal.py").read_text()
        assert "CONFIG = Config(**CONFIG_FIELDS)" in text and "'observe_events': True" in text

    def test_kunit_states_slow_and_fast_words(self, emitted: tuple[Path, list[str]]) -> None:
        """The KUnit sketch expects the slow path's words; the fast path's differing word
        differs from it exactly in the recorded field."""
        d, _ = emitted
        text = (d / f"{TAIL1}.kunit.c").read_text()
        words = expected_words(text)
        assert len(words) == 8  # sizeof(struct page) == 64 on x86_64-default
        fast6 = int(re.search(r"#define EQUIV_FAST_WORD_6\t(0x[0-9a-f]{16})UL", text)[1], 16)  # type: ignore[index]
        # _refcount is the high half of word 6: slow 0, fast 1
        assert (words[6] >> 32, fast6 >> 32) == (0, 1)
        assert words[6] & 0xFFFF_FFFF == fast6 & 0xFFFF_FFFF
        assert "EQUIV_FAST_WORD_" not in text.replace("EQUIV_FAST_WORD_6", "")
        assert "#define EQUIV_VMEMMAP_SHIFT\t2" in text and "#define EQUIV_PFN\t\t0x1UL" in text
        assert "MEMORY_DEVICE_GENERIC" in text

    def test_kunit_words_match_the_recorded_fields(self, emitted: tuple[Path, list[str]]) -> None:
        """Every recorded differing field's slow value is in the expected words, at its offset."""
        d, _ = emitted
        py = (d / f"{HEAD}.py").read_text()
        record = py.split("COUNTEREXAMPLE = r'''", 1)[1].split("'''", 1)[0]
        cx = Counterexample.from_json(json.loads(record))
        words = expected_words((d / f"{HEAD}.kunit.c").read_text())
        page = sum(w << (64 * i) for i, w in enumerate(words))
        assert len(cx.diffs) >= 3
        for f in cx.diffs:
            assert (page >> (8 * f.offset)) & ((1 << (8 * f.size)) - 1) == f.slow, f.names

    @pytest.mark.parametrize("stem", [TAIL1, HEAD,
                                      "test_equiv_x86_64_debug_page_ref_v11_generic_o1_head_equal"])
    def test_kunit_conventions(self, emitted: tuple[Path, list[str]], stem: str) -> None:
        """KUnit conventions, kernel style: tabs, at most 80 columns, a sketch that says so."""
        d, _ = emitted
        text = (d / f"{stem}.kunit.c").read_text()
        for needle in ("#include <kunit/test.h>", "(struct kunit *test)\n{", "KUNIT_EXPECT_EQ(",
                       "static struct kunit_case", "static struct kunit_suite",
                       "kunit_test_suite(", "SKETCH TO ADAPT", "To be provided"):
            assert needle in text, needle
        lines = text.splitlines()
        assert max(len(ln.expandtabs(8)) for ln in lines) <= 80
        assert not [ln for ln in lines if re.match(r" {2,}\S", ln)], "indent with tabs"

    def test_events_are_a_kunit_expectation(self, emitted: tuple[Path, list[str]]) -> None:
        """A page_ref_set event difference becomes constants and an expectation."""
        d, _ = emitted
        text = (d / "test_equiv_x86_64_debug_page_ref_v11_generic_o1_head_equal.kunit.c").read_text()
        assert "#define EQUIV_EXPECTED_REF_SET_EVENTS\t1UL" in text
        assert "#define EQUIV_FAST_REF_SET_EVENTS\t0UL" in text
        assert "KUNIT_EXPECT_EQ_MSG(test, equiv_ref_set_events(test)," in text

    def test_unwritable_dir_is_a_one_line_error(self, tmp_path: Path) -> None:
        """A DIR that cannot be created: exit 3, one line on stderr, no report."""
        blocker = tmp_path / "file"
        blocker.write_text("")
        code, out, err = run("--mutant", "mutant_heads_loop_one_short", "--types", "GENERIC",
                             "--orders", "0", "--jobs", "1", "--quiet",
                             "--emit-tests", str(blocker / "sub"))
        assert code == 3 and out == ""
        assert err.count("\n") == 1
        assert err.startswith(f"equiv: error: cannot write --emit-tests '{blocker / 'sub'}'")

    def test_no_counterexample_no_files(self, tmp_path: Path) -> None:
        """A proved run writes no test files (and says so)."""
        code, _, err = run("--types", "GENERIC", "--orders", "0", "--jobs", "1", "--quiet",
                           "--emit-tests", str(tmp_path / "none"))
        assert code == 0 and err == f"equiv: wrote 0 test files to {tmp_path / 'none'}\n"
        assert list((tmp_path / "none").iterdir()) == []


@pytest.mark.slow
def test_pageblock_counterexample(tmp_path: Path) -> None:
    """A pageblock counterexample (v6.12's per-page migratetype, FS_DAX with an altmap):
    the pytest replay passes and the KUnit sketch expects the bitmap cell's bits."""
    code, _, _ = run("--compare", "v6.12", "--types", "FS_DAX", "--orders", "1", "--obligation",
                     "pageblock_equal", "--solver", "bitwuzla", "--jobs", "1", "--quiet",
                     "--emit-tests", str(tmp_path))
    assert code == 1
    stem = "test_equiv_x86_64_default_compare_v6_12_fs_dax_o1_pageblock_equal"
    text = (tmp_path / f"{stem}.kunit.c").read_text()
    slow = re.search(r"#define EQUIV_EXPECTED_PB_BITS\t(0x[0-9a-f]{2})UL", text)
    fast = re.search(r"#define EQUIV_FAST_PB_BITS\t(0x[0-9a-f]{2})UL", text)
    assert slow and fast and slow[1] != fast[1]
    assert "KUNIT_EXPECT_EQ_MSG(test, equiv_pageblock_bits(test)," in text
    assert max(len(ln.expandtabs(8)) for ln in text.splitlines()) <= 80
    p = run_pytest(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr

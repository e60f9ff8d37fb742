"""The model against a real kernel tree: Debian's linux-source-6.12 (6.12.117).

The session fixture finds /usr/src/linux-source-6.12.tar.xz (installing the Debian package
when running as root and it is missing) and unpacks only the mirrored files into a cache
directory reused across runs.  No kernel source is kept in this repository.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from equiv.check import Verdict
from equiv.config import PRESETS
from equiv.drift import drift_report
from equiv.fidelity import MODELS, check_fidelity_cell, run_fidelity, setup
from equiv.ktree import FILES, MAKEFILE, KernelTree, macro_env
from equiv.page_model import Layout
from equiv.proofs import main
from equiv.src_layout import compare_with_model, source_structs

TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
TOP = "linux-source-6.12"
CFG = PRESETS["x86_64-default"]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "equiv" / TOP


def _install() -> str | None:
    """Install linux-source-6.12 with apt-get; the reason it cannot be done, or None."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{TARBALL} is missing and apt-get is not usable (not root or no apt-get)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "linux-source-6.12"]):
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if r.returncode != 0:
            return f"{' '.join(cmd)} failed: {r.stderr.strip()[-300:]}"
    return None if TARBALL.is_file() else f"linux-source-6.12 installed but {TARBALL} is absent"


@pytest.fixture(scope="session")
def linux612() -> Path:
    """The root of an unpacked linux-source-6.12 holding the mirrored files (cached)."""
    root = _cache_dir() / TOP
    want = [*FILES, MAKEFILE]
    if all((root / f).is_file() for f in want):
        return root
    if not TARBALL.is_file():
        why = _install()
        if why is not None:
            pytest.skip(f"no linux-source-6.12 tree: {why}")
    root.parent.mkdir(parents=True, exist_ok=True)
    names = {f"{TOP}/{f}" for f in want}
    with tarfile.open(TARBALL, "r:xz") as tar:
        for m in tar:
            if m.name in names:
                tar.extract(m, root.parent, filter="data")
    missing = [f for f in want if not (root / f).is_file()]
    assert not missing, f"{TARBALL} lacks {missing}"
    return root


@pytest.fixture(scope="session")
def tree612(linux612: Path) -> KernelTree:
    return KernelTree.load(linux612)


def _mutated(src: Path, dst: Path, file: str, old: str, new: str) -> Path:
    """A copy of the tree with one statement of ``file`` changed."""
    for f in [*FILES, MAKEFILE]:
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / f, dst / f)
    text = (dst / file).read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in {file}"
    (dst / file).write_text(text.replace(old, new))
    return dst


class TestTreeReading:
    def test_every_modelled_function_is_found_with_its_line(self, tree612: KernelTree) -> None:
        """Each function of the 6.12.y table is located in the tree by file and line."""
        env = macro_env(CFG)
        assert "6.12.117" == tree612.version
        for name in ("__init_single_page", "__init_zone_device_page", "prep_compound_tail",
                     "prep_compound_head", "memmap_init_compound", "memmap_init_zone_device"):
            d = tree612.find(name, env, "function")
            assert d is not None and d.where.split(":")[0] in FILES

    def test_config_picks_the_right_definition(self, tree612: KernelTree) -> None:
        """page_cpupid_reset_last has three definitions; the config chooses one."""
        on = tree612.find("page_cpupid_reset_last", macro_env(CFG), "function")
        off = tree612.find("page_cpupid_reset_last",
                           macro_env(PRESETS["x86_64-default"].__class__(
                               name="no-numa-balancing", NUMA_BALANCING=False)), "function")
        assert on is not None and off is not None and on.line != off.line


class TestDrift:
    def test_no_drift_against_the_612y_model(self, tree612: KernelTree) -> None:
        """The 6.12.y hand model's table matches every definition of the real tree."""
        st = setup(tree612, CFG, MODELS["v6.12.y"])
        rep = drift_report(tree612, st.env, "v6.12.y", CFG.name,
                           MODELS["v6.12.y"].layout(Layout.from_config(CFG)), st.structs)
        assert [] == [r for r in rep.rows if r.verdict != "matches"]
        assert rep.ok

    def test_the_612_release_model_drifts(self, tree612: KernelTree) -> None:
        """The --compare v6.12 model (the release, 2026 prep_compound_head) differs from the
        6.12.117 text where the stable backports and the 6.12 folio are."""
        st = setup(tree612, CFG, MODELS["v6.12"])
        rep = drift_report(tree612, st.env, "v6.12", CFG.name, Layout.from_config(CFG), st.structs)
        differs = {r.name for r in rep.rows if r.verdict == "differs"}
        assert {"__init_zone_device_page", "compound_nr_pages", "memmap_init_zone_device",
                "prep_compound_head", "struct folio"} == differs

    def test_a_changed_statement_is_reported(self, linux612: Path, tmp_path: Path) -> None:
        """One changed statement in a copy of the tree is drift, named on both sides."""
        root = _mutated(linux612, tmp_path, "mm/mm_init.c",
                        "\t\tset_page_count(page, 0);\n\n\t\t/*\n\t\t * The first tail",
                        "\t\tset_page_count(page, 1);\n\n\t\t/*\n\t\t * The first tail")
        t = KernelTree.load(root)
        st = setup(t, CFG, MODELS["v6.12.y"])
        rep = drift_report(t, st.env, "v6.12.y", CFG.name, None, None)
        bad = [r for r in rep.rows if r.verdict != "matches"]
        assert 1 == len(bad)
        assert ("memmap_init_compound", "set_page_count(page, 0);", "set_page_count(page, 1);") == \
            (bad[0].name, bad[0].model_stmt, bad[0].tree_stmt)


class TestLayoutFromSource:
    def test_612_layout_matches_the_612_model(self, tree612: KernelTree) -> None:
        """struct page / folio offsets computed from mm_types.h equal the 6.12 model's."""
        structs = source_structs(tree612, macro_env(CFG))
        rep = compare_with_model(MODELS["v6.12.y"].layout(Layout.from_config(CFG)), structs)
        assert rep.ok

    def test_2026_folio_differs_from_612(self, tree612: KernelTree) -> None:
        """The 2026 model's folio page[1] (_nr_pages_mapped @20, MM_ID fields) is not 6.12's."""
        structs = source_structs(tree612, macro_env(CFG))
        rep = compare_with_model(Layout.from_config(CFG), structs)
        bad = {r.view for r in rep.rows if r.verdict != "matches"}
        assert {"_nr_pages_mapped", "_entire_mapcount", "_mm_ids"} <= bad
        assert (64, 64) == rep.page_size


@pytest.mark.slow
class TestSourceDerivedProof:
    def test_612_text_equals_the_612y_hand_path(self, tree612: KernelTree) -> None:
        """All five types (symbolic), orders 0..4, up to four compounds: PROVED."""
        st = setup(tree612, CFG, MODELS["v6.12.y"])
        run = run_fidelity(st, [None], [0, 1, 2, 3, 4])
        assert [Verdict.PROVED] * 5 == [c.verdict for c in run.cells]
        assert {"memmap_init_zone_device", "memmap_init_compound", "__init_zone_device_page",
                "__init_single_page", "prep_compound_tail",
                "prep_compound_head"} <= {n for n, _ in run.interpreted}

    def test_changed_statement_is_refuted_with_a_counterexample(self, linux612: Path,
                                                                 tmp_path: Path) -> None:
        """set_page_count(page, 1) for tails: tail 1's _refcount differs, replayed."""
        root = _mutated(linux612, tmp_path, "mm/mm_init.c",
                        "\t\tset_page_count(page, 0);\n\n\t\t/*\n\t\t * The first tail",
                        "\t\tset_page_count(page, 1);\n\n\t\t/*\n\t\t * The first tail")
        st = setup(KernelTree.load(root), CFG, MODELS["v6.12.y"])
        cell = check_fidelity_cell(st, None, 1)
        assert Verdict.REFUTED == cell.verdict
        tail1 = next(r for r in cell.roles if r.name == "tail1_equal")
        assert [("_refcount", 0, 1)] == [(d.names[0], d.slow, d.fast) for d in tail1.diffs]

    def test_612_release_model_is_refuted_by_the_text(self, tree612: KernelTree) -> None:
        """Finding: --compare v6.12 writes the 2026 folio fields and compound_info encoding
        into page[1]; the 6.12 text does not."""
        st = setup(tree612, CFG, MODELS["v6.12"])
        cell = check_fidelity_cell(st, None, 1)
        tail1 = next(r for r in cell.roles if r.name == "tail1_equal")
        assert Verdict.REFUTED == tail1.verdict
        assert "compound_info" in {n for d in tail1.diffs for n in d.names}


class TestCli:
    def test_not_a_tree_is_a_one_line_input_error(self, tmp_path: Path) -> None:
        """--linux on a folder without kernel files: exit 3, one line."""
        err = io.StringIO()
        assert 3 == main(["--linux", str(tmp_path)], out=io.StringIO(), err=err)
        assert 1 == len(err.getvalue().splitlines())

    def test_order_out_of_bounds(self, linux612: Path) -> None:
        """The source-derived proof is bounded: order 5 is refused with the valid range."""
        err = io.StringIO()
        assert 3 == main(["--linux", str(linux612), "--orders", "5"], out=io.StringIO(), err=err)
        assert "0..4" in err.getvalue()

    def test_drift_is_printed_before_proof_results(self, linux612: Path) -> None:
        """The report starts with the drift table and ends with the verdict (order 0)."""
        out = io.StringIO()
        assert 0 == main(["--linux", str(linux612), "--orders", "0", "--no-times"], out=out)
        text = out.getvalue()
        assert text.index("drift") < text.index("source-derived proof") < text.index("verdict: PROVED")
        assert "trusted helpers, not interpreted" in text

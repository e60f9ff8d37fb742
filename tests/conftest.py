"""Shared test configuration: derandomised Hypothesis, the slow marker, golden files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

#: plain runs try 30 examples per property, --runslow (CI) Hypothesis's 100: derandomised,
#: so each run tries the same examples
settings.register_profile("equiv", derandomize=True, database=None, deadline=None,
                          print_blob=True, max_examples=30)
settings.register_profile("equiv-ci", parent=settings.get_profile("equiv"), max_examples=100)
settings.load_profile("equiv")

GOLDEN = Path(__file__).parent / "golden"


def pytest_configure(config: pytest.Config) -> None:
    """Hermetic runs: the result cache of every test (and of every subprocess a test starts)
    lives in a fresh temporary directory, never in the user's cache.  --runslow: the
    properties' full example count."""
    import os
    import tempfile

    if config.getoption("--runslow"):
        settings.load_profile("equiv-ci")
    if config.getoption("dist", "no") == "loadgroup":
        # the controller hands the groups out in the items' order (see
        # _group_for_loadgroup), not sorted by their number of tests
        config.option.loadscopereorder = False

    # the user's cache stays reachable for what is not a result: the unpacked
    # linux-source-6.12 files (tests/test_linux_tree.py's linux612), extracted once
    user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    os.environ.setdefault("EQUIV_TEST_USER_CACHE", user)
    # and a configuration's generated headers (equiv/linux/kbuild.py: a whole kernel tree
    # unpacked once, 1.7 GB, and 12-35 s of make per configuration)
    os.environ.setdefault("EQUIV_KBUILD_CACHE", os.path.join(os.environ["EQUIV_TEST_USER_CACHE"],
                                                             "equiv", "kbuild"))
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="equiv-test-cache-")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/* from the current output (review the diff)")


# ``@pytest.mark.xdist_group("host")``: the tests that boot a kernel under QEMU or download
# the live packages.  With ``--dist loadgroup`` (``.ci/run``) one worker runs them one after
# the other (one boot's memory and CPU at a time, the live packages downloaded once into
# that worker's cache) while the other takes the rest; apt-get itself is behind
# tests/host_lock.py wherever it runs.
HOST = "host"

#: the groups handed out first under ``--dist loadgroup`` after ``host``, longest first: a
#: worker queues up to two tests beyond the running one, so the two workers finish together
#: only when the long tests start early and the short files come last.  Seconds on 2 cores
#: (rounded; durations of a --runslow run on 2 workers at load 3-5, 3 December 2026, with
#: the order-18 frame replays of test_mutants.py's fixture taken off).  A scheduling hint,
#: nothing else: a test or file missing here is handed out after these, in collection
#: order, and every test runs whatever this says.  Keys: a test's node id (a slow test in a
#: group of its own) or a file (a file's group).
LONG_GROUPS: dict[str, float] = {
    "tests/test_patch_proof.py::test_seeded_bug_refuted[prep-compound-head-after-tails]": 40,
    "tests/test_mutants.py": 250,  # every control on all five cells (70 s), and at order 18
    "tests/test_patch_controls.py::test_control[no-wrap]": 190,
    "tests/test_config.py::TestPresets::test_every_preset_proves_the_whole_matrix": 115,
    "tests/test_mutants.py::test_full_self_test": 110,
    "tests/test_cli_faults.py::TestWidth::test_self_test": 100,
    "tests/test_linux_tree.py::TestSourceDerivedProof::test_612_text_equals_the_612y_hand_path": 95,
    "tests/test_linux_tree.py::TestSourceDerivedProof::test_worker_processes_give_the_same_cells": 80,
    "tests/test_vmap_any.py::TestAnyCells::test_bench_prints_the_any_figures": 70,
    "tests/test_patch_proof.py::test_series_proved[18]": 70,
    "tests/test_vmap_any.py::TestAnyCells::test_batching_bugs_killed_on_the_any_cell": 60,
    "tests/test_patch_proof.py::test_series_proved[2]": 60,
    # issue 45 (2026-12-07, idle 2 cores; the first also prepares Debian's 6.1 headers)
    "tests/test_any_tree.py::test_612_series_with_debians_configuration": 90,
    "tests/test_any_tree.py::test_612_series_on_arm64": 80,
    "tests/test_any_tree.py::test_61_seeded_edits_with_debians_configuration"
    "[bugs/01-tail-loop-one-past-end]": 70,
}


def _module_fixture(item: pytest.Item) -> bool:
    """Whether ``item`` uses a fixture computed once per module or class (its file's
    tests must then run in one worker, or the fixture is computed in each)."""
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(d.scope in ("module", "class", "package")
                                    for defs in info.name2fixturedefs.values() for d in defs)


def _group_for_loadgroup(items: list[pytest.Item]) -> None:
    """``--dist loadgroup``: put each test in an xdist group and order the groups.

    A test's group is its own ``xdist_group`` mark's (``host``), else its own when it is a
    slow test using no module or class fixture (so one file's slow tests spread over both
    workers), else its file's (as ``--dist loadfile``: a module's fixtures, such as the
    control matrix, run once, in one worker).  The groups are handed out in the order of
    the items: ``host`` first, then :data:`LONG_GROUPS` longest first, then the other slow
    tests' groups, then the rest (a stable sort: a group's tests keep their order).
    """
    group: dict[str, str] = {}
    hint: dict[str, str] = {}  # the item's key in LONG_GROUPS
    for n, item in enumerate(items):
        mark = item.get_closest_marker("xdist_group")
        path = item.nodeid.split("::", 1)[0]
        if mark is not None:
            g = str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            key = g
        elif "slow" in item.keywords and not _module_fixture(item):
            # (no brackets in a group name: xdist reads the group after the last "@" only
            # when no "]" follows it)
            g, key = f"{path}#{n}", item.nodeid
        else:
            g = key = path
        if mark is None:
            item.add_marker(pytest.mark.xdist_group(g))
        group[item.nodeid], hint[item.nodeid] = g, key
    slow = {group[i.nodeid] for i in items if "slow" in i.keywords}

    def rank(item: pytest.Item) -> tuple[int, float]:
        g, key = group[item.nodeid], hint[item.nodeid]
        if g == HOST:
            return (0, 0.0)
        if key in LONG_GROUPS:
            return (1, -LONG_GROUPS[key])
        return (2, 0.0) if g in slow else (3, 0.0)

    items.sort(key=rank)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if getattr(config.option, "loadgroup", False):  # set in xdist's workers by --dist loadgroup
        _group_for_loadgroup(items)
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow (CI does)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="module")
def _forget_memos() -> Iterator[None]:
    """Each test file starts with the process-wide memos empty (equiv.engine.memo): a
    worker runs many files, and what one file's proofs kept (parsed trees, shared answers,
    terms) is never another's to hold in memory."""
    yield
    from equiv.engine.memo import forget_all

    forget_all()


@pytest.fixture
def golden(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """``golden(name, text)``: compare ``text`` with tests/golden/name, or rewrite it."""
    update = request.config.getoption("--update-golden")

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if update or not path.exists():
            path.write_text(text)
            if not update:
                pytest.fail(f"golden file {name} was missing and has been written; review it")
        assert path.read_text() == text

    return check

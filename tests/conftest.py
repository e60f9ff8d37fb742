"""Shared test configuration: derandomised Hypothesis, the slow marker, golden files."""

from __future__ import annotations

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

    # the user's cache stays reachable for what is not a result: the unpacked
    # linux-source-6.12 files (tests/test_linux_tree.py's linux612), extracted once
    user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    os.environ.setdefault("EQUIV_TEST_USER_CACHE", user)
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="equiv-test-cache-")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/* from the current output (review the diff)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow (CI does)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


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

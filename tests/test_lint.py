"""The code base stays ruff-clean and mypy-clean (both pinned in the test extra)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_clean() -> None:
    """``ruff check`` reports nothing on equiv/, tests/ and bench/."""
    exe = shutil.which("ruff")
    cmd = [exe] if exe else [sys.executable, "-m", "ruff"]
    p = subprocess.run([*cmd, "check", "equiv", "tests", "bench"], cwd=ROOT,
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_mypy_clean() -> None:
    """``mypy`` reports nothing on equiv/ (configured in pyproject.toml, which names the
    modules checked strictly).  Not skipped when mypy is missing: it is a test dependency."""
    p = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True,
                       check=False)
    assert p.returncode == 0, p.stdout + p.stderr

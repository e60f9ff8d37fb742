"""The README and docs/ stay in step with the command line.

The README is for its readers: short, with one exit-code table that has every code
:mod:`equiv.engine.verdict` defines and a usage synopsis that names every option of
``python -m equiv.proofs --help``; docs/usage.md lists every option too. Every relative link
of the README and docs/ leads to a file of the repository.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from equiv.engine import verdict

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
USAGE = ROOT / "docs" / "usage.md"
#: the README's length, "at most about 300 lines"
MAX_README_LINES = 320


def readme() -> str:
    return README.read_text()


def section(text: str, heading: str) -> str:
    """The text under ``## heading`` up to the next ``## `` heading."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def help_options() -> set[str]:
    """The long options of ``--help``'s usage line (argparse's, every option once)."""
    done = subprocess.run([sys.executable, "-m", "equiv.proofs", "--help"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    usage = done.stdout.split("\n\n", 1)[0]
    return set(re.findall(r"\[(--[a-z][a-z0-9-]*)", usage))


def test_readme_is_short() -> None:
    assert len(readme().splitlines()) <= MAX_README_LINES


def test_the_set_up_commands_come_first() -> None:
    """The first screen: what equiv proves, then the main job and the quick suite."""
    text = readme()
    assert text.index("## Set up") < text.index("## Check a patch") < text.index("## Usage")
    assert "    pip install . && python -m equiv.proofs\n" in section(text, "Set up")


def test_the_exit_code_table_has_every_code() -> None:
    codes = {*verdict.EXIT.values(), verdict.EXIT_INPUT, verdict.EXIT_CRASH,
             verdict.EXIT_INTERRUPTED, verdict.EXIT_CLOSED_OUTPUT, verdict.EXIT_TERMINATED}
    rows = re.findall(r"^\| (\d+) \|", section(readme(), "Exit codes"), re.M)
    assert sorted(map(int, rows)) == sorted(codes)


@pytest.mark.parametrize("doc", [README, USAGE], ids=lambda p: p.name)
def test_every_option_is_named(doc: Path) -> None:
    """README's synopsis (with the option it names beside it) and docs/usage.md name every
    option of the command line."""
    text = doc.read_text()
    if doc == README:
        text = section(text, "Usage")
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))
    assert help_options() - {"--help"} - named == set()


def test_every_relative_link_resolves() -> None:
    docs = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    broken = [f"{d.relative_to(ROOT)}: {target}" for d in docs
              for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", d.read_text())
              if "://" not in target and not (d.parent / target).exists()]
    assert broken == []

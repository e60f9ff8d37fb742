"""The stand-ins' checked texts (equiv/zone_device/source/standins.py) against the trees
they name.

Slow: on Debian's 6.12 (x86_64-default) and 6.1 (Debian's own configuration), each stand-in
whose model paraphrases kernel text is digested from the tree's own definitions, as clang
compiles them, and must be a digest the table records for that version.  Quick: the table
names a version for each, ``--list`` prints them, and a changed text is not one of them.
"""

from __future__ import annotations

from pathlib import Path

import debian_trees
import pytest

from equiv.config import PRESETS, from_kconfig
from equiv.zone_device.source.cdefs import stand_in_digest
from equiv.zone_device.source.cinterp import TRUSTED
from equiv.zone_device.source.common import side
from equiv.zone_device.source.files import load_tree
from equiv.zone_device.source.patch_present import interpreter_support
from equiv.zone_device.source.standins import CHECKED, NO_TEXT, V61, V612, checked_versions, digest


@pytest.mark.slow
@pytest.mark.parametrize("series", ["6.12", "6.1"])
def test_each_stand_in_is_checked_against_the_trees_text(series: str) -> None:
    root = debian_trees.tree(series)
    cfg = (PRESETS["x86_64-default"] if series == "6.12"
           else from_kconfig(str(debian_trees.config(series))))
    sd = side("base", load_tree(root), cfg)
    label = V612 if series == "6.12" else V61
    for name, c in CHECKED.items():
        got, defs = stand_in_digest(sd.tree, sd.env, sd.typed, name)
        assert [d.name for d in defs] == list(c.texts)
        assert got in c.digests, (name, got, [d.where for d in defs])
        if sd.tree.version == label:  # the version the table was read from: named for this digest
            assert label in c.digests[got], (name, c.digests[got])


def test_every_trusted_row_says_what_it_was_checked_against() -> None:
    for name in TRUSTED:
        said = checked_versions(name)
        assert said, name
        if name in CHECKED:
            assert V612 in said and V61 in said
    assert set(CHECKED).isdisjoint(NO_TEXT)
    assert set(CHECKED) | set(NO_TEXT) <= set(TRUSTED)  # looked up by the trusted row's name
    listed = " ".join(interpreter_support().split())
    assert "checked against the text of 6.1.192, 6.12.118 (set_pageblock_migratetype," in listed


def test_a_changed_text_is_not_a_checked_one() -> None:
    base = "static inline int early_section(struct mem_section *section)\n{\n\treturn " \
           "(section && (section->section_mem_map & SECTION_IS_EARLY));\n}"
    same = base.replace("\n\t", "\n    /* comment */ ")
    assert digest([base]) == digest([same])
    assert digest([base]) != digest([base.replace("(section &&", "!!(section &&")])


@pytest.mark.slow
def test_a_stand_in_is_not_applied_to_text_it_was_not_checked_against(tmp_path: Path) -> None:
    """A patch that changes folio_test_large() (a test of ours: a second condition) makes
    every cell that reaches its stand-in UNKNOWN naming the definition, never PROVED with
    the stand-in applied to the changed text."""
    import difflib
    import io

    from equiv.proofs import main

    root = debian_trees.tree("6.12")
    rel = "include/linux/page-flags.h"
    old = (root / rel).read_text()
    body = "\treturn folio_test_head(folio);\n}"
    at = old.index("folio_test_large(const struct folio *folio)\n{\n")
    cut = old.index(body, at)
    new = old[:cut] + "\treturn folio_test_head(folio) && folio->flags != 0;\n}" + \
        old[cut + len(body):]
    patch = tmp_path / "ftl.patch"
    patch.write_text("".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                  f"a/{rel}", f"b/{rel}")))
    out, err = io.StringIO(), io.StringIO()
    code = main(["--linux", str(root), "--patch", str(patch), "--orders", "2", "--types",
                 "GENERIC", "--no-times"], out=out, err=err)
    text = " ".join(out.getvalue().split())
    assert code == 2, (code, err.getvalue(), text[-2000:])
    assert "stand-in folio_test_large: this tree's text of folio_test_large" in text
    assert "is not the text it was checked against" in text

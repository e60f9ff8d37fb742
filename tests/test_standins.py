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

from equiv.config import PRESETS, Config, from_kconfig
from equiv.memmap import Scenario, concrete_inputs
from equiv.zone_device.source.cinterp import TRUSTED, Interp
from equiv.zone_device.source.common import side, side_layout
from equiv.zone_device.source.files import load_tree
from equiv.zone_device.source.patch_present import interpreter_support
from equiv.zone_device.source.standins import CHECKED, NO_TEXT, V61, V612, checked_versions, digest


def _interp(root: Path, cfg: Config) -> Interp:
    sd = side("base", load_tree(root), cfg)
    layout = side_layout(sd, cfg)
    inp = concrete_inputs(layout, start_pfn=0x1000, nr_pages=64)
    return Interp(sd.tree, sd.env, sd.typed, Scenario(layout, None, 0), inp, None)


@pytest.mark.slow
@pytest.mark.parametrize("series", ["6.12", "6.1"])
def test_each_stand_in_is_checked_against_the_trees_text(series: str) -> None:
    root = debian_trees.tree(series)
    cfg = (PRESETS["x86_64-default"] if series == "6.12"
           else from_kconfig(str(debian_trees.config(series))))
    it = _interp(root, cfg)
    version = it.tree.version
    label = V612 if series == "6.12" else V61
    for name, c in CHECKED.items():
        got, defs = it.stand_in_digest(name)
        assert [d.name for d in defs] == list(c.texts)
        assert got in c.digests, (name, got, [d.where for d in defs])
        if version == label:  # the version the table was read from: named for this digest
            assert label in c.digests[got], (name, c.digests[got])


def test_every_trusted_row_says_what_it_was_checked_against() -> None:
    for name in TRUSTED:
        said = checked_versions(name)
        assert said, name
        if name in CHECKED:
            assert V612 in said and V61 in said
    assert set(CHECKED).isdisjoint(NO_TEXT)
    listed = " ".join(interpreter_support().split())
    assert "checked against the text of 6.1.192, 6.12.118 (set_pageblock_migratetype," in listed


def test_a_changed_text_is_not_a_checked_one() -> None:
    base = "static inline int early_section(struct mem_section *section)\n{\n\treturn " \
           "(section && (section->section_mem_map & SECTION_IS_EARLY));\n}"
    same = base.replace("\n\t", "\n    /* comment */ ")
    assert digest([base]) == digest([same])
    assert digest([base]) != digest([base.replace("(section &&", "!!(section &&")])

"""The C path on any kernel tree, with the tree's own configuration (issue 45).

Slow (Debian's trees and configurations, a preparation of each configuration's headers):

* Debian's linux-source-6.1 (6.1.192, a stable tree whose ``memmap_init_zone_device()``
  calls into mm/memremap.c and mm/page_alloc.c) with Debian's own configuration, as given:
  the seeded edits of ``tests/data/zone-device-6.1`` (ours), each at orders 0, 2, 9 and 18:
  bugs REFUTED naming the field where they show, PROVED where they cannot (no tails at
  order 0), harmless rewrites PROVED;
* the project's backport series on Debian's linux-source-6.12 PROVED with Debian's own
  configuration (orders 0..18) and with arm64's defconfig merged with the arm64-4k preset
  (cross headers; orders 0, 9, 18), each report saying how its headers were made.

Quick: a tree older than 5.17 is refused with one line before anything is read.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import debian_trees
import pytest

from equiv.proofs import main

DATA = Path(__file__).parent / "data"
SIXONE = DATA / "zone-device-6.1"
SERIES = sorted((DATA / "zone-device-backport-6.12" / "series").glob("*.patch"))
ORDERS = (0, 2, 9, 18)

#: patch -> (the orders it shows at, the fields every refuted role there names one of)
EXPECT: dict[str, tuple[tuple[int, ...], frozenset[str]]] = {
    "bugs/01-tail-loop-one-past-end": ((2, 9, 18), frozenset({"flags"})),
    "bugs/02-tails-keep-their-refcount": ((2, 9, 18), frozenset({"_refcount"})),
    "bugs/03-reserved-dropped": (ORDERS, frozenset({"flags"})),
    "bugs/04-zone-device-data-not-cleared": (ORDERS, frozenset({"zone_device_data"})),
    # 6.1's struct folio: _pincount at page[1]+24 (today's is at +28); the name and offset
    # come from clang's layout of the tree (equiv/zone_device/source/tree_layout.py)
    "bugs/05-pincount-starts-at-one": ((2, 9, 18), frozenset({"folio._pincount"})),
    # wrong only past 64 nodes: REFUTED because the nid bound is the tree's NODES_SHIFT (10)
    "bugs/06-node-id-cut-to-six-bits": (ORDERS, frozenset({"flags"})),
    "harmless/01-tail-loop-while": ((), frozenset()),
    "harmless/02-stores-reordered": ((), frozenset()),
    "harmless/03-refcount-before-tail": ((), frozenset()),
}


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def linux61() -> Path:
    return debian_trees.tree("6.1")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECT))
def test_61_seeded_edits_with_debians_configuration(linux61: Path, name: str) -> None:
    shows, fields = EXPECT[name]
    code, out, err = _run(["--linux", str(linux61), "--kconfig",
                           str(debian_trees.config("6.1")), "--patch",
                           str(SIXONE / f"{name}.patch"), "--orders", ",".join(map(str, ORDERS)),
                           "--format", "json", "--no-times"])
    assert err == "" and code == (1 if shows else 0), (code, err)
    doc = json.loads(out)
    assert doc["base"]["version"].startswith("6.1.")
    assert any("the --kconfig .config as given" in n for n in doc["kbuild"]), doc["kbuild"]
    # the scenario's numbers are clang's values in the tree (Debian's CONFIG_NODES_SHIFT is
    # 10), x86's MAX_PHYSMEM_BITS (5-level paging, decided at boot) named as no constant
    numbers = " ".join(n for n in doc["kbuild"] if "numbers" in n or "kept" in n)
    assert "NODES_SHIFT=10 (include/linux/numa.h" in numbers, doc["kbuild"]
    assert "MAX_PHYSMEM_BITS (arch/x86/include/asm/sparsemem.h" in numbers, doc["kbuild"]
    for cell in doc["cells"]:
        if cell["order"] not in shows:
            assert cell["verdict"] == "PROVED", (cell["order"], cell["verdict"])
            continue
        assert cell["verdict"] == "REFUTED", cell["order"]
        refuted = [r for r in cell["roles"] if r["verdict"] == "REFUTED"]
        # a member may be named by the bytes that differ (zone_device_data[0..3])
        assert refuted and all(fields & {n.split("[")[0] for f in r["fields"] for n in f["names"]}
                               for r in refuted), (cell["order"], refuted)
        if "folio._pincount" in fields:
            assert all(f["offset"] == 24 for r in refuted for f in r["fields"]), refuted
            # the changed file is read (its prep_compound_head run), not listed as unread
            assert doc["files_outside"] == [] and "mm/page_alloc.c" in doc["files_read"]


@pytest.mark.slow
def test_612_series_with_debians_configuration() -> None:
    code, out, err = _run(["--linux", str(debian_trees.tree("6.12")), "--kconfig",
                           str(debian_trees.config("6.12")),
                           *(a for p in SERIES for a in ("--patch", str(p))),
                           "--orders", "0-18", "--format", "json", "--no-times"])
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert len(doc["cells"]) == 19 and {c["verdict"] for c in doc["cells"]} == {"PROVED"}
    assert any("as given" in n or "Debian's packaged" in n for n in doc["kbuild"])


@pytest.mark.slow
def test_612_series_on_arm64() -> None:
    """arm64's defconfig with the arm64-4k preset's symbols merged (cross headers from
    gcc-aarch64-linux-gnu): PROVED, the report naming the symbols make olddefconfig set
    otherwise and the deduplicated-vmemmap rule that follows from them."""
    code, out, err = _run(["--linux", str(debian_trees.tree("6.12")), "--config", "arm64-4k",
                           *(a for p in SERIES for a in ("--patch", str(p))),
                           "--orders", "0,9,18", "--no-times"])
    assert (code, err) == (0, ""), err
    assert "ARCH=arm64" in out and "CROSS_COMPILE=aarch64-linux-gnu-" in out
    assert "deduplicated vmemmap" in " ".join(out.split())
    assert out.endswith("verdict: PROVED\n")


def test_a_tree_older_than_5_17_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mm").mkdir()
    (tmp_path / "mm" / "mm_init.c").write_text("int a;\n")
    (tmp_path / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 15\nSUBLEVEL = 1\n")
    patch = tmp_path / "p.patch"
    patch.write_text("--- a/mm/mm_init.c\n+++ b/mm/mm_init.c\n@@ -1 +1 @@\n-int a;\n+int b;\n")
    code, out, err = _run(["--linux", str(tmp_path), "--patch", str(patch)])
    assert code == 3 and out == "" and err.count("\n") == 1
    assert "linux 5.15.1, older than 5.17" in err


@pytest.mark.parametrize(("body", "never"), [
    ("{\n\treturn false;\n}", True),
    ("((void)(altmap), (void)(pgmap), false)", True),
    ("(is_power_of_2(sizeof(struct page)) && (pgmap) && !(altmap))", False),
    ("{ return !altmap && (nr_vmemmap_pages > VMEMMAP_RESERVE_NR); }", False),
])
def test_a_vmemmap_that_can_never_be_optimised_is_told_apart(body: str, never: bool) -> None:
    """The deduplicated-vmemmap rule reads vmemmap_can_optimize() as compiled: the forms
    the kernel writes where the arch cannot deduplicate are false whatever they are given."""
    from equiv.zone_device.source.prepared import _NEVER
    from equiv.zone_device.source.standins import normalised

    assert bool(_NEVER.fullmatch(normalised(body))) is never

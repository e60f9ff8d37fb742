"""The assumptions a run makes about its inputs (equiv/memmap.py ``input_assumptions``,
equiv/zone_device/source/assumed.py), printed in every report of ``--linux`` and
``--linux ... --patch``, and the decision on an altmap past the range.

Fast: every assumption has a source (a kernel invariant with the lines that guarantee it
and those that rely on it, the configuration, or a named choice), the model's reports and
the C path's print the same line for it; its lines are found in the trees read (each
tree's line with ``--patch``) or marked as Linux 6.12.117's; a contradiction among them is
VACUOUS naming the ones in conflict.  The altmap: ``altmap lies inside the range`` is a
kernel invariant justified from ``__add_pages()`` and ``pagemap_range()`` and from every
caller of ``memremap_pages()`` that can pass an altmap; outside it, and only there, v11's
``if (!nr_pages) return;`` (``harmless/06`` on the project's 6.12 backport) writes a head
the series does not (a concrete run of both trees).  End to end on Debian's 6.12 tree:
``harmless/06`` PROVED at order 0 with the assumptions in text, JSON, SARIF and JUnit, and
``--linux`` at order 0 with them in text and JSON.

Slow: every line an assumption cites holds its text in Linux 6.12.117.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
from pathlib import Path

import pytest
import z3
from test_linux_tree import linux612  # noqa: F401  (the session fixture)
from test_patch_cli import flat, schema_errors

from equiv.config import PRESETS
from equiv.engine.bv import CBV
from equiv.engine.verdict import Verdict
from equiv.linux.ktree import KernelTree
from equiv.linux.patch import prepare
from equiv.memmap import (
    SITES_VERSION,
    SOURCE_KINDS,
    SOURCES,
    Assumption,
    MemoryType,
    Scenario,
    Site,
    Source,
    Stated,
    assumptions,
    concrete_inputs,
    input_assumptions,
    symbolic_inputs,
)
from equiv.page_model import PB_BITS, Layout, PageState
from equiv.proofs import main
from equiv.zone_device.source.assumed import locate, site_text
from equiv.zone_device.source.common import check_assumptions, run_tree, side, side_layout
from equiv.zone_device.source.drift import drift_report
from equiv.zone_device.source.fidelity import MODELS, run_fidelity, setup
from equiv.zone_device.source.files import FILES, load_tree
from equiv.zone_device.source.present import render_linux_json, render_linux_text
from equiv.zone_device.source.src_layout import compare_with_model

DATA = Path(__file__).parent / "data" / "zone-device-backport-6.12"
SERIES = sorted((DATA / "series").glob("*.patch"))
V11_EARLY_RETURN = DATA / "harmless" / "06-v11-early-return-nr-pages.patch"
CFG = PRESETS["x86_64-default"]
LAYOUT = Layout.from_config(CFG)


def _stated(ptype: MemoryType | None = None, order: int = 0, hi: int | None = None,
            cfg: str = "x86_64-default") -> list[Assumption]:
    L = Layout.from_config(PRESETS[cfg])
    return input_assumptions(Scenario(L, ptype, order, hi), symbolic_inputs(L)[0])


# ---- every assumption has a source ---------------------------------------------------------


@pytest.mark.parametrize(("ptype", "order", "hi", "cfg"), [
    (None, 0, None, "x86_64-default"), (MemoryType.FS_DAX, 3, None, "x86_64-default"),
    (None, 2, 7, "x86_64-default"), (MemoryType.PRIVATE, 1, None, "x86_64-debug-page-ref"),
    (None, 0, None, "arm64-64k")])
def test_every_assumption_has_a_source(ptype: MemoryType | None, order: int, hi: int | None,
                                       cfg: str) -> None:
    """Each term a cell asserts carries what it says and where it comes from: a kernel
    invariant names the lines that guarantee it, a fact of the configuration the line that
    reads it; the model's (name, term) pairs are the same objects' names and terms."""
    got = _stated(ptype, order, hi, cfg)
    keys = [a.key for a in got]
    assert len(keys) == len(set(keys))
    for a in got:
        src = a.stated.source
        assert src.kind in SOURCE_KINDS and src.why
        if src.kind == "kernel":
            assert src.guaranteed_by and src.relied_on, a.key
        if src.kind == "config":
            assert src.relied_on, a.key
        assert all(isinstance(s, Site) and s.line > 0 and s.text for s in
                   (*src.relied_on, *src.guaranteed_by))
    L = Layout.from_config(PRESETS[cfg])
    pairs = assumptions(Scenario(L, ptype, order, hi), symbolic_inputs(L)[0])
    assert [a.name for a in got] == [n for n, _ in pairs]
    assert all(a.term.eq(t) for a, (_, t) in zip(got, pairs, strict=True))
    assert ("order-class" in keys) is (hi is not None)
    assert ("page-ref-tracepoints" in keys) is (cfg != "x86_64-debug-page-ref")


def test_the_model_and_the_c_path_print_the_same_line() -> None:
    """The hand model's reports print ``Stated.name``; the C path's the located assumption,
    whose name is the same line: the same thing, the same source."""
    stated = [a.stated for a in _stated()]
    located = locate([("order 0 ALL", stated)], [])
    assert [s.name for s in stated] == [a.name for a in located]
    assert all(a.cells == () for a in located)
    altmap = next(a for a in located if a.key == "altmap-in-range")
    assert altmap.name.startswith("altmap lies inside the range: altmap->base_pfn == start_pfn, "
                                  "reserve + free <= nr_pages, no wrap [R] (kernel invariant): "
                                  "__add_pages() (mm/memory_hotplug.c) refuses")


def test_an_assumption_of_some_cells_names_them() -> None:
    """The bound of the search with the loops unrolled (one cell) and each type's own
    assumption are listed with their cells."""
    from equiv.zone_device.source.assumed import bounded_search

    L = LAYOUT
    sc = Scenario(L, MemoryType.GENERIC, 0)
    inp = symbolic_inputs(L)[0]
    a = [x.stated for x in input_assumptions(sc, inp)]
    b = [x.stated for x in input_assumptions(Scenario(L, MemoryType.FS_DAX, 0), inp)]
    bound = bounded_search(sc, inp, 2).stated
    located = {x.key: x for x in locate([("order 0 GENERIC", [*a, bound]),
                                         ("order 0 FS_DAX", b)], [])}
    assert ("order 0 GENERIC",) == located["bounded-search"].cells
    assert ("order 0 FS_DAX",) == located["pgmap-type=FS_DAX"].cells
    assert () == located["altmap-in-range"].cells
    assert "choice" == located["bounded-search"].kind


def test_contradicting_assumptions_are_vacuous_and_named() -> None:
    """A cell whose assumptions cannot hold together is VACUOUS, naming those in conflict."""
    got = _stated()
    assert check_assumptions(got, 10_000) is None
    nr = symbolic_inputs(LAYOUT)[0].nr_pages
    bad = Assumption(Stated("test", "nr_pages > 2^40", Source("choice", "N", "a test")),
                     z3.UGT(nr, 1 << 40))
    out = check_assumptions([*got, bad], 10_000)
    assert out is not None and Verdict.VACUOUS is out.verdict
    assert "nr_pages > 2^40" in out.reason and "range within MAX_PHYSMEM_BITS" in out.reason
    assert "nid < MAX_NUMNODES" not in out.reason


# ---- the lines in the trees read -------------------------------------------------------------


def _tree(root: Path, body: str) -> KernelTree:
    (root / "mm").mkdir(parents=True)
    (root / "mm" / "mm_init.c").write_text(body)
    return KernelTree.load(root, ["mm/mm_init.c"])


def test_sites_are_found_in_each_tree_read(tmp_path: Path) -> None:
    """A line of a file the run read is given in that tree (each tree's when they differ);
    one in a file no tree holds keeps its Linux 6.12.117 line, marked so; one in a file on
    disk under a tree's root (a full tree) is found there."""
    fn = "void memmap_init_zone_device(void)\n{\n\tstart_pfn = altmap->base_pfn + " \
         "vmem_altmap_offset(altmap);\n}\n"
    base = _tree(tmp_path / "b", fn)
    patched = _tree(tmp_path / "p", "/* moved */\n\n" + fn)
    (tmp_path / "b" / "mm" / "memremap.c").write_text("\n" * 9 + "\tgoto err_add_memory;\n")
    altmap = SOURCES["altmap-in-range"]
    here = altmap.relied_on[0]
    assert "mm/mm_init.c:3 (memmap_init_zone_device)" == site_text(here, [("tree", base)])
    assert "mm/mm_init.c (memmap_init_zone_device): line 3 in base, line 5 in patched" == \
        site_text(here, [("base", base), ("patched", patched)])
    hotplug = altmap.guaranteed_by[0]
    assert f"mm/memory_hotplug.c:405 (__add_pages) [{SITES_VERSION}]" == \
        site_text(hotplug, [("base", base), ("patched", patched)])
    goto = next(s for s in altmap.guaranteed_by if s.text == "goto err_add_memory;")
    assert "mm/memremap.c (pagemap_range): line 10 in base" == \
        site_text(goto, [("base", base), ("patched", patched)])
    gone = _tree(tmp_path / "g", "void memmap_init_zone_device(void)\n{\n}\n")
    assert site_text(here, [("tree", gone)]) == \
        f"mm/mm_init.c:1099 (memmap_init_zone_device) [{SITES_VERSION}; not in the tree read]"


# ---- the altmap ---------------------------------------------------------------------------------


def test_the_altmap_exclusion_is_justified_from_the_kernel_text() -> None:
    """An altmap reaching past the range is out of scope, justified from the kernel's text:
    __add_pages() refuses it, memmap_init_zone_device()'s only caller runs it only after
    __add_pages() succeeded, on every architecture, and the tree's one altmap (nvdimm's)
    reaches memremap_pages() through fsdax pmem and device-dax, whose callers are cited."""
    src = SOURCES["altmap-in-range"]
    assert "kernel" == src.kind and "" == src.beyond
    cited = {(s.file, s.function) for s in src.guaranteed_by}
    assert {("mm/memory_hotplug.c", "__add_pages"), ("mm/memremap.c", "pagemap_range"),
            ("drivers/nvdimm/pfn_devs.c", "__nvdimm_setup_pfn"),
            ("drivers/nvdimm/pmem.c", "pmem_attach_disk"),
            ("drivers/dax/pmem.c", "__dax_pmem_probe"),
            ("drivers/dax/device.c", "dev_dax_probe")} <= cited
    arches = {s.file.split("/")[1] for s in src.guaranteed_by if s.file.startswith("arch/")}
    assert {"x86", "arm64", "powerpc", "s390", "loongarch", "riscv"} == arches
    assert any("vmem_altmap_offset(altmap) > nr_pages" in s.text for s in src.guaranteed_by)
    assert any("PGMAP_ALTMAP_VALID" in s.text for s in src.guaranteed_by)
    assert "start_pfn = altmap->base_pfn + vmem_altmap_offset(altmap);" == src.relied_on[0].text


def _run(root: Path, altmap: tuple[int, int], nr: int) -> dict[int, int]:
    """Every struct page near the range after the tree's memmap_init_zone_device() at order
    0, on concrete inputs (the loops as written)."""
    sd = side("t", load_tree(root), CFG)
    L = side_layout(sd, CFG)
    sc = Scenario(L, MemoryType.GENERIC, 0)
    start = 0x40000
    inp = concrete_inputs(L, start_pfn=start, nr_pages=nr, pgmap_type=4, altmap=altmap)

    def initial(pfn: object) -> PageState:
        byte = (int(pfn) * 37 + 11) & 0xFF  # type: ignore[call-overload]
        return PageState(bits=CBV(int.from_bytes(bytes([byte | 1]) * L.size, "little"),
                                  8 * L.size), origin=((),) * L.size)

    _, st = run_tree(sd, sc, inp, initial, lambda b: CBV(3, PB_BITS), None, summarise=False)
    return {p: int(st.mem.read_any(CBV(p, 64)).bits) for p in range(start - 2, start + 8)}


def test_v11_early_return_differs_only_past_the_range(linux612: Path,  # noqa: F811
                                                        tmp_path: Path) -> None:
    """v11's ``if (!nr_pages) return;`` (harmless/06) and the series' ``start_pfn >=
    end_pfn`` leave the same memory for an altmap inside the range (up to its end); for one
    past it, which the assumption excludes, v11 initialises the struct page at start_pfn +
    reserve + free, outside the range, and the series writes nothing."""
    series = prepare(linux612, FILES, SERIES, tmp_path / "s").root
    v11 = prepare(linux612, FILES, [*SERIES, V11_EARLY_RETURN], tmp_path / "v").root
    for altmap in ((1, 0), (1, 1)):
        assert _run(series, altmap, 2) == _run(v11, altmap, 2)
    before, s, v = _run(linux612, (1, 3), 2), _run(series, (1, 3), 2), _run(v11, (1, 3), 2)
    assert before == s
    assert [0x40004] == [p for p in s if s[p] != v[p]]
    # and the assumption is what excludes it
    inp, _ = symbolic_inputs(LAYOUT)
    term = next(a.term for a in input_assumptions(Scenario(LAYOUT, None, 0), inp)
                if a.key == "altmap-in-range")
    values = [(inp.nr_pages, z3.BitVecVal(2, 64)), (inp.altmap_reserve, z3.BitVecVal(1, 64))]
    for free, holds in ((1, True), (3, False)):
        got = z3.simplify(z3.substitute(term, *values, (inp.altmap_free, z3.BitVecVal(free, 64))))
        assert z3.is_true(got) is holds


# ---- end to end -------------------------------------------------------------------------------


def test_every_patch_format_lists_the_assumptions(linux612: Path,  # noqa: F811
                                                  tmp_path: Path) -> None:
    """harmless/06 on the series, order 0, all types: PROVED, and the text, JSON, SARIF and
    JUnit reports of the one run list the assumptions with their sources, the altmap's
    with the lines of both trees that rely on it."""
    from junitparser import JUnitXml

    paths = {f: tmp_path / f"r.{f}" for f in ("json", "sarif", "junit")}
    out, err = io.StringIO(), io.StringIO()
    code = main(["--linux", str(linux612), *(a for p in SERIES for a in ("--patch", str(p))),
                 "--patch", str(V11_EARLY_RETURN), "--orders", "0", "--jobs", "1", "--no-times",
                 *(a for f, p in paths.items() for a in ("--report", f"{f}={p}"))],
                out=out, err=err)
    assert (0, "") == (code, err.getvalue())
    raw = out.getvalue()
    assert [] == [ln for ln in raw.splitlines() if len(ln) > 72 and " " in ln.strip()]
    text = flat(raw)
    assert raw.endswith("verdict: PROVED\n")
    keys = [a.key for a in _stated()]
    assert f"assumptions about the inputs ({len(keys)})" in text
    for a in _stated():
        assert f"- {a.stated.text} [{a.stated.source.tag}]" in text, a.key
    assert re.search(r"altmap lies inside the range.*relied on: mm/mm_init\.c "
                     r"\(memmap_init_zone_device\): line 1099 in base, line \d+ in patched", text)
    # the tree holds mm/ whole (the .c files calls are followed into): the kernel line that
    # guarantees an assumption is located in it, not marked as another version's
    assert re.search(r"mm/memory_hotplug\.c \(__add_pages\): line \d+ in base", text)
    doc = json.loads(paths["json"].read_text())
    assert [] == schema_errors(doc)
    assert keys == [a["id"] for a in doc["assumptions"]] == doc["cells"][0]["assumptions"]
    sarif = json.loads(paths["sarif"].read_text())
    assert doc["assumptions"] == sarif["runs"][0]["properties"]["assumptions"]
    suite = next(iter(JUnitXml.fromstring(paths["junit"].read_bytes())))
    props = {p.name: p.value for p in suite.properties()}
    assert {f"assumption:{k}" for k in keys} <= props.keys()


def test_linux_reports_list_the_assumptions(linux612: Path) -> None:  # noqa: F811
    """``--linux`` at order 0: the text and JSON reports list the same assumptions, located
    in the tree read."""
    tree = load_tree(linux612)
    st = setup(tree, CFG, MODELS["v6.12.y"])
    run = run_fidelity(st, [None], [0])
    assert Verdict.PROVED is run.verdict
    layout = MODELS["v6.12.y"].layout(LAYOUT)
    drift = drift_report(tree, st.env, "v6.12.y", CFG.name, layout, st.structs)
    lay = compare_with_model(layout, st.structs)
    raw = render_linux_text(drift, lay, run, times=False)
    text = flat(raw)
    keys = [a.key for a in _stated()]
    assert f"assumptions about the inputs ({len(keys)})" in text
    assert "relied on: mm/mm_init.c:1099 (memmap_init_zone_device)" in text
    assert text.index("assumptions about the inputs") < text.index("trusted helpers")
    doc = json.loads(render_linux_json(drift, lay, run, times=False))
    assert keys == [a["id"] for a in doc["proof"]["assumptions"]]
    assert keys == doc["proof"]["cells"][0]["assumptions"]
    assert [a.name for a in run.assumptions] == [a.name for a in _stated()]


# ---- the citations (slow) ---------------------------------------------------------------------


@pytest.mark.slow
def test_every_cited_line_is_in_the_kernel_text(linux612: Path) -> None:  # noqa: F811
    """Each line an assumption cites holds its text at that line in Linux 6.12.117 (the
    tarball the linux612 fixture unpacks; read whole, for the files outside the ones the
    C path reads); on another 6.12 release, at least in its file."""
    from equiv.zone_device.live.ctext import tarball

    sites = [s for src in SOURCES.values() for s in (*src.relied_on, *src.guaranteed_by)]
    want = {s.file for s in sites} | {"Makefile"}
    src = tarball(Path(os.environ["EQUIV_TEST_USER_CACHE"]) / "equiv")
    if not src.is_file():
        pytest.skip(f"no linux-source-6.12 tarball: {src}")
    texts: dict[str, list[str]] = {}
    with tarfile.open(src, "r:xz") as tar:
        for m in tar:
            name = m.name.split("/", 1)[-1]
            if name in want and m.isfile():
                f = tar.extractfile(m)
                assert f is not None
                texts[name] = f.read().decode("utf-8", "replace").splitlines()
    sub = next(ln.split("=")[1].strip() for ln in texts["Makefile"] if ln.startswith("SUBLEVEL"))
    exact = f"6.12.{sub}" == SITES_VERSION
    bad = []
    for s in sites:
        lines = texts.get(s.file)
        norm = " ".join(s.text.split())
        if lines is None:
            bad.append(f"{s.file}: not in the tarball")
        elif exact and norm not in " ".join(lines[s.line - 1].split()):
            bad.append(f"{s.file}:{s.line} is not {s.text!r}")
        elif not exact and not any(norm in " ".join(ln.split()) for ln in lines):
            bad.append(f"{s.file}: no line {s.text!r}")
    assert [] == bad

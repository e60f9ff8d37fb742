"""The HTML report (``--format html``, ``--report html=FILE``) and the text report's hexdump.

The page of a seeded bug's refuted cell is checked as a document (well-formed, nothing
loaded from elsewhere, the differing field, its bytes and its place in the compound and the
pageblocks on it) and in a real browser: Debian's headless Chromium renders it to a PNG,
with no console message and no network request from the page, and its DOM shows the
differing field.  Controls show that the browser checks can fail: a page with a script error
and an external stylesheet is caught by both.
"""

from __future__ import annotations

import doctest
import io
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from attrs import evolve
from host_lock import host_lock
from test_linux_tree import linux612  # noqa: F401  (the session fixture)

import equiv.report.html
import equiv.report.text
from equiv.config import preset
from equiv.engine.picture import Box, ObjectBytes
from equiv.page_model import Layout
from equiv.proofs import main
from equiv.report import render_runs
from equiv.report.html import diagram, hexdump
from equiv.report.text import WIDTH, hexdump_lines
from equiv.zone_device.counterexample import Counterexample, FieldDiff, InitialMemory, Observed
from equiv.zone_device.present import compound_strip, pageblock_strip, picture

#: the seeded bug of the golden refuted.txt: tails keep the type's refcount (_refcount
#: differs in tail 1, tail 2 and tail 3 of an order-2 GENERIC compound)
REFUTED = ("--types", "GENERIC", "--orders", "2", "--jobs", "1", "--no-cache", "--quiet",
           "--mutant", "mutant_tail_keeps_type_refcount")

M64 = (1 << 64) - 1

#: elements without an end tag (HTML Living Standard, "void elements")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


class Document(HTMLParser):
    """A strict reading of the page: every element closed in order, every attribute and
    style collected."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []  # (tag, name, value)
        self.styles: list[str] = []
        self.decl = ""
        self.text: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.decl = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]
        if tag not in VOID:
            self.errors.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.errors.append(f"end tag of void <{tag}>")
        elif not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "style":
            self.styles.append(data)
        self.text.append(data)


def parse(page: str) -> Document:
    doc = Document()
    doc.feed(page)
    doc.close()
    return doc


@pytest.fixture(scope="module")
def refuted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One refuted run's reports: the HTML page (--format html --output), the same as
    --report html=FILE, and the text (--report text=FILE)."""
    tmp = tmp_path_factory.mktemp("html")
    code, out, err = run(*REFUTED, "--no-times", "--format", "html", "--output",
                         str(tmp / "main.html"), "--report", f"html={tmp / 'extra.html'}",
                         "--report", f"text={tmp / 'report.txt'}")
    assert (code, out, err) == (1, "", "")
    return {name: (tmp / name).read_text() for name in ("main.html", "extra.html", "report.txt")}


class TestPage:
    def test_report_equals_main_format(self, refuted: dict[str, str]) -> None:
        """--report html=FILE writes the page --format html writes."""
        assert refuted["main.html"] == refuted["extra.html"]

    def test_well_formed(self, refuted: dict[str, str]) -> None:
        """An HTML5 document: the doctype, one html/head/body, every element closed in
        the order opened, a title and a charset."""
        doc = parse(refuted["main.html"])
        assert doc.decl.lower() == "doctype html"
        assert doc.errors == [] and doc.stack == []
        assert [doc.tags.count(t) for t in ("html", "head", "body", "title")] == [1, 1, 1, 1]
        assert ("meta", "charset", "utf-8") in doc.attrs

    def test_loads_nothing_from_elsewhere(self, refuted: dict[str, str]) -> None:
        """No script, stylesheet link, image, font or frame; every link an anchor within
        the page, and every anchor names an element that exists; no url() or @import in the
        inline CSS."""
        page = refuted["main.html"]
        doc = parse(page)
        assert not {"script", "link", "img", "iframe", "object", "embed", "video", "audio",
                    "source", "base", "form"} & set(doc.tags)
        assert not [(t, k) for t, k, _ in doc.attrs if k in ("src", "srcset", "action", "poster")
                    or k.startswith("on")]
        hrefs = [v for _, k, v in doc.attrs if k == "href"]
        ids = {v for _, k, v in doc.attrs if k == "id"}
        assert hrefs and all(h.startswith("#") and h[1:] in ids for h in hrefs)
        css = "".join(doc.styles)
        assert css and "url(" not in css and "@import" not in css
        assert not re.search(r"(src|href)\s*=\s*[\"']?\s*(https?:)?//", page)
        assert not re.search(r"url\(\s*[\"']?(https?:)?//", page)

    def test_matrix_and_counterexamples(self, refuted: dict[str, str]) -> None:
        """The matrix cell links to its first refuted obligation; every refuted obligation
        has its section with the reproduce command."""
        page = refuted["main.html"]
        assert '<a href="#r0-MEMORY_DEVICE_GENERIC-2-tail1_equal">REFUTED</a>' in page
        for ob in ("tail1_equal", "tail2_equal", "tail_equal"):
            assert f'id="r0-MEMORY_DEVICE_GENERIC-2-{ob}"' in page
            assert f"--obligation {ob} --mutant mutant_tail_keeps_type_refcount" in page

    def test_differing_field_diagram_hexdump_strips(self, refuted: dict[str, str]) -> None:
        """The differing field _refcount: a marked box of the struct page diagram (with its
        union view folio._refcount_1 stacked on it), marked bytes in the hexdump (slow 00,
        fast 01 at offset 52), the marked page of the compound strip and pageblock, and its
        provenance chains."""
        page = refuted["main.html"]
        assert re.search(r'<td colspan="4" class="box diff"[^>]*>_refcount<', page)
        assert re.search(r'<td colspan="4" class="box diff"[^>]*>folio\._refcount_1<', page)
        assert not re.search(r'class="box diff"[^>]*>_mapcount<', page)
        assert '<td class="diff">52</td>' in page and '<td class="diff">53</td>' not in page
        assert page.count("<mark>00</mark>") == 1 and page.count("<mark>01</mark>") == 1
        row = re.search(r"<tr><th>0x30</th>(.*?)</tr>", page)
        assert row is not None
        assert re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))[16:24] == \
            ["ff", "ff", "ff", "ff", "<mark>01</mark>", "00", "00", "00"]
        assert re.search(r'<li class="seg in marked"><b>tail 1</b><span>pfn 0x\d</span>'
                         r"<em>the difference is here</em></li>", page)
        assert re.search(r'<li class="seg in marked"><b>pageblock 0x0</b><span>[^<]*</span>'
                         r"<em>the differing struct page&#39;s pfn 0x1 is in this pageblock</em>",
                         page)
        assert "<li>memmap_init_compound: set_page_count(page, 0)</li>" in page
        assert "<li><code>tail2_equal</code>: compound 0, tail 2 (pfn 0x2): _refcount" in page

    def test_one_card_per_finding(self, refuted: dict[str, str]) -> None:
        """tail1_equal, tail2_equal and tail_equal of one cell are refuted by one finding (the
        same inputs, _refcount slow 0 fast 1): one card names all three, says where each
        difference shows and how to re-run each; the heading counts obligations and
        findings."""
        page = refuted["main.html"]
        assert page.count('<article class="ob ob-REFUTED"') == 1
        assert ("<code>tail1_equal</code>, <code>tail2_equal</code>, <code>tail_equal</code>"
                in page)
        assert "Not proved (3, in 1 findings)" in page
        assert page.count('<ul class="also">') == 1

    def test_escaped(self, refuted: dict[str, str]) -> None:
        """Text from the run is escaped (Jinja2 autoescaping): ``pgmap->type`` of the
        assumptions is ``pgmap-&gt;type`` in the page."""
        assert "pgmap-&gt;type" in refuted["main.html"]
        assert "pgmap->type" not in refuted["main.html"]


def test_hostile_text_is_escaped() -> None:
    """Markup in any text of a run (a seeded bug's description, a layout note, a reason, a
    counterexample) reaches the page as text; two runs are two sections."""
    from equiv.engine.results import (
        CellResult,
        ObligationResult,
        Presenter,
        RunResult,
        SubjectConfig,
    )
    from equiv.engine.verdict import Verdict

    evil = '<script>alert("x")</script>'
    ob = ObligationResult(name="o<b>", kind="page", role="r", verdict=Verdict.UNKNOWN,
                          seconds=0.0, reason=evil)
    cell = CellResult(config="c", revision="r1", ptype="left", order=1, verdict=Verdict.UNKNOWN,
                      seconds=0.0, obligations=(ob,), assumptions=(), choices=(),
                      hypothetical=False)
    one = RunResult(subject="toy", presenter=Presenter(), config=SubjectConfig(name="c<i>"),
                    revision="r1", mutant="m&m", cells=(cell,), wall_seconds=0.0, jobs=1,
                    layout_note="a & b", choices=(evil,), assumptions=(evil,),
                    title="toy", column_label="side", row_label="size",
                    column_option="--sides", row_option="--sizes", config_arg="",
                    solver="z3", kernel_base="", mutant_description=evil)
    page = render_runs("html", [one, evolve(one, revision="r2")], times=True)
    doc = parse(page)
    assert doc.errors == [] and doc.stack == [] and "script" not in doc.tags
    assert "o&lt;b&gt;" in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page and "a &amp; b" in page
    assert "c&lt;i&gt;" in page and "m&amp;m" in page
    assert 'id="r0"' in page and 'id="r1"' in page
    assert page.count('<table class="matrix">') == 2


class TestPictures:
    def test_diagram_stacks_union_views(self) -> None:
        """Boxes over the same bytes go to separate layers, larger first; uncovered bytes
        are padding; a box crossing a row is cut at the row's end."""
        obj = ObjectBytes("o", bytes(12), bytes(12), bytes([0] * 5 + [1] + [0] * 6),
                          (Box("a", 0, 8), Box("b", 0, 4), Box("c", 4, 2), Box("w", 6, 4)),
                          row=8)
        rows = diagram(obj)
        assert [r.offset for r in rows] == [0, 8]
        first = [[(p.box.name, p.column, p.width, p.differs) if p else None for p in layer]
                 for layer in rows[0].layers]
        assert first == [[("a", 0, 8, True)],
                         [("b", 0, 4, False), ("c", 4, 2, True), ("w", 6, 2, False)]]
        second = [[(p.box.name, p.width) if p else None for p in layer]
                  for layer in rows[1].layers]
        assert second == [[("w", 2), ("<padding>", 1), ("<padding>", 1)]]
        assert rows[0].bytes[5] == (5, True) and rows[1].bytes == tuple((i, False) for i in range(8, 12))

    def test_hexdump_rows(self) -> None:
        obj = ObjectBytes("o", bytes(3), b"\x01\x02\x03", b"\x01\x07\x03", (), row=2)
        rows = hexdump(obj)
        assert [r.offset for r in rows] == [0, 2]
        assert rows[0].sides == ((("00", False), ("00", False)), (("01", False), ("02", True)),
                                 (("01", False), ("07", True)))

    def test_text_hexdump_fits_and_marks(self, refuted: dict[str, str]) -> None:
        """The text report's hexdump: 72 columns, initial/slow/fast side by side, a caret
        line under the differing byte of slow and of fast."""
        text = refuted["report.txt"]
        assert max(map(len, text.splitlines())) <= WIDTH
        lines = text.splitlines()
        i = lines.index("    0x30  0000 0000 0000 0000  ffff ffff 0000 0000  ffff ffff 0100 0000")
        caret = lines[i + 1]
        assert caret.strip() == "^^                   ^^"
        assert lines[i][caret.index("^"):caret.index("^") + 2] == "00"
        assert lines[i][caret.rindex("^") - 1:caret.rindex("^") + 1] == "01"
        assert text.count("    off   initial              slow                 fast") == 3

    def test_text_hexdump_narrow(self) -> None:
        """A narrow width halves the row until it fits."""
        obj = ObjectBytes("o", bytes(8), bytes(8), bytes(7) + b"\x01", ())
        lines = hexdump_lines(obj, 40)
        assert max(map(len, lines)) <= 40
        assert lines[-3:] == [
            "0x00  0000 0000  0000 0000  0000 0000",
            "0x04  0000 0000  0000 0000  0000 0001",
            "                        ^^         ^^"]

    def test_strips_mark_outside_and_altmap(self) -> None:
        """A struct page past the range marks "from end_pfn on"; the altmap's pages are
        below the first pfn; the pageblock of a differing bitmap cell is marked."""
        inputs: dict[str, int | bool] = {
            "start_pfn": 0x200, "nr_pages": 0x400, "altmap_valid": True, "altmap_reserve": 2,
            "altmap_free": 0x3e}
        mem = InitialMemory((), 0, (), 0)
        cx = Counterexample("outside", inputs, {"c": 0x10, "t": 0}, 0x600, {}, (), mem)
        strip = compound_strip(cx, 4)
        marked = [s.label for s in strip.segments if s.marked]
        assert marked == ["from end_pfn on"]
        assert strip.segments[0].detail == "the altmap's pages, pfns 0x200..0x23f"
        assert [s.label for s in strip.segments] == [
            "below the first pfn", "compounds 0..58", "head", "tail 1", "tail 2", "tails 3..15",
            "from end_pfn on"]
        low = {**inputs, "start_pfn": 0, "altmap_valid": False}  # start_pfn - 1 wraps to 2^64 - 1
        below = Counterexample("outside", low, {"c": M64, "t": 3}, M64, {}, (), mem)
        assert [(s.label, s.detail) for s in compound_strip(below, 2).segments if s.marked] == [
            ("below the first pfn", "pfn 0xffffffffffffffff (start_pfn - 1)")]
        assert [(s.label, s.detail) for s in pageblock_strip(below, 9).segments if s.marked] == [
            ("pageblock -0x1", "below the range")]
        pb = pageblock_strip(Counterexample("pageblock", inputs, {"b": 2}, None, {}, (), mem), 9)
        assert [(s.label, s.marked, s.kind) for s in pb.segments] == [
            ("pageblock 0x1", False, "out"), ("pageblock 0x2", True, "in")]

    def test_pageblock_cell_picture(self) -> None:
        """A differing pageblock bitmap cell: its one byte (initial, slow, fast) and the
        pageblock strip, no compound strip; its text hexdump marks the byte."""
        inputs: dict[str, int | bool] = {
            "start_pfn": 0, "nr_pages": 0x800, "altmap_valid": False, "altmap_reserve": 0,
            "altmap_free": 0}
        diff = FieldDiff(0, 1, ("pageblock migratetype bits",), 0x1, 0x4, (("a",),), (("b",),))
        cx = Counterexample("pageblock", inputs, {"b": 3}, None, {}, (diff,),
                            InitialMemory((), 0, (), 0), observed=Observed(b"\x00", b"\x01",
                                                                           b"\x04"))
        pic = picture(cx, Layout.from_config(preset("x86_64-default")), 2)
        assert pic.bytes is not None and pic.bytes.diff_offsets == {0}
        assert [s.title.split(":")[0] for s in pic.strips] == ["pageblocks"]
        assert [(s.label, s.marked) for s in pic.strips[0].segments] == [
            ("pageblock 0x0", False), ("1 pageblock", False), ("pageblock 0x2", False),
            ("pageblock 0x3", True)]
        assert [c.slow_chains for c in pic.changes] == [(("a",),)]
        assert hexdump_lines(pic.bytes)[-2:] == ["0x00  00       01       04",
                                                  "               ^^       ^^"]

    def test_observed_bytes_survive_the_cache_not_json(self) -> None:
        """The observed bytes go into the result cache (a warm run draws the same pictures)
        but not into the JSON report (its schema is unchanged)."""
        inputs: dict[str, int | bool] = {"start_pfn": 0, "nr_pages": 4}
        cx = Counterexample("tail1", inputs, {"c": 0, "t": 1}, 1, {}, (),
                            InitialMemory((), 0, (), 0),
                            observed=Observed(bytes(64), bytes(63) + b"\x01", bytes(64)))
        back = Counterexample.from_cache(json.loads(json.dumps(cx.to_cache())))
        assert back == cx
        assert "observed" not in cx.to_json()
        assert Counterexample.from_json(cx.to_json()).observed is None

    @pytest.mark.parametrize("module", [equiv.report.html, equiv.report.text])
    def test_doctests(self, module: object) -> None:
        res = doctest.testmod(module)  # type: ignore[arg-type]
        assert res.failed == 0 and res.attempted > 0


@pytest.mark.parametrize(("argv", "msg"), [
    (["--linux", "/nonexistent", "--format", "sarif"],
     "--linux reports in text, json, html, markdown"),
    (["--live-from", "/tmp", "--format", "html"], "reports in text, json, junit, sarif"),
    (["--btf", "/nonexistent", "--format", "html"], "--btf reports in text or json"),
    (["--self-test", "--format", "html"], "--self-test reports in text only"),
    (["--copy-primitive", "--format", "html"], "--copy-primitive reports in text only"),
    (["--explain", "_refcount", "--types", "GENERIC", "--orders", "2", "--format", "html"],
     "--explain reports in text only"),
])
def test_modes_without_html_refuse_it(argv: list[str], msg: str) -> None:
    """The modes that have their own reports and no HTML (or, --linux, no SARIF) say so in
    one line, exit 3."""
    code, out, err = run(*argv)
    assert (code, out) == (3, "")
    assert err.count("\n") == 1 and msg in err


# ---- a real browser -----------------------------------------------------------------------

#: headless Chromium, one page, no background traffic of the browser's own (so that every
#: request in the net log is the page's), console messages on stderr
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--no-default-browser-check", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-default-apps",
                  "--disable-extensions", "--enable-logging=stderr", "--v=0",
                  "--window-size=1280,2400")


def _chromium() -> str:
    """Debian's chromium, installed (as root) when missing; never a silent skip when it
    can be installed."""
    from equiv.zone_device.live import host

    tool = host.Tool("chromium", "chromium")
    with host_lock():  # dpkg's lock: tests/host_lock.py
        host.install_missing([tool])
    exe = shutil.which("chromium")
    if exe is None:
        if os.geteuid() != 0:
            pytest.skip("chromium is not installed and this is not root: apt-get install -y "
                        "chromium")
        pytest.fail("chromium is missing and apt-get install -y chromium did not install it")
    return exe


def _render(exe: str, page: Path, png: Path) -> tuple[str, list[str], set[str]]:
    """Load ``page`` in headless Chromium: its DOM after load, the console messages, and
    the URLs the page requested over the network (from the browser's net log)."""
    netlog = png.with_suffix(".netlog.json")
    p = subprocess.run([exe, *CHROMIUM_FLAGS, f"--screenshot={png}", f"--log-net-log={netlog}",
                        "--dump-dom", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=120, check=False, cwd=png.parent)
    assert p.returncode == 0, p.stderr[-2000:]
    console = [ln for ln in p.stderr.splitlines() if ":CONSOLE" in ln]
    log = json.loads(netlog.read_text())
    requested = {e["params"]["url"] for e in log["events"]
                 if "url" in e.get("params", {})
                 and "file://" in str(e["params"].get("network_isolation_key", ""))}
    return p.stdout, console, requested


@pytest.mark.slow
def test_chromium_renders_the_refuted_page(refuted: dict[str, str], tmp_path: Path) -> None:
    """The HTML report of a seeded bug, opened in headless Chromium: rendered to a PNG,
    no console message, no request leaves the page, and the DOM shows the differing field,
    its marked bytes and the marked tail.  The control page (a script error, an external
    stylesheet) shows that both checks see what they look for."""
    exe = _chromium()
    html = tmp_path / "report.html"
    html.write_text(refuted["main.html"])
    dom, console, requested = _render(exe, html, tmp_path / "report.png")
    png = (tmp_path / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert int.from_bytes(png[16:20], "big") == 1280  # IHDR width: the window rendered
    assert console == []
    assert requested == set()
    assert re.search(r'class="box diff"[^>]*>_refcount<', dom)
    assert "<mark>01</mark>" in dom and "the difference is here" in dom
    assert "memmap_init_compound: set_page_count(page, 0)" in dom

    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>c'
                       '</title><link rel="stylesheet" href="https://cdn.invalid/x.css"></head>'
                       '<body><p>c</p><script>console.error("boom")</script></body></html>')
    _, console, requested = _render(exe, control, tmp_path / "control.png")
    assert any('"boom"' in ln for ln in console)
    assert requested == {"https://cdn.invalid/x.css"}


@pytest.mark.slow
def test_linux_html_and_markdown(linux612: Path) -> None:  # noqa: F811
    """--linux --format html: the model's page, the hand model and the tree as its sides,
    the drift as known differences, the cell's re-run command; markdown likewise."""
    code, page, _ = run("--linux", str(linux612), "--compare", "v6.12", "--orders", "0",
                        "--types", "GENERIC", "--no-times", "--quiet", "--format", "html")
    assert code == 1
    for want in ("<th>field</th><th>model</th><th>tree</th>", 'class="side">tree</th>',
                 "the bytes in which the hand model and the tree differ",
                 "the tree drifts from the modelled v6.12",
                 f"python -m equiv.proofs --linux {linux612} --compare v6.12 --types GENERIC "
                 "--orders 0"):
        assert want in page, want
    code, md, _ = run("--linux", str(linux612), "--compare", "v6.12", "--orders", "0",
                      "--types", "GENERIC", "--no-times", "--quiet", "--format", "markdown")
    assert code == 1 and md.startswith("## equiv REFUTED") and "```text" in md


"""Reports of a live check (:class:`equiv.zone_device.live.run.LiveRun`): text, JSON, JUnit XML, SARIF.

Every format opens with the same header: the kernel (``uname -r``, the Debian package and
version, the SHA-256 of the ``.config`` the model read), how it ran (TCG or KVM, or a
recorded run), what made the prediction and what it assumed, and the namespaces.  A
difference is reported like any counterexample: pfn, compound and tail index, the field's
kernel names with its offset and size, the live and the model's value (and what each means
as a pointer), and the model's provenance of the predicted value, each step traced to the
6.12.117 text it mirrors (:data:`KERNEL_TEXT`).

* text (:func:`render_live_text`): 72 columns, a table of the namespaces, then each
  namespace's inputs, roles, differences and what was not compared;
* JSON (:func:`live_json`): the same, every number exact;
* JUnit (:func:`render_live_junit`): one test case per namespace (a difference is a
  ``<failure>``, a namespace not compared an ``<error>``);
* SARIF 2.1.0 (:func:`live_sarif`): one result per differing field or pageblock, located at
  the kernel line of the last step that wrote the predicted value.
"""

from __future__ import annotations

import json
import textwrap
import xml.dom.minidom
from typing import Any

from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

from equiv.engine.cache import TOOL_VERSION
from equiv.report.text import WIDTH
from equiv.zone_device.live.compare import ASSUMED, PREDICTION, LiveComparison, LiveDiff, PageblockDiff
from equiv.zone_device.live.ctext import PREDICTION as CTEXT_PREDICTION
from equiv.zone_device.live.ctext import CTextResult
from equiv.zone_device.live.run import LiveRun, NamespaceResult, PairResult, kernel_fields
from equiv.zone_device.source.patch_present import parse_step

#: The formats of a live report.
LIVE_FORMATS = ("text", "json", "junit", "sarif")

SARIF_SCHEMA_URI = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                    "sarif-schema-2.1.0.json")

#: Where each step the model names is in linux-source-6.12 (6.12.117): the function a
#: provenance step's prefix names, and its file and line (checked against the tree by
#: tests/test_live_present.py when the tree is there).
KERNEL_TEXT: dict[str, tuple[str, int]] = {
    "__init_single_page": ("mm/mm_init.c", 566),
    "pageblock_migratetype_init_range": ("mm/mm_init.c", 655),
    "__init_zone_device_page": ("mm/mm_init.c", 993),
    "memmap_init_compound": ("mm/mm_init.c", 1050),
    "memmap_init_zone_device": ("mm/mm_init.c", 1077),
    "folio_set_order": ("mm/internal.h", 672),
    "prep_compound_head": ("mm/internal.h", 709),
    "prep_compound_tail": ("mm/internal.h", 722),
    "set_page_zone": ("include/linux/mm.h", 2020),
    "set_page_node": ("include/linux/mm.h", 2026),
    "set_page_links": ("include/linux/mm.h", 2032),
}


def step_source(step: str) -> tuple[str, int] | None:
    """The kernel file and line of a provenance step: the C interpreter's steps name them
    (``"mm/mm_init.c:1003: ..."``); a hand model's step names its function
    (``"prep_compound_tail (6.12): ..."``), looked up in :data:`KERNEL_TEXT`; None for a
    step neither gives."""
    at = parse_step(step)
    if at is not None:
        return at[0], at[1]
    name = step.split(":", 1)[0].split(" (", 1)[0].strip()
    return KERNEL_TEXT.get(name)


def _traced(step: str) -> str:
    src = step_source(step)
    if src is None or parse_step(step) is not None:
        return step
    return f"{step} [{src[0]}:{src[1]}]"


def _verdict(r: NamespaceResult) -> str:
    c = r.comparison
    if c is None:
        return "NOT COMPARED"
    if r.differs:
        return "DIFFERENT"
    return "SAME" if c.clean else "NOTHING COMPARED"


def _ctext_line(t: CTextResult | None) -> str:
    if t is None or t.reason is not None:
        return f"C text: not run: {'not asked for' if t is None else t.reason}"
    verdict = f"{len(t.diffs):,} field difference(s)" if t.diffs else "the same"
    return (f"C text: pfns {t.first_pfn:#x}..{t.end_pfn - 1:#x}, {t.compared:,} struct "
            f"pages compared: {verdict}")


def _wrap(text: str, indent: str = "  ", more: str = "    ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=more,
                         break_on_hyphens=False, break_long_words=False) or [indent]


def _names(d: LiveDiff) -> str:
    return " / ".join(d.names)


def _value(v: int, meaning: str) -> str:
    return f"{v:#x}" + (f" ({meaning})" if meaning else "")


def _inputs_text(c: LiveComparison) -> str:
    i = c.inputs
    alt = (f"altmap reserve {i['altmap_reserve']} free {i['altmap_free']}"
           if i["altmap_valid"] else "no altmap")
    return (f"inputs: start_pfn {int(i['start_pfn']):#x}, nr_pages {i['nr_pages']}, nid "
            f"{i['nid']}, pgmap {int(i['pgmap']):#x} type {i['pgmap_type']}, order "
            f"{i['order']}, {alt}; first pfn written {c.first_pfn:#x}")


def diff_lines(d: LiveDiff) -> list[str]:
    """One field difference: where, the values, the provenance (each step with its kernel
    file and line)."""
    out = _wrap(f"pfn {d.pfn:#x} (compound {d.compound}, tail {d.tail}): {_names(d)} "
                f"(offset {d.offset}, {d.size} bytes)", "  - ")
    out += _wrap(f"live {_value(d.live, d.live_meaning)}", "      ", "        ")
    out += _wrap(f"model {_value(d.model, d.model_meaning)}", "      ", "        ")
    for ch in d.provenance:
        out += _wrap("written by: " + " -> ".join(_traced(s) for s in ch), "      ", "        ")
    return out


def _pb_lines(d: PageblockDiff) -> list[str]:
    src = KERNEL_TEXT["pageblock_migratetype_init_range"]
    return _wrap(f"pageblock of pfn {d.pfn:#x}: migratetype live {d.live}, model {d.model} "
                 f"(set by pageblock_migratetype_init_range [{src[0]}:{src[1]}])", "  - ")


def header_lines(run: LiveRun) -> list[str]:
    """The header every format carries, as text lines (``key  value``, 72 columns; the
    config's hash is cut to 16 hex digits here, whole in JSON, JUnit and SARIF)."""
    k = run.kernel

    def row(key: str, value: str) -> list[str]:
        return _wrap(f"{key:11} {value}", "", " " * 12)

    built = [] if k.kind == "debian" else [
        *row("built", f"{k.origin} (--live-kernel {k.kind}; build key {k.build_key})"),
        *(row("patches", ", ".join(k.patches)) if k.patches else [])]
    package = f"{k.package} {k.package_version}" if k.kind == "debian" else \
        f"built from {k.package} {k.package_version}"
    return ["equiv --live: the struct pages of a running kernel against the model", "",
            *row("kernel", k.release),
            *row("package", package),
            *built,
            *row("config", f"sha256 {k.config_sha256[:16]} (the .config the model read)"),
            *row("ran", f"{run.accelerator}, in {run.directory}"),
            *row("prediction", PREDICTION),
            *row("second", CTEXT_PREDICTION),
            *row("assumed", "; ".join(ASSUMED)),
            *row("namespaces", ", ".join(r.name for r in run.namespaces))]


def render_live_text(run: LiveRun, *, times: bool = True) -> str:
    """The text report (72 columns); with a patched kernel, its own header and namespaces
    after the unpatched kernel's, then the two kernels' dumps compared with each other."""
    lines = [*header_lines(run), ""]
    lines += _namespace_lines(run)
    if run.patched is not None:
        lines += ["", "The patched kernel", "", *header_lines(run.patched)[2:], ""]
        lines += _namespace_lines(run.patched)
        lines += ["", *_pair_lines(run)]
    lines.append("")
    lines += _wrap(summary_line(run), "")
    for label, r in (("", run), ("patched kernel, ", run.patched)):
        for n in r.notes if r is not None else ():
            lines += _wrap(f"note: {label}{n}", "")
    if times:
        lines += _wrap("time: " + ", ".join(f"{n} {s:.1f} s" for n, s in run.timings), "")
    return "\n".join(lines) + "\n"


def _pair_lines(run: LiveRun) -> list[str]:
    """The unpatched and patched kernels' dumps compared with each other: a table, then
    each difference (pfn, word offset, both values and what they mean)."""
    lines = ["The two kernels' struct pages compared with each other (unpatched, patched)", "",
             f"{'namespace':15} {'verdict':10} {'struct pages':>12} {'by meaning':>10} "
             f"{'differ':>7}"]
    for p in run.pairs:
        c = p.comparison
        if c is None:
            lines.append(f"{p.name:15} {'NOT COMPARED':10}")
            continue
        lines.append(f"{p.name:15} {'SAME' if c.same else 'DIFFERENT':10} {c.pages:>12,} "
                     f"{c.by_meaning:>10,} {c.differing_pages:>7,}")
    for p in run.pairs:
        c = p.comparison
        if c is None:
            lines += _wrap(f"{p.name}: not compared: {p.error}", "")
            continue
        if c.same:
            continue
        lines += _wrap(f"{p.name}: DIFFERENT", "")
        lines += [x for d in c.layout_diffs for x in _wrap(f"layout: {d}")]
        lines += [x for d in c.pgmap_diffs for x in _wrap(f"pgmap: {d}")]
        lines += [x for pfn in c.status_diffs[:20]
                  for x in _wrap(f"pfn {pfn:#x} read by one kernel only")]
        lines += [x for d in c.word_diffs[:20] for x in _wrap(d.describe("unpatched", "patched"))]
        if len(c.word_diffs) > 20:
            lines.append(f"  ... {len(c.word_diffs) - 20:,} more (all in --format json)")
        lines += [x for d in c.pageblock_diffs[:20] for x in _wrap(f"pageblock {d}")]
    return lines


def _namespace_lines(run: LiveRun) -> list[str]:
    """One kernel's namespaces: the table, then each namespace's inputs and differences."""
    lines: list[str] = []
    lines.append(f"{'namespace':15} {'verdict':13} {'struct pages':>12} {'pageblocks':>10} "
                 f"{'differ':>7}")
    for r in run.namespaces:
        c = r.comparison
        pages = "-" if c is None else f"{c.pages_compared:,}"
        blocks = "-" if c is None else f"{c.pageblocks_compared:,}"
        differ = "-" if c is None else f"{len(c.diffs) + len(c.pageblock_diffs):,}"
        lines.append(f"{r.name:15} {_verdict(r):13} {pages:>12} {blocks:>10} {differ:>7}")
    for r in run.namespaces:
        lines += ["", f"{r.name}: {_verdict(r)}"]
        lines += _wrap(f"dump: {r.dump}")
        c = r.comparison
        if c is None:
            lines += _wrap(f"not compared: {r.error}")
            continue
        lines += _wrap(_inputs_text(c))
        lines += _wrap("compared: " + ", ".join(
            f"{x.role} {x.compared:,}" + (f" ({x.differing:,} differ)" if x.differing else "")
            for x in c.roles) + f"; pageblocks {c.pageblocks_compared:,}")
        lines += _wrap(_ctext_line(r.ctext))
        if r.ctext is not None and r.ctext.diffs:
            for d in r.ctext.diffs[:20]:
                lines += diff_lines(d)
        if c.diffs:
            lines.append(f"  {len(c.diffs):,} field difference(s) from the model:")
            for d in c.diffs[:20]:
                lines += diff_lines(d)
            if len(c.diffs) > 20:
                lines.append(f"  ... {len(c.diffs) - 20:,} more (all in --format json)")
        for pd in c.pageblock_diffs[:20]:
            lines += _pb_lines(pd)
        for o in c.outside:
            lines += _wrap(f"not compared: {o.what} ({o.count:,}): {o.reason}")
    return lines


def summary_line(run: LiveRun) -> str:
    """One line: how many namespaces were the same, how much was compared (on both kernels
    with a patched one, and how many kernel pairs were the same), the exit code."""
    rows = [*run.namespaces, *(run.patched.namespaces if run.patched else ())]
    verdicts = [_verdict(r) for r in rows]
    pages = sum(r.comparison.pages_compared for r in rows if r.comparison)
    blocks = sum(r.comparison.pageblocks_compared for r in rows if r.comparison)
    counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
    kernels = " on 2 kernels" if run.patched else ""
    pairs = ""
    if run.patched is not None:
        same = sum(p.same for p in run.pairs)
        pairs = f"; kernel pairs: {same} of {len(run.namespaces)} SAME"
    return (f"{len(run.namespaces)} namespace(s){kernels}: {counts}; {pages:,} struct pages "
            f"and {blocks:,} pageblock cells compared{pairs} "
            f"(exit {run.exit_code})")


# ---- JSON -----------------------------------------------------------------------------


def _diff_json(d: LiveDiff) -> dict[str, Any]:
    return {"pfn": d.pfn, "compound": d.compound, "tail": d.tail, "offset": d.offset,
            "size": d.size, "names": list(d.names), "live": d.live, "model": d.model,
            "live_meaning": d.live_meaning, "model_meaning": d.model_meaning,
            "provenance": [[{"step": s, "source": (None if (src := step_source(s)) is None
                                                   else f"{src[0]}:{src[1]}")} for s in ch]
                           for ch in d.provenance]}


def _ns_json(r: NamespaceResult, times: bool) -> dict[str, Any]:
    c = r.comparison
    out: dict[str, Any] = {"name": r.name, "verdict": _verdict(r), "dump": r.dump}
    if times:
        out["seconds"] = round(r.seconds, 3)
    if c is None:
        out["error"] = r.error
        return out
    out.update({
        "inputs": dict(c.inputs), "first_pfn": c.first_pfn, "end_pfn": c.end_pfn,
        "roles": [{"role": x.role, "compared": x.compared, "differing": x.differing}
                  for x in c.roles],
        "struct_pages_compared": c.pages_compared, "pageblocks_compared": c.pageblocks_compared,
        "differences": [_diff_json(d) for d in c.diffs],
        "pageblock_differences": [{"pfn": d.pfn, "live": d.live, "model": d.model}
                                  for d in c.pageblock_diffs],
        "not_compared": [{"what": o.what, "count": o.count, "reason": o.reason}
                         for o in c.outside]})
    t = r.ctext
    out["c_text"] = ({"run": False, "reason": "not asked for" if t is None else t.reason}
                     if t is None or t.reason is not None else
                     {"run": True, "tree": t.tree, "first_pfn": t.first_pfn,
                      "end_pfn": t.end_pfn, "struct_pages_compared": t.compared,
                      "differences": [_diff_json(d) for d in t.diffs]})
    return out


def _pair_json(p: PairResult) -> dict[str, Any]:
    c = p.comparison
    if c is None:
        return {"name": p.name, "verdict": "NOT COMPARED", "error": p.error}
    return {"name": p.name, "verdict": "SAME" if c.same else "DIFFERENT",
            "struct_pages_compared": c.pages, "byte_equal": c.raw_equal,
            "equal_by_pointer_meaning": c.by_meaning, "differing_pages": c.differing_pages,
            "pageblocks_compared": c.pageblocks, "layout_differences": list(c.layout_diffs),
            "pgmap_differences": list(c.pgmap_diffs),
            "read_by_one_kernel_only": list(c.status_diffs),
            "differences": [{"pfn": d.pfn, "offset": d.offset, "unpatched": d.a,
                             "patched": d.b, "unpatched_meaning": d.a_meaning,
                             "patched_meaning": d.b_meaning} for d in c.word_diffs],
            "pageblock_differences": list(c.pageblock_diffs),
            "pointers_matched_by_meaning": dict(c.meanings)}


def live_json(run: LiveRun, *, times: bool = True) -> dict[str, Any]:
    """The JSON document (a dict); with a patched kernel, ``patched`` holds its kernel and
    namespaces (same form) and ``kernel_pairs`` the two kernels' dumps compared."""
    doc: dict[str, Any] = {
        "tool": "equiv", "mode": "live",
        "kernel": kernel_fields(run.kernel, "live_kernel"),
        "accelerator": run.accelerator, "directory": run.directory,
        "prediction": PREDICTION, "second_prediction": CTEXT_PREDICTION,
        "assumed": list(ASSUMED),
        "namespaces": [_ns_json(r, times) for r in run.namespaces],
        "summary": summary_line(run), "exit_code": run.exit_code, "notes": list(run.notes)}
    if run.patched is not None:
        doc["patched"] = {"kernel": kernel_fields(run.patched.kernel, "live_kernel"),
                          "directory": run.patched.directory,
                          "notes": list(run.patched.notes),
                          "namespaces": [_ns_json(r, times) for r in run.patched.namespaces]}
        doc["kernel_pairs"] = [_pair_json(p) for p in run.pairs]
    if times:
        doc["tool_version"] = TOOL_VERSION
        doc["timings"] = {n: round(s, 3) for n, s in run.timings}
    return doc


def render_live_json(run: LiveRun, *, times: bool = True) -> str:
    """:func:`live_json` as JSON text."""
    return json.dumps(live_json(run, times=times), indent=2) + "\n"


# ---- JUnit ----------------------------------------------------------------------------


def _case_text(r: NamespaceResult) -> str:
    c = r.comparison
    assert c is not None
    lines = [x for d in c.diffs for x in diff_lines(d)]
    if r.ctext is not None and r.ctext.diffs:
        lines += ["C text:", *(x for d in r.ctext.diffs for x in diff_lines(d))]
    lines += [x for d in c.pageblock_diffs for x in _pb_lines(d)]
    return "\n".join(lines) + "\n"


def _junit_cases(run: LiveRun, prefix: str, times: bool) -> tuple[list[TestCase], int, int]:
    """One kernel's test cases (named ``prefix + namespace``), failures, errors."""
    cases: list[TestCase] = []
    failures = errors = 0
    cls = "equiv.zone_device.live." + run.kernel.release.replace(".", "_")
    for r in run.namespaces:
        case = TestCase(prefix + r.name, cls, round(r.seconds, 4) if times else None)
        v = _verdict(r)
        if v == "DIFFERENT":
            failures += 1
            c = r.comparison
            assert c is not None
            nct = 0 if r.ctext is None else len(r.ctext.diffs)
            res: Failure | Error = Failure(
                f"{r.name}: {len(c.diffs)} field and {len(c.pageblock_diffs)} pageblock "
                f"difference(s) from the model, {nct} from the C text", "DIFFERENT")
            res.text = _case_text(r)
            case.result = [res]
        elif v != "SAME":
            errors += 1
            case.result = [Error(f"{r.name}: {r.error or 'nothing compared'}", v)]
        cases.append(case)
    return cases, failures, errors


def render_live_junit(run: LiveRun, *, times: bool = True) -> str:
    """JUnit XML: one ``<testcase>`` per namespace (classname ``equiv.zone_device.live.<release>``);
    with a patched kernel also one per namespace of it (``patched/<name>``) and one per
    kernel pair (``pair/<name>``, a difference is a failure)."""
    root = JUnitXml("equiv")
    suite = TestSuite(f"equiv live {run.kernel.release}")
    k = run.kernel
    for key, val in (("kernel", k.release), ("package", f"{k.package} {k.package_version}"),
                     ("config_sha256", k.config_sha256), ("accelerator", run.accelerator),
                     ("live_kernel", k.kind),
                     *((("origin", k.origin), ("build_key", k.build_key)) if k.origin else ()),
                     *((("tool_version", TOOL_VERSION),) if times else ())):
        suite.add_property(key, val)
    for i, n in enumerate((*run.notes, *(run.patched.notes if run.patched else ())), 1):
        suite.add_property(f"note_{i}", n)
    cases, failures, errors = _junit_cases(run, "", times)
    if run.patched is not None:
        more, f2, e2 = _junit_cases(run.patched, "patched/", times)
        cases += more
        failures, errors = failures + f2, errors + e2
        for p in run.pairs:
            case = TestCase(f"pair/{p.name}", "equiv.zone_device.live.pairs", None)
            if p.comparison is None:
                errors += 1
                case.result = [Error(f"{p.name}: {p.error}", "NOT COMPARED")]
            elif not p.same:
                failures += 1
                res = Failure(f"{p.name}: the unpatched and patched kernels' struct pages "
                              "differ", "DIFFERENT")
                res.text = "\n".join(d.describe("unpatched", "patched")
                                     for d in p.comparison.word_diffs) + "\n"
                case.result = [res]
            cases.append(case)
    for case in cases:
        suite.append(case)
    suite.tests, suite.failures, suite.errors, suite.skipped = (
        len(cases), failures, errors, 0)
    root.tests, root.failures, root.errors = len(cases), failures, errors
    if times:
        suite.time = root.time = round(sum(s for _, s in run.timings), 3)
    root.append(suite)
    return xml.dom.minidom.parseString(root.tostring()).toprettyxml(
        indent="  ", encoding="UTF-8").decode()


# ---- SARIF ----------------------------------------------------------------------------

RULES = (
    ("live-field", "struct page field differs from the model",
     "A byte of a struct page the booted kernel wrote (read back by the dump module) is not "
     "what the model of memmap_init_zone_device() predicts for the same inputs."),
    ("live-pageblock", "pageblock migratetype differs from the model",
     "The migratetype bits of a pageblock the booted kernel set are not the model's."),
    ("live-not-compared", "namespace not compared",
     "A namespace's dump could not be compared with the model (the reason is in the "
     "message); not everything was checked."),
    ("live-kernel-pair", "the patched kernel's struct pages differ from the unpatched one's",
     "With --patch: a word of a struct page (or a pageblock, the layout or the pgmap) the "
     "patched kernel wrote is not the unpatched kernel's, in bytes or in pointer meaning."),
)


def _location(step: str | None, text: str) -> dict[str, Any]:
    src = step_source(step) if step else None
    file, line = src if src is not None else KERNEL_TEXT["memmap_init_zone_device"]
    return {"physicalLocation": {"artifactLocation": {"uri": file, "uriBaseId": "KERNEL"},
                                 "region": {"startLine": line}},
            "message": {"text": text}}


def _sarif_results(run: LiveRun, prefix: str) -> list[dict[str, Any]]:
    """One kernel's SARIF results (namespace names prefixed with ``prefix``)."""
    index = {rid: i for i, (rid, _, _) in enumerate(RULES)}
    results: list[dict[str, Any]] = []
    for r in run.namespaces:
        c = r.comparison
        if c is None or not (c.diffs or c.pageblock_diffs or c.clean):
            results.append({"ruleId": "live-not-compared", "ruleIndex": index["live-not-compared"],
                            "level": "error",
                            "message": {"text": f"{prefix}{r.name}: {r.error or 'nothing compared'}"},
                            "locations": [_location(None, "memmap_init_zone_device()")]})
            continue
        ct = () if r.ctext is None else r.ctext.diffs
        for who, d in [*(("model", x) for x in c.diffs), *(("C text", x) for x in ct)]:
            steps = [s for ch in d.provenance for s in ch]
            last = steps[-1] if steps else None
            msg = (f"{prefix}{r.name} ({who}): pfn {d.pfn:#x} (compound {d.compound}, tail {d.tail}) "
                   f"{_names(d)} @{d.offset}: live {_value(d.live, d.live_meaning)}, model "
                   f"{_value(d.model, d.model_meaning)}")
            results.append({
                "ruleId": "live-field", "ruleIndex": index["live-field"], "level": "error",
                "message": {"text": msg},
                "locations": [_location(last, f"the model's last step: {last}")],
                "relatedLocations": [dict(_location(s, f"earlier step: {s}"), id=i + 1)
                                     for i, s in enumerate(steps[:-1])]})
        for pd in c.pageblock_diffs:
            results.append({
                "ruleId": "live-pageblock", "ruleIndex": index["live-pageblock"],
                "level": "error",
                "message": {"text": f"{prefix}{r.name}: pageblock of pfn {pd.pfn:#x}: migratetype "
                                    f"live {pd.live}, model {pd.model}"},
                "locations": [_location("pageblock_migratetype_init_range",
                                        "pageblock_migratetype_init_range()")]})
    return results


def _pair_results(run: LiveRun) -> list[dict[str, Any]]:
    """One SARIF result per kernel pair not compared or different (the first words)."""
    index = {rid: i for i, (rid, _, _) in enumerate(RULES)}
    out: list[dict[str, Any]] = []
    for p in run.pairs:
        c = p.comparison
        if c is not None and c.same:
            continue
        text = (f"pair/{p.name}: not compared: {p.error}" if c is None else
                f"pair/{p.name}: " + "; ".join(
                    [*c.layout_diffs, *c.pgmap_diffs,
                     *(d.describe("unpatched", "patched") for d in c.word_diffs[:10]),
                     *c.pageblock_diffs[:10]]))
        out.append({"ruleId": "live-kernel-pair", "ruleIndex": index["live-kernel-pair"],
                    "level": "error", "message": {"text": text},
                    "locations": [_location(None, "memmap_init_zone_device()")]})
    return out


def live_sarif(run: LiveRun, *, times: bool = True) -> dict[str, Any]:
    """The SARIF 2.1.0 log (a dict): one result per differing field or pageblock, and one
    per namespace not compared; locations in the kernel tree (``uriBaseId`` ``KERNEL``: the
    root of linux-source-6.12 6.12.117)."""
    results = _sarif_results(run, "")
    if run.patched is not None:
        results += _sarif_results(run.patched, "patched/") + _pair_results(run)
    k = run.kernel
    props: dict[str, Any] = {"kernel": k.release, "package": f"{k.package} {k.package_version}",
                             "config_sha256": k.config_sha256, "accelerator": run.accelerator,
                             "live_kernel": k.kind, "origin": k.origin,
                             "build_key": k.build_key, "patches": list(k.patches),
                             "namespaces": [r.name for r in run.namespaces],
                             "exit_code": run.exit_code}
    driver: dict[str, Any] = {
        "name": "equiv",
        "rules": [{"id": rid, "name": rid.replace("-", "_"), "shortDescription": {"text": s},
                   "fullDescription": {"text": f}, "defaultConfiguration": {"level": "error"}}
                  for rid, s, f in RULES]}
    if times:
        driver["version"] = TOOL_VERSION
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [{
        "tool": {"driver": driver},
        "originalUriBaseIds": {"KERNEL": {"description": {
            "text": f"the root of the kernel tree of {k.release} (linux-source-6.12)"}}},
        "invocations": [{"executionSuccessful": run.exit_code in (0, 1)}],
        "properties": props, "results": results}]}


def render_live_sarif(run: LiveRun, *, times: bool = True) -> str:
    """:func:`live_sarif` as JSON text."""
    return json.dumps(live_sarif(run, times=times), indent=2) + "\n"


def render_live(fmt: str, run: LiveRun, *, times: bool = True) -> str:
    """The report in ``fmt`` (:data:`LIVE_FORMATS`)."""
    if fmt == "json":
        return render_live_json(run, times=times)
    if fmt == "junit":
        return render_live_junit(run, times=times)
    if fmt == "sarif":
        return render_live_sarif(run, times=times)
    return render_live_text(run, times=times)


__all__ = ["KERNEL_TEXT", "LIVE_FORMATS", "diff_lines", "header_lines", "live_json", "live_sarif",
           "render_live", "render_live_json", "render_live_junit", "render_live_sarif",
           "render_live_text", "step_source", "summary_line"]

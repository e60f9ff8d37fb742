"""Tables of the auxiliary checks: the BTF layout check and the seeded-bug self-test."""

from __future__ import annotations

import json

from equiv.engine.selftest import Outcome, SelfTestResult
from equiv.source.layout_check import LayoutReport


def render_layout_text(rep: LayoutReport) -> str:
    """The BTF layout check as a table: model vs kernel offset and size, verdict per field."""
    out = [f"layout check: model config {rep.config} vs BTF {rep.btf}",
           f"{'struct':6s} {'field (model name)':40s} {'kernel name':22s} {'model':>9s} "
           f"{'kernel':>9s}  verdict"]
    for r in rep.rows:
        k = "-" if r.kernel_offset is None else f"{r.kernel_offset}+{r.kernel_size}"
        out.append(f"{r.struct:6s} {r.model_name:40s} {(r.kernel_name or '-'):22s} "
                   f"{f'{r.model_offset}+{r.model_size}':>9s} {k:>9s}  {r.verdict}")
    bad = [r for r in rep.rows if r.verdict != "MATCH"]
    if rep.unnamed:
        out.append("kernel views of struct page the model does not name (same bytes, other "
                   "union members): " + ", ".join(f"{m.path}@{m.offset}" for m in rep.unnamed))
    for m in rep.uncovered:
        out.append(f"UNCOVERED kernel field {m.path}@{m.offset}+{m.size}: beyond the model's "
                   "struct page")
    out.append(f"{len(rep.rows)} fields checked: {len(rep.rows) - len(bad)} match, "
               f"{len(bad)} differ" + (f", {len(rep.uncovered)} uncovered" if rep.uncovered else ""))
    return "\n".join(out) + "\n"


def render_layout_json(rep: LayoutReport) -> str:
    """The BTF layout check as JSON."""
    doc = {"schema": "equiv.layout/1", "config": rep.config, "btf": rep.btf, "ok": rep.ok,
           "fields": [{"struct": r.struct, "model_name": r.model_name,
                       "kernel_name": r.kernel_name, "model_offset": r.model_offset,
                       "model_size": r.model_size, "kernel_offset": r.kernel_offset,
                       "kernel_size": r.kernel_size, "verdict": r.verdict} for r in rep.rows],
           "unnamed_kernel_views": [m.path for m in rep.unnamed],
           "uncovered": [m.path for m in rep.uncovered]}
    return json.dumps(doc, indent=2) + "\n"


def selftest_summary(st: SelfTestResult) -> str:
    """The self-test's one-line summary."""
    n_bugs, n_killed = len(st.bugs), len(st.killed)
    clean = sum(not any(c.outcome is Outcome.FALSE_REPORT for c in r.cells)
                for r in st.controls)
    line = (f"self-test: {n_killed} mutants killed of {n_bugs} ({100 * st.kill_rate:.0f}%), "
            f"{clean} equivalent controls not reported "
            f"({st.count(Outcome.FALSE_REPORT)} false reports)")
    bad = [f"{n} {o.name.lower().replace('_', '-')}" for o in (Outcome.SURVIVED, Outcome.WRONG_FIELD)
           if (n := st.count(o))]
    if bad:
        line += f"; {', '.join(bad)} cells"
    return line + ("" if st.ok else "; FAILED")


def render_selftest(st: SelfTestResult) -> str:
    """The kill matrix (mutant rows x cell columns, one code per cell) and the summary."""
    heads = [f"{t}/{o}" for t, o in st.cells]
    name_w = max([len("mutant"), *(len(r.name) for r in st.rows)])
    widths = [max(len(h), len("FALSE")) for h in heads]
    cfg_w = max([len("config"), *(len(r.config) for r in st.rows)])

    def line(name: str, cells: list[str], cfg: str, status: str) -> str:
        mid = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        return f"{name.ljust(name_w)}  {mid}  {cfg.ljust(cfg_w)}  {status}".rstrip()

    out = [line("mutant", heads, "config", "result")]
    out += [line(r.name, [c.outcome.value for c in r.cells], r.config, r.status)
            for r in st.rows]
    caught = [(r, c) for r in st.rows for c in r.cells if c.outcome is Outcome.KILLED]
    if caught:
        out += ["", "killed on (the expected names its counterexamples report):"]
        for r in st.rows:
            kills = [c for c in r.cells if c.outcome is Outcome.KILLED]
            names = sorted({n for c in kills for n in set(c.expected or ()) & set(c.reported)})
            if kills:
                out.append(f"  {r.name}: {', '.join(names)} ({len(kills)} "
                           f"cell{'s' * (len(kills) != 1)})")
    fails = [(r, c) for r in st.rows for c in r.failures]
    if fails:
        out.append("")
        for r, c in fails:
            want = "PROVED" if c.expected is None else "one of " + ", ".join(c.expected)
            got = c.verdict.value + (f" on {', '.join(c.reported)}" if c.reported else "")
            out.append(f"{c.outcome.value} {r.name} {c.ptype}/{c.order}: "
                       f"expected {want}; got {got}")
    out.append("")
    out.append(selftest_summary(st))
    return "\n".join(out) + "\n"



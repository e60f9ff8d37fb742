"""Tables of the seeded-bug self-test.  (The BTF layout check is zone-device tooling: its
tables are in :mod:`equiv.zone_device.source.present`.)"""

from __future__ import annotations

from equiv.engine.selftest import Outcome, SelfTestResult
from equiv.report.text import WIDTH


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
    if max(len(x) for x in out) > WIDTH:  # two lines a mutant: its name, then its cells
        cells = [f"  {'  '.join(c.ljust(w) for c, w in zip(row, widths, strict=True))}".rstrip()
                 for row in [heads, *([c.outcome.value for c in r.cells] for r in st.rows)]]
        out = ["mutant [config]: result", cells[0]]
        for r, row in zip(st.rows, cells[1:], strict=True):
            out += [f"{r.name} [{r.config}]: {r.status}", row]
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



"""How the vmap subject reads in the reports (:data:`PRESENTER`): the lines of a page-table
counterexample for the text, Markdown and JUnit renderers, SARIF locations (the
mm/vmalloc.c function of each path) and the pytest files ``--emit-tests`` writes.

Alive2-like: what was checked, the inputs (the page array as segments, the virtual range,
the protection, the initial table state), then for the page where it goes wrong the slow and
the fast leaf side by side (level, entry, the pfn it maps the page to, the step that wrote
it), the fast path's walks, and what is wrong in one line.  Every line fits ``width``
columns (72: a mail reply).
"""

from __future__ import annotations

import json
import re
import textwrap

from equiv.engine.results import CellResult, ObligationResult, Presenter, RunResult
from equiv.engine.results import Counterexample as AnyCounterexample
from equiv.engine.verdict import Verdict
from equiv.report.text import command_lines, repro_command
from equiv.vmap.arch import PAGE_SHIFT, kernel_va
from equiv.vmap.counterexample import LeafView, VmapCounterexample
from equiv.vmap.names import is_any

#: top bits of an arm64 kernel virtual address with VA_BITS=48


def _kva(page: int) -> str:
    return f"{kernel_va(page):#x}"


def _fill(text: str, width: int, indent: str = "", more: str | None = None) -> list[str]:
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + "  " if more is None else more,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [indent.rstrip()]


def _step(lv: LeafView) -> str:
    if lv.level == "none":
        return "nothing"
    if lv.level in ("PMD", "PUD"):
        return f"{lv.level} block, pages {lv.block_page}..{lv.block_page + lv.block_pages - 1}"
    if lv.cont:
        return f"CONT step, pages {lv.block_page}..{lv.block_page + lv.block_pages - 1}"
    return "single PTE"


def counterexample_lines(cx: VmapCounterexample, width: int = 72) -> list[str]:
    """``cx`` as report lines of at most ``width`` columns (no indentation)."""
    out: list[str] = []
    case = cx.case
    what = (
        f"{cx.obligation} on {cx.path}, revision {cx.revision}"
        + (f" + seeded bug {cx.mutant}" if cx.mutant else "")
        + (
            ", any number of segments"
            if is_any(cx.bound)
            else f", bound {cx.bound} segment{'s' * (cx.bound != 1)}"
        )
    )
    kind = "undefined behaviour" if cx.obligation == "ub_ffs0" else "counterexample"
    out += _fill(
        f"Example {kind} (replayed concretely through both paths; proposed by the "
        f"{cx.found_by} model): {what}",
        width,
    )
    out.append("inputs:")
    n = case.nr_pages
    out += _fill(f"va {_kva(case.va)} (page {case.va:#x}), {n} page{'s' * (n != 1)}", width, "  ", "     ")
    out += _fill(
        f"prot {case.prot:#018x}" + (f", vmalloc shift {case.shift}" if case.path == "vmalloc" else ""),
        width,
        "  ",
        "    ",
    )
    if case.path == "ioremap":
        pfn = case.segments[0][1]
        out += _fill(f"phys {pfn << PAGE_SHIFT:#x} (pfn {pfn:#x}), contiguous", width, "  ", "    ")
    else:
        first = 0
        for j, (k, pfn) in enumerate(case.segments):
            size = 1 << k
            out += _fill(
                f"seg {j}: pages[{first}..{first + size - 1}] = 2^{k} pages at pfn {pfn:#x}",
                width,
                "  ",
                "      ",
            )
            first += size
    tables = ", ".join(f"{kind_}[{i:#x}]" for kind_, i in sorted(case.tables)) or "none"
    out += _fill(f"S0: tables present: {tables}", width, "  ", "    ")
    if case.trylock_fails:
        fails = ", ".join(f"{k}[{i:#x}]" for k, i in sorted(case.trylock_fails))
        out += _fill(f"mmap_read_trylock fails at: {fails}", width, "  ", "    ")
    if case.ffs0:
        out += _fill("__ffs(0) yields: " + ", ".join(f"{v} at pages[{i}]" for i, v in case.ffs0), width, "  ")
    if cx.page is not None and cx.slow is not None and cx.fast is not None:
        out += _fill(f"page {cx.page} (va {_kva(case.va + cx.page)}):", width)
        if cx.expected_pfn is not None:
            src = "phys" if case.path == "ioremap" else f"pages[{cx.page}]"
            out.append(f"  {src} is pfn {cx.expected_pfn:#x}"[:width])
        col = max(12, (width - 14) // 2)
        rows = [
            ("", "slow", "fast"),
            (
                "level",
                cx.slow.level + (" CONT" if cx.slow.cont else ""),
                cx.fast.level + (" CONT" if cx.fast.cont else ""),
            ),
            ("entry", f"{cx.slow.entry:#018x}", f"{cx.fast.entry:#018x}"),
            (
                "maps pfn",
                "-" if cx.slow.pfn is None else f"{cx.slow.pfn:#x}",
                "-" if cx.fast.pfn is None else f"{cx.fast.pfn:#x}",
            ),
            ("written by", _step(cx.slow), _step(cx.fast)),
        ]
        for label, s, f in rows:
            out.append(f"  {label:<10}  {s[: col - 1]:<{col}}{f[:col]}".rstrip()[:width])
    if cx.walks:
        walks = "; ".join(f"[{a}, {b}) shift {s}" for a, b, _, s in cx.walks)
        caller = "vmap_pages_range_batched" if cx.path == "vmap" else "__vmap_pages_range_noflush"
        out += _fill(f"fast walks ({caller}): {walks}", width)
    if cx.obligation == "flush_covers":
        for side, rng in (("slow", cx.flush[0]), ("fast", cx.flush[1])):
            out.append(
                f"  {side} flush_cache_vmap: " + ("none" if rng is None else f"pages [{rng[0]}, {rng[1]})")
            )
    more = f" (and {cx.n_violations - len(cx.detail)} more)" if cx.n_violations > len(cx.detail) else ""
    out.append("wrong:" + more)
    for d in cx.detail:
        out += _fill(d, width, "  ", "    ")
    if cx.ub:
        out += _fill(
            "undefined behaviour: __ffs(0) was evaluated; any value it yields is a sound clamp "
            "for pfn 0, so this is reported as UB, not as a translation difference",
            width,
        )
    return out


# ---- --emit-tests ---------------------------------------------------------------------------


def emitted_files(run: RunResult) -> list[tuple[str, str]]:
    """(file name, contents) of the pytest file ``--emit-tests`` writes for each replayed
    counterexample of a vmap run (no C sketch: a page-table test needs a kernel's vmalloc
    area and page allocator, which a KUnit sketch cannot stand in for)."""
    out: list[tuple[str, str]] = []
    for cell in run.cells:
        for ob in cell.obligations:
            cx = ob.counterexample
            if ob.verdict is Verdict.REFUTED and isinstance(cx, VmapCounterexample):
                parts = ["test_equiv_vmap", run.revision, cell.ptype, f"b{cell.order}", ob.name,
                         *([run.mutant] if run.mutant else [])]
                name = "_".join(re.sub(r"[^a-z0-9]+", "_", p.lower()).strip("_") for p in parts)
                out.append((f"{name}.py", pytest_source(run, cell, ob.name, cx)))
    return out


def pytest_source(run: RunResult, cell: CellResult, obligation: str, cx: VmapCounterexample) -> str:
    """A pytest file that replays ``cx``'s input concretely through both paths of the twin
    (no solver) and asserts the recorded violations."""
    cmd = repro_command(run, cell, obligation)
    doc = "\n".join([
        *textwrap.wrap(f"Reproduce equiv's counterexample to {obligation} on the {cx.path} path, "
                       f"revision {run.revision}"
                       + (f", seeded bug {run.mutant}" if run.mutant else "")
                       + f", bound {cell.order} (arm64 4K page tables).", 88),
        "", "Found by:", "", *command_lines(cmd, "    "), "",
        *textwrap.wrap("The test replays the recorded input concretely through the slow and "
                       "the fast path of equiv's page-by-page twin of mm/vmalloc.c (no solver) "
                       "and asserts these violations:", 88),
        "", *(f"    {d}" for d in cx.detail), "",
        *textwrap.wrap("This test pins the divergence; when the fast path is fixed it fails - "
                       "delete it then. Generated by python -m equiv.proofs --emit-tests; do "
                       "not edit.", 88),
    ])
    case = json.dumps(cx.case.to_json(), indent=1)
    return f'''r"""{doc}
"""

from __future__ import annotations

import json

from equiv.vmap.cell import resolve
from equiv.vmap.counterexample import replay
from equiv.vmap.inputs import ConcreteCase

REVISION = {run.revision!r}
MUTANT = {run.mutant!r}
TRYLOCK = {cx.trylock!r}
OBLIGATION = {obligation!r}
#: the input as equiv recorded it (ConcreteCase.to_json())
CASE = ConcreteCase.from_json(json.loads(r"""{case}"""))
#: the violations shown in the report, and how many there are in all
SHOWN = {list(cx.detail)!r}
N_VIOLATIONS = {cx.n_violations!r}


def test_{re.sub(r"[^a-z0-9]+", "_", obligation.lower())}_diverges() -> None:
    rp = replay(CASE, resolve(REVISION, MUTANT, TRYLOCK), OBLIGATION)
    details = [v.detail for v in rp.violations]
    assert len(details) == N_VIOLATIONS, details[:8]
    assert set(SHOWN) <= set(details), details[:8]
'''


class VmapPresenter(Presenter):
    """The vmap subject's :class:`~equiv.engine.results.Presenter`: obligations are their
    own SARIF rules, located at the mm/vmalloc.c function of the cell's path."""

    report_id = "vmap"
    kernel_file = "mm/vmalloc.c"
    column_functions = (("ioremap", "vmap_page_range"),
                        ("vmalloc", "__vmap_pages_range_noflush"),
                        ("vmap", "vmap_pages_range_batched"))

    def counterexample_lines(self, cx: AnyCounterexample, width: int) -> list[str]:
        assert isinstance(cx, VmapCounterexample)
        return counterexample_lines(cx, width)

    def about(self, ob: ObligationResult) -> str:
        from equiv.vmap.obligations import OBLIGATIONS

        claim = OBLIGATIONS.get(ob.name)
        return claim.description if claim else "loop summary lemma" if ob.kind == "lemma" \
            else ob.kind

    def emitted_files(self, run: RunResult) -> list[tuple[str, str]]:
        return emitted_files(run)


#: what every vmap run hands the reports
PRESENTER = VmapPresenter()

"""Seeded controls for the patch proof's obligations that no seeded bug exercises
(:mod:`equiv.zone_device.source.patchproof`, data in ``tests/data/zone-device-backport-6.12/controls``).

Each control is a patch applied on top of the backport series.  Three make one loop-summary
lemma kind of :mod:`equiv.zone_device.source.csummary` fail on its own (frame-read, carry-step, no-wrap),
one breaks the pageblock role, one copies the tail template to the wrong struct page, one
copies ``sizeof`` of the template pointer (8 bytes) instead of the struct page, one copies
the head template without its last member (``sizeof(template) - sizeof(template.memcg_data)``).  Every
obligation must be able to fail: a checker whose lemmas or roles cannot fail proves nothing.

Fast: every control applies, without fuzz, on top of ``series/0001..0004`` and changes
``mm/mm_init.c`` only.

Slow (``--runslow``; one cell each, 20 s to a minute on 2 cores): ``check_patch_cell`` on
x86_64-default, all five pgmap types at once, at the smallest order where the control shows.
Asserted for every control: the verdict is not PROVED.  For a lemma control: the
``loop_summary_lemmas`` role is UNKNOWN and its reason names the lemma kind and the function
of the loop (``check_lemmas`` stops at the first lemma that fails, so this is also the first
one).  For a refuting control: the lemmas are proved (the difference is found with the loops
summarised), the expected role is REFUTED with one of the expected field names, and the
provenance of the differing fields names a ``file:line`` of the C text.

Known gaps of equiv these tests work around or document (see the data README):

* The pageblock role's differing cell carries no ``file:line`` (``page_diffs`` names the
  bitmap cell's writer as ``pageblock_migratetype_init_range`` for both trees, even for the
  tree that never wrote it): :func:`test_pageblock_provenance_names_a_line` is a strict
  expected failure.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from attrs import frozen
from test_linux_tree import linux612  # noqa: F401  (the session fixture)

from equiv.config import PRESETS
from equiv.engine.verdict import Verdict
from equiv.linux.patch import prepare
from equiv.zone_device.source.common import RoleResult, side
from equiv.zone_device.source.files import FILES, load_tree
from equiv.zone_device.source.patchproof import PatchCell, check_patch_cell

DATA = Path(__file__).parent / "data" / "zone-device-backport-6.12"
SERIES = sorted((DATA / "series").glob("*.patch"))
CONFIG = "x86_64-default"
#: budget of one solver query (ms), as tests/test_patch_proof.py
TIMEOUT_MS = 120_000


@frozen
class Control:
    """A control patch and what equiv must say about it."""

    file: str  # relative to DATA
    order: int  # the smallest order where it shows
    #: the verdict expected today (None: anything but PROVED)
    verdict: Verdict | None
    #: the lemma kind that must fail first, and the function of its loop (None: the lemmas
    #: must be proved)
    lemma: tuple[str, str] | None = None
    #: the role that must be REFUTED, and names of which at least one must differ
    role: str | None = None
    fields: frozenset[str] = frozenset()
    #: the interpreter must stop on the patched tree with this reason (the cell UNKNOWN,
    #: never PROVED): C the interpreter cannot type exactly yet
    stops: str | None = None


CONTROLS = {
    "frame-read": Control("controls/01-frame-read-previous-head-as-template.patch", 0,
                          Verdict.UNKNOWN, lemma=("frame-read", "memmap_init_zone_device")),
    "carry-step": Control("controls/02-carry-step-resched-counter.patch", 0,
                          Verdict.UNKNOWN, lemma=("carry-step", "memmap_init_zone_device")),
    "no-wrap": Control("controls/03-no-wrap-int-pageblock-end.patch", 0, None,
                       lemma=("no-wrap", "pageblock_migratetype_init_range")),
    "pageblock": Control("controls/04-pageblock-loop-one-past-end.patch", 0, Verdict.REFUTED,
                         role="pageblock_equal",
                         fields=frozenset({"pageblock migratetype bits"})),
    "wrong-page": Control("controls/05-tails-one-struct-page-low.patch", 2, Verdict.REFUTED,
                          role="tail1_equal",
                          fields=frozenset({"flags", "folio._flags_1", "_flags_1",
                                            "zone_device_data", "folio._large_mapcount",
                                            "folio._entire_mapcount", "mapping",
                                            "folio._nr_pages_mapped", "folio._pincount",
                                            "index", "folio._folio_nr_pages"})),
    # 8 bytes copied instead of 64: clang's sizeof at that line (equiv/zone_device/source/
    # ctyped.py); the interpreter once took the pointed-to struct's size and PROVED it
    "sizeof-pointer": Control("controls/06-sizeof-of-the-template-pointer.patch", 0,
                              Verdict.REFUTED, role="head_equal",
                              fields=frozenset({"compound_head", "lru.next", "pgmap",
                                                "_mapcount", "page_type"})),
    # the head template copied without its last member: memcg_data, by clang's sizes
    "memcg-copy": Control("controls/07-template-copy-without-memcg-data.patch", 0,
                          Verdict.REFUTED, role="head_equal",
                          fields=frozenset({"memcg_data"})),
}


def _tree(base: Path, dest: Path, control: Control) -> Path:
    return prepare(base, FILES, [*SERIES, DATA / control.file], dest).root


# ---- fast: the patches ---------------------------------------------------------------------


def test_every_control_is_listed() -> None:
    assert sorted(c.file for c in CONTROLS.values()) == \
        sorted(f"controls/{p.name}" for p in (DATA / "controls").glob("*.patch"))


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_control_applies_on_the_series(linux612: Path, tmp_path: Path,  # noqa: F811
                                       name: str) -> None:
    """Each control applies (no fuzz: equiv's patch application has none) on top of the
    four series patches, and changes mm/mm_init.c and nothing else."""
    series = prepare(linux612, FILES, SERIES, tmp_path / "series").root
    root = _tree(linux612, tmp_path / "control", CONTROLS[name])
    changed = [f for f in FILES if (series / f).is_file() and
               (series / f).read_bytes() != (root / f).read_bytes()]
    assert changed == ["mm/mm_init.c"]


# ---- slow: one proof cell per control --------------------------------------------------------


_CELLS: dict[str, PatchCell] = {}


def _cell(base: Path, tmp: Path, name: str) -> PatchCell:
    """The control's cell (computed once per session)."""
    if name not in _CELLS:
        control = CONTROLS[name]
        cfg = PRESETS[CONFIG]
        t0 = time.perf_counter()
        _CELLS[name] = check_patch_cell(
            side("base", load_tree(base), cfg),
            side("patched", load_tree(_tree(base, tmp / "t", control)), cfg),
            cfg, None, control.order, timeout_ms=TIMEOUT_MS)
        print(f"{name}: order {control.order}, {_CELLS[name].verdict.name} in "
              f"{time.perf_counter() - t0:.0f} s")
    return _CELLS[name]


def _roles(cell: PatchCell) -> list[tuple[str, str, str]]:
    return [(r.name, r.verdict.name, r.reason) for r in cell.roles]


def _check_lemma_reason(why: str, kind: str, fn: str) -> None:
    assert why.startswith(f"loop lemma {kind} of "), why
    assert fn in why and "mm/mm_init.c:" in why, why


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_control(linux612: Path, tmp_path: Path, name: str) -> None:  # noqa: F811
    control = CONTROLS[name]
    cell = _cell(linux612, tmp_path, name)
    assert cell.verdict is not Verdict.PROVED, _roles(cell)
    if control.verdict is not None:
        assert cell.verdict is control.verdict, _roles(cell)
    if control.stops is not None:
        stopped = {r.name: r for r in cell.roles}["interpret_patched"]
        assert stopped.verdict is Verdict.UNKNOWN and control.stops in stopped.reason, \
            _roles(cell)
        return
    lemmas = {r.name: r for r in cell.roles}["loop_summary_lemmas"]
    if control.lemma is not None:
        assert lemmas.verdict is Verdict.UNKNOWN, _roles(cell)
        _check_lemma_reason(lemmas.reason, *control.lemma)
        # the failed lemma's counterexample: its kind, an iteration (the solver's model)
        cex = lemmas.lemma_cex
        assert cex is not None and cex.kind == control.lemma[0], lemmas
        assert cex.iteration is not None and "not replayed" in cex.text(), cex
    else:
        assert lemmas.verdict is Verdict.PROVED, _roles(cell)
    if control.role is None:
        return
    refuted = {r.name: r for r in cell.roles if r.verdict is Verdict.REFUTED}
    assert control.role in refuted, _roles(cell)
    role = refuted[control.role]
    names = {n for d in role.diffs for n in d.fields}
    assert names & control.fields, f"{control.role} differs in {sorted(names)}"
    if control.role != "pageblock_equal":  # see test_pageblock_provenance_names_a_line
        assert _lines(role), [d.fast_provenance for d in role.diffs]


def _lines(role: RoleResult) -> list[str]:
    """The steps of the role's provenance that name a ``file:line``."""
    return [step for d in role.diffs for chain in (*d.slow_provenance, *d.fast_provenance)
            for step in chain if ":" in step and step.split(":")[1].isdigit()]


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="equiv names the bitmap cell's writer "
                   "'pageblock_migratetype_init_range' with no file:line, for both trees")
def test_pageblock_provenance_names_a_line(linux612: Path, tmp_path: Path) -> None:  # noqa: F811
    cell = _cell(linux612, tmp_path, "pageblock")
    role = {r.name: r for r in cell.roles}["pageblock_equal"]
    assert role.verdict is Verdict.REFUTED, _roles(cell)
    assert _lines(role), [d.fast_provenance for d in role.diffs]

"""How the zone-device subject reads in the reports: its counterexamples (inputs under
their kernel names, the page, every differing field with both values and the chain of
modelled steps behind each), ``--explain`` output, SARIF rules and locations (the
mm/mm_init.c function of each page role and loop), and the tests ``--emit-tests`` writes.
Everything here returns lines or data; :mod:`equiv.report` formats the rest, and
:data:`PRESENTER` is what the zone-device runs hand the reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
from typing import Any

from equiv.config import Config
from equiv.engine.picture import Box, Change, ObjectBytes, Picture, Segment, Strip
from equiv.engine.results import CellResult, ObligationResult, Presenter, RunResult
from equiv.engine.results import Counterexample as AnyCounterexample
from equiv.memmap import INPUT_NAMES, M64, MemoryType
from equiv.page_model import Chain, Layout
from equiv.report.text import WIDTH, wrap
from equiv.zone_device.counterexample import Counterexample, FieldDiff
from equiv.zone_device.explain import Explanation
from equiv.zone_device.names import COMPARE
from equiv.zone_device.obligations import ROLES

#: the subject's name in machine-readable output (schema ``equiv.proofs/2``)
SUBJECT = "zone-device-memmap"

#: The kernel file every SARIF result points into, relative to the kernel tree's root (a
#: kernel source tree at v7.3-rc1, the base of the series).
KERNEL_FILE = "mm/mm_init.c"

#: Which function of mm/mm_init.c (Linux v7.3-rc1, the series' base) initialises the struct
#: page (or bitmap cell) of each page role; the one place this mapping is kept.
#:
#: * the head of every compound: ``memmap_init_zone_device()``'s loop calls
#:   ``__init_zone_device_page()`` on it; a struct page past the range is (not) written by
#:   that same loop;
#: * tails 1, 2 and t >= 3: ``memmap_init_compound()`` (its tail loop, ``prep_compound_tail``,
#:   ``prep_compound_head`` for page[1] / page[2]);
#: * the pageblock bitmap cell: ``memmap_init_zone_device()``'s call of
#:   ``pageblock_migratetype_init_range()``.
#:
#: Loop lemmas are located at the function of their loop, the prefix of the lemma's name
#: (``memmap_init_compound.template_tails:frame-write`` -> ``memmap_init_compound``).
ROLE_FUNCTIONS: dict[str, str] = {
    "head": "memmap_init_zone_device",
    "tail1": "memmap_init_compound",
    "tail2": "memmap_init_compound",
    "tail": "memmap_init_compound",
    "outside": "memmap_init_zone_device",
    "pageblock": "memmap_init_zone_device",
}

#: The loop lemmas (:mod:`equiv.loops`): SARIF rule short and full descriptions.
LEMMA_RULES: dict[str, tuple[str, str]] = {
    "frame-write": (
        "A loop iteration writes only its own pages",
        "Loop summary lemma (frame-write): iteration k of the loop changes no struct page or "
        "bitmap cell outside its own block k; without it the loop summary, and every page "
        "proof resting on it, is unsound."),
    "frame-read": (
        "A loop iteration reads only its own pages",
        "Loop summary lemma (frame-read): what iteration k writes into its block and carries "
        "to the next iteration depends only on block k of the memory it starts from, so "
        "earlier iterations cannot influence it."),
    "frame-bound": (
        "A loop runs only over the range it may write",
        "Loop summary lemma (frame-bound): every iteration of a heads loop is a compound of "
        "the range (c below the number of compounds), whatever end the loop computes; an "
        "iteration past it writes the memmap of whatever follows the device."),
    "carry-step": (
        "The template after iteration k is one step from the seed",
        "Loop summary lemma (carry-step): the induction step of the template loop; the "
        "template carried out of iteration k equals the candidate invariant for k + 1 (what "
        "one step from the seed gives)."),
}



def differences(cx: Counterexample) -> str:
    """One line naming the page and every differing field with its slow and fast value."""
    if cx.pfn is None:
        where = f"pageblock bitmap cell {cx.index['b']:#x}"
    else:
        t = cx.index["t"]
        where = (f"compound {cx.index['c']}, {'head' if t == 0 else f'tail {t}'} "
                 f"(pfn {cx.pfn:#x})")
    fields = "; ".join(
        f"{d.names[0]} ({'not memory' if d.size == 0 else f'offset {d.offset}+{d.size}'}): "
        f"slow {d.slow:#x}, fast {d.fast:#x}" for d in cx.diffs)
    return f"{where}: {fields}"



def kernel_function(ob: ObligationResult) -> str:
    """The mm/mm_init.c function an obligation is located at (see :data:`ROLE_FUNCTIONS`)."""
    if ob.kind == "lemma":
        name = ob.name.split(":", 1)[0]
        return name.split(".", 1)[0].split(" ", 1)[0]
    return ROLE_FUNCTIONS[ob.role]


def rule_id(ob: ObligationResult) -> str:
    """The SARIF rule of an obligation: its name for a page role (``tail1_equal``), its kind
    for a loop lemma (``frame-write``)."""
    return ob.name.rsplit(":", 1)[-1] if ob.kind == "lemma" else f"{ob.role}_equal"


#: What each page role's rule is about, for its short description (default: the role name).
_ROLE_SHORT = {"head": "every head page", "tail1": "tail page 1 (folio overlay)",
               "tail2": "tail page 2 (_deferred_list)", "tail": "every tail page t >= 3",
               "outside": "struct pages past the range (unchanged)",
               "pageblock": "every pageblock bitmap cell"}


def sarif_rules() -> list[dict[str, Any]]:
    """One ``reportingDescriptor`` per obligation kind: every page role, every lemma kind."""
    rules: list[dict[str, Any]] = []
    for role in ROLES.values():
        rules.append({
            "id": f"{role.name}_equal",
            "name": "".join(p.capitalize() for p in f"{role.name}_equal".split("_")),
            "shortDescription": {"text": f"Fast path leaves {_ROLE_SHORT.get(role.name, role.name)} "
                                         "as the slow path does"},
            "fullDescription": {"text": f"Page-role obligation: for the {role.description}, "
                                        "every byte after memmap_init_zone_device() (every "
                                        "field under every union view, and the padding) is "
                                        "the same on the template fast path as on the slow "
                                        "path, for all inputs allowed by the assumptions."},
            "defaultConfiguration": {"level": "error"},
            "properties": {"kind": "page", "kernel_function": ROLE_FUNCTIONS[role.name]},
        })
    for kind, (short, full) in LEMMA_RULES.items():
        rules.append({
            "id": kind,
            "name": "".join(p.capitalize() for p in kind.split("-")),
            "shortDescription": {"text": short},
            "fullDescription": {"text": full},
            "defaultConfiguration": {"level": "error"},
            "properties": {"kind": "lemma"},
        })
    return rules


def _value(v: int | bool) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else hex(v)


def _type_name(v: int | bool) -> str:
    names = {t.value: t.kname for t in MemoryType}
    return names.get(int(v), f"{int(v)} (not a memory type)")


def chain_lines(chain: Chain, indent: str, width: int = WIDTH) -> list[str]:
    """A provenance chain, one numbered step per line (oldest first)."""
    if not chain:
        return [indent + "initial memory (never written)"]
    out: list[str] = []
    for i, step in enumerate(chain, 1):
        out += wrap(f"{i}. {step}", indent, indent + "   ", width)
    return out


def field_lines(d: FieldDiff, width: int = WIDTH) -> list[str]:
    """A differing field: names (kernel name, then the other union views), offset, and for
    each side its value and how it got it."""
    where = "not memory" if d.size == 0 else f"offset {d.offset}, {d.size} byte{'s' * (d.size > 1)}"
    out = wrap(f"field {d.names[0]} ({where})", width=width)
    if len(d.names) > 1:
        out += wrap("same bytes as: " + ", ".join(d.names[1:]), "  ", "    ", width)
    digits = max(1, 2 * d.size)
    for side, val, chains in (("slow", d.slow, d.slow_provenance),
                              ("fast", d.fast, d.fast_provenance)):
        out.append(f"  {side} value: {val:#0{digits + 2}x}")
        for i, chain in enumerate(chains):
            if len(chains) > 1:
                out.append(f"    bytes written by chain {i + 1} of {len(chains)}:")
            out += chain_lines(chain, "    ", width)
    return out


def counterexample_lines(cx: Counterexample, width: int = WIDTH) -> list[str]:
    """A replayed counterexample as report lines (no indentation; at most ``width``
    columns), Alive2-style: the example inputs, the page, then per differing field the slow
    (source) and fast (target) value with the chain of modelled steps behind each."""
    fill = partial(wrap, width=width)
    out: list[str] = []
    w = out.append
    free = set(cx.irrelevant)
    many = {"unique": "the only counterexample (any other input or page: no difference)",
            "one of many": "one of many counterexamples",
            "unknown": "unknown whether others exist"}[cx.multiplicity]
    out += fill(f"Example ({many}):")
    if free:
        out += fill("* any other value gives the same difference", "  ")
    for name, label in INPUT_NAMES.items():
        if name not in cx.inputs:
            continue
        if name in ("altmap_reserve", "altmap_free") and not cx.inputs["altmap_valid"]:
            continue
        v = cx.inputs[name]
        shown = (("present" if v else "none") if name == "altmap_valid" else
                 _type_name(v) if name == "pgmap_type" else _value(v))
        w(f"  {'*' if name in free else ' '} {label:32s} {shown}")
    if cx.early_sections:
        secs = ", ".join(f"{s:#x} {'yes' if e else 'no'}" for s, e in sorted(cx.early_sections.items()))
        out += fill(f"{'*' if 'early_sections' in free else ' '} early sections: {secs}", "  ",
                    "      ")
    mem = "*" if "initial_memory" in free else " "
    w(f"  {mem} initial struct page contents: "
      f"{'any' if mem == '*' else 'arbitrary (see JSON)'}")
    if cx.pfn is None:
        w(f"  {'*' if 'page' in free else ' '} pageblock bitmap cell {cx.index['b']:#x}")
    else:
        what = "head" if cx.index["t"] == 0 else f"tail {cx.index['t']}"
        star = "*" if "page" in free else " "
        out += fill(f"{star} page: compound {cx.index['c']}, {what} (pfn {cx.pfn:#x})", "  ",
                    "      ")
        if cx.seed_pfn is not None and cx.section_shift:
            sh = cx.section_shift
            out += fill(f"sections: pfn {cx.pfn:#x} is in section {cx.pfn >> sh:#x}; the "
                        f"first head {cx.seed_pfn:#x} (template seed) in section "
                        f"{cx.seed_pfn >> sh:#x}", "    ", "      ")
    for d in cx.diffs:
        out += field_lines(d, width)
    w("replayed concretely through both paths: the difference reproduces")
    return out


def _pfns(lo: int, hi: int) -> str:
    """``pfn X`` or ``pfns X..Y`` (inclusive)."""
    return f"pfn {lo:#x}" if lo == hi else f"pfns {lo:#x}..{hi:#x}"


def _signed(v: int) -> int:
    """A 64-bit value read as signed (a pfn below 0 wrapped modulo 2^64 is negative)."""
    v &= M64
    return v - (1 << 64) if v >> 63 else v


def _range(cx: Counterexample) -> tuple[int, int, int]:
    """start_pfn, the first pfn the loop initialises (after the altmap's pages) and end_pfn
    of a counterexample's inputs."""
    inp = cx.inputs
    start, nr = int(inp["start_pfn"]), int(inp["nr_pages"])
    adj = int(inp["altmap_reserve"]) + int(inp["altmap_free"]) if inp["altmap_valid"] else 0
    return start, (start + adj) & M64, (start + nr) & M64


def compound_strip(cx: Counterexample, order: int) -> Strip:
    """Where the differing struct page lies: the pages below the first pfn, the compounds
    of the range (the one shown split into head, tail 1, tail 2 and the other tails), and
    the struct pages from end_pfn on."""
    assert cx.pfn is not None
    start, first, end = _range(cx)
    pfn, stride = cx.pfn, 1 << order
    ncomp = max(0, (end - first + stride - 1) >> order)
    rel = _signed(pfn - first)  # pfn arithmetic is modulo 2^64: start_pfn 0 minus 1 is below
    inside = 0 <= rel < end - first
    c = rel >> order if inside else (0 if rel < 0 else max(0, ncomp - 1))
    t = rel - (c << order) if inside else -1
    segs: list[Segment] = []
    if start < first:
        below = f"the altmap's pages, {_pfns(start, first - 1)}"
    else:
        below = f"{_pfns(first - 1, first - 1)} and below" if first else "none"
    this = f"pfn {pfn:#x}" + (" (start_pfn - 1)" if pfn == (start - 1) & M64 else "")
    segs.append(Segment("below the first pfn", this if rel < 0 else below, rel < 0, "out"))
    head = first + (c << order)
    if c > 0:
        segs.append(Segment("compound 0" if c == 1 else f"compounds 0..{c - 1}",
                            _pfns(first, head - 1), False, "gap"))
    if ncomp:
        parts = [("head", 0, 0), ("tail 1", 1, 1), ("tail 2", 2, 2),
                 ("tail 3" if stride == 4 else f"tails 3..{stride - 1}", 3, stride - 1)]
        for label, lo, hi in parts:
            if lo < stride:
                segs.append(Segment(label, _pfns(head + lo, head + hi), lo <= t <= hi))
    if c + 1 < ncomp:
        segs.append(Segment(f"compound {c + 1}" if c + 2 == ncomp else
                            f"compounds {c + 1}..{ncomp - 1}",
                            _pfns(head + stride, first + (ncomp << order) - 1), False, "gap"))
    past = rel >= end - first
    segs.append(Segment("from end_pfn on", this if past else f"end_pfn {end:#x} and above",
                        past, "out"))
    where = (f"compound {c} of {ncomp}" if inside else
             "outside the range's compounds" + (f" (compound {c} of {ncomp} shown)" if ncomp else ""))
    return Strip(f"struct pages: {where}, order {order} ({stride} struct "
                 f"page{'s' * (stride > 1)} per compound)", tuple(segs),
                 f"start_pfn {start:#x}, first pfn initialised {first:#x}, end_pfn {end:#x}")


def pageblock_strip(cx: Counterexample, pageblock_order: int) -> Strip:
    """The pageblocks of the device range, the one holding the difference (the differing
    bitmap cell, or the pageblock of the differing struct page) marked; runs of pageblocks
    in between are drawn as one gap."""
    start, first, end = _range(cx)
    po = pageblock_order
    target = cx.index["b"] if cx.pfn is None else _signed(cx.pfn) >> po
    lo, hi = start >> po, (end - 1) >> po if end > start else (start >> po) - 1
    init_lo = (first + (1 << po) - 1) >> po  # pageblock_align(first) rounds up
    segs: list[Segment] = []
    mark = ("the difference is here" if cx.pfn is None
            else f"the differing struct page's pfn {cx.pfn:#x} is in this pageblock")
    if target < lo:
        segs.append(Segment(f"pageblock {target:#x}", "below the range", True, "out", mark))
    shown = sorted({b for b in (lo, hi, target - 1, target, target + 1) if lo <= b <= hi})
    prev: int | None = None
    for b in shown:
        if prev is not None and b > prev + 1:
            n = b - prev - 1
            segs.append(Segment(f"{n} pageblock{'s' * (n > 1)}",
                                _pfns((prev + 1) << po, (b << po) - 1), False, "gap"))
        segs.append(Segment(f"pageblock {b:#x}", _pfns(b << po, ((b + 1) << po) - 1),
                            b == target, "in" if b >= init_lo else "out", mark))
        prev = b
    if target > hi:
        segs.append(Segment(f"pageblock {target:#x}", "above the range", True, "out", mark))
    what = (f"bitmap cell {target:#x} differs" if cx.pfn is None
            else f"pfn {cx.pfn:#x} is in pageblock {target:#x}")
    return Strip(f"pageblocks: {what} (pageblock_order {po}, {1 << po} pfns each)",
                 tuple(segs), "pageblock_migratetype_init_range() sets the pageblocks from "
                 f"pageblock_align(first pfn) = pfn {init_lo << po:#x} to end_pfn {end:#x}")


def page_boxes(L: Layout, page_index: int | None) -> tuple[Box, ...]:
    """Every name of the bytes of struct page ``page_index`` of a compound (0 head; 1, 2
    with the folio overlays of page[1] and page[2]; None any other), and the padding."""
    boxes = [Box(v.shown, v.offset, v.size) for v in L.views if v.page is None]
    boxes += [Box(f"folio.{v.shown}", v.offset, v.size) for v in L.views
              if v.page is not None and v.page == page_index]
    boxes += [Box("<padding>", a.offset, a.size) for a in L.atoms if not a.views]
    return tuple(sorted(boxes, key=lambda b: (b.offset, -b.size)))


def picture(cx: Counterexample, L: Layout, order: int) -> Picture:
    """What a zone-device counterexample looks like: the observed struct page (or bitmap
    cell) byte by byte with every name of its bytes, the compound and pageblock strips,
    and every differing field with its provenance."""
    changes = tuple(Change(d.names, d.offset, d.size, f"{d.slow:#0{2 + 2 * max(1, d.size)}x}",
                           f"{d.fast:#0{2 + 2 * max(1, d.size)}x}", d.slow_provenance,
                           d.fast_provenance) for d in cx.diffs)
    differing = tuple(d.names[0] for d in cx.diffs if d.size)
    obj: ObjectBytes | None = None
    ob = cx.observed
    if cx.pfn is None:
        strips: tuple[Strip, ...] = (pageblock_strip(cx, L.config.PAGEBLOCK_ORDER),)
        if ob is not None:
            obj = ObjectBytes(f"pageblock bitmap cell {cx.index['b']:#x}", ob.initial, ob.slow,
                              ob.fast, (Box("pageblock migratetype bits", 0, len(ob.slow)),),
                              differing)
    else:
        strips = (compound_strip(cx, order), pageblock_strip(cx, L.config.PAGEBLOCK_ORDER))
        if ob is not None:
            t = cx.index["t"]
            what = "head" if t == 0 else f"tail {t}"
            obj = ObjectBytes(f"struct page of pfn {cx.pfn:#x} (compound {cx.index['c']}, "
                              f"{what})", ob.initial, ob.slow, ob.fast,
                              page_boxes(L, ROLES[cx.role].page_index), differing)
    return Picture(differences(cx), obj, strips, changes)


def render_explain(ex: Explanation) -> str:
    """``--explain FIELD``: per struct page role, the field's value on each side and the
    chain of modelled steps that wrote it (also when the role is proved)."""
    out = wrap(f"explain {ex.field}: config {ex.config}, revision {ex.revision}, {ex.ptype} "
               f"order {ex.order}")
    out += wrap("each role is run concretely on one input (its counterexample if refuted, "
                "else a small input allowed by the assumptions); steps oldest first", "  ")
    for r in ex.rows:
        out.append("")
        if "t" in r.index and r.role != "outside":
            where = "head" if r.index["t"] == 0 else f"tail {r.index['t']}"
        else:
            where = f"slot {r.index.get('t', 0)}"
        pfn = f", pfn {r.pfn:#x}" if r.pfn is not None else ""
        out += wrap(f"{r.role} (compound {r.index.get('c', 0)}, {where}{pfn}): "
                    f"{r.verdict.value}, {r.source} input")
        shown = ", ".join(f"{INPUT_NAMES[k]} {_value(v)}" for k, v in r.inputs.items()
                          if k in ("start_pfn", "nr_pages", "nid"))
        out += wrap(f"input: {shown}", "  ", "    ")
        out += ["  " + line for line in field_lines(r.field, WIDTH - 2)]
    return "\n".join(out) + "\n"


class ZoneDevicePresenter(Presenter):
    """The zone-device subject's :class:`~equiv.engine.results.Presenter`."""

    report_id = SUBJECT
    kernel_file = KERNEL_FILE

    def column_name(self, column: str) -> str:
        return column.removeprefix("MEMORY_DEVICE_")

    def revision_option(self, revision: str) -> str:
        """``--compare NAME`` for a comparison of slow-path variants, else ``--revision``."""
        if revision.startswith(COMPARE):
            return f"--compare {revision.removeprefix(COMPARE)}"
        return super().revision_option(revision)

    def title(self, run: RunResult) -> str:
        """A comparison names the variant in place of the fast path."""
        if run.revision.startswith(COMPARE):
            return f"{run.title.removesuffix(' vs fast path')} vs {run.revision.removeprefix(COMPARE)}"
        return super().title(run)

    def counterexample_lines(self, cx: AnyCounterexample, width: int) -> list[str]:
        assert isinstance(cx, Counterexample)
        return counterexample_lines(cx, width)

    def one_line(self, cx: AnyCounterexample) -> str:
        assert isinstance(cx, Counterexample)
        return differences(cx)

    def role_description(self, ob: ObligationResult) -> str:
        role = ROLES.get(ob.role)
        return role.description if role else ""

    def about(self, ob: ObligationResult) -> str:
        return self.role_description(ob) or "loop summary lemma"

    def repro_alone(self, ob: ObligationResult) -> bool:
        return ob.kind == "page"

    def all_columns_note(self, fmt: str, times: bool) -> str:
        if fmt == "markdown":
            return "proved once for every pgmap type of the order (`pgmap->type` a symbolic input)"
        return ("= proved once for every pgmap type of the order (pgmap->type a symbolic input)"
                if times else
                "cells proved once for every pgmap type of their order (pgmap->type symbolic)")

    def row_class_note(self, classes: Sequence[tuple[int, int]], fmt: str, times: bool) -> str:
        spans = ", ".join(f"{a}-{b}" for a, b in classes)
        what = (f"orders {spans} proved once per class of orders (`vmemmap_shift` a symbolic "
                "input ranging over the class)" if fmt == "markdown" else
                f"orders {spans} proved once per class of orders (vmemmap_shift a symbolic "
                "input ranging over the class)")
        if fmt == "markdown":
            return what
        return (f'" {what}; the time is on the class\'s first order' if times else what)

    def rule_id(self, ob: ObligationResult) -> str:
        return rule_id(ob)

    def sarif_rules(self, runs: Sequence[RunResult]) -> list[dict[str, Any]]:
        return sarif_rules()

    def location(self, cell: CellResult, ob: ObligationResult) -> tuple[str, str]:
        return KERNEL_FILE, kernel_function(ob)

    def emitted_files(self, run: RunResult) -> list[tuple[str, str]]:
        from equiv.zone_device.emit import emitted_files

        return emitted_files(run)

    def picture(self, run: RunResult, cell: CellResult, ob: ObligationResult) -> Picture | None:
        cx = ob.counterexample
        if not isinstance(cx, Counterexample) or not isinstance(run.config, Config):
            return None
        return picture(cx, _layout(run.config), cell.order)


@cache
def _layout(cfg: Config) -> Layout:
    return Layout.from_config(cfg)


#: what every zone-device run hands the reports
PRESENTER = ZoneDevicePresenter()

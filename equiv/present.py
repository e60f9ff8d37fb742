"""How the zone-device subject reads in the reports: its counterexamples (inputs under
their kernel names, the page, every differing field with both values and the chain of
modelled steps behind each), ``--explain`` output, SARIF rules and locations (the
mm/mm_init.c function of each page role and loop), and the tests ``--emit-tests`` writes.
Everything here returns lines or data; :mod:`equiv.report` formats the rest, and
:data:`PRESENTER` is what the zone-device runs hand the reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from equiv.counterexample import Counterexample, FieldDiff
from equiv.engine.results import CellResult, ObligationResult, RunResult
from equiv.engine.results import Counterexample as AnyCounterexample
from equiv.engine.subject import Presenter
from equiv.explain import Explanation
from equiv.memmap import INPUT_NAMES, MemoryType
from equiv.obligations import ROLES
from equiv.page_model import Chain
from equiv.report.text import WIDTH, wrap

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
    """The zone-device subject's :class:`~equiv.engine.subject.Presenter`."""

    report_id = SUBJECT
    kernel_file = KERNEL_FILE

    def column_name(self, column: str) -> str:
        return column.removeprefix("MEMORY_DEVICE_")

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

    def rule_id(self, ob: ObligationResult) -> str:
        return rule_id(ob)

    def sarif_rules(self, runs: Sequence[RunResult]) -> list[dict[str, Any]]:
        return sarif_rules()

    def location(self, cell: CellResult, ob: ObligationResult) -> tuple[str, str]:
        return KERNEL_FILE, kernel_function(ob)

    def emitted_files(self, run: RunResult) -> list[tuple[str, str]]:
        from equiv.emit import emitted_files

        return emitted_files(run)


#: what every zone-device run hands the reports
PRESENTER = ZoneDevicePresenter()

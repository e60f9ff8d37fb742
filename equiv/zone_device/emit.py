"""Tests emitted from counterexamples (``--emit-tests DIR``).

For every refuted page obligation of a run this module writes two files named after the cell
(:func:`stem`):

* ``<stem>.py``, a pytest file that rebuilds the cell, replays the recorded counterexample
  concretely through both paths of the model (no solver,
  :func:`equiv.zone_device.counterexample.replay_recorded`) and asserts that exactly the recorded fields
  differ, with the recorded values.  It pins the divergence: once the fast path is fixed it
  fails and should be deleted.
* ``<stem>.kunit.c``, a KUnit-style C sketch for a kernel developer to adapt: the inputs as
  constants, the observed struct page as the slow path (``memmap_init_zone_device``,
  ``memmap_init_compound``, ``__init_zone_device_page`` in ``mm/mm_init.c``, v7.3-rc1) leaves
  it, word by word with the fields of each word, and the words where the fast path differs.
  Setting up a test ``dev_pagemap`` needs kernel scaffolding the sketch cannot give; a comment
  says what must be provided.

The ``*_source`` functions return file contents and do no I/O (the KUnit text runs both paths
concretely, in memory, to read the slow path's whole struct page);
:func:`equiv.report.write_tests` writes what :func:`emitted_files` returns.
"""

from __future__ import annotations

import ast
import json
import os
import pprint
import re
import textwrap

from attrs import asdict

from equiv.config import PRESETS, Config
from equiv.engine.errors import InternalMismatch
from equiv.engine.results import CellResult, ObligationResult, RunResult
from equiv.engine.verdict import Verdict
from equiv.memmap import INPUT_NAMES, PSEUDO_INPUTS, MemoryType
from equiv.page_model import Layout, PageState
from equiv.report.text import command_lines, repro_command
from equiv.zone_device.cell import CellSpec, cell_paths
from equiv.zone_device.counterexample import (
    ConcreteRun,
    Counterexample,
    FieldDiff,
    counterexample_of,
    page_diffs,
    recorded_factory,
    run_concrete,
)
from equiv.zone_device.mutants import MUTANTS
from equiv.zone_device.names import COMPARE
from equiv.zone_device.obligations import ROLES


def _config(run: RunResult) -> Config:
    """The zone-device configuration of a zone-device run."""
    cfg = run.config
    assert isinstance(cfg, Config), "a zone-device run's config is a Config"
    return cfg


#: Column limit of the emitted C text (kernel coding style); a tab counts 8 columns.
C_WIDTH = 80
#: Column at which the values of ``#define`` lines start.
_DEFINE_COL = 32


# ---- which counterexamples, and their names ------------------------------------------------


def refuted(run: RunResult) -> list[tuple[CellResult, ObligationResult]]:
    """The (cell, obligation) pairs of ``run`` that get tests: every REFUTED obligation with
    a replayed counterexample, in matrix order."""
    return [(c, ob) for c in run.cells for ob in c.obligations
            if ob.verdict is Verdict.REFUTED and ob.counterexample is not None
            and _ptype(c) is not None]


def _ptype(cell: CellResult) -> MemoryType | None:
    return MemoryType.__members__.get(cell.ptype.removeprefix("MEMORY_DEVICE_"))


def _slug(text: str) -> str:
    """``text`` as a lower-case identifier fragment: ``x86_64-default`` -> ``x86_64_default``."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


def _is_preset(cfg: Config) -> bool:
    return PRESETS.get(cfg.name) == cfg


def stem(run: RunResult, cell: CellResult, ob: ObligationResult) -> str:
    """The file name stem of one counterexample's tests, deterministic and safe as a file and
    a Python module name: ``test_equiv_<config>_<revision>_<type>_o<order>_<obligation>``,
    then ``_<mutant>`` for a seeded bug.  A configuration read from a ``.config`` is named
    by the file's base name.
    """
    cfg = _config(run).name if _is_preset(_config(run)) else os.path.basename(_config(run).name)
    parts = ["test_equiv", cfg, run.revision, cell.ptype.removeprefix("MEMORY_DEVICE_"),
             f"o{cell.order}", ob.name] + ([run.mutant] if run.mutant else [])
    return "_".join(_slug(p) for p in parts)


def cell_spec(run: RunResult, cell: CellResult, ob: ObligationResult) -> CellSpec:
    """The :class:`~equiv.zone_device.cell.CellSpec` that rebuilds the paths of ``cell`` (one pgmap
    type, only obligation ``ob``)."""
    ptype = _ptype(cell)
    assert ptype is not None, f"cell of pgmap type {cell.ptype} has no single type"
    cfg: Config | str = _config(run).name if _is_preset(_config(run)) else _config(run)
    return CellSpec(config=cfg, revision=run.revision, ptype=ptype, order=cell.order,
                    mutant=run.mutant, obligation=ob.name)


def _what(run: RunResult, cell: CellResult, ob: ObligationResult) -> str:
    bug = f", seeded bug {run.mutant}" if run.mutant else ""
    hyp = " (hypothetical)" if _config(run).hypothetical else ""
    return (f"{ob.name} of {cell.ptype}, order {cell.order}, config {_config(run).name}{hyp}, "
            f"revision {run.revision}{bug}")


def _field_summary(d: FieldDiff) -> str:
    """``flags (offset 0, 8 bytes): slow 0x..., fast 0x...`` (values as wide as the field)."""
    if d.size == 0:
        return f"{d.names[0]} (not memory): slow {d.slow}, fast {d.fast}"
    return (f"{d.names[0]} (offset {d.offset}, {d.size} bytes): slow {_hex(d.slow, d.size)}, "
            f"fast {_hex(d.fast, d.size)}")


# ---- the pytest file -------------------------------------------------------------------------


def _py_string(text: str) -> str:
    """A Python literal for ``text``: a raw triple-quoted block when that reads back exactly,
    else ``repr``."""
    block = f"r'''\n{text}\n'''"
    try:
        if ast.literal_eval(block) == f"\n{text}\n":
            return block
    except SyntaxError:
        pass
    return repr(text)


def pytest_source(run: RunResult, cell: CellResult, ob: ObligationResult) -> str:
    """A self-contained pytest file (it imports only equiv) that replays the counterexample
    of ``ob`` concretely through the model and asserts the recorded divergence.

    Args:
        run: the run that found it (configuration, revision, seeded bug, reproduce command).
        cell: the matrix cell.
        ob: a REFUTED obligation of ``cell`` with a counterexample.
    """
    cx = counterexample_of(ob)
    assert cx is not None
    cmd = repro_command(run, cell, ob.name)
    role = ROLES.get(ob.role)
    fields = "\n".join(f"    {_field_summary(d)}" for d in cx.diffs)
    doc = "\n".join([
        *textwrap.wrap(f"Reproduce equiv's counterexample to {_what(run, cell, ob)}.", 88),
        *(["", *textwrap.wrap(f"Observed: {role.description}.", 88)] if role else []),
        "",
        "Found by:",
        "",
        *command_lines(cmd, "    "),
        "",
        *textwrap.wrap("The test replays the recorded inputs and initial memory concretely "
                       "through the slow path and the fast path of equiv's model (no solver) "
                       "and asserts that exactly these fields differ, with these values:", 88),
        "",
        fields,
        "",
        *textwrap.wrap("This test pins the divergence; when the fast path is fixed it fails - "
                       "delete it then.", 88),
        "",
        *textwrap.wrap("Generated by python -m equiv.proofs --emit-tests; do not edit. "
                       "Regenerate with the command above plus --emit-tests DIR.", 88),
    ])
    if _is_preset(_config(run)):
        config_lines = [f"CONFIG = {_config(run).name!r}"]
        imports = ""
    else:
        fields_literal = pprint.pformat(asdict(_config(run)),
                                        width=96, sort_dicts=False)
        config_lines = ["#: not a preset (e.g. read from a .config): its fields, rebuilt below",
                        f"CONFIG_FIELDS = {fields_literal}", "CONFIG = Config(**CONFIG_FIELDS)"]
        imports = "from equiv.config import Config\n"
    ptype = cell.ptype.removeprefix("MEMORY_DEVICE_")
    record = json.dumps(cx.to_json(), indent=1)
    test_name = f"test_{_slug(ob.name)}_diverges"
    return f'''r"""{doc}
"""

from __future__ import annotations

import json

{imports}from equiv.zone_device.counterexample import Counterexample, FieldDiff, replay_recorded
from equiv.zone_device.cell import CellSpec, cell_paths
from equiv.memmap import MemoryType

#: the cell: configuration, revision, seeded bug, pgmap type, order, obligation
{chr(10).join(config_lines)}
REVISION = {run.revision!r}
MUTANT = {run.mutant!r}
PGMAP_TYPE = {ptype!r}
ORDER = {cell.order!r}
OBLIGATION = {ob.name!r}

#: the counterexample as equiv recorded it (Counterexample.to_json())
COUNTEREXAMPLE = {_py_string(record)}

Fields = list[tuple[tuple[str, ...], int, int, int, int]]


def _fields(diffs: tuple[FieldDiff, ...]) -> Fields:
    """(names, offset, size, slow value, fast value) of each differing field."""
    return [(d.names, d.offset, d.size, d.slow, d.fast) for d in diffs]


def _show(fields: Fields) -> str:
    """One line per differing field, for the assertion message."""
    lines = [f"  {{'/'.join(names)}} (offset {{off}}, {{size}} bytes): slow {{slow:#x}}, fast {{fast:#x}}"
             for names, off, size, slow, fast in fields]
    return "\\n".join(lines) or "  none: the paths agree"


def {test_name}() -> None:
    """Replaying the recorded inputs through both paths differs in exactly the recorded fields."""
    spec = CellSpec(config=CONFIG, revision=REVISION, ptype=MemoryType[PGMAP_TYPE], order=ORDER,
                    mutant=MUTANT, obligation=OBLIGATION)
    sc, _, fast = cell_paths(spec)
    cx = Counterexample.from_json(json.loads(COUNTEREXAMPLE))
    want = _fields(cx.diffs)
    got = _fields(replay_recorded(sc, fast, cx))
    assert got == want, (
        f"{{OBLIGATION}} of {{PGMAP_TYPE}} order {{ORDER}}: the replay no longer shows the recorded "
        f"divergence\\nrecorded:\\n{{_show(want)}}\\nreplayed:\\n{{_show(got)}}\\n"
        "(if the fast path was fixed on purpose, delete this test)")
'''


# ---- the KUnit sketch ------------------------------------------------------------------------


def observed_run(spec: CellSpec, cx: Counterexample) -> ConcreteRun:
    """Both paths run concretely on the recorded values of ``cx`` (no solver): the observed
    struct pages (or bitmap cells).

    Raises:
        InternalMismatch: the run does not show exactly the recorded difference.
    """
    sc, _, fast = cell_paths(spec)
    run = run_concrete(sc, fast, recorded_factory(sc.layout, sc.order, cx), cx.index,
                       lazy=not cx.every_iteration)
    got = page_diffs(sc.layout, ROLES[cx.role].page_index, run)
    if [(d.offset, d.size, d.slow, d.fast) for d in got] != \
            [(d.offset, d.size, d.slow, d.fast) for d in cx.diffs]:
        raise InternalMismatch(f"replay of the recorded {cx.role} counterexample does not show "
                               "the recorded difference")
    return run


def _cols(line: str) -> int:
    return len(line.expandtabs(8))


def _wrap(text: str, first: str, more: str) -> list[str]:
    """``text`` filled to :data:`C_WIDTH` columns after the prefixes ``first`` / ``more``."""
    width = C_WIDTH - _cols(more)
    lines = textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False) or [""]
    return [((first if i == 0 else more) + ln).rstrip() for i, ln in enumerate(lines)]


def _block(paragraphs: list[str | list[str]], indent: str = "") -> list[str]:
    """A kernel-style ``/* ... */`` block: strings are filled paragraphs (``- `` items get a
    hanging indent), lists are verbatim lines, an empty string is a blank comment line."""
    out = [indent + "/*"]
    for p in paragraphs:
        if isinstance(p, list):
            out += [(indent + " * " + ln).rstrip() for ln in p]
        elif p == "":
            out.append(indent + " *")
        else:
            out += _wrap(p, indent + " * ", indent + (" *   " if p.startswith("- ") else " * "))
    return [*out, indent + " */"]


def _c_comment(text: str, indent: str = "") -> list[str]:
    """``/* text */`` on one line if it fits, else a block."""
    one = f"{indent}/* {text} */"
    return [one] if _cols(one) <= C_WIDTH else _block([text], indent)


def _define(name: str, value: str, comment: str = "") -> list[str]:
    """``#define NAME<tabs>VALUE`` with the value at :data:`_DEFINE_COL` (or the next tab
    stop), and a trailing comment if it fits (else on the line before)."""
    head = f"#define {name}"
    tabs = max(1, -(-(_DEFINE_COL - len(head)) // 8)) if len(head) < _DEFINE_COL else 1
    line = head + "\t" * tabs + value
    if not comment:
        return [line]
    tail = f"\t/* {comment} */"
    if _cols(line + tail) <= C_WIDTH:
        return [line + tail]
    return [*_c_comment(comment), line]


def _word_fields(L: Layout, word: int, page_index: int | None) -> str:
    """The fields in word ``word`` of struct page: ``@48 _mapcount/page_type, @52 _refcount``
    (the folio overlay names of this page included; a name spanning several atoms is shown
    once)."""
    out: list[str] = []
    seen: set[str] = set()
    for atom in L.atoms:
        if atom.offset // 8 != word:
            continue
        names = atom.names_for(page_index)
        shown = [n for n in [names[0]] + [n for n in names[1:] if n.startswith("folio.")]
                 if n not in seen]
        seen.update(shown)
        if shown:
            out.append(f"@{atom.offset} {'/'.join(shown)}")
    return ", ".join(out)


def _hex(v: int, nbytes: int) -> str:
    return f"{v:#0{2 + 2 * nbytes}x}"


def kunit_source(run: RunResult, cell: CellResult, ob: ObligationResult) -> str:
    """A KUnit-style C test case for ``ob``'s counterexample: the inputs as constants, the
    observed struct page's words as the slow path leaves them (``KUNIT_EXPECT_EQ`` each),
    and the fast path's differing words.  A sketch to adapt: it names what the kernel side
    must provide.  Kernel style: tabs, at most :data:`C_WIDTH` columns (a reproduce-command
    option longer than a line is kept whole).

    Raises:
        InternalMismatch: a concrete re-run does not show the recorded difference.
    """
    cx = counterexample_of(ob)
    assert cx is not None
    spec = cell_spec(run, cell, ob)
    L = Layout.from_config(_config(run))
    conc = observed_run(spec, cx)
    role = ROLES[cx.role]
    ptype = _ptype(cell)
    assert ptype is not None
    inp = cx.inputs
    fn = f"equiv_{_slug(ob.name)}_test"
    out: list[str] = ["// SPDX-License-Identifier: GPL-2.0"]

    # -- header: what this is, where it came from, what must be provided
    cmd = repro_command(run, cell, ob.name)
    page = cx.pfn is not None
    if page:
        what = "head" if cx.index["t"] == 0 else f"tail {cx.index['t']}"
        observed = f"the struct page of pfn {cx.pfn:#x} (compound {cx.index['c']}, {what})"
    else:
        observed = f"the pageblock bitmap cell of pageblock {cx.index['b']:#x}"
    if run.mutant and MUTANTS[run.mutant].compare is not None:
        other = f"the slow path with seeded bug {run.mutant} (a slow-path edit)"
    elif run.revision.startswith(COMPARE):
        other = f"{run.revision.removeprefix(COMPARE)}, a slow-path variant,"
    else:
        other = f"the fast path of revision {run.revision}"
        other += f" with seeded bug {run.mutant}" if run.mutant else ""
    setup = ("- equiv_init_range(test) below: set up a struct dev_pagemap of type "
             "EQUIV_PGMAP_TYPE with vmemmap_shift EQUIV_VMEMMAP_SHIFT over EQUIV_NR_PAGES "
             "pfns from EQUIV_START_PFN on node EQUIV_NID, with the vmemmap of the range "
             "populated (and, if EQUIV_ALTMAP, a struct vmem_altmap with the reserve and free "
             "counts below), and call memmap_init_zone_device(&NODE_DATA(EQUIV_NID)->"
             "node_zones[ZONE_DEVICE], EQUIV_START_PFN, EQUIV_NR_PAGES, pgmap); it is declared "
             "in mm/internal.h and not exported, so the test must be built into mm/ or go "
             "through memremap_pages().")
    setup += (" Return pfn_to_page(EQUIV_PFN)." if page else
              " Then equiv_pageblock_bits(test) returns the pageblock flags of "
              "EQUIV_PAGEBLOCK_PFN with every bit the model keeps (migratetype bits 0..2, "
              "PB_compact_skip, PB_migrate_isolate: get_pfnblock_flags_mask()).")
    early = (", ".join(f"{s:#x} {'early' if e else 'not early'}"
                       for s, e in sorted(cx.early_sections.items())) or "none asked")
    addrs = (f"pgmap {inp.get('pgmap', 0):#x}, vmemmap_base {inp.get('vmemmap_base', 0):#x}, "
             f"PAGE_OFFSET {inp.get('page_offset', 0):#x}")
    layout = (f"{run.layout_note}; the word values hold only for that layout" if page else
              f"pageblock_order {_config(run).PAGEBLOCK_ORDER}")
    out += _block([
        f"KUnit sketch generated by equiv (python -m equiv.proofs --emit-tests) from its "
        f"counterexample to {_what(run, cell, ob)}.",
        "",
        "Found by:",
        _command_lines(cmd),
        "",
        f"For the inputs below it states {observed} as the slow path leaves it "
        "(memmap_init_zone_device(), memmap_init_compound() and __init_zone_device_page() "
        f"of mm/mm_init.c, v7.3-rc1), and where {other} differs.  The values are computed "
        "by equiv's model of the kernel, not taken from a compiled kernel.",
        "",
        "THIS IS A SKETCH TO ADAPT; it does not build as is.  To be provided:",
        setup,
        f"- the configuration the values assume (config {_config(run).name}): {layout}.",
        f"- early_section() answers as in the model: {early}.",
        *([f"- the model's example addresses ({addrs}): words built from them (folio.pgmap, "
           "compound_info, list heads) must be recomputed from the kernel's own addresses.",
           "- bytes the slow path does not write keep the initial memory's value (such words "
           "are marked below)."] if page else []),
        *(["- equiv_ref_set_events(test): how many page_ref_set tracepoint events the "
           "observed struct page got during equiv_init_range() (e.g. counted by a probe "
           "registered on the tracepoint, enabled as EQUIV_TRACEPOINT_ON says)."]
          if any(d.size == 0 for d in cx.diffs) else []),
        "",
        "Generated; do not edit.  Regenerate with the command above plus --emit-tests DIR.",
    ])
    out += ["", "#include <kunit/test.h>", "#include <linux/memremap.h>", "#include <linux/mm.h>",
            "#include <linux/mmzone.h>", ""]

    # -- the inputs
    out += _c_comment("The inputs of the counterexample.")
    out += _define("EQUIV_START_PFN", f"{inp['start_pfn']:#x}UL")
    out += _define("EQUIV_NR_PAGES", f"{inp['nr_pages']:#x}UL")
    out += _define("EQUIV_NID", f"{inp['nid']}")
    out += _define("EQUIV_PGMAP_TYPE", ptype.kname)
    out += _define("EQUIV_VMEMMAP_SHIFT", f"{cell.order}", "order of the compound pages")
    altmap = bool(inp.get("altmap_valid", False))
    out += _define("EQUIV_ALTMAP", "true" if altmap else "false",
                   "pgmap has a vmem_altmap" if altmap else "no vmem_altmap")
    if altmap:
        out += _define("EQUIV_ALTMAP_RESERVE", f"{inp['altmap_reserve']:#x}UL")
        out += _define("EQUIV_ALTMAP_FREE", f"{inp['altmap_free']:#x}UL")
    if "mobility_disabled" in inp:
        out += _define("EQUIV_MOBILITY_DISABLED", "true" if inp["mobility_disabled"] else "false",
                       "page_group_by_mobility_disabled")
    if _config(run).tracks_events:
        out += _define("EQUIV_TRACEPOINT_ON", "true" if inp.get("tracepoint_on") else "false",
                       "page_ref_set tracepoint enabled")
    if cx.irrelevant:
        names = [INPUT_NAMES.get(n) or PSEUDO_INPUTS.get(n) or n for n in cx.irrelevant]
        out += _c_comment("Any other value of these gives the same difference: "
                          + "; ".join(names) + ".")
    out.append("")

    diffs_mem = [d for d in cx.diffs if d.size > 0]
    diffs_events = [d for d in cx.diffs if d.size == 0]
    body: list[str]
    if page and isinstance(conc.slow, PageState) and isinstance(conc.fast, PageState):
        out += _page_part(L, cx, conc.slow, conc.fast, role.page_index, inp)
        body = _page_checks(L, cx, conc.slow, conc.fast, diffs_mem)
        decl = ["static struct page *equiv_init_range(struct kunit *test);"]
        decl_comment = "To be provided (see the top): initialise the range, return the " \
                       "observed struct page."
    else:
        b = cx.index["b"]
        assert isinstance(conc.slow, int) and isinstance(conc.fast, int), "a bitmap cell each"
        slow_v, fast_v = conc.slow, conc.fast
        out += _c_comment(f"The observed pageblock: bitmap cell {b:#x}, its first pfn, and its "
                          "bits as the slow path and the compared path leave them.")
        out += _define("EQUIV_PAGEBLOCK_PFN", f"{b << _config(run).PAGEBLOCK_ORDER:#x}UL")
        out += _define("EQUIV_EXPECTED_PB_BITS", f"{slow_v:#04x}UL", "slow path")
        out += _define("EQUIV_FAST_PB_BITS", f"{fast_v:#04x}UL", "fast path (differs)")
        out.append("")
        body = ["\tequiv_init_range(test);",
                "\tKUNIT_EXPECT_EQ_MSG(test, equiv_pageblock_bits(test),",
                "\t\t\t    EQUIV_EXPECTED_PB_BITS,",
                "\t\t\t    \"the fast path gives %#lx\",",
                "\t\t\t    EQUIV_FAST_PB_BITS);"]
        decl = ["static void equiv_init_range(struct kunit *test);",
                "static unsigned long equiv_pageblock_bits(struct kunit *test);"]
        decl_comment = "To be provided (see the top): initialise the range; read the " \
                       "observed pageblock's bits."
    for d in diffs_events:  # at most one: the page_ref_set event count
        out += _c_comment("page_ref_set tracepoint events of the observed struct page.")
        out += _define("EQUIV_EXPECTED_REF_SET_EVENTS", f"{d.slow}UL", "slow path")
        out += _define("EQUIV_FAST_REF_SET_EVENTS", f"{d.fast}UL", "fast path (differs)")
        out.append("")
        decl.append("static unsigned long equiv_ref_set_events(struct kunit *test);")
        decl_comment += "  Count the page_ref_set events of the observed struct page."
        body += ["\tKUNIT_EXPECT_EQ_MSG(test, equiv_ref_set_events(test),",
                 "\t\t\t    EQUIV_EXPECTED_REF_SET_EVENTS,",
                 "\t\t\t    \"page_ref_set events: the fast path emits %lu\",",
                 "\t\t\t    EQUIV_FAST_REF_SET_EVENTS);"]

    out += [*_c_comment(decl_comment), *decl, ""]
    out += [f"static void {fn}(struct kunit *test)", "{", *body, "}", ""]
    suite = _slug(f"equiv_{ptype.name}_o{cell.order}_{ob.name}")
    out += ["static struct kunit_case equiv_test_cases[] = {", f"\tKUNIT_CASE({fn}),", "\t{}",
            "};", "", "static struct kunit_suite equiv_test_suite = {",
            f"\t.name = \"{suite}\",", "\t.test_cases = equiv_test_cases,", "};", "",
            "kunit_test_suite(equiv_test_suite);", "",
            f"MODULE_DESCRIPTION(\"equiv counterexample: {ob.name}, order {cell.order}\");",
            "MODULE_LICENSE(\"GPL\");"]
    return "\n".join(out) + "\n"


def _command_lines(cmd: str) -> list[str]:
    """A shell command as comment lines within :data:`C_WIDTH` columns (continued with
    backslashes; an option and its value stay together, so only an option longer than a
    line, such as a long ``--kconfig`` path, exceeds the width)."""
    words = cmd.split(" ")
    parts: list[str] = []
    for wd in words:
        if parts and not wd.startswith("-") and parts[-1].startswith("-") and " " not in parts[-1]:
            parts[-1] += " " + wd
        else:
            parts.append(wd)
    width = C_WIDTH - len(" * ") - 2
    lines, cur = [], "  "
    for p in parts:
        if cur.strip() and len(cur) + 1 + len(p) > width:
            lines.append(cur + " \\")
            cur = "    " + p
        else:
            cur += (" " if cur.strip() else "") + p
    return [*lines, cur]


def _page_part(L: Layout, cx: Counterexample, slow: PageState, fast: PageState,
               page_index: int | None, inp: dict[str, int | bool]) -> list[str]:
    """The observed page's constants: its pfn, the slow path's words, the fast path's
    differing words."""
    assert cx.pfn is not None and slow.origin is not None
    sb, fb = int(slow.bits), int(fast.bits)
    mask = (1 << 64) - 1
    what = "head" if cx.index["t"] == 0 else f"tail {cx.index['t']}"
    out = _c_comment(f"The observed struct page: compound {cx.index['c']}, {what}.")
    out += _define("EQUIV_PFN", f"{cx.pfn:#x}UL")
    out += ["", *_c_comment(f"The observed struct page as the slow path leaves it "
                            f"({L.nwords} words).")]
    out.append(f"static const unsigned long equiv_expected[{L.nwords}] = {{")
    for w in range(L.nwords):
        val = (sb >> (64 * w)) & mask
        note = _word_fields(L, w, page_index)
        if val == inp.get("pgmap"):
            note += " (= pgmap)"
        if any(not slow.origin[i] for i in range(8 * w, 8 * w + 8)):
            note += " (bytes not written by the slow path: initial memory)"
        out += _c_comment(f"word {w}: {note}", "\t")
        out.append(f"\t{_hex(val, 8)}UL,")
    out.append("};")
    out.append("")
    differing = [w for w in range(L.nwords) if (sb >> (64 * w)) & mask != (fb >> (64 * w)) & mask]
    fields = [f"- {_field_summary(d)}" for d in cx.diffs]
    out += _block(["Where the fast path differs, in equiv's model, for the same inputs "
                   "(differing fields, then the fast path's words):", *fields])
    for w in differing:
        out += _define(f"EQUIV_FAST_WORD_{w}", f"{_hex((fb >> (64 * w)) & mask, 8)}UL",
                       f"word {w}")
    out.append("")
    return out


def _page_checks(L: Layout, cx: Counterexample, slow: PageState, fast: PageState,
                 diffs: list[FieldDiff]) -> list[str]:
    """The test body: one ``KUNIT_EXPECT_EQ`` per word of the observed struct page (with a
    message naming the fast path's value on the words where it differs)."""
    sb, fb = int(slow.bits), int(fast.bits)
    mask = (1 << 64) - 1
    out = ["\tconst unsigned long *w;", "",
           "\tw = (const unsigned long *)equiv_init_range(test);",
           "\tKUNIT_ASSERT_NOT_NULL(test, w);"]
    for i in range(L.nwords):
        if (sb >> (64 * i)) & mask == (fb >> (64 * i)) & mask:
            out.append(f"\tKUNIT_EXPECT_EQ(test, w[{i}], equiv_expected[{i}]);")
            continue
        names = ", ".join(d.names[0] for d in diffs if d.offset // 8 == i)
        msg = f"\t\t\t    \"{names}: the fast path gives %#lx\","
        if _cols(msg) > C_WIDTH:
            msg = f"\t\t\t    \"word {i}: the fast path gives %#lx\","
        out += [f"\tKUNIT_EXPECT_EQ_MSG(test, w[{i}], equiv_expected[{i}],", msg,
                f"\t\t\t    EQUIV_FAST_WORD_{i});"]
    return out


# ---- all files of a run ----------------------------------------------------------------------


def emitted_files(run: RunResult) -> list[tuple[str, str]]:
    """(file name, contents) of every test ``--emit-tests`` writes for ``run``: a pytest
    file and a KUnit sketch per counterexample, in matrix order."""
    out: list[tuple[str, str]] = []
    for cell, ob in refuted(run):
        name = stem(run, cell, ob)
        out += [(f"{name}.py", pytest_source(run, cell, ob)),
                (f"{name}.kunit.c", kunit_source(run, cell, ob))]
    return out


__all__ = ["C_WIDTH", "cell_spec", "emitted_files", "kunit_source", "observed_run",
           "pytest_source", "refuted", "stem"]

"""The configuration a ``--linux`` run proves: the one the tree prepared.

:func:`as_prepared` prepares the tree's generated headers for the configuration asked
(:func:`~equiv.zone_device.source.files.headers_for`: a ``--kconfig`` ``.config`` as given,
or a preset merged over ``make defconfig``; nothing forced), then makes the hand model's
configuration follow what the tree's Kconfig set (each boolean the model reads that ``make
olddefconfig`` set otherwise) and what the tree's text says of the deduplicated vmemmap
(:func:`dedup_rule`: ``vmemmap_can_optimize()`` as clang compiles it), and says so for
the report.
"""

from __future__ import annotations

import re

from attrs import evolve

from equiv.config import KCONFIG_BOOLS, Config
from equiv.engine.errors import InputError
from equiv.linux import kbuild, kconfig
from equiv.linux.ktree import KernelTree, text
from equiv.zone_device.source.ctyped import typed_for
from equiv.zone_device.source.files import headers_for, prepared_notes
from equiv.zone_device.source.standins import normalised


def as_prepared(tree: KernelTree, cfg: Config) -> tuple[Config, tuple[str, ...]]:
    """``cfg`` as the tree ``tree`` (read: :func:`~equiv.zone_device.source.files.load_tree`)
    prepared it (:func:`headers_for`), with the headers
    it is read with from then on (``Config.headers``): each boolean the model reads
    (:data:`equiv.config.KCONFIG_BOOLS`) that ``make olddefconfig`` set otherwise than
    asked takes the prepared ``.config``'s value (a symbol the tree's Kconfig lacks, such
    as 6.12's ``MM_ID``, keeps the configuration's), so that the layout, the deduplicated
    vmemmap and the scenario are those of the configuration the compiler saw; and what
    the report says of it (:func:`prepared_notes`, then the model's values that moved).

    Raises:
        InputError: as :func:`headers_for`, or the prepared configuration is not one the
            model can take (:meth:`~equiv.config.Config.validate`).
    """
    headers = headers_for(tree.root, cfg)
    notes = prepared_notes(headers)
    rec = kbuild.record(headers)
    config = headers.build / ".config"
    moved: dict[str, bool] = {}
    if rec and config.is_file():
        got = kconfig.values(config.read_text(errors="replace"))
        left = rec.get("left_out") or []
        assert isinstance(left, list)
        lacks = {str(n) for n in left}
        for f in KCONFIG_BOOLS:
            sym = f"CONFIG_{f}"
            value = got.get(sym, "n") in ("y", "m")
            if sym not in lacks and value != getattr(cfg, f):
                moved[f] = value
    out = evolve(cfg, headers=headers, **moved)  # type: ignore[arg-type]
    dedup, why = dedup_rule(tree, out)
    if dedup != out.ARCH_WANT_OPTIMIZE_DAX_VMEMMAP:
        moved["ARCH_WANT_OPTIMIZE_DAX_VMEMMAP"] = dedup
        out = evolve(out, ARCH_WANT_OPTIMIZE_DAX_VMEMMAP=dedup)
    out, numbers = _tree_numbers(tree, out)
    try:
        out = out.validate()
    except InputError as e:
        raise InputError(f"config {cfg.name} as linux {rec.get('version', '?')} prepared it: "
                         f"{e}") from None
    if moved:
        notes += ("the model follows the prepared configuration: "
                  + ", ".join(f"{f}={'y' if v else 'n'}" for f, v in moved.items()),)
    notes += numbers
    notes += ("deduplicated vmemmap (struct pages of a compound past the first "
              "VMEMMAP_RESERVE_NR share storage when there is no altmap): "
              + ("yes" if dedup else "no, every struct page its own") + f": {why}",)
    return out, notes


#: the configuration's numbers the scenario and the assumptions use (``range-physmem``,
#: ``nid``, the section and pageblock arithmetic), by the macro whose value clang gives
NUMBERS = {"PAGE_SHIFT": "PAGE_SHIFT", "SECTION_SIZE_BITS": "SECTION_SIZE_BITS",
           "PAGEBLOCK_ORDER": "pageblock_order", "NODES_SHIFT": "NODES_SHIFT",
           "MAX_PHYSMEM_BITS": "MAX_PHYSMEM_BITS"}


def _tree_numbers(tree: KernelTree, cfg: Config) -> tuple[Config, tuple[str, ...]]:
    """``cfg`` with each of :data:`NUMBERS` that clang evaluates in the tree (under
    ``cfg.headers``) taken from it, and the lines the report prints: the values taken and
    where each is defined, and those the tree has no C constant for (x86's
    ``MAX_PHYSMEM_BITS`` with 5-level paging is decided at boot), which keep the
    configuration's value and are named as such.  ``NODES_SHIFT`` counts only with NUMA
    (without it the model has one node)."""
    typed = typed_for(tree, cfg)
    took: list[str] = []
    kept: list[str] = []  # "macro (why) = the configuration's value"
    moved: dict[str, int] = {}
    for f, macro in NUMBERS.items():
        if f == "NODES_SHIFT" and not cfg.NUMA:
            continue
        c = typed.constant(macro)
        if c is None or c.value is None:
            why = "not defined" if c is None else f"{c.where}: no C constant"
            kept.append(f"{macro} ({why}) = {getattr(cfg, f)}")
            continue
        took.append(f"{macro}={c.value} ({c.where})")
        if c.value != getattr(cfg, f):
            moved[f] = c.value
    out = evolve(cfg, **moved) if moved else cfg  # type: ignore[arg-type]
    lines: tuple[str, ...] = (
        "the scenario's numbers are the tree's, as clang evaluates them: " + ", ".join(took),)
    if moved:
        lines += ("of which the configuration said otherwise: "
                  + ", ".join(f"{f} {getattr(cfg, f)} -> {v}" for f, v in moved.items()),)
    if kept:
        lines += ("the configuration's values kept, the tree giving none: "
                  + ", ".join(kept),)
    return out, lines


#: a ``vmemmap_can_optimize()`` that is false whatever it is given, as the kernel writes
#: it where the arch cannot deduplicate (a function returning false, or 6.1's macro)
_NEVER = re.compile(r"\{ return (false|0); \}|\(?\(\(void\) ?\(altmap\), ?\(void\) ?\(pgmap\), "
                    r"?(false|0)\)\)?|\(?(false|0)\)?")


def dedup_rule(tree: KernelTree, cfg: Config) -> tuple[bool, str]:
    """Whether ``tree`` under ``cfg`` (prepared: ``cfg.headers``) maps the
    struct pages of a compound past the first ``VMEMMAP_RESERVE_NR`` vmemmap pages onto
    shared storage, read from the tree's ``vmemmap_can_optimize()`` as clang compiles it
    (its ``#if`` branch is clang's): false when that definition is false whatever it is
    given, else true; and the sentence that says so.  6.12 guards it with
    ``CONFIG_ARCH_WANT_OPTIMIZE_DAX_VMEMMAP``, 6.1 with
    ``CONFIG_ARCH_WANT_HUGETLB_PAGE_OPTIMIZE_VMEMMAP``: the text says which.

    Raises:
        InputError: the tree has no such definition (the rule is not read from it).
    """
    branches = typed_for(tree, cfg).branches(tree)
    name, seen = "vmemmap_can_optimize", []
    for _ in range(4):  # #define vmemmap_can_optimize __vmemmap_can_optimize
        d = tree.find(name, branches, "function") or tree.find(name, branches, "macro")
        if d is None:
            raise InputError(f"{tree.root} (linux {tree.version}) has no {name}() under config "
                             f"{cfg.name}: which struct pages share storage (the "
                             "deduplicated vmemmap) is not read from this tree")
        seen.append(d.where)
        body = d.node.child_by_field_name("body" if d.kind == "function" else "value")
        got = normalised(text(d.src, body)) if body is not None else ""
        if d.kind == "macro" and re.fullmatch(r"\w+", got) and got not in ("false", "0"):
            name = got
            continue
        never = bool(_NEVER.fullmatch(got))
        return not never, (f"{'false whatever it is given' if never else 'may be true'}: "
                           f"vmemmap_can_optimize() as clang compiles it ({', '.join(seen)})")
    raise InputError(f"{tree.root}: vmemmap_can_optimize() is an alias of an alias past "
                     f"{', '.join(seen)}: the deduplicated vmemmap is not read from it")


__all__ = ["as_prepared", "dedup_rule"]

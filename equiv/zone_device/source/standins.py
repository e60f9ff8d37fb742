"""Which kernel texts each trusted stand-in of the C interpreter was checked against.

A stand-in (:data:`equiv.zone_device.source.cinterp.TRUSTED`) replaces a helper the
interpreter does not run from the tree's text with a model.  Where the helper has C text
(``set_pageblock_migratetype`` in mm/page_alloc.c, ``early_section`` in mmzone.h, ...), the
model paraphrases that text as it was read in some kernel versions; on another tree the
text may say something else.  So each such stand-in names here the definitions its model
paraphrases (:attr:`Checked.texts`) and, for each version it was checked against, the
digest of those texts as that version's compiler reads them (:func:`digest`: the
definitions clang compiles under the configuration, comments and whitespace dropped).

Before a stand-in is applied, the tree's own definitions are read and digested
(:meth:`equiv.zone_device.source.cinterp.Interp.stand_in_checked`): a digest no checked
version has makes the run UNKNOWN naming the definition, never a stand-in applied to text
it was not checked against.  A definition the tree does not have (the text moved or was
renamed) is treated the same way.

The stand-ins with no kernel text to compare (assembly, functions made by token-pasting
macros, C's own rules, the proof's inputs) are in :data:`NO_TEXT` with why.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from attrs import frozen


@frozen
class Checked:
    """A stand-in whose model paraphrases kernel text."""

    #: the definitions (functions, macros) the model paraphrases, the called one first
    texts: tuple[str, ...]
    #: digest of those texts (:func:`digest`) -> the kernel versions it was read in
    digests: Mapping[str, tuple[str, ...]]

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(v for vs in self.digests.values() for v in vs)


def normalised(text: str) -> str:
    """``text`` without its comments, whitespace runs made one space."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return " ".join(text.split())


def digest(texts: Sequence[str]) -> str:
    """16 hex digits of SHA-256 over the normalised texts, in order."""
    h = hashlib.sha256()
    for t in texts:
        h.update(normalised(t).encode() + b"\n")
    return h.hexdigest()[:16]


#: Debian's trees the digests were read from (tests/test_standins.py recomputes them: with
#: x86_64-default on 6.12, Debian's own configuration on 6.1); 6.1's folio_test_large takes
#: a folio that is not const, the same test of PG_head
V612 = "6.12.118"
V61 = "6.1.192"

#: the stand-ins whose model paraphrases kernel text, by the name the interpreter traps
CHECKED: dict[str, Checked] = {
    # slow_v612y.set_pageblock_migratetype_612: set_pfnblock_flags_mask() on the migratetype
    # bits of the pfn's pageblock word (4 bits per pageblock, PB_migratetype_bits 3)
    "set_pageblock_migratetype": Checked(
        ("set_pageblock_migratetype", "set_pfnblock_flags_mask", "get_pageblock_bitmap",
         "pfn_to_bitidx", "MIGRATETYPE_MASK", "PB_migratetype_bits"),
        {"d3621da1f1ab8d2e": (V612, V61)}),
    "pfn_to_page": Checked(("pfn_to_page", "__pfn_to_page"),
                           {"f64d8cf171d9a005": (V612, V61)}),
    "early_section": Checked(("early_section",), {"91b1f077ebdeaef7": (V612, V61)}),
    "__pfn_to_section": Checked(("__pfn_to_section",), {"2e0477de86e094a4": (V612, V61)}),
    "folio_test_large": Checked(("folio_test_large",), {"aafc7f190223f312": (V612,),
                                                        "b2414ed43825ac21": (V61,)}),
    "page_folio": Checked(("page_folio",), {"8dae1b8755365df0": (V612, V61)}),
    "__va": Checked(("__va",), {"550ca427ee263ce4": (V612, V61)}),
}

#: the stand-ins with no kernel C text to check, and why
NO_TEXT: dict[str, str] = {
    "__SetPage*": "made by page-flags.h's token-pasting PAGEFLAG macros: no text of theirs",
    "memcpy": "the arch's string routine (assembly)",
    "memcpy_flushcache": "the arch's non-temporal copy (assembly)",
    "memset": "the arch's string routine (assembly)",
    "WARN_ON_ONCE, WARN_ON, unlikely, likely": "the arch's bug table (inline assembly) and "
                                               "__builtin_expect",
    "jiffies, jiffies_to_msecs": "only printed",
    "pgmap->*, altmap->*, zone->*, pgdat->*": "the proof's inputs",
    "init_pageblock_migratetype": "the hand model's, for the 2026 mm tree's name; no "
                                  "checked tree has its text (a tree that does is UNKNOWN "
                                  "here until it is checked)",
    "kasan_enabled": "a static key under KASAN_HW_TAGS; checked against no text here",
    "page_kasan_tag_set": "a try_cmpxchg() loop (inline assembly); checked against no text",
    "cond_resched, pr_debug, BUILD_BUG_ON, compiletime_assert, VM_BUG_ON*, fallthrough":
        "no effect on the modelled memory whatever their text (scheduling, printing, "
        "compile-time and debug-only checks)",
}


def checked_versions(name: str) -> str:
    """What ``--list`` says of the stand-in ``name``: the versions its text was checked
    against, or why it has no text to check."""
    if name in CHECKED:
        c = CHECKED[name]
        return f"checked against the text of {', '.join(sorted(set(c.versions)))} " \
               f"({', '.join(c.texts)})"
    if name in NO_TEXT:
        return f"no kernel text to check: {NO_TEXT[name]}"
    return "a modelling choice, not kernel text"


__all__ = ["CHECKED", "NO_TEXT", "Checked", "checked_versions", "digest", "normalised"]

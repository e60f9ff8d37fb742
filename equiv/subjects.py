"""The registry: the one place that names the subjects equiv proves.

Each entry maps a subject's name to its front module, which exposes ``SUBJECT`` (an
:class:`equiv.engine.subject.Subject`) and imports nothing heavy; a subject's model is
imported only when one of its runs starts.  Adding a subject is writing its package and
adding one line here.

* ``zone-device`` - "mm: optimize zone-device memmap initialization" (struct page template
  copies against ``memmap_init_zone_device`` of mm/mm_init.c); the card's model at the top of
  :mod:`equiv` and :mod:`equiv.zone_device`, front :mod:`equiv.zone_device.cli`.
* ``vmap`` - "mm/vmalloc: Speed up ioremap, vmalloc and vmap with contiguous memory"
  (batched CONT_PTE / PMD mapping against the per-page paths of mm/vmalloc.c);
  :mod:`equiv.vmap`, front :mod:`equiv.vmap.cli`.
"""

from __future__ import annotations

import importlib

from equiv.engine.errors import lookup
from equiv.engine.subject import Subject

#: name -> the front module exposing ``SUBJECT`` (imported on use)
REGISTRY: dict[str, str] = {"zone-device": "equiv.zone_device.cli", "vmap": "equiv.vmap.cli"}
#: the subject a run proves without --subject (the first registered)
DEFAULT = next(iter(REGISTRY))


def subject(name: str) -> Subject:
    """The registered subject ``name``; an unknown name lists the valid ones."""
    front = importlib.import_module(lookup(REGISTRY, name, "subject", more=", all"))
    registered: Subject = front.SUBJECT
    return registered


def every() -> list[Subject]:
    """Every registered subject, in registration order."""
    return [subject(name) for name in REGISTRY]


def selected(name: str) -> list[Subject]:
    """``--subject NAME`` or ``all`` (every subject, in registration order)."""
    return every() if name == "all" else [subject(name)]


__all__ = ["DEFAULT", "REGISTRY", "every", "selected", "subject"]

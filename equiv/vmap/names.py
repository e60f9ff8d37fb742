"""The names the vmap subject's options choose from: the mapping paths and the named trylock
choice.  Imports nothing, so the command line can offer them without loading the model
(:mod:`equiv.vmap.inputs` and :mod:`equiv.vmap.revisions` re-export them)."""

from __future__ import annotations

#: the mapping paths, one matrix column each
PATHS = ("ioremap", "vmalloc", "vmap")
#: the named choice of POST-C1's mmap_read_trylock (:attr:`~equiv.vmap.revisions.Revision.trylock`),
#: default first
TRYLOCKS = ("succeeds", "oracle")

__all__ = ["PATHS", "TRYLOCKS"]

"""Readers of kernel artefacts, with no subject knowledge: a kernel tree's C text through
tree-sitter with its macros and ``#ifdef``\\s (:mod:`~equiv.linux.ktree`), a ``.config``
(:mod:`~equiv.linux.kconfig`) and raw BTF (:mod:`~equiv.linux.btf`).  Rule: no module here
imports a subject; the import test checks it.
"""

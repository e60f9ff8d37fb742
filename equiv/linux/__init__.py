"""Readers of kernel artefacts, with no subject knowledge: a kernel tree's C text through
tree-sitter with its macros and ``#ifdef``\\s (:mod:`~equiv.linux.ktree`), the same C typed
by clang's front end (:mod:`~equiv.linux.cfront`: layouts, sizes, conversions), which
``#if`` branches clang took (:mod:`~equiv.linux.skipped`), which ``.c`` file may define a
function another calls (:mod:`~equiv.linux.callgraph`), a configuration's generated
headers and C flags from the tree's own build (:mod:`~equiv.linux.kbuild`), a
``.config`` (:mod:`~equiv.linux.kconfig`), patches and series applied to a copy of a tree
(:mod:`~equiv.linux.patch`) and raw BTF (:mod:`~equiv.linux.btf`).  Rule: no module here
imports a subject; the import test checks it.
"""

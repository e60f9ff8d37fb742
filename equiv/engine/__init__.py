"""The engine: what every subject's proofs are built and decided with, and nothing of any
subject.

Bit-vectors in two domains (:mod:`~equiv.engine.bv`), the error tree and choice parsers
(:mod:`~equiv.engine.errors`), verdicts and exit codes (:mod:`~equiv.engine.verdict`),
result records (:mod:`~equiv.engine.results`), deciding a query (:mod:`~equiv.engine.query`,
:mod:`~equiv.engine.solvers`), the on-disk result cache (:mod:`~equiv.engine.cache`), the
cell runner (:mod:`~equiv.engine.runner`), the self-test's result types
(:mod:`~equiv.engine.selftest`) and the interface a subject implements
(:mod:`~equiv.engine.subject`).  Rule: no module here imports a subject (the zone-device
model in the top-level package, or :mod:`equiv.vmap`); the import test checks it.
"""

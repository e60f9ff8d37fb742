"""The zone-device subject's kernel-source tooling (``--linux`` and ``--btf``): the C
interpreter over struct pages (:mod:`~equiv.source.cinterp`), the proof derived from a
tree's own slow path (:mod:`~equiv.source.fidelity`), the model-vs-source drift report
(:mod:`~equiv.source.drift`, :mod:`~equiv.source.drift_tables`,
:mod:`~equiv.source.src_layout`), the 6.12.y slow path (:mod:`~equiv.source.slow_v612y`),
the layout-vs-BTF check (:mod:`~equiv.source.layout_check`), the files and macros read
(:mod:`~equiv.source.files`), the option handling (:mod:`~equiv.source.cli`) and their
reports (:mod:`~equiv.source.present`).  It builds on the zone-device model (the top-level
modules) and on the readers in :mod:`equiv.linux`.
"""

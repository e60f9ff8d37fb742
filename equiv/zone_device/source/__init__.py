"""The zone-device subject's kernel-source tooling (``--linux`` and ``--btf``): the C
interpreter over struct pages (:mod:`~equiv.zone_device.source.cinterp`), the proof derived from a
tree's own slow path (:mod:`~equiv.zone_device.source.fidelity`), the model-vs-source drift report
(:mod:`~equiv.zone_device.source.drift`, :mod:`~equiv.zone_device.source.drift_tables`,
:mod:`~equiv.zone_device.source.src_layout`), the 6.12.y slow path
(:mod:`~equiv.zone_device.source.slow_v612y`),
the layout-vs-BTF check (:mod:`~equiv.zone_device.source.layout_check`), the files and macros read
(:mod:`~equiv.zone_device.source.files`), the option handling (:mod:`~equiv.zone_device.source.cli`) and their
reports (:mod:`~equiv.zone_device.source.present`).  It builds on the zone-device model (the top-level
modules) and on the readers in :mod:`equiv.linux`.
"""

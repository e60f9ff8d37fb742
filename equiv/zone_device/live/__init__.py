"""The live check (``--live``, ``--live-from``): a real kernel's ZONE_DEVICE struct pages
against the model.

It fetches Debian's prebuilt 6.12.117 kernel, builds the project's own dump module against
it, boots the kernel, creates pmem namespaces, dumps what the kernel wrote and compares it,
byte for byte, with the model's concrete prediction (the hand model's 6.12.y slow path) and
with the kernel's own C text interpreted.  It belongs to the zone-device subject: it runs
the card's model (:mod:`equiv.memmap`, :mod:`equiv.page_model`, :mod:`equiv.loops`) and
the C interpreter of :mod:`equiv.zone_device.source`.

    cli.py         the options of ``--live`` and ``--live-from``, checked before anything runs
    run.py         the whole check (fetch, build, boot, dump, compare) and the record of a run
    present.py     its reports: text, JSON, JUnit XML, SARIF
    packages.py    the pinned Debian 6.12.117 packages: downloaded and unpacked once (cached)
    build.py       builds module/equiv_dump.c against the unpacked headers (cached by source hash)
    host.py        the host tools each step needs, and the command that installs the missing ones
    boot.py        boots the kernel with virtme-ng, creates the namespaces, dumps each one
    dump.py        the dump files parsed into records
    compare.py     a dump against the model's prediction for the same inputs, over the bytes the
                   model writes, pointers by what they mean
    ctext.py       a second prediction: the kernel's C text interpreted on the dump's inputs,
                   on the first compound of a namespace
    kbuild.py      builds Debian's kernel from its source package, with or without patches
    crosscheck.py  two kernels' dumps of the same namespace compared with each other
    __main__.py    ``python -m equiv.zone_device.live``: fetch, build (and boot with ``--boot``),
                   print the paths
    module/        equiv_dump.c (GPL) and its Kbuild, Makefile: debugfs files with the layout
                   constants, the pgmap and altmap, the raw struct pages and the pageblock bits
                   of a pfn range

Bad input, a package the archive no longer serves, a missing host tool or a failed boot is
an :class:`equiv.engine.errors.InputError` (one line, exit 3).
"""

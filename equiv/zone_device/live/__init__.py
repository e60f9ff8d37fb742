"""The live check (issue 16, its first layers): a real kernel's ZONE_DEVICE struct pages.

Not a subject: it fetches Debian's prebuilt kernel, builds the project's own dump module
against it, boots the kernel, creates pmem namespaces and dumps what the kernel wrote; the
comparison with the model's concrete prediction (the hand model's 6.12.y slow path) is in
compare.py; the ``--live`` command and its reports are not written yet.

    packages.py   the pinned Debian 6.12.117 packages: download, unpack, point the headers'
                  Makefile at the unpacked copy (cached, idempotent)
    build.py      builds module/equiv_dump.c against the unpacked headers (cached by source hash)
    host.py       the host tools each step needs, and the command that installs the missing ones
    module/       equiv_dump.c (GPL): debugfs files with the layout constants, the pgmap and
                  altmap, the raw struct pages and the pageblock bits of a pfn range
    boot.py       boots the kernel with virtme-ng (KVM only when a probe boot works, else
                  software emulation), creates the namespaces, dumps each one
    dump.py       the dump files parsed into records
    compare.py    a dump against the model's prediction for the same inputs, byte for byte
                  over the bytes the model writes, pointers by what they mean

``python -m equiv.zone_device.live [--boot MODE-ALIGN-MAP...]`` runs the fetch and the build (and the
boot) and prints the paths; errors are
:class:`equiv.engine.errors.InputError` (one line, exit 3).
"""

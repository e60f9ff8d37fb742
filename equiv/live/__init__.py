"""The live check's first layer (issue 16): a real kernel's ZONE_DEVICE struct pages.

Not a subject: it fetches Debian's prebuilt kernel and builds the project's own dump module
against it, so that a later layer can boot that kernel and compare what it wrote with the
model's prediction.

    packages.py   the pinned Debian 6.12.117 packages: download, unpack, point the headers'
                  Makefile at the unpacked copy (cached, idempotent)
    build.py      builds module/equiv_dump.c against the unpacked headers (cached by source hash)
    host.py       the host tools each step needs, and the command that installs the missing ones
    module/       equiv_dump.c (GPL): debugfs files with the layout constants, the pgmap and
                  altmap, the raw struct pages and the pageblock bits of a pfn range

``python -m equiv.live`` runs the fetch and the build and prints the paths; errors are
:class:`equiv.engine.errors.InputError` (one line, exit 3).
"""

"""A second prediction for the live check: the kernel's own C text, interpreted.

The hand model (:mod:`equiv.zone_device.live.compare`) predicts every struct page of a namespace.  This
module adds a second opinion from the text of the same kernel: ``memmap_init_zone_device()``
of Debian's ``linux-source-6.12`` (the source package of the binary that was booted, the
files :data:`equiv.zone_device.source.files.FILES`), run by the C interpreter of
:mod:`equiv.zone_device.source`
(:func:`equiv.zone_device.source.common.run_tree`, loops as written) on the dump's own inputs,
in the concrete domain.  The interpreter takes a few milliseconds per struct page, so it is run on
the first compound of the namespace only (the first :data:`ORDER0_PAGES` pages at order 0),
and only where one compound is at most :data:`MAX_PAGES` struct pages or its vmemmap is
deduplicated (then the C writes 128 of them); every struct page it writes there is compared
byte for byte, in the bytes it wrote.  Pageblocks are left to the hand model's comparison.

The tree: :func:`source_tree` unpacks the needed files from
``/usr/src/linux-source-6.12.tar.xz`` (the Debian package ``linux-source-6.12``) into
``<user cache>/equiv/linux-source-6.12`` once (about a minute), and :func:`ctext_compare`
checks its version is the booted kernel's.
"""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from attrs import evolve, frozen

from equiv.config import Config
from equiv.engine.bv import CBV
from equiv.engine.errors import InputError
from equiv.memmap import VMEMMAP_RESERVE_NR, MemoryType, Scenario, concrete_inputs
from equiv.page_model import PB_BITS, PageState
from equiv.zone_device.live import packages
from equiv.zone_device.live.compare import LiveDiff, driver_step, field_diffs
from equiv.zone_device.live.dump import Dump

#: the Debian package and file of the kernel source
TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
TOP = "linux-source-6.12"
#: struct pages interpreted at order 0
ORDER0_PAGES = 64
#: the largest compound interpreted in full
MAX_PAGES = 512
#: what produced this prediction (printed with every result)
PREDICTION = ("C text: memmap_init_zone_device() of linux-source-6.12 interpreted "
              "(equiv/zone_device/source), loops as written, on the first compound")


@frozen
class CTextResult:
    """The C text's prediction against the dump: the pfns compared, how many struct pages,
    the differing fields; or the reason it was not run (``reason``)."""

    first_pfn: int = 0
    end_pfn: int = 0
    compared: int = 0
    diffs: tuple[LiveDiff, ...] = ()
    reason: str | None = None
    tree: str = ""


def _installed_version() -> str | None:
    """The installed ``linux-source-6.12``'s Debian version (``dpkg-query``), or None."""
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", TOP],
                              capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def tarball(cache: Path | None = None) -> Path:
    """The tarball of the kernel the live check boots (``packages.DEB_VERSION`` of
    ``linux-source-6.12``): :data:`TARBALL` when the installed package is that version;
    else that version's ``.deb``, downloaded with ``apt-get download`` into the live cache
    and unpacked there (Debian's bookworm-security moves on: 6.12.118 in December 2026,
    the archive keeping the older versions); :data:`TARBALL` as it is when neither works
    (the version check of :func:`ctext_compare` then says which kernel the tree is)."""
    if _installed_version() == packages.DEB_VERSION:
        return TARBALL
    live = cache / "live" if cache is not None else packages.cache_dir()
    deb = live / "debs" / f"{TOP}_{packages.DEB_VERSION}_all.deb"
    unpacked = live / "src" / packages.DEB_VERSION
    pinned = unpacked / "usr" / "src" / TARBALL.name
    if pinned.is_file():
        return pinned
    try:
        deb.parent.mkdir(parents=True, exist_ok=True)
        if not deb.exists():
            packages.apt_download(TOP, packages.DEB_VERSION, deb.parent)
        if deb.exists():
            unpacked.parent.mkdir(parents=True, exist_ok=True)  # dpkg-deb -x makes one level
            subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], capture_output=True,
                           check=False)
    except OSError:
        pass
    return pinned if pinned.is_file() else TARBALL


def source_tree(cache: Path | None = None) -> tuple[Path | None, str]:
    """The root of the unpacked files of linux-source-6.12 at the booted kernel's version
    (:func:`tarball`; extracted once into the live cache, again when the tarball changes),
    or None and why not.  ``cache`` is the ``equiv`` directory of a user cache (default:
    this user's)."""
    from equiv.linux.ktree import MAKEFILE
    from equiv.zone_device.source.files import FILES

    # beside the live cache, where the tests' linux-source-6.12 fixture unpacks it too
    root = (cache or packages.cache_dir().parent) / TOP
    want = [*FILES, MAKEFILE]
    stamp = root / ".equiv-tarball"
    src = tarball(cache)
    made_from = ""
    if src.is_file():  # another tarball (a newer package) re-extracts
        st = src.stat()
        made_from = f"{src} {st.st_size} {st.st_mtime_ns}\n"
    fresh = not made_from or (stamp.is_file() and stamp.read_text() == made_from)
    # mm/ whole: the .c files a call is followed into (mm/page_alloc.c's
    # set_pageblock_migratetype, whose text a stand-in is checked against)
    if not fresh or not all((root / f).is_file() for f in (*want, "mm/page_alloc.c")):
        if not src.is_file():
            return None, f"{TARBALL} is not installed (apt-get install {TOP})"
        names = {f"{TOP}/{f}" for f in want}
        root.parent.mkdir(parents=True, exist_ok=True)
        try:
            with tarfile.open(src, "r:xz") as tar:
                for m in tar:
                    if m.name in names or (m.name.startswith(f"{TOP}/mm/") and m.isfile()):
                        tar.extract(m, root.parent, filter="data")
        except (OSError, tarfile.TarError) as e:
            return None, f"cannot unpack {src}: {e}"
        missing = [f for f in want if not (root / f).is_file()]
        if missing:
            return None, f"{src} lacks {', '.join(missing)}"
        stamp.write_text(made_from)
    return root, ""


def ctext_compare(dump: Dump, cfg: Config, root: Path) -> CTextResult:
    """Interpret the tree at ``root`` on the dump's inputs for its first compound and compare
    the struct pages it writes with the dump's."""
    from equiv.zone_device.source.common import run_tree, side, side_layout
    from equiv.zone_device.source.files import load_tree

    kl, pg = dump.layout, dump.pgmap
    if pg is None or len(pg.ranges) != 1:
        return CTextResult(reason="no pgmap with one range")
    tree = load_tree(root)
    if tree.version != packages.UPSTREAM_VERSION:
        return CTextResult(reason=f"the tree is {tree.version}, the kernel "
                                  f"{packages.UPSTREAM_VERSION} (apt-get download "
                                  f"{TOP}={packages.DEB_VERSION} did not give that "
                                  f"version's source: see apt-cache policy {TOP})",
                           tree=str(root))
    altmap = pg.altmap_valid(kl)
    # the kernel's vmemmap_can_optimize() is false with an altmap: the model's scenario says
    # so by the option, the C text by its own test (its headers from the kernel's own config)
    model_cfg = evolve(cfg, ARCH_WANT_OPTIMIZE_DAX_VMEMMAP=False) if altmap else cfg
    sd = side("live", tree, cfg)
    L = side_layout(sd, model_cfg)
    order = pg.vmemmap_shift
    sc = Scenario(L, MemoryType(pg.type), order)
    stride = 1 << order
    dedup = sc.can_optimize_static and not altmap
    if order == 0:
        n = ORDER0_PAGES
    elif stride <= MAX_PAGES or dedup:
        n = stride
    else:
        return CTextResult(reason=f"one compound is {stride:,} struct pages, beyond the "
                                  f"interpreter's budget here ({MAX_PAGES})", tree=str(root))
    shift = kl["PAGE_SHIFT"]
    start, end = pg.ranges[0][0] >> shift, (pg.ranges[0][1] + 1) >> shift
    first = pg.first_device_pfn(kl)
    n = min(n, end - first)
    written = VMEMMAP_RESERVE_NR * sc.per_vmemmap_page if dedup else n
    inp = concrete_inputs(L, start_pfn=start, nr_pages=first - start + n, nid=0,
                          pgmap=pg.pointer, pgmap_type=pg.type,
                          altmap=(pg.altmap.reserve, pg.altmap.free) if altmap else None,
                          vmemmap_base=kl["vmemmap_base"], page_offset=kl["page_offset_base"])
    nid = 0
    for pfn in range(first, first + n):
        if pfn in dump.pages and dump.pages[pfn].read:
            nid = kl.field("NODES", dump.pages[pfn].u64(kl["offsetof_page_flags"]))
            break
    inp = evolve(inp, nid=CBV(nid, 64))
    unwritten = ((),) * L.size
    pattern = int.from_bytes(b"\x5a" * L.size, "little")
    try:
        _it, state = run_tree(sd, sc, inp, lambda _pfn: PageState(bits=CBV(pattern, 8 * L.size),
                                                                  origin=unwritten),
                              lambda _b: CBV(0, PB_BITS), None, None, summarise=False)
    except InputError as e:
        return CTextResult(reason=f"the interpreter stopped: {e}", tree=str(root))
    diffs: list[LiveDiff] = []
    compared = 0
    for pfn in range(first, first + min(n, written)):
        if pfn not in dump.pages or not dump.pages[pfn].read:
            continue
        page = state.mem.read_any(CBV(pfn, 64))
        if dump.driver:  # the driver's writes after memremap_pages(), as for the hand model
            page = driver_step(dump.driver, page, L, pfn, start, kl["vmemmap_base"],
                               kl.page_size)
        live = int.from_bytes(dump.pages[pfn].raw, "little")
        c, t = divmod(pfn - first, stride)
        diffs += field_diffs(L, kl, pg.pointer, pfn, c, t if order else None, live, page)
        compared += 1
    return CTextResult(first, first + min(n, written), compared, tuple(diffs), tree=str(root))


__all__ = ["PREDICTION", "CTextResult", "ctext_compare", "source_tree"]

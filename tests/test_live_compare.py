"""The live comparison (equiv/zone_device/live/compare.py) on small recorded dumps, without a boot.

``tests/data/live/`` is a recorded run directory of ``python -m equiv.proofs --live
--live-out RUN_DIR`` (a real boot of Debian's 6.12.117 kernel), cut down by :func:`cut_dump`
and regenerated with::

    PYTHONPATH=. python tests/test_live_compare.py RUN_DIR

    devdax-2M-dev   the first 3 compounds of a devdax 2M ``--map dev`` namespace (altmap
                    reserve 2, free 2558), from the first pfn memmap_init_zone_device() writes
    devdax-4K-mem   the first 1100 struct pages of a devdax 4K ``--map mem`` namespace (three
                    pageblocks, the last one partial)
    devdax-1G-mem   the first 300 struct pages of a devdax 1G ``--map mem`` namespace: the
                    head, tails 1..127 and the tails 128..299 read through the deduplicated
                    vmemmap
    fsdax-2M-dev    the first 600 struct pages of an fsdax ``--map dev`` namespace, from the
                    first pfn memmap_init_zone_device() writes
    config          the lines of the kernel's .config that equiv.config.from_kconfig reads
    run.json        the run's record (equiv.zone_device.live.run.RECORD), naming the cut config's hash

The ``pages`` file is stored gzipped (``pages.gz``); :func:`unpack` restores a dump directory
(``equiv.zone_device.live.dump.load`` also reads ``pages.gz`` as it is).
"""

from __future__ import annotations

import gzip
import re
import shutil
import sys
from pathlib import Path

import pytest
from attrs import evolve
from test_patch_proof import _debian_config

from equiv.config import KCONFIG_BOOLS, Config, from_kconfig
from equiv.zone_device.live.compare import ALIASED, compare, meaning
from equiv.zone_device.live.dump import HEADER_MAGIC, HEADER_SIZE, load

DATA = Path(__file__).parent / "data" / "live"
#: the dumps kept, and the pfns of each: (first pfn or None for the pgmap's first device pfn,
#: number of struct pages)
CUTS: dict[str, tuple[int | None, int]] = {"devdax-2M-dev": (None, 3 * 512),
                                           "devdax-4K-mem": (0x100000, 1100),
                                           "devdax-1G-mem": (0x100000, 300),
                                           "fsdax-2M-dev": (None, 600)}
#: the .config symbols from_kconfig reads besides KCONFIG_BOOLS
CONFIG_SYMBOLS = {*KCONFIG_BOOLS, "64BIT", "X86_64", "ARM64", "PAGE_SHIFT", "NODES_SHIFT",
                  "NR_CPUS", "SMP", "ILLEGAL_POINTER_VALUE", "PGTABLE_LEVELS",
                  *(f"PAGE_SIZE_{s}" for s in ("4KB", "16KB", "64KB"))}


def cut_dump(src: Path, dst: Path, first: int | None, nr: int) -> None:
    """Write to ``dst`` the dump ``src`` restricted to pfns ``first .. first + nr - 1``
    (``first`` None: the pgmap's first device pfn): the pages' header and records, the pgmap's
    ``pfn`` line and the pageblocks covering them; ``pages`` gzipped as ``pages.gz``."""
    d = load(src)
    assert d.pgmap is not None
    start = d.pgmap.first_device_pfn(d.layout) if first is None else first
    assert start in d.pages and start + nr - 1 in d.pages
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "layout", dst / "layout")
    pgmap = re.sub(r"(?m)^pfn \d+$", f"pfn {start}", (src / "pgmap").read_text())
    (dst / "pgmap").write_text(pgmap)
    rec = d.pages.record_size
    off = (start - d.pages.start_pfn) * rec
    head = (f"{HEADER_MAGIC} start_pfn={start} nr_pages={nr} page_size={d.pages.page_size} "
            f"record={rec}").ljust(HEADER_SIZE - 1).encode() + b"\n"
    body = d.pages.data[off:off + nr * rec]
    (dst / "pages.gz").write_bytes(gzip.compress(head + body, mtime=0))
    nb = 1 << d.layout["pageblock_order"]
    lines = [f"{b.pfn} {-1 if b.bits is None else b.bits}" for b in d.pageblocks
             if start - start % nb <= b.pfn < start + nr]
    (dst / "pageblocks").write_text("\n".join(lines) + "\n")


def cut_config(src: Path, dst: Path) -> None:
    """The lines of the .config ``src`` that :func:`from_kconfig` reads."""
    keep = [ln for ln in src.read_text().splitlines()
            if (m := re.match(r"(?:# )?CONFIG_(\w+)[= ]", ln)) and m.group(1) in CONFIG_SYMBOLS]
    dst.write_text("# cut from " + src.name + " by tests/test_live_compare.py\n"
                   + "\n".join(keep) + "\n")


def unpack(name: str, tmp: Path, edit: tuple[int, int, int] | None = None) -> Path:
    """The recorded dump ``name`` as a dump directory under ``tmp``; ``edit`` = (pfn, offset,
    xor): flip bits of one byte of that pfn's struct page."""
    out = tmp / name
    out.mkdir()
    for f in ("layout", "pgmap", "pageblocks"):
        shutil.copy(DATA / name / f, out / f)
    data = bytearray(gzip.decompress((DATA / name / "pages.gz").read_bytes()))
    if edit is not None:
        pfn, offset, xor = edit
        m = re.search(rb"start_pfn=(\d+) .* record=(\d+)", bytes(data[:HEADER_SIZE]))
        assert m
        data[HEADER_SIZE + (pfn - int(m.group(1))) * int(m.group(2)) + 16 + offset] ^= xor
    (out / "pages").write_bytes(bytes(data))
    return out


@pytest.fixture(scope="module")
def cfg() -> Config:
    """The Debian 6.12.117 configuration (the cut in tests/data/live/config)."""
    return from_kconfig(str(DATA / "config"))


def test_data_is_small() -> None:
    assert sum(f.stat().st_size for f in DATA.rglob("*") if f.is_file()) < 100_000


@pytest.mark.parametrize(("name", "roles", "blocks"), [
    ("devdax-2M-dev", {"head": 3, "tail 1": 3, "tail 2": 3, "tail >= 3": 3 * 509}, 3),
    ("devdax-4K-mem", {"page": 1100}, 3),
    ("devdax-1G-mem", {"head": 1, "tail 1": 1, "tail 2": 1, "tail >= 3": 125,
                       ALIASED: 300 - 128}, 1),
    ("fsdax-2M-dev", {"page": 600}, 2)])
def test_recorded_dump_is_clean(cfg: Config, tmp_path: Path, name: str,
                                roles: dict[str, int], blocks: int) -> None:
    d = load(unpack(name, tmp_path))
    r = compare(d, cfg)
    assert r.clean, r.summary()
    assert {x.role: x.compared for x in r.roles} == roles
    assert r.pageblocks_compared == blocks
    assert d.pgmap is not None
    assert r.inputs["nid"] == 0 and r.inputs["pgmap"] == d.pgmap.pointer
    assert r.inputs["pgmap_type"] == (3 if name.startswith("fsdax") else 4)


def test_altmap_inputs(cfg: Config, tmp_path: Path) -> None:
    r = compare(load(unpack("devdax-2M-dev", tmp_path)), cfg)
    assert (r.inputs["altmap_reserve"], r.inputs["altmap_free"], r.inputs["order"]) == (2, 2558, 9)
    assert r.first_pfn == 0x100000 + 2560 and r.end_pfn == 0x120000


@pytest.mark.parametrize(("name", "pfn", "offset", "field"), [
    # the guest is 6.12: its names (compound_head, pgmap), not the 2026 model's
    ("devdax-2M-dev", 0x100A00 + 512 + 1, 8, "compound_head"),  # tail 1 of compound 1
    ("devdax-2M-dev", 0x100A00 + 2, 16, "_deferred_list.next"),  # page[2] of compound 0
    ("devdax-2M-dev", 0x100A00 + 1024, 52, "_refcount"),  # head of compound 2
    ("devdax-4K-mem", 0x100000 + 700, 8, "pgmap"),
    ("devdax-4K-mem", 0x100000 + 3, 0, "flags")])
def test_seeded_difference_is_named(cfg: Config, tmp_path: Path, name: str, pfn: int,
                                    offset: int, field: str) -> None:
    r = compare(load(unpack(name, tmp_path, (pfn, offset, 0x10))), cfg)
    assert not r.clean
    assert len(r.diffs) == 1, r.summary()
    d = r.diffs[0]
    assert d.pfn == pfn and d.offset <= offset < d.offset + d.size
    assert any(field in n for n in d.names), d.names
    assert d.live ^ d.model == 0x10 << (8 * (offset - d.offset))
    assert d.provenance and all(d.provenance)
    stride = 512 if name == "devdax-2M-dev" else 1
    assert (d.compound, d.tail) == divmod(pfn - r.first_pfn, stride)


def test_seeded_pageblock_difference(cfg: Config, tmp_path: Path) -> None:
    out = unpack("devdax-4K-mem", tmp_path)
    text = (out / "pageblocks").read_text().replace("1049088 1", "1049088 2")
    (out / "pageblocks").write_text(text)
    r = compare(load(out), cfg)
    assert [(d.pfn, d.live, d.model) for d in r.pageblock_diffs] == [(1049088, 2, 1)]


def test_meaning_of_pointers(tmp_path: Path) -> None:
    kl = load(unpack("devdax-2M-dev", tmp_path)).layout
    base = kl["vmemmap_base"]
    assert meaning(base + 64 * 0x100A00 + 1, 8, kl, 0x1234) == "struct page of pfn 0x100a00 | 1"
    assert meaning(base + 64 * 0x100A02 + 16, 8, kl, 0x1234) == "struct page of pfn 0x100a02 + 16"
    assert meaning(0x1234, 8, kl, 0x1234) == "the pgmap"
    assert meaning(5, 4, kl, 0x1234) == ""


def test_config_cut_matches_full(cfg: Config, tmp_path: Path) -> None:
    """The cut config gives the same Config as the whole of Debian's 6.12.117 amd64 config
    (the package linux-config-6.12 ships the same file as the kernel image's
    boot/config-6.12.117+deb12-amd64; installed when missing, as root)."""
    whole = from_kconfig(str(_debian_config(tmp_path)))
    assert evolve(whole, name="", description="") == evolve(cfg, name="", description="")


def cut_run(run: Path) -> None:
    """Write ``tests/data/live`` from the run directory ``run`` of ``--live --live-out``."""
    import json

    from equiv.zone_device.live.run import CONFIG, RECORD, sha256

    rec = json.loads((run / RECORD).read_text())
    where = {e["name"]: run / e["dump"] for e in rec["namespaces"]}
    for n, (first, nr) in CUTS.items():
        shutil.rmtree(DATA / n, ignore_errors=True)
        cut_dump(where[n], DATA / n, first, nr)
    cut_config(run / CONFIG, DATA / CONFIG)
    rec["config_sha256"] = sha256(DATA / CONFIG)
    rec["namespaces"] = [{"name": n, "dump": n} for n in CUTS]
    (DATA / RECORD).write_text(json.dumps(rec, indent=2) + "\n")


if __name__ == "__main__":
    cut_run(Path(sys.argv[1]))

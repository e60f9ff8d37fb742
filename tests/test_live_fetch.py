"""The live check's first layer (equiv/zone_device/live): the pinned Debian packages, the headers'
Makefile, the host-tool messages and the dump module's build.

The fast tests replace ``subprocess.run`` and ``shutil.which``.  The slow test really
downloads the four packages (about 120 MB) and builds the module; it fails, never skips,
when the download fails, unless ``EQUIV_LIVE_ARCHIVE_UNREACHABLE=1`` says this machine cannot
reach Debian's archive (then it skips, with that reason).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from host_lock import host_lock

from equiv.engine.errors import InputError
from equiv.zone_device.live import build, host, packages


def _completed(args: Any, rc: int = 0, out: str = "", err: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(args, rc, out, err)


# --- the headers' Makefile ----------------------------------------------------------------

def _tree(tmp_path: Path, text: str) -> tuple[Path, Path]:
    root = tmp_path / "root"
    common = root / "usr/src" / f"linux-headers-{packages.ABI}-common"
    common.mkdir(parents=True)
    (common / "Makefile").write_text("# top\n")
    flavour = root / "usr/src" / f"linux-headers-{packages.RELEASE}"
    flavour.mkdir(parents=True)
    (flavour / "Makefile").write_text(text)
    return root, flavour / "Makefile"


def test_the_makefile_includes_the_unpacked_common_headers(tmp_path: Path) -> None:
    # the file as Debian ships it: one line, an absolute include
    root, makefile = _tree(tmp_path, f"include /usr/src/linux-headers-{packages.ABI}-common/Makefile\n")
    assert packages.point_headers_makefile(makefile, root)
    assert makefile.read_text() == \
        f"include {root}/usr/src/linux-headers-{packages.ABI}-common/Makefile\n"
    # a second pass changes nothing and does not complain
    assert not packages.point_headers_makefile(makefile, root)


def test_the_makefile_keeps_includes_that_are_not_unpacked(tmp_path: Path) -> None:
    text = (f"include /usr/src/linux-headers-{packages.ABI}-common/Makefile\n"
            "include /usr/src/somewhere-else/Makefile\n")
    root, makefile = _tree(tmp_path, text)
    packages.point_headers_makefile(makefile, root)
    assert makefile.read_text().splitlines()[1] == "include /usr/src/somewhere-else/Makefile"


def test_a_makefile_of_another_layout_is_an_input_error(tmp_path: Path) -> None:
    root, makefile = _tree(tmp_path, "include $(srctree)/Makefile\n")
    with pytest.raises(InputError, match="layout has changed"):
        packages.point_headers_makefile(makefile, root)


# --- host tools -----------------------------------------------------------------------------

def test_missing_host_tools_name_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    present = {"qemu-system-x86_64", "cpio"}
    monkeypatch.setattr(shutil, "which", lambda c, path=None: f"/usr/bin/{c}" if c in present else None)
    gone = host.missing(host.BOOT_TOOLS)
    assert [t.command for t in gone] == ["ndctl", "daxctl", "busybox", "vng"]
    assert host.install_command(gone) == ("apt-get install -y ndctl daxctl busybox-static && "
                                          f"pip install 'virtme-ng=={host.VIRTME_NG_VERSION}'")
    with pytest.raises(InputError) as e:
        host.require(host.BOOT_TOOLS, "booting the kernel")
    assert "\n" not in str(e.value)
    assert str(e.value).startswith("booting the kernel needs ndctl (ndctl), daxctl (daxctl)")
    assert str(e.value).endswith(host.install_command(gone))


def test_nothing_missing_is_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda c, path=None: f"/usr/bin/{c}")
    assert host.missing(host.BUILD_TOOLS) == []
    assert host.install_command([]) == ""
    host.require(host.BUILD_TOOLS, "building")


def test_a_missing_dpkg_deb_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    debs = tmp_path / "debs"
    debs.mkdir()
    for p in packages.PACKAGES:
        (debs / packages.deb_name(p)).write_bytes(b"")
    monkeypatch.setattr(shutil, "which", lambda c, path=None: None if c == "dpkg-deb" else f"/usr/bin/{c}")
    with pytest.raises(InputError, match=r"needs dpkg-deb \(dpkg\).*apt-get install -y dpkg$"):
        packages.fetch(tmp_path)


def test_a_missing_compiler_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda c, path=None: None if "gcc" in c else f"/usr/bin/{c}")
    with pytest.raises(InputError, match=r"x86_64-linux-gnu-gcc-12 \(gcc-12\).*install -y gcc-12"):
        build.build_module(packages.KernelFiles(tmp_path / "root"), tmp_path)


# --- the archive ----------------------------------------------------------------------------

POLICY = f"""{packages.PACKAGES[0]}:
  Installed: (none)
  Candidate: 6.12.120-1~deb12u1
  Version table:
     6.12.120-1~deb12u1 500
        500 http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
 *** 6.12.119-1~deb12u1 100
        100 /var/lib/dpkg/status
"""


def test_a_version_the_archive_dropped_is_an_input_error(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def run(args: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        if args[:2] == ["apt-get", "download"]:
            return _completed(args, 100, err=f"E: Version '{packages.DEB_VERSION}' for "
                                             f"'{packages.PACKAGES[0]}' was not found")
        if args[:2] == ["apt-cache", "policy"]:
            return _completed(args, 0, out=POLICY)
        if args[:2] == ["apt-get", "update"]:  # the retry as root: the lists change nothing
            return _completed(args, 0)
        raise AssertionError(args)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(shutil, "which", lambda c, path=None: f"/usr/bin/{c}")
    with pytest.raises(InputError) as e:
        packages.fetch(tmp_path)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"cannot download {packages.PACKAGES[0]}={packages.DEB_VERSION}: "
                          "the archive offers 6.12.120-1~deb12u1, 6.12.119-1~deb12u1;")
    assert packages.deb_name(packages.PACKAGES[0]) in msg and "snapshot.debian.org" in msg
    assert calls[0] == ["apt-get", "download", f"{packages.PACKAGES[0]}={packages.DEB_VERSION}"]
    assert not (tmp_path / packages.STAMP).exists()


def test_a_package_apt_does_not_know_says_apt_get_update(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: _completed(
        args, 100 if args[0] == "apt-get" else 0, out=""))
    monkeypatch.setattr(shutil, "which", lambda c, path=None: f"/usr/bin/{c}")
    with pytest.raises(InputError, match="apt knows no version of it \\(run apt-get update"):
        packages.fetch(tmp_path)


def test_a_missing_apt_get_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda c, path=None: None)
    with pytest.raises(InputError, match=r"needs apt-get \(apt\)"):
        packages.fetch(tmp_path)


def test_an_unpacked_cache_runs_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    files = packages.KernelFiles(tmp_path / "root")
    files.image.parent.mkdir(parents=True)
    files.image.write_bytes(b"")
    (tmp_path / packages.STAMP).write_text(packages._stamp_text())

    def run(args: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        raise AssertionError(f"ran {args}")

    monkeypatch.setattr(subprocess, "run", run)
    assert packages.fetch(tmp_path) == files


def test_the_cache_is_under_the_users_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert packages.cache_dir() == tmp_path / "equiv" / "live"


def test_the_module_hash_follows_the_source() -> None:
    assert len(build.source_hash()) == 16
    assert (build.source_dir() / "equiv_dump.c").read_text().startswith(
        "// SPDX-License-Identifier: GPL-2.0")


# --- the real thing -------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.xdist_group("host")  # boots/installs: tests/conftest.py
def test_fetch_and_build_the_module(tmp_path: Path) -> None:
    """Downloads the pinned packages (about 120 MB, 15-20 s) and builds equiv_dump.ko (5 s);
    a second fetch and build return at once from the cache."""
    with host_lock():  # dpkg's lock: tests/host_lock.py
        host.install_missing([*host.FETCH_TOOLS, *host.BUILD_TOOLS])
    cache = tmp_path / "live"
    try:
        t0 = time.monotonic()
        files = packages.fetch(cache)
    except InputError as e:
        if os.environ.get("EQUIV_LIVE_ARCHIVE_UNREACHABLE") == "1" and "cannot download" in str(e):
            pytest.skip(f"EQUIV_LIVE_ARCHIVE_UNREACHABLE=1: {e}")
        raise
    ko = build.build_module(files, cache)
    first = time.monotonic() - t0
    assert files.headers.joinpath("Makefile").read_text() == \
        f"include {files.root}/usr/src/linux-headers-{packages.ABI}-common/Makefile\n"
    assert files.config.read_text().count("CONFIG_ZONE_DEVICE=y") == 1
    # the module's .modinfo section names the kernel it was built for
    assert f"vermagic={packages.RELEASE} SMP".encode() in ko.read_bytes()
    t1 = time.monotonic()
    assert packages.fetch(cache) == files and build.build_module(files, cache) == ko
    assert time.monotonic() - t1 < 1.0 < first


class TestSourceTarball:
    """linux-source-6.12 at the booted kernel's version (equiv.zone_device.live.ctext.tarball)."""

    def test_the_installed_package_when_it_is_the_pinned_version(
            self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        from equiv.zone_device.live import ctext, packages

        monkeypatch.setattr(ctext, "_installed_version", lambda: packages.DEB_VERSION)
        assert ctext.TARBALL == ctext.tarball(tmp_path)

    def test_the_pinned_deb_when_another_version_is_installed(
            self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        from equiv.zone_device.live import ctext, packages

        monkeypatch.setattr(ctext, "_installed_version", lambda: "6.12.118-1~deb12u1")
        calls: list[list[str]] = []

        def fake_run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
            calls.append(argv)
            if argv[:2] == ["apt-get", "download"]:
                (Path(str(kw["cwd"])) / f"linux-source-6.12_{packages.DEB_VERSION}_all.deb"
                 ).write_text("deb")
            elif argv[:2] == ["dpkg-deb", "-x"]:
                Path(argv[3]).mkdir()  # like dpkg-deb: one level, the parent must exist
                out = Path(argv[3]) / "usr" / "src" / "linux-source-6.12.tar.xz"
                out.parent.mkdir(parents=True)
                out.write_text("tarball")
            return subprocess.CompletedProcess(argv, 0, "", "")

        monkeypatch.setattr(ctext.subprocess, "run", fake_run)
        got = ctext.tarball(tmp_path)
        assert got.read_text() == "tarball" and packages.DEB_VERSION in str(got)
        assert ["apt-get", "download", f"linux-source-6.12={packages.DEB_VERSION}"] == calls[0]
        calls.clear()
        assert got == ctext.tarball(tmp_path) and [] == calls  # once

    def test_a_failed_download_is_retried_after_apt_get_update_as_root(
            self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """A clean CI image has no package lists: the first ``apt-get download`` fails, and
        the pinned version comes after ``apt-get update`` (the CI failure of 3 December)."""
        from equiv.zone_device.live import packages

        calls: list[list[str]] = []
        lists: list[bool] = []

        def fake_run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
            calls.append(argv)
            if argv[:2] == ["apt-get", "update"]:
                lists.append(True)
            ok = argv[:2] != ["apt-get", "download"] or bool(lists)
            return subprocess.CompletedProcess(argv, 0 if ok else 100, "", "")

        monkeypatch.setattr(packages.subprocess, "run", fake_run)
        monkeypatch.setattr(packages.os, "geteuid", lambda: 0)
        assert packages.apt_download("linux-source-6.12", packages.DEB_VERSION, tmp_path)
        assert [c[:2] for c in calls] == [["apt-get", "download"], ["apt-get", "update"],
                                          ["apt-get", "download"]]
        calls.clear()
        lists.clear()
        monkeypatch.setattr(packages.os, "geteuid", lambda: 1000)  # not root: no update
        assert not packages.apt_download("linux-source-6.12", packages.DEB_VERSION, tmp_path)
        assert [c[:2] for c in calls] == [["apt-get", "download"]]

    def test_the_installed_one_when_the_pinned_cannot_be_had(
            self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        from equiv.zone_device.live import ctext

        monkeypatch.setattr(ctext, "_installed_version", lambda: None)
        monkeypatch.setattr(ctext.subprocess, "run", lambda argv, **kw: subprocess.CompletedProcess(
            argv, 100, "", "E: no such version"))
        assert ctext.TARBALL == ctext.tarball(tmp_path)


# --- --live-setup -----------------------------------------------------------------------------

def test_live_lists_every_missing_tool_at_once_with_the_setup_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a bare machine --live names all its missing tools in one line, and the one command
    that installs them (--live-setup) with what it runs."""
    monkeypatch.setattr(shutil, "which", lambda c, path=None: None)
    with pytest.raises(InputError) as e:
        host.require_all()
    msg = str(e.value)
    assert "\n" not in msg
    for t in host.LIVE_TOOLS:
        assert f"{t.command} ({t.package})" in msg
    assert "python -m equiv.proofs --live-setup" in msg


def test_the_small_kernel_adds_its_build_tools_and_setup_installs_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """--live --live-kernel all-types also names the kernel build's tools (flex, bison, bc,
    gcc) when they are missing; --live-setup installs them with the rest."""
    monkeypatch.setattr(shutil, "which", lambda c, path=None: None)
    with pytest.raises(InputError) as e:
        host.require_all((*host.LIVE_TOOLS, *host.KERNEL_BUILD_TOOLS))
    for t in host.KERNEL_BUILD_TOOLS:
        assert f"{t.command} ({t.package})" in str(e.value)
    assert set(host.KERNEL_BUILD_TOOLS) <= set(host.SETUP_TOOLS)


def test_vng_is_found_in_this_environment_without_path(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    """A vng that pip put in this Python's scripts directory is found with PATH empty."""
    vng = tmp_path / "vng"
    vng.write_text("#!/bin/sh\n")
    vng.chmod(0o755)
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(host, "_env_dirs", lambda: [str(tmp_path)])
    assert str(vng) == host.which(host.VNG) == host.command(host.VNG)
    assert host.missing([host.VNG]) == []
    assert str(tmp_path) in host.tool_path().split(os.pathsep)


def test_setup_as_root_runs_apt_then_pip_and_checks_again(monkeypatch: pytest.MonkeyPatch) -> None:
    present: set[str] = {"apt-get", "dpkg-deb", "make"}
    monkeypatch.setattr(shutil, "which",
                        lambda c, path=None: f"/usr/bin/{c}" if c in present else None)
    ran: list[list[str]] = []

    def run(cmd: list[str]) -> int:
        ran.append(cmd)
        present.update(t.command for t in host.SETUP_TOOLS)  # the installs worked
        return 0

    said: list[str] = []
    assert 0 == host.setup(say=said.append, run=run, root=True)
    assert ["apt-get", "update", "-qq"] == ran[0]
    assert ran[1][:4] == ["apt-get", "install", "-y", "-qq"] and "dwarves" in ran[1]
    assert ran[2][-1] == f"virtme-ng=={host.VIRTME_NG_VERSION}" and "pip" in ran[2]
    assert said[-1].startswith("equiv: every tool --live needs is installed")


def test_setup_not_root_prints_the_commands_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda c, path=None: None)
    said: list[str] = []
    assert 3 == host.setup(say=said.append, run=lambda c: pytest.fail("ran"), root=False)
    assert "needs root" in said[0] and said[2].startswith("  apt-get install -y -qq apt dpkg make")


def test_setup_reports_a_failed_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda c, path=None: None)
    said: list[str] = []
    assert 1 == host.setup(say=said.append, run=lambda c: 100, root=True)

"""Booting the pinned kernel with virtme-ng and dumping the struct pages of pmem namespaces.

:func:`boot_and_dump` writes a guest shell script into the output directory and boots the
unpacked Debian kernel (:mod:`equiv.zone_device.live.packages`) with ``vng`` (virtme-ng: the host's root
file system, read-only over 9p, is the guest's, so the host's ``ndctl`` runs in the guest;
the output directory is shared read-write with ``--rwdir``).  The guest:

1. loads the legacy-pmem and device-dax drivers (``modprobe nd_e820 nd_pmem dax_pmem
   device_dax``, only when a pmem namespace is requested) and the dump module (``insmod
   equiv_dump.ko``, copied into the output directory because the guest mounts a fresh tmpfs
   on /tmp);
2. for each requested :class:`Namespace`, in order: a pmem one (devdax, fsdax) reconfigures
   the one namespace of the legacy region (``ndctl create-namespace -f -e namespace0.0 -m
   MODE --align A --map M``: a ``memmap=`` region has no labels, so it holds exactly one
   namespace); a coherent or private one has the dump module create the pgmap itself
   (``memremap_pages()`` on the reserved range, through the module's ``memremap`` file:
   no driver of Debian's kernel creates MEMORY_DEVICE_COHERENT or PRIVATE pages).  Then a
   pfn in the middle of the region is written to ``/sys/kernel/debug/equiv_dump/range`` (the
   module widens it to the whole range of the dev_pagemap holding it) and the dump files are
   copied into ``<outdir>/<namespace name>/``; a pgmap of the module's own is removed
   (``memunmap_pages()``) before the next namespace;
3. writes the marker file ``<outdir>/done`` last.

Success is the marker, not vng's exit status (vng has been seen to exit 255 after the guest
script exited 0).  The pmem region comes from the kernel command line: ``memmap=SIZE!4G``
reserves guest RAM at 4 GiB as "Persistent Memory (legacy)" (Documentation/admin-guide/
kernel-parameters.txt; QEMU puts guest RAM beyond the first 2 GiB at 4 GiB, so the region must
lie inside that part): 512M!4G with ``--memory 3G``, 2G!4G with 6G (a 1G-aligned namespace
needs a region of at least 2 GiB).  The coherent and private kinds need a range of guest
physical memory the kernel does not use as System RAM (``pagemap_range()`` in mm/memremap.c
refuses System RAM with -ENXIO): ``memmap=SIZE$START`` marks guest RAM reserved in the e820
map (not in memblock, so its sections are not present at boot and the range is hot-plugged
like a pmem namespace), placed after the pmem region, and the guest gets that much more
memory (:func:`plan`).

KVM is used only when ``/dev/kvm`` opens and a short probe boot under KVM succeeds; otherwise
(no KVM, or a host where ordinary guests fail, such as a PVM host: "failed to set MSR 0x10a",
"KVM internal error") QEMU's software emulation runs (``--disable-kvm``), slower but
everywhere.  ``EQUIV_LIVE_KVM=0`` or ``=1`` skips the probe.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from attrs import frozen

from equiv.engine.errors import InputError
from equiv.zone_device.live import host
from equiv.zone_device.live.packages import KernelFiles

#: the debugfs directory of the dump module (module/equiv_dump.c)
DEBUGFS = "/sys/kernel/debug/equiv_dump"
#: the module files copied into each namespace's directory (``range`` included, as a record)
DUMP_FILES = ("layout", "range", "pgmap", "pages", "pageblocks")
#: the marker the guest script writes after its last dump
MARKER = "done"
GUEST_SCRIPT = "guest.sh"
GUEST_LOG = "guest.log"
VNG_LOG = "vng.log"
#: the first attempt's console, kept when a boot is repeated (:func:`boot_and_dump`)
FIRST_VNG_LOG = "vng-1.log"
#: console lines that say the guest kernel crashed: an oops's first line, its instruction
#: pointer, the panic (the kernel's own wording: lib/bug.c, arch/x86/mm/fault.c,
#: kernel/panic.c)
CRASH_LINE = re.compile(r"(BUG: |Oops: |general protection fault|RIP: |"
                        r"Kernel panic - not syncing)")
#: seconds a boot may take before it is killed (TCG boots take 15-60 s on 2 shared cores)
BOOT_TIMEOUT = 600.0
#: seconds the KVM probe boot may take
PROBE_TIMEOUT = 90.0
#: modes ndctl creates on the legacy pmem region
PMEM_MODES = ("devdax", "fsdax")
#: pgmap types the dump module creates itself (module/equiv_dump.c, its ``memremap`` file)
OWN_MODES = ("coherent", "private")
#: pgmaps a driver of the kernel creates (the small all-types kernel's): ``hmm``, the PRIVATE
#: chunk of test_hmm.ko's first dmirror device (lib/test_hmm.c, dmirror_allocate_chunk());
#: ``p2pdma``, the PCI_P2PDMA pgmap the nvme driver registers over an emulated NVMe
#: controller's memory buffer (drivers/nvme/host/pci.c nvme_map_cmb() ->
#: drivers/pci/p2pdma.c pci_p2pdma_add_resource()).  Both at order 0 with the memmap in RAM:
#: neither driver sets vmemmap_shift or an altmap.
DRIVER_MODES = ("hmm", "p2pdma")
MODES = PMEM_MODES + OWN_MODES + DRIVER_MODES
#: QEMU's NVMe controller memory buffer for ``p2pdma`` (MiB; cmb_size_mb of its nvme device)
CMB_MIB = 64
#: the backing file of the emulated NVMe namespace (a sparse file in the boot directory)
NVME_IMAGE = "nvme.img"
ALIGNS = {"4K": 1 << 12, "2M": 1 << 21, "1G": 1 << 30}
MAPS = ("dev", "mem")
GIB = 1 << 30
MIB = 1 << 20
#: where QEMU's guest RAM above the 32-bit hole starts (q35), and the first region's address
HIGH_RAM = 4 * GIB


@frozen
class Namespace:
    """One namespace to create: ``ndctl create-namespace -m MODE --align ALIGN --map MAP``,
    or one pgmap the dump module creates with ``memremap_pages()``.

    ``mode`` devdax (a /dev/daxX.Y character device, pgmap type MEMORY_DEVICE_GENERIC),
    fsdax (a /dev/pmemX block device, MEMORY_DEVICE_FS_DAX), coherent
    (MEMORY_DEVICE_COHERENT) or private (MEMORY_DEVICE_PRIVATE: refused by a kernel without
    CONFIG_DEVICE_PRIVATE, such as Debian's); ``align`` 4K, 2M or 1G (the pgmap's
    vmemmap_shift for devdax, coherent and private: 0, 9, 18); ``map`` dev (the memmap in the
    device, a vmem_altmap) or mem (the memmap in System RAM).  Private memory is not CPU
    addressable, so its memmap cannot be in it: private takes ``mem`` only.
    """

    mode: str
    align: str
    map: str

    def __attrs_post_init__(self) -> None:
        for what, value, valid in (("mode", self.mode, MODES), ("align", self.align, ALIGNS),
                                   ("map", self.map, MAPS)):
            if value not in valid:
                raise InputError(f"namespace {what} {value!r}: valid: {', '.join(valid)}")
        if self.mode == "private" and self.map != "mem":
            raise InputError(f"namespace {self.name}: MEMORY_DEVICE_PRIVATE memory is not CPU "
                             "addressable, so its memmap cannot live in it: use map mem")
        if self.mode in DRIVER_MODES and (self.align, self.map) != ("4K", "mem"):
            raise InputError(f"namespace {self.name}: the {self.mode} driver's pgmap has "
                             "order 0 and its memmap in RAM: use {self.mode}-4K-mem"
                             .replace("{self.mode}", self.mode))

    @property
    def pmem(self) -> bool:
        """Created by ndctl on the legacy pmem region (devdax, fsdax), not by the module."""
        return self.mode in PMEM_MODES

    @property
    def own(self) -> bool:
        """Created by the dump module itself (coherent, private) on the reserved region."""
        return self.mode in OWN_MODES

    @property
    def vmemmap_shift(self) -> int:
        """The pgmap's vmemmap_shift the alignment asks for: log2(align / 4K).

        >>> Namespace("coherent", "2M", "dev").vmemmap_shift
        9
        """
        return ALIGNS[self.align].bit_length() - 1 - 12

    @property
    def name(self) -> str:
        """The namespace's directory name: ``devdax-2M-dev``."""
        return f"{self.mode}-{self.align}-{self.map}"

    @classmethod
    def parse(cls, text: str) -> Namespace:
        """``"devdax-2M-dev"`` (the :attr:`name` form) to a Namespace."""
        parts = text.split("-")
        if len(parts) != 3:
            raise InputError(f"namespace {text!r}: expected MODE-ALIGN-MAP, e.g. devdax-2M-dev")
        return cls(*parts)


@frozen
class Region:
    """A range of guest physical memory the kernel command line sets aside."""

    start: int
    size: int

    @property
    def pfn_middle(self) -> int:
        """A pfn in the middle of the region (the dump module widens it to the pgmap)."""
        return (self.start + self.size // 2) >> 12


@frozen
class MemoryPlan:
    """The guest's memory for one boot: vng's ``--memory``, the kernel command line, the
    legacy pmem region (``memmap=SIZE!START``, when a pmem namespace is requested) and the
    reserved region of the module's own pgmaps (``memmap=SIZE$START``, when a coherent or
    private one is)."""

    memory: str
    append: str
    pmem: Region | None
    own: Region | None


def _size(n: int) -> str:
    """Bytes as the kernel's memparse() and QEMU read them: ``4G``, ``512M``.

    >>> _size(4 * GIB), _size(4 * GIB + 512 * MIB)
    ('4G', '4608M')
    """
    return f"{n // GIB}G" if n % GIB == 0 else f"{n // MIB}M"


def plan(namespaces: Sequence[Namespace]) -> MemoryPlan:
    """The memory plan of one boot: each region is 2 GiB when any namespace is 1G-aligned
    (a 1G-aligned namespace with its memmap in the device needs more than 1 GiB), else 512
    MiB; the pmem region at 4 GiB, the reserved region after it; the guest has 3 GiB (6 GiB
    with 1G alignment) plus the reserved region, so that guest RAM is left above both.

    >>> p = plan([Namespace("devdax", "2M", "dev"), Namespace("coherent", "4K", "mem")])
    >>> p.memory, p.append, hex(p.own.start)
    ('3584M', 'memmap=512M!4G memmap=512M$4608M', '0x120000000')
    >>> plan([Namespace("coherent", "1G", "dev")]).append
    'memmap=2G$4G'
    """
    big = any(ns.align == "1G" for ns in namespaces)
    size = 2 * GIB if big else 512 * MIB
    memory = 6 * GIB if big else 3 * GIB
    pmem = Region(HIGH_RAM, size) if any(ns.pmem for ns in namespaces) else None
    own = None
    if any(ns.own for ns in namespaces):
        own = Region(HIGH_RAM + (size if pmem else 0), size)
        memory += size
    append = []
    if pmem:
        append.append(f"memmap={_size(pmem.size)}!{_size(pmem.start)}")
    if own:
        append.append(f"memmap={_size(own.size)}${_size(own.start)}")
    return MemoryPlan(_size(memory), " ".join(append), pmem, own)


def memory_plan(namespaces: Sequence[Namespace]) -> tuple[str, str]:
    """The guest's ``--memory`` and its ``memmap=`` parameters for ``namespaces``
    (:func:`plan`).

    >>> memory_plan([Namespace("devdax", "2M", "dev")])
    ('3G', 'memmap=512M!4G')
    >>> memory_plan([Namespace("devdax", "1G", "mem")])
    ('6G', 'memmap=2G!4G')
    """
    p = plan(namespaces)
    return p.memory, p.append


#: kernel messages a failed memremap_pages() leaves (mm/memremap.c's warnings, the module's
#: own line), shown in guest.log before the failure
MEMREMAP_MESSAGES = ("equiv_dump: memremap|not supported|Missing|attempted on|Conflicting|"
                     "nr_range must")


def _hmm_lines(d: str) -> list[str]:
    """Guest lines of ``hmm-4K-mem``: load test_hmm.ko (each of its two PRIVATE dmirror
    devices allocates one 256 MiB chunk at load time, a ``request_free_mem_region()``
    resource named ``hmm_dmirror`` in /proc/iomem), and choose the chunk listed first."""
    return [
        "[ -e /dev/hmm_dmirror0 ] || modprobe test_hmm || fail modprobe test_hmm",
        "r=$(grep hmm_dmirror /proc/iomem | head -n 1 | sed -E 's/^ *([0-9a-f]+)-([0-9a-f]+) .*/\\1 \\2/')",
        '[ -n "$r" ] || fail no hmm_dmirror range in /proc/iomem',
        "set -- $r",
        "hpfn=$(( (0x$1 + (0x$2 - 0x$1 + 1) / 2) >> 12 ))",
        f'grep hmm_dmirror /proc/iomem > {d}/iomem; echo test_hmm > {d}/driver',
        'step "hmm_dmirror 0x$1-0x$2, dump pfn $hpfn"',
        f'echo "$hpfn" > {DEBUGFS}/range || fail writing pfn $hpfn to {DEBUGFS}/range for hmm',
    ]


def _p2pdma_lines(d: str) -> list[str]:
    """Guest lines of ``p2pdma-4K-mem``: the PCI device with a ``p2pmem`` directory (the nvme
    driver registered its controller memory buffer with ``pci_p2pdma_add_resource()``) and
    the BAR holding its pgmap (the first BAR whose middle pfn the module's ``range`` file
    accepts: ``get_dev_pagemap()`` finds a pgmap there)."""
    return [
        "dev=$(ls -d /sys/bus/pci/devices/*/p2pmem 2>/dev/null | head -n 1)",
        '[ -n "$dev" ] || { dmesg | grep -i -E "nvme|p2p" | tail -n 3; '
        'fail no PCI device with p2pmem: the NVMe CMB was not registered; }',
        f'dev=${{dev%/p2pmem}}; ppfn=; echo nvme > {d}/driver',
        'while read s e f; do',
        '  [ $((e)) -gt $((s)) ] || continue',
        '  p=$(( (s + (e - s + 1) / 2) >> 12 ))',
        f'  if echo "$p" > {DEBUGFS}/range 2>/dev/null; then ppfn=$p; echo "$s $e $f" > {d}/bar; '
        'break; fi',
        'done < "$dev/resource"',
        '[ -n "$ppfn" ] || fail no BAR of $dev holds a pgmap',
        'step "p2pmem ${dev##*/}, dump pfn $ppfn"',
    ]


def guest_script(ko: Path, namespaces: Sequence[Namespace], outdir: Path) -> str:
    """The shell script the guest runs (POSIX sh; every failure ends it with a message in
    ``guest.log`` and no marker).  Writes to the module's ``memremap`` file use coreutils'
    ``/bin/echo``, which names the errno of a failed write (``write error: Invalid
    argument``), where the shell's builtin says only "I/O error"."""
    q = shlex.quote
    p = plan(namespaces)
    lines = [
        "#!/bin/sh",
        f"out={q(str(outdir))}",
        f'exec >"$out/{GUEST_LOG}" 2>&1',
        'fail() { echo "equiv-guest: FAILED: $*"; exit 1; }',
        'step() { echo "equiv-guest: $*"; }',
        "step kernel $(uname -r)",
        "[ -d /sys/kernel/debug/tracing ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null",
    ]
    if p.pmem:
        lines += [
            "modprobe -a nd_e820 nd_pmem dax_pmem device_dax || fail modprobe nd_e820 nd_pmem "
            "dax_pmem device_dax",
        ]
    lines += [
        f'insmod "$out/{ko.name}" || fail insmod {ko.name}',
        f"[ -e {DEBUGFS}/range ] || fail no {DEBUGFS} after insmod",
    ]
    if p.pmem:
        lines += [
            "i=0; while [ ! -e /sys/bus/nd/devices/region0/resource ]; do",
            "  i=$((i + 1)); [ $i -gt 100 ] && fail no pmem region0: is memmap= on the command "
            "line?",
            "  sleep 0.1; done",
            "start=$(cat /sys/bus/nd/devices/region0/resource)",
            "size=$(cat /sys/bus/nd/devices/region0/size)",
            "pfn=$(( (start + size / 2) >> 12 ))",
            'step "region0 $start size $size, dump pfn $pfn"',
        ]
    if p.own:
        lines += [
            f"ownpfn={p.own.pfn_middle}",
            f'step "reserved {p.own.start:#x} size {p.own.size:#x}, dump pfn $ownpfn"',
        ]
    for ns in namespaces:
        d = f'"$out/{ns.name}"'
        lines += [f"step namespace {ns.name}", f"mkdir -p {d}"]
        if ns.mode == "hmm":
            lines += _hmm_lines(d)
        elif ns.mode == "p2pdma":
            lines += _p2pdma_lines(d)
        elif ns.pmem:
            lines += [
                f"ndctl create-namespace -f -e namespace0.0 -m {ns.mode} --align {ns.align} "
                f"--map {ns.map} > {d}/ndctl.json || fail ndctl create-namespace {ns.name}",
                f'echo "$pfn" > {DEBUGFS}/range || fail writing pfn $pfn to {DEBUGFS}/range '
                f"for {ns.name}",
            ]
        else:
            assert p.own is not None
            spec = (f"{ns.mode} {p.own.start:#x} {p.own.size:#x} {ns.vmemmap_shift} "
                    f"{int(ns.map == 'dev')}")
            lines += [
                f"/bin/echo '{spec}' > {DEBUGFS}/memremap || {{ dmesg | grep -E "
                f"{q(MEMREMAP_MESSAGES)} | tail -n 3; fail memremap_pages {ns.name}; }}",
                f"cat {DEBUGFS}/memremap > {d}/memremap",
                f'echo "$ownpfn" > {DEBUGFS}/range || fail writing pfn $ownpfn to '
                f"{DEBUGFS}/range for {ns.name}",
            ]
        lines += [f"cat {DEBUGFS}/{f} > {d}/{f} || fail reading {DEBUGFS}/{f} for {ns.name}"
                  for f in DUMP_FILES]
        if ns.own:
            lines.append(f"/bin/echo remove > {DEBUGFS}/memremap || fail memunmap_pages "
                         f"{ns.name}")
    lines += ["sync", f'echo ok > "$out/{MARKER}"', "step done", "sync", ""]
    return "\n".join(lines)


def nvme_qemu_opts(image: Path) -> str:
    """QEMU's options for an emulated NVMe controller with a :data:`CMB_MIB` MiB controller
    memory buffer, its namespace backed by ``image`` (``-device nvme,...,cmb_size_mb=N``).

    >>> for o in nvme_qemu_opts(Path("/o/nvme.img")).split(): print(o)
    -drive
    file=/o/nvme.img,if=none,id=equivnvm,format=raw
    -device
    nvme,serial=equiv,drive=equivnvm,cmb_size_mb=64
    """
    return (f"-drive file={image},if=none,id=equivnvm,format=raw "
            f"-device nvme,serial=equiv,drive=equivnvm,cmb_size_mb={CMB_MIB}")


def vng_command(files: KernelFiles, outdir: Path, memory: str, append: str, kvm: bool,
                script: Path, qemu: str = "") -> list[str]:
    """The ``vng`` command line: boot ``files.image`` (vng finds the modules in the nearest
    ``lib/modules/<release>`` above it), one CPU, ``outdir`` shared read-write, run
    ``script``; ``qemu``: more QEMU options (``--qemu-opts``, last as vng requires)."""
    cmd = [host.command(host.VNG), "--verbose", "--run", str(files.image), "--cpus", "1", "--memory", memory,
           "--rwdir", str(outdir), "--exec", f"sh {shlex.quote(str(script))}"]
    if append:
        cmd[-2:-2] = ["--append", append]
    if qemu:  # one word: vng's argparse takes a separate value starting with "-" for an option
        cmd.append(f"--qemu-opts={qemu}")
    if not kvm:
        cmd.insert(1, "--disable-kvm")
    return cmd


def _run(cmd: list[str], log: Path, timeout: float) -> tuple[int | None, float]:
    """Run ``cmd`` in its own process group with its output in ``log``; its exit status (None
    when killed after ``timeout`` seconds, with the whole group it started) and the seconds it
    took."""
    t0 = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "PATH": host.tool_path()})
        try:
            rc: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
    return rc, time.monotonic() - t0


_kvm_verdict: bool | None = None


def kvm_usable(files: KernelFiles, scratch: Path) -> bool:
    """Whether guests run under KVM here: ``/dev/kvm`` opens read-write and a probe boot with
    KVM writes its marker.  ``EQUIV_LIVE_KVM=0/1`` decides without probing; the verdict is
    kept for the process."""
    global _kvm_verdict
    env = os.environ.get("EQUIV_LIVE_KVM")
    if env in ("0", "1"):
        return env == "1"
    if _kvm_verdict is not None:
        return _kvm_verdict
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError:
        _kvm_verdict = False
        return False
    probe = scratch / "kvm-probe"
    shutil.rmtree(probe, ignore_errors=True)
    probe.mkdir(parents=True)
    script = probe / "probe.sh"
    script.write_text(f'#!/bin/sh\necho ok > {shlex.quote(str(probe / MARKER))}\n')
    _run(vng_command(files, probe, "1G", "", True, script), probe / VNG_LOG, PROBE_TIMEOUT)
    _kvm_verdict = (probe / MARKER).exists()
    return _kvm_verdict


def _tail(path: Path, n: int = 6) -> str:
    """The last ``n`` non-empty lines of ``path`` joined by `` | `` (for a one-line error)."""
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return f"no {path.name}"
    return " | ".join(lines[-n:]) or f"{path.name} is empty"


def crash_lines(console: str) -> str:
    """The guest kernel's crash in its console text: the oops, instruction pointer and panic
    lines (:data:`CRASH_LINE`, without their time stamps, each once) joined by `` | ``; ""
    when there is none.

    >>> console = ("[    0.55] BUG: unable to handle page fault for address: ff17\\n"
    ...            "[    0.55] RIP: 0010:x+0x1/0x2\\n[    0.55] R13: 0000000000000cc0\\n"
    ...            "[    0.55] Kernel panic - not syncing: Fatal exception\\n")
    >>> crash_lines(console).split(" | ")  # doctest: +NORMALIZE_WHITESPACE
    ['BUG: unable to handle page fault for address: ff17', 'RIP: 0010:x+0x1/0x2',
     'Kernel panic - not syncing: Fatal exception']
    >>> crash_lines("[    2.23] ledtrig-cpu: registered\\n")
    ''
    """
    seen: list[str] = []
    for line in console.splitlines():
        m = CRASH_LINE.search(line)
        if m and line[m.start():].strip() not in seen:
            seen.append(line[m.start():].strip())
    return " | ".join(seen[:4])


def _crash(outdir: Path) -> str:
    """:func:`crash_lines` of the boot's console when the guest script never ran (no
    guest.log); "" when it ran, or the console is missing or shows no crash (a host tool's
    failure, a timeout without an oops)."""
    if (outdir / GUEST_LOG).exists():
        return ""
    try:
        return crash_lines((outdir / VNG_LOG).read_text(errors="replace"))
    except OSError:
        return ""


def boot_and_dump(files: KernelFiles, ko: Path, namespaces: Sequence[Namespace], outdir: Path,
                  timeout: float = BOOT_TIMEOUT,
                  again: Callable[[str], None] = lambda _s: None) -> dict[Namespace, Path]:
    """Boot ``files``' kernel once, create each of ``namespaces`` in turn and dump its struct
    pages with ``ko``; the dump directory of each namespace (``outdir/<name>``, read it with
    :func:`equiv.zone_device.live.dump.load`).

    ``outdir`` is created (emptied of a previous run's marker); it keeps ``guest.sh``,
    ``guest.log`` (the script's output) and ``vng.log`` (the boot's console).

    A guest kernel that crashed before the guest script ran (an oops on the console, no
    guest.log: nothing of this tool had run in the guest yet) is booted once more, and
    ``again`` gets a line saying why (the crash's lines, where the first console is kept).
    This was seen once, in CI under TCG: the pinned Debian kernel's page fault in an
    interrupt 0.56 s into the boot of the 2 GiB region; the same boot here, 18 times (12 of
    them with both cores busy), did not crash.  A second crash is the error.

    InputError: a missing host tool (qemu, ndctl, vng, ...), duplicate namespaces, a boot
    killed after ``timeout`` seconds, or a guest script that did not write its marker (the
    message ends with the tail of guest.log, or when the script never ran the guest kernel's
    crash lines or else the tail of vng.log).
    """
    if not namespaces:
        raise InputError("boot_and_dump: no namespace requested")
    if len({ns.name for ns in namespaces}) != len(namespaces):
        raise InputError(f"boot_and_dump: a namespace is requested twice: "
                         f"{', '.join(ns.name for ns in namespaces)}")
    host.require(host.BOOT_TOOLS, "booting the kernel")
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    for name in (MARKER, GUEST_LOG):
        (outdir / name).unlink(missing_ok=True)
    for ns in namespaces:
        shutil.rmtree(outdir / ns.name, ignore_errors=True)
    shutil.copyfile(ko, outdir / ko.name)
    script = outdir / GUEST_SCRIPT
    script.write_text(guest_script(outdir / ko.name, namespaces, outdir))
    memory, append = memory_plan(namespaces)
    kvm = kvm_usable(files, outdir)
    qemu = ""
    if any(ns.mode == "p2pdma" for ns in namespaces):
        image = outdir / NVME_IMAGE
        with image.open("wb") as f:
            f.truncate(16 * MIB)  # sparse: the namespace is never read
        qemu = nvme_qemu_opts(image)
    cmd = vng_command(files, outdir, memory, append, kvm, script, qemu)
    accel = "KVM" if kvm else "TCG"
    rc, took = _run(cmd, outdir / VNG_LOG, timeout)
    crash = _crash(outdir)
    if crash and not (outdir / MARKER).exists():
        (outdir / VNG_LOG).replace(outdir / FIRST_VNG_LOG)
        again(f"the guest kernel crashed {took:.0f} s into the boot ({accel}), before the "
              f"guest script ran ({crash}); booted once more, the first console kept in "
              f"{outdir / FIRST_VNG_LOG}")
        rc, took = _run(cmd, outdir / VNG_LOG, timeout)
        crash = _crash(outdir)
    if (outdir / MARKER).exists():
        return {ns: outdir / ns.name for ns in namespaces}
    if rc is None:
        why = f"killed after {timeout:.0f} s ({accel})"
    else:
        why = f"vng exited {rc} after {took:.0f} s ({accel}) without the guest's marker"
    log = outdir / GUEST_LOG
    tail = _tail(log) if log.exists() else f"the guest script never ran; vng.log: " \
        f"{crash or _tail(outdir / VNG_LOG)}"
    raise InputError(f"booting {files.image.name} to dump {', '.join(n.name for n in namespaces)}"
                     f" failed: {why}; {tail} (logs in {outdir})")

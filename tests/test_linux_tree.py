"""The model against a real kernel tree: Debian's linux-source-6.12 (6.12.117).

The session fixture finds /usr/src/linux-source-6.12.tar.xz (installing the Debian package
when running as root and it is missing) and unpacks only the mirrored files into a cache
directory reused across runs.  No kernel source is kept in this repository.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import z3
from attrs import evolve
from host_lock import host_lock

from equiv.config import PRESETS
from equiv.engine.bv import CBV
from equiv.engine.errors import InputError
from equiv.engine.verdict import Verdict
from equiv.linux.ktree import MAKEFILE, KernelTree
from equiv.memmap import Scenario, concrete_inputs, geometry, join_key, vmemmap_namer
from equiv.page_model import Layout, PageState
from equiv.proofs import main
from equiv.zone_device.source.cinterp import (
    NO_EFFECT,
    TRUSTED,
    CCond,
    CInt,
    Interp,
    InterpError,
    Oracle,
    Ptr,
    State,
    initial_state,
    join_guards,
)
from equiv.zone_device.source.common import SPLIT_COMPOUNDS
from equiv.zone_device.source.ctyped import typed_for
from equiv.zone_device.source.drift import drift_report
from equiv.zone_device.source.fidelity import (
    MODELS,
    aliased,
    check_fidelity_cell,
    run_fidelity,
    setup,
    specialise,
)
from equiv.zone_device.source.files import FILES, load_tree, macro_env
from equiv.zone_device.source.src_layout import compare_with_model, source_structs

TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
CFG = PRESETS["x86_64-default"]


def _install() -> str | None:
    """Install linux-source-6.12 with apt-get; the reason it cannot be done, or None."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{TARBALL} is missing and apt-get is not usable (not root or no apt-get)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "linux-source-6.12"]):
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if r.returncode != 0:
            return f"{' '.join(cmd)} failed: {r.stderr.strip()[-300:]}"
    return None if TARBALL.is_file() else f"linux-source-6.12 installed but {TARBALL} is absent"


@pytest.fixture(scope="session")
def linux612() -> Path:
    """The root of an unpacked linux-source-6.12 holding the mirrored files: the same
    copy ``--live``'s C text reads (:func:`equiv.zone_device.live.ctext.source_tree`), in the user's
    cache (not a result: kept from session to session), installed with apt-get first
    when root can."""
    from equiv.zone_device.live.ctext import source_tree

    user = Path(os.environ["EQUIV_TEST_USER_CACHE"]) / "equiv"  # set by conftest.py
    with host_lock():  # one process unpacks (and installs), the others wait: tests/host_lock.py
        root, why = source_tree(user)
        if root is None and not TARBALL.is_file():
            failed = _install()
            root, why = source_tree(user) if failed is None else (None, failed)
    if root is None:
        pytest.skip(f"no linux-source-6.12 tree: {why}")
    return root


@pytest.fixture(scope="session")
def tree612(linux612: Path) -> KernelTree:
    return load_tree(linux612)


def _mutated(src: Path, dst: Path, file: str, old: str, new: str) -> Path:
    """A copy of the tree with one statement of ``file`` changed."""
    for f in [*FILES, MAKEFILE]:
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / f, dst / f)
    text = (dst / file).read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in {file}"
    (dst / file).write_text(text.replace(old, new))
    return dst


class TestTreeReading:
    def test_every_modelled_function_is_found_with_its_line(self, tree612: KernelTree) -> None:
        """Each function of the 6.12.y table is located in the tree by file and line."""
        env = macro_env(CFG)
        # the model mirrors 6.12.117; Debian's package moves on within 6.12 stable (6.12.118
        # in December 2026), and the drift report says whether a modelled function changed
        assert re.fullmatch(r"6\.12\.\d+", tree612.version), tree612.version
        for name in ("__init_single_page", "__init_zone_device_page", "prep_compound_tail",
                     "prep_compound_head", "memmap_init_compound", "memmap_init_zone_device"):
            d = tree612.find(name, env, "function")
            assert d is not None and d.where.split(":")[0] in FILES

    def test_config_picks_the_right_definition(self, tree612: KernelTree) -> None:
        """page_cpupid_reset_last has three definitions; the config chooses one."""
        on = tree612.find("page_cpupid_reset_last", macro_env(CFG), "function")
        off = tree612.find("page_cpupid_reset_last",
                           macro_env(PRESETS["x86_64-default"].__class__(
                               name="no-numa-balancing", NUMA_BALANCING=False)), "function")
        assert on is not None and off is not None and on.line != off.line


class TestDrift:
    def test_no_drift_against_the_612y_model(self, tree612: KernelTree) -> None:
        """The 6.12.y hand model's table matches every definition of the real tree."""
        st = setup(tree612, CFG, MODELS["v6.12.y"])
        rep = drift_report(tree612, st.env, "v6.12.y", CFG.name,
                           MODELS["v6.12.y"].layout(Layout.from_config(CFG)), st.structs)
        assert [] == [r for r in rep.rows if r.verdict != "matches"]
        assert rep.ok

    def test_the_612_release_model_drifts(self, tree612: KernelTree) -> None:
        """The --compare v6.12 model (the release, 2026 prep_compound_head) differs from the
        6.12.117 text where the stable backports and the 6.12 folio are."""
        st = setup(tree612, CFG, MODELS["v6.12"])
        rep = drift_report(tree612, st.env, "v6.12", CFG.name, Layout.from_config(CFG), st.structs)
        differs = {r.name for r in rep.rows if r.verdict == "differs"}
        assert {"__init_zone_device_page", "compound_nr_pages", "memmap_init_zone_device",
                "prep_compound_head", "struct folio"} == differs

    def test_a_changed_statement_is_reported(self, linux612: Path, tmp_path: Path) -> None:
        """One changed statement in a copy of the tree is drift, named on both sides."""
        root = _mutated(linux612, tmp_path, "mm/mm_init.c",
                        "\t\tset_page_count(page, 0);\n\n\t\t/*\n\t\t * The first tail",
                        "\t\tset_page_count(page, 1);\n\n\t\t/*\n\t\t * The first tail")
        t = load_tree(root)
        st = setup(t, CFG, MODELS["v6.12.y"])
        rep = drift_report(t, st.env, "v6.12.y", CFG.name, None, None)
        bad = [r for r in rep.rows if r.verdict != "matches"]
        assert 1 == len(bad)
        assert ("memmap_init_compound", "set_page_count(page, 0);", "set_page_count(page, 1);") == \
            (bad[0].name, bad[0].model_stmt, bad[0].tree_stmt)


#: Helpers once trusted, now run from the text of the file (and line) that defines them.
FROM_TEXT = {
    "INIT_LIST_HEAD": "include/linux/list.h:35",
    "is_power_of_2": "include/linux/log2.h:44",
    "IS_ALIGNED": "include/linux/align.h:13",
    "ALIGN": "include/linux/align.h:8",
    "__ALIGN_KERNEL": "include/uapi/linux/const.h:48",
    "pageblock_align": "include/linux/pageblock-flags.h:60",
    "zone_idx": "include/linux/mmzone.h:1498",
    "is_highmem_idx": "include/linux/mmzone.h:1550",
    "pfn_to_section_nr": "include/linux/mmzone.h:1783",
}


def _concrete(tree: KernelTree, structs_from: KernelTree) -> tuple[Interp, State]:
    """A concrete interpreter over ``tree`` (struct layout from ``structs_from``) and the
    state before any statement: every struct page zero."""
    st = setup(structs_from, CFG, MODELS["v6.12.y"])
    layout = st.model.layout(Layout.from_config(CFG))
    inp = concrete_inputs(layout, start_pfn=0x1000, nr_pages=64)
    it = Interp(tree, st.env, st.typed, Scenario(layout, None, 0), inp, None)
    zero = PageState(bits=CBV(0, 8 * layout.size), origin=((),) * layout.size)
    return it, initial_state(inp, lambda pfn: zero, it.canon)


def _int(v: object) -> int:
    assert isinstance(v, CInt) and isinstance(v.v, CBV)
    return v.v.value


def _truth(v: object) -> bool:
    return bool(v.c) if isinstance(v, CCond) else _int(v) != 0


#: constants clang evaluates under x86_64-default's headers, and where each is defined
CONSTANTS = {
    "PAGE_SHIFT": (12, "arch/x86/include/asm/page_types.h:10"),
    "PAGE_SIZE": (4096, "arch/x86/include/asm/page_types.h:11"),
    "PAGES_PER_SECTION": (1 << 15, "include/linux/mmzone.h:1773"),
    "pageblock_order": (9, "include/linux/pageblock-flags.h:44"),
    "pageblock_nr_pages": (512, "include/linux/pageblock-flags.h:59"),
    "TAIL_MAPPING": (0xDEAD000000000400, "include/linux/poison.h:34"),
    "ZONES_PGSHIFT": (55, "include/linux/mmzone.h:1098"),
    "NODES_MASK": (63, "include/linux/mmzone.h:1116"),
    "ZONE_DEVICE": (4, "include/linux/mmzone.h:810"),
    "MIGRATE_MOVABLE": (1, "include/linux/mmzone.h:50"),
}


class TestHelpersFromText:
    def test_no_helper_read_from_the_text_is_trusted(self) -> None:
        assert set() == set(FROM_TEXT) & set(TRUSTED)

    def test_constants_from_clang(self, tree612: KernelTree) -> None:
        """The arch, poison and page-flags layout macros and the enumeration constants are
        clang's constant evaluation under the preset's headers, with clang's types (an
        ``int`` PAGE_SHIFT, an ``unsigned long`` PAGE_SIZE, TAIL_MAPPING's address), run
        from where they are defined and equal to the model's; none is trusted."""
        it, _ = _concrete(tree612, tree612)
        for name, (value, where) in CONSTANTS.items():
            got = it.constant(name)
            assert isinstance(got, CInt) and _int(got) == value, name
            assert where == it.interpreted[name]
            assert value == it.model_constants()[name]
        shift, size = it.constant("PAGE_SHIFT"), it.constant("PAGE_SIZE")
        assert isinstance(shift, CInt) and isinstance(size, CInt)
        assert ((32, True), (64, False)) == (shift.ctype, size.ctype)
        assert it.constant("NOT_A_KERNEL_CONSTANT") is None
        assert not it.trusted_used and not {n for n in TRUSTED if "constant" in n}

    def test_a_constant_the_model_disagrees_with_stops_the_run(self, tree612: KernelTree) -> None:
        """A model whose configuration says another pageblock order than the tree's headers
        (clang's 9 on x86_64) fails loudly where the C reads it."""
        it, _ = _concrete(tree612, tree612)
        it.cfg = evolve(CFG, PAGEBLOCK_ORDER=10)
        with pytest.raises(InterpError, match="pageblock_order is 0x9 in clang's evaluation"):
            it.constant("pageblock_order")

    @pytest.mark.parametrize(("preset", "order", "names"), [
        # order 2 (every role; 15-40 s since the loops are summarised): a slow test
        pytest.param("x86_64-default", 2, ("INIT_LIST_HEAD", "is_power_of_2", "IS_ALIGNED",
                                           "ALIGN", "__ALIGN_KERNEL", "pageblock_align",
                                           "zone_idx"), marks=pytest.mark.slow),
    ])
    def test_the_proof_runs_them_from_their_files(self, tree612: KernelTree, preset: str,
                                                  order: int, names: tuple[str, ...]) -> None:
        """The source-derived proof still holds with each helper run from its file:line."""
        cell = check_fidelity_cell(setup(tree612, PRESETS[preset], MODELS["v6.12.y"]), None,
                                   order)
        assert Verdict.PROVED == cell.verdict
        got = dict(cell.interpreted)
        assert {n: FROM_TEXT[n] for n in names} == {n: got.get(n) for n in names}
        assert set() == set(FROM_TEXT) & set(cell.trusted)

    @pytest.mark.parametrize("preset", ["x86_64-want-page-virtual", "x86_64-section-in-flags"])
    def test_a_hypothetical_preset_is_refused(self, tree612: KernelTree, preset: str) -> None:
        """No .config builds a hypothetical preset, so no compiler types the C under it (the
        helpers only they reach, is_highmem_idx and pfn_to_section_nr, are not run)."""
        with pytest.raises(InputError) as e:
            setup(tree612, PRESETS[preset], MODELS["v6.12.y"])
        assert "\n" not in str(e.value) and "hypothetical" in str(e.value)

    def test_functions_on_concrete_values(self, tree612: KernelTree) -> None:
        """is_power_of_2, pfn_to_section_nr, is_highmem_idx and INIT_LIST_HEAD, concretely."""
        it, st = _concrete(tree612, tree612)
        for n in (0, 1, 2, 3, 64, 96, 1 << 63, (1 << 64) - 1):
            assert (n != 0 and n & (n - 1) == 0) == \
                _truth(it.call("is_power_of_2", [CInt(CBV(n, 64))], st)[1]), n
        shift = CFG.pfn_section_shift
        assert 0x123 == _int(it.call("pfn_to_section_nr", [CInt(CBV(0x123 << shift | 7, 64))],
                                     st)[1])
        assert not _truth(it.call("is_highmem_idx", [CInt(CBV(CFG.ZONE_DEVICE_IDX, 64))], st)[1])
        lru = it.structs["page"].member("lru")
        assert lru is not None
        head = Ptr("page", "struct list_head", idx=CBV(5, 64), off=lru.offset)
        st2, _ = it.call("INIT_LIST_HEAD", [head], st)
        page = st2.mem.read(CBV(5, 64), st2.pc)
        addr = 0xFFFFEA0000000000 + 5 * it.psize + lru.offset
        assert [addr, addr] == [int(page.load(lru.offset + o, 8)) for o in (0, 8)]
        # INIT_LIST_HEAD's WRITE_ONCE runs from rwonce.h; its stores are the lines using it
        assert {"WRITE_ONCE", "__WRITE_ONCE"} <= set(it.interpreted)
        assert it.trusted_used == {NO_EFFECT}  # compiletime_assert_rwonce_type's check
        assert page.origin is not None
        assert page.origin[lru.offset][-1].startswith("include/linux/list.h:37: ")
        assert page.origin[lru.offset + 8][-1].startswith("include/linux/list.h:38: ")

    def test_helpers_of_headers_not_read_run_where_clang_compiled_them(
            self, tree612: KernelTree) -> None:
        """atomic_set is not in the files read: it runs from the header clang compiled it
        from, down to x86's arch_atomic_set and rwonce.h's __WRITE_ONCE, through the
        instrumentation hooks (no-ops in this configuration, their arguments evaluated:
        absolute_pointer's GNU statement expression); the 4-byte counter is stored."""
        it, st = _concrete(tree612, tree612)
        ref = it.structs["page"].member("_refcount")
        assert ref is not None
        p = Ptr("page", "atomic_t", idx=CBV(3, 64), off=ref.offset)
        st2, _ = it.call("atomic_set", [p, CInt(CBV((1 << 64) - 1, 64), True, 32)], st)
        page = st2.mem.read(CBV(3, 64), st2.pc)
        assert 0xFFFFFFFF == int(page.load(ref.offset, 4))
        assert {"atomic_set": "include/linux/atomic/atomic-instrumented.h:64",
                "raw_atomic_set": "include/linux/atomic/atomic-arch-fallback.h:500",
                "arch_atomic_set": "arch/x86/include/asm/atomic.h:26",
                "instrument_atomic_write": "include/linux/instrumented.h:80",
                "__WRITE_ONCE": "include/asm-generic/rwonce.h:53"} == \
            {n: it.interpreted.get(n) for n in ("atomic_set", "raw_atomic_set",
                                                "arch_atomic_set", "instrument_atomic_write",
                                                "__WRITE_ONCE")}
        assert "RELOC_HIDE" in it.interpreted and not it.trusted_used
        assert it.header_definition("__SetPageHead") is None  # made by page-flags.h's macros

    def test_typeof_casts_of_the_align_macros(self, linux612: Path, tree612: KernelTree,
                                              tmp_path: Path) -> None:
        """ALIGN and IS_ALIGNED of align.h / uapi const.h (their (typeof(x)) casts), a
        typeof cast narrowing to the variable's type, and a typeof the interpreter refuses
        (the tree's files plus a file of test functions)."""
        files = [*FILES, "t.h"]
        for f in FILES:
            (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(linux612 / f, tmp_path / f)
        (tmp_path / "t.h").write_text(
            "static inline unsigned long t_align(unsigned long pfn)\n"
            "{\n\treturn ALIGN(pfn, 512);\n}\n"
            "static inline bool t_aligned(unsigned long pfn)\n"
            "{\n\treturn IS_ALIGNED(pfn, 512);\n}\n"
            "static inline long t_narrow(int x)\n"
            "{\n\treturn (typeof(x))(0x1fffffffeUL);\n}\n"
            "static inline long t_sum(int x)\n"
            "{\n\treturn (typeof(x + 1))(3);\n}\n")
        it, st = _concrete(KernelTree.load(tmp_path, files), tree612)
        for v, up in ((0, 0), (1, 512), (512, 512), (1000, 1024)):
            assert up == _int(it.call("t_align", [CInt(CBV(v, 64))], st)[1])
            assert (v % 512 == 0) == _truth(it.call("t_aligned", [CInt(CBV(v, 64))], st)[1])
        assert (1 << 64) - 2 == _int(it.call("t_narrow", [CInt(CBV(7, 64), True)], st)[1])
        with pytest.raises(InterpError, match="typeof"):
            it.call("t_sum", [CInt(CBV(7, 64), True)], st)
        assert "include/uapi/linux/const.h:48" == it.interpreted["__ALIGN_KERNEL"]


class TestLayoutFromSource:
    def test_612_layout_matches_the_612_model(self, tree612: KernelTree) -> None:
        """struct page / folio offsets as clang lays them out equal the 6.12 model's."""
        structs = source_structs(typed_for(tree612, CFG))
        rep = compare_with_model(MODELS["v6.12.y"].layout(Layout.from_config(CFG)), structs)
        assert rep.ok

    def test_2026_folio_differs_from_612(self, tree612: KernelTree) -> None:
        """The 2026 model's folio page[1] (_nr_pages_mapped @20, MM_ID fields) is not 6.12's."""
        structs = source_structs(typed_for(tree612, CFG))
        rep = compare_with_model(Layout.from_config(CFG), structs)
        bad = {r.view for r in rep.rows if r.verdict != "matches"}
        assert {"_nr_pages_mapped", "_entire_mapcount", "_mm_ids"} <= bad
        assert (64, 64) == rep.page_size


def _chain(sel: list[z3.BoolRef | bool]) -> z3.ArithRef:
    """The index an ite chain over selectors ``sel`` picks (the last is the default)."""
    out: z3.ArithRef = z3.IntVal(len(sel) - 1)
    for i in reversed(range(len(sel) - 1)):
        out = z3.If(sel[i], i, out)
    return out


def _valid(claim: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


class TestJoinGuards:
    p, c0, c1, c2 = z3.Bools("p c0 c1 c2")
    #: the exits of a loop after 0, 1 and 2 trips; a third trip is infeasible
    exits = (z3.And(p, z3.Not(c0)), z3.And(z3.And(p, c0), z3.Not(c1)),
             z3.And(z3.And(z3.And(p, c0), c1), z3.Not(c2)))
    no_third_trip = z3.Not(z3.And(c0, c1, c2))

    def test_both_sides_of_a_split_join_back_to_the_parent(self) -> None:
        """if/else: the join's path condition is the one before the split, the selector the
        branch condition alone."""
        pc, sel = join_guards([z3.And(self.p, self.c0), z3.And(self.p, z3.Not(self.c0))], None)
        assert (True, True) == (pc.eq(self.p), sel[0].eq(self.c0))  # type: ignore[union-attr]

    def test_loop_exits_are_selected_by_their_last_condition(self) -> None:
        """Exit k is selected by !c_k, not by the whole path condition of k trips."""
        _, sel = join_guards(list(self.exits), None)
        assert [True, True, True] == [g.eq(z3.Not(c))  # type: ignore[union-attr]
                                      for g, c in zip(sel, (self.c0, self.c1, self.c2), strict=True)]

    def test_the_chain_picks_each_path_and_the_join_is_exact(self) -> None:
        """Under the assumptions, the chain picks path i wherever pc_i holds, and the join's
        path condition is the disjunction of the paths' (with and without the oracle)."""
        for oracle in (None, Oracle([self.no_third_trip], timeout_ms=30_000)):
            pc, sel = join_guards(list(self.exits), oracle)
            for i, pci in enumerate(self.exits):
                assert _valid(z3.Implies(z3.And(self.no_third_trip, pci), _chain(sel) == i))
            assert _valid(z3.Implies(self.no_third_trip, pc == z3.Or(*self.exits)))

    def test_the_oracle_closes_an_infeasible_gap(self) -> None:
        """Without the oracle the loop's join keeps a disjunction; with it (the third trip is
        infeasible under the assumptions) it is the path condition before the loop."""
        pc, _ = join_guards(list(self.exits), None)
        assert not pc.eq(self.p)  # type: ignore[union-attr]
        pc, _ = join_guards(list(self.exits), Oracle([self.no_third_trip], timeout_ms=30_000))
        assert pc.eq(self.p)  # type: ignore[union-attr]


class TestSpecialise:
    x, s, v = z3.BitVec("x", 64), z3.BitVec("s", 64), z3.Bool("v")
    a, b = z3.BitVecs("a b", 512)

    def _context(self, *facts: z3.BoolRef) -> z3.Solver:
        ctx = z3.Solver()
        ctx.add(*facts)
        return ctx

    def test_a_condition_the_context_fixes_is_folded(self) -> None:
        """x < 4 under x < 2: the ite is its then-branch and the difference is false."""
        diff = z3.If(z3.ULT(self.x, 4), self.a, self.b) != self.a
        assert [True] == [z3.is_false(d) for d in
                          specialise([diff], self._context(z3.ULT(self.x, 2)), {})]

    def test_an_undecided_condition_is_kept_and_its_difference_found(self) -> None:
        """x < 4 under x < 8 stays; the result is satisfiable with the original true."""
        diff = z3.If(z3.ULT(self.x, 4), self.a, self.b) != self.a
        ctx = self._context(z3.ULT(self.x, 8))
        (out,) = specialise([diff], ctx, {})
        assert z3.sat == ctx.check(out)
        assert z3.is_true(ctx.model().eval(diff, model_completion=True))

    def test_reads_of_one_index_written_two_ways_are_unified(self) -> None:
        """mem[s + (v ? x : 0)] and mem[v ? s + x : s] are one struct page."""
        mem = z3.Array("mem", z3.BitVecSort(64), z3.BitVecSort(512))
        diff = z3.Select(mem, self.s + z3.If(self.v, self.x, 0)) != \
            z3.Select(mem, z3.If(self.v, self.s + self.x, self.s))
        assert [True] == [z3.is_false(d) for d in specialise([diff], self._context(), {})]


class _Counted(z3.Solver):
    """A solver that counts its checks of a condition (and refuses them when ``refuse`` is
    set; a check of its assertions alone, for a model, is allowed)."""

    def __init__(self, *facts: z3.BoolRef, refuse: bool = False) -> None:
        super().__init__()
        self.add(*facts)
        self.checks, self.refuse = 0, refuse

    def check(self, *extra: z3.ExprRef) -> z3.CheckSatResult:
        if extra:
            assert not self.refuse, "a condition asked of a context that must not be asked"
            self.checks += 1
        return super().check(*extra)


class _Parent:
    """What specialise reads of a parent context (common._Shared): its solver, decisions
    and models."""

    def __init__(self, context: z3.Solver) -> None:
        self.context, self.decided, self.models = context, {}, []


class TestSpecialiseParent:
    """specialise's parent context: a weaker context shared by a cell's cases."""

    x, k = z3.BitVec("x", 64), z3.BitVec("k", 64)
    a, b = z3.BitVecs("a b", 512)

    def test_a_condition_the_parent_decides_is_not_asked_of_the_case(self) -> None:
        """x < 4 under the parent's x < 2 (the case has x < 2 and k < 3): folded, and the
        case's own solver never asked; the parent's decision is kept for the next case."""
        parent = _Parent(_Counted(z3.ULT(self.x, 2)))
        diff = z3.If(z3.ULT(self.x, 4), self.a, self.b) != self.a
        case = _Counted(z3.ULT(self.x, 2), z3.ULT(self.k, 3), refuse=True)
        (out,) = specialise([diff], case, {}, None, parent, frozenset({"k"}))  # type: ignore[arg-type]
        assert z3.is_false(out)
        asked = parent.context.checks
        again = _Counted(z3.ULT(self.x, 1), refuse=True)
        (out,) = specialise([diff], again, {}, None, parent, frozenset({"k"}))  # type: ignore[arg-type]
        assert z3.is_false(out) and parent.context.checks == asked

    def test_a_condition_over_the_roles_index_is_asked_of_the_case(self) -> None:
        """k < 4 names the role's index k: decided by the case (k < 3), never by the
        parent, which does not constrain k."""
        parent = _Parent(_Counted(refuse=True))
        diff = z3.If(z3.ULT(self.k, 4), self.a, self.b) != self.a
        (out,) = specialise([diff], _Counted(z3.ULT(self.k, 3)), {}, None, parent,  # type: ignore[arg-type]
                            frozenset({"k"}))
        assert z3.is_false(out)

    def test_a_condition_the_parent_leaves_open_is_asked_of_the_case(self) -> None:
        """x < 4 is open under the parent's x < 8; the case (x < 2) decides it."""
        parent = _Parent(_Counted(z3.ULT(self.x, 8)))
        diff = z3.If(z3.ULT(self.x, 4), self.a, self.b) != self.a
        case = _Counted(z3.ULT(self.x, 2))
        (out,) = specialise([diff], case, {}, None, parent, frozenset({"k"}))  # type: ignore[arg-type]
        assert z3.is_false(out) and case.checks >= 1

    def test_a_condition_over_no_tail_index_is_decided_in_the_compounds_context(self) -> None:
        """The tail role's compound context (``inner``, common._Shared.compound): x < 4
        names no tail index k, so the compound's context (x < 2) decides it, once for every
        case of that compound; k < 4 names it and is asked of the case (k < 3) only."""
        compound = _Parent(_Counted(z3.ULT(self.x, 2)))
        diff = z3.If(z3.ULT(self.x, 4), self.a, self.b) != self.a
        case = _Counted(z3.ULT(self.x, 2), z3.ULT(self.k, 3), refuse=True)
        (out,) = specialise([diff], case, {}, None, None, frozenset(),  # type: ignore[arg-type]
                            [(compound, frozenset({"k"}))])  # type: ignore[list-item]
        assert z3.is_false(out) and compound.context.checks >= 1
        by_k = z3.If(z3.ULT(self.k, 4), self.a, self.b) != self.a
        guard = _Parent(_Counted(refuse=True))
        (out,) = specialise([by_k], _Counted(z3.ULT(self.k, 3)), {}, None, None,  # type: ignore[arg-type]
                            frozenset(), [(guard, frozenset({"k"}))])  # type: ignore[list-item]
        assert z3.is_false(out)

    @pytest.mark.parametrize("check", ["outer", "implied"])
    def test_what_the_context_checks_accept_follows_in_every_case(self, check: str) -> None:
        """The code's checks of RoleClaim.outer (``_is_conjunct``) and RoleClaim.implied
        (``_implied_by``), asked of z3: every claim they accept for the tail role's
        constraint (c < n, 3 <= t < 2^order) follows from each of check_role's cases of it
        (the constraint with c fixed to 0..SPLIT-1, or c >= SPLIT), so a decision in the
        compound's or the parent context holds in each; the claims refused include ones
        that do not follow."""
        from equiv.zone_device.source.common import _implied_by, _is_conjunct

        c, n, t, m = z3.BitVecs("c n t m", 64)
        cons = z3.And(z3.And(z3.ULT(c, n), z3.UGE(t, 3)), z3.ULT(t, 512))
        claims = [z3.ULT(c, n), z3.UGE(t, 3), z3.ULT(t, 512), z3.ULT(0, n), z3.ULT(c, m),
                  z3.ULT(c, 5), z3.ULE(c, n), z3.ULT(n, c), z3.ULT(0, m), z3.ULT(1, n),
                  z3.ULT(0, t), z3.ULT(2, n)]
        accepted = [x for x in claims if (_is_conjunct(cons, x) if check == "outer"
                                          else _implied_by(cons, x, c))]
        assert len(accepted) == (3 if check == "outer" else 4)
        for x in accepted:
            for cc in [*(c == i for i in range(SPLIT_COMPOUNDS)), z3.UGE(c, SPLIT_COMPOUNDS)]:
                s = z3.Solver()
                s.add(z3.And(cons, cc), z3.Not(x))
                assert s.check() == z3.unsat, x
        assert [x for x in claims if x not in accepted and
                z3.Solver().check(cons, z3.Not(x)) == z3.sat], "seeded claims that do not follow"

    def test_an_outer_claim_the_cases_do_not_imply_is_refused(self) -> None:
        """Seeded bug for the compound's context: an ``outer`` claim that is not a conjunct
        of the role's constraint (here c < 5 for a constraint c < n) would let a decision of
        a context the cases do not imply stand in them; check_role refuses it before asking
        anything."""
        from equiv.zone_device.source.common import check_role

        c, t, n = z3.BitVecs("c t n", 64)
        cons = z3.And(z3.And(z3.ULT(c, n), z3.UGE(t, 3)), z3.ULT(t, 512))
        with pytest.raises(ValueError, match="not a conjunct"):
            check_role("tail_equal", cons, z3.BoolVal(True), [], c, t, None,  # type: ignore[arg-type]
                       9, 1_000, outer=z3.ULT(c, 5))

    def test_an_implied_claim_the_cases_do_not_imply_is_refused(self) -> None:
        """Seeded bug for the parent context: an ``implied`` claim 0 < m for a constraint
        c < n (another term) would let the parent's decisions stand in cases that do not
        imply its assertions; check_role refuses it before asking anything.  0 < n, and a
        conjunct itself, are accepted."""
        from equiv.zone_device.source.common import _implied_by, check_role

        c, t, n, m = z3.BitVecs("c t n m", 64)
        cons = z3.And(z3.And(z3.ULT(c, n), z3.UGE(t, 3)), z3.ULT(t, 512))
        with pytest.raises(ValueError, match="implied claim"):
            check_role("tail_equal", cons, z3.BoolVal(True), [], c, t, None,  # type: ignore[arg-type]
                       9, 1_000, implied=z3.ULT(0, m))
        assert _implied_by(cons, z3.ULT(0, n), c) and _implied_by(cons, z3.UGE(t, 3), c)
        assert not _implied_by(cons, z3.ULT(1, n), c) and not _implied_by(cons, z3.ULT(0, n), t)


class TestAliased:
    @pytest.mark.parametrize(("order", "altmap", "early"), [
        (9, None, False), (9, (4, 4), False), (9, None, True), (7, None, False),
        (18, None, False)])
    def test_aliased_is_where_the_model_folds_a_name(self, order: int,
                                                     altmap: tuple[int, int] | None,
                                                     early: bool) -> None:
        """A struct page is aliased exactly where the model's vmemmap namer folds its name
        onto another one (a deduplicated compound's tails past the first two vmemmap pages:
        no altmap, not an early section, compounds over two vmemmap pages)."""
        sc = Scenario(Layout.from_config(CFG), None, order)
        start = 1 << 30
        sect = start >> CFG.pfn_section_shift
        inp = concrete_inputs(sc.layout, start_pfn=start, nr_pages=2 << order, altmap=altmap,
                              early=frozenset({sect}) if early else frozenset())
        g, name = geometry(sc, inp), vmemmap_namer(sc, inp)
        for c in (0, 1):
            for t in (0, 1, 2, 127, 128, 129, (1 << order) - 1):
                if t >= 1 << order:
                    continue
                cc, tt = CBV(c, 64), CBV(t, 64)
                folded = int(name(cc, tt)) != int(join_key(sc, cc, tt))
                assert folded == bool(aliased(sc, inp, g, cc, tt)), (c, t)


@pytest.mark.slow
class TestSourceDerivedProof:
    def test_612_text_equals_the_612y_hand_path(self, tree612: KernelTree) -> None:
        """All five types (symbolic), any number of compounds, from order 0 to the PUD order
        (9 and 18: device-dax compounds with a deduplicated vmemmap): PROVED, loops
        summarised on both sides and their lemmas proved."""
        st = setup(tree612, CFG, MODELS["v6.12.y"])
        run = run_fidelity(st, [None], [0, 2, 9, 18], jobs=2)
        assert [Verdict.PROVED] * 4 == [c.verdict for c in run.cells]
        assert all("loop_summary_lemmas" == c.roles[0].name for c in run.cells)
        assert {"memmap_init_zone_device", "memmap_init_compound", "__init_zone_device_page",
                "__init_single_page", "prep_compound_tail",
                "prep_compound_head"} <= {n for n, _ in run.interpreted}

    def test_worker_processes_give_the_same_cells(self, tree612: KernelTree) -> None:
        """jobs=2 runs the cells in workers: the same cells, verdicts and order as in-process."""
        st = setup(tree612, CFG, MODELS["v6.12.y"])
        serial, workers = (run_fidelity(st, [None], [1, 0], jobs=j) for j in (1, 2))
        assert [(c.order, c.verdict, [r.name for r in c.roles]) for c in serial.cells] == \
            [(c.order, c.verdict, [r.name for r in c.roles]) for c in workers.cells]

    def test_changed_statement_is_refuted_with_a_counterexample(self, linux612: Path,
                                                                 tmp_path: Path) -> None:
        """set_page_count(page, 1) for tails: tail 1's _refcount differs, replayed."""
        root = _mutated(linux612, tmp_path, "mm/mm_init.c",
                        "\t\tset_page_count(page, 0);\n\n\t\t/*\n\t\t * The first tail",
                        "\t\tset_page_count(page, 1);\n\n\t\t/*\n\t\t * The first tail")
        st = setup(load_tree(root), CFG, MODELS["v6.12.y"])
        cell = check_fidelity_cell(st, None, 1)
        assert Verdict.REFUTED == cell.verdict
        tail1 = next(r for r in cell.roles if r.name == "tail1_equal")
        assert [("_refcount", 0, 1)] == [(d.names[0], d.slow, d.fast) for d in tail1.diffs]

    def test_a_write_past_the_range_is_refuted(self, linux612: Path, tmp_path: Path) -> None:
        """pfn <= end_pfn in memmap_init_compound: the last compound initialises the struct
        page after it; only outside_equal is refuted, at tail 0 past the range, replayed."""
        root = _mutated(linux612, tmp_path, "mm/mm_init.c", "pfn < end_pfn; pfn++)",
                        "pfn <= end_pfn; pfn++)")
        st = setup(load_tree(root), CFG, MODELS["v6.12.y"])
        cell = check_fidelity_cell(st, None, 1)
        refuted = [r for r in cell.roles if r.verdict == Verdict.REFUTED]
        assert ["outside_equal"] == [r.name for r in refuted]
        assert 0 == dict(refuted[0].index)["t"]
        assert "flags" in {n for d in refuted[0].diffs for n in d.fields}

    def test_a_write_below_the_range_is_refuted(self, linux612: Path, tmp_path: Path) -> None:
        """Each head written at pfn_to_page(pfn - 1): the first one lands below the first
        pfn (an altmap page, or the struct page before start_pfn), which the outside role
        observes; replayed, at a compound below the first one."""
        root = _mutated(linux612, tmp_path, "mm/mm_init.c",
                        "pfn += pfns_per_compound) {\n\t\tstruct page *page = pfn_to_page(pfn);",
                        "pfn += pfns_per_compound) {\n\t\tstruct page *page = pfn_to_page(pfn - 1);")
        st = setup(load_tree(root), CFG, MODELS["v6.12.y"])
        cell = check_fidelity_cell(st, None, 1)
        outside = next(r for r in cell.roles if r.name == "outside_equal")
        assert Verdict.REFUTED == outside.verdict
        assert dict(outside.index)["c"] >= 1 << 63  # below the first compound

    def test_612_release_model_is_refuted_by_the_text(self, tree612: KernelTree) -> None:
        """Finding: --compare v6.12 writes the 2026 folio fields and compound_info encoding
        into page[1]; the 6.12 text does not.  The word is named as the 6.12 tree names it."""
        st = setup(tree612, CFG, MODELS["v6.12"])
        cell = check_fidelity_cell(st, None, 1)
        tail1 = next(r for r in cell.roles if r.name == "tail1_equal")
        assert Verdict.REFUTED == tail1.verdict
        names = {n for d in tail1.diffs for n in d.fields}
        assert "compound_head" in names and "compound_info" not in names


class TestCli:
    def test_a_612_tree_names_the_word_at_8_as_612_does(self, linux612: Path,
                                                         tmp_path: Path) -> None:
        """set_compound_head() storing head + 3: the difference at offset 8 is named with
        6.12's mm_types.h (compound_head, pgmap), never the 2026 compound_info, which 6.12
        does not have."""
        root = _mutated(linux612, tmp_path, "include/linux/page-flags.h",
                        "WRITE_ONCE(page->compound_head, (unsigned long)head + 1);",
                        "WRITE_ONCE(page->compound_head, (unsigned long)head + 3);")
        out = io.StringIO()
        code = main(["--linux", str(root), "--types", "GENERIC", "--orders", "1", "--no-times",
                     "--quiet"], out=out, err=io.StringIO())
        text = out.getvalue()
        assert code == 1, text
        (names,) = re.findall(r"(\S+)\s+@8: hand ", text)
        assert {"compound_head", "pgmap"} <= set(names.split("/")), names
        assert "compound_info" not in text and "folio.pgmap" not in text

    def test_not_a_tree_is_a_one_line_input_error(self, tmp_path: Path) -> None:
        """--linux on a folder without kernel files: exit 3, one line."""
        err = io.StringIO()
        assert 3 == main(["--linux", str(tmp_path)], out=io.StringIO(), err=err)
        assert 1 == len(err.getvalue().splitlines())

    def test_order_out_of_bounds(self, linux612: Path) -> None:
        """Orders go up to the PUD order: order 19 is refused with the valid range."""
        err = io.StringIO()
        assert 3 == main(["--linux", str(linux612), "--orders", "19"], out=io.StringIO(), err=err)
        assert "0..18" in err.getvalue()

    def test_drift_is_printed_before_proof_results(self, linux612: Path) -> None:
        """The report starts with the drift table and ends with the verdict (order 0)."""
        out = io.StringIO()
        assert 0 == main(["--linux", str(linux612), "--orders", "0", "--no-times"], out=out)
        text = out.getvalue()
        assert text.index("drift") < text.index("source-derived proof") < text.index("verdict: PROVED")
        assert "trusted helpers, not interpreted" in text


def test_live_kernel_text_lines(linux612: Path) -> None:
    """Each line equiv.zone_device.live.present.KERNEL_TEXT gives a provenance step starts the named
    function's definition in linux-source-6.12 (the live report's SARIF points there)."""
    from equiv.zone_device.live.present import KERNEL_TEXT

    for name, (file, line) in KERNEL_TEXT.items():
        text = (linux612 / file).read_text().splitlines()[line - 1]
        assert re.search(rf"\b{re.escape(name)}\(", text), (name, file, line, text)

"""Counterexamples: read off a z3 model, replayed concretely through both paths.

A model of a refuted obligation gives concrete inputs (pfn, nid, pointers, altmap, which
sections are early, and the initial bytes of every struct page it cares about).  Before a
counterexample is reported, :func:`replay` runs both paths on those values in the concrete
domain (plain ints) and compares the observed struct page.  The difference must be exactly
the one the solver predicted; if it is not, :class:`~equiv.engine.errors.InternalMismatch`
is raised, since that would mean the model or the loop summaries are wrong.  The concrete
run also records which modelled step last wrote each byte (provenance).

How the loops run (``lazy``): when every loop lemma of the cell is proved, the replay is
*lazy* (:class:`equiv.loops._LazyLoop`): a loop iteration runs only for the struct pages
and bitmap cells the observation reads (the observed compound's head, tails 1 and 2 and the
observed tail, the aliases a path writes them through, the pageblock cells), on the real
loop bodies, each iteration checked concretely against its frame; by the proved lemmas that
is the memory every iteration in order leaves, and an order-18 replay costs what an order-2
one does.  Otherwise (a lemma not proved) every iteration of every loop really runs, in
order.  A refuted frame lemma (:func:`replay_frame`) is replayed with the loops whose lemmas
it proves again (:func:`proved_loops`) run lazily where that is exact (no unproved loop ran
before them or runs inside them: :attr:`equiv.loops.Ctx.lazy_loops`) and the others every
iteration, so an order-18 tail loop overrun costs the 2^18 iterations of the loop that
overruns, not those of every loop of both paths; when that does not show the difference on
the page the lemma names, every iteration of every loop runs, as the report of a difference
elsewhere needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import z3
from attrs import Factory, define, evolve, frozen

from equiv.engine.bv import CBV
from equiv.engine.errors import InternalMismatch
from equiv.engine.results import ObligationResult
from equiv.loops import Ctx, LazyNesting, Lemma
from equiv.memmap import Inputs, Scenario, geometry, pfn_of, pfn_of_key, vmemmap_namer
from equiv.page_model import KEY_BITS, PB_BITS, Chain, ConcreteMemory, Layout, PageState
from equiv.slow_path import memmap_init_zone_device
from equiv.zone_device.obligations import ROLES, CellProblem, FastFn, Observation, build_cell


@frozen
class FieldDiff:
    """One differing atom of struct page (or the bitmap cell), with its provenance: for each
    side, the distinct chains of modelled steps that wrote its bytes (oldest step first; an
    empty chain means initial memory, never written)."""

    offset: int
    size: int
    names: tuple[str, ...]
    slow: int
    fast: int
    slow_provenance: tuple[Chain, ...]
    fast_provenance: tuple[Chain, ...]

    @property
    def fields(self) -> tuple[str, ...]:
        """The names without the byte range a part of a wider field carries
        (``memcg_data[4..7]`` is a part of ``memcg_data``).

        >>> FieldDiff(60, 4, ("memcg_data[4..7]", "folio._nr_pages"), 0, 1, (), ()).fields
        ('memcg_data', 'folio._nr_pages')
        """
        return tuple(re.sub(r"\[\d+\.\.\d+\]$", "", n) for n in self.names)


@frozen
class InitialMemory:
    """The initial memory of a counterexample: the struct pages and bitmap cells the model
    gave explicitly, and the value of every other one (None: each read evaluated alone, all
    recorded in the tuples)."""

    #: (compound, slot, struct page bytes as an int): the storage key (compounds below the
    #: first pfn wrap modulo 2^64)
    pages: tuple[tuple[int, int, int], ...]
    pages_default: int | None
    pageblock: tuple[tuple[int, int], ...]  # (bitmap cell, bits)
    pageblock_default: int | None

    def to_json(self) -> dict[str, Any]:
        return {"pages": [{"compound": c, "slot": s, "bytes": hex(v)} for c, s, v in self.pages],
                "pages_default": None if self.pages_default is None else hex(self.pages_default),
                "pageblock": [{"index": b, "bits": hex(v)} for b, v in self.pageblock],
                "pageblock_default": None if self.pageblock_default is None
                else hex(self.pageblock_default)}


@frozen
class Observed:
    """The bytes of the struct page (or bitmap cell) a counterexample observes, in memory
    order: initial (the storage's contents before either path ran), slow and fast."""

    initial: bytes
    slow: bytes
    fast: bytes

    def to_cache(self) -> dict[str, str]:
        return {"initial": self.initial.hex(), "slow": self.slow.hex(), "fast": self.fast.hex()}

    @classmethod
    def from_cache(cls, doc: dict[str, str] | None) -> Observed | None:
        """The inverse of :meth:`to_cache` (None stays None)."""
        if doc is None:
            return None
        return cls(bytes.fromhex(doc["initial"]), bytes.fromhex(doc["slow"]),
                   bytes.fromhex(doc["fast"]))


@frozen
class Counterexample:
    """A replayed counterexample of one page-role obligation."""

    role: str
    inputs: dict[str, int | bool]
    index: dict[str, int]
    pfn: int | None
    early_sections: dict[int, bool]
    diffs: tuple[FieldDiff, ...]
    memory: InitialMemory
    #: pfn of the first head, where the v11 head template is seeded (tail templates: +1)
    seed_pfn: int | None = None
    #: PFN_SECTION_SHIFT of the config, to name the sections of the pfns above
    section_shift: int = 0
    #: inputs (and pseudo-inputs: the page, the initial memory) whose value does not matter:
    #: re-checked with that one freed, every other value gives the same difference
    irrelevant: tuple[str, ...] = ()
    #: "unique", "one of many" or "unknown" (inputs and page; memory contents aside)
    multiplicity: str = "unknown"
    #: for a refuted frame lemma: the loop iteration that wrote this struct page outside
    #: its frame, in words (None for a page-role counterexample)
    frame: str | None = None
    #: the observed struct page (or bitmap cell) as bytes in memory order: its initial
    #: contents and what the slow and the fast path left there (the reports' hexdump and
    #: diagram); None when not recorded (a counterexample read back from JSON)
    observed: Observed | None = None
    #: the replay ran every iteration of every loop (a loop lemma of the cell was not
    #: proved, or this is a refuted frame lemma's); False: lazily, the iterations the
    #: observation needs (see the module docstring).  A recorded replay runs the same way.
    every_iteration: bool = False

    @classmethod
    def from_json(cls, doc: dict[str, Any], section_shift: int = 0) -> Counterexample:
        """The inverse of :meth:`to_json` (what an emitted test replays)."""
        def num(v: str | None) -> int | None:
            return None if v is None else int(v, 16)

        m = doc["initial_memory"]
        memory = InitialMemory(
            tuple((p["compound"], p["slot"], int(p["bytes"], 16)) for p in m["pages"]),
            num(m["pages_default"]),
            tuple((p["index"], int(p["bits"], 16)) for p in m["pageblock"]),
            num(m["pageblock_default"]))
        diffs = tuple(FieldDiff(f["offset"], f["size"], tuple(f["names"]), int(f["slow"], 16),
                                int(f["fast"], 16), tuple(map(tuple, f["slow_provenance"])),
                                tuple(map(tuple, f["fast_provenance"])))
                      for f in doc["fields"])
        return cls(doc["role"],
                   {k: (v if isinstance(v, bool) else int(v, 16)) for k, v in doc["inputs"].items()},
                   dict(doc["index"]), num(doc["pfn"]),
                   {int(k, 16): v for k, v in doc["early_sections"].items()}, diffs, memory,
                   seed_pfn=num(doc["template_seed_pfn"]), section_shift=section_shift,
                   irrelevant=tuple(doc["irrelevant_inputs"]), multiplicity=doc["multiplicity"],
                   frame=doc.get("frame"),
                   every_iteration=doc.get("replay") == "every iteration")

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "inputs": {k: (v if isinstance(v, bool) else hex(v)) for k, v in self.inputs.items()},
            "irrelevant_inputs": list(self.irrelevant),
            "multiplicity": self.multiplicity,
            "index": self.index,
            "pfn": None if self.pfn is None else hex(self.pfn),
            "early_sections": {hex(k): v for k, v in sorted(self.early_sections.items())},
            "template_seed_pfn": None if self.seed_pfn is None else hex(self.seed_pfn),
            **({"frame": self.frame} if self.frame is not None else {}),
            **({"replay": "every iteration"} if self.every_iteration else {}),
            "initial_memory": self.memory.to_json(),
            "fields": [
                {"names": list(d.names), "offset": d.offset, "size": d.size,
                 "slow": hex(d.slow), "fast": hex(d.fast),
                 "slow_provenance": [list(c) for c in d.slow_provenance],
                 "fast_provenance": [list(c) for c in d.fast_provenance]}
                for d in self.diffs
            ],
        }

    def to_cache(self) -> dict[str, Any]:
        """The result cache's payload: the JSON plus the section shift and the observed
        bytes it does not carry."""
        return {**self.to_json(), "section_shift": self.section_shift,
                "observed": None if self.observed is None else self.observed.to_cache()}

    @classmethod
    def from_cache(cls, doc: dict[str, Any], *_: object) -> Counterexample:
        """The inverse of :meth:`to_cache` (a
        :data:`~equiv.engine.results.CounterexampleLoader`)."""
        return evolve(cls.from_json(doc, doc.get("section_shift", 0)),
                      observed=Observed.from_cache(doc.get("observed")))


class _ArrayInterp:
    """Point lookups in a model's array, decoded once (Store chains over a constant); when
    the array is not of that shape each point is evaluated alone and recorded."""

    def __init__(self, model: z3.ModelRef, arr: z3.ArrayRef) -> None:
        self.model, self.arr = model, arr
        self.entries: dict[int, int] = {}
        self.default: int | None = None
        self.decoded = True
        t = model.eval(arr, model_completion=True)
        while z3.is_store(t):
            self.entries.setdefault(t.arg(1).as_long(), t.arg(2).as_long())
            t = t.arg(0)
        if z3.is_const_array(t) and z3.is_bv_value(t.arg(0)):
            self.default = t.arg(0).as_long()
        else:  # fall back to evaluating (and recording) each point
            self.entries, self.decoded = {}, False

    def __call__(self, idx: int, width: int) -> int:
        hit = self.entries.get(idx)
        if hit is not None:
            return hit
        if self.default is not None:
            return self.default
        v: int = self.model.eval(z3.Select(self.arr, z3.BitVecVal(idx, width)),
                                 model_completion=True).as_long()
        self.entries[idx] = v
        return v


def concrete_factory(L: Layout, scalars: dict[str, int | bool], early: Callable[[int], bool],
                     pages: Callable[[int], int], pageblock: Callable[[int], int],
                     track: Callable[[int], bool] | None = None) -> Callable[[], Inputs]:
    """Concrete inputs from plain values: each call gives fresh inputs (each path gets its
    own memory).  ``pages(n)`` is the initial struct page stored under key ``n`` as an int,
    ``pageblock(b)`` the initial bitmap cell ``b``.  ``track(n)`` (default: every key) says
    which struct pages record provenance: what a report prints, and what a copy from them
    carries on."""
    unwritten: tuple[Chain, ...] = ((),) * L.size

    def initial(n: int) -> PageState:
        return PageState(bits=CBV(pages(n), 8 * L.size),
                         origin=unwritten if track is None or track(n) else None,
                         events=CBV(0, 16) if L.config.tracks_events else None)

    def factory() -> Inputs:
        vals: dict[str, Any] = {k: (v if isinstance(v, bool) else
                                    CBV(v, 32 if k == "pgmap_type" else 64))
                                for k, v in scalars.items()}
        mem = ConcreteMemory(initial, lambda b: CBV(pageblock(int(b)), PB_BITS))
        return Inputs(early_section=lambda nr: early(int(nr)), mem=mem, **vals)

    return factory


def concrete_inputs(problem: CellProblem, model: z3.ModelRef,
                    track: Callable[[int], bool] | None = None
                    ) -> tuple[Callable[[], Inputs], dict[str, int | bool], dict[int, bool],
                               Callable[[], InitialMemory]]:
    """Concrete inputs from ``model``: a factory, the scalar values for the report, the
    early_section answers the replay asked for, and (after the replay) the initial memory
    it read.  ``track``: see :func:`concrete_factory`."""
    return _concrete_inputs(problem, model, track)[:4]


@frozen
class _Tables:
    """The model's initial struct pages and bitmap cells, as :func:`concrete_inputs` reads
    them."""

    pages: _ArrayInterp
    pageblock: _ArrayInterp

    @property
    def decoded(self) -> bool:
        """Both are finite tables with a default: the initial memory recorded is the same
        whatever a replay reads."""
        return self.pages.decoded and self.pageblock.decoded


def _concrete_inputs(problem: CellProblem, model: z3.ModelRef,
                     track: Callable[[int], bool] | None = None
                     ) -> tuple[Callable[[], Inputs], dict[str, int | bool], dict[int, bool],
                                Callable[[], InitialMemory], _Tables]:
    """:func:`concrete_inputs`, and the model's tables of initial memory."""
    inp, L = problem.inputs, problem.scenario.layout
    scalars: dict[str, int | bool] = {}
    for name in Inputs.SCALARS:
        v = model.eval(getattr(inp, name), model_completion=True)
        scalars[name] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
    pages = _ArrayInterp(model, z3.Array("mem0.pages", z3.BitVecSort(KEY_BITS),
                                         z3.BitVecSort(8 * L.size)))
    pbs = _ArrayInterp(model, z3.Array("mem0.pageblock", z3.BitVecSort(64), z3.BitVecSort(PB_BITS)))
    early_seen: dict[int, bool] = {}

    def early(n: int) -> bool:
        if n not in early_seen:
            early_seen[n] = z3.is_true(model.eval(problem.early(z3.BitVecVal(n, 64)),
                                                  model_completion=True))
        return early_seen[n]

    def memory() -> InitialMemory:
        return InitialMemory(
            tuple(sorted((k >> 64, k & ((1 << 64) - 1), v) for k, v in pages.entries.items())),
            pages.default, tuple(sorted(pbs.entries.items())), pbs.default)

    factory = concrete_factory(L, scalars, early, lambda n: pages(n, KEY_BITS), lambda b: pbs(b, 64),
                               track)
    return factory, scalars, early_seen, memory, _Tables(pages, pbs)


def _chains(origin: tuple[Chain, ...], lo: int, hi: int) -> tuple[Chain, ...]:
    return tuple(dict.fromkeys(origin[lo:hi]))


@frozen
class ConcreteRun:
    """Both paths run concretely on one input: the observed struct pages (or bitmap cells)."""

    slow: PageState | int
    fast: PageState | int
    pfn: int | None
    seed_pfn: int | None


def concrete_ctx(lazy: bool = False) -> Ctx:
    """A concrete context; ``lazy``: loops run only the iterations whose struct pages are
    read (see the module docstring)."""
    ctx = Ctx(False)
    ctx.lazy = lazy
    return ctx


def run_concrete(sc: Scenario, fast: FastFn, factory: Callable[[], Inputs],
                 index: dict[str, int], *, lazy: bool = False) -> ConcreteRun:
    """Run the slow path and ``fast`` on fresh inputs from ``factory`` (real loops: every
    iteration, or with ``lazy`` the iterations the observation needs) and read the page
    ``index`` (``c``, ``t``) or bitmap cell (``b``)."""
    slow = memmap_init_zone_device(concrete_ctx(lazy), sc, factory())
    fst = fast(concrete_ctx(lazy), sc, factory())
    if "b" in index:
        b = CBV(index["b"], 64)
        return ConcreteRun(int(slow.read_pb(b)), int(fst.read_pb(b)), None, None)
    g = geometry(sc, factory())
    c, t = CBV(index["c"], 64), CBV(index["t"], 64)
    return ConcreteRun(slow.read(c, t), fst.read(c, t), int(pfn_of(sc, g, c, t)),
                       int(g.start))


def page_diffs(L: Layout, page_index: int | None, run: ConcreteRun) -> tuple[FieldDiff, ...]:
    """The atoms (and the page_ref_set event count) in which the two pages of ``run`` differ,
    named with the views of the page's position in its folio."""
    if isinstance(run.slow, int) or isinstance(run.fast, int):
        assert isinstance(run.slow, int) and isinstance(run.fast, int), "one bitmap cell each"
        sv, fv = run.slow, run.fast
        step = ("pageblock_migratetype_init_range",)
        return () if sv == fv else (FieldDiff(0, 1, ("pageblock migratetype bits",), sv, fv,
                                              (step,), (step,)),)
    sp, fp = run.slow, run.fast
    assert sp.origin is not None and fp.origin is not None
    sb, fb = int(sp.bits), int(fp.bits)
    diffs: list[FieldDiff] = []
    for atom in L.atoms:
        lo, hi = atom.offset, atom.offset + atom.size
        mask = (1 << (8 * atom.size)) - 1
        sv, fv = (sb >> (8 * lo)) & mask, (fb >> (8 * lo)) & mask
        if sv != fv:
            diffs.append(FieldDiff(lo, atom.size, tuple(atom.labels_for(page_index)), sv, fv,
                                   _chains(sp.origin, lo, hi), _chains(fp.origin, lo, hi)))
    if sp.events is not None and fp.events is not None:
        se, fe = int(sp.events), int(fp.events)
        if se != fe:
            diffs.append(FieldDiff(L.size, 0, ("page_ref_set tracepoint events (observable, not "
                                               "memory)",), se, fe,
                                   (("set_page_count/init_page_count: __page_ref_set",),),
                                   (("memcpy of a template emits no event",),)))
    return tuple(diffs)


def replay(problem: CellProblem, ob: Observation, model: z3.ModelRef, *,
           lazy: bool = False) -> Counterexample:
    """Re-run both paths concretely on the model's values and report the differing atoms.

    Args:
        lazy: run only the loop iterations the observation needs; only when every loop
            lemma of ``problem`` is proved (see the module docstring).

    Raises:
        InternalMismatch: the concrete run does not show the difference the solver found
            (or, lazily, an iteration it ran left its frame).
    """
    sc, L = problem.scenario, problem.scenario.layout
    factory, scalars, early_seen, memory = concrete_inputs(problem, model)
    index = {k: model.eval(v, model_completion=True).as_long() for k, v in ob.indices.items()}
    run = run_concrete(sc, problem.fast, factory, index, lazy=lazy)
    if ob.slow is None:
        sym = (model.eval(ob.slow_cell, model_completion=True).as_long(),
               model.eval(ob.fast_cell, model_completion=True).as_long())
        if (run.slow, run.fast) != sym:
            raise InternalMismatch(
                f"replay of {ob.role.name}: concrete slow/fast {run.slow:#x}/{run.fast:#x}, "
                f"solver {sym[0]:#x}/{sym[1]:#x}")
    else:
        assert ob.fast is not None and isinstance(run.slow, PageState) \
            and isinstance(run.fast, PageState)
        for side, conc, symb in (("slow", run.slow, ob.slow), ("fast", run.fast, ob.fast)):
            if int(conc.bits) != model.eval(symb.bits, model_completion=True).as_long():
                raise InternalMismatch(
                    f"replay of {ob.role.name} ({index}) does not reproduce: concrete and "
                    f"symbolic evaluation disagree on the {side} path")
            if conc.events is not None and symb.events is not None and \
                    int(conc.events) != model.eval(symb.events, model_completion=True).as_long():
                raise InternalMismatch(f"replay of {ob.role.name}: page_ref_set event counts "
                                       f"differ between the concrete and symbolic {side} path")
    diffs = page_diffs(L, ob.role.page_index, run)
    if not diffs:
        raise InternalMismatch(f"replay of {ob.role.name}: the solver's difference vanished")
    cx = Counterexample(ob.role.name, scalars, index, run.pfn, dict(early_seen), diffs,
                        memory(), seed_pfn=run.seed_pfn, section_shift=L.config.pfn_section_shift,
                        every_iteration=not lazy)
    return evolve(cx, observed=observed_bytes(sc, factory, index, run.slow, run.fast))


def observed_bytes(sc: Scenario, factory: Callable[[], Inputs], index: dict[str, int],
             slow: PageState | int, fast: PageState | int) -> Observed:
    """The bytes of the struct page ``index`` (``c``, ``t``) or bitmap cell (``b``): its
    initial contents in the inputs of ``factory`` and the ``slow`` and ``fast`` results.
    Read after the counterexample's record is taken: the reads here may record more of the
    initial memory and of the early sections in the factory's tables."""
    probe = factory()
    if "b" in index:
        assert isinstance(slow, int) and isinstance(fast, int), "one bitmap cell each"
        n = (PB_BITS + 7) // 8
        init = int(probe.mem.read_pb(CBV(index["b"], 64)))
        return Observed(init.to_bytes(n, "little"), slow.to_bytes(n, "little"),
                        fast.to_bytes(n, "little"))
    assert isinstance(slow, PageState) and isinstance(fast, PageState)
    key = vmemmap_namer(sc, probe)(CBV(index["c"], 64), CBV(index["t"], 64))
    size = sc.layout.size
    return Observed(int(probe.mem.load(key).bits).to_bytes(size, "little"),
                    int(slow.bits).to_bytes(size, "little"),
                    int(fast.bits).to_bytes(size, "little"))


def _where(pfn: int, start_pfn: int, first: int, end: int) -> str:
    """Whose memmap the struct page of ``pfn`` is, in words."""
    if start_pfn <= pfn < first:
        return "inside the device range but before the first pfn initialised (the altmap's pages)"
    if first <= pfn < end:
        return "inside the range"
    if pfn == end:
        return "end_pfn: the struct page right after the device range"
    return "outside the device range [start_pfn, end_pfn)"


def replay_frame(problem: CellProblem, lemma: Lemma, model: z3.ModelRef) -> Counterexample | str:
    """A refuted frame-write (or frame-bound) lemma, replayed: iteration ``lemma.k`` of
    ``lemma.loop`` may write storage key ``lemma.key`` outside its frame (or lies outside
    the range its loop may write).  Both paths run concretely on the
    model's inputs; if the struct page at that key (or, failing that, any struct page or
    bitmap cell) ends up different, that is the counterexample.  Otherwise the reason the
    summary cannot be trusted, in words (the caller reports UNKNOWN).

    A frame-write lemma's struct page is looked at first with the loops whose lemmas hold
    run lazily (:func:`_replay_frame_key`: an order-18 replay then runs the 2^18 iterations
    of the unproved loop, not those of every loop of both paths); only when that page is
    left equal does every iteration of every loop run, in order."""
    k, n = frame_key(problem, lemma, model)
    if n >= 0:
        got = _replay_frame_key(problem, lemma, model, k, n)
        if got is not None:
            return got
    return _replay_frame_every(problem, lemma, model, k, n)


def frame_key(problem: CellProblem, lemma: Lemma, model: z3.ModelRef) -> tuple[int, int]:
    """The iteration of a refuted frame lemma's model and the storage key it writes out of
    its frame (-1 for a frame-bound lemma, which names no store)."""
    assert lemma.k is not None
    k = model.eval(lemma.k, model_completion=True).as_long()
    if lemma.key is None:
        return k, -1
    n = model.eval(lemma.key, model_completion=True).as_long()
    # a loop index past its compound names (c, t >= 2^order): rename it exactly
    m64 = (1 << 64) - 1
    probe = concrete_inputs(problem, model)[0]()
    return k, int(vmemmap_namer(problem.scenario, probe)(CBV(n >> 64, 64), CBV(n & m64, 64)))


def _frame_what(problem: CellProblem, lemma: Lemma, k: int, n: int, probe: Inputs) -> str:
    """What the refuted frame lemma's iteration ``k`` does, in words (``n``: the storage key
    it writes outside its frame, or -1)."""
    sc = problem.scenario
    g = geometry(sc, probe)
    start_pfn, first, end = int(probe.start_pfn), int(g.start), int(g.end)
    if n < 0:
        return f"iteration {k} of {lemma.loop} runs outside the range it may write: {lemma.text}"
    pfn_n = int(pfn_of_key(sc, g, CBV(n, KEY_BITS)))
    return (f"iteration {k} of {lemma.loop} writes the struct page of pfn {pfn_n:#x} "
            f"({_where(pfn_n, start_pfn, first, end)}), outside its frame")


def _frame_page_cx(problem: CellProblem, factory: Callable[[], Inputs],
                   scalars: dict[str, int | bool], early_seen: dict[int, bool],
                   memory: Callable[[], InitialMemory], slow: ConcreteMemory,
                   fst: ConcreteMemory, key: int, note: str) -> Counterexample:
    """The counterexample of a refuted frame lemma that shows on the struct page ``key``."""
    sc, L = problem.scenario, problem.scenario.layout
    probe = factory()
    g = geometry(sc, probe)
    first, ncomp = int(g.start), int(g.ncompounds)
    m64 = (1 << 64) - 1
    sp, fp = slow.load(CBV(key, KEY_BITS)), fst.load(CBV(key, KEY_BITS))
    c, t = key >> 64, key & m64
    role = ("outside" if c >= ncomp else {0: "head", 1: "tail1", 2: "tail2"}.get(t, "tail"))
    pfn = int(pfn_of_key(sc, g, CBV(key, KEY_BITS)))
    diffs = page_diffs(L, ROLES[role].page_index, ConcreteRun(sp, fp, pfn, first))
    cx = Counterexample(role, scalars, {"c": c, "t": t}, pfn, dict(early_seen), diffs,
                        memory(), seed_pfn=first,
                        section_shift=L.config.pfn_section_shift, frame=note,
                        every_iteration=True)
    return evolve(cx, observed=observed_bytes(sc, factory, cx.index, sp, fp))


@define
class _History:
    """Which struct pages a frame replay records write history (provenance) for.

    First the struct page written out of frame (``n``) and the pages templates are taken
    from (heads, tails 1 and 2): the rest of an order-18 replay goes without.  A page
    without history passes none on (:func:`equiv.template_path.copy_page`), so the page
    to report may lack it: a page other than those (:meth:`widen` adds it), or one a path
    copied a page without history onto (the last tail copied over a head: every page's
    history is then recorded).  The replay runs again after each widening; a page whose
    history is recorded along with every page it was copied from has it in full.
    """

    n: int
    wanted: set[int] = Factory(set)
    every: bool = False

    def __call__(self, key: int) -> bool:
        return self.every or key == self.n or key in self.wanted or key & _M64 < 3

    def complete(self, slow: ConcreteMemory, fst: ConcreteMemory, key: int) -> bool:
        """Do both paths' struct pages at ``key`` carry their write history?"""
        return all(m.load(CBV(key, KEY_BITS)).origin is not None for m in (slow, fst))

    def widen(self, key: int) -> None:
        """Record the history ``key`` lacked on the next run: its own, or every page's.

        Raises:
            InternalMismatch: every page's history was recorded already (a path built a
                struct page from none).
        """
        if self.every:
            raise InternalMismatch(f"frame replay: the struct page of storage key {key:#x} has "
                                   "no write history although every page's is recorded")
        if self(key):
            self.every = True
        else:
            self.wanted.add(key)


_M64 = (1 << 64) - 1


def _replay_frame_every(problem: CellProblem, lemma: Lemma, model: z3.ModelRef, k: int,
                        n: int) -> Counterexample | str:
    """:func:`replay_frame` with every iteration of every loop run, in order."""
    sc, L = problem.scenario, problem.scenario.layout
    history = _History(n)
    while True:
        factory, scalars, early_seen, memory = concrete_inputs(problem, model, history)
        probe = factory()
        g = geometry(sc, probe)
        start_pfn, first, end = int(probe.start_pfn), int(g.start), int(g.end)
        slow = memmap_init_zone_device(Ctx(False), sc, factory())
        fst = problem.fast(Ctx(False), sc, factory())
        assert isinstance(slow, ConcreteMemory) and isinstance(fst, ConcreteMemory)
        what = _frame_what(problem, lemma, k, n, probe)
        keys = sorted(set(slow.pages) | set(fst.pages))
        differ = [key for key in ([n, *keys] if n >= 0 else keys)
                  if _differ(slow.load(CBV(key, KEY_BITS)), fst.load(CBV(key, KEY_BITS)))]
        if differ and not history.complete(slow, fst, differ[0]):
            history.widen(differ[0])  # replay once more, with this page's history
            continue
        if differ:
            key = differ[0]
            pfn = int(pfn_of_key(sc, g, CBV(key, KEY_BITS)))
            note = what if key == n else (f"{what}; the first struct page left different is "
                                          f"pfn {pfn:#x} ({_where(pfn, start_pfn, first, end)})")
            return _frame_page_cx(problem, factory, scalars, early_seen, memory, slow, fst,
                                  key, note)
        for b in sorted(set(slow.pb) | set(fst.pb)):
            sv, fv = int(slow.read_pb(CBV(b, 64))), int(fst.read_pb(CBV(b, 64)))
            if sv != fv:
                diffs = page_diffs(L, None, ConcreteRun(sv, fv, None, None))
                cx = Counterexample("pageblock", scalars, {"b": b}, None, dict(early_seen),
                                    diffs, memory(), section_shift=L.config.pfn_section_shift,
                                    frame=what, every_iteration=True)
                return evolve(cx, observed=observed_bytes(sc, factory, cx.index, sv, fv))
        break
    return (f"{what}; replayed concretely, both paths still end with equal memory there and "
            "everywhere else, so no counterexample, but the loop summary is unjustified")


#: z3 budget of each query of :func:`proved_loops` (its answer only saves time: a loop not
#: shown to keep its lemmas within it runs every iteration)
PROVED_LOOPS_MS = 30_000


def proved_loops(problem: CellProblem, but: str) -> frozenset[str]:
    """The loops of ``problem`` other than ``but`` all of whose lemmas are valid under the
    cell's assumptions, each loop's shown by one solver query (its lemmas' negation UNSAT),
    and none of whose body's loops (:attr:`~equiv.loops.Lemma.inner`, at any depth) is
    another: a loop's lemmas are proved of the summaries of the loops in its body, so they
    are about the real loop only if theirs hold.  The lemmas of two loops of one name (one
    in each path) count together."""
    by_loop: dict[str, list[Lemma]] = {}
    for lm in problem.lemmas:
        by_loop.setdefault(lm.loop, []).append(lm)
    inner = {name: set().union(*(lm.inner for lm in members))
             for name, members in by_loop.items()}
    out = set()
    for name, members in by_loop.items():
        if name == but:
            continue
        s = z3.SolverFor("QF_AUFBV")
        s.set("timeout", PROVED_LOOPS_MS)
        for _, a in problem.assumptions:
            s.add(a)
        s.add(z3.Not(z3.And(*(lm.formula for lm in members))))
        if s.check() == z3.unsat:
            out.add(name)
    while any(inner[name] - out for name in out):
        out = {name for name in out if not inner[name] - out}
    return frozenset(out)


def _lazy_ctx(loops: frozenset[str]) -> Ctx:
    """A concrete context running ``loops`` lazily where that is exact."""
    ctx = Ctx(False)
    ctx.lazy_loops = loops
    return ctx


def _replay_frame_key(problem: CellProblem, lemma: Lemma, model: z3.ModelRef, k: int,
                      n: int) -> Counterexample | None:
    """:func:`replay_frame` for a frame-write lemma, looking at the struct page ``n`` it
    names only, with the loops whose lemmas are proved (:func:`proved_loops`) run lazily
    (:attr:`equiv.loops.Ctx.lazy_loops`): the same final memory as running every iteration,
    by those lemmas, as long as no loop outside them ran before (or inside) one of them,
    which the concrete contexts see to.  The counterexample when the page is left
    different, else None (the caller then runs every iteration and looks everywhere).

    The slow path of a slow-path bug's cell (two slow paths: the same loop names on both
    sides) runs with the loops proved of the base slow path alone (:func:`_base_loops`).

    The record is the one the full replay makes (tests/test_frame_replay.py): made only
    when the model's initial memory is a finite table, it does not depend on the struct
    pages read; the early_section answers are those of the compound heads, which the path
    with the unproved loop asks about all of (it runs its heads loop in full: the loop is
    in it or before it)."""
    sc = problem.scenario
    if not all(z3.is_true(model.eval(a, model_completion=True)) for _, a in problem.assumptions):
        return None  # (a lemma valid under the assumptions says nothing about this model)
    lazy = proved_loops(problem, lemma.loop)
    slow_lazy = _base_loops(problem, model) if lemma.loop in _SLOW_LOOPS else lazy
    if not lazy and not slow_lazy:
        return None
    history = _History(n)
    while True:
        factory, scalars, early_seen, memory, tables = _concrete_inputs(problem, model, history)
        if not tables.decoded:
            return None
        try:
            slow = memmap_init_zone_device(_lazy_ctx(slow_lazy), sc, factory())
            fst = problem.fast(_lazy_ctx(lazy), sc, factory())
            assert isinstance(slow, ConcreteMemory) and isinstance(fst, ConcreteMemory)
            if not _differ(slow.load(CBV(n, KEY_BITS)), fst.load(CBV(n, KEY_BITS))):
                return None
            if not history.complete(slow, fst, n):
                history.widen(n)
                continue
            probe = factory()
            return _frame_page_cx(problem, factory, scalars, early_seen, memory, slow, fst, n,
                                  _frame_what(problem, lemma, k, n, probe))
        except LazyNesting as e:
            lazy, slow_lazy = lazy - e.enclosing, slow_lazy - e.enclosing


#: the loops of the base slow path (:func:`equiv.slow_path.memmap_init_zone_device`)
_SLOW_LOOPS = frozenset({"memmap_init_zone_device.heads", "memmap_init_compound.tails",
                         "pageblock_migratetype_init_range"})


def _base_loops(problem: CellProblem, model: z3.ModelRef) -> frozenset[str]:
    """The loops of the base slow path whose lemmas hold (:func:`proved_loops`), proved on
    a cell comparing that path with itself (the same inputs and assumptions as
    ``problem``'s, which the model must satisfy), or none."""
    # (a slow-path comparison states its inputs from the first pfn: equiv.zone_device.cell.run_cell)
    first_form = problem.revision.comparison is not None
    base = build_cell(problem.scenario, problem.revision, memmap_init_zone_device,
                      first_form=first_form)
    same = all(_same_term(getattr(base.inputs, name), getattr(problem.inputs, name))
               for name in Inputs.SCALARS) and base.early.eq(problem.early)
    if not same or not all(z3.is_true(model.eval(a, model_completion=True))
                           for _, a in base.assumptions):
        return frozenset()
    return proved_loops(base, "")


def _same_term(a: object, b: object) -> bool:
    return a.eq(b) if isinstance(a, z3.AstRef) and isinstance(b, z3.AstRef) else a == b


def _differ(a: PageState, b: PageState) -> bool:
    return int(a.bits) != int(b.bits) or (
        a.events is not None and b.events is not None and int(a.events) != int(b.events))


def recorded_factory(L: Layout, order: int, cx: Counterexample) -> Callable[[], Inputs]:
    """Concrete inputs from a recorded counterexample's values alone (no solver).  Reading a
    struct page, bitmap cell or section the record does not cover raises
    :class:`~equiv.engine.errors.InternalMismatch`."""
    pages = {(c << 64) | s: v for c, s, v in cx.memory.pages}
    cells = dict(cx.memory.pageblock)

    def pick(table: dict[Any, int], key: Any, default: int | None, what: str) -> int:
        v = table.get(key, default)
        if v is None:
            raise InternalMismatch(f"the recorded counterexample has no initial value for {what} {key}")
        return v

    def early(n: int) -> bool:
        if n not in cx.early_sections:
            raise InternalMismatch(f"the recorded counterexample does not say whether section "
                                   f"{n:#x} is early")
        return cx.early_sections[n]

    return concrete_factory(
        L, cx.inputs, early,
        lambda n: pick(pages, n, cx.memory.pages_default, "struct page"),
        lambda b: pick(cells, b, cx.memory.pageblock_default, "bitmap cell"))


def counterexample_of(ob: ObligationResult) -> Counterexample | None:
    """The counterexample of one of this subject's obligations, as this module's class (the
    engine's records hold it as the :class:`equiv.engine.results.Counterexample` protocol)."""
    cx = ob.counterexample
    assert cx is None or isinstance(cx, Counterexample), type(cx)
    return cx


def replay_recorded(sc: Scenario, fast: FastFn, cx: Counterexample) -> tuple[FieldDiff, ...]:
    """Replay a recorded counterexample (as written by ``--emit-tests``) from its values
    alone, without a solver: the differing atoms of the page (or bitmap cell) it names.
    It runs the loops as the recording did (:attr:`Counterexample.every_iteration`), so it
    reads the struct pages and sections the record holds."""
    run = run_concrete(sc, fast, recorded_factory(sc.layout, sc.order, cx), cx.index,
                       lazy=not cx.every_iteration)
    return page_diffs(sc.layout, ROLES[cx.role].page_index, run)


__all__ = ["ConcreteRun", "Counterexample", "FieldDiff", "InitialMemory", "Observed",
           "concrete_ctx", "concrete_factory", "concrete_inputs", "counterexample_of",
           "observed_bytes", "page_diffs",
           "recorded_factory", "replay", "replay_frame", "replay_recorded", "run_concrete"]

"""The zone-device subject's cells: what a cell is (:class:`CellSpec`), what it compares
(:func:`cell_paths`, :func:`resolve`), how one is built and checked (:func:`run_cell`,
:func:`run_group`) and the matrix of them (:func:`run_matrix`, on the engine's
:func:`~equiv.engine.runner.run_cached`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from attrs import asdict, evolve, frozen

from equiv.config import Config, preset
from equiv.engine.cache import Cache
from equiv.engine.results import CellResult, ObligationResult
from equiv.engine.runner import run_cached
from equiv.engine.selftest import describe_edit
from equiv.engine.verdict import Verdict
from equiv.memmap import MemoryType, Scenario, order_classes
from equiv.page_model import Layout
from equiv.slow_path import compound_info_has_mask
from equiv.slow_variants import comparison
from equiv.template_path import Revision, fast_path, revision
from equiv.zone_device.check import CheckRequest, check_cell
from equiv.zone_device.counterexample import Counterexample
from equiv.zone_device.mutants import MUTANTS, caught, first_roles
from equiv.zone_device.names import COMPARE, DEFAULT_REVISION
from equiv.zone_device.obligations import FastFn, build_cell


@frozen(kw_only=True)
class CellSpec:
    """One cell (picklable, so it can be sent to a worker process)."""

    config: Config | str  # a Config, or a preset name
    revision: str
    ptype: MemoryType | None  # None: one cell for every type (pgmap->type symbolic)
    order: int
    mutant: str | None = None
    timeout_ms: int = 60_000
    rlimit: int | None = None
    solver: str = "z3"
    dump_smt: str | None = None
    #: check only this page obligation (and the loop lemmas), e.g. ``tail1_equal``
    obligation: str | None = None
    #: explain counterexamples (irrelevant inputs, uniqueness); the self-test skips it
    minimise: bool = True
    #: directory of the result cache (:mod:`equiv.engine.cache`), or None for no cache
    cache_dir: str | None = None
    #: a seeded-bug cell of the self-test: stop at the first obligation that catches the
    #: bug with a field it must name (:func:`equiv.zone_device.mutants.caught`)
    until_caught: bool = False
    #: the highest order of an order class (:func:`equiv.memmap.order_classes`): the cell
    #: is then one proof for every order from ``order`` to it (only as :func:`run_group`'s
    #: try, whose result stands for each order's cell only when it proves everything)
    order_hi: int | None = None

    def description(self) -> dict[str, object]:
        """What the cell's result depends on, for its cache key: the configuration's every
        field, the revision, type, order, seeded bug, obligation filter, solver and the
        deterministic resource budget.  (The wall-clock timeout is not part of it: it only
        decides whether an answer is UNKNOWN, which is never cached.)"""
        cfg = self.config if isinstance(self.config, Config) else preset(self.config)
        out: dict[str, object] = {
            "config": asdict(cfg), "revision": self.revision,
            "ptype": None if self.ptype is None else self.ptype.name, "order": self.order,
            "mutant": self.mutant, "obligation": self.obligation, "minimise": self.minimise,
            "solver": self.solver, "rlimit": self.rlimit, "until_caught": self.until_caught,
            "order_hi": self.order_hi}
        if self.mutant is not None:
            # the seeded bug's edit itself, not only its name: a mutant changed at run time
            # (or a catalogue entry given another edit) is never served another's result
            m = MUTANTS[self.mutant]
            out["edit"] = describe_edit({"knobs": m.knobs, "compare": m.compare})
        return out


def cell_paths(spec: CellSpec) -> tuple[Scenario, Revision, FastFn]:
    """What a cell compares: its scenario, the revision (a seeded bug applied) and the fast
    path function (the slow path is always :func:`equiv.slow_path.memmap_init_zone_device`)."""
    cfg = spec.config if isinstance(spec.config, Config) else preset(spec.config)
    layout = Layout.from_config(cfg)
    rev, fast = resolve(spec.revision)
    if spec.mutant is not None:
        m = MUTANTS[spec.mutant]
        if m.compare is not None:  # a slow-path edit: edited slow path vs the base slow path
            rev, fast = compared(m.compare)
        else:
            rev = m.apply(rev)
    return Scenario(layout, spec.ptype, spec.order, spec.order_hi), rev, fast or fast_path(rev)


def run_cell(spec: CellSpec, *, probe: bool = False, lemmas_from: CellResult | None = None
             ) -> CellResult:
    """Build and check one cell (in whichever process calls it); with ``probe``, stop at
    the first obligation not proved (:func:`equiv.zone_device.check.check_cell`).  ``lemmas_from``: the
    result of a try whose proof covers this cell (every type, or every order of a class):
    its proved loop lemmas are taken instead of being posed again, and the cell rests on
    its query answers too."""
    sc, rev, fast = cell_paths(spec)
    t0 = time.perf_counter()
    # a slow-path variant's loops differ from the base's in their pfn and pageblock
    # arithmetic: both are stated from the first pfn they initialise (a bijection of the
    # inputs that keeps its altmap sum out of every query; see symbolic_inputs); so is an
    # order class, whose compound count ``(nr_pages + 2^order - 1) >> order`` the solver
    # otherwise has to relate to the altmap's sum under a symbolic shift (2-3x the work)
    problem = build_cell(sc, rev, fast,
                         first_form=rev.comparison is not None or spec.order_hi is not None)
    cache = _cache(spec.cache_dir)
    enough = None
    first: tuple[str, ...] = ()
    if spec.until_caught and spec.mutant is not None:
        enough = caught(spec.mutant, spec.ptype, spec.order)  # the self-test's kill
        first = first_roles(spec.mutant, spec.ptype, spec.order, sc.layout)
    # a probe steers and explains nothing: its budget is only that of the lemmas' first tries
    lemma_try = (PROBE_LEMMA_TRY_RLIMIT if probe else LEMMA_TRY_RLIMIT) \
        if rev.comparison is not None else None
    res = check_cell(CheckRequest(
        problem=problem, timeout_ms=spec.timeout_ms, rlimit=spec.rlimit, solver=spec.solver,
        dump_smt=spec.dump_smt, only=spec.obligation, minimise=spec.minimise, cache=cache,
        probe=probe, lemma_try=lemma_try, sliced=rev.comparison is not None, enough=enough,
        lemmas_from=None if lemmas_from is None else lemmas_from.obligations,
        split_lemmas=spec.mutant is not None, first_roles=first))
    if lemmas_from is not None and any(o.kind == "lemma" for o in res.obligations):
        res = evolve(res, query_keys=tuple(dict.fromkeys(res.query_keys + lemmas_from.query_keys)))
    met: tuple[tuple[str, str], ...] = ()
    if cache is not None:  # handed to the parent with the result, reported once per run
        met, cache.problems[:] = tuple(cache.problems), []
    # a cell's time includes running both paths symbolically, not only the solver
    return evolve(res, seconds=time.perf_counter() - t0, cache_problems=met)


#: Process-wide memo: one :class:`Cache` per directory and process (a worker keeps its
#: handle across the cells it runs; the handle holds no verdict, only the path).
_CACHES: dict[str, Cache] = {}


def _cache(directory: str | None) -> Cache | None:
    """This process's :class:`Cache` of ``directory`` (one per directory and process)."""
    if directory is None:
        return None
    if directory not in _CACHES:
        _CACHES[directory] = Cache(directory)
    return _CACHES[directory]


#: z3 budget of the first tries at a slow-path comparison's loop lemmas, before each lemma
#: is proved conjunct by conjunct (:attr:`equiv.zone_device.check.CheckRequest.lemma_try`): about
#: 2 s of z3 here; the v6.12 loops' lemmas took 16 s together and about 1 s in parts
LEMMA_TRY_RLIMIT = 2_000_000
#: The same first tries in a probe (:func:`run_group`'s tries, which steer and explain no
#: counterexample): the v6.12 loops' lemmas are never proved whole within the budget above
#: (each failed try cost it in full: 6-7 of a probe's 11-18 M of z3's resource count at
#: orders 3-12), and conjunct by conjunct they are proved either way; the tries that do
#: succeed (the base loops' lemmas) cost the conjuncts about as little
PROBE_LEMMA_TRY_RLIMIT = 20_000


def resolve(name: str) -> tuple[Revision, FastFn | None]:
    """A revision of the series, or ``compare:NAME`` (:func:`compared`)."""
    if not name.startswith(COMPARE):
        return revision(name), None
    return compared(name.removeprefix(COMPARE))


def compared(name: str) -> tuple[Revision, FastFn]:
    """Comparison ``name``: a slow-path variant (refactor or older kernel,
    :mod:`equiv.slow_variants`) put in the fast path's place, as the revision ``compare:NAME``
    whose :attr:`~equiv.template_path.Revision.comparison` says so."""
    cmp = comparison(name)
    rev = evolve(revision(DEFAULT_REVISION), name=COMPARE + cmp.name, comparison=cmp.name,
                 summary=f"{cmp.summary} ({cmp.claim})",
                 assumptions=cmp.assumptions + tuple(f"known difference: {d}" for d in cmp.differences))
    return rev, cmp.path


def layout_note(cfg: Config) -> str:
    """One line describing the struct page layout a config gives."""
    L = Layout.from_config(cfg)
    enc = "order mask" if compound_info_has_mask(L) else "head | 1"
    fl = L.flags
    fields = ", ".join(f"{f.name} {f.pgshift}+{f.width}" for f in fl.fields if f.width)
    return (f"struct page {L.size} bytes; NR_PAGEFLAGS {fl.nr_pageflags}; flags: {fields}; "
            f"compound_info: {enc}")


def _expects_kill(spec: CellSpec) -> bool:
    """Is ``spec`` a self-test cell whose seeded bug is expected to show?  Then the
    all-types try of :func:`run_group` would only be thrown away (it is used only when it
    proves everything); the cells are checked per type at once (the verdicts are the same
    either way: the try is a shortcut, never a verdict of its own)."""
    if not spec.until_caught or spec.mutant is None or spec.ptype is None:
        return False
    return caught(spec.mutant, spec.ptype, spec.order) is not None


def run_group(specs: list[CellSpec]) -> list[CellResult]:
    """Run the cells of one (config, revision, mutant, order class), which differ only in
    the type and the order.

    Cells of several orders (an order class, :func:`order_groups`) are first tried with one
    proof in which the order is a symbolic input ranging over the class (and, with several
    types, ``pgmap->type`` too): if it proves everything, with every order's vacuity and
    reach checks passed, it proves every cell of the group.  Otherwise each order's cells
    are run as :func:`run_order_group` does, so verdicts and counterexamples are per order,
    exactly as if no try had been made.
    """
    orders = sorted({s.order for s in specs})
    if len(orders) == 1:
        return run_order_group(specs)
    lo, hi = orders[0], orders[-1]
    types = list(dict.fromkeys(s.ptype for s in specs))
    shared = run_cell(evolve(specs[0], ptype=None if len(types) > 1 else types[0], order=lo,
                             order_hi=hi), probe=True)
    if shared.verdict is Verdict.PROVED:
        return [evolve(shared, ptype=s.ptype.kname if s.ptype else "ALL", order=s.order,
                       all_types=len(types) > 1 or s.ptype is None, row_class=(lo, hi))
                for s in specs]
    every = " and every pgmap type" if len(types) > 1 or types[0] is None else ""
    lemmas = _lemmas_of(shared, f"proved once for every order of {lo}-{hi}{every}")
    out: dict[int, CellResult] = {}
    for o in orders:
        idx = [i for i, s in enumerate(specs) if s.order == o]
        out.update(zip(idx, run_order_group([specs[i] for i in idx], lemmas), strict=True))
    first = out[0]
    out[0] = evolve(first, cache_problems=shared.cache_problems + first.cache_problems)
    return [out[i] for i in range(len(specs))]


def _lemmas_of(tried: CellResult, how: str) -> CellResult | None:
    """``tried`` (a stopped try) if it proved every loop lemma its cell has: its proved
    lemmas and page roles, with ``how`` as their reason, for the cells it covers to take
    (:func:`run_cell`'s ``lemmas_from``); else None."""
    lemmas = [o for o in tried.obligations if o.kind == "lemma"]
    if not lemmas or any(o.verdict is not Verdict.PROVED for o in lemmas):
        return None
    stopped = [o for o in tried.obligations if o.name == "probe"]
    if stopped and "lemma" in stopped[0].reason:
        return None
    proved = [o for o in tried.obligations if o.verdict is Verdict.PROVED
              and o.kind in ("lemma", "page")]
    return evolve(tried, obligations=tuple(evolve(o, reason=how) for o in proved))


def run_order_group(specs: list[CellSpec], lemmas_from: CellResult | None = None
                    ) -> list[CellResult]:
    """Run the cells of one (config, revision, mutant, order), which differ only in the type.

    First one proof with ``pgmap->type`` symbolic (any of the five types): if it proves
    everything, it proves every type's cell.  Otherwise each type is checked alone, so
    verdicts and counterexamples are per type (cells that pose the same query, e.g. FS_DAX and
    PRIVATE, then share the answer: see ``equiv.engine.query.ANSWERS``).  A self-test group
    whose seeded bug is expected to show on one of its types goes per type at once.  The
    loop lemmas a try proved (this one, or ``lemmas_from``: an order class's) are not posed
    again by the cells it covers.
    """
    if len(specs) > 1 and not any(_expects_kill(s) for s in specs):
        # used only if it proves everything: stopped at the first obligation it does not
        shared = run_cell(evolve(specs[0], ptype=None), probe=True, lemmas_from=lemmas_from)
        if shared.verdict is Verdict.PROVED:
            return [evolve(shared, ptype=s.ptype.kname if s.ptype else "ALL", all_types=True)
                    for s in specs]
        lemmas = lemmas_from or _lemmas_of(shared, "proved once for every pgmap type of the order")
        first, *rest = [run_cell(s, lemmas_from=lemmas) for s in specs]
        return [evolve(first, cache_problems=shared.cache_problems + first.cache_problems),
                *rest]
    return [run_cell(s, lemmas_from=lemmas_from) for s in specs]


def _known_differences(spec: CellSpec) -> bool:
    """Does ``spec`` compare a slow-path variant with known differences (``--compare
    v6.12``)?  Its class probe cannot prove the class: v6.12's pageblock bitmap differs at
    every order.  The probe's only use would be the loop lemmas, which each order's own
    probe proves at about the same cost (orders 8-18: 99 M of z3's resource count as one
    class, 116 M order by order; 27 s and 29 s), while one group of eleven orders is half
    the run in one worker: per order, the groups spread over the workers."""
    if spec.mutant is not None:
        return False
    compared_with = resolve(spec.revision)[0].comparison
    return compared_with is not None and bool(comparison(compared_with).differences)


def order_groups(specs: list[CellSpec]) -> list[list[int]]:
    """The groups of :func:`run_matrix`: the cells of one (config, revision, mutant, order
    class), where an order class (:func:`equiv.memmap.order_classes`, of the orders asked
    for) is used for cells that may be proved (not a self-test cell whose seeded bug must
    show, nor a comparison with known differences (:func:`_known_differences`), which go
    per order) and not written as SMT files; other cells group by order."""
    def key(sp: CellSpec) -> tuple[str, str, str | None]:
        cfg = sp.config if isinstance(sp.config, Config) else preset(sp.config)
        return cfg.name, sp.revision, sp.mutant

    def classable(sp: CellSpec) -> bool:
        return (sp.dump_smt is None and sp.order_hi is None and not _expects_kill(sp)
                and not _known_differences(sp))

    layouts: dict[str, Layout] = {}
    asked: dict[tuple[str, str, str | None], set[int]] = {}
    for sp in specs:
        cfg = sp.config if isinstance(sp.config, Config) else preset(sp.config)
        layouts.setdefault(cfg.name, Layout.from_config(cfg))
        if classable(sp):
            asked.setdefault(key(sp), set()).add(sp.order)
    classes = {k: order_classes(layouts[k[0]], sorted(v)) for k, v in asked.items()}
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, sp in enumerate(specs):
        row: object = sp.order
        if classable(sp):
            row = next((c for c in classes[key(sp)] if c[0] <= sp.order <= c[1]), sp.order)
        groups.setdefault((*key(sp), row), []).append(i)
    return list(groups.values())


def backstop_cell(spec: CellSpec, seconds: float, why: str) -> CellResult:
    """The result of a cell whose worker was stopped: UNKNOWN, saying which limit."""
    cfg = spec.config if isinstance(spec.config, Config) else preset(spec.config)
    ob = ObligationResult(name="cell", kind="cell", role="cell", verdict=Verdict.UNKNOWN,
                          seconds=seconds, reason=why)
    return CellResult(config=cfg.name, revision=spec.revision,
                      ptype=spec.ptype.kname if spec.ptype else "ALL", order=spec.order,
                      verdict=Verdict.UNKNOWN, seconds=seconds, obligations=(ob,),
                      assumptions=(), choices=(), hypothetical=cfg.hypothetical)


def _describe(spec: CellSpec) -> dict[str, object] | None:
    """A cell's cache key (None for a cell that bypasses the cache, e.g. with --dump-smt)."""
    return None if spec.cache_dir is None else spec.description()


def _load(spec: CellSpec, payload: dict[str, Any]) -> CellResult:
    """A cached cell; one that rests on no cached query answer is not used."""
    cell = CellResult.from_cache(payload, Counterexample.from_cache)
    if not cell.query_keys:
        raise ValueError("it lists no query answer")
    return cell


def run_matrix(specs: list[CellSpec], jobs: int | None = None,
               on_done: Callable[[int], None] | None = None, *, cache: Cache | None = None,
               backstop_s: float | None = None, scheduler: str | None = None
               ) -> tuple[list[CellResult], float, int]:
    """Run ``specs``; results in the order of ``specs`` whatever order groups finish in
    (:func:`equiv.engine.runner.run_cached`).

    The cells of one (config, revision, mutant, order) go to the same worker.

    Args:
        specs: the cells to run.
        jobs: worker processes (default: all cores); 1 runs everything in this process
            (unless a backstop is asked for).
        on_done: called in this process with the number of cells of each group as that group
            finishes (e.g. to advance a progress display).
        cache: the result cache: groups whose every cell is cached are not run; cells
            without an UNKNOWN obligation are stored after the run (by this process only).
            Workers look up and store single query answers in the same directory.
        backstop_s: wall-clock limit per group; a worker past it is killed and its cells
            are UNKNOWN, naming the limit (needs worker processes).
        scheduler: address of a Dask distributed scheduler to run the groups on instead of
            local workers (``pip install 'equiv[distributed]'``).

    Returns:
        The cell results in the order of ``specs``, the wall time in seconds, and the number
        of jobs used.
    """
    jobs = max(1, jobs or os.cpu_count() or 1)
    if cache is not None:
        specs = [evolve(sp, cache_dir=str(cache.root)) if sp.dump_smt is None else sp
                 for sp in specs]
    cells, wall = run_cached(specs, order_groups(specs), group=run_group, stopped=backstop_cell,
                             describe=_describe, load=_load, cache=cache, jobs=jobs,
                             on_done=on_done, backstop_s=backstop_s, scheduler=scheduler)
    return cells, wall, jobs

"""The publication order of the non-temporal copy primitive: a simplified x86-TSO model with
non-temporal stores.

Subject: what a reader CPU can see when a writer CPU copies a prepared template
``struct page`` with one of the series' copy primitives (:mod:`equiv.zone_device.copy.primitive`, whose
store sequences it runs; the series' patches 5-7 and their earlier iterations, listed in
docs/model.md) and then publishes it with a store to a separate flag.

:func:`ordering_row` / :func:`ordering_table` enumerate every interleaving of a writer CPU
(NT copy of the page, optional drain, a publication store to a separate flag) and a reader CPU
(read the flag, then the page) in a small operational x86-TSO model extended with
non-temporal stores, and report whether the reader can see the flag set and a stale chunk of
the page.  Rules modelled (a simplification):

* Sewell, Sarkar, Owens, Zappa Nardelli, Myreen, "x86-TSO: a rigorous and usable
  programmer's model for x86 multiprocessors", CACM 53(7), 2010: cached stores enter a
  per-CPU FIFO store buffer and drain to memory in order; loads are not reordered with loads.
* Intel SDM vol. 3A §8.2.2 "Memory Ordering in P6 and More Recent Processor Families"
  (§9.2.2 in recent editions): writes are not reordered with other writes *except*
  non-temporal stores (MOVNTI...), which are weakly ordered; SFENCE / MFENCE order all earlier
  stores, NT included, before later ones; reads and writes are not reordered with locked
  instructions.  §11.3.1 lists a LOCKed instruction among the events that drain the
  write-combining buffers [M - recalled, not checked against the cited sources].
* Raad, Maranget, Vafeiadis, "Extending Intel-x86 consistency and persistency: formalising
  the semantics of Intel-x86 memory types and non-temporal stores", POPL 2022
  (doi:10.1145/3498683): NT stores to write-back memory as stores that may become visible
  after later stores to other addresses unless a fence or an RMW intervenes.

Simplifications: NT stores sit in an unordered write-combining buffer and become visible
one at a time, in any order; every page location is written once, so the same-address rule
(coherence) only concerns the flag; SFENCE / a locked RMW execute only when both buffers are
empty (the same store-store orderings the SDM gives, stated as a drain); CLWB is a write-back
for persistence and changes no visibility; a ``release`` publication is ``barrier(); mov`` on
x86, i.e. the same store as ``plain``; the page is coarsened to a few chunks (it is the order,
not the size, that matters).

The series' own argument (v11 patch 5, [R]): ``memcpy_nontemporal()`` "is only a copy
primitive. It does not imply a drain or a publication barrier"; in ZONE_DEVICE init the later
ordinary stores come from the same CPU (same-address coherence) and nothing is published to
another CPU until later synchronisation.  The ordering table is therefore about what the
primitive guarantees to a caller, not a claimed kernel bug (:data:`SERIES_ARGUMENT`).

Everything here returns data; nothing prints.  :mod:`equiv.zone_device.copy.present` renders the table and
``bench/copy_primitive.py`` prints it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from attrs import frozen

from equiv.engine.errors import InputError
from equiv.zone_device.copy.primitive import REVISIONS, copy_plan

__all__ = ["PUBLICATIONS", "SERIES_ARGUMENT", "OrderingRow", "WriterOp", "ordering_row",
           "ordering_table", "writer_program"]

#: the publication store after the copy
PUBLICATIONS = ("plain store", "release store", "locked RMW")

SERIES_ARGUMENT = (
    "v11 patch 5: memcpy_nontemporal() 'is only a copy primitive. It does not imply a drain or a "
    "publication barrier'. The ZONE_DEVICE path needs none: the later ordinary stores (compound "
    "setup) come from the same CPU (same-address coherence) and are no publication to another CPU "
    "or device; the pages are published only by later synchronisation. The ordering table is "
    "about what the primitive guarantees a caller, not a claimed kernel bug."
)

_DRAIN = {"v11": False, "v5": True, "v4a": True, "v4b": True, "memcpy": False}
_DRAIN_NAME = {"v5": "memcpy_nt_drain()", "v4a": "memcpy_streaming_drain()",
               "v4b": "memcpy_streaming_drain()"}


@frozen
class WriterOp:
    """One step of the writer CPU: a page store to ``loc`` (kind nt/cached), ``sfence``, or the
    ``publish`` store to the flag (``publication`` one of :data:`PUBLICATIONS`)."""

    op: str
    loc: str = ""
    kind: str = ""


@frozen
class OrderingRow:
    """Can the reader see the flag set but a stale (not yet visible) chunk of the page?"""

    revision: str
    drain: bool
    publication: str
    #: the coarsened page stores, e.g. ``c0.nt c1.nt c2.nt c3.nt``
    page: str
    stale_visible: bool
    #: page locations that can be read stale after the flag was read set
    stale_locations: tuple[str, ...]
    #: reachable states explored
    states: int
    #: a shortest interleaving showing a stale read (empty if none)
    witness: tuple[str, ...]
    explanation: str


def writer_program(revision: str, publication: str, *, drain: bool | None = None, cnt: int = 64,
                   dst_align: int = 0, src_align: int = 0, chunks: int = 4) -> tuple[WriterOp, ...]:
    """The writer CPU's program: the page copy of :func:`copy_plan`, coarsened to ``chunks``
    equal byte ranges, then the drain (sfence) if any, then the publication store.

    A chunk written by stores of one kind becomes one store of that kind (``cK.nt`` or
    ``cK.cached``), placed where its last store is; a chunk written by both kinds (the cached
    head/tail of ``__memcpy_flushcache``) becomes one store per kind.  CLWB is dropped (no
    visibility effect).

    Args:
        drain: None = the revision's own (sfence for v5 ``memcpy_nt_drain`` and v4
            ``memcpy_streaming_drain``; none for v11 and memcpy).
    """
    if publication not in PUBLICATIONS:
        raise InputError(f"unknown publication {publication!r}: use one of {', '.join(PUBLICATIONS)}")
    if chunks < 1 or chunks > cnt:
        raise InputError(f"chunks={chunks} must be in 1..cnt")
    plan = copy_plan(revision, cnt, dst_align, src_align)
    bounds = [k * cnt // chunks for k in range(chunks + 1)]
    last: dict[str, int] = {}
    fences: list[int] = []
    for n, st in enumerate(plan.stores):
        if st.kind == "sfence":
            fences.append(n)
        if not st.writes:
            continue
        for c in range(chunks):
            if st.dst_off < bounds[c + 1] and st.dst_off + st.width > bounds[c]:
                last[f"c{c}.{st.kind}"] = n
    ops: list[tuple[int, WriterOp]] = [(n, WriterOp("store", loc, loc.split(".")[1]))
                                      for loc, n in last.items()]
    ops += [(n, WriterOp("sfence")) for n in fences]
    prog = [op for _, op in sorted(ops, key=lambda p: p[0])]
    if _DRAIN[revision] if drain is None else drain:
        prog.append(WriterOp("sfence"))
    prog.append(WriterOp("publish", "flag", publication))
    return tuple(prog)


def _explore(prog: tuple[WriterOp, ...]) -> tuple[int, dict[frozenset[str], tuple[str, ...]]]:
    """All interleavings of writer ``prog`` and the reader (flag, then each page location).

    Returns the number of states and, for each set of page locations the reader can see stale
    after reading the flag set, a shortest witness trace.
    """
    locs = tuple(sorted({op.loc for op in prog if op.op == "store"},
                        key=lambda x: (int(x[1:].split(".")[0]), x)))
    if len(locs) != sum(op.op == "store" for op in prog):
        raise InputError("writer program writes a page location twice; coarsen differently")
    # state: (writer pc, store buffer (FIFO), WC buffer (unordered), memory, reader pc, stale)
    State = tuple[int, tuple[str, ...], frozenset[str], frozenset[str], int, frozenset[str]]
    start: State = (0, (), frozenset(), frozenset(), 0, frozenset())
    parent: dict[State, tuple[State, str] | None] = {start: None}
    outcomes: dict[frozenset[str], tuple[str, ...]] = {}
    todo = deque([start])

    def trace(st: State) -> tuple[str, ...]:
        out = []
        link = parent[st]
        while link is not None:
            prev, step = link
            out.append(step)
            link = parent[prev]
        return tuple(reversed(out))

    while todo:
        st = todo.popleft()
        wpc, sb, wcb, mem, rpc, stale = st
        nexts: list[tuple[State, str]] = []
        # writer: issue the next instruction
        if wpc < len(prog):
            op = prog[wpc]
            if op.op == "store" and op.kind == "cached":
                nexts.append(((wpc + 1, (*sb, op.loc), wcb, mem, rpc, stale),
                              f"W: mov {op.loc} -> store buffer"))
            elif op.op == "store":
                nexts.append(((wpc + 1, sb, wcb | {op.loc}, mem, rpc, stale),
                              f"W: movnti {op.loc} -> WC buffer"))
            elif op.op == "sfence":
                if not sb and not wcb:
                    nexts.append(((wpc + 1, sb, wcb, mem, rpc, stale),
                                  "W: sfence (all earlier stores visible)"))
            elif op.kind == "locked RMW":
                if not sb and not wcb:
                    nexts.append(((wpc + 1, sb, wcb, mem | {"flag"}, rpc, stale),
                                  "W: xchg flag (locked: buffers drained, flag visible)"))
            else:
                nexts.append(((wpc + 1, (*sb, "flag"), wcb, mem, rpc, stale),
                              f"W: mov flag ({op.kind}) -> store buffer"))
        # writer: the oldest store-buffer entry becomes visible (FIFO)
        if sb:
            nexts.append(((wpc, sb[1:], wcb, mem | {sb[0]}, rpc, stale),
                          f"W: store buffer drains {sb[0]} -> memory"))
        # writer: any WC-buffer entry becomes visible (no order among NT stores / vs. later stores)
        for loc in sorted(wcb):
            nexts.append(((wpc, sb, wcb - {loc}, mem | {loc}, rpc, stale),
                          f"W: WC buffer flushes {loc} -> memory"))
        # reader: reads the flag (only runs that read it set matter), then each location in order
        if rpc == 0 and "flag" in mem:
            nexts.append(((wpc, sb, wcb, mem, 1, stale), "R: reads flag = 1"))
        elif 1 <= rpc <= len(locs):
            loc = locs[rpc - 1]
            new = loc in mem
            nexts.append(((wpc, sb, wcb, mem, rpc + 1, stale if new else stale | {loc}),
                          f"R: reads {loc} = {'new' if new else 'STALE'}"))
        elif rpc == len(locs) + 1 and stale not in outcomes:
            outcomes[stale] = trace(st)
        for nxt, step in nexts:
            if nxt not in parent:
                parent[nxt] = (st, step)
                todo.append(nxt)
    return len(parent), outcomes


def _explain(revision: str, drain: bool, publication: str, stale: bool, has_nt: bool) -> str:
    rel = (" smp_store_release() on x86 is barrier() + mov, the same store as a plain one."
           if publication == "release store" else "")
    if stale:
        return ("No drain: the flag mov drains from the FIFO store buffer while an NT chunk is "
                "still in a write-combining buffer; NT stores are weakly ordered w.r.t. later "
                "stores to other addresses (SDM §8.2.2)." + rel)
    if not has_nt:
        return ("Only cached stores: TSO drains the store buffer in FIFO order, so the flag "
                "cannot become visible before the page." + rel)
    if drain:
        return (f"{_DRAIN_NAME.get(revision, 'sfence')} = sfence: every NT chunk is globally "
                "visible before any later store, the flag included." + rel)
    return ("Locked RMW (xchg / lock cmpxchg): not reordered with earlier stores, NT included; "
            "the WC buffers drain before it (SDM §8.2.2, §11.3.1 [M]).")


def ordering_row(revision: str, publication: str, *, drain: bool | None = None, cnt: int = 64,
                 dst_align: int = 0, src_align: int = 0, chunks: int = 4) -> OrderingRow:
    """Enumerate every interleaving for one (revision, publication) and classify it.

    Args:
        revision: one of :data:`REVISIONS` (its copy path and its drain).
        publication: one of :data:`PUBLICATIONS`.
        drain: override the revision's drain (None = the revision's own).
        cnt, dst_align, src_align: the copy cell whose store sequence the writer runs.
        chunks: how many byte ranges the page is coarsened to.

    Returns:
        The :class:`OrderingRow`.
    """
    drain_used = _DRAIN[revision] if drain is None else drain
    prog = writer_program(revision, publication, drain=drain_used, cnt=cnt, dst_align=dst_align,
                          src_align=src_align, chunks=chunks)
    states, outcomes = _explore(prog)
    stale_sets = [s for s in outcomes if s]
    stale_locs = tuple(sorted(set().union(*stale_sets), key=lambda x: (int(x[1:].split(".")[0]), x)))
    witness = min((outcomes[s] for s in stale_sets), key=len, default=())
    page = " ".join(op.loc for op in prog if op.op == "store")
    has_nt = any(op.kind == "nt" for op in prog if op.op == "store")
    return OrderingRow(revision, drain_used, publication, page, bool(stale_sets), stale_locs,
                       states, witness, _explain(revision, drain_used, publication,
                                                 bool(stale_sets), has_nt))


def ordering_table(revisions: Sequence[str] = REVISIONS,
                   publications: Sequence[str] = PUBLICATIONS, *, cnt: int = 64,
                   dst_align: int = 0, src_align: int = 0,
                   chunks: int = 4) -> tuple[OrderingRow, ...]:
    """:func:`ordering_row` for every revision x publication, each revision with its own drain."""
    return tuple(ordering_row(r, p, cnt=cnt, dst_align=dst_align, src_align=src_align,
                              chunks=chunks)
                 for r in revisions for p in publications)

"""Where the C interpreter finds a name's definition as the compiler compiled it, and the
check of a stand-in against those definitions.

A function or macro the interpreter runs is found, in this order:

* in the files read (:data:`~equiv.zone_device.source.files.FILES`), its ``#if`` branch
  the one clang took (:class:`equiv.linux.skipped.ClangBranches`);
* in a header those files include, where clang found its definition
  (:func:`header_definition`: ``atomic_set`` of atomic-instrumented.h down to x86's
  ``arch_atomic_set``), read as clang read it (a patched header's text);
* in another ``.c`` file of the entry file's directory, compiled as its own unit
  (:func:`other_unit_definition`: 6.1's ``vmem_altmap_offset`` of mm/memremap.c).

:func:`stand_in_problem` digests the definitions a stand-in paraphrases
(:data:`equiv.zone_device.source.standins.CHECKED`) and says why the stand-in may not be
applied to this tree, or None; its answers are kept per typed tree and name, and
:func:`precheck` asks every stand-in once where a tree is read (before worker processes
fork: they inherit the answers, and the other units parsed on the way).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from equiv.config import Config
from equiv.engine.memo import Lru
from equiv.linux.ktree import Definition, KernelTree, Node, Preprocessor, text
from equiv.linux.skipped import ClangBranches
from equiv.zone_device.source.ctyped import TypedTree, require_entry, typed_for
from equiv.zone_device.source.standins import CHECKED, digest

#: Process-wide memo: a header read for :func:`header_definition`, by (root, file, the
#: text clang read); the last 64 (:class:`~equiv.engine.memo.Lru`)
_HEADERS: Lru[tuple[str, str, bytes], KernelTree] = Lru(64)


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for c in node.children:
        yield from _walk(c)


def header_definition(typed: TypedTree, name: str) -> Definition | None:
    """The function or macro ``name`` as clang compiled it for this configuration, read
    from the text of the header clang found it in when the files read do not define it:
    the static inline helpers of the headers ``mm/mm_init.c`` includes, the arch's own
    included (``atomic_set`` of include/linux/atomic/atomic-instrumented.h, x86's
    ``arch_atomic_set``).  Which definition is compiled is clang's answer (its file and
    line), not the preprocessor conditions read here; None when clang has none, none of
    that name starts at that line of the text (a function a macro generates), or its text
    holds preprocessor conditionals (whose branches clang chose, not read here).  Kept per
    typed tree and name (:attr:`TypedTree.memo`): a worker's later cells ask the same
    helpers of the same trees."""
    memo = ("header_definition", name)
    if memo in typed.memo:
        return typed.memo[memo]  # type: ignore[return-value]  # as stored below
    got = typed.definition(name)
    found: Definition | None = None
    if got is not None:
        root, rel, line = got
        src = typed.read(root / rel)  # as clang read it: a patched header's text
        key = (str(root), rel, src)
        header = _HEADERS.get(key)
        if header is None:
            header = KernelTree.of_texts(root, {rel: src})
            _HEADERS.put(key, header)
        hits = [d for d in header.defs.get(name, ()) if d.line == line]
        # conditionals inside: clang's choice of their branches is not read
        if hits and not any(n.type.startswith("preproc_if") for n in _walk(hits[0].node)):
            found = hits[0]
    typed.memo[memo] = found
    return found


def other_unit_definition(tree: KernelTree, env: Preprocessor, typed: TypedTree,
                          name: str) -> Definition | None:
    """The function ``name`` defined in another ``.c`` file of the entry file's
    directory, as clang compiles that file's own unit under the configuration
    (:meth:`~equiv.zone_device.source.ctyped.TypedTree.follow`): the file is read into
    ``tree``, its ``#if`` branches decided by its unit (headers by every unit that read
    them, agreeing: ``env`` counts it), its types by its unit; None when no such file
    defines it, or ``env`` is not the compiler's.

    Raises:
        InputError: two files define it, or one cannot be compiled.
    """
    if not isinstance(env, ClangBranches):
        return None
    got = typed.follow(name)
    if got is None:
        return None
    file, src, unit = got
    tree.add_file(file, src)
    env.add(unit.skipped(), [(file, tree.sources[file])])
    found = [d for d in tree.defs.get(name, ())
             if d.kind == "function" and d.file == file and d.active(env)]
    return found[0] if found else None


def definition_of(tree: KernelTree, env: Preprocessor, typed: TypedTree,
                  name: str) -> Definition | None:
    """The definition of the function or macro ``name`` compiled in this configuration:
    in the files read, in a header clang found it in, or in another ``.c`` file's unit;
    None where the tree has none."""
    d = tree.find(name, env, "function") or tree.find(name, env, "macro")
    return d or header_definition(typed, name) or other_unit_definition(tree, env, typed, name)


def stand_in_digest(tree: KernelTree, env: Preprocessor, typed: TypedTree,
                    name: str) -> tuple[str, list[Definition]]:
    """The digest of this tree's definitions that the stand-in ``name`` paraphrases
    (:func:`~equiv.zone_device.source.standins.digest`), and the definitions.

    Raises:
        LookupError: one is missing (the message names it).
    """
    c = CHECKED[name]
    defs = []
    for n in c.texts:
        d = definition_of(tree, env, typed, n)
        if d is None:
            raise LookupError(f"stand-in {name}: this tree has no definition of {n} to "
                              "check it against (its model paraphrases the text of "
                              f"{', '.join(sorted(set(c.versions)))}); not applied")
        defs.append(d)
    return digest([text(d.src, d.node) for d in defs]), defs


def stand_in_problem(tree: KernelTree, env: Preprocessor, typed: TypedTree,
                     name: str) -> str | None:
    """Why the stand-in ``name`` may not be applied to this tree (a definition it
    paraphrases is missing, or their text is no version's it was checked against), or
    None; kept per typed tree (:attr:`TypedTree.memo`)."""
    memo = ("stand_in_problem", name)
    if memo in typed.memo:
        return typed.memo[memo]  # type: ignore[return-value]  # as stored below
    c = CHECKED[name]
    try:
        got, defs = stand_in_digest(tree, env, typed, name)
        problem = None if got in c.digests else (
            f"stand-in {name}: this tree's text of {', '.join(c.texts)} "
            f"({', '.join(d.where for d in defs)}) is not the text it was checked against "
            f"({', '.join(sorted(set(c.versions)))}; digest {got}); not applied: interpret "
            "it, or check the stand-in against this text")
    except LookupError as e:
        problem = str(e)
    typed.memo[memo] = problem
    return problem


def compiled(tree: KernelTree, cfg: Config,
             full: Path | None = None) -> tuple[TypedTree, ClangBranches]:
    """``tree`` as clang compiles it for ``cfg`` (:func:`~equiv.zone_device.source.ctyped.typed_for`;
    ``full``: the whole tree behind a patched copy): refused when it compiles no
    ``memmap_init_zone_device()`` (:func:`~equiv.zone_device.source.ctyped.require_entry`),
    its ``#if`` branches clang's, every stand-in's text checked (:func:`precheck`), where
    the tree is read, before workers fork.

    Raises:
        InputError: as :func:`~equiv.zone_device.source.ctyped.typed_for` and
            :func:`~equiv.zone_device.source.ctyped.require_entry`.
    """
    typed = typed_for(tree, cfg, full)
    require_entry(tree, typed, cfg)
    env = typed.branches(tree)
    precheck(tree, env, typed)
    return typed, env


def precheck(tree: KernelTree, env: Preprocessor, typed: TypedTree) -> None:
    """Ask :func:`stand_in_problem` of every checked stand-in now (where a tree is read,
    before worker processes fork), so that no worker parses the other units again."""
    if isinstance(env, ClangBranches):
        for name in CHECKED:
            stand_in_problem(tree, env, typed, name)


__all__ = ["compiled", "definition_of", "header_definition", "other_unit_definition", "precheck",
           "stand_in_digest", "stand_in_problem"]

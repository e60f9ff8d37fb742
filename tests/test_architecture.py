"""The layout's rules, checked from the import lines (every import, also those inside
functions; not those under ``if TYPE_CHECKING:``, which never run):

1. the engine (``equiv.engine``, ``equiv.report``) and the readers (``equiv.linux``)
   import no subject: neither the zone-device model (the top-level modules and
   ``equiv.zone_device.source``) nor ``equiv.vmap``;
2. ``equiv.vmap`` imports nothing of the zone-device model;
3. only the registry (``equiv.subjects``) names the subjects, and the command line
   (``equiv.proofs``) imports no subject module;
4. there is no import cycle;
5. a run imports only the subject it runs (each subject's light front is loaded to build the
   shared parser; no other subject's model is).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import equiv

ROOT = Path(equiv.__file__).parent
ENGINE = ("equiv.engine", "equiv.report", "equiv.linux")
#: each subject's front, loaded for every run to build the shared parser: its options and
#: the names they offer (the zone-device presets come from equiv.config, attrs only)
FRONTS = {"equiv.zone_device.cli", "equiv.config", "equiv.vmap", "equiv.vmap.cli",
          "equiv.vmap.names"}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in sorted(ROOT.rglob("*.py"))}


MODULES = _modules()


def _imports(name: str) -> set[str]:
    """Every equiv module ``name`` imports (``from equiv.x import y`` counts as equiv.x.y
    when that is a module, else equiv.x)."""
    tree = ast.parse(MODULES[name].read_text())
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                   for stmt in node.body for n in ast.walk(stmt)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:  # annotations only: never executed
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("equiv")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            if not base.startswith("equiv"):
                continue
            for a in node.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base)
    return {m for m in out if m in MODULES and m != name}


GRAPH = {m: _imports(m) for m in MODULES}


def _zone_device(m: str) -> bool:
    """A module of the zone-device subject (the top-level model and its source tooling)."""
    top = (m.count(".") == 1 and MODULES[m].name != "__init__.py"
           and m not in ("equiv.proofs", "equiv.subjects"))
    return top or m.startswith("equiv.zone_device.source")


def _in(m: str, prefixes: tuple[str, ...]) -> bool:
    return any(m == p or m.startswith(p + ".") for p in prefixes)


def test_the_module_list_is_read() -> None:
    assert {"equiv.engine.verdict", "equiv.report.text", "equiv.linux.ktree", "equiv.page_model",
            "equiv.vmap.cell", "equiv.zone_device.source.cinterp"} <= set(MODULES)


def test_engine_and_readers_import_no_subject() -> None:
    bad = {m: sorted(i for i in deps if _zone_device(i) or _in(i, ("equiv.vmap",)))
           for m, deps in GRAPH.items() if _in(m, ENGINE)}
    assert {m: d for m, d in bad.items() if d} == {}


def test_readers_import_only_the_engine() -> None:
    bad = {m: sorted(i for i in deps if not _in(i, ("equiv.engine", "equiv.linux")))
           for m, deps in GRAPH.items() if _in(m, ("equiv.linux",))}
    assert {m: d for m, d in bad.items() if d} == {}


def test_vmap_imports_nothing_of_the_zone_device_model() -> None:
    bad = {m: sorted(i for i in deps if _zone_device(i))
           for m, deps in GRAPH.items() if _in(m, ("equiv.vmap",))}
    assert {m: d for m, d in bad.items() if d} == {}


def test_the_zone_device_model_imports_no_other_subject() -> None:
    bad = {m: sorted(i for i in deps if _in(i, ("equiv.vmap",)))
           for m, deps in GRAPH.items() if _zone_device(m)}
    assert {m: d for m, d in bad.items() if d} == {}


def test_only_the_registry_names_subjects() -> None:
    assert GRAPH["equiv.proofs"] <= {m for m in MODULES if _in(m, (*ENGINE, "equiv.subjects"))}
    assert GRAPH["equiv.subjects"] <= {m for m in MODULES if _in(m, ENGINE)}
    text = MODULES["equiv.subjects"].read_text()
    assert '"equiv.zone_device.cli"' in text and '"equiv.vmap.cli"' in text


def test_no_import_cycles() -> None:
    """Depth-first search for a back edge over every import (lazy ones included)."""
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(GRAPH[m]):
            if state.get(d) == 1:
                cycles.append([*stack[stack.index(d):], d] if d in stack else [m, d])
            elif d not in state:
                visit(d, [*stack, d])
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def _loaded_by(argv: list[str]) -> set[str]:
    code = ("import sys, io\nfrom equiv.proofs import main\n"
            f"main({argv!r}, io.StringIO(), io.StringIO())\n"
            "print('\\n'.join(m for m in sys.modules if m.startswith('equiv')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_a_vmap_run_loads_no_zone_device_model() -> None:
    loaded = _loaded_by(["--subject", "vmap", "--list"])
    assert sorted(m for m in loaded if _zone_device(m) and m not in FRONTS) == []


def test_a_zone_device_run_loads_no_vmap_model() -> None:
    loaded = _loaded_by(["--subject", "zone-device", "--list"])
    assert "equiv.page_model" in loaded
    assert sorted(m for m in loaded if _in(m, ("equiv.vmap",)) and m not in FRONTS) == []

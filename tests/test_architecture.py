"""The layout's rules, checked from the import lines (every import: those inside functions and
those under ``if TYPE_CHECKING:`` too, since a type-only import is a dependency of the design).

What belongs to a subject is decided by name, never guessed: the zone-device subject is the
package ``equiv.zone_device`` plus the card's model at the top of ``equiv/`` (:data:`MODEL`),
the vmap subject is the package ``equiv.vmap``.

1. the top of ``equiv/`` holds only the entry points and the card's model;
2. the engine (``equiv.engine``, ``equiv.report``) and the readers (``equiv.linux``) import
   no subject; the readers import only the engine;
3. a subject imports only the engine, the reports, the readers and itself; the card's model
   imports only the engine, the readers and itself (it is the subject's base: nothing of the
   machinery that runs it);
4. only the registry (``equiv.subjects``) names the subjects, and the command line
   (``equiv.proofs``) imports no subject module;
5. there is no import cycle of any kind;
6. no module imports another module's private (``_``) name;
7. both subject packages have the same front files;
8. no module passes :data:`MAX_LINES` lines, except the ones named in :data:`TOO_LONG`;
9. a run imports only the subject it runs (each subject's light front is loaded to build the
   shared parser; no other subject's model is).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import equiv

ROOT = Path(equiv.__file__).parent
ENGINE = ("equiv.engine", "equiv.report", "equiv.linux")
ENTRY_POINTS = ("equiv", "equiv.__main__", "equiv.proofs", "equiv.subjects")
#: the card's model of the zone-device subject, at the top of equiv/: the three card files
#: and the model modules they need
MODEL = ("equiv.page_model", "equiv.slow_path", "equiv.template_path", "equiv.config",
         "equiv.memmap", "equiv.loops", "equiv.slow_variants")
#: each subject: the module prefixes that are it
SUBJECTS: dict[str, tuple[str, ...]] = {"zone-device": ("equiv.zone_device", *MODEL),
                                         "vmap": ("equiv.vmap",)}
#: the files both subject packages have, with the same role
FRONT_FILES = ("__init__", "cli", "names", "cell", "obligations", "counterexample", "mutants",
               "selftest", "twin", "present")
#: each subject's front, loaded for every run to build the shared parser: its options and
#: the names they offer (the zone-device presets come from equiv.config, attrs only)
FRONTS = {"equiv.zone_device", "equiv.zone_device.cli", "equiv.zone_device.names",
          "equiv.config", "equiv.vmap", "equiv.vmap.cli", "equiv.vmap.names"}
MAX_LINES = 1200
#: the modules allowed past MAX_LINES, each with the split that brings it under
TOO_LONG = {
    "equiv.zone_device.source.cinterp": "split Interp into interp / merge / memory / trusted",
}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in sorted(ROOT.rglob("*.py"))}


MODULES = _modules()


def _package(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def _absolute(name: str, node: ast.ImportFrom) -> str:
    base = node.module or ""
    if node.level:
        parts = _package(name).split(".")
        base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
    return base


def _imports(name: str) -> set[str]:
    """Every equiv module ``name`` imports, wherever the import stands (``from equiv.x
    import y`` counts as equiv.x.y when that is a module, else equiv.x)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("equiv")}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(name, node)
            if base.startswith("equiv"):
                out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                        for a in node.names}
    return {m for m in out if m in MODULES and m != name}


GRAPH = {m: _imports(m) for m in MODULES}


def _in(m: str, prefixes: tuple[str, ...]) -> bool:
    return any(m == p or m.startswith(p + ".") for p in prefixes)


def _subject_of(m: str) -> str | None:
    return next((s for s, prefixes in SUBJECTS.items() if _in(m, prefixes)), None)


def test_the_module_list_is_read() -> None:
    assert {"equiv.engine.verdict", "equiv.report.text", "equiv.linux.ktree", "equiv.page_model",
            "equiv.vmap.cell", "equiv.zone_device.source.cinterp",
            "equiv.zone_device.live.compare"} <= set(MODULES)


def test_every_module_has_one_place() -> None:
    """Each module is an entry point, part of the engine or readers, or of one subject."""
    homeless = [m for m in MODULES if m not in ENTRY_POINTS and not _in(m, ENGINE)
                and _subject_of(m) is None]
    assert homeless == []


def test_the_top_holds_only_entry_points_and_the_card_model() -> None:
    top = {m for m in MODULES if m.count(".") <= 1 and MODULES[m].parent == ROOT}
    assert top == set(ENTRY_POINTS) | set(MODEL)


@pytest.mark.parametrize("name", ["equiv.page_model", "equiv.slow_path", "equiv.template_path"])
def test_the_card_files_hold_the_model(name: str) -> None:
    """The card's files define the model themselves: they are not re-exports."""
    tree = ast.parse(MODULES[name].read_text())
    defined = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    assert len(defined) >= 5


def test_engine_and_readers_import_no_subject() -> None:
    bad = {m: sorted(i for i in deps if _subject_of(i)) for m, deps in GRAPH.items()
           if _in(m, ENGINE)}
    assert {m: d for m, d in bad.items() if d} == {}


def test_readers_import_only_the_engine() -> None:
    bad = {m: sorted(i for i in deps if not _in(i, ("equiv.engine", "equiv.linux")))
           for m, deps in GRAPH.items() if _in(m, ("equiv.linux",))}
    assert {m: d for m, d in bad.items() if d} == {}


@pytest.mark.parametrize("subject", sorted(SUBJECTS))
def test_a_subject_imports_only_the_engine_and_itself(subject: str) -> None:
    allowed = (*ENGINE, *SUBJECTS[subject])
    bad = {m: sorted(i for i in deps if not _in(i, allowed))
           for m, deps in GRAPH.items() if _subject_of(m) == subject}
    assert {m: d for m, d in bad.items() if d} == {}


def test_the_card_model_imports_none_of_the_machinery() -> None:
    bad = {m: sorted(i for i in deps if not _in(i, ("equiv.engine", "equiv.linux", *MODEL)))
           for m, deps in GRAPH.items() if _in(m, MODEL)}
    assert {m: d for m, d in bad.items() if d} == {}


def test_only_the_registry_names_subjects() -> None:
    assert GRAPH["equiv.proofs"] <= {m for m in MODULES if _in(m, (*ENGINE, "equiv.subjects"))}
    assert GRAPH["equiv.subjects"] <= {m for m in MODULES if _in(m, ENGINE)}
    text = MODULES["equiv.subjects"].read_text()
    assert '"equiv.zone_device.cli"' in text and '"equiv.vmap.cli"' in text


def test_no_import_cycles() -> None:
    """Depth-first search for a back edge over every import (lazy and type-only included)."""
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


def test_no_private_name_crosses_a_module() -> None:
    """``from equiv.x import _y`` (or ``x._y``) outside ``equiv.x``: a name another module
    needs is public."""
    bad: list[str] = []
    for m, path in MODULES.items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and _absolute(m, node).startswith("equiv"):
                base = _absolute(m, node)
                bad += [f"{m}: {base}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")
                        and f"{base}.{a.name}" not in MODULES]
    assert bad == []


@pytest.mark.parametrize("subject", ["equiv.zone_device", "equiv.vmap"])
def test_subject_packages_have_the_same_front_files(subject: str) -> None:
    present = {m.rpartition(".")[2] if m != subject else "__init__"
               for m in MODULES if m == subject or m.rpartition(".")[0] == subject}
    assert set(FRONT_FILES) <= present


def test_a_subject_front_names_its_trust_statement() -> None:
    for subject in ("equiv.zone_device", "equiv.vmap"):
        doc = ast.get_docstring(ast.parse(MODULES[subject].read_text())) or ""
        assert "Trust statement" in doc, subject


def test_no_module_is_too_long() -> None:
    lengths = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    assert {m: n for m, n in lengths.items() if n > MAX_LINES and m not in TOO_LONG} == {}
    # an exception that no longer needs its place is taken off the list
    assert {m for m in TOO_LONG if lengths[m] <= MAX_LINES} == set()


def _loaded_by(argv: list[str]) -> set[str]:
    code = ("import sys, io\nfrom equiv.proofs import main\n"
            f"main({argv!r}, io.StringIO(), io.StringIO())\n"
            "print('\\n'.join(m for m in sys.modules if m.startswith('equiv')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_a_vmap_run_loads_no_zone_device_model() -> None:
    loaded = _loaded_by(["--subject", "vmap", "--list"])
    assert sorted(m for m in loaded if _subject_of(m) == "zone-device" and m not in FRONTS) == []


def test_a_zone_device_run_loads_no_vmap_model() -> None:
    loaded = _loaded_by(["--subject", "zone-device", "--list"])
    assert "equiv.page_model" in loaded
    assert sorted(m for m in loaded if _subject_of(m) == "vmap" and m not in FRONTS) == []

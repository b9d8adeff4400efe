"""What may import what, read from the imports themselves.

Locks in the layering that lets a newcomer find a stage by its name and change it without
reading the rest: shared services import only each other; the graph and the store sit
on them; the judge and the model backends beside them; the stages (`rose/loop/`) use the
store, the judge and the models, never each other's private modules, the hosts or the
CLI; the hosts and the inspectors sit above the stages; the CLI on top. Nothing in the
harness imports `rose.sim` (only the world itself, the backend registry, the demo
command and the benchmarks may), a private `_module` is imported only inside its own
package, and the prompt hook's fast path (everything `rose hook` imports at module
level) is the standard library and import-free `__init__` files only.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "rose"

# Shared services, at the top of the package and in its small shared rooms (files written
# safely, the processes ROSE starts, redaction): they import only each other.
SHARED = {
    "rose",
    "rose.disk",
    "rose.processes",
    "rose.redaction",
    "rose.disk.atomic",
    "rose.config",
    "rose.config_schema",
    "rose.processes.detach",
    "rose.errors",
    "rose.events",
    "rose.frame",
    "rose.disk.jsonl",
    "rose.processes.kept",
    "rose.models",
    "rose.prompt_files",
    "rose.redaction.redact",
    "rose.redaction.redact_files",
    "rose.redaction.secret_formats",
    "rose.text",
    "rose.tokens",
    "rose.disk.tomlfile",
}
# Each layer and the layers (besides the shared services and itself) it may import.
_STAGES = {"files", "store", "judge", "model", "loop"}
_HOST_SIDE = {"transcripts", "hosts", "jobs", "hooks"}
MAY_IMPORT: dict[str, set[str]] = {
    "files": set(),
    "graph": {"queries", "files"},
    "store": {"graph", "files"},
    "model": set(),
    "judge": {"model"},
    "loop": {"files", "store", "judge", "model"},
    "hosts": {"files", "store"},
    "transcripts": {"files", "store", "hosts"},
    "jobs": _STAGES | {"transcripts", "hosts"},
    "hooks": _STAGES | {"transcripts", "hosts", "jobs"},
    "inspect": _STAGES | _HOST_SIDE | {"graph", "queries"},
    "cli": _STAGES | _HOST_SIDE | {"graph", "queries", "inspect"},
    "sim": {"model", "judge"},
    # the demo's driver, beside the simulated world: it runs the hooks as a host would
    "drive": _STAGES | _HOST_SIDE | {"sim"},
    "entry": {"hooks", "cli"},
}
# The only modules of the package that may import the simulated world.
MAY_IMPORT_SIM = {"rose.model.registry", "rose.cli.demo_cmds"}
FAST_PATH_ENTRY = "rose._entry"
HOOKS = "rose.hooks.main"  # what the entry point imports, inside `main`, for `rose hook`


@dataclass(frozen=True)
class Imp:
    module: str  # the module imported
    line: int
    top: bool  # at module level (so loaded whenever the importer is), not inside a function
    names: tuple[str, ...] = ()  # for `from module import a, b`: a, b


def module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, name: str, *, is_package: bool = False) -> list[Imp]:
    """Every `rose`-or-other module the source imports, resolving relative imports."""
    tree = ast.parse(source)
    found: list[Imp] = []
    package = name if is_package else name.rpartition(".")[0]

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                continue  # only the type checker reads these
            nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                found.extend(Imp(a.name, child.lineno, top) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                if base == "__future__":
                    continue
                found.append(Imp(base, child.lineno, top, tuple(a.name for a in child.names)))
                # `from rose.store import scan` imports the module rose.files.scan
                found.extend(Imp(f"{base}.{a.name}", child.lineno, top) for a in child.names)
            visit(child, top and not nested)

    visit(tree, True)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def layer(module: str) -> str:
    if module in SHARED:
        return "shared"
    if module in ("rose._entry", "rose.__main__"):
        return "entry"
    if module == "rose.sim.hosts.drive":
        return "drive"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "shared"


def _allowed(importer: str, imported: str) -> bool:
    src, dst = layer(importer), layer(imported)
    if dst == "shared" or src == dst:
        return True
    return dst in MAY_IMPORT.get(src, set())


def violations(modules: dict[str, list[Imp]], known: set[str]) -> list[str]:
    """Every import that breaks a rule, as 'importer:line imports X: why'."""
    out = []
    for importer, imps in sorted(modules.items()):
        for imp in imps:
            target = imp.module
            if not (target == "rose" or target.startswith("rose.")) or target not in known:
                continue
            if imp.names and all(f"{target}.{n}" in known for n in imp.names):
                continue  # `from package import module`: the modules are checked one by one
            where = f"{importer}:{imp.line} imports {target}"
            hidden = [n for n in imp.names if n.startswith("_") and not n.startswith("__")]
            if hidden and f"{target}.{hidden[0]}" not in known and importer != target:
                out.append(f"{where}: {hidden[0]} is private to {target}")
                continue
            if target.startswith("rose.sim") and not importer.startswith("rose.sim"):
                if importer not in MAY_IMPORT_SIM:
                    out.append(f"{where}: only rose/sim, the backend registry and the demo may")
                continue
            private = [p for p in target.split(".")[1:] if p.startswith("_")]
            if (
                private
                and not importer.startswith(target.rpartition(".")[0] + ".")
                and not (importer == "rose.__main__" and target == FAST_PATH_ENTRY)
            ):
                out.append(f"{where}: a private module, imported from outside its package")
                continue
            if not _allowed(importer, target):
                out.append(f"{where}: layer {layer(importer)} may not import {layer(target)}")
    return out


def fast_path_problems(modules: dict[str, list[Imp]], inits: dict[str, str]) -> list[str]:
    """What the module-level import closure of `rose hook` loads beyond the standard library."""
    problems: list[str] = []
    seen: set[str] = set()
    todo = [FAST_PATH_ENTRY, HOOKS]
    if HOOKS not in {i.module for i in modules.get(FAST_PATH_ENTRY, [])}:
        problems.append(f"{FAST_PATH_ENTRY} no longer runs hooks from {HOOKS}: update this test")
    stdlib = set(sys.stdlib_module_names)
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        for imp in modules.get(mod, []):
            if not imp.top:
                continue
            root = imp.module.split(".")[0]
            if root == "rose":
                if imp.module in modules:
                    todo.append(imp.module)
            elif root not in stdlib:
                problems.append(f"{mod}:{imp.line} imports {imp.module} at module level")
    for mod in sorted(seen):
        pkg = mod.rpartition(".")[0]
        while pkg:
            if pkg in inits and [i for i in modules[pkg] if i.top]:
                problems.append(f"{pkg}/__init__.py imports at module level, on the fast path")
            pkg = pkg.rpartition(".")[0]
    return sorted(set(problems))


def _package_modules() -> tuple[dict[str, list[Imp]], dict[str, str]]:
    modules, inits = {}, {}
    for path in sorted(ROOT.rglob("*.py")):
        name = module_name(path)
        is_pkg = path.name == "__init__.py"
        modules[name] = imports_of(path.read_text(encoding="utf-8"), name, is_package=is_pkg)
        if is_pkg:
            inits[name] = str(path)
    return modules, inits


def test_the_package_keeps_its_layers():
    modules, _ = _package_modules()
    assert len(modules) > 40  # the scan really read the package
    assert violations(modules, set(modules)) == []


def test_the_fast_path_is_the_standard_library():
    modules, inits = _package_modules()
    assert fast_path_problems(modules, inits) == []


def test_benchmarks_and_e2e_touch_only_public_modules():
    modules, _ = _package_modules()
    bad = []
    for path in sorted([*(REPO / "benchmarks").glob("*.py"), *(REPO / "e2e").glob("*.py")]):
        for imp in imports_of(path.read_text(encoding="utf-8"), module_name(path)):
            private = [p for p in imp.module.split(".")[1:] if p.startswith("_")]
            if imp.module.startswith("rose.") and imp.module in modules and private:
                bad.append(f"{path.name}:{imp.line} imports {imp.module}")
    assert bad == []


# -- the rules can fail ------------------------------------------------------------------


def _one(importer: str, source: str, *known: str) -> list[str]:
    mods = {importer: imports_of(source, importer)}
    return violations(mods, {importer, *known})


@pytest.mark.parametrize(
    ("importer", "source", "known"),
    [
        ("rose.loop.selection.recall", "from rose.cli import app", ["rose.cli"]),
        (
            "rose.loop.abstraction.compress",
            "from rose.loop.selection.recall import _within",
            ["rose.loop.selection.recall"],
        ),
        ("rose.hooks.main", "from rose.cli._out import echo", ["rose.cli._out"]),
        ("rose.loop.selection.recall", "from rose.hooks.main import main", ["rose.hooks.main"]),
        ("rose.store.facade", "def f():\n    from rose.sim.world import World", ["rose.sim.world"]),
        ("rose.judge.calls", "import rose.sim.model.backend", ["rose.sim.model.backend"]),
        ("rose.hooks.main", "from rose.sim import markers", ["rose.sim", "rose.sim.markers"]),
        ("rose.graph.sync", "from rose.store.facade import Store", ["rose.store.facade"]),
        ("rose.config", "from rose.files.layout import StoreDir", ["rose.files.layout"]),
        ("rose.store.facade", "from rose.judge.calls import Judge", ["rose.judge.calls"]),
        ("rose.inspect.tree", "from rose.cli._out import echo", ["rose.cli._out"]),
    ],
)
def test_a_broken_rule_is_reported(importer: str, source: str, known: list[str]):
    assert _one(importer, source, *known)


@pytest.mark.parametrize(
    ("importer", "source", "known"),
    [
        (
            "rose.loop.selection.recall",
            "from rose.store.facade import Store",
            ["rose.store.facade"],
        ),
        (
            "rose.loop.selection.recall",
            "from rose.judge.models import Verdict",
            ["rose.judge.models"],
        ),
        ("rose.model.registry", "from rose.sim.model.backend import B", ["rose.sim.model.backend"]),
        ("rose.graph.sync", "from rose.files.scan import FileState", ["rose.files.scan"]),
        ("rose.judge.calls", "from . import models", ["rose.judge.models"]),
        ("rose.cli.store_cmds", "from rose.cli._out import echo", ["rose.cli._out"]),
    ],
)
def test_an_allowed_import_passes(importer: str, source: str, known: list[str]):
    assert _one(importer, source, *known) == []


def test_a_heavy_import_on_the_fast_path_is_reported():
    modules = {
        "rose._entry": imports_of("def main():\n    from rose.hooks.main import main", "x"),
        "rose.hooks": [],
        "rose.hooks.main": imports_of("import json\nfrom rose.files import scan\n", "x"),
        "rose.files": imports_of("import yaml\n", "rose.files", is_package=True),
        "rose.files.scan": imports_of("import pydantic\n", "x"),
    }
    inits = {"rose.hooks": "", "rose.files": ""}
    problems = fast_path_problems(modules, inits)
    assert any("pydantic" in p for p in problems)
    assert any("rose.files/__init__" in p for p in problems)

"""Nothing outside rose/sim knows the simulated world's marker syntax.

Locks in: the harness must judge through the model, never by parsing the world's
markers; a harness that read them would pass every simulated test while being a lookup
table the real world does not have. Every module of the harness (the package but
``rose/sim``), every template in ``prompts/`` and the plugin's hook files are checked two
ways: over the AST, no import of the world's marker or prompt-reading modules in any form
(``import``, ``from ... import``, ``importlib`` by name), and no marker bracket in any
spelling (the literal character, ``\\u``/``\\U``/``\\N{...}`` escapes, ``chr(0x27e6)``, its
UTF-8 bytes, an HTML entity).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rose.sim.markers import CLOSE, OPEN

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "rose"
FORBIDDEN_MODULES = ("rose.sim.markers", "rose.sim.parse")
_CODEPOINTS = {ord(OPEN), ord(CLOSE)}
# Spellings a text file (or source code before parsing) could use for a bracket.
_TEXT_SPELLINGS = re.compile(
    "|".join(
        [re.escape(OPEN), re.escape(CLOSE)]
        + [f"{c:x}" for c in sorted(_CODEPOINTS)]  # \u27e6, 0x27E6, int("27e6", 16), &#x27e6;
        + [rf"&#0*{c};" for c in sorted(_CODEPOINTS)]  # &#10214;
        + ["WHITE SQUARE BRACKET"]  # \N{MATHEMATICAL LEFT WHITE SQUARE BRACKET}
        + [re.escape(repr(OPEN.encode())[2:-1]), re.escape(repr(CLOSE.encode())[2:-1])]
    ),
    re.IGNORECASE,
)


def _harness_files() -> list[Path]:
    """Every source file of the harness: the package but the simulated world (its driver of
    the hooks, rose/sim/hosts/drive.py, is harness), the prompts, the hooks."""
    files = [
        p
        for p in ROOT.rglob("*")
        if p.is_file()
        and (p.relative_to(ROOT).parts[0] != "sim" or p.name == "drive.py")
        and "__pycache__" not in p.parts
        and p.suffix not in {".pyc", ".so"}
    ]
    files += [p for p in (REPO / "prompts").rglob("*") if p.is_file()]
    files += [p for p in (REPO / "hooks").rglob("*") if p.is_file()]
    return files


def _imported(tree: ast.AST) -> set[str]:
    """Every module the code names for import: statements and `importlib` string arguments."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call) and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.add(arg.value)  # importlib.import_module("..."), __import__("...")
    return names


def offences(text: str, *, python: bool) -> list[str]:
    """What in this source would let it read a marker."""
    found = [f"spells a marker bracket: {m.group(0)!r}" for m in _TEXT_SPELLINGS.finditer(text)]
    if not python:
        return found
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str) and (OPEN in value or CLOSE in value):
                found.append("a string holding a marker bracket")
            elif isinstance(value, bytes) and (OPEN.encode() in value or CLOSE.encode() in value):
                found.append("bytes holding a marker bracket")
            elif isinstance(value, int) and value in _CODEPOINTS:
                found.append(f"the code point {value}")
    for name in _imported(tree):
        if any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES):
            found.append(f"imports {name}")
    return found


def test_scan_covers_the_judge_and_its_prompts():
    names = {p.name for p in _harness_files()}
    assert {"calls.py", "relevance.j2", "compress.j2", "lesson.j2", "main.py", "drive.py"} <= names
    assert not any(
        p.is_relative_to(ROOT) and p.relative_to(ROOT).parts[0] == "sim" and p.name != "drive.py"
        for p in _harness_files()
    )


def test_no_marker_outside_sim():
    offenders = {
        str(p.relative_to(REPO)): found
        for p in _harness_files()
        if (
            found := offences(
                p.read_text(encoding="utf-8", errors="replace"), python=p.suffix == ".py"
            )
        )
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "source",
    [
        "x = '" + OPEN + "f:'",
        "x = '\\u27e6'",
        "x = '\\U000027E6'",
        "x = '\\N{MATHEMATICAL LEFT WHITE SQUARE BRACKET}'",
        "x = chr(0x27E6)",
        "x = chr(10214)",
        "x = chr(int('27e7', 16))",
        "x = b'\\xe2\\x9f\\xa6'",
        "x = '&#10214;'",
        "from rose.sim.markers import find",
        "from rose.sim import markers",
        "import rose.sim.parse as p",
        "import importlib\nm = importlib.import_module('rose.sim.markers')",
    ],
)
def test_every_spelling_is_caught(source: str):
    assert offences(source, python=True)


def test_ordinary_code_passes():
    assert offences("from rose.judge import calls\nx = '[id] title'\ny = 0x27\n", python=True) == []


def test_the_token_is_really_used_inside_sim():
    assert any(OPEN in p.read_text(encoding="utf-8") for p in (ROOT / "sim").glob("*.py"))

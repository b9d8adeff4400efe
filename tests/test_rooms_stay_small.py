"""Every room of the package holds few enough modules to be read as one, and few lines each.

Locks in the layout a newcomer navigates: a package (the top level included) holds at most
12 modules of its own beside its `__init__.py`, so a room that grows splits by what it
holds instead of piling up; and no module passes the house style's 600-line mark.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "rose"
MAX_MODULES = 12
MAX_LINES = 600


def rooms(root: Path) -> dict[str, list[str]]:
    """Each package under `root` (by its folder, relative) and the modules directly in it."""
    out = {}
    for init in sorted(root.rglob("__init__.py")):
        folder = init.parent
        out[str(folder.relative_to(root.parent))] = sorted(
            p.name for p in folder.glob("*.py") if p.name != "__init__.py"
        )
    return out


def crowded(found: dict[str, list[str]]) -> list[str]:
    return [
        f"{room}: {len(mods)} modules" for room, mods in found.items() if len(mods) > MAX_MODULES
    ]


def test_no_room_holds_more_than_twelve_modules():
    found = rooms(ROOT)
    assert {"rose", "rose/loop/selection", "rose/sim/hosts", "rose/files"} <= set(found)
    assert crowded(found) == []


def test_no_module_passes_six_hundred_lines():
    long = [
        f"{p.relative_to(ROOT.parent)}: {n} lines"
        for p in sorted(ROOT.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert long == []


@pytest.mark.parametrize("count", [MAX_MODULES + 1, MAX_MODULES + 8])
def test_a_crowded_room_is_named(tmp_path: Path, count: int):
    pkg = tmp_path / "rose" / "big"
    pkg.mkdir(parents=True)
    (tmp_path / "rose" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    for i in range(count):
        (pkg / f"m{i}.py").write_text("")
    assert crowded(rooms(tmp_path / "rose")) == [f"rose/big: {count} modules"]

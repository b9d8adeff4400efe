"""The graph engine's package is imported without its async connection module.

Locks in: a process that opens a store's graph and queries it never imports asyncio (both
engines' packages import their async connection at once, which imports asyncio: ~60 ms a
process); the async connection is a stand-in that refuses to be used; a package that
wants more of that module than the class gets the real module.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rose.errors import RoseError
from rose.graph import engine


def test_opening_and_querying_the_graph_imports_no_asyncio(tmp_path: Path):
    script = f"""
import sys
from pathlib import Path
from rose.store.facade import Store
store = Store.init(Path({str(tmp_path)!r}))
with store.graph() as g:
    g.q("apexes", scope="")
print("asyncio" in sys.modules)
"""
    cp = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr[-800:]
    assert cp.stdout.split()[-1] == "False"


def _package(root: Path, name: str, wants: str) -> None:
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f"from .async_connection import {wants}\n")
    (pkg / "async_connection.py").write_text(
        "import asyncio\nclass AsyncConnection:\n    real = True\nEXTRA = 1\n"
    )


@pytest.fixture
def packages(tmp_path, monkeypatch):
    _package(tmp_path, "engine_class_only", "AsyncConnection")
    _package(tmp_path, "engine_wants_more", "AsyncConnection, EXTRA")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [m for m in sys.modules if m.startswith(("engine_class_only", "engine_wants"))]:
        del sys.modules[name]


def test_the_async_connection_is_a_stand_in_that_refuses_use(packages):
    mod = engine._import("engine_class_only")
    with pytest.raises(RoseError, match="async connection"):
        mod.AsyncConnection()
    assert not hasattr(mod.AsyncConnection, "real")


def test_a_package_wanting_more_of_the_module_gets_the_real_one(packages):
    mod = engine._import("engine_wants_more")
    assert mod.EXTRA == 1 and mod.AsyncConnection.real

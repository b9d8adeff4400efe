"""Every test runs in its own project and global store under tmp_path, never the user's home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENGINE = os.environ.get("ROSE_GRAPH_ENGINE", "kuzu")
# Nothing is kept between processes (graph servers) unless a test
# turns keeping on: set for the whole run, so a fixture wider than a test, and a test that
# undoes its monkeypatches, start none either.
os.environ["ROSE_KEEP_WARM"] = "0"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `heavy` tests first, otherwise in collection order. xdist hands each worker a
    share of the collection in order (`--dist worksteal`: an idle worker takes the end of a
    busy one's queue); a heavy test left for the end keeps one worker busy alone."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ROSE_GLOBAL_HOME", str(home / ".rose"))
    monkeypatch.delenv("ROSE_HOME", raising=False)
    monkeypatch.delenv("ROSE_CHILD", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)  # Codex's home is HOME's, as ROSE's is
    for key in list(os.environ):
        if key.startswith("ROSE_") and key not in ("ROSE_GLOBAL_HOME", "ROSE_GRAPH_ENGINE"):
            monkeypatch.delenv(key, raising=False)
    # No graph server outlives a test: its own tests turn keeping back on.
    monkeypatch.setenv("ROSE_KEEP_WARM", "0")
    # A retried model call waits no backoff: a test asserts the retry, not the wait.
    monkeypatch.setenv("ROSE_CALLS_BACKOFF_S", "0")
    monkeypatch.chdir(project)
    return project


@pytest.fixture
def rose_exe(tmp_path: Path) -> str:
    """A `rose` executable that starts and exits 0, for the commands install writes."""
    exe = tmp_path / "bin" / "rose"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(exe, 0o755)
    return str(exe)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tmp_path / "project"


@pytest.fixture
def store(project: Path):
    """A fresh, initialised project store."""
    from rose.store.facade import Store

    return Store.init(project)

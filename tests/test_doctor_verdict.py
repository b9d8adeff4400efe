"""`rose doctor`'s lines and exit code agree (issue "Never broken, never leaking", item 11).

Locks in: on a machine without the configured model CLI it printed `✓ configured agent:
claude` beside `✗ backend claude: not on PATH` and exited 1, though lessons are still stored
and served without a model. Now the agent line says it is configured but unavailable, at the
same level as the backend line (a warning), and the exit code is 1 exactly when a check
fails: when ROSE cannot work here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app

pytestmark = pytest.mark.graph


def _doctor() -> tuple[int, list[dict]]:
    res = CliRunner().invoke(app, ["doctor", "--json"])
    return res.exit_code, json.loads(res.stdout)["checks"]


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with no model CLI on it."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return empty


def _fake_cli(folder: Path, name: str) -> None:
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)


def test_a_missing_backend_is_a_warning_and_the_agent_line_agrees(store, bare_path):
    code, checks = _doctor()
    by_name = {c["name"]: c for c in checks}
    assert by_name["backend claude"]["level"] == "warn"
    agent = by_name["agent"]
    assert agent["level"] == "warn"
    assert "configured but unavailable" in agent["detail"]
    assert "configured agent" not in by_name
    assert not [c for c in checks if c["level"] == "fail"]
    assert code == 0
    text = CliRunner().invoke(app, ["doctor"]).output
    assert "✓ agent" not in text and "✗" not in text


def test_the_agent_line_suggests_a_backend_that_is_there(store, bare_path):
    _fake_cli(bare_path, "codex")
    by_name = {c["name"]: c for c in _doctor()[1]}
    assert "`rose config agent codex`" in by_name["agent"]["detail"]
    assert by_name["backend codex"]["level"] == "ok"


def test_an_available_backend_is_ok_and_one_not_configured_is_no_warning(store, bare_path):
    _fake_cli(bare_path, "claude")
    by_name = {c["name"]: c for c in _doctor()[1]}
    assert by_name["agent"]["level"] == by_name["backend claude"]["level"] == "ok"
    assert by_name["backend codex"]["level"] == "info"  # not configured: nothing to fix


def test_the_simulated_agent_is_a_warning_naming_a_real_one(store, bare_path):
    _fake_cli(bare_path, "claude")
    config.set_override(store.primary.config, "agent", "simulated")
    by_name = {c["name"]: c for c in _doctor()[1]}
    assert by_name["agent"]["level"] == "warn"
    assert "nothing is judged by a real model" in by_name["agent"]["detail"]
    assert "`rose config agent claude`" in by_name["agent"]["detail"]


def test_no_store_is_a_failure_and_exits_1(bare_path):
    code, checks = _doctor()
    assert code == 1
    assert [c["level"] for c in checks if c["name"] == "store"] == ["fail"]

"""`rose doctor`'s wiring checks report which hooks are wired where and fail when a wired
command points at a rose that no longer exists (the stale-path case after a reinstall)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rose.hosts.install import install
from rose.inspect.doctor import wiring
from tests._codex_app import install_fake


def by_name(checks: list[dict]) -> dict[str, dict]:
    return {c["name"]: c for c in checks}


def test_nothing_wired_is_a_warning():
    (check,) = wiring()
    assert check["level"] == "warn" and "rose install" in check["detail"]


def test_wired_hooks_are_reported_per_place(rose_exe, project, tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    fake.trust_project(project)
    install("claude", "user", rose_cmd=rose_exe)
    install("codex", "project", rose_cmd=rose_exe, project_dir=project, trust=True)
    checks = by_name(wiring(project))
    assert checks["hooks claude user"]["level"] == "ok"
    assert "5/5 events" in checks["hooks claude user"]["detail"]
    assert checks["hooks codex project"]["level"] == "ok"
    assert checks["trust codex project"]["level"] == "ok"
    assert "AGENTS.md project" not in checks  # this Codex runs hooks: no second recall route
    assert {c["level"] for c in checks.values()} == {"ok"}


def test_a_wired_rose_that_is_gone_fails(rose_exe):
    install("claude", "user", rose_cmd=rose_exe)
    os.unlink(rose_exe)
    check = by_name(wiring())["hooks claude user"]
    assert check["level"] == "fail" and rose_exe in check["detail"]


def test_partial_and_double_wiring_warn(rose_exe, project):
    install("claude", "user", rose_cmd=rose_exe)
    path = Path.home() / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    del data["hooks"]["Stop"]
    path.write_text(json.dumps(data))
    install("claude", "project", rose_cmd=rose_exe, project_dir=project)
    checks = by_name(wiring(project))
    assert checks["hooks claude user"]["level"] == "warn"
    assert "missing stop" in checks["hooks claude user"]["detail"]
    assert checks["hooks claude"]["level"] == "warn"  # user + project: every event runs twice


def test_an_enabled_plugin_counts_as_wiring():
    path = Path.home() / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"enabledPlugins": {"rose@rose": True}}))
    check = by_name(wiring())["plugin claude user"]
    assert check["level"] == "ok" and "rose@rose" in check["detail"]


def test_a_broken_settings_file_is_a_warning_not_a_crash():
    path = Path.home() / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{nope")
    check = by_name(wiring())["hooks claude user"]
    assert check["level"] == "warn" and "line 1" in check["detail"]

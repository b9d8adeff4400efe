"""`rose doctor` says where ROSE's MCP server is registered (Claude Code user or project,
the plugin, Codex), fails when a registered command would not start, and warns when no
host has the server, in `rose doctor` itself as well as in its checks."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from rose.cli import app
from rose.hosts.install import install
from rose.inspect.doctor import mcp_server


def by_name(checks: list[dict]) -> dict[str, dict]:
    return {c["name"]: c for c in checks}


def test_no_registration_is_one_warning():
    (check,) = mcp_server()
    assert check["name"] == "mcp" and check["level"] == "warn"
    assert "not registered" in check["detail"] and "rose install" in check["detail"]


def test_each_registration_is_reported_with_its_command(rose_exe, project):
    install("claude", "user", rose_cmd=rose_exe)
    install("codex", "project", rose_cmd=rose_exe, project_dir=project)
    checks = by_name(mcp_server(project))
    assert set(checks) == {"mcp claude user", "mcp codex project"}
    assert checks["mcp claude user"]["level"] == "ok"
    assert f"`{rose_exe} mcp`" in checks["mcp claude user"]["detail"]
    assert str(Path.home() / ".claude.json") in checks["mcp claude user"]["detail"]
    assert str(project / ".codex" / "config.toml") in checks["mcp codex project"]["detail"]


def test_a_registered_rose_that_is_gone_fails(rose_exe):
    install("codex", "user", rose_cmd=rose_exe)
    os.unlink(rose_exe)
    check = by_name(mcp_server())["mcp codex user"]
    assert check["level"] == "fail" and f"{rose_exe} does not exist" in check["detail"]


def test_the_enabled_plugin_counts():
    path = Path.home() / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"enabledPlugins": {"rose@rose": True}}))
    check = by_name(mcp_server())["mcp claude plugin"]
    assert check["level"] == "ok" and str(path) in check["detail"]


def test_rose_doctor_shows_it(store, rose_exe):
    res = CliRunner().invoke(app, ["doctor", "--json"])
    assert by_name(json.loads(res.output)["checks"])["mcp"]["level"] == "warn"
    install("claude", "user", rose_cmd=rose_exe)
    res = CliRunner().invoke(app, ["doctor", "--json"])
    assert by_name(json.loads(res.output)["checks"])["mcp claude user"]["level"] == "ok"


def test_a_project_server_not_yet_approved_is_a_warning(rose_exe, project):
    install("claude", "project", rose_cmd=rose_exe, project_dir=project)
    check = by_name(mcp_server(project))["mcp claude project"]
    assert check["level"] == "warn" and "not approved yet" in check["detail"]

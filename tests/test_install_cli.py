"""`rose install` / `rose uninstall` on the command line: defaults (claude, user), exit codes,
one-line errors naming the broken file, and a dry run that prints a diff and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app


@pytest.fixture
def run(monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def settings() -> Path:
    return Path.home() / ".claude" / "settings.json"


def test_install_defaults_to_claude_user_and_uninstall_undoes_it(run):
    res = run("install")
    assert res.exit_code == 0, res.output
    assert str(settings()) in res.output
    hooks = json.loads(settings().read_text())["hooks"]
    assert " hook user-prompt-submit" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    res = run("install")
    assert res.exit_code == 0 and "nothing to change" in res.output
    res = run("uninstall")
    assert res.exit_code == 0, res.output
    assert not settings().exists()


def test_dry_run_prints_a_diff_and_writes_nothing(run, tmp_path):
    res = run("install", "--dry-run", "--target", "codex", "--scope", "project")
    assert res.exit_code == 0, res.output
    assert "would create" in res.output and "+++ " in res.output
    assert not list((tmp_path / "project").iterdir())
    assert not list((tmp_path / "home").iterdir())


def test_invalid_settings_exit_1_with_one_line_naming_file_and_line(run):
    settings().parent.mkdir(parents=True)
    settings().write_text('{"hooks": {"Stop": [}\n')
    res = run("install")
    assert res.exit_code == 1
    assert str(settings()) in res.output and "line 1" in res.output
    assert "Traceback" not in res.output
    assert settings().read_text() == '{"hooks": {"Stop": [}\n'


def test_an_unknown_target_is_a_usage_error(run):
    res = run("install", "--target", "vim")
    assert res.exit_code == 2


def test_help_names_the_choices(run):
    res = run("install", "--help")
    assert res.exit_code == 0
    assert "claude" in res.output and "codex" in res.output and "--dry-run" in res.output


def test_install_registers_the_mcp_server_unless_no_mcp(run):
    state = Path.home() / ".claude.json"
    res = run("install", "--no-mcp")
    assert res.exit_code == 0, res.output
    assert not state.exists() and "MCP" not in res.output
    res = run("install")
    assert res.exit_code == 0 and str(state) in res.output and "`/mcp`" in res.output
    assert json.loads(state.read_text())["mcpServers"]["rose"]["args"][-1] == "mcp"
    assert run("uninstall").exit_code == 0
    assert not state.exists() and not settings().exists()

"""`rose install` registers ROSE's MCP server beside its hooks, and `rose uninstall` takes out
exactly that entry: `mcpServers.rose` in Claude Code's ~/.claude.json (user) or the project's
.mcp.json, `[mcp_servers.rose]` in Codex's config.toml. The user's other servers, keys,
comments and layout survive byte for byte; a `rose` server that is not ROSE's, a file that
is broken, or an edit that would change anything else is refused before anything is
written; --no-mcp leaves the server out and removes an earlier registration."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rose.disk import tomlfile
from rose.hosts import mcp_wiring as mw
from rose.hosts.install import InstallError, SettingsFileError, install, uninstall

ROSE = "/opt/rose/bin/rose"
SERVER = {"type": "stdio", "command": ROSE, "args": ["mcp"]}
CLAUDE_STATE = {
    "numStartups": 12,
    "projects": {"/work/app": {"allowedTools": []}},
    "mcpServers": {"docs": {"type": "stdio", "command": "npx", "args": ["-y", "docs-mcp"]}},
    "oauthAccount": {"emailAddress": "me@example.com"},
}
CODEX_CONFIG = """\
# my Codex settings
model = "gpt-5"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]  # the team's docs

[features]
hooks = true
"""


def claude_state() -> Path:
    return Path.home() / ".claude.json"


def codex_config() -> Path:
    return Path.home() / ".codex" / "config.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }


def test_claude_user_scope_adds_one_server_to_claude_json_and_uninstall_restores_it():
    path = write(claude_state(), json.dumps(CLAUDE_STATE, indent=2) + "\n")
    original = path.read_bytes()
    report = install("claude", "user", rose_cmd=ROSE)
    assert path in [c.path for c in report.changes]
    data = json.loads(path.read_text())
    assert list(data) == list(CLAUDE_STATE)  # nothing moved
    assert data["mcpServers"] == {**CLAUDE_STATE["mcpServers"], "rose": SERVER}
    assert {k: v for k, v in data.items() if k != "mcpServers"} == {
        k: v for k, v in CLAUDE_STATE.items() if k != "mcpServers"
    }
    assert not install("claude", "user", rose_cmd=ROSE).changed  # a second install: no-op
    uninstall("claude", "user")
    assert path.read_bytes() == original
    assert mw.registrations("claude") == []


def test_a_claude_json_without_servers_gets_the_key_back_out_and_a_new_one_is_private():
    path = write(claude_state(), json.dumps({"numStartups": 1}, indent=2) + "\n")
    original = path.read_bytes()
    install("claude", "user", rose_cmd=ROSE)
    uninstall("claude", "user")
    assert path.read_bytes() == original  # the mcpServers key install added is gone too
    path.unlink()
    install("claude", "user", rose_cmd=ROSE)
    assert path.stat().st_mode & 0o777 == 0o600  # Claude Code's private state file
    uninstall("claude", "user")
    assert not path.exists()


def test_a_stale_command_is_replaced_in_place():
    write(claude_state(), json.dumps(CLAUDE_STATE, indent=2) + "\n")
    install("claude", "user", rose_cmd="/old/venv/bin/rose")
    install("claude", "user", rose_cmd=ROSE)
    servers = json.loads(claude_state().read_text())["mcpServers"]
    assert list(servers) == ["docs", "rose"] and servers["rose"] == SERVER


def test_claude_project_scope_writes_the_projects_mcp_json(project):
    theirs = {"mcpServers": {"db": {"command": "db-mcp", "args": []}}}
    path = write(project / ".mcp.json", json.dumps(theirs, indent=4) + "\n")
    original = path.read_bytes()
    install("claude", "project", rose_cmd=ROSE)
    assert json.loads(path.read_text())["mcpServers"]["rose"] == SERVER
    assert path.read_text().startswith('{\n    "mcpServers"')  # its own indentation
    assert not claude_state().exists()
    (found,) = mw.registrations("claude", project)
    assert (found.scope, found.path, found.argv) == ("project", path, (ROSE, "mcp"))
    uninstall("claude", "project")
    assert path.read_bytes() == original


def test_a_python_m_rose_launcher_is_recognised_as_rose():
    cmd = "/usr/bin/python3 -m rose"
    install("claude", "user", rose_cmd=cmd)
    entry = json.loads(claude_state().read_text())["mcpServers"]["rose"]
    assert entry == {"type": "stdio", "command": "/usr/bin/python3", "args": ["-m", "rose", "mcp"]}
    assert mw.is_ours(entry)
    uninstall("claude", "user")
    assert not claude_state().exists()


@pytest.mark.parametrize("target", ["claude", "codex"])
def test_someone_elses_rose_server_is_refused_and_nothing_written(tmp_path, target):
    if target == "claude":
        other = {"mcpServers": {"rose": {"command": "node", "args": ["rose-garden.js"]}}}
        write(claude_state(), json.dumps(other))
    else:
        write(codex_config(), '[mcp_servers.rose]\ncommand = "node"\nargs = ["garden.js"]\n')
    before = snapshot(tmp_path)
    with pytest.raises(InstallError, match="already has an MCP server named rose that is not"):
        install(target, "user", rose_cmd=ROSE)
    assert snapshot(tmp_path) == before
    uninstall(target, "user")  # and uninstall leaves it be
    assert snapshot(tmp_path) == before


def test_no_mcp_leaves_the_server_out_and_removes_an_earlier_one():
    report = install("claude", "user", rose_cmd=ROSE, mcp=False)
    assert claude_state() not in [c.path for c in report.changes]
    assert not claude_state().exists()
    install("claude", "user", rose_cmd=ROSE)
    assert mw.registrations("claude")
    install("claude", "user", rose_cmd=ROSE, mcp=False)
    assert not claude_state().exists() and mw.registrations("claude") == []
    assert (Path.home() / ".claude" / "settings.json").exists()  # the hooks stay


def test_codex_gets_a_table_appended_and_uninstall_restores_every_byte():
    path = write(codex_config(), CODEX_CONFIG)
    install("codex", "user", rose_cmd=ROSE)
    text = path.read_text()
    assert text.startswith(CODEX_CONFIG)  # the user's text, comments and all, untouched
    data = tomlfile.loads(text)
    assert data["mcp_servers"]["rose"] == {"command": ROSE, "args": ["mcp"]}
    assert data["mcp_servers"]["docs"]["command"] == "npx" and data["features"]["hooks"]
    (found,) = mw.registrations("codex")
    assert (found.scope, found.path) == ("user", path)
    assert not install("codex", "user", rose_cmd=ROSE).changed
    uninstall("codex", "user")
    assert path.read_text() == CODEX_CONFIG


def test_codex_table_is_replaced_in_place_with_what_follows_kept():
    path = write(codex_config(), CODEX_CONFIG)
    install("codex", "user", rose_cmd="/old/rose")
    later = '\n[profiles.fast]\nmodel = "gpt-5-mini"\n'  # Codex or the user adds a table after
    path.write_text(path.read_text() + later)
    install("codex", "user", rose_cmd=ROSE)
    text = path.read_text()
    assert text.count("[mcp_servers.rose]") == 1 and "/old/rose" not in text
    assert tomlfile.loads(text)["profiles"]["fast"]["model"] == "gpt-5-mini"
    uninstall("codex", "user")
    assert path.read_text() == CODEX_CONFIG + later


def test_codex_inline_servers_table_is_refused_with_the_reason(tmp_path):
    write(codex_config(), 'mcp_servers = { docs = { command = "npx" } }\n')
    before = snapshot(tmp_path)
    with pytest.raises(InstallError, match="would not be valid TOML"):
        install("codex", "user", rose_cmd=ROSE)
    assert snapshot(tmp_path) == before


def test_a_broken_config_toml_is_named_and_left_alone(tmp_path):
    path = write(codex_config(), "model = \n")
    before = snapshot(tmp_path)
    with pytest.raises(SettingsFileError) as err:
        install("codex", "user", rose_cmd=ROSE)
    assert str(path) in str(err.value) and "not valid TOML" in str(err.value)
    assert snapshot(tmp_path) == before


def test_codex_project_scope_and_a_folder_rose_made_goes_on_uninstall(project):
    install("codex", "project", rose_cmd=ROSE)
    path = project / ".codex" / "config.toml"
    assert tomlfile.loads(path.read_text())["mcp_servers"]["rose"]["args"] == ["mcp"]
    assert not codex_config().exists()
    uninstall("codex", "project")
    assert not (project / ".codex").exists()
    assert list(project.iterdir()) == []


def test_an_enabled_plugin_registers_the_server_for_claude(project):
    settings = write(Path.home() / ".claude" / "settings.json", '{"enabledPlugins": {}}')
    assert mw.registrations("claude", project) == []
    settings.write_text(json.dumps({"enabledPlugins": {"rose@rose": True}}))
    (found,) = mw.registrations("claude", project)
    assert found.scope == "plugin"
    assert mw.registered("claude", str(project)) and not mw.registered("codex", str(project))


def test_codex_home_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    install("codex", "user", rose_cmd=ROSE)
    assert (tmp_path / "ch" / "config.toml").is_file()
    assert not (Path.home() / ".codex").exists()
    assert os.environ["CODEX_HOME"] and mw.registered("codex", None)


def test_keys_the_user_added_to_roses_entry_are_kept_when_it_is_updated():
    install("claude", "user", rose_cmd="/old/rose")
    data = json.loads(claude_state().read_text())
    data["mcpServers"]["rose"]["env"] = {"ROSE_SESSION_ID": "mine"}
    claude_state().write_text(json.dumps(data))
    install("claude", "user", rose_cmd=ROSE)
    entry = json.loads(claude_state().read_text())["mcpServers"]["rose"]
    assert entry == {**SERVER, "env": {"ROSE_SESSION_ID": "mine"}}


def test_a_codex_env_table_under_roses_is_kept_and_uninstall_says_to_remove_it_by_hand(tmp_path):
    path = write(codex_config(), CODEX_CONFIG)
    install("codex", "user", rose_cmd="/old/rose")
    path.write_text(path.read_text() + '\n[mcp_servers.rose.env]\nROSE_SESSION_ID = "mine"\n')
    install("codex", "user", rose_cmd=ROSE)
    entry = tomlfile.loads(path.read_text())["mcp_servers"]["rose"]
    assert entry == {"command": ROSE, "args": ["mcp"], "env": {"ROSE_SESSION_ID": "mine"}}
    before = snapshot(tmp_path)
    with pytest.raises(InstallError, match=r"settings of yours below it \(env\)"):
        uninstall("codex", "user")
    assert snapshot(tmp_path) == before


def test_a_project_server_counts_once_the_user_approved_it(project):
    # Claude Code starts a project's .mcp.json server only after asking (checked with 2.1.197:
    # `claude mcp list` says "Pending approval" until the answer is kept).
    install("claude", "project", rose_cmd=ROSE)
    (found,) = mw.registrations("claude", project)
    assert not found.approved and not mw.registered("claude", str(project))
    state = {"projects": {str(project): {"enabledMcpjsonServers": ["rose"]}}}
    claude_state().write_text(json.dumps(state))
    assert mw.registered("claude", str(project))
    local = write(
        project / ".claude" / "settings.local.json", '{"disabledMcpjsonServers": ["rose"]}'
    )
    assert not mw.registered("claude", str(project))  # a "no" wins
    local.write_text('{"enableAllProjectMcpServers": true}')
    claude_state().unlink()
    assert mw.registered("claude", str(project))


def test_uninstall_finds_roses_table_after_codex_rewrote_the_file():
    # What `codex mcp add other -- /bin/echo hi` (0.171.0) leaves: its own serialisation,
    # without the comment install wrote, and the new server after ROSE's table.
    path = write(
        codex_config(),
        f'[mcp_servers.rose]\ncommand = "{ROSE}"\nargs = ["mcp"]\n\n'
        '[mcp_servers.other]\ncommand = "/bin/echo"\nargs = ["hi"]\n',
    )
    uninstall("codex", "user")
    assert path.read_text() == '[mcp_servers.other]\ncommand = "/bin/echo"\nargs = ["hi"]\n'

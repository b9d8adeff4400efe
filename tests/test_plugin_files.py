"""The repository is a Claude Code plugin and marketplace: the manifests parse and point at
files that exist, every hook event has a timeout, and hooks/run-hook never fails: with no rose
anywhere it prints one install hint and exits 0. The plugin registers ROSE's MCP server
through hooks/run-mcp, which with no rose says so on stderr (never stdout, the protocol's)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import rose
from rose.hosts.install import HOOK_SPEC
from rose.hosts.settings import EVENTS

REPO = Path(__file__).resolve().parents[1]
RUN_HOOK = REPO / "hooks" / "run-hook"
RUN_MCP = REPO / "hooks" / "run-mcp"
BARE_PATH = "/bin:/usr/bin"


def load(rel: str) -> dict:
    return json.loads((REPO / rel).read_text(encoding="utf-8"))


def test_plugin_manifest():
    manifest = load(".claude-plugin/plugin.json")
    assert manifest["name"] == "rose"
    assert manifest["version"] == rose.__version__


def test_plugin_registers_the_mcp_server_through_its_launcher():
    # Inline in plugin.json, not a root .mcp.json: the plugin's root is this repository's
    # root, where a .mcp.json would also be the project's own MCP config.
    servers = load(".claude-plugin/plugin.json")["mcpServers"]
    assert servers == {
        "rose": {"type": "stdio", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/run-mcp", "args": []}
    }
    assert not (REPO / ".mcp.json").exists()
    assert os.access(RUN_MCP, os.X_OK)


def test_marketplace_lists_this_repo_as_the_rose_plugin():
    market = load(".claude-plugin/marketplace.json")
    assert market["name"] == "rose" and market["owner"]["name"]
    (entry,) = [p for p in market["plugins"] if p["name"] == "rose"]  # /plugin install rose@rose
    assert (REPO / entry["source"] / ".claude-plugin" / "plugin.json").is_file()


def test_hooks_json_wires_every_event_with_a_timeout_through_run_hook():
    doc = load("hooks/hooks.json")
    assert set(doc) <= {"description", "hooks"}
    assert list(doc["hooks"]) == list(EVENTS.values())
    for event, host_event in EVENTS.items():
        (group,) = doc["hooks"][host_event]
        (handler,) = group["hooks"]
        assert handler["type"] == "command"
        assert handler["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/hooks/run-hook" {event}'
        message, claude_timeout, _ = HOOK_SPEC[event]
        assert handler["timeout"] == claude_timeout > 0
        assert handler["statusMessage"] == message
    assert doc["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] <= 1.5
    assert os.access(RUN_HOOK, os.X_OK)


def test_slash_command_runs_the_cli_with_the_arguments():
    text = (REPO / "commands" / "rose.md").read_text(encoding="utf-8")
    front, body = text.split("---\n", 2)[1:]
    keys = {line.split(":", 1)[0] for line in front.splitlines() if ":" in line}
    assert {"description", "allowed-tools"} <= keys
    assert "Bash(rose:*)" in front
    assert "rose $ARGUMENTS" in body


def run_hook(tmp_path: Path, plugin_root: Path, **env: str) -> subprocess.CompletedProcess:
    home = tmp_path / "hookhome"
    home.mkdir(exist_ok=True)
    base = {"PATH": BARE_PATH, "HOME": str(home), "CLAUDE_PLUGIN_ROOT": str(plugin_root)}
    return subprocess.run(
        [str(RUN_HOOK), "user-prompt-submit"],
        input='{"hook_event_name": "UserPromptSubmit", "prompt": "hi"}',
        capture_output=True,
        text=True,
        cwd=home,
        env={**base, **env},
        timeout=60,
    )


def _rose_reachable_without_the_plugin(cwd: Path) -> bool:
    if shutil.which("rose", path=BARE_PATH):
        return True
    py = shutil.which("python3", path=BARE_PATH)
    if not py:
        return False
    probe = subprocess.run([py, "-c", "import rose"], cwd=cwd, env={"PATH": BARE_PATH})
    return probe.returncode == 0


def test_run_hook_without_rose_prints_one_install_hint_and_exits_0(tmp_path):
    empty = tmp_path / "empty-plugin"
    empty.mkdir()
    if _rose_reachable_without_the_plugin(empty):
        pytest.skip("this machine has rose installed system-wide")
    res = run_hook(tmp_path, empty)
    assert res.returncode == 0
    lines = (res.stdout + res.stderr).strip().splitlines()
    assert len(lines) == 1
    assert "uv tool install rose-memory" in lines[0] and "pipx install rose-memory" in lines[0]
    assert "uv tool install" in json.loads(lines[0])["systemMessage"]


def test_run_hook_falls_back_to_the_plugins_own_copy(tmp_path):
    if shutil.which("rose", path=BARE_PATH) or not shutil.which("python3", path=BARE_PATH):
        pytest.skip("needs python3 and no system-wide rose")
    res = run_hook(tmp_path, REPO)
    assert res.returncode == 0
    assert "uv tool install" not in res.stdout + res.stderr


def test_run_hook_is_silent_in_rose_child_processes(tmp_path):
    res = run_hook(tmp_path, tmp_path, ROSE_CHILD="1")
    assert res.returncode == 0 and res.stdout == "" and res.stderr == ""


def run_mcp(tmp_path: Path, plugin_root: Path, **env: str) -> subprocess.CompletedProcess:
    home = tmp_path / "mcphome"
    home.mkdir(exist_ok=True)
    base = {"PATH": BARE_PATH, "HOME": str(home), "CLAUDE_PLUGIN_ROOT": str(plugin_root)}
    return subprocess.run(
        [str(RUN_MCP)], input="", capture_output=True, text=True, cwd=home,
        env={**base, **env}, timeout=60,
    )  # fmt: skip


def test_run_mcp_without_rose_says_so_on_stderr_and_fails(tmp_path):
    empty = tmp_path / "empty-plugin"
    empty.mkdir()
    if _rose_reachable_without_the_plugin(empty):
        pytest.skip("this machine has rose installed system-wide")
    res = run_mcp(tmp_path, empty)
    assert res.returncode == 1 and res.stdout == ""
    (line,) = res.stderr.strip().splitlines()
    assert "uv tool install rose-memory" in line


def test_run_mcp_is_silent_in_rose_child_processes(tmp_path):
    res = run_mcp(tmp_path, tmp_path, ROSE_CHILD="1")
    assert res.returncode == 0 and res.stdout == "" and res.stderr == ""

"""`rose install`/`uninstall` for Claude Code edit settings.json surgically: only ROSE's own
entries are added or removed, the user's keys and hooks survive in order, a broken file is
never touched, a dry run writes nothing, and a second install changes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rose.hosts.install import HOOK_SPEC, SettingsFileError, install, uninstall

ROSE = "/opt/rose/bin/rose"

ORIGINAL = {
    "model": "opus",
    "env": {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "x" * 40, "FOO": "bar"},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
        ],
    },
    "permissions": {"allow": ["Bash(git status)"]},
}


def user_settings() -> Path:
    return Path.home() / ".claude" / "settings.json"


def write_settings(data: dict | str, path: Path | None = None) -> Path:
    path = path or user_settings()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2) + "\n")
    return path


def rose_commands(data: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for event, groups in data.get("hooks", {}).items():
        for g in groups:
            for h in g["hooks"]:
                if " hook " in h["command"]:
                    out.setdefault(event, []).append(h["command"])
    return out


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }


def test_install_keeps_unrelated_keys_and_the_users_own_hooks():
    path = write_settings(ORIGINAL)
    report = install("claude", "user", rose_cmd=ROSE)
    assert report.changed
    data = json.loads(path.read_text())
    assert list(data) == list(ORIGINAL)  # key order preserved
    assert data["env"] == ORIGINAL["env"]  # not redacted: the user's own file
    assert data["permissions"] == ORIGINAL["permissions"]
    assert data["hooks"]["PreToolUse"] == ORIGINAL["hooks"]["PreToolUse"]
    assert data["hooks"]["Stop"][0] == ORIGINAL["hooks"]["Stop"][0]
    wired = rose_commands(data)
    assert set(wired) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"}
    assert wired["UserPromptSubmit"] == [f"{ROSE} hook user-prompt-submit # rose-managed"]


def test_every_hook_has_a_timeout_and_status_and_session_end_is_short():
    install("claude", "user", rose_cmd=ROSE)
    hooks = json.loads(user_settings().read_text())["hooks"]
    for groups in hooks.values():
        for h in groups[0]["hooks"]:
            assert set(h) == {"type", "command", "timeout", "statusMessage"}
            assert h["timeout"] > 0 and h["statusMessage"]
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] <= 1.5
    assert "matcher" not in hooks["UserPromptSubmit"][0]


def test_invalid_json_is_refused_with_file_and_line_and_left_byte_identical(tmp_path):
    path = write_settings('{\n  "model": "opus",\n  "hooks": {,}\n}\n')
    before = snapshot(tmp_path)
    with pytest.raises(SettingsFileError) as err:
        install("claude", "user", rose_cmd=ROSE)
    assert str(path) in str(err.value) and "line 3" in str(err.value)
    assert snapshot(tmp_path) == before


def test_hooks_of_the_wrong_type_are_refused():
    write_settings({"hooks": ["not", "an", "object"]})
    with pytest.raises(SettingsFileError, match='"hooks" is a list'):
        install("claude", "user", rose_cmd=ROSE)


@pytest.mark.parametrize("existing", [None, ORIGINAL])
def test_dry_run_writes_nothing_at_all(tmp_path, existing):
    if existing is not None:
        write_settings(existing)
    before = snapshot(tmp_path)
    report = install("claude", "user", dry_run=True, rose_cmd=ROSE)
    assert report.changed and report.dry_run
    text = report.render()
    assert "would " in text and "+++ " in text and "rose-managed" in text
    assert snapshot(tmp_path) == before
    install("claude", "user", rose_cmd=ROSE)
    before = snapshot(tmp_path)
    assert uninstall("claude", "user", dry_run=True).changed
    assert snapshot(tmp_path) == before


def test_install_twice_is_idempotent(tmp_path):
    write_settings(ORIGINAL)
    install("claude", "user", rose_cmd=ROSE)
    before = snapshot(tmp_path)
    again = install("claude", "user", rose_cmd=ROSE)
    assert not again.changed
    assert "nothing to change" in again.render()
    assert snapshot(tmp_path) == before
    wired = rose_commands(json.loads(user_settings().read_text()))
    assert all(len(cmds) == 1 for cmds in wired.values())


def test_a_stale_rose_entry_is_replaced_not_duplicated():
    write_settings(ORIGINAL)
    install("claude", "user", rose_cmd="/old/venv/bin/rose")
    install("claude", "user", rose_cmd=ROSE)
    wired = rose_commands(json.loads(user_settings().read_text()))
    assert len(wired) == len(HOOK_SPEC)
    for cmds in wired.values():
        assert len(cmds) == 1 and cmds[0].startswith(ROSE + " hook ")


def test_uninstall_restores_the_original_exactly():
    path = write_settings(ORIGINAL)
    original = path.read_bytes()
    install("claude", "user", rose_cmd=ROSE)
    report = uninstall("claude", "user")
    assert report.changed
    assert json.loads(path.read_text()) == ORIGINAL
    assert path.read_bytes() == original
    assert not path.with_name("settings.json.rose-backup").exists()  # nothing left to undo
    assert not uninstall("claude", "user").changed


def test_uninstall_keeps_a_hand_written_rose_hook_and_later_edits():
    path = write_settings(ORIGINAL)
    install("claude", "user", rose_cmd=ROSE)
    data = json.loads(path.read_text())
    mine = {"type": "command", "command": "rose hook stop"}  # the user's own, no marker
    data["hooks"]["Stop"].append({"hooks": [mine]})
    data["theme"] = "dark"
    write_settings(data)
    uninstall("claude", "user")
    after = json.loads(path.read_text())
    assert after["theme"] == "dark"
    assert after["hooks"]["Stop"] == [ORIGINAL["hooks"]["Stop"][0], {"hooks": [mine]}]
    assert set(after["hooks"]) == {"Stop", "PreToolUse"}


def test_backup_is_written_on_the_first_install_only():
    path = write_settings(ORIGINAL)
    original = path.read_bytes()
    install("claude", "user", rose_cmd="/old/rose")
    install("claude", "user", rose_cmd=ROSE)
    assert path.with_name("settings.json.rose-backup").read_bytes() == original


def test_a_settings_file_rose_created_is_removed_by_uninstall():
    install("claude", "user", rose_cmd=ROSE)
    path = user_settings()
    assert path.exists() and not path.with_name("settings.json.rose-backup").exists()
    uninstall("claude", "user")
    assert not path.exists()


def test_project_scope_writes_the_projects_settings(project):
    report = install("claude", "project", rose_cmd=ROSE)
    path = project / ".claude" / "settings.json"
    assert [c.path for c in report.changes] == [path, project / ".mcp.json"]  # + the MCP server
    assert rose_commands(json.loads(path.read_text()))
    assert not user_settings().exists()
    uninstall("claude", "project")
    assert not path.exists() and list(project.iterdir()) == []


def test_a_symlinked_settings_file_stays_a_symlink(tmp_path):
    real = write_settings(ORIGINAL, tmp_path / "dotfiles" / "settings.json")
    link = user_settings()
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    os.chmod(real, 0o644)
    install("claude", "user", rose_cmd=ROSE)
    assert link.is_symlink()
    assert rose_commands(json.loads(real.read_text()))
    assert real.stat().st_mode & 0o777 == 0o644


def test_the_default_command_is_an_absolute_rose():
    report = install("claude", "user", dry_run=True)
    first = report.command.split()[0].strip("'")
    assert os.path.isabs(first)
    assert report.command.endswith(("rose", "-m rose"))

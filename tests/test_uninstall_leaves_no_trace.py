"""`rose install` then `rose uninstall` for Claude Code leaves the user's folders as they
were: no `settings.json.rose-backup` behind once the settings are put back (or once ROSE's
entries are taken out of a file edited since), and ~/.claude.json, which Claude Code writes
and ROSE only edits, byte-identical whatever its layout (two or four spaces, tabs, compact,
escaped non-ASCII, with or without a final newline); while installed it keeps that
layout and its keys' order."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rose.hosts.install import install, uninstall
from rose.hosts.settings import dump

ROSE = "/opt/rose/bin/rose"
SETTINGS = {"model": "opus", "permissions": {"allow": ["Bash(git status)"]}, "theme": "dark"}
STATE = {
    "numStartups": 41,
    "installMethod": "native",
    "projects": {"/work/app": {"allowedTools": [], "history": [{"display": "café ☕"}]}},
    "mcpServers": {"docs": {"type": "stdio", "command": "npx", "args": ["-y", "docs-mcp"]}},
    "oauthAccount": {"emailAddress": "me@example.com"},
    "tipsHistory": {},
}
LAYOUTS = {
    "four spaces": json.dumps(STATE, indent=4, ensure_ascii=False) + "\n",
    "two spaces, no final newline": json.dumps(STATE, indent=2, ensure_ascii=False),
    "tabs": json.dumps(STATE, indent="\t", ensure_ascii=False) + "\n",
    "compact": json.dumps(STATE, separators=(",", ":"), ensure_ascii=False),
    "one line with spaces": json.dumps(STATE) + "\n",
    "escaped non-ASCII": json.dumps(STATE, indent=2) + "\n",
}


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_install_then_uninstall_leaves_the_folders_as_they_were():
    home = Path.home()
    settings = write(home / ".claude" / "settings.json", json.dumps(SETTINGS, indent=2) + "\n")
    state = write(home / ".claude.json", LAYOUTS["four spaces"])
    files = listing(home)
    before = {p: p.read_bytes() for p in (settings, state)}
    install("claude", "user", rose_cmd=ROSE)
    assert (home / ".claude" / "settings.json.rose-backup").exists()
    report = uninstall("claude", "user")
    assert "settings.json.rose-backup" in report.render()
    assert listing(home) == files  # no backup left behind
    assert {p: p.read_bytes() for p in before} == before


def test_a_projects_settings_leave_no_backup_either(project: Path):
    settings = write(project / ".claude" / "settings.json", json.dumps(SETTINGS, indent=4))
    files, original = listing(project), settings.read_bytes()
    install("claude", "project", rose_cmd=ROSE, mcp=False)
    uninstall("claude", "project")
    assert listing(project) == files and settings.read_bytes() == original


def test_settings_edited_since_install_keep_the_edits_and_lose_the_backup():
    home = Path.home()
    settings = write(home / ".claude" / "settings.json", json.dumps(SETTINGS, indent=2) + "\n")
    install("claude", "user", rose_cmd=ROSE, mcp=False)
    data = json.loads(settings.read_text())
    data["theme"] = "light"
    settings.write_text(json.dumps(data, indent=2) + "\n")
    uninstall("claude", "user")
    assert json.loads(settings.read_text()) == {**SETTINGS, "theme": "light"}
    assert os.listdir(home / ".claude") == ["settings.json"]


def test_a_dry_run_names_the_backup_it_would_remove_and_removes_nothing():
    home = Path.home()
    write(home / ".claude" / "settings.json", json.dumps(SETTINGS, indent=2) + "\n")
    install("claude", "user", rose_cmd=ROSE, mcp=False)
    files = listing(home)
    text = uninstall("claude", "user", dry_run=True).render()
    assert f"would delete {home / '.claude' / 'settings.json.rose-backup'}" in text
    assert listing(home) == files


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_claude_json_keeps_its_layout_and_is_byte_identical_after_uninstall(layout: str):
    original = LAYOUTS[layout]
    state = write(Path.home() / ".claude.json", original)
    install("claude", "user", rose_cmd=ROSE)
    installed = state.read_bytes().decode()
    data = json.loads(installed)
    assert list(data) == list(STATE)  # nothing moved: ROSE's entry joins mcpServers
    assert list(data["mcpServers"]) == ["docs", "rose"]
    assert installed == dump(data, original)  # written in the file's own layout
    assert installed.endswith(original[len(original.rstrip()) :])
    uninstall("claude", "user")
    assert state.read_bytes() == original.encode()


@pytest.mark.parametrize(
    ("like", "expected"),
    [
        (None, '{\n  "a": [\n    1\n  ]\n}\n'),
        ("{}\n", '{\n  "a": [\n    1\n  ]\n}\n'),
        ('{\n\t"b": 2\n}', '{\n\t"a": [\n\t\t1\n\t]\n}'),
        ('{"b":2}\n', '{"a":[1]}\n'),
        ('{"b": 2}', '{"a": [1]}'),
        ('\ufeff{\n    "b": 2\n}\n', '\ufeff{\n    "a": [\n        1\n    ]\n}\n'),
    ],
)
def test_dump_writes_like_the_file_it_replaces(like: str | None, expected: str):
    assert dump({"a": [1]}, like) == expected

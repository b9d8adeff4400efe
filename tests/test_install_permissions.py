"""`rose install`/`uninstall` respect the files they touch: a backup is as private as its
original (settings.json's "env" may hold keys), a folder that cannot be written is one line
naming it (never a traceback) with nothing written, a read-only settings file is replaced only
with --force, a `.claude/` left empty by uninstall goes too, and a UTF-8 byte-order mark is
accepted and kept. The permission cases run as an unprivileged user (see tests/_unprivileged)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.hosts.install import BACKUP_SUFFIX, install, uninstall
from tests._unprivileged import as_unprivileged, chown_tree, world_dir

ROSE = "/opt/rose/bin/rose"
ORIGINAL = {"env": {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "x" * 40}, "model": "opus"}
TEXT = json.dumps(ORIGINAL, indent=2) + "\n"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def listing(root: Path) -> dict[str, tuple[int, bytes | None]]:
    return {
        str(p.relative_to(root)): (mode(p), None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def unpriv_home(monkeypatch) -> Iterator[Path]:
    """A HOME the unprivileged user owns, under a folder it can reach."""
    with world_dir() as base:
        home = base / "home"
        home.mkdir()
        chown_tree(home)
        monkeypatch.setenv("HOME", str(home))
        yield home


def test_the_backup_keeps_the_originals_mode():
    path = Path.home() / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(TEXT)
    path.chmod(0o600)
    install("claude", "user", rose_cmd=ROSE)
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    assert backup.read_text() == TEXT
    assert mode(backup) == 0o600 and mode(path) == 0o600


def test_an_unwritable_folder_is_one_line_naming_it_and_nothing_is_written(unpriv_home):
    claude = unpriv_home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(TEXT)
    chown_tree(claude)
    claude.chmod(0o555)  # chmod 555 ~/.claude; rose install --scope user
    before = listing(unpriv_home)

    def run(*extra: str):
        res = CliRunner().invoke(app, ["install", "--scope", "user", *extra])
        return res.exit_code, res.output, type(res.exception).__name__

    run("--dry-run")  # here first: the child can import nothing new (see tests/_unprivileged)
    out = as_unprivileged(run, cwd=unpriv_home)
    assert out.error is None, out.error
    code, output, exc = out.value
    assert code == 1 and exc == "SystemExit", output
    (line,) = output.strip().splitlines()
    assert line == (
        f"rose: {claude}: cannot be written (permission denied); nothing was changed; "
        f"make it writable (chmod u+w {claude}), then run the command again"
    )
    assert listing(unpriv_home) == before


def test_a_read_only_settings_file_is_replaced_only_with_force(unpriv_home):
    path = unpriv_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(TEXT)
    chown_tree(path.parent)
    path.chmod(0o444)

    out = as_unprivileged(lambda: install("claude", "user", rose_cmd=ROSE), cwd=unpriv_home)
    assert out.error_type == "ReadOnlyFile"
    assert out.error and str(path) in out.error and "--force" in out.error
    assert path.read_text() == TEXT and mode(path) == 0o444
    assert not path.with_name(path.name + BACKUP_SUFFIX).exists()

    dry = as_unprivileged(
        lambda: install("claude", "user", rose_cmd=ROSE, dry_run=True).render(), cwd=unpriv_home
    )
    assert "without --dry-run this would stop" in dry.value and path.read_text() == TEXT

    forced = as_unprivileged(
        lambda: install("claude", "user", rose_cmd=ROSE, force=True), cwd=unpriv_home
    )
    assert forced.error is None, forced.error
    data = json.loads(path.read_text())
    assert data["env"] == ORIGINAL["env"] and "UserPromptSubmit" in data["hooks"]
    assert mode(path) == 0o444  # its mode is kept


def test_force_is_documented():
    for cmd in ("install", "uninstall"):
        res = CliRunner().invoke(app, [cmd, "--help"])
        assert "--force" in res.output and "read-only" in res.output


def test_uninstall_removes_the_claude_folder_it_left_empty(project):
    install("claude", "project", rose_cmd=ROSE)
    report = uninstall("claude", "project", dry_run=True)
    assert f"would delete {project / '.claude'}{os.sep}" in report.render()
    uninstall("claude", "project")
    assert not (project / ".claude").exists()


def test_uninstall_keeps_a_claude_folder_with_other_files(project):
    install("claude", "project", rose_cmd=ROSE)
    (project / ".claude" / "settings.local.json").write_text("{}\n")
    uninstall("claude", "project")
    assert [p.name for p in (project / ".claude").iterdir()] == ["settings.local.json"]


def test_uninstall_removes_the_codex_folder_it_left_empty(project):
    install("codex", "project", rose_cmd=ROSE)
    uninstall("codex", "project")
    assert not (project / ".codex").exists() and not (project / "AGENTS.md").exists()


def test_a_byte_order_mark_is_accepted_and_kept():
    path = Path.home() / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b"\xef\xbb\xbf" + TEXT.encode())
    install("claude", "user", rose_cmd=ROSE)
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    data = json.loads(raw.decode("utf-8-sig"))
    assert data["model"] == "opus" and "SessionStart" in data["hooks"]
    uninstall("claude", "user")
    assert path.read_bytes() == b"\xef\xbb\xbf" + TEXT.encode()

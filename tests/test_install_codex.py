"""`rose install --target codex` writes Codex's native hooks.json (only "hooks" at the root,
integer timeouts, SessionEnd within Codex's 3 s cap). The marked AGENTS.md recall block is
written only for a Codex that runs no hooks (with hooks it would repeat what the prompt hook
injects, as a second copy in every session); an install for a Codex that runs hooks drops a
block an earlier install wrote. Uninstall removes exactly what install wrote and keeps the
user's own AGENTS.md text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose.hosts.install import BEGIN, END, PROMPT_FILE, install, uninstall
from tests._codex_app import install_fake, no_codex

ROSE = "/opt/rose/bin/rose"
MINE = "# House rules\n\nAlways run the tests.\n"


def codex_dir() -> Path:
    return Path.home() / ".codex"


@pytest.fixture
def hooks_off(tmp_path, monkeypatch):
    """A Codex on PATH that runs no hooks (`codex features list`: hooks false)."""
    return install_fake(tmp_path, monkeypatch, mode="hooks-off")


def test_a_codex_that_runs_hooks_gets_no_agents_block(tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    report = install("codex", "user", rose_cmd=ROSE)
    assert (codex_dir() / "hooks.json").exists()
    assert not (codex_dir() / "AGENTS.md").exists()
    assert ["features", "list"] in [r.get("argv") for r in fake.received()]
    assert "--trust" in report.render() and "/hooks" in report.render()


def test_without_codex_on_path_hooks_are_assumed_and_said(tmp_path, monkeypatch):
    no_codex(tmp_path, monkeypatch)
    report = install("codex", "user", rose_cmd=ROSE)
    assert not (codex_dir() / "AGENTS.md").exists()
    assert "codex is not on PATH, so ROSE assumed a Codex that runs hooks" in report.render()


def test_install_for_a_codex_without_hooks_writes_the_agents_block(hooks_off):
    report = install("codex", "user", rose_cmd=ROSE)
    data = json.loads((codex_dir() / "hooks.json").read_text())
    assert list(data) == ["hooks"]
    hooks = data["hooks"]
    assert list(hooks) == ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"]
    for groups in hooks.values():
        (handler,) = groups[0]["hooks"]
        assert handler["type"] == "command" and handler["command"].startswith(ROSE + " hook ")
        assert isinstance(handler["timeout"], int) and handler["statusMessage"]
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] <= 3
    block = (codex_dir() / "AGENTS.md").read_text()
    assert block.startswith(BEGIN) and block.rstrip().endswith(END)
    assert f"{ROSE} recall --prompt-file {PROMPT_FILE}; rm -f {PROMPT_FILE}" in block
    assert "runs no hooks" in report.render()


def test_turning_hooks_on_and_installing_again_drops_the_block(hooks_off, monkeypatch):
    agents = codex_dir() / "AGENTS.md"
    agents.parent.mkdir(parents=True)
    agents.write_text(MINE)
    install("codex", "user", rose_cmd=ROSE)
    assert BEGIN in agents.read_text()
    monkeypatch.setenv("FAKE_CODEX_MODE", "")  # the user turned hooks on
    report = install("codex", "user", rose_cmd=ROSE)
    assert agents.read_text() == MINE
    assert str(agents) in report.render()


def test_uninstall_removes_exactly_the_block_and_keeps_the_users_text(hooks_off):
    agents = codex_dir() / "AGENTS.md"
    agents.parent.mkdir(parents=True)
    agents.write_text(MINE)
    install("codex", "user", rose_cmd=ROSE)
    text = agents.read_text()
    assert text.startswith(MINE) and BEGIN in text
    uninstall("codex", "user")
    assert agents.read_text() == MINE
    assert not (codex_dir() / "hooks.json").exists()


def test_the_block_is_replaced_in_place_not_appended_twice(hooks_off):
    agents = codex_dir() / "AGENTS.md"
    agents.parent.mkdir(parents=True)
    agents.write_text(MINE)
    install("codex", "user", rose_cmd="/old/rose")
    agents.write_text(agents.read_text() + "\nA line the user added later.\n")
    install("codex", "user", rose_cmd=ROSE)
    text = agents.read_text()
    assert text.count(BEGIN) == 1 and "/old/rose" not in text
    assert text.endswith("A line the user added later.\n")
    assert not install("codex", "user", rose_cmd=ROSE).changed


def test_an_agents_file_rose_created_is_deleted_on_uninstall(hooks_off):
    install("codex", "user", rose_cmd=ROSE)
    uninstall("codex", "user")
    assert not (codex_dir() / "AGENTS.md").exists()


def test_existing_codex_hooks_are_kept():
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}
    path = codex_dir() / "hooks.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(theirs, indent=2) + "\n")
    install("codex", "user", rose_cmd=ROSE)
    assert json.loads(path.read_text())["hooks"]["Stop"][0] == theirs["hooks"]["Stop"][0]
    uninstall("codex", "user")
    assert json.loads(path.read_text()) == theirs


def test_project_scope_uses_the_repo(project, hooks_off):
    install("codex", "project", rose_cmd=ROSE)
    assert (project / ".codex" / "hooks.json").exists()
    block = (project / "AGENTS.md").read_text()
    assert " rose recall --prompt-file " in block and ROSE not in block  # shared: no local path
    assert not codex_dir().exists()
    uninstall("codex", "project")
    assert not (project / "AGENTS.md").exists()


def test_codex_home_is_honoured(tmp_path, monkeypatch, hooks_off):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    install("codex", "user", rose_cmd=ROSE)
    assert (tmp_path / "ch" / "hooks.json").exists() and (tmp_path / "ch" / "AGENTS.md").exists()


def test_an_unclosed_block_is_refused_and_nothing_written(tmp_path, hooks_off):
    from rose.hosts.install import InstallError

    agents = codex_dir() / "AGENTS.md"
    agents.parent.mkdir(parents=True)
    agents.write_text(MINE + BEGIN + "\nhalf a block\n")
    with pytest.raises(InstallError, match="without a following"):
        install("codex", "user", rose_cmd=ROSE)
    assert not (codex_dir() / "hooks.json").exists()

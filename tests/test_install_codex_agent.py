"""`rose install --target codex` with no `claude` on PATH makes codex the agent, and says so.

Locks in: the Codex quickstart left ROSE's own model calls (reconcile, relevance,
reflection) on the default agent, `claude`, which a Codex-only machine does not have: every
lesson waited unreconciled until the user found `rose config agent codex`. Now a Codex
install sets it in the config of its scope, in one line; with a `claude` on PATH, or
another agent chosen already, nothing changes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.files.layout import StoreDir, global_root
from rose.hosts.install import install
from tests._codex_app import install_fake

ROSE = "/opt/rose/bin/rose"


def _agent(path: Path) -> str:
    return config.load([path]).agent


def test_with_no_claude_on_path_codex_becomes_the_agent(tmp_path, monkeypatch):
    install_fake(tmp_path, monkeypatch, keep_path=False)  # codex alone on PATH
    res = CliRunner().invoke(app, ["install", "--target", "codex"])
    assert res.exit_code == 0, res.output
    glob = global_root() / "config.yaml"
    assert _agent(glob) == "codex"
    (line,) = [x for x in res.stdout.splitlines() if "no `claude` on PATH" in x]
    assert f"set agent codex in {glob}" in line and "rose config agent claude" in line


def test_a_dry_run_only_says_it(tmp_path, monkeypatch):
    install_fake(tmp_path, monkeypatch, keep_path=False)
    report = install("codex", "user", rose_cmd=ROSE, dry_run=True)
    assert "would set agent codex" in report.render()
    assert not (global_root() / "config.yaml").exists()


def test_a_project_install_sets_it_in_the_project_store(tmp_path, monkeypatch, store):
    install_fake(tmp_path, monkeypatch, keep_path=False)
    install("codex", "project", rose_cmd=ROSE)
    assert _agent(store.primary.config) == "codex"


def test_with_claude_on_path_or_an_agent_chosen_nothing_changes(tmp_path, monkeypatch):
    install_fake(tmp_path, monkeypatch, keep_path=False)
    StoreDir(global_root(), "global").create()
    config.set_override(global_root() / "config.yaml", "agent", "simulated")
    report = install("codex", "user", rose_cmd=ROSE)
    assert _agent(global_root() / "config.yaml") == "simulated"
    assert "no `claude` on PATH" not in report.render()
    (global_root() / "config.yaml").unlink()
    claude = tmp_path / "fake-bin" / "claude"
    claude.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(claude, 0o755)
    report = install("codex", "user", rose_cmd=ROSE)
    assert _agent(global_root() / "config.yaml") == "claude"
    assert "no `claude` on PATH" not in report.render()


@pytest.fixture(autouse=True)
def _no_agent_env(monkeypatch):
    monkeypatch.delenv("ROSE_AGENT", raising=False)


def test_a_claude_install_with_no_claude_says_the_hooks_wait(tmp_path, monkeypatch):
    install_fake(tmp_path, monkeypatch, keep_path=False)  # codex alone on PATH
    text = install("claude", "user", rose_cmd=ROSE).render()
    assert "no `claude` on PATH: the hooks run once Claude Code is installed" in text
    assert "`rose install --target codex` wires Codex instead" in text
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # neither CLI
    text = install("claude", "user", rose_cmd=ROSE).render()
    assert "no `claude` on PATH" in text and "--target codex" not in text


def test_a_claude_install_with_claude_on_path_says_nothing_of_it(tmp_path, monkeypatch):
    install_fake(tmp_path, monkeypatch, keep_path=False)
    (tmp_path / "bin2").mkdir()
    fake = tmp_path / "bin2" / "claude"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin2'}{os.pathsep}{os.environ['PATH']}")
    assert "no `claude` on PATH" not in install("claude", "user", rose_cmd=ROSE).render()

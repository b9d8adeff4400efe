"""The user's request never passes through a shell: `rose recall` takes it on stdin
(`--prompt -`) or from a file (`--prompt-file`), and the AGENTS.md block `rose install --target
codex` writes has the agent save the request with its editing tool and run a command holding
none of it, so `$(...)` or backticks in a pasted prompt are never run."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.hosts.install import PROMPT_FILE, install
from tests._codex_app import install_fake

NASTY = "fix the build $(touch pwned) and `touch pwned2` \"quoted\" 'single' ; touch pwned3\n"


@pytest.fixture
def seen(monkeypatch) -> list[str]:
    """The prompts `rose recall` and `rose trace` hand to recall."""
    import rose.inspect.trace as trace

    prompts: list[str] = []
    real = trace.inspect

    def recording(store, prompt, **kw):
        prompts.append(prompt)
        return real(store, prompt, **kw)

    monkeypatch.setattr(trace, "inspect", recording)
    return prompts


@pytest.mark.graph
def test_the_prompt_is_read_verbatim_from_stdin_or_a_file(store, project, seen):
    runner = CliRunner()
    assert runner.invoke(app, ["recall", "--prompt", "-"], input=NASTY).exit_code == 0
    (project / "p.txt").write_text(NASTY, encoding="utf-8")
    assert runner.invoke(app, ["recall", "--prompt-file", "p.txt", "--json"]).exit_code == 0
    assert runner.invoke(app, ["trace", "--prompt-file", "-"], input=NASTY).exit_code == 0
    assert seen == [NASTY.strip()] * 3
    assert not list(project.glob("pwned*"))


def test_the_prompt_comes_from_exactly_one_place():
    runner = CliRunner()
    assert runner.invoke(app, ["recall"]).exit_code == 2
    assert runner.invoke(app, ["recall", "-p", "x", "--prompt-file", "f"]).exit_code == 2
    res = runner.invoke(app, ["recall", "--prompt-file", "missing.txt"])
    assert res.exit_code == 1 and "missing.txt" in res.output


def _block_commands(block: str) -> list[str]:
    """The command lines the block tells the agent to run (its indented code lines)."""
    return [ln.strip() for ln in block.splitlines() if ln.startswith("    ") and ln.strip()]


@pytest.mark.graph
def test_the_codex_block_runs_no_text_of_the_users(store, project, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    install_fake(tmp_path, monkeypatch, mode="hooks-off")  # the block is for a Codex sans hooks
    rose = f"{shlex.quote(sys.executable)} -m rose"
    install("codex", "user", rose_cmd=rose)
    block = (tmp_path / "codex" / "AGENTS.md").read_text(encoding="utf-8")
    (command,) = _block_commands(block)
    assert command == f"{rose} recall --prompt-file {PROMPT_FILE}; rm -f {PROMPT_FILE}"
    assert "<" not in command and '"' not in command  # no placeholder for the request

    # The agent writes the request with its editing tool, then runs the command as given.
    (project / PROMPT_FILE).write_text(NASTY, encoding="utf-8")
    res = subprocess.run(
        ["sh", "-c", command],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert "nothing to inject" in res.stdout
    assert not list(project.glob("pwned*")) and not list(Path.cwd().glob("pwned*"))
    assert not (project / PROMPT_FILE).exists()

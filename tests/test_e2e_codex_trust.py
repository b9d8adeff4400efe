"""The real Codex CLI trusts ROSE's hooks after `rose install --target codex --trust --yes`,
and `rose doctor` says so; before that, Codex lists them as untrusted, and after `rose
uninstall` its config.toml holds no trust record of ROSE's.

Runs the real `codex` (0.171) in a temporary HOME and project: `rose install` as a user
would, then asks `codex app-server` itself (a JSON-RPC exchange written here, independent
of ROSE's client) for hooks/list. Skipped unless $ROSE_E2E_CODEX names a codex binary
(`npm install --prefix /tmp/codex171 @openai/codex@0.171.0`; CI's end-to-end step sets
it). Nothing reaches a network: install, hooks/list and config/batchWrite make no model
request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import rose as rose_pkg
from tests._codex_e2e import codex_binary

# read at import: conftest's autouse fixture deletes every ROSE_* variable before a test runs
EXPLICIT = os.environ.get("ROSE_E2E_CODEX")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    codex = codex_binary(EXPLICIT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSE_", "CODEX_"))}
    path = [os.path.dirname(codex), os.path.dirname(sys.executable), env.get("PATH", "")]
    env.update({"HOME": str(tmp_path / "home"), "PATH": os.pathsep.join(path)})
    env["ROSE_GLOBAL_HOME"] = str(tmp_path / "home" / ".rose")
    env["ROSE_KEEP_WARM"] = "0"  # nothing kept past the test (no graph server)
    # the rose under test, wherever it was imported from (a checkout or an install)
    src = str(Path(rose_pkg.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return env


def rose(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rose", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def listed(env: dict[str, str], cwd: Path) -> list[dict]:
    """hooks/list from the real `codex app-server`, one request at a time (it exits at EOF
    without answering what is still queued)."""
    proc = subprocess.Popen(
        [codex_binary(EXPLICIT), "app-server"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    assert proc.stdin is not None and proc.stdout is not None

    def ask(rid: int, method: str, params: dict) -> dict:
        proc.stdin.write(json.dumps({"id": rid, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            msg = json.loads(line)
            if msg.get("id") == rid:
                assert "result" in msg, msg
                return msg["result"]
        raise AssertionError(f"codex app-server exited before answering {method}")

    try:
        ask(1, "initialize", {"clientInfo": {"name": "rose-e2e", "version": "0"}})
        proc.stdin.write('{"method": "initialized"}\n')
        result = ask(2, "hooks/list", {"cwds": [str(cwd)]})
    finally:
        watchdog.cancel()
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
    return [h for entry in result["data"] for h in entry["hooks"]]


def roses(hooks: list[dict]) -> dict[str, str]:
    """ROSE's hooks as Codex lists them: event -> trustStatus."""
    return {h["eventName"]: h["trustStatus"] for h in hooks if "# rose-managed" in h["command"]}


EVENTS = {"sessionStart", "userPromptSubmit", "stop", "preCompact", "sessionEnd"}


def test_install_trust_makes_the_real_codex_trust_roses_hooks(env, tmp_path):
    project = tmp_path / "project"
    assert rose(env, project, "init").returncode == 0
    res = rose(env, project, "install", "--target", "codex")
    assert res.returncode == 0, res.stderr
    assert roses(listed(env, project)) == dict.fromkeys(EVENTS, "untrusted")
    assert not (Path(env["HOME"]) / ".codex" / "AGENTS.md").exists()  # this Codex runs hooks

    res = rose(env, project, "install", "--target", "codex", "--trust", "--yes")
    assert res.returncode == 0, res.stderr
    assert "Codex now trusts ROSE's 5 hooks" in res.stdout
    assert roses(listed(env, project)) == dict.fromkeys(EVENTS, "trusted")

    doctor = rose(env, project, "doctor")
    assert "trust codex user: 5 hooks trusted for their current content" in doctor.stdout

    config = Path(env["HOME"]) / ".codex" / "config.toml"
    assert config.read_text().count("[hooks.state.") == 5
    res = rose(env, project, "uninstall", "--target", "codex")
    assert res.returncode == 0, res.stderr
    assert "hooks.state" not in config.read_text()  # Codex's config without ROSE's records
    assert roses(listed(env, project)) == {}


def test_project_hooks_are_trusted_once_codex_trusts_the_project(env, tmp_path):
    project = tmp_path / "project"
    res = rose(env, project, "install", "--target", "codex", "--scope", "project", "--trust", "-y")
    assert res.returncode == 1 and "only in a project it trusts" in res.stderr
    assert not (project / ".codex").exists()  # put back

    config = Path(env["HOME"]) / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    res = rose(env, project, "install", "--target", "codex", "--scope", "project", "--trust", "-y")
    assert res.returncode == 0, res.stderr
    assert roses(listed(env, project)) == dict.fromkeys(EVENTS, "trusted")
    assert 'trust_level = "trusted"' in config.read_text()  # Codex's own config kept

"""The claude backend against a fake `claude` executable first on PATH.

Locks in: the child always gets hooks disabled, no tools, no saved session,
ROSE_CHILD=1 and no CLAUDECODE; `--json-schema` is used on 2.1+ and replaced by a
schema contract in the prompt on older CLIs; a bad envelope, a failing or hanging CLI,
an answer that does not fit, a missing binary and a spawn under pytest without opt-in
each raise their own error.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from rose.errors import AnswerInvalid, BackendFailed, BackendTimeout, BackendUnavailable
from rose.model.base import Backend
from rose.model.claude import ClaudeBackend

FAKES = Path(__file__).parent / "fakes"
SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["yes", "no"]},
        "reasons": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["verdict", "reasons"],
    "additionalProperties": False,
}
ANSWER = {"verdict": "no", "reasons": ["the lesson is about deploys"]}


class Fake:
    def __init__(self, record: Path):
        self.record = record

    def calls(self) -> list[dict]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def main_call(self) -> dict:
        (call,) = [c for c in self.calls() if c["argv"] != ["--version"]]
        return call


def install_fake(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    """Copy a fake CLI onto a fresh PATH dir, run by this interpreter, and allow spawning."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    body = (FAKES / name).read_text().split("\n", 1)[1]
    exe = bin_dir / name
    exe.write_text(f"#!{sys.executable}\n{body}")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("ROSE_ALLOW_MODEL_SPAWN", "1")
    monkeypatch.setenv("FAKE_RECORD", str(tmp_path / "record.jsonl"))
    monkeypatch.setenv("FAKE_ANSWER", json.dumps(ANSWER))
    monkeypatch.setenv("FAKE_MODE", "good")
    return Fake(tmp_path / "record.jsonl")


@pytest.fixture
def fake(tmp_path, monkeypatch) -> Fake:
    return install_fake("claude", tmp_path, monkeypatch)


def after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_good_answer_comes_from_structured_output_with_usage(fake):
    answer = ClaudeBackend().complete("relevance", "Is it relevant?", SCHEMA, timeout_s=10)
    assert answer.data == ANSWER
    assert json.loads(answer.raw) == ANSWER
    assert answer.usage.input_tokens == 12 + 100 + 2000
    assert answer.usage.cached_tokens == 2000
    assert answer.usage.output_tokens == 34
    assert answer.usage.cost_usd == pytest.approx(0.0123)
    assert answer.usage.wall_s > 0


def test_child_runs_without_hooks_tools_or_session_and_with_rose_child(fake, monkeypatch):
    monkeypatch.setenv("CLAUDECODE", "1")  # as inside a Claude Code session's hook
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "1e863b71-faea-4ebb-bd6e-684c601d6a11")
    monkeypatch.setenv("CLAUDE_CODE_MESSAGING_SOCKET", "/tmp/cc-socks/10065.sock")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    ClaudeBackend().complete("relevance", "Is it relevant?", SCHEMA, timeout_s=10)
    call = fake.main_call()
    argv = call["argv"]
    assert argv[0] == "-p"
    assert after(argv, "--output-format") == "json"
    assert json.loads(after(argv, "--settings")) == {"disableAllHooks": True}
    assert "--no-session-persistence" in argv
    assert "--strict-mcp-config" in argv and "--mcp-config" not in argv  # no MCP servers
    assert after(argv, "--tools") == ""
    assert after(argv, "--system-prompt")
    assert json.loads(after(argv, "--json-schema")) == SCHEMA
    assert "--model" not in argv
    assert call["stdin"] == "Is it relevant?"
    assert call["rose_child"] == "1"
    assert call["no_claude_mds"] == "1", "the user's CLAUDE.md would instruct the judge"
    assert call["claudecode"] is None, "a nested claude refuses to start with CLAUDECODE set"
    # no part of the host's session, whose variables would tie it there; the rest is kept
    assert call["session_vars"] == ["ANTHROPIC_BASE_URL"]
    assert Path(call["cwd"]) != Path.cwd()
    assert not Path(call["cwd"]).exists(), "the scratch directory is removed"


def test_model_is_passed_through(fake):
    ClaudeBackend(model="haiku").complete("relevance", "q", SCHEMA, timeout_s=10)
    assert after(fake.main_call()["argv"], "--model") == "haiku"


def test_version_is_probed_once_per_binary(fake):
    backend = ClaudeBackend()
    backend.complete("relevance", "q1", SCHEMA, timeout_s=10)
    backend.complete("relevance", "q2", SCHEMA, timeout_s=10)
    argvs = [c["argv"] for c in fake.calls()]
    assert argvs.count(["--version"]) == 1
    assert len(argvs) == 3


def test_old_cli_gets_the_schema_in_the_prompt_and_answers_in_text(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "old")
    answer = ClaudeBackend().complete("relevance", "Is it relevant?", SCHEMA, timeout_s=10)
    assert answer.data == ANSWER
    assert "```json" in answer.raw
    call = fake.main_call()
    assert "--json-schema" not in call["argv"]
    assert json.loads(after(call["argv"], "--settings")) == {"disableAllHooks": True}
    assert call["stdin"].startswith("Is it relevant?")
    assert "matching this JSON schema" in call["stdin"]
    assert '"verdict"' in call["stdin"]


def test_missing_structured_output_falls_back_to_the_result_text(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "no-structured")
    answer = ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    assert answer.data == ANSWER


def test_output_that_is_not_the_envelope_fails(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "malformed")
    with pytest.raises(BackendFailed, match="not the JSON envelope"):
        ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)


def test_hanging_cli_is_killed_at_the_deadline(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "slow")
    started = time.monotonic()
    with pytest.raises(BackendTimeout) as caught:
        ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=0.5)
    # the fake sleeps 30 s: a call that waited for it would take 60 times the deadline
    assert time.monotonic() - started < 20 * 0.5, "the child and its grandchild were killed"
    assert caught.value.seconds == 0.5


def test_non_zero_exit_fails_with_code_and_last_stderr_line(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "fail")
    with pytest.raises(BackendFailed) as caught:
        ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    assert "exited with code 1" in str(caught.value)
    assert "Invalid API key" in str(caught.value)


def test_answer_not_fitting_the_schema_is_invalid(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "wrong-schema")
    with pytest.raises(AnswerInvalid) as caught:
        ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    assert caught.value.call == "relevance"
    assert "verdict" in str(caught.value)


def test_missing_binary_is_unavailable_with_a_hint(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("ROSE_ALLOW_MODEL_SPAWN", "1")
    with pytest.raises(BackendUnavailable) as caught:
        ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    assert "`claude` is not on PATH" in str(caught.value)
    assert "npm install -g @anthropic-ai/claude-code" in str(caught.value)  # no codex either


def test_refuses_to_spawn_under_pytest_without_opt_in(fake, monkeypatch):
    monkeypatch.delenv("ROSE_ALLOW_MODEL_SPAWN")
    with pytest.raises(BackendUnavailable, match="ROSE_ALLOW_MODEL_SPAWN=1"):
        ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    assert fake.calls() == [], "not even the version probe ran"


def test_is_a_backend():
    assert isinstance(ClaudeBackend(), Backend)

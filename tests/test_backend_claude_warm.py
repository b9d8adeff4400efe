"""The claude backend's stream-json calls and the CLIs it starts ahead of their question.

Locks in: on Claude Code 2.1.332 and newer a call is one stream-json exchange (the prompt
as one user message, the answer from the `result` line) with the flags and the variable
that keep the request what a plain call sends, and with every flag of the plain call;
older CLIs, and one whose version cannot be read, keep the plain call and are never
started ahead; `prewarm` starts CLIs that a later call with the same argv takes (and only
such a call), never raises, starts nothing where spawning is refused or no CLI is
installed, and a spare nobody takes is dismissed by EOF (at exit, or idle) without an
answer; a taken spare still dies at the deadline; a call returns at the `result` line,
and a CLI that lingers after it is killed.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from rose.errors import BackendTimeout
from rose.model import _proc, _warm
from rose.model.claude import WARM_SINCE, ClaudeBackend
from tests.test_backend_claude import ANSWER, SCHEMA, Fake, after, install_fake

OTHER = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@pytest.fixture
def fake(tmp_path, monkeypatch) -> Fake:
    fake = install_fake("claude", tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_VERSION", ".".join(map(str, WARM_SINCE)))
    yield fake
    _warm.dismiss_all(wait_s=5)


def calls(fake: Fake) -> list[dict]:
    """The recorded invocations other than the version probe."""
    return [c for c in fake.calls() if c["argv"] != ["--version"]]


def wait_for(predicate, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for the fake CLI"
        time.sleep(0.02)


def started(fake: Fake) -> list[dict]:
    return [c for c in calls(fake) if c.get("started")]


def asked(fake: Fake) -> list[dict]:
    return [c for c in calls(fake) if c.get("message")]


def test_a_call_streams_with_the_plain_calls_flags_and_the_same_request(fake, monkeypatch):
    monkeypatch.setenv("CLAUDECODE", "1")
    answer = ClaudeBackend().complete("relevance", "Is it relevant?", SCHEMA, timeout_s=10)
    assert answer.data == ANSWER
    assert answer.usage.input_tokens == 12 + 100 + 2000
    assert answer.usage.cost_usd == pytest.approx(0.0123)
    (call,) = asked(fake)
    argv = call["argv"]
    assert after(argv, "--output-format") == "stream-json"
    assert after(argv, "--input-format") == "stream-json"
    assert "--verbose" in argv  # stream-json output requires it in print mode
    # --verbose alone would ask for thinking-display updates: these two keep them off
    assert after(argv, "--thinking-display") == "omitted"
    assert call["thinking_updates"] == "0"
    assert argv[0] == "-p" and "--no-session-persistence" in argv
    assert json.loads(after(argv, "--settings")) == {"disableAllHooks": True}
    assert "--strict-mcp-config" in argv and after(argv, "--tools") == ""
    assert json.loads(after(argv, "--json-schema")) == SCHEMA
    assert "--bare" not in argv  # it would change auth (API key only) and the request
    assert call["message"] == {
        "type": "user",
        "message": {"role": "user", "content": "Is it relevant?"},
    }
    assert call["rose_child"] == "1" and call["claudecode"] is None
    assert call["no_claude_mds"] == "1"  # no CLAUDE.md reaches the question


@pytest.mark.parametrize("version", ["2.1.331", "2.1.7", "unknown"])
def test_older_or_unreadable_versions_keep_the_plain_call_and_start_nothing_ahead(
    fake, monkeypatch, version
):
    monkeypatch.setenv("FAKE_VERSION", version)
    assert ClaudeBackend().prewarm(SCHEMA, 2) == 0
    assert calls(fake) == []
    ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    (call,) = calls(fake)
    assert after(call["argv"], "--output-format") == "json"
    assert "--input-format" not in call["argv"] and "--verbose" not in call["argv"]
    assert call["stdin"].startswith("q") and call["thinking_updates"] is None


def test_a_prewarmed_cli_answers_the_next_call_and_the_other_is_dismissed(fake):
    backend = ClaudeBackend()
    assert backend.prewarm(SCHEMA, 2) == 2
    wait_for(lambda: len(started(fake)) == 2)
    assert backend.prewarm(SCHEMA, 2) == 0, "two already wait"
    spare_pids = {c["pid"] for c in started(fake)}
    answer = backend.complete("relevance", "q", SCHEMA, timeout_s=10)
    assert answer.data == ANSWER
    (call,) = asked(fake)
    assert call["pid"] in spare_pids, "the call took a spare instead of starting a CLI"
    assert len(started(fake)) == 2
    _warm.dismiss_all(wait_s=5)
    wait_for(lambda: any(c.get("message", 1) is None for c in calls(fake)))
    (dismissed,) = [c for c in calls(fake) if "message" in c and c["message"] is None]
    assert dismissed["pid"] in spare_pids - {call["pid"]}
    assert len(asked(fake)) == 1, "a dismissed spare never asks"


def test_a_spare_serves_only_a_call_with_its_argv(fake):
    ClaudeBackend().prewarm(OTHER, 1)  # another schema
    ClaudeBackend(model="haiku").prewarm(SCHEMA, 1)  # another model
    wait_for(lambda: len(started(fake)) == 2)
    spares = {c["pid"] for c in started(fake)}
    ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    (call,) = asked(fake)
    assert call["pid"] not in spares
    assert json.loads(after(call["argv"], "--json-schema")) == SCHEMA
    assert "--model" not in call["argv"]


def test_prewarm_never_raises_and_starts_nothing_where_no_cli_may_run(fake, monkeypatch):
    assert ClaudeBackend(binary="no-such-claude-here").prewarm(SCHEMA, 1) == 0
    monkeypatch.delenv("ROSE_ALLOW_MODEL_SPAWN")
    assert ClaudeBackend().prewarm(SCHEMA, 1) == 0
    assert fake.calls() == []


def test_a_spare_left_idle_is_dismissed(fake, monkeypatch):
    monkeypatch.setattr(_warm, "IDLE_S", 0.3)
    ClaudeBackend().prewarm(SCHEMA, 1)
    wait_for(lambda: any(c.get("message", 1) is None for c in calls(fake)))
    assert asked(fake) == []
    path = _proc.resolve_binary("claude", "claude")
    assert _warm.waiting(tuple(ClaudeBackend()._argv(path, SCHEMA, streaming=True))) == 0


def test_a_taken_spare_that_hangs_is_killed_at_the_deadline(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "slow")
    backend = ClaudeBackend()
    backend.prewarm(SCHEMA, 1)
    wait_for(lambda: len(started(fake)) == 1)
    began = time.monotonic()
    with pytest.raises(BackendTimeout):
        backend.complete("relevance", "q", SCHEMA, timeout_s=1.5)
    assert time.monotonic() - began < 10 * 1.5  # the fake's own 30 s would be 20 times it


def test_the_answer_is_in_hand_at_the_result_line_and_a_lingering_cli_is_killed(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "linger")  # the result line, then 30 s before it exits
    began = time.monotonic()
    answer = ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=20)
    assert answer.data == ANSWER
    # the fake exits 30 s after its result line; the call's deadline is 20 s
    assert time.monotonic() - began < 20 / 2, "the call waited for the CLI to exit"
    (call,) = asked(fake)
    wait_for(lambda: not _alive(call["pid"]), timeout_s=_proc._REAP_S + 5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

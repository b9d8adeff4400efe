"""Codex rollouts, 0.77 to 0.1xx, read into steps.

Locks in: a real 0.171 `codex exec` rollout (world_state and token_usage_record lines are
known, not skipped; the prompt hook's context is a developer item, not a prompt); a prompt
or message a rollout writes twice (as a response item and as an event) is one step; the
AGENTS.md, environment and developer context injected as messages are
not prompts; every function, custom and shell call is a tool call, failed when its output
reports a non-zero exit code (the unified exec header or the JSON metadata), when an
`exec_command_end` says so (counted once with its output) or when the user rejected it;
encrypted reasoning is nothing, a reasoning summary is reasoning; unknown record kinds and
a truncated last line are skipped. Counts were read off the files.
"""

from __future__ import annotations

import json

import pytest

from rose.transcripts._codex_records import failure
from rose.transcripts.transcript import read
from tests._transcripts import fixture


@pytest.mark.parametrize(
    ("name", "version", "prompts", "agent", "tools", "failed", "skipped"),
    [
        ("codex-0.77-start", "0.77.0", 1, 0, 0, 0, 0),
        ("codex-0.128-desktop-excerpt", "0.128.0-alpha.1", 3, 3, 2, 1, 0),
        ("codex-0.135.0-session", "0.135.0", 1, 1, 0, 0, 0),
        ("codex-0.171-hand", "0.171.0", 2, 1, 4, 2, 2),
        ("codex-0.171.0-exec-hooks", "0.171.0", 1, 1, 1, 1, 0),
    ],
)
def test_counts_match_what_the_file_holds(name, version, prompts, agent, tools, failed, skipped):
    t = read(fixture(name))
    kinds = [s.kind for s in t.steps]
    assert t.host == "codex" and t.version == version
    assert (kinds.count("prompt"), kinds.count("agent"), kinds.count("tool")) == (
        prompts,
        agent,
        tools,
    )
    assert sum(s.failed for s in t.steps) == failed
    assert t.skipped == skipped


def test_injected_context_is_not_a_prompt_and_a_doubled_prompt_is_one():
    t = read(fixture("codex-0.77-start"))
    assert t.session == "019b64e5-57fa-7463-b644-fba7e456f905"
    (prompt,) = t.steps
    assert prompt.text.startswith("can you analyse the MD files in this directory")


def test_the_desktop_framing_is_dropped_from_the_prompt():
    t = read(fixture("codex-0.128-desktop-excerpt"))
    assert t.steps[0].text.startswith("analyze trascript and summarzie action items")


def test_a_non_zero_exit_fails_the_call_with_its_output():
    t = read(fixture("codex-0.128-desktop-excerpt"))
    ok, bad = [s for s in t.steps if s.kind == "tool"]
    assert ok.name == "exec_command" and not ok.failed
    assert bad.text.startswith("ps -ef | rg -i") and bad.line == 12
    assert bad.failed and bad.error == "exit code 1: zsh:1: operation not permitted: ps"


def test_ended_events_rejections_patches_and_shell_vectors():
    t = read(fixture("codex-0.171-hand"))
    calls = [(s.name, s.text, s.failed, s.error) for s in t.steps if s.kind == "tool"]
    assert calls == [
        ("exec_command", "make build", True, "exit code 2: make: *** [build] Error 2"),
        ("apply_patch", "patch src/main.c", False, ""),
        ("exec_command", "rm -rf build", True, "exec command rejected by user"),
        ("shell", "make test", False, ""),
    ]
    reasoning = [s.text for s in t.steps if s.kind == "reasoning"]
    assert reasoning == ["**Checking the build** as n_1a2b3c4d advises"]  # not twice


def test_encrypted_reasoning_is_nothing():
    t = read(fixture("codex-0.128-desktop-excerpt"))
    assert all(s.kind != "reasoning" for s in t.steps)


@pytest.mark.parametrize(
    ("output", "why"),
    [
        (json.dumps({"output": "boom\n", "metadata": {"exit_code": 3}}), "exit code 3: boom"),
        (json.dumps({"output": "fine", "metadata": {"exit_code": 0}}), None),
        (
            "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nno such file\n",
            "exit code 1: no such file",
        ),
        ("Process exited with code 0\nOutput:\nExit code: 1 is in the output\n", None),
        ("plain output that mentions Process exited with code 9 in passing", None),
        ({"content": "denied by policy", "success": False}, "denied by policy"),
        ("patch rejected by user", "patch rejected by user"),
    ],
)
def test_what_an_output_says_about_failure(output, why):
    assert failure(output) == why


def test_a_real_0171_rollout_with_hook_context_and_a_failed_call():
    t = read(fixture("codex-0.171.0-exec-hooks"))
    assert t.session == "01a23260-2cad-7c03-b77b-5425ba86f31e"
    prompt, tool, agent = t.steps
    assert prompt.text == "Commit the fix; TOOL first"  # not the injected <rose-memory> block
    assert (tool.name, tool.text, tool.line) == ("exec_command", "ls /nonexistent-dir", 11)
    assert tool.failed and tool.error.startswith("exit code 2: ls: cannot access")
    assert agent.text == "Done."

"""Claude Code session files, 1.x and 2.x, read into steps.

Locks in: the prompts are what the person typed, never tool results, slash-command echoes,
local command output, caveats, interruption notices or injected reminders; every tool_use
is a tool call with a one-line summary of its input, and one whose result had is_error
(a rejected call, a non-zero exit) is failed with its error's first line; thinking is
reasoning; a subagent's records are its steps, never the person's prompts; unknown record
kinds, lines that are not records and a truncated last line are skipped and counted, never
fatal. The counts were read off the fixture files (see tests/fixtures/transcripts/README.md).
"""

from __future__ import annotations

import pytest

from rose.transcripts.transcript import Step, Transcript, read, units
from tests._transcripts import fixture


def _kinds(t: Transcript, kind: str) -> list[Step]:
    return [s for s in t.steps if s.kind == kind]


@pytest.mark.parametrize(
    ("name", "version", "prompts", "tools", "failed", "skipped"),
    [
        ("claude-code-2.1.38-short", "2.1.38", 1, 2, 2, 0),
        ("claude-code-2.1.38-tool-heavy-head", "2.1.38", 2, 4, 0, 0),
        ("claude-code-1.0.0-representative", "1.0.0", 4, 2, 0, 0),
        ("claude-code-1.0.0-edge-cases", "1.0.0", 3, 3, 1, 5),
        ("claude-code-2.x-hand", "2.1.90", 2, 3, 1, 2),
        ("claude-code-2.1.332-loopback", "2.1.332", 2, 4, 2, 0),
    ],
)
def test_counts_match_what_the_file_holds(name, version, prompts, tools, failed, skipped):
    t = read(fixture(name))
    assert t.host == "claude-code" and t.version == version
    assert len(_kinds(t, "prompt")) == prompts
    assert len(_kinds(t, "tool")) == tools
    assert sum(s.failed for s in t.steps) == failed
    assert t.skipped == skipped


def test_tool_results_and_interruptions_are_not_prompts():
    t = read(fixture("claude-code-2.1.38-short"))
    assert [(s.line, s.text) for s in _kinds(t, "prompt")] == [
        (4, "mix phx.server doesnt seem to start")
    ]
    assert t.session == "55604662-cf2a-4331-851a-ec234028f8ca"


def test_commands_caveats_and_command_output_are_not_prompts():
    t = read(fixture("claude-code-2.1.38-tool-heavy-head"))
    prompts = [s.text for s in _kinds(t, "prompt")]
    assert prompts[0] == "start phoenix in background"
    assert prompts[1].startswith("scrolling back in xterm.js still does not work")
    t1 = read(fixture("claude-code-1.0.0-edge-cases"))
    said = " ".join(s.text for s in _kinds(t1, "prompt"))
    assert "Caveat" not in said and "command-name" not in said and "local-command" not in said


def test_a_rejected_call_is_failed_with_the_rejection():
    t = read(fixture("claude-code-2.1.38-short"))
    bash, glob = _kinds(t, "tool")
    assert (bash.name, bash.text, bash.line) == ("Bash", "mix phx.server 2>&1 | head -80", 8)
    assert glob.name == "Glob" and glob.text == "mix.exs"
    for call in (bash, glob):
        assert call.failed and call.error.startswith("The user doesn't want to proceed")


def test_a_failed_command_keeps_the_line_that_says_why():
    t = read(fixture("claude-code-2.x-hand"))
    first, second = [s for s in _kinds(t, "tool") if not s.subagent]
    assert first.text == "pytest -q tests/"  # folded onto one line
    assert first.failed
    assert first.error == "Exit code 1: FAILED tests/test_x.py::test_y - AssertionError"
    assert not second.failed and second.text == "uv run pytest -q"


def test_tool_summaries_say_what_the_call_touched():
    t = read(fixture("claude-code-2.1.38-tool-heavy-head"))
    calls = [(s.name, s.text) for s in _kinds(t, "tool")]
    assert calls[2:] == [
        ("WebSearch", "xterm.js scroll not working embedded page captures scroll events"),
        ("Glob", "assets/js/**/*.js"),
    ]
    todo = _kinds(read(fixture("claude-code-1.0.0-edge-cases")), "tool")[-1]
    assert (todo.name, todo.text) == ("TodoWrite", "5 todos")


def test_thinking_is_reasoning_and_blank_text_is_nothing():
    t = read(fixture("claude-code-2.1.38-short"))
    assert [s.kind for s in t.steps] == ["prompt", "reasoning", "agent", "tool", "tool"]
    assert _kinds(t, "reasoning")[0].text.startswith("The user is having trouble")


def test_the_correction_is_a_prompt_without_its_injected_reminder():
    t = read(fixture("claude-code-2.x-hand"))
    assert _kinds(t, "prompt")[1].text == "no, use uv run pytest"
    assert all("n_feed5678" not in s.text for s in t.steps)  # an isMeta reminder


def test_a_subagents_records_are_its_steps_not_the_persons_prompts():
    t = read(fixture("claude-code-2.x-hand"))
    assert [(s.name, s.subagent) for s in t.steps if s.name == "Grep"] == [("Grep", "a1b2c3d")]
    assert all("flaky" not in s.text for s in _kinds(t, "prompt"))


def test_units_open_at_each_prompt():
    t = read(fixture("claude-code-2.1.38-tool-heavy-head"))
    first, second = units(t)
    assert first[0].line == 4 and second[0].line == 26
    assert [s.kind for s in second] == ["prompt", "reasoning", "tool", "tool"]
    early = Transcript("claude-code", "", "", (Step("agent", "hello", 1), *t.steps))
    assert len(units(early)) == 2 and units(early)[0][0].text == "hello"
    assert units(Transcript("claude-code", "", "", ())) == []


def test_a_current_cli_session_reads_as_its_prompts_calls_and_replies():
    """Claude Code 2.1.332 (recorded against rose.sim.hosts.loopback): ROSE's block and status line
    are attachments, not prompts; a resumed session's reply is the second prompt; the two
    failed checks keep their exit line; the agent's citation of the lesson is its own words."""
    t = read(fixture("claude-code-2.1.332-loopback"))
    prompts = [s.text for s in _kinds(t, "prompt")]
    assert prompts[0] == "Please add the deploy client."
    assert "That is not right. In this project the deploy flag is --lumen-nimbus" in prompts[1]
    assert not any("rose-memory" in p or "ROSE ·" in p for p in prompts)
    tools = _kinds(t, "tool")
    assert [s.name for s in tools] == ["Bash"] * 4
    assert [s.failed for s in tools] == [False, True, True, False]
    assert tools[1].error == "Exit code 1: run the checks for the deploy client"
    assert "(lesson n_" in _kinds(t, "agent")[0].text

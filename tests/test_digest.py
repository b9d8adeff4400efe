"""The digest: one redacted line a step, in the prefixes other code reads, cut to a budget
by keeping what tells most.

Locks in: each line opens with exactly `User: `, `Agent: ` or `Tool: ` (reasoning is
`Agent: (thinking) `), multi-line texts are folded, a failed call carries `(failed:
<error>)`; `cited` holds the lesson ids the agent wrote, never those only in the person's
prompt or in injected context; a secret in a prompt is redacted everywhere the digest
shows it; under a tight budget every prompt, every failure with its error, every citing
line and the final message are kept, the rest goes most recent last, each cut is one
`[… N steps left out …]` line in its place and the order of what is kept is the
transcript's; an empty transcript is an empty digest of 0 tokens.
"""

from __future__ import annotations

import json
import re

from rose import tokens
from rose.transcripts.digest import build, line_of
from rose.transcripts.transcript import Step, read, units
from tests._transcripts import fixture

MARK = re.compile(r"^\[… (\d+) steps? left out …\]$")


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_every_line_has_one_prefix():
    for name in ("claude-code-2.x-hand", "codex-0.171-hand", "claude-code-2.1.38-short"):
        for line in _lines(build(read(fixture(name))).text):
            said = line.removeprefix("Subagent: ")
            assert said.startswith(("User: ", "Agent: ", "Tool: ")), line


def test_the_claude_digest_reads_as_the_session_went():
    d = build(read(fixture("claude-code-2.x-hand")))
    assert _lines(d.text) == [
        "User: the tests fail on CI; deploy with [REDACTED:aws-key] afterwards. The lesson "
        "n_abcd1234 you showed me last time was wrong.",
        "Agent: (thinking) Lesson n_0badc0de says the suite needs the frozen lockfile. "
        "I will run it first.",
        "Agent: Following n_c0ffee12, I will run the tests.",
        "Tool: Bash pytest -q tests/ (failed: Exit code 1: FAILED tests/test_x.py::test_y - "
        "AssertionError)",
        "User: no, use uv run pytest",
        "Tool: Bash uv run pytest -q",
        "Subagent: Tool: Grep flaky",
        "Agent: All 12 tests pass now with uv run pytest.",
    ]
    assert (d.host, d.version, d.tool_calls, d.failed_tool_calls) == ("claude-code", "2.1.90", 3, 1)
    assert d.tokens == tokens.count(d.text)


def test_cited_ids_are_the_agents_own():
    assert build(read(fixture("claude-code-2.x-hand"))).cited == ["n_0badc0de", "n_c0ffee12"]
    assert build(read(fixture("codex-0.171-hand"))).cited == ["n_1a2b3c4d"]
    prompt_only = [Step("prompt", "use n_abcd1234"), Step("tool", "ls", name="Bash")]
    assert build(prompt_only).cited == []
    assert build([Step("agent", "per n_abc, and n_zzzz1234 is no id")]).cited == []


def test_secrets_never_reach_the_digest():
    for name, secret in (
        ("claude-code-2.x-hand", "AKIAIOSFODNN7EXAMPLE"),
        ("codex-0.171-hand", "sk-ant-api03-"),
    ):
        t = read(fixture(name))
        assert any(secret in s.text for s in t.steps)  # the transcript does hold it
        shown = json.dumps(build(t).to_json(), ensure_ascii=False)
        assert secret not in shown and "[REDACTED:" in shown
    d = build([Step("tool", "curl -H 'Authorization: Bearer abcdef0123456789abcdef'", name="Bash")])
    assert "abcdef0123456789abcdef" not in d.text


def _long_session() -> list[Step]:
    steps = [Step("prompt", "make the nightly job pass", 1)]
    for i in range(120):
        steps.append(Step("tool", f"cat src/module_{i}.py", 2 + i, name="Read"))
    steps.append(Step("agent", "per n_0a1b2c3d the job needs the cache warmed", 130))
    steps.append(Step("tool", "make nightly", 131, name="Bash", failed=True, error="E: cold"))
    for i in range(80):
        steps.append(Step("reasoning", f"thinking about step {i} " * 8, 140 + i))
    steps.append(Step("prompt", "no: warm the cache first", 300))
    steps.append(Step("tool", "make warm && make nightly", 301, name="Bash"))
    steps.append(Step("agent", "The nightly job passes now.", 302))
    return steps


def test_a_tight_budget_keeps_what_tells_most_and_marks_the_rest():
    steps = _long_session()
    d = build(steps, host="codex", version="0.171.0", budget_tokens=300)
    lines = _lines(d.text)
    assert d.tokens <= 300 and d.steps == len(steps)
    assert "User: make the nightly job pass" in lines
    assert "User: no: warm the cache first" in lines
    assert "Tool: Bash make nightly (failed: E: cold)" in lines
    assert "Agent: per n_0a1b2c3d the job needs the cache warmed" in lines
    assert lines[-1] == "Agent: The nightly job passes now."
    marks = [int(m.group(1)) for m in map(MARK.match, lines) if m]
    kept = [ln for ln in lines if not MARK.match(ln)]
    assert marks and sum(marks) + len(kept) == len(steps)
    assert not any(MARK.match(a) and MARK.match(b) for a, b in zip(lines, lines[1:], strict=False))
    shown = [line_of(s, final=i == len(steps) - 1) for i, s in enumerate(steps)]
    order = [shown.index(ln) for ln in kept]
    assert order == sorted(order)  # chronological


def test_what_fits_after_the_essentials_is_the_most_recent():
    d = build(_long_session(), budget_tokens=600)
    reads = [ln for ln in _lines(d.text) if ln.startswith("Tool: Read")]
    thoughts = [ln for ln in _lines(d.text) if ln.startswith("Agent: (thinking)")]
    assert thoughts and "step 79" in thoughts[-1]
    assert not reads  # the oldest steps went first


def test_a_budget_that_fits_everything_cuts_nothing():
    t = read(fixture("codex-0.171-hand"))
    d = build(t)
    assert len(_lines(d.text)) == len(t.steps) and "left out" not in d.text


def test_an_empty_transcript_is_an_empty_digest():
    d = build([])
    assert (d.text, d.tokens, d.user_prompts, d.cited) == ("", 0, [], [])


def test_multi_line_texts_are_folded_and_long_ones_cut():
    d = build([Step("agent", "first\n\n  second\tthird"), Step("prompt", "x" * 5000)])
    first, second = _lines(d.text)
    assert first == "Agent: first second third"
    assert second.endswith("…") and len(second) < 2100


def test_a_unit_is_digested_with_the_host_given():
    t = read(fixture("claude-code-2.1.38-tool-heavy-head"))
    second = units(t)[1]
    d = build(second, host=t.host, version=t.version)
    assert d.user_prompts[0].startswith("scrolling back in xterm.js")
    assert (d.host, d.version, d.tool_calls, d.steps) == ("claude-code", "2.1.38", 2, 4)


def test_json_has_the_keys_other_code_reads():
    data = build(read(fixture("codex-0.171-hand"))).to_json()
    assert set(data) == {
        "host",
        "version",
        "user_prompts",
        "tool_calls",
        "failed_tool_calls",
        "cited",
        "tokens",
        "digest",
        "skipped",
        "steps",
    }
    assert data["skipped"] == 2 and data["failed_tool_calls"] == 2
    assert data["user_prompts"][1] == "thanks, now run the tests"

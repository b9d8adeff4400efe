"""The Stop hook's count of a session's activity: cheap, incremental, and never fooled by a
line still being written.

Locks in: counting a whole file gives what reading it gives; counting from the offset the
last count returned gives only what was appended since, and the two add up to the whole;
a partly written last line is neither counted nor passed (the offset stops before it) and
is counted once complete; a file shorter than the offset (replaced) is counted from its
start; a failure whose call was counted before the offset still counts.
"""

from __future__ import annotations

import json

import pytest

from rose.transcripts.transcript import activity, read
from tests._transcripts import FIXTURES, fixture

NAMES = sorted(p.stem for p in FIXTURES.glob("*.jsonl"))


@pytest.mark.parametrize("name", NAMES)
def test_counting_a_whole_file_agrees_with_reading_it(name):
    path = fixture(name)
    t, act = read(path), activity(path)
    assert act.user_prompts == sum(s.kind == "prompt" for s in t.steps)
    assert act.tool_calls == sum(s.kind == "tool" for s in t.steps)
    assert act.failed_tool_calls == sum(s.failed for s in t.steps)
    data = path.read_bytes()
    assert act.offset == data.rfind(b"\n") + 1


@pytest.mark.parametrize("name", ["claude-code-2.x-hand", "codex-0.171-hand"])
def test_counts_continue_from_the_offset_across_appends(tmp_path, name):
    lines = fixture(name).read_bytes().splitlines(keepends=True)[:-1]  # whole lines only
    path = tmp_path / "session.jsonl"
    cut = next(i for i, ln in enumerate(lines) if b"no, use uv" in ln or b"thanks, now" in ln)
    path.write_bytes(b"".join(lines[:cut]))
    first = activity(path)
    assert first.offset == path.stat().st_size
    with path.open("ab") as f:
        f.write(b"".join(lines[cut:]))
    second = activity(path, first.offset)
    whole = activity(path)
    assert first.user_prompts == 1 and second.user_prompts == 1
    assert first.tool_calls + second.tool_calls == whole.tool_calls
    assert first.failed_tool_calls + second.failed_tool_calls == whole.failed_tool_calls
    assert second.offset == whole.offset == path.stat().st_size
    assert activity(path, second.offset).user_prompts == 0


def test_a_partly_written_line_waits_until_it_is_whole(tmp_path):
    path = tmp_path / "session.jsonl"
    prompt = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "go on"}}
    line = json.dumps(prompt).encode() + b"\n"
    path.write_bytes(line + line[:20])
    first = activity(path)
    assert first.user_prompts == 1 and first.offset == len(line)
    with path.open("ab") as f:
        f.write(line[20:])
    second = activity(path, first.offset)
    assert second.user_prompts == 1 and second.offset == 2 * len(line)


def test_a_replaced_file_is_counted_from_its_start(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(fixture("claude-code-2.1.38-short").read_bytes())
    act = activity(path, 10**9)
    assert act.user_prompts == 1 and act.tool_calls == 2


def test_a_failure_whose_call_came_before_the_offset_still_counts(tmp_path):
    lines = fixture("claude-code-2.1.38-short").read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[:10]))  # up to the second tool_use
    first = activity(path)
    with path.open("ab") as f:
        f.write(b"".join(lines[10:]))
    second = activity(path, first.offset)
    assert (first.tool_calls, first.failed_tool_calls) == (2, 0)
    assert (second.tool_calls, second.failed_tool_calls) == (0, 2)

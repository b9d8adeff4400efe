"""What a session's subagents did reaches its digest and its counts (ROSE issue 39, item 8).

Locks in: a Claude Code subagent's tool calls and messages, whether written into the
session file (1.x, `isSidechain`) or into a file of its own (2.0 beside the session, 2.1
under `<session-id>/subagents/`), are steps of the session marked as the subagent's and
shown behind `Subagent: `; its failed calls count in the digest and in the Stop hook's
activity; a large subagent cannot push the person's prompts out of the budget; a subagent
file that is missing, unreadable or another session's is passed over without breaking the
digest. Before this, every sidechain record was skipped: a session that delegated its work
showed none of it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from rose.transcripts import _claude_records
from rose.transcripts.digest import SUBAGENT_SHARE, build
from rose.transcripts.transcript import Subagents, activity, read
from tests._transcripts import fixture

SID = "5c1e9a2b-7f3d-4a60-8b19-0e2d4c6f8a13"
AGENT = "a4f09c2e1b7d3a5c6"


def _rec(kind: str, content: object, *, agent: str = "", **extra: object) -> dict:
    rec: dict = {"type": kind, "isSidechain": bool(agent), "sessionId": SID, "version": "2.1.90"}
    if agent:
        rec["agentId"] = agent
    if kind == "user":
        rec["message"] = {"role": "user", "content": content}
    else:
        rec["message"] = {"id": f"msg_{id(content)}", "role": "assistant", "content": content}
    return {**rec, **extra}


def _call(call_id: str, name: str, args: dict, **kw: str) -> dict:
    return _rec(
        "assistant", [{"type": "tool_use", "id": call_id, "name": name, "input": args}], **kw
    )


def _result(call_id: str, text: str, *, error: bool = False, **extra: object) -> dict:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error}
    agent = str(extra.pop("agent", ""))
    return _rec("user", [block], agent=agent, **extra)


def _write(path: Path, recs: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def _session(project: Path, *, status: str = "completed") -> Path:
    """A 2.x session file whose one `Agent` call ran subagent AGENT, named in its result."""
    done = {"agentId": AGENT, "status": status}
    return _write(
        project / f"{SID}.jsonl",
        [
            _rec("user", "make the build pass"),
            _call("toolu_agent", "Agent", {"description": "Fix the build", "prompt": "fix it"}),
            _result("toolu_agent", f"Fixed.\nagentId: {AGENT}", toolUseResult=done),
            _rec("assistant", [{"type": "text", "text": "The build passes now."}]),
        ],
    )


def _subagent(path: Path, n_calls: int = 2) -> Path:
    """AGENT's own transcript: a prompt, then calls of which the first fails."""
    recs = [_rec("user", "fix it", agent=AGENT)]
    for i in range(n_calls):
        recs.append(_call(f"toolu_s{i}", "Bash", {"command": f"make step{i}"}, agent=AGENT))
        said = "Exit code 2\nmake: *** no rule" if i == 0 else "ok"
        recs.append(_result(f"toolu_s{i}", said, error=i == 0, agent=AGENT))
    return _write(path, recs)


def _layout_2_1(project: Path) -> Path:
    _subagent(project / SID / "subagents" / f"agent-{AGENT}.jsonl")
    return _session(project)


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_a_1x_sidechain_shows_in_the_digest_as_the_subagents_work():
    t = read(fixture("claude-code-1.x-sidechain-hand"))
    d = build(t)
    assert _lines(d.text) == [
        "User: find why the import of app.config fails",
        "Tool: Task Trace the config import",
        "Subagent: Agent: I will search for the import first.",
        "Subagent: Tool: Grep import app.config",
        "Subagent: Tool: Bash python -c 'import app.config' (failed: Error: Exit code 1: "
        "ModuleNotFoundError: No module named 'yaml')",
        "Subagent: Agent: app.config needs PyYAML, which is not installed.",
        "Agent: The import fails because PyYAML is missing; add it to the dependencies.",
    ]
    assert (d.tool_calls, d.failed_tool_calls, d.user_prompts) == (3, 1, [_lines(d.text)[0][6:]])


def test_the_stop_hook_counts_a_sidechains_failure():
    act = activity(fixture("claude-code-1.x-sidechain-hand"))
    assert (act.user_prompts, act.tool_calls, act.failed_tool_calls) == (1, 3, 1)


def test_a_2_1_subagent_file_is_read_into_the_digest_after_its_call(tmp_path):
    t = read(_layout_2_1(tmp_path / "proj"))
    assert (t.subagents, t.missed) == (1, 0)
    lines = _lines(build(t).text)
    assert lines == [
        "User: make the build pass",
        "Tool: Agent Fix the build",
        "Subagent: Tool: Bash make step0 (failed: Exit code 2: make: *** no rule)",
        "Subagent: Tool: Bash make step1",
        "Agent: The build passes now.",
    ]
    subs = [s for s in t.steps if s.subagent]
    assert {s.subagent for s in subs} == {AGENT}
    assert {s.line for s in subs} == {3}  # read where the result that named it was


def test_a_subagents_failure_counts_as_the_sessions(tmp_path):
    path = _layout_2_1(tmp_path / "proj")
    d = build(read(path))
    assert (d.tool_calls, d.failed_tool_calls) == (3, 1)
    act = activity(path)
    assert (act.tool_calls, act.failed_tool_calls, act.missed) == (3, 1, 0)


def test_the_stop_hook_reads_a_subagent_once_when_its_end_is_new(tmp_path):
    path = _layout_2_1(tmp_path / "proj")
    first = activity(path)
    with path.open("a") as f:
        f.write(json.dumps(_rec("user", "and the docs too")) + "\n")
    again = activity(path, first.offset)
    assert (again.user_prompts, again.tool_calls, again.failed_tool_calls) == (1, 0, 0)


def test_a_subagent_still_running_is_left_to_the_stop_that_sees_it_end(tmp_path):
    project = tmp_path / "proj"
    _subagent(project / SID / "subagents" / f"agent-{AGENT}.jsonl")
    path = _session(project, status="async_launched")
    assert activity(path).tool_calls == 1  # the launch; its calls are not yet the session's
    assert read(path).subagents == 1  # a job reads what it has done so far


def test_a_2_0_subagent_file_beside_the_session_is_read_if_it_is_this_sessions(tmp_path):
    project = tmp_path / "proj"
    beside = _subagent(project / f"agent-{AGENT}.jsonl")
    path = _session(project)
    assert build(read(path)).failed_tool_calls == 1
    beside.write_text(beside.read_text().replace(SID, "another-session"))
    t = read(path)
    assert (t.subagents, t.missed, build(t).failed_tool_calls) == (0, 1, 0)


def test_a_missing_or_unreadable_subagent_file_is_passed_over(tmp_path):
    path = _session(tmp_path / "gone")
    t = read(path)
    assert (t.subagents, t.missed) == (0, 1)
    assert _lines(build(t).text)[-1] == "Agent: The build passes now."
    assert activity(path).missed == 1

    path = _session(tmp_path / "folder")
    (tmp_path / "folder" / SID / "subagents" / f"agent-{AGENT}.jsonl").mkdir(parents=True)
    t = read(path)
    assert (t.subagents, t.missed, len(t.steps)) == (0, 1, 3)


def test_an_agent_id_is_never_a_path(tmp_path):
    project = tmp_path / "proj"
    _subagent(tmp_path / "agent-..jsonl")
    recs = [
        _call("toolu_agent", "Agent", {"description": "x"}),
        _result("toolu_agent", "done", toolUseResult={"agentId": "../../x", "status": "completed"}),
    ]
    t = read(_write(project / f"{SID}.jsonl", recs))
    assert (t.subagents, t.missed) == (0, 0)


def test_a_large_subagent_cannot_crowd_out_the_sessions_prompts(tmp_path):
    project = tmp_path / "proj"
    _subagent(project / SID / "subagents" / f"agent-{AGENT}.jsonl", n_calls=400)
    path = _session(project)
    with path.open("a") as f:
        f.write(json.dumps(_rec("user", "now also update the changelog")) + "\n")
    budget = 400
    d = build(read(path), budget_tokens=budget)
    lines = _lines(d.text)
    assert d.tokens <= budget and d.tool_calls == 401 and d.failed_tool_calls == 1
    assert "User: make the build pass" in lines
    assert "User: now also update the changelog" in lines
    assert "Agent: The build passes now." in lines
    assert any(ln.startswith("Subagent: Tool: Bash make step0 (failed") for ln in lines)
    assert any(ln.startswith("[…") for ln in lines)


def test_subagents_failures_take_no_more_than_their_share(tmp_path):
    from rose import tokens
    from rose.transcripts.transcript import Step

    own = [Step("prompt", "ship it", 1)] + [
        Step("tool", f"make part{i}", 2 + i, name="Bash") for i in range(60)
    ]
    subs = [
        Step("tool", f"make sub{i}", 100, name="Bash", failed=True, error="E", subagent=AGENT)
        for i in range(60)
    ]
    budget = 500
    d = build([*own, *subs], budget_tokens=budget)
    failed = [ln for ln in _lines(d.text) if ln.startswith("Subagent: ")]
    assert failed and sum(tokens.count(ln) + 1 for ln in failed) <= budget * SUBAGENT_SHARE
    assert "User: ship it" in _lines(d.text)


def test_a_subagent_left_past_the_deadline_is_counted_missed(tmp_path):
    path = _layout_2_1(tmp_path / "proj")
    reader = _claude_records.Reader()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        reader.feed(n, json.loads(line))
    subs = Subagents(path, 1 << 20, time.monotonic() - 1, whole=True)
    steps = subs.spliced(reader)
    assert (subs.read, subs.missed, len(steps)) == (0, 1, 3)


def test_the_stop_hook_reads_no_more_subagent_bytes_than_its_cap(tmp_path):
    project = tmp_path / "proj"
    sub = _subagent(project / SID / "subagents" / f"agent-{AGENT}.jsonl", n_calls=50)
    path = _session(project)
    act = activity(path, limit=os.path.getsize(path) + os.path.getsize(sub) // 2)
    assert (act.tool_calls, act.missed) == (1, 1)

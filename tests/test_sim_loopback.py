"""The loopback server (rose.sim.hosts.loopback) speaks both hosts' streams, plays the simulated
world by its own rules, records every request, and stops by itself.

Locks in what the real-CLI end-to-end tests stand on, without a CLI: the Anthropic
Messages stream (text and tool_use blocks, the StructuredOutput answer to `claude -p
--json-schema`) and the OpenAI Responses stream (message and function_call items, the
json_schema answer to `codex exec --output-schema`) have the shapes the hosts parse; the
agent succeeds exactly when `rose.sim.agent.Agent` would on the same context (ROSE's
block wrapped as Claude Code wraps it), runs its checks as shell commands, and reports
after their results; the judge answers as `SimulatedBackend` answers the same prompt; the
log holds each request and what was played; and an idle server, or one whose parent
died, exits on its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rose.judge.calls import schema_of
from rose.sim import Agent, SimulatedBackend, World
from rose.sim.agent import correction
from rose.sim.hosts.loopback import LoopbackServer, serve
from rose.sim.hosts.play import call_of, task_of
from rose.sim.markers import strip

SEED = 0
WORLD = World.generate(SEED, size="small")
# a task whose needs are not all known to the agent: it fails without being told
TASK = next(t for t in WORLD.tasks if any(not WORLD.facts[f].known for f in t.needs))
PROMPT = strip(TASK.prompt)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LoopbackServer]:
    with serve(tmp_path / "requests.jsonl", world=WORLD, seed=SEED) as srv:
        yield srv


def _post(srv: LoopbackServer, path: str, body: dict[str, Any]) -> tuple[str, str]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{srv.port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "x-api-key": "sk-ant-secret-never-logged"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers["Content-Type"], resp.read().decode()


def _events(stream: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in stream.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def _claude(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "claude-x", "stream": True, "messages": messages, "tools": tools}


BASH = {"name": "Bash", "input_schema": {"type": "object"}}


def _block(srv: LoopbackServer, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The content blocks a Messages stream built up, as the host reassembles them."""
    kind, text = _post(srv, "/v1/messages?beta=true", body)
    assert kind == "text/event-stream"
    events = _events(text)
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    blocks: list[dict[str, Any]] = []
    for name, data in events:
        assert data["type"] == name
        if name == "content_block_start":
            assert data["index"] == len(blocks)
            blocks.append({**data["content_block"], "_json": ""})
        elif name == "content_block_delta":
            delta, block = data["delta"], blocks[data["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                block["_json"] += delta["partial_json"]
    for block in blocks:
        if block["type"] == "tool_use":
            block["input"] = json.loads(block["_json"])
        block.pop("_json")
    stop = events[-2][1]["delta"]["stop_reason"]
    assert stop == ("tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn")
    return blocks


def _block_of_rose(lesson_text: str) -> str:
    """ROSE's block as Claude Code 2.1 passes it on: in a system message, after its prefix."""
    return (
        "UserPromptSubmit hook additional context: <rose-memory>\nLessons ROSE recalled.\n\n"
        f'<lesson id="n_0123abcd" level="0" scope="project">\n# Notes\n{lesson_text}\n</lesson>\n'
        "\n</rose-memory>"
    )


def test_the_agent_fails_without_the_facts_runs_its_checks_and_then_reports(server):
    first = [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]
    blocks = _block(server, _claude(first, [BASH]))
    uses = [b for b in blocks if b["type"] == "tool_use"]
    assert uses and all(u["name"] == "Bash" for u in uses)
    failing = [u for u in uses if u["input"]["command"].endswith("exit 1")]
    assert failing, "a failed attempt runs checks that fail"
    ran = subprocess.run(["bash", "-c", failing[0]["input"]["command"]], capture_output=True)
    assert ran.returncode == 1  # a real shell reports the failure to the host
    results = [
        {"type": "tool_result", "tool_use_id": u["id"], "content": "x", "is_error": True}
        for u in uses
    ]
    later = [*first, {"role": "assistant", "content": blocks}, {"role": "user", "content": results}]
    report = _block(server, _claude(later, [BASH]))
    assert [b["type"] for b in report] == ["text"]
    expected = Agent(WORLD, seed=SEED).solve(TASK, "")
    assert not expected.ok
    assert report[0]["text"].startswith(f"Could not finish {TASK.summary}.")
    assert "⟦o:fail⟧" in report[0]["text"]
    played = [json.loads(line)["played"] for line in server.log.read_text().splitlines()]
    assert played[-1]["ok"] is False and set(played[-1]["missing"]) == set(expected.missing)


def test_the_agent_succeeds_from_the_block_rose_injected(server):
    needed = [f for f in TASK.needs if not WORLD.facts[f].known]
    lesson = " ".join(WORLD.facts[f].text for f in needed)
    assert Agent(WORLD, seed=SEED).solve(TASK, _block_of_rose(lesson)).ok
    messages = [
        {"role": "user", "content": PROMPT},
        {"role": "system", "content": [{"type": "text", "text": _block_of_rose(lesson)}]},
    ]
    blocks = _block(server, _claude(messages, []))  # no shell offered: one report
    assert [b["type"] for b in blocks] == ["text"]
    assert "⟦o:ok⟧" in blocks[0]["text"]
    played = json.loads(server.log.read_text().splitlines()[-1])["played"]
    assert played == {**played, "role": "agent", "task": TASK.id, "ok": True}


def test_the_users_correction_in_a_later_turn_is_read_too(server):
    missing = Agent(WORLD, seed=SEED).solve(TASK, "").missing
    messages = [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": "Could not finish."},
        {"role": "user", "content": correction(WORLD, missing)},
    ]
    blocks = _block(server, _claude(messages, []))
    assert "⟦o:ok⟧" in blocks[-1]["text"]


def _judge_prompt() -> tuple[str, str]:
    """A real rendered `scope` prompt, as ROSE's judge sends it."""
    from rose.judge import models as m
    from rose.judge.calls import render

    ctx = m.ScopeContext.model_validate(
        {
            "project": "/work/proj",
            "lesson": {
                "id": "n_0123abcd",
                "title": "Deploy notes",
                "gist": "g",
                "body": WORLD.facts[TASK.needs[0]].text,
            },
        }
    )
    return "scope", render("scope", ctx)


def test_the_judge_answers_structured_output_as_the_simulated_backend(server):
    call, prompt = _judge_prompt()
    assert call_of(prompt) == (call, prompt)
    # a reminder the host puts first is left out of what the judge reads
    assert call_of(f"<system-reminder>A note.</system-reminder>\n{prompt}") == (call, prompt)
    tool = {"name": "StructuredOutput", "input_schema": schema_of(call)}
    blocks = _block(server, _claude([{"role": "user", "content": prompt + "\n"}], [tool]))
    assert [b["type"] for b in blocks] == ["tool_use"] and blocks[0]["name"] == "StructuredOutput"
    want = SimulatedBackend(WORLD, seed=SEED).complete(call, prompt, {}, timeout_s=5).data
    assert blocks[0]["input"] == want
    # once the host returns the tool's result, the turn ends in words
    done = [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": blocks},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
    ]
    assert [b["type"] for b in _block(server, _claude(done, [tool]))] == ["text"]


def _responses(srv: LoopbackServer, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The output items of a Responses stream, checked event by event as Codex reads it."""
    kind, text = _post(srv, "/v1/responses", {"model": "gpt-x", "stream": True, **body})
    assert kind == "text/event-stream"
    events = _events(text)
    names = [n for n, _ in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    done: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    for name, data in events:
        assert data["type"] == name
        if name == "response.output_text.delta":
            texts[data["item_id"]] = texts.get(data["item_id"], "") + data["delta"]
        elif name == "response.output_text.done":
            assert texts[data["item_id"]] == data["text"]
        elif name == "response.output_item.done":
            done.append(data["item"])
    for item in done:
        added = names.index("response.output_item.added")
        assert added < names.index("response.output_item.done")
        if item["type"] == "message":
            assert "response.content_part.added" in names
    usage = events[-1][1]["response"]["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert events[-1][1]["response"]["output"] == done
    return done


def test_the_responses_stream_carries_function_calls_then_the_report(server):
    shell = {"type": "function", "name": "exec_command", "parameters": {"type": "object"}}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": PROMPT}]}
    items = _responses(server, {"input": [user], "tools": [shell]})
    calls = [i for i in items if i["type"] == "function_call"]
    assert calls and all(c["name"] == "exec_command" for c in calls)
    assert all("cmd" in json.loads(c["arguments"]) for c in calls)
    outputs = [
        {"type": "function_call_output", "call_id": c["call_id"], "output": "exit 1"} for c in calls
    ]
    items = _responses(server, {"input": [user, *calls, *outputs], "tools": [shell]})
    assert [i["type"] for i in items] == ["message"]
    assert "⟦o:fail⟧" in items[0]["content"][0]["text"]


def test_the_responses_judge_answers_the_json_schema_as_text(server):
    call, prompt = _judge_prompt()
    fmt = {"type": "json_schema", "name": "answer", "strict": True, "schema": schema_of(call)}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
    # codex exec puts AGENTS.md and the environment in user messages before the prompt
    env = "<environment_context>\n  <cwd>/work/proj</cwd>\n</environment_context>"
    first = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": env}]}
    items = _responses(server, {"input": [first, user], "text": {"format": fmt}})
    want = SimulatedBackend(WORLD, seed=SEED).complete(call, prompt, {}, timeout_s=5).data
    assert json.loads(items[0]["content"][0]["text"]) == want


def test_every_request_is_recorded_without_the_api_key(server):
    _post(server, "/v1/messages?beta=true", _claude([{"role": "user", "content": "hello"}], []))
    urllib.request.urlopen(
        urllib.request.Request(f"http://127.0.0.1:{server.port}/", method="HEAD"), timeout=5
    ).close()
    lines = [json.loads(line) for line in server.log.read_text().splitlines()]
    assert [(r["method"], r["path"]) for r in lines] == [
        ("POST", "/v1/messages?beta=true"),
        ("HEAD", "/"),
    ]
    assert lines[0]["body"]["messages"] == [{"role": "user", "content": "hello"}]
    assert lines[0]["played"]["role"] == "idle"  # neither a task nor a question of ROSE's
    assert "sk-ant-secret" not in server.log.read_text()


def test_every_call_is_known_by_its_own_prompt():
    """Two calls share a first sentence (the probes) and some open alike: each rendered
    prompt is still read as its own call."""
    from rose.judge.calls import CALLS, render
    from rose.sim.examples import contexts

    examples = contexts(WORLD)
    assert set(examples) == set(CALLS)
    for name, ctx in examples.items():
        prompt = render(name, ctx)
        assert call_of(prompt, schema_of(name)) == (name, prompt), name
        assert call_of(prompt) == (name, prompt), name  # by its words alone, too


def test_a_task_is_known_by_its_marker_or_its_unique_words():
    assert task_of(WORLD, TASK.prompt) == TASK
    assert task_of(WORLD, f"<system-reminder>x</system-reminder>\n{PROMPT}") == TASK
    assert task_of(WORLD, "Please do something else entirely.") is None


def test_an_idle_server_stops_by_itself(tmp_path: Path):
    srv = serve(tmp_path / "log.jsonl", world=WORLD, idle_s=0.3)
    assert srv.stopped.wait(10)
    assert srv.why == "idle"


def test_the_server_process_stops_once_its_parent_is_gone(tmp_path: Path):
    """A parent that dies (a killed test) leaves no server: it notices and exits."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; p = subprocess.Popen([sys.executable, '-m',"
            " 'rose.sim.hosts.loopback', '--log', sys.argv[1], '--size', 'small', '--parent',"
            " str(__import__('os').getpid())], stdout=open(sys.argv[2], 'w'));"
            " print(p.pid, flush=True); sys.stdin.read()",
            str(tmp_path / "log.jsonl"),
            str(tmp_path / "out.txt"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None and parent.stdin is not None
    child = int(parent.stdout.readline())
    deadline = time.monotonic() + 30
    while "PORT" not in (tmp_path / "out.txt").read_text():
        assert time.monotonic() < deadline, "the server never listened"
        time.sleep(0.05)
    parent.stdin.close()  # the parent exits
    parent.wait(10)
    parent.stdout.close()
    while "STOPPED" not in (tmp_path / "out.txt").read_text():
        assert time.monotonic() < deadline, "the server outlived its parent"
        time.sleep(0.05)
    assert "STOPPED parent gone" in (tmp_path / "out.txt").read_text()
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            __import__("os").kill(child, 0)
            time.sleep(0.05)

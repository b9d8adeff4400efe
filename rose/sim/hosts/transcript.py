"""A simulated session written out as the host agents write theirs: a Claude Code 2.x
session file, or a Codex rollout.

So the transcript reader and the digest can be tried on sessions whose truth is known: the
digest ROSE builds from the file should carry the same facts, line for line, as the
session's own record (`Session.transcript`). Each ``User:`` line becomes a prompt (the
first without its task marker, which stands for nothing a host would write), each
``Agent:`` line a message, each ``Tool:`` line a shell call whose command is the line's
text, with a short result that did not fail. The other markers stay: they stand for words.
Everything is a pure function of the session and the ids given, so a file is reproducible.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from rose.sim.agent import Session
from rose.sim.markers import TASK, drop

CLAUDE_VERSION = "2.1.90"
CODEX_VERSION = "0.128.0"
RESULT = "done"  # what every simulated command that worked prints
FAILED = " (failed: "  # in the record, after a command whose result was an error
OUTPUT = " (output: "  # in the record, after a command that printed something worth reading
_START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def steps(session: Session) -> Iterator[tuple[str, str]]:
    """The session's record as (kind, text): "user", "agent", "tool", "failed" (a tool
    call whose result was an error, "Tool: command (failed: error)" in the record, as
    "command<TAB>error") or "output" (one that printed, "Tool: command (output: text)", as
    "command<TAB>text"), in order."""
    for line in session.transcript.splitlines():
        head, sep, text = line.partition(": ")
        if sep and head in ("User", "Agent", "Tool"):
            command, failed, error = text.partition(FAILED)
            shown, printed, output = text.partition(OUTPUT)
            if head == "Tool" and failed and error.endswith(")"):
                yield "failed", f"{command}\t{error[:-1]}"
            elif head == "Tool" and printed and output.endswith(")"):
                yield "output", f"{shown}\t{output[:-1]}"
            else:
                yield head.lower(), drop(text, TASK) if head == "User" else text


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


class _Clock:
    """Ids and timestamps that advance one record at a time, the same for the same session."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        self.n = 0

    def tick(self) -> str:
        self.n += 1
        when = _START + timedelta(seconds=2 * self.n)
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"

    def id(self, kind: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"rose-sim:{self.session_id}:{kind}:{self.n}"))


def claude_code(session: Session, *, session_id: str, cwd: str) -> str:
    """`session` as a Claude Code 2.x session file (JSON lines, one record a line)."""
    clock = _Clock(session_id)
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": CLAUDE_VERSION,
        "gitBranch": "main",
    }
    out: list[str] = []
    parent: str | None = None

    def record(kind: str, message: dict[str, Any], **extra: Any) -> str:
        nonlocal parent
        stamp = clock.tick()
        uid = clock.id("uuid")
        rec = {"parentUuid": parent, **common, "type": kind, "message": message, **extra}
        rec.update(uuid=uid, timestamp=stamp)
        out.append(_line(rec))
        parent = uid
        return uid

    def said(blocks: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "model": "claude-sonnet-4-5",
            "id": "msg_" + clock.id("msg").replace("-", "")[:24],
            "type": "message",
            "role": "assistant",
            "content": blocks,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 30},
        }

    for kind, text in steps(session):
        if kind == "user":
            record("user", {"role": "user", "content": text}, permissionMode="default")
        elif kind == "agent":
            record("assistant", said([{"type": "text", "text": text}]), requestId="req_sim")
        else:
            command, _, error = text.partition("\t")
            failed = kind == "failed"
            call = "toolu_" + clock.id("tool").replace("-", "")[:24]
            use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}
            asked = record("assistant", said([use]), requestId="req_sim")
            printed = error if kind == "output" else RESULT
            shown = f"Error: Exit code 1\n{error}" if failed else printed
            result = {"tool_use_id": call, "type": "tool_result", "content": shown}
            record(
                "user",
                {"role": "user", "content": [{**result, "is_error": failed}]},
                toolUseResult=f"Error: Exit code 1\n{error}"
                if failed
                else {"stdout": printed, "stderr": "", "interrupted": False},
                sourceToolAssistantUUID=asked,
            )
    return "\n".join(out) + "\n" if out else ""


def codex(session: Session, *, session_id: str, cwd: str) -> str:
    """`session` as a Codex rollout (JSON lines: session_meta, then items and events)."""
    clock = _Clock(session_id)
    out: list[str] = []

    def record(kind: str, payload: dict[str, Any]) -> None:
        out.append(_line({"timestamp": clock.tick(), "type": kind, "payload": payload}))

    record(
        "session_meta",
        {
            "id": session_id,
            "timestamp": _START.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": CODEX_VERSION,
            "source": "cli",
            "model_provider": "openai",
        },
    )
    context = (
        f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>"
    )
    record("response_item", _message("user", context))
    turn = ""
    for kind, text in steps(session):
        if kind == "user":
            if turn:
                record("event_msg", {"type": "task_complete", "turn_id": turn})
            turn = clock.id("turn")
            record("event_msg", {"type": "task_started", "turn_id": turn})
            record("turn_context", {"turn_id": turn, "cwd": cwd, "model": "gpt-5.5"})
            record("response_item", _message("user", text))
            record("event_msg", {"type": "user_message", "message": text, "images": []})
        elif kind == "agent":
            record("event_msg", {"type": "agent_message", "message": text})
            record("response_item", _message("assistant", text))
        else:
            command, _, error = text.partition("\t")
            code, shown = (1, error) if kind == "failed" else (0, error or RESULT)
            call = "call_" + clock.id("call").replace("-", "")[:24]
            args = json.dumps({"cmd": command, "workdir": cwd}, ensure_ascii=False)
            record("response_item", _call(call, args))
            end = {"type": "exec_command_end", "call_id": call, "turn_id": turn, "exit_code": code}
            status = "failed" if code else "completed"
            record("event_msg", {**end, "aggregated_output": shown + "\n", "status": status})
            output = (
                f"Chunk ID: 0a1b2c\nWall time: 0.0100 seconds\nProcess exited with code {code}\n"
                f"Original token count: 1\nOutput:\n{shown}\n"
            )
            record(
                "response_item", {"type": "function_call_output", "call_id": call, "output": output}
            )
    if turn:
        record("event_msg", {"type": "task_complete", "turn_id": turn})
    return "\n".join(out) + "\n"


def _message(role: str, text: str) -> dict[str, Any]:
    part = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def _call(call_id: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "name": "exec_command",
        "arguments": arguments,
        "call_id": call_id,
    }

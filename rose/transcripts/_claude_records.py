"""Claude Code session files (1.x and 2.x) record by record into `Step`s.

Each line is one record: `user` records hold what the person typed and, as `tool_result`
blocks, what tools returned; `assistant` records hold one or more content blocks (text,
thinking, tool_use; 2.x writes one block a record, 1.x several). Much of what a `user`
record holds was not typed by the person: slash-command echoes, local command output,
interruption notices, system reminders, IDE context, compaction summaries. Those are
not prompts.

A subagent's (`Task` / `Agent` tool) records are marked `isSidechain`. Claude Code 1.x
writes them into the session file; 2.0 into `agent-<agentId>.jsonl` beside it; 2.1.2 and
later into `<session-id>/subagents/agent-<agentId>.jsonl` (a workflow's one folder deeper,
`subagents/workflows/<id>/`). The tool result that ends a subagent names it
(`toolUseResult.agentId`, and an `agentId: <id>` line in its text). What a subagent did is
the session's work too: its tool calls and messages are steps marked with its id, and
its failures count; the task it was given is already the input of the call that started
it, so its own first prompt is not repeated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rose.transcripts._records import Calls, Step, first_line, fold, summary

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOST = "claude-code"
#: A subagent's records that name no agent (Claude Code 1.x writes no `agentId`).
SIDECHAIN = "sidechain"
# Every record type a session file is known to hold; the others count as skipped.
TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "attachment",
        "custom-title",
        "tag",
        "agent-name",
        "pr-link",
        # bookkeeping Claude Code 2.1.332 writes beside the conversation
        "atis-latch",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "tools-used",
        "cost-state",
        "mode",
    }
)

# Blocks the host wraps around context it adds to a prompt; what is left is the person's.
_ADDED = re.compile(
    r"<(system-reminder|ide_opened_file|ide_selection|ide_diagnostics"
    r"|user-prompt-submit-hook)>.*?</\1>",
    re.DOTALL,
)
# A user record that opens so was written by the host, not typed by the person.
_NOT_TYPED = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "Caveat: The messages below were generated",
    "[Request interrupted by user",
    "This session is being continued from a previous conversation",
)
_NOT_TYPED_FLAGS = ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")
_EMPTY_TEXT = ("", "(no content)")
# An agent id as a file name holds it: never a path (`..`, `/`), never long.
_AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_SPAWNS = ("Task", "Agent")  # the tools that start a subagent (renamed in 2.1)
_TRAILER = re.compile(r"^agentId: ([A-Za-z0-9_-]{1,64})\b", re.MULTILINE)


def typed(text: str) -> str:
    """What of a user record's text the person typed ("" when none of it was)."""
    text = _ADDED.sub("", text).strip()
    return "" if text.startswith(_NOT_TYPED) else text


def _text(content: Any) -> str:
    """A tool result's content as text (a string, or a list of text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def agent_id(value: Any) -> str:
    """`value` if it can be an agent id (and so a file name), else ""."""
    return value if isinstance(value, str) and _AGENT_ID.fullmatch(value) else ""


def subagent_files(session_file: Path, agent: str) -> list[Path]:
    """Where Claude Code may have written subagent `agent`'s transcript, newest layout first
    (see the module docstring). The 2.0 one sits beside every session of the project."""
    folder = session_file.with_suffix("") / "subagents"
    name = f"agent-{agent}.jsonl"
    return [folder / name, *sorted(folder.glob(f"workflows/*/{name}")), session_file.parent / name]


@dataclass
class Named:
    """A subagent a tool result named: where its steps go, and whether it had finished."""

    at: int  # the index in the steps its steps follow from (just after the call that ran it)
    line: int  # the line of the result that named it: its steps count as read there
    done: bool  # False while it runs on (a background subagent's launch)


class Reader:
    """Reads one session file's records in order; `steps()` gives what they hold.

    `subagent` is set when the whole file is that subagent's transcript."""

    host = HOST

    def __init__(self, subagent: str = "") -> None:
        self.calls = Calls()
        self.version = ""
        self.session = ""
        self.skipped = 0
        self.subagent = subagent
        self.named: dict[str, Named] = {}  # subagents tool results named, by agent id
        self.inline: set[str] = set()  # subagents whose records this file holds
        self._said: set[tuple[str, str, str]] = set()  # (message id, kind, text) already read

    def feed(self, line: int, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind not in TYPES:
            self.skipped += 1
            return
        if kind not in ("user", "assistant"):
            return
        sub = self.subagent
        if rec.get("isSidechain") and not sub:
            sub = agent_id(rec.get("agentId")) or SIDECHAIN
            self.inline.add(sub)
        self.version = self.version or str(rec.get("version") or "")
        self.session = self.session or str(rec.get("sessionId") or "")
        message = rec.get("message")
        if not isinstance(message, dict):
            self.skipped += 1
            return
        if kind == "user":
            self._user(line, rec, message.get("content"), sub)
        else:
            self._assistant(line, message, sub)

    def _user(self, line: int, rec: dict[str, Any], content: Any, sub: str) -> None:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        blocks = [b for b in content if isinstance(b, dict)]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for b in results:
            call = str(b.get("tool_use_id") or "")
            if b.get("is_error"):
                said = _text(b.get("content")) or _text(rec.get("toolUseResult"))
                self.calls.fail(call, first_line(said))
            self._name(line, rec, b, call, only=len(results) == 1)
        if results or sub or any(rec.get(flag) for flag in _NOT_TYPED_FLAGS):
            return
        parts = [typed(b.get("text") or "") for b in blocks if b.get("type") == "text"]
        text = "\n".join(p for p in parts if p)
        if text:
            self.calls.add(Step("prompt", text, line))

    def _name(self, line: int, rec: dict[str, Any], block: dict[str, Any], call: str, *,
              only: bool) -> None:  # fmt: skip
        """Note the subagent a tool result names, if it names one."""
        result = rec.get("toolUseResult")
        result = result if isinstance(result, dict) else {}
        agent = agent_id(result.get("agentId")) if only else ""
        i = self.calls.at.get(call)
        if not agent and (i is None or self.calls.steps[i].name in _SPAWNS):
            found = _TRAILER.search(_text(block.get("content")))
            agent = found.group(1) if found else ""
        if not agent or agent in self.named:
            return
        at = len(self.calls.steps) if i is None else i + 1
        self.named[agent] = Named(at, line, result.get("status") in (None, "completed"))

    def _assistant(self, line: int, message: dict[str, Any], sub: str) -> None:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        mid = str(message.get("id") or "")
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                name = str(b.get("name") or "")
                step = Step("tool", summary(b.get("input")), line, name=name, subagent=sub)
                self.calls.add(step, str(b.get("id") or ""))
            elif b.get("type") in ("text", "thinking"):
                kind = "agent" if b["type"] == "text" else "reasoning"
                self._say(line, mid, kind, str(b.get(b["type"]) or ""), sub)

    def _say(self, line: int, mid: str, kind: str, text: str, sub: str) -> None:
        text = text.strip()
        if fold(text) in _EMPTY_TEXT:
            return
        key = (mid, kind, text)
        if mid and key in self._said:
            return  # a streamed message whose blocks were written more than once
        self._said.add(key)
        self.calls.add(Step(kind, text, line, subagent=sub))

    def steps(self) -> list[Step]:
        return list(self.calls.steps)

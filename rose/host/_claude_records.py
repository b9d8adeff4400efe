"""Claude Code session files (1.x and 2.x) record by record into `Step`s.

Each line is one record: `user` records hold what the person typed and, as `tool_result`
blocks, what tools returned; `assistant` records hold one or more content blocks (text,
thinking, tool_use; 2.x writes one block a record, 1.x several). Much of what a `user`
record holds was not typed by the person: slash-command echoes, local command output,
interruption notices, system reminders, IDE context, compaction summaries. Those are
not prompts. A subagent's records (`isSidechain`) are its own conversation, not the
session's: the session shows the subagent as the one tool call that started it.
"""

from __future__ import annotations

import re

from rose.host._records import Calls, Step, first_line, fold, summary

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOST = "claude-code"
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


class Reader:
    """Reads one session file's records in order; `steps()` gives what they hold."""

    host = HOST

    def __init__(self) -> None:
        self.calls = Calls()
        self.version = ""
        self.session = ""
        self.skipped = 0
        self._said: set[tuple[str, str, str]] = set()  # (message id, kind, text) already read

    def feed(self, line: int, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind not in TYPES:
            self.skipped += 1
            return
        if kind not in ("user", "assistant") or rec.get("isSidechain"):
            return
        self.version = self.version or str(rec.get("version") or "")
        self.session = self.session or str(rec.get("sessionId") or "")
        message = rec.get("message")
        if not isinstance(message, dict):
            self.skipped += 1
            return
        if kind == "user":
            self._user(line, rec, message.get("content"))
        else:
            self._assistant(line, message)

    def _user(self, line: int, rec: dict[str, Any], content: Any) -> None:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        blocks = [b for b in content if isinstance(b, dict)]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for b in results:
            if b.get("is_error"):
                said = _text(b.get("content")) or _text(rec.get("toolUseResult"))
                self.calls.fail(str(b.get("tool_use_id") or ""), first_line(said))
        if results or any(rec.get(flag) for flag in _NOT_TYPED_FLAGS):
            return
        parts = [typed(b.get("text") or "") for b in blocks if b.get("type") == "text"]
        text = "\n".join(p for p in parts if p)
        if text:
            self.calls.add(Step("prompt", text, line))

    def _assistant(self, line: int, message: dict[str, Any]) -> None:
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
                step = Step("tool", summary(b.get("input")), line, name=name)
                self.calls.add(step, str(b.get("id") or ""))
            elif b.get("type") in ("text", "thinking"):
                kind = "agent" if b["type"] == "text" else "reasoning"
                self._say(line, mid, kind, str(b.get(b["type"]) or ""))

    def _say(self, line: int, mid: str, kind: str, text: str) -> None:
        text = text.strip()
        if fold(text) in _EMPTY_TEXT:
            return
        key = (mid, kind, text)
        if mid and key in self._said:
            return  # a streamed message whose blocks were written more than once
        self._said.add(key)
        self.calls.add(Step(kind, text, line))

    def steps(self) -> list[Step]:
        return list(self.calls.steps)

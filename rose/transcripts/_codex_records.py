"""Codex rollout files (0.77 onwards, and the older unwrapped lines) record by record into
`Step`s.

A rollout line is `{"timestamp", "type", "payload"}`: `session_meta` (the session id and
the CLI version), `turn_context`, `response_item` (what the model saw and said: messages,
reasoning, function and custom tool calls and their outputs) and `event_msg` (what the
interface showed: the person's `user_message`, `agent_message`, `exec_command_end` with
its exit code ...; 0.171 `codex exec` writes `item_completed` events instead, and adds
`world_state` and `token_usage_record` lines, which hold no step). Both tell much the same
story, and which of them a version writes
varies, so each kind of step is taken from one of them: prompts from `user_message`
events when the file has any (the `user` messages among the response items also hold the
injected AGENTS.md and environment context), messages and reasoning from the response
items when it has any, else from the events. A tool call's failure comes from its output
(an exit code, a rejection) or from the events that ended it.
"""

from __future__ import annotations

import json
import re

from rose.transcripts._records import Calls, Step, first_line, fold, summary

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOST = "codex"
TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
# Kinds 0.171 writes that hold nothing a step needs: the thread's environment and the
# token accounting of each model response. Known, so not counted as skipped.
IGNORED = frozenset({"world_state", "token_usage_record"})
# Response items as the earliest rollouts wrote them, one a line without the wrapper.
ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
_TOOLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")

# A user item that is one whole tag block, or the AGENTS.md preamble, is injected context.
_WRAPPED = re.compile(r"^<([A-Za-z_][\w -]*)>.*</\1>$", re.DOTALL)
_REQUEST = "## My request for Codex:"  # the Desktop app's framing of what was typed
_HEADER_EXIT = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)\s*$", re.MULTILINE)
_REFUSED = (
    "exec command rejected by user",
    "patch rejected by user",
    "This action was rejected",
    "execution error",
    "failed to parse function arguments",
)
_PATCHED = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def _injected(text: str) -> bool:
    text = text.strip()
    return text.startswith("# AGENTS.md instructions") or bool(_WRAPPED.match(text))


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("text")
    )


def call_args(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _input(args: Any) -> str:
    """A call's input as one line; a patch as the files it touches."""
    text = args if isinstance(args, str) else args.get("input") if isinstance(args, dict) else ""
    if isinstance(text, str) and "*** Begin Patch" in text:
        return "patch " + ", ".join(m.strip() for m in _PATCHED.findall(text))
    return summary(args)


def failure(output: Any) -> str | None:
    """Why a tool's output says its call failed (its error's first line), or None."""
    if isinstance(output, dict):
        if output.get("success") is False:
            return first_line(_texts(output.get("content"))) or "failed"
        output = _texts(output.get("content"))
    text = _texts(output)
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("metadata"), dict):
            code = data["metadata"].get("exit_code")
            said = first_line(str(data.get("output") or ""))
            return None if code in (0, None) else f"exit code {code}: {said}".rstrip(": ")
    head = "\n".join(text.splitlines()[:8])
    m = _HEADER_EXIT.search(head)
    if m:
        if m.group(1) == "0":
            return None
        said = first_line(text.split("Output:", 1)[1]) if "Output:" in text else ""
        return f"exit code {m.group(1)}: {said}".rstrip(": ")
    if text.strip().startswith(_REFUSED):
        return first_line(text)
    return None


class Reader:
    """Reads one rollout's records in order; `steps()` gives what they hold."""

    host = HOST

    def __init__(self) -> None:
        self.calls = Calls()
        self.version = ""
        self.session = ""
        self.skipped = 0
        self._source: list[str] = []  # beside each step: "item", "event" or "" (tools)

    def feed(self, line: int, rec: dict[str, Any]) -> None:
        kind, payload = rec.get("type"), rec.get("payload")
        if kind not in TYPES:
            if kind in IGNORED:
                return
            if kind in ITEMS and payload is None:
                self._item(line, rec)
            elif kind is None and "instructions" in rec and "id" in rec:
                self.session = self.session or str(rec["id"])  # the earliest meta line
            else:
                self.skipped += 1
            return
        if not isinstance(payload, dict):
            return
        if kind == "session_meta":
            self.version = self.version or str(payload.get("cli_version") or "")
            self.session = self.session or str(payload.get("id") or payload.get("session_id") or "")
        elif kind == "response_item":
            self._item(line, payload)
        elif kind == "event_msg":
            self._event(line, payload)

    def _add(self, step: Step, source: str, call_id: str = "") -> None:
        before = len(self.calls.steps)
        self.calls.add(step, call_id)
        if len(self.calls.steps) > before:
            self._source.append(source)

    def _item(self, line: int, p: dict[str, Any]) -> None:
        kind = p.get("type")
        if kind == "message":
            text = _texts(p.get("content")).strip()
            if p.get("role") == "user" and text and not _injected(text):
                self._add(Step("prompt", text, line), "item")
            elif p.get("role") == "assistant" and text:
                self._add(Step("agent", text, line), "item")
        elif kind == "reasoning":
            text = _texts(p.get("content")) or _texts(p.get("summary"))
            if text.strip():
                self._add(Step("reasoning", text.strip(), line), "item")
        elif kind in _TOOLS:
            self._tool(line, p)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            why = failure(p.get("output"))
            if why is not None:
                self.calls.fail(str(p.get("call_id") or ""), why)

    def _tool(self, line: int, p: dict[str, Any]) -> None:
        kind = p["type"]
        action = p.get("action")
        action = action if isinstance(action, dict) else {}
        if kind == "local_shell_call":
            name, text = "shell", summary({"command": action.get("command")})
        elif kind == "web_search_call":
            name, text = "web_search", summary(action)
        else:
            name = str(p.get("name") or kind)
            text = _input(call_args(p.get("arguments", p.get("input"))))
        call_id = str(p.get("call_id") or p.get("id") or "")
        self._add(Step("tool", text, line, name=name), "", call_id)

    def _event(self, line: int, p: dict[str, Any]) -> None:
        kind = p.get("type")
        if kind == "user_message" and p.get("kind") in (None, "plain"):
            text = str(p.get("message") or "")
            if _REQUEST in text:
                text = text.split(_REQUEST, 1)[1]
            if text.strip():
                self._add(Step("prompt", text.strip(), line), "event")
        elif kind == "agent_message" and str(p.get("message") or "").strip():
            self._add(Step("agent", str(p["message"]).strip(), line), "event")
        elif kind in ("agent_reasoning", "agent_reasoning_raw_content"):
            if str(p.get("text") or "").strip():
                self._add(Step("reasoning", str(p["text"]).strip(), line), "event")
        elif kind in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end"):
            why = _ended_badly(p)
            if why is not None:
                self.calls.fail(str(p.get("call_id") or ""), why)

    def steps(self) -> list[Step]:
        steps = self.calls.steps
        have = {(s.kind, src) for s, src in zip(steps, self._source, strict=True)}
        keep = {
            "prompt": "event" if ("prompt", "event") in have else "item",
            "agent": "item" if ("agent", "item") in have else "event",
            "reasoning": "item" if ("reasoning", "item") in have else "event",
            "tool": "",
        }
        return [s for s, src in zip(steps, self._source, strict=True) if keep[s.kind] == src]


def _ended_badly(p: dict[str, Any]) -> str | None:
    """Why an event that ended a call says it failed, or None."""
    kind = p.get("type")
    said = str(p.get("stderr") or p.get("aggregated_output") or p.get("stdout") or "")
    if kind == "exec_command_end":
        code, status = p.get("exit_code"), str(p.get("status") or "")
        if code in (0, None) and status not in ("failed", "declined"):
            return None
        return f"exit code {code}: {first_line(said)}".rstrip(": ")
    if kind == "patch_apply_end":
        return None if p.get("success", True) else first_line(said) or "patch failed"
    result = p.get("result")
    if isinstance(result, dict) and "Err" in result:
        return first_line(fold(str(result["Err"]))) or "failed"
    ok = result.get("Ok") if isinstance(result, dict) else None
    if isinstance(ok, dict) and (ok.get("isError") or ok.get("is_error")):
        return first_line(_texts(ok.get("content"))) or "failed"
    return None

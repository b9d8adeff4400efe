"""What both hosts' record readers share: the neutral `Step`, and turning a tool's input or
output into one line.

Standard library only: the Stop hook reads transcripts every turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds to import; the hook cannot spare them
    from typing import Any

KINDS = ("prompt", "agent", "reasoning", "tool")
SUMMARY_CHARS = 240  # a tool's input summary, and an error's first line, are cut here


@dataclass(frozen=True)
class Step:
    """One thing in a transcript: a person's prompt, an agent's message or reasoning, or a
    tool call (its name, a one-line summary of its input, and whether it failed)."""

    kind: str
    text: str
    line: int = 0  # 1-based line of the file the step was read from
    name: str = ""  # a tool call's tool
    failed: bool = False
    error: str = ""  # the first line of a failed call's error output
    subagent: str = ""  # the subagent whose step it is (its agent id); "" for the session's own


def fold(text: str) -> str:
    """`text` on one line: every run of whitespace a single space."""
    return " ".join(text.split())


def cut(text: str, limit: int = SUMMARY_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_TAG = re.compile(r"</?[A-Za-z_][\w-]*>")
_EXIT = re.compile(r"^(?:Error: )?Exit code:? (-?\d+)$")


def first_line(text: str) -> str:
    """The first line of an error output that says something, without wrapping tags; a bare
    `Exit code N` line is joined to the line after it, which says why."""
    lines = [fold(_TAG.sub(" ", ln)) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        return ""
    if _EXIT.match(lines[0]) and len(lines) > 1:
        return cut(f"{lines[0]}: {lines[1]}")
    return cut(lines[0])


# The input field that says what a call did, tried in order; else the first short string.
_SAYS = (
    "command",
    "cmd",
    "file_path",
    "notebook_path",
    "pattern",
    "path",
    "query",
    "url",
    "description",
    "prompt",
    "input",
)


def summary(args: Any) -> str:
    """A tool call's input as one line: its command, path, pattern or query when it has one."""
    if isinstance(args, str):
        return cut(fold(args))
    if not isinstance(args, dict):
        return cut(fold(json.dumps(args, ensure_ascii=False))) if args else ""
    for key in _SAYS:
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = shell_line(value)
        if isinstance(value, str) and value.strip():
            return cut(fold(value))
    if isinstance(args.get("todos"), list):
        return f"{len(args['todos'])} todos"
    text = next((v for v in args.values() if isinstance(v, str) and v.strip()), "")
    return cut(fold(text)) if text else cut(fold(json.dumps(args, ensure_ascii=False)))


def shell_line(argv: list[str]) -> str:
    """A command vector as the shell line it runs (`bash -lc "x"` is just `x`)."""
    if len(argv) == 3 and argv[1] in ("-c", "-lc") and argv[0].rsplit("/", 1)[-1] in _SHELLS:
        return argv[2]
    return " ".join(argv)


_SHELLS = ("bash", "sh", "zsh", "dash")


class Calls:
    """Tool calls awaiting their results, by call id, so a result can mark its call failed.

    A failed result whose call was not read (it sits before the offset an incremental read
    started from) is still counted, once per call id, in `orphans`.
    """

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.at: dict[str, int] = {}
        self._orphans: set[str] = set()

    def add(self, step: Step, call_id: str = "") -> None:
        if call_id and step.kind == "tool":
            if call_id in self.at:
                return  # the same call written twice (a streamed record repeated)
            self.at[call_id] = len(self.steps)
        self.steps.append(step)

    def fail(self, call_id: str, error: str) -> None:
        i = self.at.get(call_id)
        if i is None:
            self._orphans.add(call_id or f"\x00{len(self._orphans)}")
            return
        step = self.steps[i]
        if not step.failed:
            self.steps[i] = replace(step, failed=True, error=error)

    @property
    def orphans(self) -> int:
        return len(self._orphans)

"""A copy tripwire for outside content: did a lesson repeat, word for word, what a session
fetched from outside the repository (a web page, another server's MCP tool, a file beyond
the project)?

Such content may carry instructions written by someone else; a lesson must not pass them
on. This answers "copied?", never "means the same?": it can only flag, never clear.

`outside_texts` reads the outside content a transcript holds, as tool results paired with
their calls by call id. Claude Code: `WebFetch`, `WebSearch`, MCP tools `mcp__<server>__*`
of servers other than rose, `Read`/`NotebookRead` of a file beyond `cwd`, and `Bash` whose
command names a URL. Codex: MCP calls (a `function_call` named `mcp__<server>__<tool>`, or
`<server>__<tool>` before the `mcp` prefix, or with a `namespace` of `mcp__<server>`;
`mcp_tool_call_end` events; `McpToolCall` items), shell calls (`shell`, `exec_command`,
`local_shell_call`, `container.exec`, `CommandExecution` items) whose command names a URL,
and `web_search_call` (a rollout holds its query and sources but no result, so none is
read unless one follows under its id).

Standard library only at module level.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from rose.hosts.mcp_wiring import NAME as ROSE_SERVER
from rose.transcripts import bounded as _bounded
from rose.transcripts._codex_records import call_args
from rose.transcripts._records import cut, shell_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Characters of outside text kept from one transcript. The copy check keeps a hash for each
#: word (`Outside`): 8 MiB is about 1.5 M words, 120 MiB built and 330 MiB at the peak of
#: building, measured; and many times the fetched pages seen (a WebFetch answer is tens of
#: KB). Past it memory, not coverage, is what would grow.
MAX_CHARS = 8 << 20
SHOWN_CHARS = 160  # a flagged copy as a reviewer sees it

_URL = re.compile(r"\b(?:https?|ftp)://", re.IGNORECASE)
_FETCHER = re.compile(r"(?:^|[\s;&|(`])(?:curl|wget|http|https|gh|aria2c|lynx|w3m)(?=\s|$)")
_CLAUDE_WEB = frozenset({"WebFetch", "WebSearch"})
_CLAUDE_READ = frozenset({"Read", "NotebookRead"})
_CODEX_SHELLS = frozenset({"shell", "exec_command", "container.exec", "local_shell_call"})
_CODEX_OUTPUTS = frozenset(
    {"function_call_output", "custom_tool_call_output", "mcp_tool_call_output"}
)
# The line numbers Claude Code's Read puts before each line of a file (`    12→`).
_NUMBERED = re.compile(r"^ *\d+→", re.MULTILINE)
# Stripped at a word's edges only: markdown and quoting must not hide a copy.
_EDGE = "\"'`*_~.,;:!?()[]{}<>«»“”‘’…-–—|#"


def _text(value: Any) -> str:
    """A tool result as text: a string, a list of text blocks, or an MCP result's content."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in map(_text, value) if t)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return str(value["text"])
        for key in ("content", "Ok", "Err", "output"):
            if key in value:
                return _text(value[key])
    return ""


def _names_url(command: Any) -> bool:
    """Whether a command reads from the network: it names a URL, or runs a fetcher (curl,
    wget, httpie, gh: an issue or pull request body is someone else's text)."""
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        command = shell_line(command)
    return isinstance(command, str) and bool(_URL.search(command) or _FETCHER.search(command))


def _mcp_server(name: str) -> str:
    """The server of an MCP tool name (`mcp__server__tool`, `server__tool`), else ""."""
    parts = name.split("__")
    if parts[0] == "mcp":
        return parts[1] if len(parts) >= 3 else ""
    return parts[0] if len(parts) >= 2 else ""


class _Collector:
    """Outside calls awaiting their results, and the results collected so far."""

    def __init__(self, cwd: str) -> None:
        self.cwd = Path(cwd).resolve() if cwd else None
        self.pending: set[str] = set()
        self.texts: list[str] = []
        self.seen: set[str] = set()
        self.size = 0

    def full(self) -> bool:
        return self.size >= MAX_CHARS

    def call(self, call_id: Any, outside: bool) -> None:
        if outside and call_id:
            self.pending.add(str(call_id))

    def result(self, call_id: Any, content: Any, *, outside: bool = False) -> None:
        if not (outside or str(call_id or "") in self.pending):
            return
        text = _text(content)
        if not text.strip() or text in self.seen:
            return  # a result written twice (a model's and the event's copy) counts once
        text = text[: MAX_CHARS - self.size]
        self.seen.add(text)
        self.texts.append(text)
        self.size += len(text)

    def beyond(self, path: Any) -> bool:
        """Whether `path` lies outside the project (never, when no project was given)."""
        if self.cwd is None or not isinstance(path, str) or not path:
            return False
        try:
            return not (self.cwd / path).resolve().is_relative_to(self.cwd)
        except (OSError, ValueError):
            return True  # a path that cannot be resolved is not known to be inside

    def feed(self, rec: dict[str, Any]) -> None:
        payload = rec.get("payload")
        if isinstance(payload, dict):
            if rec.get("type") == "response_item":
                self.codex_item(payload)
            elif rec.get("type") == "event_msg":
                self.codex_event(payload)
        elif rec.get("type") in ("user", "assistant") and isinstance(rec.get("message"), dict):
            self.claude(rec["message"].get("content"))
        elif "payload" not in rec:
            self.codex_item(rec)  # the earliest rollouts: items without the wrapper

    def claude(self, content: Any) -> None:
        for b in content if isinstance(content, list) else ():
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                self.call(b.get("id"), self.claude_outside(str(b.get("name") or ""), b))
            elif b.get("type") == "tool_result":
                self.result(b.get("tool_use_id"), b.get("content"))

    def claude_outside(self, name: str, block: dict[str, Any]) -> bool:
        args = block.get("input")
        args = args if isinstance(args, dict) else {}
        if name in _CLAUDE_WEB:
            return True
        if name.startswith("mcp__"):
            return _mcp_server(name) != ROSE_SERVER
        if name in _CLAUDE_READ:
            return self.beyond(args.get("file_path") or args.get("notebook_path"))
        if name in ("Task", "Agent"):  # a subagent sent to the web: its report relays it
            return _names_url(args.get("prompt"))
        return name == "Bash" and _names_url(args.get("command"))

    def codex_item(self, p: dict[str, Any]) -> None:
        kind = p.get("type")
        call_id = p.get("call_id") or p.get("id")
        if kind in ("function_call", "custom_tool_call"):
            self.call(call_id, _codex_outside(p))
        elif kind == "local_shell_call":
            action = p.get("action")
            self.call(call_id, isinstance(action, dict) and _names_url(action.get("command")))
        elif kind == "web_search_call":
            self.call(call_id, True)
        elif kind in _CODEX_OUTPUTS:
            self.result(p.get("call_id"), p.get("output"))

    def codex_event(self, p: dict[str, Any]) -> None:
        kind = p.get("type")
        if kind == "mcp_tool_call_end":
            invocation = p.get("invocation")
            server = invocation.get("server") if isinstance(invocation, dict) else p.get("server")
            outside = isinstance(server, str) and server != ROSE_SERVER
            self.result(p.get("call_id"), p.get("result"), outside=outside)
        elif kind == "item_completed" and isinstance(p.get("item"), dict):
            item = p["item"]
            kind = str(item.get("type") or "").replace("_", "").lower()
            if kind == "mcptoolcall" and item.get("server") != ROSE_SERVER:
                self.result(item.get("id"), item.get("result"), outside=True)
            elif kind == "commandexecution" and _names_url(item.get("command")):
                self.result(item.get("id"), item.get("aggregated_output"), outside=True)


def _codex_outside(p: dict[str, Any]) -> bool:
    """Whether a Codex function or custom tool call fetches outside content."""
    name = str(p.get("name") or "")
    namespace = str(p.get("namespace") or "")
    if namespace:
        name = f"{namespace.rstrip('_')}__{name}"
    server = _mcp_server(name)
    if server:
        return server != ROSE_SERVER
    if name not in _CODEX_SHELLS:
        return False
    args = call_args(p.get("arguments", p.get("input")))
    if isinstance(args, dict):
        return _names_url(args.get("command") or args.get("cmd"))
    return _names_url(args)


def outside_texts(path: str, *, start: int = 0, end: int | None = None, cwd: str = "") -> list[str]:
    """The outside content the transcript at `path` holds in bytes `start`..`end`: the full
    text of each result of a call that fetched it (see the module docstring), at most
    `MAX_CHARS` in all. Only whole lines within the range are read, each through the
    job bounds; lines that are not JSON are skipped. A result whose call lies before
    `start` is not collected.

    Raises TranscriptError when the file is not a regular file or cannot be read."""
    collector = _Collector(cwd)
    lines = _bounded.Windows(
        Path(path), start, _bounded.JOB_BYTES, _bounded.JOB_SECONDS, partial=False
    )
    for _, pos, raw in lines:
        if end is not None and pos > end:
            break
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict):
            collector.feed(rec)
        if collector.full():
            break
    return collector.texts


def words(text: str) -> list[str]:
    """`text` as the words a copy is compared on: HTML entities decoded, compatibility forms
    folded (NFKC: fullwidth letters, ligatures, no-break spaces), invisible format
    characters dropped (zero-width spaces and joiners, soft hyphens: a page can hide them
    inside words, and a model copying the text drops them), casefolded, edge punctuation
    stripped. Look-alike letters of other scripts stay apart: folding them would need a
    confusables table, and they change what the model reads too."""
    plain = unicodedata.normalize("NFKC", html.unescape(text))
    plain = "".join(c for c in plain if unicodedata.category(c) != "Cf")
    out = (w.strip(_EDGE).casefold() for w in plain.split())
    return [w for w in out if w]


class Outside:
    """Outside content made ready to check many texts against: its runs of `span_words`
    words, and its whole lines of `line_words` words or more (a longer line's runs are
    among the spans already).

    Each run (a tuple of words) is kept as its hash: an 8 MiB page holds 1.5 M runs, 320
    MiB as tuples and 120 MiB as hashes. A collision of 64-bit hashes (about 1 in 10^13 a
    run checked) could only flag, and a flag goes to a reviewer. Hashes of `str` differ
    between processes: an `Outside` is built and used in one, never stored."""

    def __init__(
        self,
        spans: set[int],
        lines: set[int],
        span_words: int,
        line_words: int,
    ) -> None:
        self.spans = spans
        self.lines = lines
        self.span_words = span_words
        self.line_words = line_words

    @classmethod
    def from_texts(
        cls, texts: Iterable[str], *, span_words: int = 8, line_words: int = 4
    ) -> Outside:
        span_words, line_words = max(1, span_words), max(1, line_words)
        spans: set[int] = set()
        lines: set[int] = set()
        for text in texts:
            text = _NUMBERED.sub("", text)
            ws = words(text)
            spans.update(map(hash, zip(*(ws[i:] for i in range(span_words)), strict=False)))
            for line in text.splitlines():
                lw = tuple(words(line))
                if line_words <= len(lw) < span_words:
                    lines.add(hash(lw))
        return cls(spans, lines, span_words, line_words)

    def copied(self, text: str) -> str:
        """The first stretch of outside content `text` repeats verbatim, or ""."""
        if not self.spans and not self.lines:
            return ""
        ws = words(text)
        for i in range(len(ws)):
            run = tuple(ws[i : i + self.span_words])
            if len(run) == self.span_words and hash(run) in self.spans:
                return cut(" ".join(run), SHOWN_CHARS)
            for n in range(self.span_words - 1, self.line_words - 1, -1):
                run = tuple(ws[i : i + n])
                if len(run) == n and hash(run) in self.lines:
                    return cut(" ".join(run), SHOWN_CHARS)
        return ""


def copied(text: str, outside: Sequence[str], *, span_words: int = 8, line_words: int = 4) -> str:
    """The first stretch of `outside` that `text` repeats verbatim ("" when none): a whole
    outside line of `line_words` words or more, or any run of `span_words` words. Words are
    compared casefolded with edge punctuation stripped, so reflowing, backticks and case
    hide no copy; a paraphrase is no copy. To check many texts, build `Outside` once."""
    return Outside.from_texts(outside, span_words=span_words, line_words=line_words).copied(text)

"""A host agent's transcript, Claude Code's session file or a Codex rollout, in one neutral
form: the steps of the session (the person's prompts, the agent's messages and reasoning,
its tool calls and whether each failed), for the digest a reflector reads.

Lines that are not JSON, records of kinds ROSE does not know and a half-written last line
are skipped and counted, never fatal: both hosts add record kinds between releases, and a
session is read while it is being written. `activity` is the cheap part for the Stop
hook, which runs every turn: it counts from where the last call stopped, and never reads
a line still being written.

Both read only regular files, at most so many bytes at a time and for so long
(`rose.transcripts.bounded`): `activity` stops at its byte cap and the next call reads on, `read`
reads on in further windows to the end; what a bound left unread is in the result's `cut`
and `unread`, for the caller to report.

A Claude Code session's subagents are read with it (`rose.transcripts._claude_records` says where
the host writes them): `read` reads every subagent a tool result names, within the same
bounds; `activity` reads a subagent's file once, when the result that ends it is in the
growth it counts, within what its bounds left. A subagent file that is missing or cannot
be read is passed over and counted in `missed`.

Standard library only, at import and in `activity`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from rose.errors import TranscriptError
from rose.transcripts import _claude_records, _codex_records
from rose.transcripts import bounded as _bounded
from rose.transcripts._records import Step

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    Reader = _claude_records.Reader | _codex_records.Reader

__all__ = ["Activity", "Step", "Transcript", "activity", "read", "units"]

HOSTS = (_claude_records.HOST, _codex_records.HOST)


@dataclass(frozen=True)
class Transcript:
    host: str  # "claude-code" or "codex"
    version: str  # the CLI version the file records ("" if none)
    session: str  # its session id ("" if none)
    steps: tuple[Step, ...]
    skipped: int = 0  # lines that were not JSON records, and records of unknown kinds
    cut: str = ""  # "deadline" (stopped before the end) or "cap" (a line over the cap passed)
    unread: int = 0  # the bytes it left unread
    offset: int = 0  # the byte offset just after the last line read
    subagents: int = 0  # subagent transcripts read from files of their own
    missed: int = 0  # subagents named whose file was missing, unreadable or cut short


@dataclass
class Activity:
    """What the lines after a byte offset hold, and where the next count starts."""

    user_prompts: int = 0
    tool_calls: int = 0
    failed_tool_calls: int = 0
    offset: int = 0  # the byte offset just after the last complete line read
    cut: str = ""  # "cap" or "deadline" when the count stopped before the end of the file
    unread: int = 0  # the bytes after `offset`, counted by the next call
    missed: int = 0  # finished subagents whose file was missing, unreadable or cut short


def host_of(rec: dict[str, Any]) -> str:
    """Which host wrote a record ("" when it could be either, or neither)."""
    kind = rec.get("type")
    if "payload" in rec and kind in _codex_records.TYPES:
        return _codex_records.HOST
    if kind in _codex_records.ITEMS and "payload" not in rec and "message" not in rec:
        return _codex_records.HOST
    if kind in _claude_records.TYPES:
        return _claude_records.HOST
    return ""


def _reader(host: str) -> Reader:
    return _claude_records.Reader() if host == _claude_records.HOST else _codex_records.Reader()


def _record(raw: bytes) -> dict[str, Any] | None:
    import json

    try:
        rec = json.loads(raw)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both are
        return None
    return rec if isinstance(rec, dict) else None


def read(path: str | Path, *, limit: int | None = None, seconds: float | None = None) -> Transcript:
    """The transcript at `path`, read to its end `limit` bytes at a time, for `seconds` at
    most (by default `_bounded.JOB_BYTES` and `JOB_SECONDS`; `cut` says what a deadline or a
    line longer than `limit` left unread). An empty file is a session with nothing in it
    yet (a Codex one if it is named `rollout-*`).
    Raises TranscriptError when the file is not a regular file, cannot be read or is not a
    Claude Code or Codex transcript."""
    path = Path(path)
    limit = _bounded.JOB_BYTES if limit is None else limit
    seconds = _bounded.JOB_SECONDS if seconds is None else seconds
    until = time.monotonic() + seconds
    lines = _bounded.Windows(path, 0, limit, seconds, partial=True)
    reader: Reader | None = None
    waiting: list[tuple[int, dict[str, Any]]] = []  # records either host could have written
    bad = 0
    for n, _, raw in lines:
        if not raw.strip():
            continue
        rec = _record(raw)
        if rec is None:
            bad += 1
            continue
        if reader is None:
            host = host_of(rec)
            if not host:
                waiting.append((n, rec))
                continue
            reader = _reader(host)
            for m, early in waiting:
                reader.feed(m, early)
        reader.feed(n, rec)
    if reader is None:
        if waiting or bad:
            why = "not JSON lines" if not waiting else "not a Claude Code or Codex transcript"
            raise TranscriptError(path, why)
        host = _codex_records.HOST if path.name.startswith("rollout-") else _claude_records.HOST
        return Transcript(host, "", "", (), 0, lines.cut, lines.unread, lines.offset)
    subs = Subagents(path, limit, until, whole=True)
    steps = tuple(
        subs.spliced(reader) if isinstance(reader, _claude_records.Reader) else reader.steps()
    )
    skipped = reader.skipped + bad
    return Transcript(
        reader.host,
        reader.version,
        reader.session,
        steps,
        skipped,
        lines.cut,
        lines.unread,
        lines.offset,
        subs.read,
        subs.missed,
    )


def units(t: Transcript) -> list[tuple[Step, ...]]:
    """The transcript as units of work, each opening with a prompt (what comes before the
    first prompt belongs to the first unit)."""
    out: list[list[Step]] = []
    for step in t.steps:
        if step.kind == "prompt" and (not out or any(s.kind == "prompt" for s in out[-1])):
            out.append([])
        if not out:
            out.append([])
        out[-1].append(step)
    return [tuple(u) for u in out]


def activity(
    path: str | Path,
    offset: int = 0,
    *,
    limit: int | None = None,
    seconds: float | None = None,
) -> Activity:
    """Prompts, tool calls and failed tool calls in the complete lines after byte `offset`,
    at most `limit` bytes of them, read for `seconds` at most (by default
    `_bounded.HOOK_BYTES` and `HOOK_SECONDS`).

    Pass the returned `offset` to the next call to count only what was written since, or
    what a bound left (`cut`, `unread`). A file now shorter than `offset` was replaced, and
    is counted from its start.
    """
    limit = _bounded.HOOK_BYTES if limit is None else limit
    seconds = _bounded.HOOK_SECONDS if seconds is None else seconds
    until = time.monotonic() + seconds
    lines = _bounded.Lines(Path(path), offset, limit, seconds, partial=False)
    readers: dict[str, Reader] = {}
    for _, raw in lines:
        rec = _record(raw) if raw.strip() else None
        host = host_of(rec) if rec is not None else ""
        if host:
            readers.setdefault(host, _reader(host)).feed(0, rec)  # type: ignore[arg-type]
    act = Activity(offset=lines.offset, cut=lines.cut, unread=lines.unread)
    left = limit - (lines.offset - lines.start)
    subs = Subagents(Path(path), left, until, whole=False)
    for reader in readers.values():
        steps = (
            subs.spliced(reader) if isinstance(reader, _claude_records.Reader) else reader.steps()
        )
        for step in steps:
            act.user_prompts += step.kind == "prompt"
            act.tool_calls += step.kind == "tool"
            act.failed_tool_calls += step.failed
        act.failed_tool_calls += reader.calls.orphans
    act.missed = subs.missed
    return act


class Subagents:
    """The subagent transcripts a Claude Code session file names, read from files of their
    own and spliced into its steps just after the call that ran each.

    `whole` (a job's `read`): every subagent named, each read to its end in windows of
    `limit` bytes. Otherwise (the Stop hook's `activity`): only finished ones, and at most
    `limit` bytes in all, so a Stop never reads more than its cap. Nothing is read after
    the deadline `until` (a monotonic time); a subagent left unread is counted in `missed`.
    """

    def __init__(self, session_file: Path, limit: int, until: float, *, whole: bool):
        self.session_file = session_file
        self.limit = limit
        self.until = until
        self.whole = whole
        self.read = 0
        self.missed = 0
        self._seen: set[str] = set()

    def spliced(self, reader: _claude_records.Reader) -> list[Step]:
        """`reader`'s steps with those of the subagents it names (and theirs) in place."""
        after: dict[int, list[Step]] = {}
        for agent, named in reader.named.items():
            if agent in reader.inline or agent in self._seen or not (self.whole or named.done):
                continue  # its records were in the file; already read; still running
            self._seen.add(agent)
            sub = self._file(agent, reader.session)
            if sub is None:
                self.missed += 1
                continue
            self.read += 1
            steps = [replace(s, subagent=s.subagent or agent, line=named.line)
                     for s in self.spliced(sub)]  # fmt: skip
            after.setdefault(named.at, []).extend(steps)
        own = reader.steps()
        out: list[Step] = []
        for i in range(len(own) + 1):
            out.extend(after.get(i, ()))
            out.extend(own[i : i + 1])
        return out

    def _file(self, agent: str, session: str) -> _claude_records.Reader | None:
        """The first of the subagent's possible files that can be read whole, as read."""
        for path in _claude_records.subagent_files(self.session_file, agent):
            seconds = self.until - time.monotonic()
            if self.limit <= 0 or seconds <= 0:
                return None
            reader = _claude_records.Reader(subagent=agent)
            try:
                lines = self._lines(path, seconds)
                for n, raw in lines:
                    rec = _record(raw) if raw.strip() else None
                    if rec is not None:
                        reader.feed(n, rec)
            except TranscriptError:
                continue  # not there (another layout's place), or not a readable file
            if not self.whole:
                self.limit -= lines.offset
            beside = path.parent == self.session_file.parent  # 2.0: any session's agent
            short = lines.cut == "deadline" or (lines.cut and not self.whole)
            if short or (beside and session and reader.session != session):
                continue
            return reader
        return None

    def _lines(self, path: Path, seconds: float) -> _Numbered:
        if self.whole:
            return _Numbered(_bounded.Windows(path, 0, self.limit, seconds, partial=False))
        return _Numbered(_bounded.Lines(path, 0, self.limit, seconds, partial=False))


class _Numbered:
    """A bounded read's lines numbered from 1, whichever kind of read it is."""

    def __init__(self, lines: _bounded.Lines | _bounded.Windows):
        self.lines = lines

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        if isinstance(self.lines, _bounded.Windows):
            for n, _, raw in self.lines:
                yield n, raw
        else:
            for n, (_, raw) in enumerate(self.lines, 1):
                yield n, raw

    @property
    def cut(self) -> str:
        return self.lines.cut

    @property
    def offset(self) -> int:
        return self.lines.offset

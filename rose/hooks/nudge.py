"""The Stop hook's part in reflection: count the turn, and when a reflection is due, start it.

The hook schedules attention; it judges nothing. It reads what the transcript gained since
the last Stop (`rose.transcripts.transcript.activity`, from the byte offset it stopped at), adds
it to the counts since the last reflection, and asks `rose.loop.reflection.occasion` whether one is
due. If so, by `reflect.mode`:

- ``background``: a detached `reflect` job reads a digest of the transcript since the last
  reflection and makes one small model call;
- ``fork`` (Claude Code): a detached `reflect-fork` job resumes the session as a fork
  (`claude --resume <id> --fork-session -p ...`), which sees the whole conversation and
  reports with `rose used` and `rose add`. Codex has no fork, so there it runs as
  ``background`` (`rose doctor` says so);
- ``block``: the hook answers ``{"decision": "block", "reason": ...}``, so the agent spends
  one more turn reflecting in its own context and reports the same way. A Stop that comes
  from such a continuation (``stop_hook_active``) never blocks again and counts nothing;
- ``off``: nothing until the session ends.

Every reflection started is a `nudge` entry in the session's log, which is how a later Stop
knows how many in a row produced nothing (`rose.loop.reflection.occasion.empty_streak`).
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from rose.files import sessions
from rose.hosts.payload import Root, host_of, session_id
from rose.loop.reflection import occasion

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rose.config import Config
    from rose.transcripts.transcript import Activity

#: The `reflect` settings a kept copy must hold (every field of `rose.config.Reflect`;
#: tests/test_nudge_settings_kept.py checks): a copy lacking one is loaded afresh.
KEPT = (
    "mode",
    "nudge_after_tool_calls",
    "nudge_after_turns",
    "min_surprises",
    "nudge_cooldown_s",
    "nudge_backoff_after",
    "digest_tokens",
)
#: The counts a Stop keeps between turns (`rec["reflect"]`), each a whole number.
COUNTS = ("offset", "from", "tools", "failed", "turns")

#: The host each mode runs as when the host cannot do it (Codex has no session fork).
FALLBACK = {("fork", "codex"): "background"}


def settings(roots: Sequence[tuple[str, str]]) -> Config:
    """The store's settings (the global store's under the project's, then the environment)."""
    from rose import config

    return config.load([Path(r) / "config.yaml" for r, _ in reversed(roots)])


def _stamp(roots: Sequence[tuple[str, str]]) -> str:
    """What the `reflect` settings depend on: the config files as they are on disk, and the
    environment's ROSE_* variables (hashed: the session record is no place for their values)."""
    parts = []
    for root, _ in roots:
        try:
            st = os.stat(os.path.join(root, "config.yaml"))
            parts.append(f"{root}:{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            parts.append(f"{root}:-")
    parts += sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("ROSE_"))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def kept_settings(roots: Sequence[tuple[str, str]], rec: dict) -> Any:
    """The settings a Stop reads (`.reflect`), from the session record while nothing they
    depend on changed: every Stop needs them, and loading them costs ~100 ms of imports."""
    stamp = _stamp(roots)
    kept = rec.get("reflect_settings")
    values = kept.get("values") if isinstance(kept, dict) and kept.get("stamp") == stamp else None
    # Kept by an older ROSE with fewer settings, or hand-edited: load them afresh.
    if isinstance(values, dict) and set(values) >= set(KEPT):
        return SimpleNamespace(reflect=SimpleNamespace(**values))
    cfg = settings(roots)
    rec["reflect_settings"] = {"stamp": stamp, "values": cfg.reflect.model_dump()}
    return cfg


def _counts(kept: object) -> dict:
    """The counts kept since the last reflection; anything unreadable starts them afresh
    (a hand-edited or torn record must not fail every later Stop)."""
    if not isinstance(kept, dict):
        return {}
    out: dict = {}
    for key in COUNTS:
        value = kept.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return {}
        out[key] = value
    last = kept.get("last")
    if isinstance(last, (int, float)) and not isinstance(last, bool):
        out["last"] = float(last)
    return out


def effective_mode(mode: str, host: str) -> str:
    return FALLBACK.get((mode, host), mode)


def on_stop(payload: dict, roots: list[Root], rec: dict) -> dict | None:
    """Count this turn into `rec` (the session's freshness record, saved by the caller) and
    start a reflection if one is due; returns the hook's answer for ``block``, else None."""
    if payload.get("stop_hook_active"):
        return None  # the agent is finishing a reflection we asked for: never loop
    cfg = kept_settings(roots, rec).reflect
    if cfg.mode == "off":
        return None
    transcript = str(payload.get("transcript_path") or rec.get("transcript_path") or "")
    state = _counts(rec.get("reflect"))
    tools = failed = 0
    if transcript:
        act = _activity(roots[0].path, session_id(payload), transcript, int(state.get("offset", 0)))
        if act is not None:
            tools, failed, state["offset"] = act.tool_calls, act.failed_tool_calls, act.offset
    state = occasion.tally(state, tool_calls=tools, failed=failed)
    root, scope = roots[0]
    sid = session_id(payload)
    limits = occasion.Settings(
        tool_calls=cfg.nudge_after_tool_calls,
        turns=cfg.nudge_after_turns,
        surprises=cfg.min_surprises,
        cooldown_s=cfg.nudge_cooldown_s,
        backoff_after=cfg.nudge_backoff_after,
    )
    now = time.time()
    entries = sessions.read(root, sid)
    empty = occasion.empty_streak(entries) if state.get("last") else 0
    gaps = occasion.gaps_since_reflection(entries)
    why = occasion.due(state, limits, now, empty=empty, gaps=gaps)
    if why is None:
        rec["reflect"] = state
        return None
    host = host_of(payload) or "claude"  # a shape neither names: as Claude Code
    mode = effective_mode(cfg.mode, host)
    start = int(state.get("from", 0))
    end = int(state.get("offset", 0))
    turn = int(rec.get("turn", 0))
    job = {
        "session": sid,
        "transcript": transcript,
        "start": start,
        "end": end,
        "turn": turn,
        "host": host,
        "cwd": str(payload.get("cwd") or ""),
    }
    answer = None
    if mode == "block":
        answer = {"decision": "block", "reason": occasion.block_reason(root, sid)}
    else:
        from rose.files.layout import StoreDir
        from rose.jobs.queue import submit

        kind = "reflect-fork" if mode == "fork" else "reflect"
        outcome, _ = submit(StoreDir(Path(root), scope), kind, job, key=f"{sid}:{kind}:{end}")
        if outcome == "dropped":  # the queue is full: the counts stand, a later Stop retries
            rec["reflect"] = state
            return None
    rec["reflect"] = {**occasion.reset(state, now), "from": end}
    sessions.append(root, sid, "nudge", mode=mode, why=why, start=start, end=end, turn=turn)
    return answer


def _activity(root: str, sid: str, transcript: str, offset: int) -> Activity | None:
    """The turn's activity in the transcript from `offset`, or None when it cannot be read
    (turns still count). A path that is not a transcript file, and a read a bound cut, are
    logged and kept for the status line: the next Stop reads on from where this one stopped,
    so what the user wrote after the cut is still read."""
    from rose.errors import TranscriptError
    from rose.events import append_event
    from rose.files import notices
    from rose.transcripts.transcript import activity

    events = Path(root) / "events.jsonl"
    try:
        act = activity(Path(transcript), offset)
    except TranscriptError as exc:
        if exc.reason != "no such file":  # not there yet: nothing to tell
            append_event(events, "transcript-unreadable", {"session": sid, "error": str(exc)})
        return None
    except OSError:
        return None
    if act.cut:
        data = {"session": sid, "path": transcript, "offset": offset, "reached": act.offset}
        append_event(events, "transcript-cut", {**data, "by": act.cut, "unread": act.unread})
        left = f"{act.unread >> 20} MB" if act.unread >= 1 << 20 else f"{act.unread} bytes"
        notices.keep(root, f"transcript read cut by its {act.cut}, {left} left for the next turn")
    return act

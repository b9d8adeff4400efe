"""A session's append-only scratch log: what was served on each prompt, and what was said of it.

`sessions/<session>.log` holds one JSON object a line, appended with a single O_APPEND
write, so the prompt hook, `rose used`, a reflector and an absorption job can all write
at once and nobody loses a line. It is never rewritten: PreCompact and `/clear` reset
only the freshness record (`sessions/<session>.json`), so the log still lists everything
the session was served when it is absorbed into episodes.

Entries (``t`` says which):

- ``prompt``: a unit of work begins: ``turn``, ``prompt``, ``served`` (what the agent
  had in context for it: injected in full, refreshed, or still fresh from before),
  ``recall`` (how recall chose: ``fits``, ``judged`` or ``degraded``) and ``patched``
  (lesson id -> the ids of the patches its full block carried; absent when none did);
- ``used``: attribution for a turn: ``used`` and ``unused`` lesson ids, ``source`` (one of
  `SOURCES`; none written means ``rose used``), and from ``assess`` the ``causes`` of the
  unused ones, or the ``error`` (or why it ``skipped``) when it did not judge: then it
  names nothing;
- ``cite``: lesson ids the agent cited;
- ``span``: a sentence of a lesson that did work (``lesson``, ``span``);
- ``expand``: descent restored a dropped claim into a lesson (``lesson``, ``claim``);
- ``rescue``: that claim rescued the failure (``lesson``, ``claim``);
- ``outcome``: how the unit went (``outcome``, ``summary``, ``steered``);
- ``compact``: the host compacted or cleared its context;
- ``nudge``: the Stop hook started a reflection (``mode``, ``why``, the transcript's byte
  range ``start``..``end`` it covers);
- ``minted``: a reflection stored (or folded) a lesson (``id``, ``source``);
- ``reflected``: a reflection finished (``produced``: whether it found anything);
- ``gap``: work failed with a level-0 lesson used (``lesson``): a knowledge gap, which
  makes a reflection due at the next Stop;
- ``late``: the relevance questions of a prompt (``turn``) that ran out of time, answered
  by a job after all: the lessons they judged ``relevant`` (`rose.loop.selection.late`).

Beside it, `sessions/<session>.restored.jsonl` (append-only too) holds what descent restored
for the rest of the session when a reflector saw the work fail: one line a claim
(``lesson``, ``claim``: the restored claim's id, ``patch``: its id as a patch of that lesson,
``text``, ``piece``: the block the prompt hook serves, ``turn``, ``escalated``: the text
is a level-0 lesson's whole body, descent having nothing smaller left to try). The prompt
hook reads it on every prompt; a job writes it.

Standard library only: the prompt hook appends here on every prompt.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from rose.disk import jsonl
from rose.disk.atomic import append_line
from rose.events import now_iso

KINDS = (
    "prompt",
    "used",
    "cite",
    "span",
    "expand",
    "rescue",
    "outcome",
    "compact",
    "nudge",
    "minted",
    "reflected",
    "gap",
    "miss",
    "late",
)
#: Who may write a ``used`` entry, best first: the agent or its in-session reflector, a
#: forked reflector (`rose used --source reflector`); then the judges of the digest, the
#: `assess` judgement and a background reflection, which fill in where neither spoke.
SOURCES = ("rose used", "reflector", "assess", "background")
#: The sources that read only the digest.
DIGEST_SOURCES = ("assess", "background")


#: A session id that is a file name as it is: ASCII letters, digits, `-` and `_`, at most 80.
_SAFE = re.compile(r"[A-Za-z0-9_-]{1,80}")


def safe_id(session_id: str) -> str:
    """The session id as a file name, one to one: an id that is safe already stays as it is
    (every host's ids are), any other becomes a digest of the raw id (`x-` and 40 hex), so
    `a/b/../../c` and `abc` never share a log. Idempotent: a digest is safe."""
    if _SAFE.fullmatch(session_id):
        return session_id
    if not session_id:
        return "default"
    import hashlib  # loads OpenSSL (~3 ms): only for an id that is not safe already

    return "x-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def log_path(store_root: str | Path, session_id: str) -> Path:
    return Path(store_root) / "sessions" / f"{safe_id(session_id)}.log"


def append(store_root: str | Path, session_id: str, kind: str, **data: object) -> None:
    """Append one entry to the session's log (redacted, like every write)."""
    if kind not in KINDS:
        raise ValueError(f"unknown session log entry {kind!r}; the kinds are {', '.join(KINDS)}")
    record = {"t": kind, "time": now_iso(), **data}
    append_line(log_path(store_root, session_id), json.dumps(record, ensure_ascii=False))


def _records(path: Path) -> list[dict]:
    """The JSON objects of an append-only file, a line each; a torn or foreign line is
    skipped, a missing file is none."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.readlines()
    except OSError:
        return []
    return jsonl.objects(lines)


def read(store_root: str | Path, session_id: str) -> list[dict]:
    """Every readable entry, oldest first; a torn or foreign line is skipped."""
    return [r for r in _records(log_path(store_root, session_id)) if r.get("t") in KINDS]


def last_turn(store_root: str | Path, session_id: str) -> int:
    """The turn of the session's latest prompt (0 before the first)."""
    turns = [int(e.get("turn", 0)) for e in read(store_root, session_id) if e["t"] == "prompt"]
    return max(turns, default=0)


def sessions(store_root: str | Path) -> list[str]:
    """The ids of every session with a log, by file name."""
    folder = Path(store_root) / "sessions"
    try:
        return sorted(p[: -len(".log")] for p in os.listdir(folder) if p.endswith(".log"))
    except FileNotFoundError:
        return []


def restored_path(store_root: str | Path, session_id: str) -> Path:
    return Path(store_root) / "sessions" / f"{safe_id(session_id)}.restored.jsonl"


def restore(store_root: str | Path, session_id: str, **entry: object) -> None:
    """Restore a claim to a lesson for the rest of the session (see the module's docstring)."""
    record = {"time": now_iso(), **entry}
    append_line(restored_path(store_root, session_id), json.dumps(record, ensure_ascii=False))


def restored(store_root: str | Path, session_id: str) -> list[dict]:
    """What descent restored in this session, oldest first (a torn line is skipped)."""
    entries = _records(restored_path(store_root, session_id))
    return [r for r in entries if all(isinstance(r.get(k), str) for k in _RESTORED)]


_RESTORED = ("lesson", "patch", "text", "piece")


def latest(store_root: str | Path) -> str | None:
    """The session whose log was written last (the prompt hook appends on every prompt);
    None when no session has a log."""
    folder = Path(store_root) / "sessions"
    try:
        logs = [e for e in os.scandir(folder) if e.name.endswith(".log") and e.is_file()]
    except FileNotFoundError:
        return None
    if not logs:
        return None
    newest = max(logs, key=lambda e: (e.stat().st_mtime_ns, e.name))
    return newest.name[: -len(".log")]

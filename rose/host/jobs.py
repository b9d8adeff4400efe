"""Detached work handed off by hooks that must return at once.

Run as `python -m rose.host.jobs KIND FILE`.

Runs outside the host's hook deadline, with ROSE_CHILD unset but ROSE_JOB=1.
Today the session-end job records that the session ended; the reflection and
compression stages attach here as they land.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def session_end(payload_path: Path) -> None:
    from rose.loop.pack import load_session, session_path
    from rose.store.facade import Store

    payload = json.loads(payload_path.read_text(encoding="utf-8"))
    try:
        cwd = payload.get("cwd")
        store = Store.open(Path(cwd) if cwd else None)
        sid = str(payload.get("session_id") or "default")
        rec = load_session(session_path(str(store.primary.root), sid), sid)
        store.log(
            "session-end",
            {"session": sid, "reason": payload.get("reason", ""), "turns": rec.get("turn", 0)},
        )
        prune_sessions(store.primary.sessions)
    finally:
        payload_path.unlink(missing_ok=True)


def prune_sessions(folder: Path, *, max_age_days: float = 14) -> int:
    """Delete session records untouched for `max_age_days`: scratch that would only pile up."""
    import time

    cutoff = time.time() - max_age_days * 86400
    removed = 0
    for path in folder.glob("*.json"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except OSError:
            continue
    return removed


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "session-end":
        print("usage: python -m rose.host.jobs session-end PAYLOAD_FILE", file=sys.stderr)
        return 2
    session_end(Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Capturing a lesson at an entry point: consolidate it, and queue the reconcile job when
lessons wait to be reconciled.

`rose.loop.consolidate` decides and writes; a stage may not reach into the job runner, so
the entry points (`rose add`, the reflection and session-end jobs) call `capture`, which
is `consolidate` plus the queueing. A lesson just stored unreconciled queues the job
without starting a runner: the judge has just failed, so it waits for the next runner a
hook starts (every Stop and SessionEnd starts one). A lesson reconciled while older ones
still wait queues it and starts a runner: the judge answers again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from rose.host.jobs import submit
from rose.loop.consolidate import Consolidated, consolidate
from rose.models import Node
from rose.store.facade import Store


def capture(
    store: Store | None,
    judge: Any,
    lesson: Node,
    *,
    source: str,
    scope: str | None = None,
    reconcile: bool = True,
    start: Path | None = None,
) -> Consolidated:
    """`rose.loop.consolidate.consolidate`, then `queue_reconcile`; same arguments."""
    done = consolidate(
        store, judge, lesson, source=source, scope=scope, reconcile=reconcile, start=start
    )
    done.job = queue_reconcile(done)
    return done


def queue_reconcile(done: Consolidated) -> str:
    """Queue the `reconcile` job for the lessons still waiting in `done.store`.

    Returns the submission's outcome ("queued", "duplicate", "dropped"), or "" when nothing
    waits. The key is the set waiting, so the same set is queued once while it waits, and a
    new lesson joining it queues afresh.
    """
    if not done.pending:
        return ""
    ids = sorted(done.pending)
    key = "reconcile:" + hashlib.sha256(",".join(ids).encode()).hexdigest()[:16]
    outcome, _job_id = submit(
        done.store.primary, "reconcile", {"ids": ids}, key=key, spawn=done.reconciled
    )
    return outcome


def note_minted(done: Consolidated, session_id: str, *, source: str) -> None:
    """Note in the session's log that a lesson came of its reflection (stored, folded into
    another, or waiting to be reconciled), for its unit's episode and the nudge backoff."""
    from rose.store import sessions

    ids = done.ids or ([done.target] if done.relation == "refines" and done.target else [])
    root = done.store.primary.root
    turn = sessions.last_turn(root, session_id)
    for lid in ids:
        sessions.append(root, session_id, "minted", turn=turn, id=lid, source=source)

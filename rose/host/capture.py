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

from pathlib import Path
from typing import Any

from rose.host.jobs import jobs, submit
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
    waits. One job per store while it waits, however many lessons join it (each run
    reconciles them all), so an outage never fills the queue and crowds out other work: the
    key is the waiting job's, else the oldest lesson waiting's (`_key`). The job fails while
    any is left (a failed key suppresses nothing), so the next lesson stored queues it again.
    """
    if not done.pending:
        return ""
    ids = sorted(done.pending)
    key = _key(done)
    outcome, _job_id = submit(
        done.store.primary, "reconcile", {"ids": ids}, key=key, spawn=done.reconciled
    )
    return outcome


def _key(done: Consolidated) -> str:
    """The queued reconcile job's key, else `reconcile:` and the oldest lesson waiting.

    Not the oldest alone: `created` is kept to the second, so a lesson stored in the same
    second may sort before it. A key is never that of a job done while its lesson waited:
    the job fails while any is left."""
    for rec in jobs(done.store.primary):
        if (rec.get("kind"), rec.get("state")) == ("reconcile", "queued") and rec.get("key"):
            return str(rec["key"])
    return f"reconcile:{done.pending[0]}"


def session_root(session_id: str, start: Path | None = None) -> Path:
    """The store folder whose log holds `session_id`: the one `capture` opens for `start`.

    Refused before any lesson is stored when that log has no prompt (or there is no store
    at all, so no session can be known): noting a lesson there would start a log at turn 0.
    """
    from rose.errors import RoseError, StoreNotFound
    from rose.store import sessions

    hint = "check the id (the session's hooks record its prompts), or add it without --session"
    try:
        root = Store.open(start).primary.root
    except StoreNotFound:
        raise RoseError(
            f"session {session_id!r} has no recorded prompt here: there is no store yet; {hint}"
        ) from None
    if not sessions.last_turn(root, session_id):
        raise RoseError(f"session {session_id!r} has no recorded prompt here ({root}); {hint}")
    return root


def note_minted(
    done: Consolidated, session_id: str, *, source: str, root: Path | None = None
) -> None:
    """Note in the session's log that a lesson came of its reflection (stored, folded into
    another, or waiting to be reconciled), for its unit's episode and the nudge backoff.
    `root`: the store folder holding the log (`session_root`), else the lesson's store's."""
    from rose.store import sessions

    ids = minted_ids(done)
    root = root if root is not None else done.store.primary.root
    turn = sessions.last_turn(root, session_id)
    for lid in ids:
        sessions.append(root, session_id, "minted", turn=turn, id=lid, source=source)


def minted_ids(done: Consolidated) -> list[str]:
    """The lessons a capture put its text into: the one stored, or the one it refined."""
    if done.ids:
        return done.ids
    return [done.target] if done.relation == "refines" and done.target else []

"""Capturing a lesson at an entry point: consolidate it, and queue the reconcile job when
lessons wait to be reconciled.

`rose.loop.reflection.consolidate` decides and writes; a stage may not reach into the job runner, so
the entry points (`rose add`, the reflection and session-end jobs) call `capture`, which
is `consolidate` plus the queueing. A lesson just stored unreconciled queues the job
without starting a runner: the judge has just failed, so it waits for the next runner a
hook starts (every Stop and SessionEnd starts one). A lesson reconciled while older ones
still wait queues it and starts a runner: the judge answers again.

What the user types lands, whatever else holds the store (`add`): the text and its options
are written first (`rose.files.intake`), before any graph open or model call; the store is
then waited for `DEFER_AFTER_S` at most per open, and past that the lesson's file is written
without the graph ("deferred", `rose.loop.reflection.consolidate`), the command says so in one line
and exits 0, and the `reconcile` job it queues, with a runner started, indexes and reconciles it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.files import intake
from rose.files.layout import StoreDir
from rose.jobs.queue import jobs, submit
from rose.loop.reflection.consolidate import Consolidated, consolidate
from rose.models import Node
from rose.store.facade import Store

if TYPE_CHECKING:
    from rose.judge.base import Judge

#: Seconds `add` waits for another process's hold on the graph database, at each open,
#: before it stores the lesson without it (unless `graph.lock_timeout_s` is shorter).
DEFER_AFTER_S = 5.0


def capture(
    store: Store | None,
    judge: Judge | None,
    lesson: Node,
    *,
    source: str,
    scope: str | None = None,
    reconcile: bool = True,
    start: Path | None = None,
) -> Consolidated:
    """`rose.loop.reflection.consolidate.consolidate`, then `queue_reconcile`; same arguments."""
    done = consolidate(
        store, judge, lesson, source=source, scope=scope, reconcile=reconcile, start=start
    )
    done.job = queue_reconcile(done)
    return done


#: Why a lesson the copy tripwire caught waits for the user; the copied words follow.
COPIED = "it repeats outside content word for word"


def screen(
    lessons: Sequence[Node], transcript: str, *, end: int | None = None, cwd: str = ""
) -> int:
    """The copy tripwire: hold for review (`rose.loop.reflection.reflect.hold`) every one of
    `lessons` that
    repeats verbatim a line, or a run of 8 words, of the outside content `transcript` holds up
    to byte `end` (fetched pages, other servers' MCP tools, files beyond `cwd`: from the start
    of the session, as a page read early may be relayed late). It can only hold, never clear:
    a transcript that cannot be read holds nothing (the reflection reading it fails on its
    own). Returns how many it held."""
    from rose.errors import RoseError
    from rose.loop.reflection.reflect import hold
    from rose.transcripts.outside import Outside, outside_texts

    if not (transcript and lessons):
        return 0
    try:
        outside = Outside.from_texts(outside_texts(transcript, end=end, cwd=cwd))
    except (RoseError, OSError):
        return 0
    held = 0
    for node in lessons:
        hit = outside.copied("\n".join((node.title, node.gist, node.body)))
        if hit:
            hold(node, f'{COPIED}: "{hit}"')
            held += 1
    return held


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
    spawn = done.reconciled or done.deferred  # the judge answers; only the database waits
    outcome, _job_id = submit(done.store.primary, "reconcile", {"ids": ids}, key=key, spawn=spawn)
    return outcome


def queue_intake(store_dir: StoreDir) -> str:
    """Queue the `reconcile` job, and start a runner, when a `rose add` that died left its
    lesson in `rose.files.intake` (the job takes it in); its outcome, or "" when none did."""
    if not intake.unattended(store_dir):
        return ""
    key = _waiting_key(store_dir, f"intake:{intake.waiting(store_dir)[0].stem}")
    outcome, _job_id = submit(store_dir, "reconcile", {"ids": []}, key=key)
    return outcome


def _key(done: Consolidated) -> str:
    """The queued reconcile job's key, else `reconcile:` and the oldest lesson waiting.

    Not the oldest alone: `created` is kept to the second, so a lesson stored in the same
    second may sort before it. A key is never that of a job done while its lesson waited:
    the job fails while any is left."""
    return _waiting_key(done.store.primary, done.pending[0])


def _waiting_key(store_dir: StoreDir, oldest: str) -> str:
    for rec in jobs(store_dir):
        if (rec.get("kind"), rec.get("state")) == ("reconcile", "queued") and rec.get("key"):
            return str(rec["key"])
    return f"reconcile:{oldest}"


def add(
    text: str,
    *,
    title: str | None = None,
    family: str | None = None,
    scope: str | None = None,
    reconcile: bool = True,
    source: str = "user",
    provenance: str = "",
    session: str | None = None,
    start: Path | None = None,
) -> Consolidated:
    """Teach a lesson (`rose add`, the MCP `add` tool): consolidated, noted in `session`'s log.

    `provenance` says where its content came from; the user's own words by default, and it
    must be said when a reflector adds it (an agent that read outside content may pass it
    on). A reflector's lesson for a session is checked against the outside content of that
    session's transcript (`screen`): a copy waits for the user's review."""
    from rose.errors import RoseError
    from rose.models import PROVENANCES

    if source == "reflector" and not provenance:
        raise RoseError(
            "a reflector must say where the lesson came from: --from user (the user's words), "
            "repository (this repository and the work in it) or outside (a fetched page, a "
            "document or tool result from elsewhere)"
        )
    provenance = provenance or "user"
    if provenance not in PROVENANCES:
        raise RoseError(f"--from {provenance!r} is not one of {', '.join(PROVENANCES)}")
    lesson = Store.draft(text, title=title, family=family)
    lesson.provenance = provenance  # type: ignore[assignment]
    if source == "reflector":  # an agent's family is a model's choice, not the user's word
        lesson.provisional = [*lesson.provisional, "family"]
    log = session_root(session, start) if session is not None else None  # refused first
    home = _store_here(start)
    options = {"title": title, "family": family, "scope": scope, "reconcile": reconcile}
    options |= {"source": source, "provenance": provenance, "session": session}
    kept: Path | None = None
    try:
        with _recorded(home, lesson.id, text, options) as kept:  # on disk before any open
            if source == "reflector":  # the session named, else the one at work here
                root, sid = _session_at_work(log, session, start)
                if sid:
                    screen([lesson], _transcript_of(root, sid), cwd=str(start or Path.cwd()))
            if home is not None:
                home.lock_timeout_s = min(home.lock_timeout_s, DEFER_AFTER_S)
            done = capture(
                home, None, lesson, source=source, scope=scope, reconcile=reconcile, start=start
            )
            if session is not None:
                note_minted(done, session, source=source, root=log)
    except RoseError:
        raise  # refused, and said: the record is gone with it
    except Exception as exc:  # the engine failed under us: the record stays, a job stores it
        if home is None or kept is None:
            raise
        done = _left_to_the_job(home, lesson, exc, reconcile=reconcile, scoped=scope is not None)
    if home is not None:
        queue_intake(home.primary)
    return done


def _left_to_the_job(
    home: Store, lesson: Node, exc: Exception, *, reconcile: bool, scoped: bool
) -> Consolidated:
    """An add the engine failed under after its record was on disk: logged, its file written
    without the graph where the disk allows (so its id names a lesson at once, for `rose
    used`), and said to be deferred: the reconcile job indexes and reconciles it, or takes
    the record in (`rose.files.intake`) when the file could not be written."""
    why = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    home.log("error", {"command": "add", "id": lesson.id, "error": why})
    if reconcile and "reconcile" not in lesson.provisional:  # what the job will do
        lesson.provisional = [*lesson.provisional, "reconcile"]  # the validator orders them
        if not scoped:
            lesson.provisional = [*lesson.provisional, "scope"]
    with suppress(OSError):  # else the record alone stands, and the job stores it
        lesson = home.keep_unindexed(lesson, scope=home.primary.scope, why=why)
    return Consolidated(home, "deferred", lesson, why=why, deferred=True)


def _store_here(start: Path | None) -> Store | None:
    """The store for `start` as it is; None when there is none yet (the lesson makes one)."""
    from rose.errors import StoreNotFound

    try:
        return Store.open(start)
    except StoreNotFound:
        return None


@contextmanager
def _recorded(
    home: Store | None, lesson_id: str, text: str, options: dict[str, Any]
) -> Iterator[Path | None]:
    """`rose.files.intake.recorded` in the store found for the command: the record's path,
    or None when there is none. With no store at all there is nothing to wait for but the
    model, and no folder to record it in; a store that cannot be written takes no record,
    and the lesson's own write then says why."""
    stack = ExitStack()
    try:
        kept = (
            None
            if home is None
            else stack.enter_context(intake.recorded(home.primary, lesson_id, text, **options))
        )
    except OSError:
        kept = None
    with stack:
        yield kept


def settle_accepted(store: Store) -> str:
    """Reconcile what waits now (a lesson just accepted from review), else queue the job:
    a few words saying which."""
    from rose.loop.reflection.consolidate import OUTAGES, pending, reconcile_pending

    try:
        done = reconcile_pending(store)
    except OUTAGES as exc:
        waiting = Consolidated(store, "unreconciled", None, why=str(exc), pending=pending(store))
        outcome = queue_reconcile(waiting)
        return f"reconciled later ({outcome or 'nothing queued'}): the model is unavailable"
    return "; ".join(d.line() for d in done) or "nothing left to reconcile"


def _session_at_work(log: Path | None, session: str | None, start: Path | None) -> tuple[Path, str]:
    """The store folder and session whose transcript a reflector's lesson is checked
    against: the one named, else $ROSE_SESSION_ID's, else the latest; ("", "") when none."""
    from rose.errors import RoseError
    from rose.loop.selection.pull import session_for

    if log is not None and session is not None:
        return log, session
    try:
        store = Store.open(start)
        return store.primary.root, session_for(store, None).id
    except RoseError:
        return Path(), ""


def _transcript_of(root: Path, session_id: str) -> str:
    """The transcript the session's hooks recorded (its SessionStart payload), or ""."""
    from rose.loop.selection.pack import load_session, session_path

    rec = load_session(session_path(str(root), session_id), session_id)
    return str(rec.get("transcript_path") or "")


def session_root(session_id: str, start: Path | None = None) -> Path:
    """The store folder whose log holds `session_id`: the one `capture` opens for `start`.

    Refused before any lesson is stored when that log has no prompt (or there is no store
    at all, so no session can be known): noting a lesson there would start a log at turn 0.
    """
    from rose.errors import RoseError, StoreNotFound
    from rose.files import sessions

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
    from rose.files import sessions

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

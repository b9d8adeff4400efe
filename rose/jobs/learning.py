"""The learning loop's detached jobs: what runs after a turn or a session, off the host's clock.

- ``absorb`` (a Stop, once a unit of work is complete) and ``session-end`` (every unit left):
  each unit not yet recorded is judged (`assess`, on a digest of its own part of the
  transcript, with the lessons it was served), the lesson ids the agent cited are noted,
  and its episode is written once; then what the new episodes show is acted on (`heal`:
  repair, demotion). ``session-end`` then reflects once over what no reflection has read
  yet, so a session with no nudge still mints its lessons.
- ``reflect`` (a nudge in background mode): a digest of the transcript since the last
  reflection, one `reflect` call, each lesson it found (one per subject) consolidated, its
  verdicts logged.
- ``reflect-fork`` (a nudge in fork mode, Claude Code): the session resumed as a fork that
  sees the whole conversation and reports with `rose used` and `rose add`.

A unit's part of the transcript is found by its prompt: the log records the prompt the
hook saw, and the transcript the same words; a unit whose prompt cannot be found there is
matched by position. Without a readable transcript a unit is still absorbed, its outcome
unknown: it credits nothing, which is the strict default.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.disk.atomic import exclusive
from rose.events import append_event
from rose.files import sessions
from rose.loop.reflection import reflect as reflection
from rose.store import absorb as absorbing

if TYPE_CHECKING:
    from rose.jobs.queue import JobContext
    from rose.judge.base import Judge
    from rose.models import Episode, Miss, Node
    from rose.store.facade import Store
    from rose.transcripts.transcript import Step, Transcript

#: Characters of a prompt compared when finding a unit's part of the transcript.
MATCH_CHARS = 200


def _one_at_a_time(store: Store, session_id: str) -> AbstractContextManager[None]:
    """Hold the session's learning lock: a Stop's job and SessionEnd's may run side by side
    (`jobs.max_concurrent`), and each must see what the other judged before judging it. It
    is held for a model call at most; the job has a deadline."""
    return exclusive(store.primary.sessions / f"{sessions.safe_id(session_id)}.learning.lock")


def _norm(text: str) -> str:
    return " ".join(text.split())[:MATCH_CHARS]


def unit_steps(t: Transcript, prompts: Sequence[tuple[int, str]]) -> dict[int, tuple[Step, ...]]:
    """Each unit's steps in the transcript: from the prompt that opened it to the next unit's.

    `prompts` is (turn, prompt as logged) for every unit of the session, in order. A
    correction typed without a prompt hook of its own (or one the log does not know) stays
    in the unit before it.
    """
    from rose.redaction.redact import redact
    from rose.transcripts.transcript import units

    parts = units(t)
    heads = [_norm(redact(p[0].text)) if p and p[0].kind == "prompt" else "" for p in parts]
    starts: dict[int, int] = {}
    at = 0
    for position, (turn, prompt) in enumerate(prompts):
        want = _norm(prompt)
        found = next((i for i in range(at, len(parts)) if want and heads[i] == want), None)
        if found is None and position < len(parts) and position >= at:
            found = position  # by position: the hook's prompt and the transcript's differ
        if found is not None:
            starts[turn] = found
            at = found + 1
    ordered = sorted(starts.items(), key=lambda kv: kv[1])
    out: dict[int, tuple[Step, ...]] = {}
    for n, (turn, first) in enumerate(ordered):
        last = ordered[n + 1][1] if n + 1 < len(ordered) else len(parts)
        out[turn] = tuple(s for part in parts[first:last] for s in part)
    return out


def _read(store: Store, path: str, session_id: str) -> Transcript | None:
    """The transcript, or None (logged) when it cannot be read: learning waits, nothing breaks."""
    if not path:
        return None
    from rose.errors import RoseError
    from rose.transcripts.transcript import read

    try:
        t = read(Path(path))
    except (RoseError, OSError) as exc:
        store.log("transcript-unreadable", {"session": session_id, "error": str(exc)[:300]})
        return None
    if t.cut:  # what a bound left unread is never dropped unsaid
        from rose.files import notices

        data = {"session": session_id, "path": path, "offset": 0, "reached": t.offset}
        store.log("transcript-cut", {**data, "by": t.cut, "unread": t.unread})
        left = f"{t.unread >> 20} MB" if t.unread >= 1 << 20 else f"{t.unread} bytes"
        said = f"transcript read by a job cut by its {t.cut}, {left} unread"
        notices.keep(store.primary.root, said)
    return t


def _nodes(store: Store, ids: Sequence[str]) -> list[Node]:
    from rose.errors import RoseError

    out = []
    for i in dict.fromkeys(ids):
        try:
            out.append(store.get(i))
        except RoseError:
            continue  # removed since it was served
    return out


def assess_units(store: Store, session_id: str, transcript: str, *, final: bool) -> dict[int, str]:
    """Judge each complete unit of the session that has no episode yet; returns the units
    whose judgement failed (turn → why), for the job to hold back and fail on.

    A unit judged a failure (or partial) descends from the compressed lessons it was served
    and notes a knowledge gap for a level-0 lesson it used (`rose.loop.abstraction.descend`)."""
    from rose.judge.calls import for_store
    from rose.loop.reflection import attribute
    from rose.transcripts.digest import build

    root = str(store.primary.root)
    entries = sessions.read(root, session_id)
    every = absorbing.units(entries, final=True)
    judged = {int(e.get("turn") or 0) for e in entries if e["t"] == "outcome"}
    todo = [
        u
        for u in absorbing.units(entries, final=final)
        if u.turn not in judged
        and not any(
            d.episode_path(absorbing.episode_id(session_id, u.turn)).exists() for d in store.dirs
        )
    ]
    t = _read(store, transcript, session_id) if todo else None
    if t is None:
        return {}
    steps = unit_steps(t, [(u.turn, u.prompt) for u in every])
    judge = for_store(store)
    budget = store.config.reflect.digest_tokens
    failed: dict[int, str] = {}
    for u in todo:
        d = build(steps.get(u.turn, ()), host=t.host, version=t.version, budget_tokens=budget)
        if d.cited:
            sessions.append(root, session_id, "cite", turn=u.turn, ids=d.cited)
        served = _nodes(store, u.served)
        verdict = attribute.assess_unit(judge, prompt=u.prompt, digest=d.text, served=served)
        if verdict.error:
            failed[u.turn] = verdict.error
        attribute.record(root, session_id, u.turn, verdict)
        if verdict.outcome in ("failure", "partial"):
            used = [*verdict.used, *(i for i, said in u.reflected.items() if said)]
            _descend(store, judge, session_id, u, d.text, served, used)
    return failed


def _descend(
    store: Store, judge: Judge, sid: str, u: absorbing.Unit, failure: str,
    served: list[Node], used: list[str],
) -> None:  # fmt: skip
    """Descent after a failed unit (`rose.loop.abstraction.descend.after_failure`), before its
    episode is written so the episode carries the expansion; a store it cannot write is
    logged, and the unit is absorbed all the same."""
    from rose.errors import RoseError
    from rose.loop.abstraction import descend

    try:
        descend.after_failure(
            store, judge, session_id=sid, turn=u.turn, prompt=u.prompt,
            failure=failure, served=served, used=used,
        )  # fmt: skip
    except RoseError as exc:
        why = {"session": sid, "turn": u.turn, "error": str(exc)[:300]}
        store.log("descend-failed", why)


def report_failure(store: Store, session_id: str, failure: str, *, turn: int | None) -> int:
    """A reflector (a fork, or the agent asked to reflect) says the work of `turn` (default:
    the latest) failed: queue a `restore` job, which descends mid-session from what that
    unit was served. Returns the turn."""
    from rose.errors import RoseError
    from rose.jobs.queue import submit

    if not failure.strip():
        raise RoseError("--failed names no failure: say what went wrong (the errors, symptoms)")
    root = str(store.primary.root)
    turn = turn or sessions.last_turn(root, session_id)
    if not turn:
        raise RoseError(f"session {session_id} has no prompt on record in {root}")
    payload = {"session": session_id, "turn": turn, "failure": failure.strip()[:2000]}
    submit(store.primary, "restore", payload, key=f"{session_id}:{turn}")
    return turn


def restore(job: JobContext) -> None:
    """The `restore` job: descent mid-session for the failure a reflector reported."""
    from rose.judge.calls import for_store

    p = job.payload
    store = job.store()
    sid, turn = str(p["session"]), int(p["turn"])
    prompts = [e for e in sessions.read(str(store.primary.root), sid) if e["t"] == "prompt"]
    unit = next((e for e in prompts if int(e.get("turn") or 0) == turn), {})
    served = list(unit.get("served") or [])
    _restore(store, for_store(store), sid, turn, str(unit.get("prompt", "")), str(p["failure"]),
             served)  # fmt: skip


def _restore(
    store: Store, judge: Judge, sid: str, turn: int, prompt: str, failure: str, served: list[str]
) -> None:
    """Descent mid-session (`rose.loop.abstraction.descend.during_session`); a store it cannot read
    or write is logged, and the reflection stands."""
    from rose.errors import RoseError
    from rose.loop.abstraction import descend

    try:
        descend.during_session(
            store, judge, session_id=sid, turn=turn, prompt=prompt, failure=failure,
            served=_nodes(store, served),
        )  # fmt: skip
    except RoseError as exc:
        store.log("descend-failed", {"session": sid, "turn": turn, "error": str(exc)[:300]})


def _absorb(store: Store, sid: str, *, final: bool, hold: Sequence[int] = ()) -> list:
    """Absorb the session's units into episodes (but those of turns in `hold`, whose
    judgement failed: a later run judges them first), then keep what descent restored during
    the session and the episodes show rescued (`rose.loop.abstraction.descend.keep_rescues`), and
    judge the trial patches they served, dropping those that did not help
    (`rose.loop.abstraction.trial`)."""
    from rose.errors import RoseError
    from rose.loop.abstraction import descend, trial

    written = store.absorb(sid, final=final, hold=hold)
    if written:
        descend.keep_rescues(store, sid, written)
        try:
            trial.after_episodes(store, sid, written)
        except RoseError as exc:  # the trials wait for their next serving; the episodes stand
            store.log("trial-failed", {"session": sid, "error": str(exc)[:300]})
    return written


def heal(store: Store, written: Sequence[Episode]) -> None:
    """What new episodes show, acted on: claims that kept rescuing a lesson folded back
    (`rose.loop.abstraction.repair`), compressions that kept failing demoted
    (`rose.loop.abstraction.demote`), selection rules whose misses condemn them retired
    (`rose.loop.selection.misses`). A store it cannot write is logged; the episodes stay
    written."""
    from rose.errors import RoseError
    from rose.loop.abstraction import demote, repair
    from rose.loop.selection import misses

    stages = (
        ("repair", repair.after_episodes),
        ("demote", demote.after_episodes),
        ("retire", misses.after_episodes),
    )
    for name, stage in stages:
        try:
            stage(store, written)
        except RoseError as exc:
            store.log(f"{name}-failed", {"error": str(exc)[:300]})


def absorb(job: JobContext) -> None:
    """A Stop's job: judge and absorb the session's complete units of work so far."""
    p = job.payload
    store = job.store()
    final = bool(p.get("final"))
    sid = str(p["session"])
    with _one_at_a_time(store, sid):
        failed = assess_units(store, sid, str(p.get("transcript") or ""), final=final)
        written = _absorb(store, sid, final=final, hold=list(failed))
    heal(store, written)
    if failed:
        raise _judging_failed(failed)


def _judging_failed(failed: dict[int, str]) -> Exception:
    """The error a job fails with when units could not be judged (they wait, unabsorbed)."""
    from rose.errors import LearningFailed

    turns = ", ".join(str(t) for t in sorted(failed))
    return LearningFailed(f"judging the work of prompt {turns}", next(iter(failed.values())))


def _byte_range(path: str, start: int, end: int | None) -> tuple[int, int | None]:
    """The transcript lines (1-based, end exclusive) that bytes `start`..`end` hold."""
    from rose.errors import TranscriptError
    from rose.transcripts import bounded as _bounded

    first = last = 1
    lines = _bounded.Windows(Path(path), 0, _bounded.JOB_BYTES, _bounded.JOB_SECONDS, partial=False)
    try:
        for _, pos, _ in lines:
            if pos > (start if end is None else end):
                break
            first += pos <= start
            last += 1
    except TranscriptError:
        return 1, None
    return first, (last if end is not None else None)


#: How many of a session's requests before the reflected one the reflector is shown, and
#: how much of each: enough to say what a reply continues, never a whole pasted log.
EARLIER_REQUESTS = 3
EARLIER_CHARS = 800


def _earlier(prompts: list[dict], unit: dict) -> list[str]:
    """The session's requests before `unit`'s, oldest first: the last few, each clipped."""
    before = prompts[: prompts.index(unit)] if unit in prompts else []
    out = []
    for e in before[-EARLIER_REQUESTS:]:
        text = " ".join(str(e.get("prompt") or "").split())
        if text:
            out.append(text if len(text) <= EARLIER_CHARS else text[: EARLIER_CHARS - 1] + "…")
    return out


def reflect_on(
    store: Store,
    session_id: str,
    transcript: str,
    *,
    start: int = 0,
    end: int | None = None,
    source: str,
    cwd: str = "",
    turn: int | None = None,
) -> reflection.Reflection | None:
    """One reflection over the transcript's bytes `start`..`end`: ask, consolidate, record.

    `cwd` is where the session worked: a project lesson lands in that repository's store,
    made if it has none. `turn` is the unit of work the reflection was started in (None:
    the latest): its prompt and served lessons are what the reflector is shown, and its
    episode is where the verdicts go."""
    from rose.jobs.capture import screen
    from rose.judge.calls import for_store
    from rose.transcripts.digest import build

    t = _read(store, transcript, session_id)
    if t is None:
        return None
    first, last = _byte_range(transcript, start, end)
    steps = [s for s in t.steps if s.line >= first and (last is None or s.line < last)]
    budget = store.config.reflect.digest_tokens
    d = build(steps, host=t.host, version=t.version, budget_tokens=budget)
    root = str(store.primary.root)
    prompts = [e for e in sessions.read(root, session_id) if e["t"] == "prompt"]
    unit: dict = next(
        (e for e in reversed(prompts) if turn is None or int(e.get("turn") or 0) == turn), {}
    )
    turn = int(unit.get("turn") or 0)
    judge = for_store(store)
    answer, found = reflection.reflect(
        judge,
        prompt=str(unit.get("prompt", "")),
        earlier=_earlier(prompts, unit),
        digest=d.text,
        served=_nodes(store, list(unit.get("served") or [])),  # what that unit had in context
        chosen=unit.get("recall") == "judged",
    )
    stretch = f"{session_id}:{turn}:{start}"
    nodes = reflection.minted_nodes(answer, where=stretch) if answer is not None else []
    screen(nodes, transcript, end=end, cwd=cwd)  # a copy of outside content waits for the user
    failed, missed = _captured(
        store, judge, nodes, found, source=source, cwd=cwd, session=session_id, turn=turn
    )
    if found.proposed:  # where the knowledge was: selection rules, each judged for its form
        from rose.loop.selection import route

        found.rules, _ = route.from_reflection(
            store, judge, found.proposed, source=stretch, session=session_id, misses=missed
        )
    # A digest reflector's verdicts rank with `assess`: it read no more than a digest.
    reflection.record(root, session_id, turn, found, source="background")
    if found.failed and source != "session-end":  # the rest of the session can use detail
        _restore(store, judge, session_id, turn, str(unit.get("prompt", "")), found.failed,
                 list(unit.get("served") or []))  # fmt: skip
    if failed is not None:
        raise failed  # the job is marked failed, its log says why: nothing passes silently
    if answer is None and found.error:
        from rose.errors import LearningFailed

        raise LearningFailed("reflecting on the session", found.error)  # it waits, unread
    return found


def _missed(store: Store, judge: Judge, sid: str, turn: int, done: Any) -> list[Miss]:
    """What the lesson found shows of recall: a lesson the store held and did not serve is
    a miss, recorded and acted on (`rose.loop.selection.misses`); the misses. A failure here costs
    the lesson nothing: it is logged."""
    from rose.errors import RoseError
    from rose.loop.selection import misses

    try:
        entries = sessions.read(str(store.primary.root), sid)
        found = misses.find(done.store, entries, turn, done.relation, done.target)
        misses.record(store, judge, sid, found, lessons=done.store)
    except RoseError as exc:
        store.log("miss-failed", {"session": sid, "error": f"{type(exc).__name__}: {exc}"[:300]})
        return []
    return [f.miss for f in found]


def _captured(
    store: Store, judge: Judge, nodes: list[Node], found: reflection.Reflection, *, source: str,
    cwd: str, session: str, turn: int,
) -> tuple[Exception | None, list[Miss]]:  # fmt: skip
    """Consolidate each lesson a reflection found, in turn, into `found` (`minted`,
    `outcomes`), and find what each shows recall missed (`_missed`, logged in `store`'s
    session log); returns the error that stopped it, once `found.error` says so, and the
    misses. The first that cannot be stored ends it: the rest would wait out the same lock
    or hit the same disk, and a retried job mints the same lessons again (their ids come
    from the work)."""
    from rose.errors import RoseError
    from rose.jobs.capture import capture, minted_ids

    where = Path(cwd) if cwd and os.path.isdir(cwd) else None
    into = store
    missed: list[Miss] = []
    for node in nodes:
        try:
            done = capture(into, judge, node, source=source, start=where)
        except RoseError as exc:  # a store locked past its deadline, a file it cannot write
            found.error = f"a lesson found could not be stored: {str(exc)[:240]}"
            return exc, missed
        found.minted += [i for i in minted_ids(done) if i not in found.minted]
        found.outcomes.append(done.relation)
        missed += _missed(store, judge, session, turn, done)
        into = done.store  # with the store the lesson made, if it made one: the next sees it
    return None, missed


def reflect(job: JobContext) -> None:
    """A nudge in background mode: reflect on the transcript since the last reflection."""
    p = job.payload
    end = p.get("end")
    reflect_on(
        job.store(),
        str(p["session"]),
        str(p.get("transcript") or ""),
        start=int(p.get("start") or 0),
        end=int(end) if end is not None else None,
        source="reflector",
        cwd=str(p.get("cwd") or ""),
        turn=int(p["turn"]) if p.get("turn") else None,
    )


def reflect_fork(job: JobContext) -> None:
    """A nudge in fork mode: `claude --resume <id> --fork-session -p <what to do>`, detached.

    The fork gets a new session id, so the live session is never written to; it reports
    through `rose used` and `rose add`, which write to this session's log. Without a
    `claude` on PATH the reflection runs in background mode instead, and says so.
    """
    from rose.loop.reflection.occasion import block_reason

    p = job.payload
    sid = str(p["session"])
    store = job.store()
    binary = shutil.which("claude")
    if binary is None:
        store.log("reflect-fork", {"session": sid, "fallback": "no claude on PATH: background"})
        reflect(job)
        return
    reason = block_reason(str(store.primary.root), sid)
    argv = [binary, "--resume", sid, "--fork-session", "-p", reason]
    cwd = str(p.get("cwd") or "") or None
    env = {**os.environ, "ROSE_CHILD": "1"}
    done = subprocess.run(
        argv, cwd=cwd if cwd and os.path.isdir(cwd) else None, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    print(done.stdout[-4000:], end="")  # the runner redacts it into the job's log
    print(done.stderr[-4000:], end="", file=sys.stderr)
    store.log("reflect-fork", {"session": sid, "exit": done.returncode})
    if done.returncode != 0:
        raise SystemExit(f"the forked reflector exited {done.returncode}")


def session_end(job: JobContext) -> None:
    """The session is over: judge and absorb every unit left, reflect once over what no
    reflection read, log that it ended, and prune old scratch. Safe to retry: each unit is
    judged and absorbed once, and the closing reflection runs once (its `nudge` entry)."""
    from rose.hosts.payload import session_id
    from rose.jobs.queue import prune_sessions
    from rose.loop.selection.pack import load_session, session_path

    p = job.payload
    sid = session_id(p)
    store = job.store()
    root = str(store.primary.root)
    rec = load_session(session_path(root, sid), sid)
    transcript = str(p.get("transcript_path") or rec.get("transcript_path") or "")
    cwd = str(p.get("cwd") or "")
    failed: Exception | None = None
    with _one_at_a_time(store, sid):
        unjudged = assess_units(store, sid, transcript, final=True)
        try:
            _closing_reflection(store, sid, transcript, cwd)  # its verdicts reach the episode
        except Exception as exc:  # a reflection that fails must not keep the episodes out
            failed = exc
            store.log("reflect-failed", {"session": sid, "error": f"{type(exc).__name__}: {exc}"})
        # before pruning: nothing left unabsorbed but what could not be judged
        written = _absorb(store, sid, final=True, hold=list(unjudged))
        if unjudged and failed is None:
            failed = _judging_failed(unjudged)
    heal(store, written)
    _family_gists(store)
    data: dict[str, Any] = {
        "session": sid,
        "reason": p.get("reason", ""),
        "turns": rec.get("turn", 0),
        "episodes": len(written),
    }
    append_event(job.store_dir.events, "session-end", data)
    prune_sessions(job.store_dir.sessions, keep=lambda name: bool(store.absorb(name, final=True)))
    _queue_follow_ups(job, store, sid, written)
    if failed is not None:
        raise failed  # the job is failed (and retried once): its log says why


def _family_gists(store: Store) -> None:
    """Write the gists of families whose apexes changed, for the next prompts' recall (only
    a store whose apexes do not fit one relevance question offers families at all)."""
    from rose.errors import RoseError
    from rose.judge.calls import for_store
    from rose.loop.selection import families

    try:
        asked = families.refresh(store, for_store(store))
    except RoseError as exc:  # the prompt path shows such a family by its titles meanwhile
        store.log("family-gists-failed", {"error": f"{type(exc).__name__}: {exc}"})
        return
    if asked:
        store.log("family-gists", {"written": asked})


def _queue_follow_ups(job: JobContext, store: Store, sid: str, written: list[Episode]) -> None:
    """Queue, not spawn, what the session's episodes earned: the runner that ran this job
    drains the queue. Compression and merges after a successful use; a counterfactual check of
    attribution after an attributed episode that served something, unless it is off."""
    from rose.jobs.queue import submit

    n = len(written)
    if any(e.outcome == "success" and e.used for e in written):
        for kind in ("compress", "merge"):  # in turn: they share the apexes' lock
            submit(job.store_dir, kind, {"session": sid}, key=f"{sid}:{kind}:{n}", spawn=False)
    checks = store.config.attribute.counterfactual_calls > 0
    if checks and any(e.served and e.attributed_by and e.prompt for e in written):
        key = f"{sid}:counterfactual:{n}"
        submit(job.store_dir, "counterfactual", {"session": sid}, key=key, spawn=False)


def _closing_reflection(store: Store, sid: str, transcript: str, cwd: str) -> None:
    """Reflect over the transcript after the last reflection's end, once per session end
    (whatever `reflect.mode` says: `off` means nothing until the session ends). A resumed
    session that ends again reflects on what it added; a retried job on what it missed
    (`rose.jobs._unread`)."""
    from rose.jobs._unread import unread

    root = str(store.primary.root)
    start, resumed = unread(sessions.read(root, sid))
    if not resumed:
        try:
            size = os.path.getsize(transcript) if transcript else 0
        except OSError:
            size = 0
        if size <= start:
            return  # nothing new since the last reflection
        sessions.append(
            root, sid, "nudge", mode="session-end", why="the session ended", start=start, end=size
        )
    reflect_on(store, sid, transcript, start=start, end=None, source="session-end", cwd=cwd)

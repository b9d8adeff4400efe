"""Compression: a lesson that keeps proving useful earns a shorter form, checked by replay.

Eligible (`eligible`): an active apex below `compress.max_level`, with at least
`compress.min_successes` attributed successes, a new one since its last attempt (attempts
are `compress` events in the machine-local log, never counters in a lesson file), and
recorded episodes in its subtree to replay: nothing without them is compressed.

An attempt (`compress`): the `compress` call is given the spans observed doing work (or told
there are none) and the preserve hints, and declares each claim it removed. A candidate that
shrank by `UNDER_REPORTED` or more while declaring none is rejected as under-reported; one
longer than `compress.ratio` of the original is rejected too; so is one that declares a
dropped claim (any kind but anecdote and reasons: `FREE`) while the lesson has fewer than
`compress.claims_after` attributed successes, which the call was told to keep every claim
for (`keeps_claims`). Then replay (`_replay`) over
up to `compress.sample` episodes of the whole subtree, a seeded share held out (`_sample`):
accepted only if every replay passes (when the only replays that did not pass are ones that
could not run, a timeout or a broken process, the attempt fails, decides nothing and is not
counted: `_replay.undecided`). Accepted: a new lesson one level up, derived from the
original, which becomes superseded, in one write; then the held-out episodes are replayed
and the result logged (`rose status` reports the pass rate). A held-out replay that fails
(a verdict, not a replay that could not run) demotes the new lesson at once
(`demote.held_out_failed`): the original serves again, and what the failing replays found
missing becomes preserve hints on it. Rejected: what the failing replays found missing
becomes preserve hints on the original, so the next attempt keeps it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rose import tokens
from rose.errors import MODEL_FAILURES
from rose.events import read_events
from rose.judge import models as m
from rose.judge.base import COMPRESS, Judge
from rose.loop.abstraction import _lock, _sample, demote
from rose.loop.abstraction import replay as _replay
from rose.models import Claim, Node
from rose.store import dag
from rose.store.facade import Store

#: A candidate this much shorter that declares no dropped claim is under-reported.
UNDER_REPORTED = 0.15

#: The kinds of what a compression may drop before `compress.claims_after` successes: the
#: anecdotes and reasons it cut (`keeps_claims`). Every other kind is a claim.
FREE: tuple[str, ...] = ("example", "other")


def keeps_claims(successes: int, claims_after: int) -> bool:
    """Whether a lesson with `successes` attributed successes must keep every claim.

    A claim missing from the load-bearing spans of a few successes may simply not have come
    up yet, and leaving it out is found only when a task fails for want of it (a failed first
    attempt, whatever descent restores after). Only enough successful uses that never relied
    on it are evidence it is not needed; anecdote, reasons and repetition may go at once."""
    return successes < claims_after


def claims_dropped(dropped: Sequence[Claim], holders: Collection[str]) -> list[Claim]:
    """The declared drops that are claims (not anecdote or reasons) held by `holders`."""
    return [c for c in dropped if c.kind not in FREE and c.holder in holders]


Result = Literal["accepted", "rejected", "failed", "dry-run"]


@dataclass
class Eligibility:
    """An apex and whether it may be compressed now; `reason` says why not."""

    id: str
    title: str
    level: int
    successes: int
    episodes: int
    eligible: bool
    reason: str = ""


@dataclass
class Attempt:
    """What one compression attempt did."""

    node: str
    result: Result
    reason: str = ""
    new: str = ""
    tokens: int = 0
    candidate_tokens: int = 0
    dropped: int = 0
    replays: list[_replay.Replayed] = field(default_factory=list)
    preserve: list[str] = field(default_factory=list)
    held_out: dict[str, int] | None = None
    held_out_note: str = ""
    demoted: bool = False  # accepted, then demoted: a held-out replay failed it


# -- eligibility ---------------------------------------------------------------------------


def last_attempts(store: Store) -> dict[str, int]:
    """Each lesson's attributed successes when it was last attempted (from the event log)."""
    out: dict[str, int] = {}
    for e in read_events(store.primary.events, kind="compress"):
        if e.get("attempted") and isinstance(e.get("node"), str):
            out[e["node"]] = int(e.get("successes") or 0)
    return out


def eligible(store: Store) -> list[Eligibility]:
    """Every apex, with whether it is due for compression and, if not, why."""
    cfg = store.config.compress
    tried = last_attempts(store)
    out = []
    with store.graph() as g:
        for a in g.q("apexes", scope=""):
            cases = _replay.cases(g.q("regression_set", id=a["id"]))
            row = Eligibility(a["id"], a["title"], a["level"], a["successes"], len(cases), True)
            if a["status"] != "active":
                row.reason = f"{a['status']}: only an active lesson is compressed"
            elif a["level"] >= cfg.max_level:
                row.reason = f"at level {a['level']}, the highest (compress.max_level)"
            elif a["successes"] < cfg.min_successes:
                row.reason = (
                    f"{a['successes']} attributed success{'es' if a['successes'] != 1 else ''}"
                    f" of the {cfg.min_successes} needed (compress.min_successes)"
                )
            elif a["id"] in tried and a["successes"] <= tried[a["id"]]:
                row.reason = "no new attributed success since its last attempt"
            elif not cases:
                row.reason = "no recorded episode in its subtree to replay"
            row.eligible = not row.reason
            out.append(row)
    return out


# -- one attempt ---------------------------------------------------------------------------


def compress(
    store: Store,
    node_id: str,
    *,
    judge: Judge,
    prober: _replay.Prober | None = None,
    dry_run: bool = False,
) -> Attempt:
    """One attempt at compressing `node_id` (which must be eligible: see `eligible`).

    `prober` asks the candidate's probes (default: a fresh `rose` process each). With
    `dry_run` the candidate is made and replayed, and nothing is written or logged.
    """
    from rose.errors import RoseError

    node_id = store.get(node_id).id  # a unique prefix, as the block shows ids
    with _lock.rewriting(store):  # decided under the lock: another run may just have done it
        due = {e.id: e for e in eligible(store)}
        if node_id not in due or not due[node_id].eligible:
            why = due[node_id].reason if node_id in due else "not an apex (something above serves)"
            raise RoseError(f"lesson {node_id} is not due for compression: {why}")
        return _attempt(store, due[node_id], judge=judge, prober=prober, dry_run=dry_run)


def _attempt(
    store: Store,
    due: Eligibility,
    *,
    judge: Judge,
    prober: _replay.Prober | None,
    dry_run: bool,
) -> Attempt:
    cfg = store.config.compress
    node = store.get(due.id)
    prober = prober or _replay.FreshProcess.for_store(store, timeout_s=judge.timeout_s)
    split = _sample.split(
        node.id,
        _replay.cases(dag.regression_set(store, node.id)),
        sample=cfg.sample,
        held_out=cfg.held_out,
    )
    attempt = Attempt(node=node.id, result="failed", tokens=tokens.count(node.body))
    ctx = m.CompressContext(
        lesson=_replay.lesson(node),
        evidence=list(node.load_bearing),
        preserve=list(node.preserve),
        target_ratio=cfg.ratio,
        keep_claims=keeps_claims(due.successes, cfg.claims_after),
    )
    try:
        answer = judge.ask(COMPRESS, ctx)
    except MODEL_FAILURES as exc:
        attempt.reason = f"the compressor failed: {exc}"
        if not dry_run:
            _log(store, node, attempt, attempted=False)
        return attempt
    attempt.candidate_tokens = tokens.count(answer.body)
    attempt.dropped = len(answer.dropped)
    candidate = Node(
        id=store.unused_id("compression", node.id, answer.body),
        family=node.family,
        title=node.title,
        gist=answer.gist,
        body=answer.body,
        level=node.level + 1,
        origin="compression",
        provenance=node.provenance,
        accepted=node.accepted,
        derived_from=[node.id],
        dropped=[Claim(claim=c.claim, kind=c.kind, holder=node.id) for c in answer.dropped],
        preserve=list(node.preserve),
        patches=list(node.patches),
        scope=node.scope,
    )
    attempt.reason = _refusal(attempt, cfg.ratio)
    lost = claims_dropped(candidate.dropped, [node.id]) if ctx.keep_claims else []
    if lost and not attempt.reason:
        attempt.reason = (
            f"dropped a claim ({lost[0].claim[:80]!r}) with {due.successes} attributed "
            f"successes of the {cfg.claims_after} that may show it is not needed "
            "(compress.claims_after)"
        )
    if not attempt.reason:
        attempt.replays = _replay.replay(
            judge, prober, _replay.lesson(node), _replay.lesson(candidate), split.sample
        )
        failed = [r for r in attempt.replays if not r.passed]
        if failed:
            attempt.reason = f"{len(failed)} of {len(attempt.replays)} replays failed"
            attempt.preserve = _replay.hints(failed, have=node.preserve)
    attempt.result = "rejected" if attempt.reason else "accepted"
    undecided = _replay.undecided(attempt.replays)
    if undecided:
        attempt.result, attempt.reason, attempt.preserve = "failed", undecided, []
        if not dry_run:
            _log(store, node, attempt, attempted=False)
        return attempt
    if dry_run:
        attempt.result = "dry-run"
        attempt.reason = attempt.reason or "would be accepted"
        return attempt
    if attempt.result == "rejected":
        if attempt.preserve:
            node.preserve = [*node.preserve, *attempt.preserve]
            store.write([node])
    else:
        node.status = "superseded"
        node.parents = [*node.parents, candidate.id]
        store.write([candidate, node])
        attempt.new = candidate.id
        failed = _check_held_out(judge, prober, node, candidate, split, attempt)
        if failed:
            attempt.preserve = _replay.hints(failed, have=node.preserve)
            hints = {node.id: attempt.preserve}
            episodes = [r.episode for r in failed]
            done = demote.held_out_failed(store, candidate.id, episodes, preserve=hints)
            attempt.demoted = done is not None
    _log(store, node, attempt, attempted=True, successes=due.successes)
    return attempt


def _refusal(attempt: Attempt, ratio: float) -> str:
    """Why the candidate is refused before any replay, or ""."""
    before, after = attempt.tokens, attempt.candidate_tokens
    if before and after <= before * (1 - UNDER_REPORTED) and not attempt.dropped:
        return (
            f"under-reported: {after} of {before} tokens and no dropped claim declared "
            f"(a cut of {UNDER_REPORTED:.0%} or more must say what it removed)"
        )
    if after > before * ratio:
        return f"too long: {after} of {before} tokens, more than compress.ratio ({ratio:g})"
    return ""


def _check_held_out(
    judge: Judge,
    prober: _replay.Prober,
    node: Node,
    candidate: Node,
    split: _sample.Split,
    attempt: Attempt,
) -> list[_replay.Replayed]:
    """Replay the held-out episodes against the accepted candidate; the replays that
    failed it (a verdict: one that could not run is counted apart and says nothing)."""
    if not split.held_out:
        attempt.held_out_note = split.note
        return []
    done = _replay.replay(
        judge, prober, _replay.lesson(node), _replay.lesson(candidate), split.held_out
    )
    attempt.held_out = _replay.held_out(done)
    return _replay.failed(done)


def _log(
    store: Store, node: Node, attempt: Attempt, *, attempted: bool, successes: int = 0
) -> None:
    store.log(
        "compress",
        {
            "node": node.id,
            "attempted": attempted,
            "successes": successes,
            "result": attempt.result,
            "reason": attempt.reason[:300],
            "new": attempt.new,
            "level": node.level,
            "tokens": attempt.tokens,
            "candidate_tokens": attempt.candidate_tokens,
            "dropped": attempt.dropped,
            "replays": len(attempt.replays),
            **_replay.unrun_fields(attempt.replays),
            "held_out": attempt.held_out,
            "held_out_note": attempt.held_out_note,
            "demoted": attempt.demoted,
            "preserve": attempt.preserve,
        },
    )


# -- what is due ---------------------------------------------------------------------------


def compress_due(
    store: Store,
    *,
    judge: Judge,
    prober: _replay.Prober | None = None,
    limit: int | None = None,
    dry_run: bool = False,
) -> list[Attempt]:
    """Attempt every lesson due for compression (at most `limit`), one after another."""
    with _lock.rewriting(store):
        due = [e for e in eligible(store) if e.eligible]
        return [
            _attempt(store, row, judge=judge, prober=prober, dry_run=dry_run)
            for row in (due[:limit] if limit is not None else due)
        ]


def held_out_summary(store: Store) -> dict[str, Any]:
    """Accepted and rejected compressions, the held-out pass rate of the accepted, and how
    many of them a held-out replay demoted."""
    accepted = rejected = demoted = checked = passed = total = 0
    for e in read_events(store.primary.events, kind="compress"):
        if e.get("result") == "rejected":
            rejected += 1
        if e.get("result") != "accepted":
            continue
        accepted += 1
        demoted += bool(e.get("demoted"))
        held = e.get("held_out")
        if isinstance(held, dict) and held.get("total"):
            checked += 1
            passed += int(held.get("passed") or 0)
            total += int(held["total"])
    return {
        "accepted": accepted,
        "rejected": rejected,
        "demoted": demoted,
        "held_out_checked": checked,
        "held_out_episodes": total,
        "held_out_pass_rate": round(passed / total, 4) if total else None,
    }

"""Merges: lessons recall serves together on work that succeeded earn a shared parent.

Due (`candidates`): a group of 2 to `merge.max_children` active apexes of one scope and (by
default, `merge.within: family`) one family, served together on at least
`merge.min_co_uses` successful episodes that used one of them at least (`merge.together:
served`; `used` counts only episodes that used a lesson under every member), counted by
the graph and grouped with networkx (`_groups`), whose members share no merge parent yet
(a demoted one aside), with a new co-use since the group's last attempt (attempts are
`merge` events in the machine-local log), and recorded episodes to replay under a member.
Lessons of one subject that recall serves together are paid for together on every such
prompt, whichever of them the work needed: one parent served in their place costs one
frame and states what they state in fewer words. A member with no episode of its own
(served, never used) joins only when it has too few attributed successes to drop a claim
(`compress.claims_after`): the `merge` call must then state its every claim, and the
replays of its siblings' episodes check that the parent serves in their place.

An attempt (`merge_due`): the `merge` call is shown the children, the budget (fewer tokens
than the children as recall serves them, each in its frame, less the frame the parent
needs; `merge.budget: bodies`: than their bodies together), the spans observed doing
work and what earlier attempts lost, and declares each claim it leaves out with the child
that holds it. Refused before any replay: a parent not smaller than its children together
(as served, or by bodies); one naming a holder
that is not one of the children (which child states a claim is a question of meaning, so
the harness never guesses it); one that declares nothing while `compress.UNDER_REPORTED`
shorter than its largest child (stating every child at least says what the largest one
does); one leaving out a claim of a child with fewer than `compress.claims_after`
attributed successes, which the call was told to state every claim of. Then replay over
the union of the children's regression sets: each child's sample (`_sample`, the same
split its compression uses; an episode any child holds out stays out), together at least
one episode a child and up to `compress.sample`, each replayed against
that child's probe as the reference, since the parent is to be served in its place (an
episode of two children is replayed once for each). Accepted only if every replay passes;
when the only replays that did not pass are ones that could not run (a timeout, a broken
process), the attempt fails and decides nothing (`_replay.undecided`).
The `merge` call's evidence is the spans observed anywhere in the children's subtrees: a
lesson compressed since it was used has none of its own yet.

Accepted: a new lesson (origin `merge`) one level above the highest child, derived from
every child; each child is superseded and names the parent among its `parents`, all in one
write. Superseded, not left servable: the parent is served in their place (that is what
makes it cheaper), their detail stays reachable through its delta manifest (every dropped
claim names the child holding it), and a child left active below a parent that is later
compressed would turn back into an apex. A child keeps every parent edge it had, so a
lesson compressed vertically and then merged sideways holds both. Then the held-out
episodes are replayed and the result logged; one that fails the parent (a verdict, not a
replay that could not run) demotes it at once (`demote.held_out_failed`): the children
serve again, what the failing replays found missing is logged with the attempt, and the
group may be merged again after a new co-use (a demoted merge parent does not count as
one the group shares). Rejected: what the failing replays found missing is logged with
the attempt, and shown to the next attempt at the same group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rose import tokens
from rose.errors import MODEL_FAILURES
from rose.events import read_events
from rose.judge import models as m
from rose.judge.base import MERGE, Judge
from rose.loop.abstraction import _groups, _lock, _sample, demote
from rose.loop.abstraction import replay as _replay
from rose.loop.abstraction.compress import UNDER_REPORTED, claims_dropped, keeps_claims
from rose.models import Claim, Node, farthest
from rose.store.facade import Row, Store

Result = Literal["accepted", "rejected", "failed", "dry-run"]

#: Pairs below `merge.min_co_uses` that `candidates` lists, most co-used first.
NEAR = 20


@dataclass
class Candidate:
    """A group of apexes and whether it may be merged now; `reason` says why not."""

    members: list[str]
    titles: list[str]
    scope: str
    co_uses: int
    episodes: int
    due: bool
    reason: str = ""


@dataclass
class Attempt:
    """What one merge attempt did; `replayed` names each child's episodes replayed."""

    group: list[str]
    result: Result
    reason: str = ""
    new: str = ""
    co_uses: int = 0
    tokens: int = 0
    candidate_tokens: int = 0
    dropped: int = 0
    replays: list[_replay.Replayed] = field(default_factory=list)
    replayed: dict[str, list[str]] = field(default_factory=dict)
    preserve: list[str] = field(default_factory=list)
    held_out: dict[str, int] | None = None
    demoted: bool = False  # accepted, then demoted: a held-out replay failed it


# -- what is due ---------------------------------------------------------------------------


def last_attempts(store: Store) -> dict[str, int]:
    """Each group's co-uses when it was last attempted (from the event log), by its key."""
    out: dict[str, int] = {}
    for e in read_events(store.primary.events, kind="merge"):
        if e.get("attempted") and isinstance(e.get("group"), list):
            out[",".join(e["group"])] = int(e.get("co_uses") or 0)
    return out


def _hints(store: Store, key: str) -> list[str]:
    """What the failing replays of earlier attempts at the group `key` found missing."""
    out: list[str] = []
    for e in read_events(store.primary.events, kind="merge"):
        if ",".join(e.get("group") or []) == key:
            out += [h for h in e.get("preserve") or [] if isinstance(h, str) and h not in out]
    return out


def _kin(row: Row, within: str) -> str:
    """The key an apex groups under: its scope, and its family with `merge.within: family`.
    Lessons filed under no subject (`general`) share no family: each is its own."""
    if within != "family":
        return str(row["scope"])
    family = row["family"] if row["family"] != "general" else f"general:{row['apex']}"
    return f"{row['scope']}/{family}"


def candidates(store: Store) -> list[Candidate]:
    """Every group of apexes at `merge.min_co_uses`, with whether it is due and, if not,
    why; then the pairs used together less often (at most `NEAR`), none of them due."""
    cfg = store.config.merge
    tried = last_attempts(store)
    out = []
    with store.graph() as g:
        uses, scope = _groups.usage(g.q("apex_uses"))
        served = _groups.served_usage(g.q("apex_served")) if cfg.together == "served" else None
        if cfg.within == "family" or served is not None:
            kin = g.q("apex_families")
            scope = {r["apex"]: _kin(r, cfg.within) for r in kin}
        found = _groups.groups(
            uses,
            scope,
            min_co_uses=cfg.min_co_uses,
            max_children=cfg.max_children,
            served=served,
        )
        below = _groups.near(uses, scope, min_co_uses=cfg.min_co_uses, limit=NEAR, served=served)
        titles = {a["id"]: a["title"] for a in g.q("apexes", scope="")}
        for grp in [*found, *below]:
            cases = {m_: _replay.cases(g.q("regression_set", id=m_)) for m_ in grp.members}
            row = Candidate(
                members=list(grp.members),
                titles=[titles.get(m_, "") for m_ in grp.members],
                scope=grp.scope.split("/", 1)[0],
                co_uses=grp.co_uses,
                episodes=len({c.episode for cs in cases.values() for c in cs}),
                due=True,
            )
            shared = set.intersection(*({p["id"] for p in g.q("parents_of", id=m_)}
                                        for m_ in grp.members))  # fmt: skip
            merged = [r["lesson"]["id"] for r in g.q("lesson_get", ids=sorted(shared))
                      if r["lesson"]["origin"] == "merge"
                      and r["lesson"]["status"] != "demoted"]  # fmt: skip
            bare = [m_ for m_ in grp.members if not cases[m_]]
            wins = {r["lesson"]["id"]: r["lesson"]["successes"] or 0
                    for r in g.q("lesson_get", ids=bare)} if bare else {}  # fmt: skip
            after = store.config.compress.claims_after
            if (
                cfg.together == "served"
                and len(bare) < len(grp.members)
                and all(keeps_claims(wins.get(m_, 0), after) for m_ in bare)
            ):
                # Served together with siblings that did the work: the merger must state its
                # every claim (`keep_claims`), so nothing it says is lost, and the replays of
                # the siblings' episodes check the parent serves in their place.
                bare = []
            if grp.co_uses < cfg.min_co_uses:
                row.reason = (
                    f"{'served' if cfg.together == 'served' else 'used'} together on"
                    f" {grp.co_uses} successful episode"
                    f"{'s' if grp.co_uses != 1 else ''} of the {cfg.min_co_uses} needed"
                    " (merge.min_co_uses)"
                )
            elif merged:
                row.reason = f"already share the merge parent {merged[0]}"
            elif grp.key in tried and grp.co_uses <= tried[grp.key]:
                row.reason = "no new co-use since its last attempt"
            elif bare:
                row.reason = f"no recorded episode to replay under {bare[0]}"
            row.due = not row.reason
            out.append(row)
    return out


# -- one attempt ---------------------------------------------------------------------------


def merge_due(
    store: Store,
    *,
    judge: Judge,
    prober: _replay.Prober | None = None,
    limit: int | None = None,
    dry_run: bool = False,
) -> list[Attempt]:
    """Attempt every group due for a merge (at most `limit`), one after another. The groups
    of one pass share no member, so one merge never makes another's group stale."""
    with _lock.rewriting(store):
        due = [c for c in candidates(store) if c.due]
        return [
            _attempt(store, row, judge=judge, prober=prober, dry_run=dry_run)
            for row in (due[:limit] if limit is not None else due)
        ]


def _record(store: Store, children: list[Node]) -> tuple[dict[str, _sample.Split], list[str]]:
    """Each child's split of its regression set (as its own compression draws it), and the
    spans observed doing work anywhere in the children's subtrees: a lesson compressed since
    it was used has none of its own yet, and the spans of its original still say what did
    the work."""
    cfg = store.config.compress
    with store.graph() as g:
        rows = {c.id: g.q("regression_set", id=c.id) for c in children}
        below = [r["id"] for c in children for r in g.q("subtree", id=c.id)]
        found = {r["lesson"]["id"]: r["lesson"] for r in g.q("lesson_get", ids=below)}
    spans = [s for i in below for s in found[i].get("load_bearing") or []]
    splits = {
        i: _sample.split(i, _replay.cases(r), sample=cfg.sample, held_out=cfg.held_out)
        for i, r in rows.items()
    }
    return splits, _unique(spans)


def _union(splits: dict[str, _sample.Split], k: int) -> dict[str, list[_replay.Case]]:
    """Up to `k` (at least one per child) of the children's samples, taken in turn. An
    episode one child holds out is held out from the merge, whichever child it came with,
    unless that would leave a child with nothing to replay."""
    held = {c.episode for split in splits.values() for c in split.held_out}
    pools = {
        i: [c for c in s.sample if c.episode not in held] or s.sample for i, s in splits.items()
    }
    out: dict[str, list[_replay.Case]] = {i: [] for i in pools}
    k = max(k, len(pools))
    for depth in range(max(map(len, pools.values()), default=0)):
        for child, pool in pools.items():
            if depth < len(pool) and sum(map(len, out.values())) < k:
                out[child].append(pool[depth])
    return out


def _attempt(
    store: Store, due: Candidate, *, judge: Judge, prober: _replay.Prober | None, dry_run: bool
) -> Attempt:
    children = [store.get(i) for i in due.members]
    key = ",".join(due.members)
    prober = prober or _replay.FreshProcess.for_store(store, timeout_s=judge.timeout_s)
    splits, evidence = _record(store, children)
    sample = _union(splits, store.config.compress.sample)
    attempt = Attempt(group=list(due.members), result="failed", co_uses=due.co_uses)
    attempt.tokens = sum(tokens.count(c.body) for c in children)
    served = store.config.merge.budget == "served"
    # Served: the parent is served in its children's place, in one frame instead of theirs.
    frames = [_served(c) - tokens.count(c.body) for c in children]
    room = attempt.tokens + sum(frames) - max(frames) if served else attempt.tokens
    preserve = _unique([p for c in children for p in c.preserve] + _hints(store, key))
    ctx = m.MergeContext(
        lessons=[_replay.lesson(c) for c in children],
        budget_tokens=max(1, room - 1),
        evidence=evidence,
        preserve=preserve,
        keep_claims=[
            c.id
            for c in children
            if keeps_claims(c.stats.successes, store.config.compress.claims_after)
        ],
    )
    try:
        answer = judge.ask(MERGE, ctx)
    except MODEL_FAILURES as exc:
        attempt.reason = f"the merger failed: {exc}"
        if not dry_run:
            _log(store, attempt, attempted=False)
        return attempt
    attempt.candidate_tokens = tokens.count(answer.body)
    attempt.dropped = len(answer.dropped)
    parent = Node(
        id=store.unused_id("merge", *due.members, answer.body),
        family=answer.family,
        title=answer.title,
        gist=answer.gist,
        body=answer.body,
        level=max(c.level for c in children) + 1,
        origin="merge",
        provenance=farthest([c.provenance for c in children]),
        accepted=_accepted(children),
        derived_from=list(due.members),
        dropped=[
            Claim(claim=d.claim, kind=d.kind, holder=d.holder.strip()) for d in answer.dropped
        ],
        preserve=preserve,
        patches=_unique([p for c in children for p in c.patches]),
        scope=children[0].scope,
    )
    attempt.reason = _refusal(attempt, parent, children, keep_claims=ctx.keep_claims, served=served)
    if not attempt.reason:
        for child in children:
            cases = sample[child.id]
            attempt.replayed[child.id] = [c.episode for c in cases]
            attempt.replays += _replay.replay(
                judge, prober, _replay.lesson(child), _replay.lesson(parent), cases
            )
        failed = [r for r in attempt.replays if not r.passed]
        if failed:
            attempt.reason = f"{len(failed)} of {len(attempt.replays)} replays failed"
            attempt.preserve = _replay.hints(failed, have=preserve)
    attempt.result = "rejected" if attempt.reason else "accepted"
    undecided = _replay.undecided(attempt.replays)
    if undecided:
        attempt.result, attempt.reason, attempt.preserve = "failed", undecided, []
        if not dry_run:
            _log(store, attempt, attempted=False)
        return attempt
    if dry_run:
        attempt.result = "dry-run"
        attempt.reason = attempt.reason or "would be accepted"
        return attempt
    if attempt.result == "accepted":
        for child in children:
            child.status = "superseded"
            child.parents = [*child.parents, parent.id]
        store.write([parent, *children])
        attempt.new = parent.id
        held = _held_out(judge, prober, children, parent, splits)
        attempt.held_out = _replay.held_out(held) if held else None
        failed = _replay.failed(held)
        if failed:
            attempt.preserve = _replay.hints(failed, have=preserve)
            episodes = [r.episode for r in failed]
            attempt.demoted = demote.held_out_failed(store, parent.id, episodes) is not None
    _log(store, attempt, attempted=True)
    return attempt


def _served(node: Node) -> int:
    """The tokens `node` costs as recall serves it in full, frame included."""
    from rose.store import view

    row = {
        "id": node.id, "level": node.level, "scope": node.scope, "title": node.title,
        "body": node.body, "gist": node.gist, "patches": node.patches, "conflict": node.conflict,
    }  # fmt: skip
    return tokens.count(view.fragments(row)[0])


def _refusal(
    attempt: Attempt,
    parent: Node,
    children: list[Node],
    *,
    keep_claims: list[str],
    served: bool = False,
) -> str:
    """Why the merged parent is refused before any replay, or ""."""
    ids = [c.id for c in children]
    stray = [c for c in parent.dropped if c.holder not in ids]
    if stray:
        return (
            f"a dropped claim names {stray[0].holder!r} as its holder, which is not one of the "
            f"children ({', '.join(ids)}): it could never be put back"
        )
    lost = claims_dropped(parent.dropped, keep_claims)
    if lost:
        return (
            f"left out a claim of {lost[0].holder} ({lost[0].claim[:80]!r}), which has too "
            "few attributed successes to show it is not needed (compress.claims_after)"
        )
    before, after = attempt.tokens, attempt.candidate_tokens
    if served:
        cost, costs = _served(parent), sum(_served(c) for c in children)
        if cost >= costs:
            return (
                f"not smaller than its children as served: {cost} tokens, and {costs} for "
                "them together"
            )
    elif after >= before:
        return f"not smaller than its children: {after} tokens, and {before} for them together"
    largest = max(tokens.count(c.body) for c in children)
    if not parent.dropped and after <= largest * (1 - UNDER_REPORTED):
        return (
            f"under-reported: {after} tokens against {largest} for its largest child, "
            f"{UNDER_REPORTED:.0%} or more shorter, and no dropped claim declared"
        )
    return ""


def _held_out(
    judge: Judge,
    prober: _replay.Prober,
    children: list[Node],
    parent: Node,
    splits: dict[str, _sample.Split],
) -> list[_replay.Replayed]:
    """Each child's held-out episodes replayed against the parent, that child the reference."""
    return [
        r
        for c in children
        for r in _replay.replay(
            judge, prober, _replay.lesson(c), _replay.lesson(parent), splits[c.id].held_out
        )
    ]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _log(store: Store, attempt: Attempt, *, attempted: bool) -> None:
    store.log(
        "merge",
        {
            "group": attempt.group,
            "attempted": attempted,
            "co_uses": attempt.co_uses,
            "result": attempt.result,
            "reason": attempt.reason[:300],
            "new": attempt.new,
            "tokens": attempt.tokens,
            "candidate_tokens": attempt.candidate_tokens,
            "dropped": attempt.dropped,
            "replays": len(attempt.replays),
            **_replay.unrun_fields(attempt.replays),
            "replayed": attempt.replayed,
            "preserve": attempt.preserve,
            "held_out": attempt.held_out,
            "demoted": attempt.demoted,
        },
    )


def merge_summary(store: Store) -> dict[str, int]:
    """Accepted and rejected merges, and how many of the accepted a held-out replay
    demoted, from the event log."""
    events = read_events(store.primary.events, kind="merge")
    done = [e.get("result") for e in events]
    demoted = sum(bool(e.get("demoted")) for e in events if e.get("result") == "accepted")
    return {
        "accepted": done.count("accepted"),
        "rejected": done.count("rejected"),
        "demoted": demoted,
    }


def _accepted(children: list[Node]) -> bool:
    """A parent drawn from outside content is accepted when every outside child was."""
    outside = [c for c in children if c.provenance == "outside"]
    return bool(outside) and all(c.accepted for c in outside)

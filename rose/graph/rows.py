"""Lessons and episodes to graph rows and back: flat columns, no None anywhere."""

from __future__ import annotations

from datetime import datetime

from rose import tokens
from rose.models import Claim, Episode, Node, Stats, shown_title


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def lesson_row(node: Node, path: str) -> dict:
    s = node.stats
    # Token counts are of what is injected: no title where it only repeats the text below it.
    full_title = shown_title(node.title, node.body or node.gist)
    gist_title = shown_title(node.title, node.gist)
    return {
        "id": node.id,
        "scope": node.scope,
        "family": node.family,
        "title": node.title,
        "gist": node.gist,
        "provisional": list(node.provisional),
        "body": node.body,
        "level": node.level,
        "status": node.status,
        "origin": node.origin,
        "conflict": node.conflict,
        "tokens": tokens.count(full_title) + tokens.count(node.body),
        "gist_tokens": tokens.count(gist_title) + tokens.count(node.gist),
        "derived_ids": list(node.derived_from),
        "parent_ids": list(node.parents),
        "covers": list(node.covers_tasks),
        "dispute_ids": list(node.disputes),
        "preserve": list(node.preserve),
        "load_bearing": list(node.load_bearing),
        "patches": list(node.patches),
        "attempts": s.attempts,
        "successes": s.successes,
        "failures": s.failures,
        "expansions": s.expansions,
        "rescues": s.rescues,
        "last_used": _iso(s.last_used),
        "created": _iso(node.created),
        "updated": _iso(node.updated),
        "path": path,
    }


def claim_rows(node: Node) -> list[dict]:
    return [
        {
            "id": f"{node.id}#{i}",
            "owner": node.id,
            "pos": i,
            "claim": c.claim,
            "kind": c.kind,
            "holder": c.holder,
            "tokens": tokens.count(c.claim),
        }
        for i, c in enumerate(node.dropped)
    ]


def node_from_row(row: dict, claims: list[dict]) -> Node:
    return Node(
        id=row["id"],
        family=row["family"],
        title=row["title"],
        gist=row["gist"],
        provisional=row["provisional"],
        body=row["body"],
        level=row["level"],
        status=row["status"],
        origin=row["origin"],
        conflict=row["conflict"],
        disputes=row["dispute_ids"],
        derived_from=row["derived_ids"],
        parents=row["parent_ids"],
        covers_tasks=row["covers"],
        dropped=[Claim(claim=c["claim"], kind=c["kind"], holder=c["holder"]) for c in claims],
        preserve=row["preserve"],
        load_bearing=row["load_bearing"],
        patches=row["patches"],
        scope=row["scope"],
        stats=Stats(
            attempts=row["attempts"],
            successes=row["successes"],
            failures=row["failures"],
            expansions=row["expansions"],
            rescues=row["rescues"],
            last_used=row["last_used"] or None,
        ),
        created=row["created"],
        updated=row["updated"],
    )


def episode_row(ep: Episode, scope: str, path: str) -> dict:
    return {
        "id": ep.id,
        "scope": scope,
        "prompt": ep.prompt,
        "outcome": ep.outcome,
        "served_ids": list(ep.served),
        "used_ids": list(ep.used),
        "accepted_summary": ep.accepted_summary,
        "session": ep.session,
        "time": _iso(ep.time),
        "path": path,
    }


def episode_from_row(row: dict) -> Episode:
    return Episode(
        id=row["id"],
        prompt=row["prompt"],
        outcome=row["outcome"],
        served=row["served_ids"],
        used=row["used_ids"],
        accepted_summary=row["accepted_summary"],
        session=row["session"],
        time=row["time"],
    )

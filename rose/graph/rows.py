"""Lessons and episodes to graph rows and back: flat columns, no None anywhere."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rose import tokens
from rose.models import Claim, ClaimRef, Episode, Miss, Node, Span, Stats, claim_id, shown_title

if TYPE_CHECKING:
    from rose.graph.engine import Graph

#: Up to this many rows a statement runs once per row, finding it by its key (`*_one`): the
#: batch forms join with every row of the table (~5 ms each at 10,000 lessons, the keyed
#: ones under 1 ms), which pays only for larger batches.
SMALL = 4


def lessons_get(g: Graph, ids: list[str]) -> list[dict]:
    """`lesson_get` rows for `ids`, in their order (each once), each found by its key when
    they are few: what a caller gives a model in this order reads the same at every size."""
    if len(ids) > SMALL:
        found = {r["lesson"]["id"]: r for r in g.q("lesson_get", ids=ids)}
        return [found[i] for i in dict.fromkeys(ids) if i in found]
    rows = []
    for i in dict.fromkeys(ids):
        for r in g.q("lesson_get_one", id=i):
            text = g.q("lesson_text_one", id=i)
            r["lesson"]["body"] = text[0]["body"] if text else ""
            rows.append(r)
    return rows


# Episode lists of pairs are stored as "lesson|value" strings (ids never hold a '|').
_SEP = "|"


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def lesson_row(node: Node, path: str) -> dict:
    """The lesson's columns; what was observed of it (stats, covers, load-bearing spans) starts
    empty and is folded from the episodes by the same sync (`fold_*` queries)."""
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
        "provenance": node.provenance,
        "held": node.held,
        "accepted": node.accepted,
        "conflict": node.conflict,
        "tokens": tokens.count(full_title) + tokens.count(node.body),
        "gist_tokens": tokens.count(gist_title) + tokens.count(node.gist),
        "derived_ids": list(node.derived_from),
        "parent_ids": list(node.parents),
        "covers": [],
        "dispute_ids": list(node.disputes),
        "preserve": list(node.preserve),
        "load_bearing": [],
        "patches": list(node.patches),
        "patch_ids": [claim_id(node.id, p) for p in node.patches],
        "patch_rescues": [],
        "attempts": 0,
        "successes": 0,
        "failures": 0,
        "expansions": 0,
        "rescues": 0,
        "last_used": "",
        "created": _iso(node.created),
        "updated": _iso(node.updated),
        "path": path,
    }


def claim_rows(node: Node) -> list[dict]:
    """One row per dropped claim, keyed by `claim_id` (a claim stated twice is one claim)."""
    rows: dict[str, dict] = {}
    for i, c in enumerate(node.dropped):
        rows.setdefault(claim_id(node.id, c.claim), {"pos": i, "claim": c})
    return [
        {
            "id": cid,
            "owner": node.id,
            "pos": r["pos"],
            "claim": r["claim"].claim,
            "kind": r["claim"].kind,
            "holder": r["claim"].holder,
            "tokens": tokens.count(r["claim"].claim),
        }
        for cid, r in rows.items()
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
        provenance=row.get("provenance") or "",
        held=row.get("held") or "",
        accepted=bool(row.get("accepted")),
        conflict=row["conflict"],
        disputes=row["dispute_ids"],
        derived_from=row["derived_ids"],
        parents=row["parent_ids"],
        covers_tasks=row["covers"] or [],
        dropped=[Claim(claim=c["claim"], kind=c["kind"], holder=c["holder"]) for c in claims],
        preserve=row["preserve"],
        load_bearing=row["load_bearing"] or [],
        patches=row["patches"],
        scope=row["scope"],
        stats=Stats(
            attempts=row["attempts"],
            successes=row["successes"],
            failures=row["failures"],
            expansions=row["expansions"],
            rescues=row["rescues"],
            patch_rescues={p: int(n) for p, n in _pairs(row["patch_rescues"])},
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
        "unused_ids": list(ep.unused),
        "causes": [f"{lesson}{_SEP}{cause}" for lesson, cause in ep.causes.items()],
        "recall": ep.recall,
        "rule_ids": list(ep.rules),
        "attributed_by": list(ep.attributed_by),
        "accepted_summary": ep.accepted_summary,
        "session": ep.session,
        "turn": ep.turn,
        "citation_ids": list(ep.citations),
        "load_bearing": [f"{s.lesson}{_SEP}{s.span}" for s in ep.load_bearing],
        "expanded": [f"{x.lesson}{_SEP}{x.claim}" for x in ep.expansions],
        "rescued": [f"{x.lesson}{_SEP}{x.claim}" for x in ep.rescues],
        "patch_rescued": [f"{x.lesson}{_SEP}{x.claim}" for x in ep.patch_rescues],
        "missed": [f"{m.lesson}{_SEP}{m.by}{_SEP}{','.join(m.rules)}" for m in ep.misses],
        "miss_rules": [r for m in ep.misses for r in m.rules],
        "time": _iso(ep.time),
        "path": path,
    }


def _pairs(values: list[str] | None) -> list[tuple[str, str]]:
    out = []
    for v in values or []:
        first, sep, rest = v.partition(_SEP)
        if sep:
            out.append((first, rest))
    return out


def spans_by_lesson(rows: list[dict]) -> dict[str, list[str]]:
    """`spans_of` rows as each lesson's load-bearing spans, oldest report first, once each."""
    out: dict[str, list[str]] = {}
    for row in rows:
        for lesson, span in _pairs(row["spans"]):
            if lesson == row["id"] and span not in out.setdefault(lesson, []):
                out[lesson].append(span)
    return out


def episode_from_row(row: dict) -> Episode:
    return Episode(
        id=row["id"],
        prompt=row["prompt"],
        outcome=row["outcome"],
        served=row["served_ids"],
        used=row["used_ids"],
        unused=row["unused_ids"] or [],
        causes=dict(_pairs(row["causes"])),
        recall=row["recall"] or "",
        rules=row.get("rule_ids") or [],
        attributed_by=row["attributed_by"] or [],
        accepted_summary=row["accepted_summary"],
        session=row["session"],
        turn=row["turn"] or 0,
        citations=row["citation_ids"] or [],
        load_bearing=[Span(lesson=a, span=b) for a, b in _pairs(row["load_bearing"])],
        expansions=[ClaimRef(lesson=a, claim=b) for a, b in _pairs(row["expanded"])],
        rescues=[ClaimRef(lesson=a, claim=b) for a, b in _pairs(row["rescued"])],
        patch_rescues=[ClaimRef(lesson=a, claim=b) for a, b in _pairs(row["patch_rescued"])],
        misses=_misses(row.get("missed")),
        time=row["time"],
    )


def _misses(values: list[str] | None) -> list[Miss]:
    out = []
    for lesson, rest in _pairs(values):
        by, _, rules = rest.partition(_SEP)
        if by in ("rule", "relevance", "budget"):
            out.append(Miss(lesson=lesson, by=by, rules=[r for r in rules.split(",") if r]))
    return out


def episode_folds(row_or_ep: dict | Episode) -> tuple[dict[str, set[str]], set[str]]:
    """What an episode (a model or an `Episode` row) moves when it comes or goes: for each
    fold (`rose.graph.sync._fold`; "spans" is the load-bearing spans) the lessons whose
    record it recomputes, and the dropped claims it says rescued a failure (their holders'
    rescue counts move too: the graph knows who holds them). What it served alone moves
    nothing: no fold counts a serving."""
    row = row_or_ep if isinstance(row_or_ep, dict) else episode_row(row_or_ep, "", "")
    used = set(row["used_ids"] or [])
    spans = used | {a for a, _ in _pairs(row["load_bearing"])}
    expanded = {a for a, _ in _pairs(row["expanded"])}
    rescued = _pairs(row["rescued"])
    patched = {a for a, _ in _pairs(row["patch_rescued"])}
    folds = {
        "fold_use": used,
        "fold_expansions": expanded,
        "fold_rescues": patched,  # and the rescued claims' holders
        "fold_claim_rescues": {a for a, _ in rescued},  # their owners (and holders)
        "fold_patch_rescues": patched,
        "spans": spans,
    }
    return folds, {b for _, b in rescued}

"""What `rose status` reports: counts, precision and how often counterfactual checks agree
with attribution, levels, apexes, compressions and merges (and those a held-out replay
demoted), knowledge gaps, trial patches kept and dropped, store health, jobs and model
spend."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from rose.events import read_events
from rose.graph.engine import version
from rose.inspect.precision import precision
from rose.jobs.queue import summary as jobs_summary
from rose.loop.abstraction.compress import held_out_summary
from rose.loop.abstraction.descend import knowledge_gaps
from rose.loop.abstraction.merge import merge_summary
from rose.loop.abstraction.trial import summary as trial_summary
from rose.loop.reflection.consolidate import captured
from rose.loop.reflection.counterfactual import agreement
from rose.models import SERVABLE, Stats
from rose.store import health
from rose.store.facade import Store


def status(store: Store) -> dict[str, Any]:
    with store.graph() as g:
        families = g.q("families")
        levels = g.q("level_counts")
        episodes = g.q("episode_count")[0]
        used_of_served = precision(g)
        apexes = g.q("apexes", scope="")
        conflicts = g.q("conflicts")
        waiting = g.q("lessons_waiting")
        unreconciled = len(g.q("unreconciled"))
        problems = [{"path": p.path, "reason": p.reason} for p in health.problems(store, g)]
        problems += never_served(g, store.config.recall.max_pack_tokens)
    ledger = jobs_summary(store.primary)
    problems += [
        {"path": f"jobs/{u['id']}", "reason": f"learning from session {u['session']} failed: "
         f"{u['reason']} (`rose jobs --retry`)"}
        for u in ledger["unlearnt"]
    ]  # fmt: skip
    by_level: dict[str, int] = {}
    by_status: dict[str, int] = {}
    for r in levels:
        by_level[str(r["level"])] = by_level.get(str(r["level"]), 0) + r["n"]
        by_status[r["status"]] = by_status.get(r["status"], 0) + r["n"]
    return {
        "store": {
            "project": str(store.project.root) if store.project else None,
            "global": str(store.global_.root) if store.global_ else None,
            "engine": store.engine,
            "engine_version": version(store.engine),
            "graph": str(store.graph_path),
        },
        "lessons": sum(by_level.values()),
        "active_lessons": sum(by_status.get(s, 0) for s in SERVABLE),
        "episodes": episodes["n"],
        "successful_episodes": episodes["successes"],
        "precision": used_of_served,
        "counterfactual": agreement(store),
        "families": [
            {"family": f["family"], "lessons": f["lessons"], "max_level": f["max_level"]}
            for f in families
        ],
        "levels": by_level,
        "statuses": by_status,
        "apexes": [
            {
                "id": a["id"],
                "title": a["title"],
                "scope": a["scope"],
                "family": a["family"],
                "level": a["level"],
                "tokens": a["tokens"],
                "success_rate": _rate(a),
            }
            for a in apexes
        ],
        "conflicts": len(conflicts),
        "review": {
            "held": sum(r["status"] == "quarantined" for r in waiting),
            "outside": sum(r["status"] != "quarantined" for r in waiting),
        },
        "captured": captured(store.primary.events, unreconciled=unreconciled),
        "compression": held_out_summary(store),
        "merges": merge_summary(store),
        "knowledge_gaps": knowledge_gaps(store.primary.events),
        "trial_patches": trial_summary(store.primary.events),
        "misses": misses(store.primary.events),
        "transcripts": transcript_reads(store.primary.events),
        "health": {"ok": not problems, "problems": problems},
        "config": {
            "ok": not store.config.problems,
            "problems": [
                {"source": p.source, "key": p.key, "message": p.message}
                for p in store.config.problems
            ],
        },
        "jobs": ledger,
        "graph_server": graph_server(store.graph_path),
        "spend": spend(store.primary.events),
    }


def graph_server(path: Path) -> dict[str, Any] | None:
    """The graph server keeping this store's database open (`graph.keep_open_s`), or None.

    It is found by the holder note beside this database, and shown only when it says it
    holds this database: another store's server is never reported as this one's."""
    from rose.graph import server

    try:
        reply = server.status(path)
    except OSError:
        return None
    held = reply.get("path") if reply else None
    if not isinstance(held, str) or os.path.realpath(held) != os.path.realpath(path):
        return None
    return reply


def never_served(g: Any, budget: int) -> list[dict[str, str]]:
    """Servable lessons too large to serve even alone (the budget, or what a host passes on).

    Only lessons near the bound are rendered to be measured exactly: a large store of
    ordinary lessons costs one listing.
    """
    from rose.store import view as recall_view

    near = (min(budget, recall_view.HOST_CHARS // 4) - 100) // 2  # frame, patches: generously
    rows = [r for r in g.q("lessons_all") if r["status"] in SERVABLE and r["tokens"] >= near]
    if not rows:
        return []
    paths = {r["id"]: r["path"] for r in rows}
    out = []
    for r in g.q("lesson_get", ids=sorted(paths)):
        why = recall_view.budget_warning(r["lesson"], budget)
        if why:
            out.append({"path": paths[r["lesson"]["id"]], "reason": why})
    return sorted(out, key=lambda p: p["path"])


def misses(events: Path) -> dict[str, Any]:
    """What selection learnt from its misses (the event log): lessons the work needed that
    recall held and did not serve, by what kept them out; lines rewritten for them; rules
    retired."""
    from rose.events import read_events

    found = read_events(events, kind="miss")
    by = {k: sum(1 for e in found if e.get("by") == k) for k in ("rule", "relevance", "budget")}
    retired = [e for e in read_events(events, kind="route") if e.get("retired") is not None
               and isinstance(e.get("retired"), str)]  # fmt: skip
    return {
        "misses": len(found),
        "by": by,
        "relined": len(read_events(events, kind="reline")),
        "rules_retired": len(retired),
    }


def transcript_reads(events: Path) -> dict[str, Any]:
    """Transcript reads a cap or a deadline cut (the rest was read by the next one), and
    transcript paths the hooks and jobs refused or could not read, with the latest cut."""
    cuts = read_events(events, kind="transcript-cut")
    last = cuts[-1] if cuts else {}
    keys = ("time", "session", "path", "offset", "reached", "by", "unread")
    return {
        "cut": len(cuts),
        "unreadable": len(read_events(events, kind="transcript-unreadable")),
        "last_cut": {k: last.get(k) for k in keys} if last else None,
    }


def spend(events: Path, *, hours: float = 24) -> dict[str, Any]:
    """The model calls the judge logged in the last `hours`, with their tokens and dollars.

    Only what a backend measured counts as spend. A cached judgement made no call. A
    simulated backend's invented figures (its events carry `simulated`) are summed apart
    and never added in. `cost_reported` is false when no call reported a cost (codex and
    the scripted backend report none), so 0 dollars is not mistaken for free.
    """
    since = time.time() - hours * 3600
    out: dict[str, Any] = {
        "hours": hours,
        "calls": 0,
        "failed": 0,
        "cached": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "cost_reported": False,
        "simulated": {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0},
    }
    for event in read_events(events, kind="judge"):
        if _epoch(event.get("time")) < since:
            continue
        if event.get("cached"):
            out["cached"] += 1
            continue
        sim = event.get("simulated")
        if isinstance(sim, dict):
            out["simulated"]["calls"] += 1
            _add(out["simulated"], sim)
        else:
            out["calls"] += 1
            out["failed"] += bool(event.get("error"))
        _add(out, event)
        out["cost_reported"] = out["cost_reported"] or _number(event.get("cost_usd")) > 0
    out["cost_usd"] = round(out["cost_usd"], 6)
    out["simulated"]["cost_usd"] = round(out["simulated"]["cost_usd"], 6)
    return out


def _add(into: dict[str, Any], figures: dict) -> None:
    into["input_tokens"] += int(_number(figures.get("input_tokens")))
    into["output_tokens"] += int(_number(figures.get("output_tokens")))
    into["cost_usd"] += _number(figures.get("cost_usd"))


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _epoch(iso: object) -> float:
    try:
        return datetime.fromisoformat(str(iso)).timestamp()
    except ValueError:
        return 0.0


def _rate(row: dict) -> float | None:
    rate = Stats(successes=row["successes"], failures=row["failures"]).success_rate
    return None if rate is None else round(rate, 3)

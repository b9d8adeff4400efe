"""What `rose status` reports: counts, levels, apexes and store health."""

from __future__ import annotations

from typing import Any

from rose.graph.engine import version
from rose.models import Stats
from rose.store.facade import Store


def status(store: Store) -> dict[str, Any]:
    with store.graph() as g:
        families = g.q("families")
        levels = g.q("level_counts")
        episodes = g.q("episode_count")[0]
        apexes = g.q("apexes", scope="")
        conflicts = g.q("conflicts")
        problems = store.problems(g)
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
        "episodes": episodes["n"],
        "successful_episodes": episodes["successes"],
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
        "health": {
            "ok": not problems,
            "problems": [{"path": p.path, "reason": p.reason} for p in problems],
        },
    }


def _rate(row: dict) -> float | None:
    rate = Stats(successes=row["successes"], failures=row["failures"]).success_rate
    return None if rate is None else round(rate, 3)

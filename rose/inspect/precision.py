"""Precision: of the lessons served, how many were used, from the episodes in the graph.

Serving is recall's decision and using is what the work showed, so used ÷ served says
how much of what recall chose bore on the work. It is counted over every episode's
served lessons (a lesson used without being served that unit is not counted), overall,
by how recall chose on that prompt (everything fit, the model chose, or it fell back)
and by the served lesson's scope, and beside it over the store's most recent episodes:
an all-time figure is diluted by the store's early days (few lessons, no routing rules),
so it cannot show whether selection is better now. Where nothing was served there is no
ratio: ``None``, never a 0 or a 100 % made of nothing.
"""

from __future__ import annotations

from typing import Any

MODES = ("fits", "judged", "degraded")
SCOPES = ("project", "global")
# The recent window, in episodes that served a lesson (one episode is one prompt's unit of
# work). 50 is a few days of an agent's prompts, short enough to move soon after lessons
# or routing rules change; at 2-5 lessons served an episode it holds 100-250 served
# lessons, a standard error of 3-5 points at 50 %, so a 10-point change shows and a run
# of a few lucky prompts does not. Episodes that served nothing say nothing of selection:
# they are skipped rather than left to shrink the sample behind the figure.
RECENT = 50


def figure(served: int, used: int) -> dict[str, Any]:
    """One ratio with the counts behind it."""
    return {
        "served": served,
        "used": used,
        "precision": round(used / served, 3) if served else None,
    }


def precision(g: Any, *, last: int = RECENT) -> dict[str, Any]:
    """Used ÷ served over the graph's episodes: overall, by recall mode and by scope, and
    over the `last` most recent episodes that served a lesson (`recent`).

    Episodes recorded before the recall mode was (or where it is not known) count in
    the overall figure and under ``unknown``, which is listed only when it has any.
    """
    rows = g.q("precision")
    return {**summarise(rows), "recent": recent(g.q("precision_recent", limit=last))}


def recent(rows: list[dict]) -> dict[str, Any]:
    """The `precision_recent` query's one row as a figure with its window's episode count."""
    r = rows[0] if rows else {}
    served, used = int(r.get("served") or 0), int(r.get("used") or 0)
    return {"episodes": int(r.get("episodes") or 0), **figure(served, used)}


def summarise(rows: list[dict]) -> dict[str, Any]:
    """The `precision` query's rows (recall, scope, served, used) as the status figures."""
    by_mode: dict[str, list[int]] = {m: [0, 0] for m in (*MODES, "unknown")}
    by_scope: dict[str, list[int]] = {s: [0, 0] for s in SCOPES}
    total = [0, 0]
    for r in rows:
        counts = (int(r["served"]), int(r["used"]))
        mode = r["recall"] if r["recall"] in MODES else "unknown"
        for into in (total, by_mode[mode], by_scope.setdefault(str(r["scope"]), [0, 0])):
            into[0] += counts[0]
            into[1] += counts[1]
    if not by_mode["unknown"][0]:
        del by_mode["unknown"]
    return {
        **figure(*total),
        "by_recall": {m: figure(*c) for m, c in by_mode.items()},
        "by_scope": {s: figure(*c) for s, c in by_scope.items()},
    }


def text(p: dict[str, Any]) -> list[str]:
    """The status lines: the overall ratio beside the recent window's (once there is one),
    then by recall mode and by scope."""

    def shown(f: dict[str, Any]) -> str:
        ratio = "—" if f["precision"] is None else f"{f['precision']:.0%}"
        return f"{ratio} ({f['used']}/{f['served']})"

    modes = "  ".join(f"{m} {shown(f)}" for m, f in p["by_recall"].items())
    scopes = "  ".join(f"{s} {shown(f)}" for s, f in p["by_scope"].items())
    last = p.get("recent") or {}
    now = f" · last {last['episodes']} episodes {shown(last)}" if last.get("episodes") else ""
    return [
        f"precision  {shown(p)} of served lessons used{now}",
        f"  by recall  {modes}",
        f"  by scope   {scopes}",
    ]

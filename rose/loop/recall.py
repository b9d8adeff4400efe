"""Recall: choose the lessons to inject for a prompt, walking the DAG from abstract to concrete.

Two gates need no model: an empty store injects nothing, and a store whose apexes
fit `recall.max_pack_tokens` is served whole. Past the budget the model decides:
the apexes of both scopes go into one `relevance` question (one line each); only
`descend` branches are opened, never an `unrelated` one; the walk is bounded by
`recall.judge_calls` and `recall.max_depth`, and whatever is still unresolved
when the budget runs out is served rather than dropped. When the model cannot
answer in time, recall falls back to the budget-ranked apexes and says so.

Every relevance question of the walk is given the selection rules (`rose.loop.route`,
capped by `routing.max_tokens`): they are never candidates and never served, and when a
gate answers without a model no rule is read at all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rose.errors import RoseError
from rose.store import shortid
from rose.store import view as recall_view
from rose.store.facade import Store

_ORDER = {"relevant": 0, "maybe": 1, "unresolved": 2, "fits": 3, "ranked": 4}


@dataclass
class Verdict:
    id: str
    title: str
    verdict: str  # relevant | maybe | unrelated | descend | unresolved
    reason: str
    depth: int


@dataclass
class RecallResult:
    chosen: list[dict] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    rounds: list[list[dict]] = field(default_factory=list)  # candidates offered per call
    decisions: list[str] = field(default_factory=list)
    degraded: str = ""
    calls: int = 0
    view: dict = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)  # ids of the selection rules given
    out_of_time: int = 0  # lessons served unjudged because the deadline was near

    @property
    def note(self) -> str:
        """What the prompt's event and the status line say of how recall fell short."""
        parts = [f"degraded: {self.degraded}"] if self.degraded else []
        if self.out_of_time:
            parts.append(f"out of time: {self.out_of_time} served unjudged")
        return " · ".join(parts)


def _ranked(items: list[dict], budget: int) -> list[dict]:
    """Without a judge: what has worked, most abstract and cheapest first, within the budget."""

    def key(item: dict) -> tuple:
        judged = item["successes"] + item["failures"]
        rate = (item["successes"] + 1) / (judged + 2)  # Laplace-smoothed observed success
        return (-rate, -item["level"], recall_view.estimate(item), item["id"])

    return _within(sorted(items, key=key), budget)


def _within(items: list[dict], room: int) -> list[dict]:
    """The items, in order, that fit `room` tokens (from `_room`); one that does not is skipped.

    Each costs its estimate plus one token for the blank line before it: the rounding of the
    parts never undercounts the joined block, so what fits here fits the block exactly.
    """
    out: list[dict] = []
    used = 0
    for item in items:
        cost = recall_view.estimate(item) + 1
        if used + cost <= room:
            out.append(item)
            used += cost
    return out


def _room(view: dict, budget: int) -> int:
    """The budget left for lessons once the block's frame (head, tail, last blank line) is paid."""
    return budget - view.get("frame_tokens", 0) - 1


def _materialise(store: Store, chosen: list[dict]) -> list[dict]:
    """Chosen lessons with their injected forms rendered, in the same order."""
    if all("full" in i for i in chosen):
        return chosen
    rows = {
        r["lesson"]["id"]: r["lesson"]
        for r in store.read("lesson_get", ids=[i["id"] for i in chosen])
    }
    shown = shortid.shortest(r["id"] for r in store.read("lesson_id_list"))
    return [
        recall_view.item(
            rows[i["id"]], shown.get(i["id"]), recall_view.sources_of(store.read, rows[i["id"]])
        )
        for i in chosen
        if i["id"] in rows
    ]


def recall(
    store: Store, prompt: str, *, judge: Any = None, deadline_s: float = 20.0
) -> RecallResult:
    """The lessons to inject for `prompt`, and how they were chosen."""
    started = time.monotonic()
    view = store.view()
    res = RecallResult(view=view)
    budget = store.config.recall.max_pack_tokens
    if not view.get("enabled", True):
        res.decisions.append("recall is disabled (recall.enabled false)")
        return res
    if view.get("empty", True):
        res.decisions.append("the store is empty: nothing to recall, no model call")
        return res
    if view["fits"]:
        res.chosen = list(view["lessons"])
        res.decisions.append(
            f"all {len(res.chosen)} apexes fit the budget ({view['total_tokens']} ≤ {budget} "
            "tokens): served whole, no model call"
        )
        return res
    res.decisions.append(
        f"apexes total {view['total_tokens']} tokens > budget {budget}: the model decides"
    )
    if judge is None:
        try:
            from rose.judge.calls import for_store

            # One call must leave room for the rest of the walk inside the deadline.
            judge = for_store(store, timeout_s=max(1.0, deadline_s * 0.6))
        except RoseError as exc:
            return _degrade(res, store, budget, f"no model ({exc})")
    try:
        _walk(store, prompt, judge, res, started, deadline_s)
    except RoseError as exc:
        return _degrade(res, store, budget, _short(exc))
    rank = {v.id: _ORDER.get(v.verdict, 9) for v in res.verdicts}
    picked = sorted(res.chosen, key=lambda item: (rank.get(item["id"], 9), -item["level"]))
    res.chosen = _within(_materialise(store, picked), _room(view, budget))
    dropped = len(picked) - len(res.chosen)
    if dropped:
        res.decisions.append(f"{dropped} chosen lesson(s) left out: over the {budget}-token budget")
    return res


def _short(exc: Exception) -> str:
    """The gist of why the model could not decide, short enough for the status line."""
    text = str(exc).split(";")[0].strip()
    return text if len(text) <= 80 else text[:77] + "..."


def _degrade(res: RecallResult, store: Store, budget: int, why: str) -> RecallResult:
    res.degraded = why
    room = _room(res.view, budget)
    ranked = _ranked(store.read("apexes", scope=""), room)
    res.chosen = _within(_materialise(store, ranked), room)
    res.decisions.append(f"degraded ({why}): served the budget-ranked apexes")
    return res


def _walk(
    store: Store, prompt: str, judge: Any, res: RecallResult, started: float, deadline_s: float
) -> None:
    from rose.loop import route

    rc = store.config.recall
    given_rules = route.for_selection(store)
    res.rules = [r.id for r in given_rules]
    rule_text = [r.text() for r in given_rules]
    if given_rules:
        res.decisions.append(f"{len(given_rules)} selection rule(s) given to each question")
    frontier = store.read("apexes", scope="")
    depth = 0
    while frontier:
        left = deadline_s - (time.monotonic() - started)
        if res.calls >= rc.judge_calls or left < min(judge.timeout_s, deadline_s) * 0.5:
            why = "judge-call budget spent" if res.calls >= rc.judge_calls else "out of time"
            for item in frontier:
                res.verdicts.append(Verdict(item["id"], item["title"], "unresolved", why, depth))
            res.chosen += frontier
            res.decisions.append(f"{len(frontier)} lesson(s) unresolved ({why}): served")
            if why == "out of time":  # the machine's speed decided: said, never silent
                res.out_of_time = len(frontier)
            return
        offered = [{"id": i["id"], "title": i["title"], "gist": i["gist"]} for i in frontier]
        res.rounds.append(offered)
        ask = {"prompt": prompt, "candidates": offered, "rules": rule_text}
        answer = judge.ask("relevance", ask)
        res.calls += 1
        by_id = {i["id"]: i for i in frontier}
        given = {v.id: v for v in answer.verdicts}
        descend: list[dict] = []
        for item in frontier:
            v = given.get(item["id"])
            verdict, reason = (v.verdict, v.reason) if v else ("maybe", "no verdict given")
            if verdict == "descend" and depth >= rc.max_depth:
                verdict, reason = "unresolved", f"max depth {rc.max_depth}: {reason}"
            res.verdicts.append(Verdict(item["id"], item["title"], verdict, reason, depth))
            if verdict in ("relevant", "maybe", "unresolved"):
                res.chosen.append(by_id[item["id"]])
            elif verdict == "descend":
                descend.append(item)
        frontier = _children(store, descend, res)
        depth += 1


def _children(store: Store, parents: list[dict], res: RecallResult) -> list[dict]:
    if not parents:
        return []
    rows = store.read("children", ids=[p["id"] for p in parents])
    seen = {i["id"] for i in res.chosen}
    out, have = [], set()
    for r in rows:
        lesson = r["lesson"]
        if lesson["id"] not in seen and lesson["id"] not in have:
            have.add(lesson["id"])
            out.append(lesson)
    for parent in parents:
        if not any(r["parent"] == parent["id"] for r in rows):  # nothing below: serve it
            res.chosen.append(parent)
            res.decisions.append(f"{parent['id']} has nothing below it: served itself")
    return out


def recall_for_hook(
    prompt: str, roots: list, cwd: str | None
) -> tuple[dict, list[dict], str, list[str]]:
    """The prompt hook's slow path: open the store with the hook's short lock deadline.

    Returns the view, the chosen lessons, the note and the ids of the rules given."""
    from pathlib import Path

    store = Store.open(Path(cwd) if cwd else None)
    store.lock_timeout_s = store.config.graph.hook_lock_timeout_s
    res = recall(store, prompt, deadline_s=_HOOK_DEADLINE_S)
    return res.view, res.chosen, res.note, res.rules


# The prompt hook's own timeout is 30 s (hooks/hooks.json); recall must finish well inside it.
_HOOK_DEADLINE_S = 15.0

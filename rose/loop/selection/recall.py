"""Recall: choose the lessons to inject for a prompt, walking the DAG from abstract to concrete.

Two gates need no model: an empty store injects nothing, and a store whose apexes fit
`recall.whole_tokens` (within `recall.max_pack_tokens`) is served whole. Past that the
model decides what bears on the prompt, packed within `recall.max_pack_tokens`, at a
bounded cost whatever the store's size: at most `recall.judge_calls` relevance calls,
each offering at most `recall.max_candidates` one-line candidates (`rose.loop.selection._walk`).
The apexes of both scopes are offered when they fit `recall.apex_chunks` calls (asked in
parallel: one round trip); past that, their families are (`rose.loop.selection.families`), then the
apexes of the families the model opens. Only
`descend` branches are opened below an apex, never an `unrelated` one; the walk is
bounded by the calls and `recall.max_depth`, and whatever is still unresolved when the
budget runs out is served (within the pack budget, ranked after what was judged) rather
than dropped. When the model cannot answer in time, recall falls back to the
budget-ranked apexes and says so.

A second pass (`recall.second_look_calls`, reported apart: `second_calls`, the trace, the
hook's note) shows the model the lessons the first pass chose and asks again about the
lines it judged unrelated: a lesson recognisable only through another one's wording (the
prompt never names its subject) is found this way. It is skipped when the first pass's
lessons already fill the pack budget, as nothing it found could be served, and, under
`recall.second_look: auto` (the default), for a store whose apexes fit one question: on
the quality benchmark's young stores it bought nothing for its call.

Every relevance question of the walk is given the selection rules (`rose.loop.selection.route`,
capped by `routing.max_tokens`): they are never candidates and never served, and when a
gate answers without a model no rule is read at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rose.errors import RoseError
from rose.files import shortid
from rose.store import view as recall_view
from rose.store.facade import Row, Store
from rose.text import shorten

if TYPE_CHECKING:
    from rose.graph.engine import Graph
    from rose.judge.base import Judge

_ORDER = {"relevant": 0, "maybe": 1, "unresolved": 2, "fits": 3, "ranked": 4}


@dataclass
class Verdict:
    id: str
    title: str
    verdict: str  # relevant | maybe | unrelated | descend | unresolved
    reason: str
    depth: int
    pass_no: int = 1  # 1: the first pass, 2: the second
    rules: list[str] = field(default_factory=list)  # the selection rules that decided it


@dataclass
class RecallResult:
    chosen: list[Row] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    rounds: list[list[Row]] = field(default_factory=list)  # candidates offered per call
    decisions: list[str] = field(default_factory=list)
    degraded: str = ""
    calls: int = 0  # the first pass's relevance calls
    view: dict[str, Any] = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)  # ids of the selection rules given
    out_of_time: int = 0  # lessons served unjudged because the deadline was near
    unjudged: set[str] = field(default_factory=set, repr=False)  # those ids, before the budget
    passes: list[int] = field(default_factory=list)  # which pass asked each of `rounds`
    second_calls: int = 0  # the second pass's relevance calls
    second_found: list[str] = field(default_factory=list)  # ids only the second pass chose
    items: dict[str, Row] = field(default_factory=dict, repr=False)  # every line offered
    # Lessons read in full (`lesson_get` rows) and the level-0 lessons below each, kept so that
    # the second pass and the rendering read each lesson once, in as few opens as they can.
    rows: dict[str, Row] = field(default_factory=dict, repr=False)
    sources: dict[str, list[str]] = field(default_factory=dict, repr=False)
    shown: dict[str, str] | None = field(default=None, repr=False)  # every lesson's short id
    over_budget: list[str] = field(default_factory=list)  # chosen, left out for the budget
    late: list[Row] = field(default_factory=list)  # relevance questions that timed out
    earlier: list[str] = field(default_factory=list)  # judged relevant late, the last prompt

    def ruled_out(self) -> dict[str, list[str]]:
        """The lessons a selection rule turned away, each with the rules' ids: those whose
        last verdict is unrelated and cites a rule (a family's verdict holds for every
        lesson in it), and that were not chosen after all."""
        chosen = {i["id"] for i in self.chosen}
        last = {v.id: v for v in self.verdicts}
        out: dict[str, list[str]] = {}
        for v in last.values():
            if v.verdict != "unrelated" or not v.rules:
                continue
            item = self.items.get(v.id, {})
            for member in item.get("members") or [{"id": v.id}]:
                if member["id"] not in chosen:
                    out.setdefault(member["id"], [])
                    out[member["id"]] += [r for r in v.rules if r not in out[member["id"]]]
        return out

    def selection(self) -> dict[str, Any]:
        """What the prompt's unit records of how its lessons were chosen (`rules`: the
        selection rules given; `ruled`: lessons they turned away; `over_budget`: lessons
        chosen and left out), for the misses a later reflection may find."""
        out: dict[str, Any] = {"rules": list(self.rules)}
        if self.late:  # for the hook to have answered after all (`rose.loop.selection.late`)
            out["late"] = list(self.late)
        ruled = self.ruled_out()
        if ruled:
            out["ruled"] = ruled
        if self.over_budget:
            out["over_budget"] = list(self.over_budget)
        return out

    @property
    def note(self) -> str:
        """What the prompt's event and the status line say of how recall fell short, and
        what a second pass added."""
        parts = [f"degraded: {self.degraded}"] if self.degraded else []
        if self.out_of_time:
            parts.append(f"out of time: {self.out_of_time} served unjudged")
        if self.second_calls:
            kept = {i["id"] for i in self.chosen}
            found = sum(1 for i in self.second_found if i in kept)
            calls = "call" if self.second_calls == 1 else "calls"
            parts.append(f"2nd pass: +{found} ({self.second_calls} {calls})")
        return " · ".join(parts)


def _ranked(items: list[Row], budget: int, first: Sequence[str] = ()) -> list[Row]:
    """Without a judge: those in `first` (judged relevant late, for the session's last
    prompt), then what has worked, most abstract and cheapest first, within the budget."""
    ahead = set(first)

    def key(item: Row) -> tuple[bool, float, int, int, str]:
        judged = item["successes"] + item["failures"]
        rate = (item["successes"] + 1) / (judged + 2)  # Laplace-smoothed observed success
        return (
            item["id"] not in ahead,
            -rate,
            -item["level"],
            recall_view.estimate(item),
            item["id"],
        )

    return _within(sorted(items, key=key), budget)


def _within(items: list[Row], room: int) -> list[Row]:
    """The items, in order, that fit `room` tokens (from `_room`); one that does not is skipped.

    Each costs its estimate plus one token for the blank line before it: the rounding of the
    parts never undercounts the joined block, so what fits here fits the block exactly.
    """
    out: list[Row] = []
    used = 0
    for item in items:
        cost = recall_view.estimate(item) + 1
        if used + cost <= room:
            out.append(item)
            used += cost
    return out


def _likely(items: list[Row], room: int) -> list[Row]:
    """The first of `items` that could fit `room` by their estimates, up to twice the room:
    rendering costs a query a compressed lesson, so a wide walk's hundreds of picks are not
    all rendered to serve the few that fit."""
    out, used = [], 0
    for item in items:
        cost = recall_view.estimate(item) + 1
        if cost <= room:
            out.append(item)
            used += cost
            if used > 2 * room:
                break
    return out


def _room(view: dict[str, Any], budget: int) -> int:
    """The budget left for lessons once the block's frame (head, tail, last blank line) is paid."""
    frame: int = view.get("frame_tokens", 0)
    return budget - frame - 1


def _materialise(store: Store, res: RecallResult, chosen: list[Row]) -> list[Row]:
    """Chosen lessons with their injected forms rendered, in the same order (one already
    rendered is kept); read in full where the walk did not read them yet."""
    if all("full" in i for i in chosen):
        return chosen
    _read(store, res, [i["id"] for i in chosen if "full" not in i])
    shown = res.shown or {}
    return [
        i
        if "full" in i
        else recall_view.item(res.rows[i["id"]], shown.get(i["id"]), res.sources[i["id"]])
        for i in chosen
        if "full" in i or i["id"] in res.rows
    ]


def _read(store: Store, res: RecallResult, ids: list[str]) -> None:
    """Read the lessons of `ids` not read yet into `res`, in one open of the graph (none
    when every one was read)."""
    if any(i not in res.rows for i in ids):
        with store.graph() as g:
            _read_in(store, g, res, ids)


def read_ahead(store: Store, res: RecallResult, ids: list[str]) -> Callable[[], None]:
    """Start `_read` of `ids` on a thread while the caller waits on the model; returns the
    wait for it. Whatever the walk chooses among them is then rendered, and shown to a
    second pass, without an open of the graph after the walk (measured at 1,000 lessons,
    19 prompts each: the median hook ~60 ms faster). A read that fails is left to the
    `_read` that needs it, which fails as before; until the wait returns, only this thread
    touches `res`'s rows."""
    need = [i for i in ids if i not in res.rows]
    if not need:
        return lambda: None
    failed: list[BaseException] = []

    def work() -> None:
        try:
            _read(store, res, need)
        except RoseError:
            pass  # read again where it is needed
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=work, name="rose-read-ahead", daemon=True)
    thread.start()

    def wait() -> None:
        thread.join()
        if failed:
            raise failed[0]

    return wait


def _read_in(store: Store, g: Graph, res: RecallResult, ids: list[str]) -> None:
    """`_read` in the open graph `g`: the rows, the short ids (once) and the level-0
    lessons below each compressed or merged one (`recall_view.sources_among`)."""
    need = [i for i in dict.fromkeys(ids) if i not in res.rows]
    if not need:
        return
    if res.shown is None:
        res.shown = shortid.shortest(r["id"] for r in g.q("lesson_id_list"))
    rows = {r["lesson"]["id"]: r["lesson"] for r in store.lesson_rows(need, g)}
    below = recall_view.sources_among(g, rows)
    for i, row in rows.items():
        res.rows[i] = row
        res.sources[i] = below.get(i, [])


def recall(
    store: Store,
    prompt: str,
    *,
    judge: Judge | None = None,
    deadline_s: float | None = None,
    earlier: Sequence[str] = (),
) -> RecallResult:
    """The lessons to inject for `prompt`, and how they were chosen, within `deadline_s`
    (default: the store's `calls.prompt_s`). `earlier`: lessons the model judged relevant
    for the session's last prompt after its deadline (`rose.loop.selection.late`): where this
    prompt's judgement falls short too, they come before the lessons no judgement reached."""
    started = time.monotonic()
    if deadline_s is None:
        deadline_s = store.config.calls.prompt_s
    view = store.view()
    res = RecallResult(view=view, earlier=list(earlier))
    budget = store.config.recall.max_pack_tokens
    if not view.get("enabled", True):
        res.decisions.append("recall is disabled (recall.enabled false)")
        return res
    if view.get("empty", True):
        res.decisions.append("the store is empty: nothing to recall, no model call")
        return res
    whole = min(budget, store.config.recall.whole_tokens)
    if view["fits"]:
        res.chosen = list(view["lessons"])
        res.decisions.append(
            f"all {len(res.chosen)} apexes fit the budget ({view['total_tokens']} ≤ {whole} "
            "tokens): served whole, no model call"
        )
        return res
    res.decisions.append(
        f"apexes total {view['total_tokens']} tokens > {whole} served whole"
        f" (recall.whole_tokens; budget {budget}): the model decides"
    )
    if judge is None:
        try:
            from rose.judge.calls import for_store

            # One call must leave room for the rest of the walk inside the deadline.
            judge = for_store(store, timeout_s=max(1.0, deadline_s * 0.6))
        except RoseError as exc:
            return _degrade(res, store, budget, f"no model ({exc})")
    from rose.loop.selection import _walk as walker

    rc = store.config.recall  # the first level's questions: the apexes', or their families'
    apexes = int(view.get("apexes") or 0)
    walker.prewarm(judge, min(rc.apex_chunks, rc.judge_calls, -(-apexes // rc.max_candidates)))
    try:
        _walk(store, prompt, judge, res, started, deadline_s)
    except RoseError as exc:
        return _degrade(res, store, budget, _short(exc))
    rank = {v.id: (_ORDER.get(v.verdict, 9), v.pass_no) for v in res.verdicts}
    for v in res.verdicts:  # unjudged now, judged relevant late for the last prompt: ahead
        if v.verdict == "unresolved" and v.id in res.earlier:
            rank[v.id] = (_ORDER["maybe"], v.pass_no)
    picked = sorted(res.chosen, key=lambda item: (*rank.get(item["id"], (9, 9)), -item["level"]))
    room = _room(view, budget)
    res.chosen = _within(_materialise(store, res, _likely(picked, room)), room)
    res.out_of_time = sum(1 for i in res.chosen if i["id"] in res.unjudged)
    kept = {i["id"] for i in res.chosen}
    res.over_budget = [i["id"] for i in picked if i["id"] not in kept]
    dropped = len(picked) - len(res.chosen)
    if dropped:
        res.decisions.append(f"{dropped} chosen lesson(s) left out: over the {budget}-token budget")
    return res


def _short(exc: Exception) -> str:
    """The gist of why the model could not decide, short enough for the status line."""
    return shorten(str(exc).split(";")[0], 80)


def _degrade(res: RecallResult, store: Store, budget: int, why: str) -> RecallResult:
    res.degraded = why
    room = _room(res.view, budget)
    ranked = _ranked(store.read("apexes", scope=""), room, res.earlier)
    res.chosen = _within(_materialise(store, res, ranked), room)
    res.decisions.append(f"degraded ({why}): served the budget-ranked apexes")
    return res


def _walk(
    store: Store, prompt: str, judge: Judge, res: RecallResult, started: float, deadline_s: float
) -> None:
    from rose.loop.selection import _walk as walker
    from rose.loop.selection import families, route

    rc = store.config.recall
    with store.graph() as g:  # one open: the rules' records, the apexes, their families
        given_rules = route.for_selection(store, g.q)
        apex_rows, family_rows = g.q("apexes", scope=""), g.q("families")
        by_family = families.needed(store, apex_rows)
        if not by_family:  # one level: any apex may be served
            _read_in(store, g, res, [r["id"] for r in apex_rows])
    res.rules = [r.id for r in given_rules]
    rule_text = [{"id": r.id, "text": r.text()} for r in given_rules]
    if given_rules:
        res.decisions.append(f"{len(given_rules)} selection rule(s) given to each question")
    apexes = families.stable(apex_rows)
    frontier = apexes
    if by_family:
        frontier = families.top_level(store, apexes, family_rows, judge)
        n_fam = sum(1 for i in frontier if families.is_family(i))
        res.decisions.append(
            f"{len(apexes)} apexes > {rc.apex_chunks} call(s) of {rc.max_candidates} lines: "
            f"offered as {n_fam} "
            f"families and {len(frontier) - n_fam} single apexes, then the families opened"
        )
    wide = len(apexes) > rc.max_candidates  # the apexes outgrow one question
    again = bool(rc.second_look_calls) and (wide or rc.second_look == "always")
    # with a second pass to come, each level of the first has one more question's CLI started
    first = walker.Walk(1, rc.judge_calls, rules=rule_text, ahead=int(again), late=res.late)
    walker.run(store, prompt, judge, res, frontier, first, started=started, deadline_s=deadline_s)
    res.calls = first.calls
    if again:
        try:
            _second_pass(store, prompt, judge, res, rule_text, started, deadline_s)
        except RoseError as exc:  # the first pass's choice stands
            res.decisions.append(f"second pass failed ({_short(exc)}): the first pass stands")


def _second_pass(
    store: Store,
    prompt: str,
    judge: Judge,
    res: RecallResult,
    rules: list[Row],
    started: float,
    deadline_s: float,
) -> None:
    """Ask again about what the first pass judged unrelated, its chosen lessons in hand."""
    from rose.loop.selection import _walk as walker
    from rose.loop.selection import families

    judged = {v.id: v.verdict for v in res.verdicts}
    found_ids = [i["id"] for i in res.chosen if judged.get(i["id"]) in ("relevant", "maybe")]
    items = [res.items[i] for i, v in judged.items() if v == "unrelated" and i in res.items]
    if not found_ids or not items:
        return
    ranked = [i for i in res.chosen if judged.get(i["id"]) in ("relevant", "maybe", "unresolved")]
    room = _room(res.view, store.config.recall.max_pack_tokens)
    if sum(recall_view.estimate(i) + 1 for i in ranked) >= room:
        res.decisions.append(
            "no second pass: the first pass's lessons fill the pack budget, so nothing it "
            "found could be served"
        )
        return
    # One open reads the lessons shown, those asked about and the first pass's others, so
    # that rendering what is served needs none (unless the walk goes below an apex).
    frontier = families.stable(items)
    asked = frontier[: _again_lines(store)]
    _read(store, res, [*found_ids, *(i["id"] for i in res.chosen),
                       *(i["id"] for i in asked if not families.is_family(i))])  # fmt: skip
    found = _found(res, found_ids, store.config.recall.max_pack_tokens)
    again = walker.Walk(
        2, store.config.recall.second_look_calls, found=found, rules=rules, late=res.late
    )
    walker.run(
        store, prompt, judge, res, frontier, again,
        started=started, deadline_s=deadline_s, again=True,
    )  # fmt: skip
    res.second_calls = again.calls
    res.second_found = list(again.chosen)
    if again.calls:
        res.decisions.append(
            f"second pass: {again.calls} call(s) with {len(found)} chosen lesson(s) shown, "
            f"{len(again.chosen)} more chosen"
        )


def _again_lines(store: Store) -> int:
    """The most lines the second pass can ask about."""
    rc = store.config.recall
    return rc.second_look_calls * rc.max_candidates


def _found(res: RecallResult, ids: list[str], budget: int) -> list[Row]:
    """The first pass's chosen lessons in full (read into `res`), in its order, while they
    fit `budget` tokens (what the block could hold at most)."""
    from rose import tokens

    rows = res.rows
    out: list[Row] = []
    used = 0
    for i in ids:
        row = rows.get(i)
        if row is None:
            continue
        body = row["body"] or row["gist"]
        cost = tokens.count(body) + tokens.count(row["title"]) + tokens.count(row["gist"])
        if out and used + cost > budget:
            break
        out.append({"id": i, "title": row["title"], "gist": row["gist"], "body": body})
        used += cost
    return out


def recall_for_hook(
    prompt: str, roots: list[tuple[str, str]], cwd: str | None, session: str = ""
) -> tuple[dict[str, Any], list[Row], str, dict[str, Any]]:
    """The prompt hook's slow path: open the store with the hook's short lock deadline.

    Returns the view, the chosen lessons, the note and how they were chosen
    (`RecallResult.selection`). `session`: whose late judgement of its last prompt counts."""
    from pathlib import Path

    from rose.loop.selection import late

    store = Store.open(Path(cwd) if cwd else None)
    store.lock_timeout_s = store.config.graph.hook_lock_timeout_s
    earlier = late.relevant(store.primary.root, session) if session else []
    # `calls.prompt_s`, inside the hook's own 30 s (hooks.json)
    res = recall(store, prompt, earlier=earlier)
    return res.view, res.chosen, res.note, res.selection()

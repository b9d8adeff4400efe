"""The agent's-eye view of recall: what was offered, each verdict, the budget, the block."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rose.loop.selection.pack import Pack, pack
from rose.loop.selection.recall import RecallResult, recall
from rose.store.facade import Store

if TYPE_CHECKING:
    from rose.judge.base import Judge


def inspect(store: Store, prompt: str, *, judge: Judge | None = None) -> tuple[RecallResult, Pack]:
    """Recall for `prompt` as a new session would see it; nothing is recorded as served."""
    res = recall(store, prompt, judge=judge)
    if not res.chosen:
        return res, Pack(note=res.note)
    result = pack(res.view, res.chosen, {"served": {}}, turn=1)
    result.note = res.note
    return res, result


def as_dict(res: RecallResult, result: Pack) -> dict:
    return {
        "lessons": [
            {"id": i["id"], "title": i["title"], "level": i["level"], "tokens": i["full_tokens"]}
            for i in res.chosen
        ],
        "verdicts": [v.__dict__ for v in res.verdicts],
        "decisions": res.decisions,
        "model_calls": res.calls,
        "second_pass_calls": res.second_calls,
        "second_pass_found": [i for i in res.second_found if i in {c["id"] for c in res.chosen}],
        "degraded": res.degraded,
        "tokens": result.tokens,
        "size": result.size,
        "packed": _packed(result),
        "status": result.status if res.chosen else "",
        "block": result.block,
    }


_FORMS = (
    ("full", "full"),
    ("refreshed", "reminder"),
    ("fresh", "in context"),
    ("deferred", "deferred"),
    ("too_big", "too big"),
)


def _packed(result: Pack) -> list[dict]:
    """Each chosen lesson, whole title, and what the block did with it."""
    return [
        {"id": i["id"], "title": i["title"], "form": form}
        for attr, form in _FORMS
        for i in getattr(result, attr)
    ]


def render(res: RecallResult, result: Pack) -> str:
    """Every stage, in order, ending with the verbatim block and the status line."""
    out = ["== budget"]
    out += [f"  {d}" for d in res.decisions]
    passes = res.passes or [1] * len(res.rounds)
    for n, (offered, number) in enumerate(zip(res.rounds, passes, strict=True), 1):
        which = " (second pass: the chosen lessons shown)" if number == 2 else ""
        out.append(f"== relevance call {n}{which}: {len(offered)} candidate(s) offered")
        out += [f"  - [{c['id']}] {c['title']} — {c['gist']}" for c in offered]
    if res.verdicts:
        out.append("== verdicts")
        for v in res.verdicts:
            again = "2nd " if v.pass_no == 2 else ""
            out.append(f"  {'  ' * v.depth}{again}{v.verdict:10} {v.id}  {v.title}: {v.reason}")
        last = {v.id: v.verdict for v in res.verdicts}  # a second pass may judge it again
        closed = [i for i, verdict in last.items() if verdict == "unrelated"]
        if closed:
            out.append(f"  never opened: {', '.join(closed)} (judged unrelated)")
    if res.chosen:
        budget = "" if result.budget is None else f" of {result.budget}"
        out.append(
            f"== packed: {result.tokens}{budget} tokens, {result.size:,} of the "
            f"{result.most:,} {result.unit} {result.host} passes on whole"
        )
        out += [f"  {p['form']:9} {p['id']}  {p['title']}" for p in _packed(result)]
    out.append("== injected block" + ("" if result.block else ": nothing"))
    if result.block:
        out.append(result.block)
    out.append("== status line")
    out.append(f"  {result.status}" if res.chosen else "  (none: nothing injected)")
    return "\n".join(out)

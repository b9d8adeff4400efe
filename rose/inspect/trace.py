"""The agent's-eye view of recall: what was offered, each verdict, the budget, the block."""

from __future__ import annotations

from typing import Any

from rose.loop.pack import Pack, pack
from rose.loop.recall import RecallResult, recall
from rose.store.facade import Store


def inspect(store: Store, prompt: str, *, judge: Any = None) -> tuple[RecallResult, Pack]:
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
    for n, offered in enumerate(res.rounds, 1):
        out.append(f"== relevance call {n}: {len(offered)} candidate(s) offered")
        out += [f"  - [{c['id']}] {c['title']} — {c['gist']}" for c in offered]
    if res.verdicts:
        out.append("== verdicts")
        for v in res.verdicts:
            out.append(f"  {'  ' * v.depth}{v.verdict:10} {v.id}  {v.title}: {v.reason}")
        closed = [v for v in res.verdicts if v.verdict == "unrelated"]
        if closed:
            out.append(f"  never opened: {', '.join(v.id for v in closed)} (judged unrelated)")
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

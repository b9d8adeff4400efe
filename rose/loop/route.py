"""Routing: selection rules, knowledge about where the knowledge was, for recall's selection.

A rule is conditioned on a kind of task ("when the task runs the integration tests: read
the testing lessons before running pytest"). Reflection proposes rules after watching a
session, and `rose route --when --then` teaches one by hand; either way the form is
judged before anything is written (`rule_form`, a model call: is it conditioned on a kind
of task, is it a verdict on one lesson), and a rule of the wrong form is refused with the
judge's reason. A rule a reflection proposes is written only once enough distinct sessions
proposed it (`routing.propose_after`, 2 by default): one session's mistake may be noise, the
same mistake on the same kind of task twice is a pattern. Rules are files under
`.rose/routing/`, never lessons: recall's own mechanism never retrieves them, and they are
given, whole, to every selection question of the relevance walk (`rose.loop.recall`),
capped by `routing.max_tokens`. When the store fits the budget there is no selection, so
rules cost nothing.

Each rule's record is counted from the episodes whose selection was given it (the prompt
hook logs the rule ids with the unit; absorption writes them into the episode): the
selections it took part in, the lessons they served and how many of those were used.
When the cap binds, the rules with the worst record (lowest Laplace-smoothed share of
what they helped select being used) drop out first; a rule with no record yet ranks as
an even chance.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from rose import tokens
from rose.errors import MODEL_FAILURES, RoseError
from rose.models import RoutingRule
from rose.store.facade import Store


class RuleRefused(RoseError):
    """A selection rule of the wrong form: it names no kind of task, or judges one lesson."""

    def __init__(self, when: str, then: str, reason: str):
        self.reason = reason
        super().__init__(f"selection rule refused (when {when!r}: {then!r}): {reason}")


@dataclass(frozen=True)
class Record:
    """What the episodes say of one rule: selections given it, lessons served and used."""

    selections: int = 0
    served: int = 0
    used: int = 0

    @property
    def rate(self) -> float:
        """The Laplace-smoothed share of what those selections served that was used."""
        return (self.used + 1) / (self.served + 2)


def rule_id(when: str, then: str) -> str:
    """A rule's id, from its words: the same rule taught twice is one file."""
    text = f"{' '.join(when.split()).lower()}\0{' '.join(then.split()).lower()}"
    return "r_" + hashlib.sha256(text.encode()).hexdigest()[:12]


def judge_form(judge: Any, when: str, then: str) -> str:
    """Why the rule is refused, or "" when its form is right (a `rule_form` call)."""
    answer = judge.ask("rule_form", {"when": when, "then": then})
    if answer.about_one_lesson:
        return f"it is a verdict on one lesson, not on a kind of task ({answer.reason})"
    if not answer.conditioned:
        return f"it names no kind of task ({answer.reason})"
    return ""


def teach(
    store: Store,
    when: str,
    then: str,
    *,
    judge: Any = None,
    origin: str = "manual",
    source: str = "",
) -> RoutingRule:
    """Judge the rule's form and write it; `RuleRefused` (with the reason) when it is wrong."""
    when, then = when.strip(), then.strip()
    if not when or not then:
        raise RuleRefused(when, then, "a rule needs both a `when` and a `then`")
    if judge is None:
        from rose.judge.calls import for_store

        judge = for_store(store)
    why = judge_form(judge, when, then)
    if why:
        store.log("route", {"refused": f"when {when}: {then}", "reason": why})
        raise RuleRefused(when, then, why)
    rid = rule_id(when, then)
    known = {r.id: r for r in store.rules()[0]}
    if rid in known:
        return known[rid]
    rule = store.save_rule(RoutingRule(id=rid, when=when, then=then, origin=origin, source=source))
    store.log("route", {"rule": rule.id, "origin": origin})
    return rule


def from_reflection(
    store: Store, judge: Any, proposed: list[Any], *, source: str, session: str = ""
) -> tuple[list[str], list[str]]:
    """Write the rules a reflection proposed: (ids written, reasons for those refused).

    A proposal is recorded first, for `session` (default: `source`), and a rule is written
    only once `routing.propose_after` distinct sessions proposed it: the same kind of task
    seen again with the same selection mistake, not one session's accident. Its form is
    judged then, and a failed form judgement refuses the rule (an unjudged rule is never
    written). A rule already written is written again by no one."""
    cfg = store.config.routing
    if not cfg.enabled:
        return [], []
    known = {r.id for r in store.rules()[0]}
    written, refused = [], []
    for p in proposed:
        when, then = p.when.strip(), p.then.strip()
        rid = rule_id(when, then)
        if when and then and rid not in known:
            seen = store.propose_rule(rid, when, then, session=session or source)
            if seen < cfg.propose_after:
                store.log("route", {"proposed": rid, "sessions": seen})
                continue
        try:
            written.append(teach(store, when, then, judge=judge, origin="reflection",
                                 source=source).id)  # fmt: skip
        except RuleRefused as exc:
            refused.append(exc.reason)
        except MODEL_FAILURES as exc:
            refused.append(f"its form could not be judged: {str(exc)[:120]}")
    return written, refused


def forget(store: Store, rule_id_: str) -> None:
    if not store.forget_rule(rule_id_):
        raise RoseError(f"no selection rule with id {rule_id_!r}; `rose route` lists them")
    store.log("route", {"forgot": rule_id_})


def records(store: Store, read: Any = None) -> dict[str, Record]:
    """Each rule's record, counted from the episodes (the graph's `rule_record`), read
    through `read` (an open graph's `q`) when given, else in an open of its own."""
    rows = store.read("rule_record") if read is None else read("rule_record")
    return {r["rule"]: Record(int(r["selections"]), int(r["served"]), int(r["used"])) for r in rows}


def for_selection(store: Store, read: Any = None) -> list[RoutingRule]:
    """The rules given to a selection: best record first, within `routing.max_tokens`;
    their records read through `read` when given (see `records`).

    The worst-record rules are the ones left out when the cap binds."""
    cfg = store.config.routing
    if not cfg.enabled:
        return []
    rules = store.rules()[0]
    if not rules:
        return []
    rec = records(store, read)
    ranked = sorted(
        rules, key=lambda r: (-rec.get(r.id, Record()).rate, -r.created.timestamp(), r.id)
    )
    out, used = [], 0
    for rule in ranked:
        cost = tokens.count(rule.text()) + 1
        if used + cost <= cfg.max_tokens:
            out.append(rule)
            used += cost
    return out


def counts(store: Store) -> tuple[int, int]:
    """(selection rules, lessons): the two sides of the growth ratio."""
    return len(store.rules()[0]), len(store.read("lesson_id_list"))


def ratio_line(store: Store) -> str:
    """The growth ratio: rules over lessons, printed because the bet is measured."""
    n_rules, n_lessons = counts(store)
    ratio = n_rules / n_lessons if n_lessons else 0.0
    return (
        f"routing {n_rules} selection rule{'s' if n_rules != 1 else ''} over {n_lessons} "
        f"lesson{'s' if n_lessons != 1 else ''} (ratio {ratio:.2f}, should fall as the "
        "store grows)"
    )

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
given, whole, to every selection question of the relevance walk (`rose.loop.selection.recall`),
capped by `routing.max_tokens`. When the store is served whole (`recall.whole_tokens`) there
is no selection, so rules cost nothing.

Each rule's record is counted from the episodes whose selection was given it (the prompt
hook logs the rule ids with the unit; absorption writes them into the episode): the
selections it took part in, the lessons they served, how many of those were used, and its
misses: lessons work needed that the relevance answer says it turned away
(`rose.loop.selection.misses`). A rule is judged by outcome, never by how much of what it let
through was used (an exclusion rule would raise that share itself): one whose misses
reach `routing.retire_after_misses` is retired (`retire`), out of selection and never
written again. When the cap binds, rules with fewer misses come first, then the better
share used (Laplace-smoothed; a rule with no record ranks as an even chance).

A new rule is reconciled with those in use before it is written (`rule_conflict`, a
model call): a stored rule for the same kind of task with the opposite advice is the
evidence's other side. A rule the user teaches wins (the stored one retires); one a
reflection proposes is written when the stored one has misses (it retires), refused when
the stored one has served with no miss, and neither stays when neither has a record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rose import tokens
from rose.errors import MODEL_FAILURES, RoseError
from rose.models import Miss, RoutingRule
from rose.store.facade import Store

if TYPE_CHECKING:
    from rose.judge.base import Judge


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
    misses: int = 0  # lessons work needed that this rule turned away

    @property
    def rate(self) -> float:
        """The Laplace-smoothed share of what those selections served that was used."""
        return (self.used + 1) / (self.served + 2)


def rule_id(when: str, then: str) -> str:
    """A rule's id, from its words: the same rule taught twice is one file."""
    text = f"{' '.join(when.split()).lower()}\0{' '.join(then.split()).lower()}"
    return "r_" + hashlib.sha256(text.encode()).hexdigest()[:12]


def judge_form(judge: Judge, when: str, then: str) -> str:
    """Why the rule is refused, or "" when its form is right (a `rule_form` call)."""
    from rose.judge.base import RULE_FORM

    answer = judge.ask(RULE_FORM, {"when": when, "then": then})
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
    judge: Judge | None = None,
    origin: str = "manual",
    source: str = "",
    missed: Collection[str] = (),
) -> RoutingRule:
    """Judge the rule's form, settle it against the rules in use, and write it;
    `RuleRefused` (with the reason) when it is wrong or the settlement goes against it.
    `missed`: rules with a miss not yet in any episode (found by the reflection at hand)."""
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
    new = RoutingRule(id=rid, when=when, then=then, origin=origin, source=source)
    _reconcile(store, judge, new, [r for r in known.values() if not r.retired], missed)
    rule = store.save_rule(new)
    store.log("route", {"rule": rule.id, "origin": origin})
    return rule


def _reconcile(
    store: Store, judge: Judge, new: RoutingRule, rules: list[RoutingRule], missed: Collection[str]
) -> None:
    """Settle `new` against the rules in use that say the opposite for the same kind of
    task (a `rule_conflict` call): the stored rule retires, or `new` is refused
    (`RuleRefused`), or both go. A failed call refuses nothing: the rule stands beside
    the others, as it did before rules were reconciled."""
    if not rules:
        return
    from rose.judge.base import RULE_CONFLICT

    shown = [{"id": r.id, "text": r.text()} for r in rules]
    try:
        answer = judge.ask(RULE_CONFLICT, {"new": {"id": new.id, "text": new.text()},
                                             "existing": shown})  # fmt: skip
    except MODEL_FAILURES as exc:
        store.log("route", {"unreconciled": new.id, "error": str(exc)[:200]})
        return
    by_id = {r.id: r for r in rules}
    opposed = [by_id[p.id] for p in answer.conflicts if p.id in by_id]
    if not opposed:
        return
    rec = records(store)
    keep_new = True
    for old in opposed:
        mine = rec.get(old.id, Record())
        if new.origin == "manual" or mine.misses or old.id in missed:
            retire(store, old.id, f"{new.id} ({new.text()}) says the opposite")
        elif mine.selections and mine.served:
            keep_new = False  # the stored rule has served with no miss: it keeps its place
        else:  # neither has a record: the evidence conflicts, and neither is kept
            why = f"{new.id} ({new.text()}) says the opposite; neither has a record"
            retire(store, old.id, why)
            keep_new = False
    if not keep_new:
        why = "a rule in use for the same kind of task says the opposite: " + ", ".join(
            r.id for r in opposed
        )
        store.log("route", {"refused": new.text(), "reason": why})
        raise RuleRefused(new.when, new.then, why)


def retire(store: Store, rule_id_: str, why: str) -> RoutingRule | None:
    """Take a rule out of selection, kept on disk with the reason (None: no such rule, or
    retired already). A retired rule proposed again is not written again."""
    rule = next((r for r in store.rules()[0] if r.id == rule_id_), None)
    if rule is None or rule.retired:
        return None
    done = store.save_rule(rule.model_copy(update={"retired": why}))
    store.log("route", {"retired": rule_id_, "reason": why})
    return done


def retire_missed(store: Store, rule_ids: list[str]) -> list[str]:
    """Retire each of `rule_ids` whose misses reached `routing.retire_after_misses`; the
    ids retired."""
    if not rule_ids:
        return []
    limit = store.config.routing.retire_after_misses
    rec = records(store)
    out = []
    for rid in dict.fromkeys(rule_ids):
        n = rec.get(rid, Record()).misses
        if n >= limit and retire(store, rid, f"turned away lessons work needed {n} times"):
            out.append(rid)
    return out


def from_reflection(
    store: Store,
    judge: Judge,
    proposed: list[Any],
    *,
    source: str,
    session: str = "",
    misses: Sequence[Miss] = (),
) -> tuple[list[str], list[str]]:
    """Write the rules a reflection proposed: (ids written, reasons for those refused).

    A proposal is recorded first, for `session` (default: `source`), and a rule is written
    only once `routing.propose_after` distinct sessions proposed it: the same kind of task
    seen again with the same selection mistake, not one session's accident. Its form is
    judged then, and a failed form judgement refuses the rule (an unjudged rule is never
    written); then it is settled against the rules in use, `misses` (those the reflection
    at hand found, not yet in any episode) counting in their records. A rule already
    written, or retired, is written again by no one."""
    cfg = store.config.routing
    if not cfg.enabled:
        return [], []
    rules = store.rules()[0]
    known = {r.id for r in rules}
    retired = {r.id for r in rules if r.retired}
    written, refused = [], []
    for p in proposed:
        when, then = p.when.strip(), p.then.strip()
        rid = rule_id(when, then)
        if rid in retired:
            store.log("route", {"proposed": rid, "retired": True})
            continue
        if when and then and rid not in known:
            seen = store.propose_rule(rid, when, then, session=session or source)
            if seen < cfg.propose_after:
                store.log("route", {"proposed": rid, "sessions": seen})
                continue
        try:
            missed = {r for m in misses for r in m.rules}
            written.append(teach(store, when, then, judge=judge, origin="reflection",
                                 source=source, missed=missed).id)  # fmt: skip
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
    return {
        r["rule"]: Record(
            int(r["selections"]), int(r["served"]), int(r["used"]), int(r["misses"] or 0)
        )
        for r in rows
    }


def for_selection(store: Store, read: Any = None) -> list[RoutingRule]:
    """The rules in use given to a selection: best record first (fewest misses, then the
    best share used), within `routing.max_tokens`; their records read through `read` when
    given (see `records`). Retired rules are never given.

    The worst-record rules are the ones left out when the cap binds."""
    cfg = store.config.routing
    if not cfg.enabled:
        return []
    rules = [r for r in store.rules()[0] if not r.retired]
    if not rules:
        return []
    rec = records(store, read)

    def rank(r: RoutingRule) -> tuple[int, float, float, str]:
        x = rec.get(r.id, Record())
        return (x.misses, -x.rate, -r.created.timestamp(), r.id)

    ranked = sorted(rules, key=rank)
    out, used = [], 0
    for rule in ranked:
        cost = tokens.count(rule.text()) + 1
        if used + cost <= cfg.max_tokens:
            out.append(rule)
            used += cost
    return out


def counts(store: Store) -> tuple[int, int]:
    """(selection rules in use, lessons): the two sides of the growth ratio."""
    in_use = [r for r in store.rules()[0] if not r.retired]
    return len(in_use), len(store.read("lesson_id_list"))


def ratio_line(store: Store) -> str:
    """The growth ratio: rules over lessons, printed because the bet is measured."""
    n_rules, n_lessons = counts(store)
    ratio = n_rules / n_lessons if n_lessons else 0.0
    return (
        f"routing {n_rules} selection rule{'s' if n_rules != 1 else ''} over {n_lessons} "
        f"lesson{'s' if n_lessons != 1 else ''} (ratio {ratio:.2f}, should fall as the "
        "store grows)"
    )

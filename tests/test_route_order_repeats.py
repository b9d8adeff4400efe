"""Selection rules are in the order they were written, however fast they were written.

Locks in: rules are listed oldest first and given to selection newest first (among equal
records), by their creation time, which is kept finer than the second. Kept to the second,
two rules written in the same second fell back on their ids (a hash of their words), so
whether a second turned between them decided the order, and with it the selection prompt
the model answers: a seeded benchmark run no longer repeated. Here the second rule's id
sorts before the first's, and both are written at once.
"""

from __future__ import annotations

import pytest

from rose.loop.selection import route
from rose.models import RoutingRule

pytestmark = pytest.mark.graph


def test_rules_written_at_once_keep_the_order_they_were_written_in(store):
    first = ("the task touches the deploy scripts", "read the deploy lessons")
    second = ("the task edits the billing code", "read the testing lessons")
    assert route.rule_id(*second) < route.rule_id(*first)  # ids alone would swap them
    for when, then in (first, second):
        store.save_rule(RoutingRule(id=route.rule_id(when, then), when=when, then=then))
    rules, problems = store.rules()
    assert problems == []
    assert [(r.when, r.then) for r in rules] == [first, second]
    given = route.for_selection(store)
    assert [(r.when, r.then) for r in given] == [second, first]  # newest first

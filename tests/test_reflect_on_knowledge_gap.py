"""A knowledge gap makes a reflection due: work that failed with a level-0 lesson used has
nothing below it to restore, so the next Stop asks what was missing.

Locks in: descent at a failed unit logs a `gap` entry in the session's log beside the
`knowledge-gap` event; the occasion counts the gaps after the latest reflection (`nudge`)
and one is enough, with or without any other count, still under the cooldown; a
reflection started afterwards starts the count again.
"""

from __future__ import annotations

import pytest

from rose.files import sessions
from rose.loop.abstraction import descend
from rose.loop.reflection import occasion
from rose.store.facade import Store

S = occasion.Settings(tool_calls=12, turns=3, surprises=2, cooldown_s=300, backoff_after=3)


def test_one_gap_is_an_occasion_under_the_cooldown():
    assert occasion.due({}, S, 1000.0, gaps=1) == "1 knowledge gap"
    assert occasion.due({"tools": 12}, S, 1000.0, gaps=2) == "2 knowledge gaps, 12 tool calls"
    assert occasion.due({"last": 900.0}, S, 1000.0, gaps=1) is None  # the cooldown holds
    entries = [{"t": "gap"}, {"t": "nudge"}, {"t": "prompt"}, {"t": "gap"}, {"t": "gap"}]
    assert occasion.gaps_since_reflection(entries) == 2
    assert occasion.gaps_since_reflection([*entries, {"t": "nudge"}]) == 0


@pytest.mark.graph
def test_a_failure_with_a_level_0_lesson_used_logs_a_gap_for_the_next_stop(store: Store):
    kept = store.add("The api listens on 8081.", title="API port")
    root = store.primary.root
    sessions.append(root, "s1", "prompt", turn=1, prompt="p", served=[kept.id])
    descend.after_failure(
        store, None, session_id="s1", turn=1, prompt="p", failure="It broke.",
        served=[store.get(kept.id)], used=[kept.id],
    )  # fmt: skip
    (gap,) = [e for e in sessions.read(root, "s1") if e["t"] == "gap"]
    assert (gap["lesson"], gap["turn"]) == (kept.id, 1)
    assert occasion.gaps_since_reflection(sessions.read(root, "s1")) == 1

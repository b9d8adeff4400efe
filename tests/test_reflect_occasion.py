"""When a reflection is due: structural counts, a cooldown, and a backoff that resets.

Locks in the occasion of the spec: tool calls, turns or failed tool calls since the last
reflection reach their setting (any of the three; failures alone are not required), no
sooner than the cooldown after the last one; after `nudge_backoff_after` reflections in
a row that produced nothing, the cooldown doubles with each further one, and a reflection
that produced something (a minted lesson, a span, a reflector's verdict) resets it.
"""

from __future__ import annotations

from rose.loop.reflection import occasion

S = occasion.Settings(tool_calls=12, turns=3, surprises=2, cooldown_s=300, backoff_after=3)


def test_each_count_alone_makes_an_occasion():
    assert occasion.due({"tools": 11, "failed": 1, "turns": 2}, S, 1000.0) is None
    assert occasion.due({"tools": 12}, S, 1000.0) == "12 tool calls"
    assert occasion.due({"failed": 2}, S, 1000.0) == "2 failed tool calls"
    assert occasion.due({"turns": 3}, S, 1000.0) == "3 turns"


def test_counts_add_up_turn_by_turn_and_reset_after_a_reflection():
    state: dict = {}
    for _ in range(2):
        state = occasion.tally(state, tool_calls=5, failed=0)
    assert occasion.due(state, S, 0.0) is None
    state = occasion.tally(state, tool_calls=2, failed=0)
    assert state["tools"] == 12 and state["turns"] == 3
    after = occasion.reset(state, 50.0)
    assert (after["tools"], after["failed"], after["turns"], after["last"]) == (0, 0, 0, 50.0)


def test_the_cooldown_holds_a_due_reflection_back():
    state = {"tools": 20, "last": 1000.0}
    assert occasion.due(state, S, 1000.0 + 299) is None
    assert occasion.due(state, S, 1000.0 + 300) == "20 tool calls"


def test_the_cooldown_doubles_past_the_backoff_and_is_capped():
    assert [occasion.cooldown(S, n) for n in range(6)] == [300, 300, 300, 600, 1200, 2400]
    assert occasion.cooldown(S, 100) == 300 * 2**occasion.MAX_DOUBLINGS
    state = {"turns": 3, "last": 0.0}
    assert occasion.due(state, S, 500.0, empty=2) == "3 turns"
    assert occasion.due(state, S, 500.0, empty=3) is None
    assert occasion.due(state, S, 600.0, empty=3) == "3 turns"


def _log(*kinds: str | tuple[str, dict]) -> list[dict]:
    out = []
    for k in kinds:
        kind, extra = (k, {}) if isinstance(k, str) else k
        out.append({"t": kind, **extra})
    return out


def test_the_empty_streak_counts_reflections_that_produced_nothing():
    assert occasion.empty_streak(_log("prompt", "used")) == 0  # no reflection yet
    assert occasion.empty_streak(_log("nudge", "nudge", "nudge")) == 3
    produced = ("used", {"source": "reflector"})
    assert occasion.empty_streak(_log("nudge", "nudge", produced, "nudge")) == 1
    assert occasion.empty_streak(_log("nudge", "nudge", "minted")) == 0
    assert occasion.empty_streak(_log("nudge", "span")) == 0
    assert occasion.empty_streak(_log("nudge", ("reflected", {"produced": True}))) == 0
    assert occasion.empty_streak(_log("nudge", ("reflected", {"produced": False}))) == 1


def test_attribution_from_others_is_not_the_reflection_producing():
    """`assess` or the agent's own `rose used` after a nudge does not reset the backoff."""
    for source in ("assess", "rose used"):
        assert occasion.empty_streak(_log("nudge", ("used", {"source": source}))) == 1

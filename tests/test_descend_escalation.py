"""Descent escalates through the candidates, then to level 0; a level-0 failure is a gap.

Locks in: each failure of a compressed lesson attaches the next claim not yet attached (no
judge here: cheapest first) and logs the expansion for the unit's episode; once every claim
is attached the next failure escalates to the level-0 original (logged, nothing attached);
`delta-jump` attaches its holder's whole text, `stepwise` the next lesson below. A failure with a
level-0 lesson used is a knowledge gap (a `knowledge-gap` event, one per lesson in
`rose status`, and its line in the text output); one served but not used is not.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.events import read_events
from rose.files import sessions
from rose.inspect.status import status
from rose.loop.abstraction import descend
from rose.models import claim_id
from rose.store.facade import Store
from tests._descent import level1

pytestmark = pytest.mark.graph


def _fail(store: Store, lesson_id: str, turn: int, *, used=()) -> list[dict]:
    sessions.append(store.primary.root, "s1", "prompt", turn=turn, prompt="p", served=[lesson_id])
    return descend.after_failure(
        store, None, session_id="s1", turn=turn, prompt="p", failure="It broke.",
        served=[store.get(lesson_id)], used=list(used),
    )  # fmt: skip


def test_failures_attach_the_next_claim_then_escalate_to_level_0(store: Store):
    fam = level1(store, 2)
    order = [c.claim for c in descend.rank(store, None, fam.apex, "It broke.")]
    for turn in range(1, len(order) + 1):
        (done,) = _fail(store, fam.apex, turn)
        assert store.get(fam.apex).patches == order[:turn]
        assert done["claims"] == [claim_id(fam.apex, order[turn - 1])]
    (done,) = _fail(store, fam.apex, len(order) + 1)
    assert done["escalate"] == ["n_orig0001"] and "claims" not in done
    assert store.get(fam.apex).patches == order
    expands = [e for e in sessions.read(store.primary.root, "s1") if e["t"] == "expand"]
    assert [e["turn"] for e in expands] == list(range(1, len(order) + 1))
    eps = store.absorb("s1", final=True)
    assert [[x.lesson for x in ep.expansions] for ep in eps] == [[fam.apex]] * len(order) + [[]]
    assert store.get(fam.apex).stats.expansions == len(order)


def test_delta_jump_restores_the_holders_text_and_stepwise_the_next_lesson_below(store: Store):
    config.set_override(store.primary.config, "recall.strategy", "delta-jump")
    store = Store.open(store.primary.root.parent)
    fam = level1(store, 2)
    (done,) = _fail(store, fam.apex, 1)
    holder = store.get("n_orig0001")
    assert store.get(fam.apex).patches == [holder.body.strip()]
    assert set(done["claims"]) == {c.id for c in descend.rank(store, None, fam.apex, "x")}
    (again,) = _fail(store, fam.apex, 2)  # the one holder is restored already: level 0
    assert again["escalate"] == ["n_orig0001"] and len(store.get(fam.apex).patches) == 1


def test_stepwise_restores_the_next_lesson_below_without_reading_the_manifest(store: Store):
    config.set_override(store.primary.config, "recall.strategy", "stepwise")
    store = Store.open(store.primary.root.parent)
    fam = level1(store, 3)
    (step,) = _fail(store, fam.apex, 1)
    assert step["claims"] == [] and not step["judged"]
    assert store.get(fam.apex).patches == [store.get("n_orig0001").body.strip()]


def test_a_level_0_failure_is_a_knowledge_gap(store: Store):
    fam = level1(store, 2)
    kept = store.add("The api listens on 8081.", title="API port")
    assert _fail(store, kept.id, 1) == []  # served, not used: it tells nothing
    (gap,) = _fail(store, kept.id, 2, used=[kept.id])
    assert gap["kind"] == descend.GAP and gap["lesson"] == kept.id
    _fail(store, kept.id, 3, used=[kept.id])
    assert len(read_events(store.primary.events, kind=descend.GAP)) == 2
    (listed,) = status(store)["knowledge_gaps"]
    assert (listed["lesson"], listed["title"]) == (kept.id, "API port")
    out = CliRunner().invoke(app, ["status"])
    assert out.exit_code == 0, out.output
    assert "1 knowledge gap(s)" in out.output and kept.id in out.output
    assert read_events(store.primary.events, kind="descend") == []
    assert fam.apex  # the compressed family beside it was not touched

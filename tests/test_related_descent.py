"""`related` walks down the branches the model says may hold the subject.

Locks in: a contradiction with detail two levels below an apex is found when the lesson is
added (apex and middle judged too general, the detail's holder matched and reconciled);
a branch the model neither matched nor descended is never opened; the walk stops at
`recall.max_depth` and reads a too-general lesson at the last level in full rather than
dropping it; an answer naming an id it was not offered is refused; and the simulated
model asks to descend honestly, from what a candidate's line shows.
"""

from __future__ import annotations

import pytest

from rose import config
from rose.errors import AnswerInvalid
from rose.judge.calls import Judge
from rose.loop.reflection.consolidate import consolidate
from rose.sim import SimulatedBackend, World
from rose.sim.parse import items, section
from rose.store.facade import Store
from tests._reconcile import judge, lesson, reconciled, related

QUESTION = "Is 5434 the port now, or was 5433 only taken that day?"


@pytest.fixture
def deep(store: Store) -> Store:
    """apex over middle over the lesson holding the port; a second family beside it."""
    store.write(
        [
            lesson("n_port0001", "The test database listens on 5433.", family="dev"),
            lesson(
                "n_mid00001", "Local services.", family="dev", level=1, derived_from=["n_port0001"]
            ),
            lesson(
                "n_apex0001", "Working here.", family="dev", level=2, derived_from=["n_mid00001"]
            ),
            lesson("n_css00001", "Styles.", family="ui", level=1, derived_from=["n_css00002"]),
            lesson("n_css00002", "Use design tokens.", family="ui"),
        ]
    )
    return store


def _offered(backend, call: str = "related") -> list[list[str]]:
    prompts = [r.prompt for r in backend.requests if r.call == call]
    return [[i for i, _ in items(section(p, "candidates"))] for p in prompts]


@pytest.mark.graph
def test_a_contradiction_two_levels_below_an_apex_is_found(deep: Store):
    j, backend = judge(
        deep,
        related=[
            related(descend=("n_apex0001",)),
            related(descend=("n_mid00001",)),
            related(matches=("n_port0001",)),
        ],
        reconcile=[reconciled("contradicts", "n_port0001", question=QUESTION)],
    )
    new = lesson("n_port0002", "The test database listens on 5434.")
    done = consolidate(deep, j, new, source="user", scope="project")
    assert _offered(backend) == [["n_apex0001", "n_css00001"], ["n_mid00001"], ["n_port0001"]]
    (prompt,) = [r.prompt for r in backend.requests if r.call == "reconcile"]
    assert '<lesson id="n_port0001">' in section(prompt, "existing")
    assert "n_apex0001" not in section(prompt, "existing")
    assert (done.relation, done.target) == ("contradicts", "n_port0001")
    fresh = Store.open()
    assert fresh.get("n_port0001").status == "disputed"
    assert fresh.get("n_port0001").conflict == QUESTION


@pytest.mark.graph
def test_the_walk_stops_at_max_depth_and_reads_the_last_level_in_full(deep: Store):
    config.set_override(deep.primary.config, "recall.max_depth", "1")
    store = Store.open()
    j, backend = judge(
        store,
        related=[related(descend=("n_apex0001",)), related(descend=("n_mid00001",))],
        reconcile=[reconciled("orthogonal")],
    )
    consolidate(store, j, lesson("n_new00001", "Something."), source="user", scope="project")
    assert _offered(backend) == [["n_apex0001", "n_css00001"], ["n_mid00001"]]
    (prompt,) = [r.prompt for r in backend.requests if r.call == "reconcile"]
    assert '<lesson id="n_mid00001">' in prompt  # too general, last level: read in full


@pytest.mark.graph
def test_an_id_never_offered_is_refused(deep: Store):
    j, _b = judge(deep, related=[related(descend=("n_port0001",))])
    with pytest.raises(AnswerInvalid, match="n_port0001"):
        j.ask(
            "related",
            {
                "lesson": {"title": "t", "body": "b"},
                "candidates": [{"id": "n_apex0001", "title": "W"}],
            },
        )


def _new(world: World) -> tuple[dict, str]:
    """A lesson of one topic, as the related call shows it, and that topic."""
    topic = next(iter(world.topics))
    facts = [f for f in world.topics[topic].facts if not world.facts[f].stale][:2]
    draft = world.lesson(facts)
    return {"id": "n_new", "title": draft.title, "gist": draft.gist, "body": draft.body}, topic


def test_the_simulated_model_descends_from_what_a_line_shows():
    world = World.generate(3)
    names = list(world.topics)
    new, topic = _new(world)
    others = [n for n in names if n != topic]
    candidates = [
        {"id": "n_vague", "title": "General notes", "gist": "Assorted advice."},
        {
            "id": "n_broad",
            "title": f"Working with {topic}, {others[0]} and {others[1]}",
            "gist": "",
        },
        {"id": "n_same", "title": f"{topic.capitalize()} notes", "gist": ""},
        {"id": "n_pair", "title": f"Working with {topic} and {others[0]}", "gist": ""},
        {"id": "n_other", "title": f"Working with {others[0]} and {others[1]}", "gist": ""},
    ]
    ctx = {"lesson": new, "candidates": candidates}
    answer = Judge(SimulatedBackend(world), cache_path=None, events_path=None).ask("related", ctx)
    assert [p.id for p in answer.descend] == ["n_vague", "n_broad"]
    assert [p.id for p in answer.matches] == ["n_same", "n_pair"]

"""A subject's lessons that recall serves together gather under one parent (the defaults).

Locks in, with the default settings: an episode counts for a group when it succeeded, was
served every member and used one (`merge.together: served`), once is enough
(`merge.min_co_uses` 1), and only lessons of one family group (`merge.within: family`); a
member served but never used joins when a sibling has episodes to replay and it has too
few successes to drop a claim (the call is told to keep its every claim); a parent is
weighed against its children as recall serves them, frames included (`merge.budget:
served`), so a parent as long as their bodies together passes the size check there and is
refused under `bodies`; and a store is served whole only while its apexes fit
`recall.whole_tokens`, past which the model chooses.
"""

from __future__ import annotations

from pathlib import Path

from rose import config, tokens
from rose.judge.calls import Judge
from rose.loop.abstraction import merge as mg
from rose.model.scripted import ScriptedBackend
from rose.models import Episode, Node
from rose.store.facade import Store

BODIES = {
    "n_deploya": "Deploys run from the release branch only. Tag before you push the release.",
    "n_deployb": "A deploy waits for the canary for ten minutes. Do not skip the canary.",
    "n_ledgerc": "Ledger entries are append-only. A correction is a new entry, never an edit.",
}
FAMILY = {"n_deploya": "deploys", "n_deployb": "deploys", "n_ledgerc": "ledger"}


def _store(
    project: Path,
    episodes: list[Episode],
    families: dict[str, str] | None = None,
    **settings: str,
) -> Store:
    Store.init(project)
    path = Store.open(project).primary.config
    for key, value in settings.items():
        config.set_override(path, key, value)
    store = Store.open(project)
    family = {**FAMILY, **(families or {})}
    nodes = [
        Node(id=i, title=f"{family[i].capitalize()} {i[-1]}", gist=body.split(".")[0] + ".",
             body=body, family=family[i])
        for i, body in BODIES.items()
    ]  # fmt: skip
    store.write(nodes, episodes)
    return Store.open(project)


def _episode(tag: str, served: list[str], used: list[str], outcome: str = "success") -> Episode:
    return Episode(prompt=f"task {tag}", outcome=outcome, served=served, used=used,
                   accepted_summary=f"did {tag}")  # fmt: skip


def _groups(store: Store) -> dict[tuple[str, ...], mg.Candidate]:
    return {tuple(c.members): c for c in mg.candidates(store)}


def test_lessons_of_one_family_served_together_once_are_due(project: Path):
    every = list(BODIES)
    store = _store(project, [_episode("t1", served=every, used=["n_deploya"])])
    found = _groups(store)
    assert list(found) == [("n_deploya", "n_deployb")]  # the ledger lesson is another family
    group = found[("n_deploya", "n_deployb")]
    assert group.due and group.co_uses == 1, group.reason  # n_deployb, never used, joins


def test_failed_work_or_another_family_earns_no_parent(project: Path):
    store = _store(
        project,
        [_episode("t1", served=list(BODIES), used=["n_deploya"], outcome="failure"),
         _episode("t2", served=["n_deploya", "n_ledgerc"], used=["n_deploya", "n_ledgerc"])],
    )  # fmt: skip
    assert _groups(store) == {}


def test_lessons_filed_under_no_subject_are_not_one_family(project: Path):
    episodes = [_episode("t1", served=list(BODIES), used=list(BODIES))]
    store = _store(project, episodes, {"n_deploya": "general", "n_deployb": "general"})
    assert _groups(store) == {}


def test_counted_by_use_a_lesson_never_used_joins_nothing(project: Path):
    store = _store(
        project,
        [_episode("t1", served=list(BODIES), used=["n_deploya"])],
        **{"merge.together": "used"},
    )
    assert _groups(store) == {}


def _attempt(project: Path, budget: str) -> tuple[mg.Attempt, ScriptedBackend, int]:
    both = ["n_deploya", "n_deployb"]
    store = _store(project, [_episode("t1", served=both, used=both)],
                   **{"merge.budget": budget, "compress.claims_after": "0"})  # fmt: skip
    bodies = sum(tokens.count(BODIES[i]) for i in both)
    body = f"{BODIES['n_deploya']} {BODIES['n_deployb']}"
    assert tokens.count(body) >= bodies  # as long as the children's bodies together
    answer = {
        "title": "Deploys",
        "gist": "How deploys go out.",
        "family": "deploys",
        "body": body,
        "dropped": [{"claim": "x", "kind": "other", "holder": both[0]}],
    }
    backend = ScriptedBackend({"merge": [answer]})
    judge = Judge(backend, cache_path=None, events_path=store.primary.events)
    (attempt,) = mg.merge_due(store, judge=judge, prober=lambda lesson, prompt: "unused")
    return attempt, backend, bodies


def test_a_parent_is_weighed_against_its_children_as_served(project: Path):
    attempt, backend, bodies = _attempt(project, "served")
    assert not attempt.reason.startswith("not smaller")  # the frames it saves count
    budget = int(backend.requests[0].prompt.split("<budget>")[1].split(" tokens")[0])
    assert budget >= bodies  # more room than the bodies alone: one frame serves both


def test_weighed_against_the_bodies_the_same_parent_is_refused(tmp_path: Path):
    project = tmp_path / "p"
    project.mkdir()
    attempt, _, bodies = _attempt(project, "bodies")
    assert attempt.result == "rejected"
    assert attempt.reason.startswith("not smaller than its children")
    assert f"{bodies} for them together" in attempt.reason


def test_a_store_is_served_whole_only_within_whole_tokens(project: Path):
    store = _store(project, [])
    view = store.view()
    assert 0 < view["total_tokens"] <= store.config.recall.max_pack_tokens
    config.set_override(store.primary.config, "recall.whole_tokens", "50")
    assert not Store.open(project).view()["fits"]  # past it the model chooses
    config.set_override(store.primary.config, "recall.whole_tokens", "5000")
    opened = Store.open(project)
    assert opened.view()["fits"] and len(opened.view()["lessons"]) == 3

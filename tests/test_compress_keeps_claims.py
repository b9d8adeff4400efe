"""A claim is dropped only once enough successes show it is not needed.

Locks in: until a lesson has `compress.claims_after` attributed successes, the compress and
merge prompts say to keep every claim (of the children named, for a merge), the simulated
compressor keeps every fact, and a candidate that declares a dropped claim anyway (any kind
but `example` and `other`) is refused before any replay, the original left as it was; from
`claims_after` successes on, the prompt says nothing of it and a claim may go. Anecdote and
reasons go from the first compression either way.
"""

from __future__ import annotations

from rose import config
from rose.judge.calls import Judge
from rose.loop.abstraction import compress as c
from rose.loop.abstraction import merge as mg
from rose.model.scripted import ScriptedBackend
from rose.models import Episode, Node
from rose.store.facade import Store
from tests._compress import family, judge, prober
from tests._merge import plain

BODY = (
    "The staging database listens on 5433, not 5432. Its migrations run on deploy. "
    "We learnt this the hard way after a long night of failed deploys."
)


def _lesson(project, successes: int = 2) -> tuple[Store, Node]:
    store = Store.init(project)
    node = Node(id="n_staging1", title="Staging database", gist="Staging db.", body=BODY)
    episodes = [
        Episode(
            prompt=f"deploy task {i}",
            outcome="success",
            served=[node.id],
            used=[node.id],
            accepted_summary=f"deployed {i}",
        )
        for i in range(successes)
    ]
    store.write([node], episodes)
    return store, node


def _scripted(store: Store, answers: dict) -> tuple[Judge, ScriptedBackend]:
    backend = ScriptedBackend(answers)
    return Judge(backend, cache_path=None, events_path=store.primary.events), backend


CUT = {
    "body": "Staging migrations run on deploy.",
    "gist": "Staging migrations.",
    "dropped": [
        {"claim": "The staging database listens on 5433, not 5432.", "kind": "parameter"},
        {"claim": "We learnt this after a long night.", "kind": "example"},
    ],
}


def test_a_candidate_dropping_a_claim_too_early_is_refused_before_replay(project):
    store, node = _lesson(project)
    config.set_override(store.primary.config, "compress.claims_after", "5")
    store = Store.open(project)
    j, backend = _scripted(store, {"compress": [CUT]})
    attempt = c.compress(store, node.id, judge=j, prober=lambda lesson, prompt: "unused")
    assert attempt.result == "rejected" and "compress.claims_after" in attempt.reason
    assert "5433" in attempt.reason and attempt.replays == []
    assert "<claims>" in backend.requests[0].prompt
    assert store.get(node.id).status == "active"


def test_from_enough_successes_a_claim_may_go(project):
    store, node = _lesson(project)
    config.set_override(store.primary.config, "compress.claims_after", "2")
    store = Store.open(project)
    probe = {"approach": "Run the migrations on deploy."}
    j, backend = _scripted(
        store,
        {
            "compress": [CUT],
            "replay_probe": [probe] * 4,
            "replay_judge": [{"verdict": "pass", "reason": "it reaches it"}] * 2,
        },
    )
    attempt = c.compress(store, node.id, judge=j, prober=lambda lesson, prompt: probe["approach"])
    assert attempt.result == "accepted", attempt.reason
    assert "<claims>" not in backend.requests[0].prompt
    kinds = {d.claim: d.kind for d in store.get(attempt.new).dropped}
    assert kinds["The staging database listens on 5433, not 5432."] == "parameter"


def test_the_simulated_compressor_keeps_every_fact_until_then(project):
    f = family(project, seed=0, verbose=True)  # its filler and reasons can go
    config.set_override(f.store.primary.config, "compress.claims_after", "50")
    store = Store.open(project)
    j = judge(f, over_cut=1.0)  # it would cut every unprotected fact
    (attempt,) = c.compress_due(store, judge=j, prober=prober(j))
    assert attempt.result == "accepted", attempt.reason
    new = store.get(attempt.new)
    # with claims_after 0 the same compressor keeps three of the eight
    assert set(f.world.facts_in(f.node.body)) == set(f.world.facts_in(new.body))
    assert new.dropped and {d.kind for d in new.dropped} <= set(c.FREE)


def test_a_merge_leaving_out_a_young_childs_claim_is_refused(project):
    a, b = plain(project, 2)  # three co-uses each: fewer than claims_after
    store = Store.open(project)
    config.set_override(store.primary.config, "compress.claims_after", "5")
    store = Store.open(project)
    answer = {
        "title": "Retries and S3 answers",
        "gist": "Retries and S3 answers.",
        "family": "plain",
        "body": "Retry only idempotent calls, with backoff. Parse the body, not the status.",
        "dropped": [
            {"claim": "S3 answers 200 with an error in the body on some calls.",
             "kind": "parameter", "holder": b.id},
            {"claim": "A timeout is not proof the call failed.", "kind": "caveat",
             "holder": a.id},
        ],
    }  # fmt: skip
    j, backend = _scripted(store, {"merge": [answer]})
    (attempt,) = mg.merge_due(store, judge=j, prober=lambda lesson, prompt: "unused")
    assert attempt.result == "rejected" and "compress.claims_after" in attempt.reason
    assert b.id in attempt.reason and attempt.replays == []
    shown = backend.requests[0].prompt
    assert f"<claims>{a.id}, {b.id}</claims>" in shown
    assert store.get(a.id).status == "active" and store.get(b.id).status == "active"

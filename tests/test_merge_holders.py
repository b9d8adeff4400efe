"""A merged parent must say, for every claim it leaves out, which child still holds it.

Locks in: a dropped claim naming a holder that is not one of the children is refused, never
mapped to a child (which child states a claim is a question of meaning); a parent much
shorter than its largest child that declares nothing is refused as under-reported; a
failed merge call is logged unattempted and writes nothing; `--dry-run`'s path replays an
acceptable parent, never on an episode either child holds out, and writes and logs nothing.
"""

from __future__ import annotations

from rose.errors import BackendFailed
from rose.events import read_events
from rose.judge.calls import Judge
from rose.loop.abstraction import _sample
from rose.loop.abstraction import merge as mg
from rose.loop.abstraction import replay as _replay
from rose.model.scripted import ScriptedBackend
from rose.store import dag
from rose.store.facade import Store
from tests._merge import plain


def _judge(store: Store, *answers) -> tuple[Judge, ScriptedBackend]:
    backend = ScriptedBackend({"merge": list(answers)})
    return Judge(backend, cache_path=None, events_path=store.primary.events), backend


def _split(store: Store, lesson_id: str) -> _sample.Split:
    cases = _replay.cases(dag.regression_set(store, lesson_id))
    return _sample.split(lesson_id, cases, sample=5, held_out=0.25)


def _answer(body: str, dropped: list[dict]) -> dict:
    return {"title": "Both", "gist": "Both.", "family": "plain", "body": body, "dropped": dropped}


def test_a_holder_that_is_not_a_child_is_refused(project):
    a, b = plain(project, 2)
    store = Store.open(project)
    claims = [
        {"claim": "Backoff doubles.", "kind": "parameter", "holder": a.id},
        {"claim": "5433, not 5432.", "kind": "parameter", "holder": "n_elsewhere"},
    ]
    judge, _ = _judge(store, _answer("Retry with care; parse what comes back.", claims))
    (attempt,) = mg.merge_due(store, judge=judge, prober=lambda lesson, prompt: "unused")
    assert attempt.result == "rejected" and "'n_elsewhere'" in attempt.reason
    assert "not one of the children" in attempt.reason and attempt.replays == []
    assert store.get(a.id).status == "active"


def test_much_shorter_and_declaring_nothing_is_under_reported(project):
    a, b = plain(project, 2)
    store = Store.open(project)
    judge, _ = _judge(store, _answer("Be careful.", []))
    (attempt,) = mg.merge_due(store, judge=judge, prober=lambda lesson, prompt: "unused")
    assert attempt.result == "rejected" and attempt.reason.startswith("under-reported")


def test_a_failed_call_writes_nothing_and_is_not_an_attempt(project):
    plain(project, 2)
    store = Store.open(project)
    judge, _ = _judge(store, BackendFailed("scripted", "down"))
    (attempt,) = mg.merge_due(store, judge=judge, prober=lambda lesson, prompt: "unused")
    assert attempt.result == "failed" and "the merger failed" in attempt.reason
    (event,) = read_events(store.primary.events, kind="merge")
    assert not event["attempted"] and mg.candidates(store)[0].due


def test_a_dry_run_replays_and_writes_nothing(project):
    a, b = plain(project, 2)
    store = Store.open(project)
    claims = [{"claim": "The port is 5433.", "kind": "parameter", "holder": a.id}]
    judge, backend = _judge(store, _answer("Retry idempotent calls; parse bodies.", claims))
    for _ in range(4):  # each child replays at most two of its three (one is held out)
        backend.push("replay_probe", {"approach": "retry and parse"})
        backend.push("replay_judge", {"verdict": "pass", "reason": "same approach"})
    (attempt,) = mg.merge_due(
        store, judge=judge, prober=lambda lesson, prompt: "retry and parse", dry_run=True
    )
    assert attempt.result == "dry-run" and attempt.reason == "would be accepted"
    assert attempt.replays and all(r.passed for r in attempt.replays)
    held = {c.episode for x in (a, b) for c in _split(store, x.id).held_out}
    replayed = {e for eps in attempt.replayed.values() for e in eps}
    assert all(attempt.replayed[x.id] for x in (a, b)) and not replayed & held
    assert sorted(r["id"] for r in dag.apexes(store)) == [a.id, b.id]
    assert read_events(store.primary.events, kind="merge") == []

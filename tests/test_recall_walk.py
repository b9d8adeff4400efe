"""Recall past the budget: the model is asked about the apexes in one call, only `descend`
branches are opened, an `unrelated` branch is never walked, the judge-call budget leaves
the unresolved served rather than dropped (as the deadline does, which the note says), and
a failing model degrades to the budget-ranked apexes. Snapshots pin the injected block and
the trace."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from rose import config
from rose.errors import BackendTimeout
from rose.inspect.trace import inspect, render
from rose.judge.calls import for_store
from rose.loop.selection import recall as recall_mod
from rose.loop.selection.recall import recall
from rose.model.scripted import ScriptedBackend
from rose.models import Claim, Node
from rose.store.facade import Store
from tests._snapshot import check

pytestmark = pytest.mark.graph

_AT = datetime(2025, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def dag(store: Store) -> Store:
    """Two families; `deploy` has an abstract apex over two concrete lessons. Creation times
    are fixed: candidates are offered oldest first."""
    s = store
    s.save(
        Node(
            id="n_argo0001",
            family="deploy",
            created=_AT + timedelta(minutes=1),
            title="Argo dedupe key",
            gist="Rollouts dedupe on the image digest.",
            body="Argo dedupes by digest. " * 12,
        )
    )
    s.save(
        Node(
            id="n_helm0001",
            family="deploy",
            created=_AT + timedelta(minutes=2),
            title="Helm values order",
            gist="Later -f files win.",
            body="Helm merges -f files left to right. " * 12,
        )
    )
    s.save(
        Node(
            id="n_deploy001",
            family="deploy",
            created=_AT + timedelta(minutes=3),
            title="Deploys",
            level=1,
            gist="How deploys work here.",
            body="Deploys go through Argo and Helm.",
            derived_from=["n_argo0001", "n_helm0001"],
            dropped=[Claim(claim="dedupe on digest", holder="n_argo0001")],
        )
    )
    s.save(
        Node(
            id="n_css00001",
            family="style",
            created=_AT + timedelta(minutes=4),
            title="CSS tokens",
            gist="Use design tokens.",
            body="Never hard-code colours. " * 12,
        )
    )
    config.set_override(s.primary.config, "recall.max_pack_tokens", "170")
    config.set_override(s.primary.config, "recall.second_look_calls", "0")  # one pass here
    return Store.open()


def _judge(store: Store, *answers) -> tuple:
    backend = ScriptedBackend({"relevance": list(answers)})
    return for_store(store, backend=backend, timeout_s=9), backend  # the prompt's: no retry


def _verdicts(**by_id: str) -> dict:
    return {
        "verdicts": [{"id": k, "verdict": v, "reason": f"{v} because"} for k, v in by_id.items()]
    }


def test_descend_opens_children_and_unrelated_is_never_walked(dag: Store):
    judge, backend = _judge(
        dag,
        _verdicts(n_deploy001="descend", n_css00001="unrelated"),
        _verdicts(n_argo0001="relevant", n_helm0001="unrelated"),
    )
    res = recall(dag, "the deploy is stuck", judge=judge)
    assert [i["id"] for i in res.chosen] == ["n_argo0001"], res.decisions
    assert res.calls == 2
    first, second = (r.prompt for r in backend.requests)
    assert "[n_deploy001]" in first and "[n_css00001]" in first
    assert "Argo dedupes by digest" not in first  # one line per candidate, never the body
    assert "[n_argo0001]" in second and "[n_css00001]" not in second


def test_budget_of_calls_serves_the_unresolved(dag: Store):
    config.set_override(dag.primary.config, "recall.judge_calls", "1")
    store = Store.open()
    judge, _ = _judge(store, _verdicts(n_deploy001="descend", n_css00001="unrelated"))
    res = recall(store, "the deploy is stuck", judge=judge)
    assert res.calls == 1
    unresolved = {v.id for v in res.verdicts if v.verdict == "unresolved"}
    assert unresolved == {"n_argo0001", "n_helm0001"}  # opened, never judged: still served
    assert res.chosen and {i["id"] for i in res.chosen} <= unresolved
    assert any("unresolved" in d for d in res.decisions)
    assert res.out_of_time == 0 and res.note == ""


def test_out_of_time_serves_the_unresolved_and_says_so(dag: Store, monkeypatch):
    """The deadline is wall time: when it decides what is served, the note (the prompt's
    `inject` event, the status line) says so; the judge-call budget is not a timeout."""
    judge, backend = _judge(dag)
    ticks = iter([0.0])
    monkeypatch.setattr(recall_mod.time, "monotonic", lambda: next(ticks, 100.0))
    res = recall(dag, "the deploy is stuck", judge=judge, deadline_s=20)
    assert res.calls == 0 and backend.requests == []
    assert {v.verdict for v in res.verdicts} == {"unresolved"}
    assert len(res.verdicts) == 2 and len(res.chosen) == 1  # the budget holds one of them
    assert res.out_of_time == 1  # what reached the block unjudged, not what was picked
    assert res.note == "out of time: 1 served unjudged"


def test_failing_model_degrades_to_ranked_apexes(dag: Store):
    judge, _ = _judge(dag, BackendTimeout("scripted", 5))
    res = recall(dag, "anything", judge=judge)
    assert res.degraded and "5s" in res.degraded
    assert res.chosen  # something is still served, within the budget
    assert sum(i["full_tokens"] for i in res.chosen) <= 170 or len(res.chosen) == 1


def test_invalid_answer_is_a_failure_not_a_pass(dag: Store):
    judge, _ = _judge(dag, {"verdicts": [{"id": "n_deploy001", "verdict": "sure"}]})
    res = recall(dag, "anything", judge=judge)
    assert "does not fit" in res.degraded


def test_block_and_trace_snapshots(dag: Store):
    judge, _ = _judge(
        dag,
        _verdicts(n_deploy001="descend", n_css00001="unrelated"),
        _verdicts(n_argo0001="relevant", n_helm0001="maybe"),
    )
    res, result = inspect(dag, "the deploy is stuck", judge=judge)
    check("recall_block.txt", result.block + "\n")
    check("recall_trace.txt", render(res, result) + "\n")
    assert result.status.startswith("ROSE · 1 lesson · ")  # the maybe did not fit the budget
    assert result.tokens <= 170
    assert any("left out" in d for d in res.decisions)


def test_fits_block_snapshot_is_deterministic(store: Store):
    store.save(
        Node(
            id="n_b0000001",
            title="Second",
            gist="g2",
            body="Body two.",
            patches=["restored detail"],
        )
    )
    store.save(
        Node(
            id="n_a0000001",
            title="First",
            gist="g1",
            body="Body one.",
            conflict="Is it 5433 or 5434?",
            status="disputed",
        )
    )
    res, result = inspect(store, "anything")
    again = inspect(Store.open(), "anything")[1]
    assert result.block == again.block
    check("fits_block.txt", result.block + "\n")


def test_a_judgement_past_its_deadline_is_answered_late_for_the_next_prompt(
    dag: Store, monkeypatch: pytest.MonkeyPatch
):
    """A relevance question that timed out is kept (the hook hands it to `relevance-late`);
    that job's answer goes to the session's log, and the next prompt, whose own judgement
    fails too, serves what it found before the rest of the ranked apexes."""
    import rose.judge.calls as calls
    from rose.files import sessions
    from rose.jobs import bodies
    from rose.jobs.queue import JobContext
    from rose.loop.selection import late

    judge, _ = _judge(dag, BackendTimeout("scripted", 9))
    first = recall(dag, "the style is off", judge=judge)
    (question,) = first.selection()["late"]
    assert "n_css00001" in {c["id"] for c in question["candidates"]}
    assert first.chosen[0]["id"] != "n_css00001"  # the budget's ranking alone: not first
    root = dag.primary.root
    sessions.append(root, "s-late", "prompt", turn=1, prompt="the style is off", served=[])
    answers = ScriptedBackend({"relevance": [_verdicts(n_css00001="relevant")]})
    real = calls.for_store
    monkeypatch.setattr(calls, "for_store", lambda s, **kw: real(s, **{**kw, "backend": answers}))
    payload = {"session": "s-late", "turn": 1, "questions": [question]}
    bodies.relevance_late(JobContext(dag.primary, {}, payload))
    assert late.relevant(root, "s-late") == ["n_css00001"]
    judge, _ = _judge(dag, BackendTimeout("scripted", 9))
    second = recall(dag, "go on", judge=judge, earlier=late.relevant(root, "s-late"))
    assert second.degraded and second.chosen[0]["id"] == "n_css00001"

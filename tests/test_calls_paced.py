"""Model calls are paced for a real model: deadlines per kind of call, one retry, derived jobs.

Locks in: a store's judge gives a background judgement `calls.judge_s`, a call that writes
lessons `calls.write_s`, and the prompt's path its own tight deadline with no retry; a call
that timed out or failed is asked once more (a `judge` event marks the retry) and a backend
that cannot run at all is not; a job's deadline follows from its calls' deadlines and
retries, never below `jobs.deadline_s`, and a kind with a deadline of its own keeps it.
"""

from __future__ import annotations

import pytest

from rose import config
from rose.errors import BackendFailed, BackendTimeout, BackendUnavailable
from rose.events import read_events
from rose.jobs import _ledger
from rose.jobs import queue as jobs
from rose.judge.calls import for_store
from rose.model.scripted import ScriptedBackend
from rose.store.facade import Store

SCOPE = {"scope": "project", "reason": "here"}
LESSON = {"lesson": {"id": "n_aaaa1111", "title": "t", "gist": "g", "body": "b"}, "project": "p"}


def test_each_kind_of_call_gets_its_setting(store: Store):
    config.set_override(store.primary.config, "calls.judge_s", "42")
    config.set_override(store.primary.config, "calls.write_s", "420")
    judge = for_store(Store.open(), backend=ScriptedBackend())
    assert (judge.deadline("scope"), judge.deadline("reflect"), judge.retries) == (42, 420, 1)
    tight = for_store(Store.open(), backend=ScriptedBackend(), timeout_s=3)
    assert (tight.deadline("relevance"), tight.deadline("reflect"), tight.retries) == (3, 3, 0)


@pytest.mark.parametrize("failure", [BackendTimeout("scripted", 9), BackendFailed("x", "busy")])
def test_a_timeout_or_a_failure_is_asked_once_more(store: Store, failure):
    backend = ScriptedBackend({"scope": [failure, SCOPE]})
    judge = for_store(store, backend=backend)
    assert judge.ask("scope", LESSON).scope == "project"
    assert len(backend.requests) == 2 and backend.requests[0].timeout_s == 120
    events = [e for e in read_events(store.primary.events, kind="judge") if e["call"] == "scope"]
    assert [e.get("retry", False) for e in events] == [True, False]


def test_after_its_retries_the_failure_stands_and_an_unrunnable_backend_is_not_retried(
    store: Store,
):
    twice = ScriptedBackend({"scope": [BackendTimeout("s", 1), BackendTimeout("s", 1), SCOPE]})
    with pytest.raises(BackendTimeout):
        for_store(store, backend=twice).ask("scope", LESSON)
    assert twice.pending("scope") == 1
    absent = ScriptedBackend({"scope": [BackendUnavailable("claude", "not on PATH"), SCOPE]})
    with pytest.raises(BackendUnavailable):
        for_store(store, backend=absent).ask("scope", LESSON)
    assert absent.pending("scope") == 1


def test_a_job_deadline_follows_from_its_calls():
    cfg = config.Config()
    cfg.calls.judge_s, cfg.calls.write_s, cfg.calls.retries, cfg.calls.backoff_s = 60, 200, 1, 5
    cfg.jobs.deadline_s = 100
    # 3 judgements and 1 write, each tried twice, each with one 5 s backoff before its retry
    assert jobs.deadline(3, 1, cfg) == (3 * 60 + 200) * 2 + 4 * 5
    assert jobs.deadline(0, 0, cfg) == 100  # never below jobs.deadline_s
    cfg.calls.retries = 0
    assert jobs.deadline(3, 1, cfg) == 3 * 60 + 200


def test_a_claimed_job_gets_its_derived_deadline(tmp_path, monkeypatch):
    from tests._jobs import make_ledger

    d = make_ledger(tmp_path, monkeypatch)
    monkeypatch.setenv("ROSE_CALLS_JUDGE_S", "10")
    monkeypatch.setenv("ROSE_CALLS_WRITE_S", "50")
    monkeypatch.setenv("ROSE_JOBS_DEADLINE_S", "10")
    jobs.submit(d, "reflect", {"session": "s"}, spawn=False)
    jobs.submit(d, "hang", {}, spawn=False)  # a test kind with a deadline of its own
    cfg = _ledger.load_config(d)
    with _ledger.locked(d.jobs):
        first, second = _ledger.claim(d, cfg, 0), _ledger.claim(d, cfg, 1)
    spec = jobs.KINDS["reflect"]
    backoff = (spec.calls + spec.writes) * cfg.calls.backoff_s  # 0 s in the tests
    assert first["deadline_s"] == (spec.calls * 10 + spec.writes * 50) * 2 + backoff
    assert second["deadline_s"] == 0.5

"""A store's judge uses the configured backend (`rose config agent ...`, or an explicit
override), caches under the store's machine-local judge-cache/ and logs to its events."""

from __future__ import annotations

import pytest

from rose import config
from rose.errors import BackendUnavailable
from rose.events import read_events
from rose.judge.calls import for_store
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def test_configured_agent_is_used_and_cached(store: Store):
    config.set_override(store.primary.config, "agent", "simulated")
    store = Store.open()
    judge = for_store(store)
    assert judge.backend.name == "simulated"
    lesson = {
        "title": "Ports",
        "gist": "The test database listens on 5433.",
        "body": "The test database listens on 5433.",
    }
    ctx = {"lesson": lesson, "project": "demo"}
    first = judge.ask("scope", ctx)
    again = judge.ask("scope", ctx)
    assert again == first and judge.hits == 1
    assert list(store.primary.judge_cache.rglob("*.json"))
    kinds = [e["kind"] for e in read_events(store.primary.events, kind="judge")]
    assert len(kinds) == 2


def test_agent_override_and_unknown_agent(store: Store):
    assert for_store(store, agent="scripted").backend.name == "scripted"
    with pytest.raises(BackendUnavailable):
        for_store(store, agent="gpt-9")

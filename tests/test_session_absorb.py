"""A session's scratch log becomes episodes: one per unit of work, each absorbed once.

Locks in: the session record lost what was served at every PreCompact and `/clear`, so an
episode could not list it; attribution had nowhere to go but a counter. Now the prompt
hook appends each unit to an append-only log that compaction never resets, `rose used`
appends attribution to it, and absorption writes one episode per complete unit with an id
derived from the session and the unit, so a Stop and a SessionEnd that both absorb, or an
absorption run twice, count each unit once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.files import sessions
from rose.models import Node
from rose.store.absorb import episode_id
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph


@pytest.fixture
def lessons(store: Store) -> Store:
    store.write(
        [
            Node(id="n_retry0001", title="Retry policy", gist="Back off.", body="Use 100ms."),
            Node(id="n_cache0001", title="Cache TTLs", gist="TTLs.", body="Profiles 300s."),
        ]
    )
    return store


def _hook(event: str, project: Path, **kw):
    code, out, _, err = run_hook(event, payload(event, project, session_id="s1", **kw))
    assert code == 0, err
    return out


def test_a_session_that_compacts_twice_still_lists_everything_served(lessons: Store, project):
    _hook("session-start", project, source="startup")
    first = _hook("user-prompt-submit", project, prompt="add retries")
    assert "n_retry0001" in first["hookSpecificOutput"]["additionalContext"]
    _hook("pre-compact", project)
    _hook("user-prompt-submit", project, prompt="cache the profile")
    _hook("session-start", project, source="compact")
    _hook("user-prompt-submit", project, prompt="ship it")
    log = sessions.read(lessons.primary.root, "s1")
    assert [e["t"] for e in log].count("compact") == 2
    episodes = lessons.absorb("s1", final=True)
    assert [e.turn for e in episodes] == [1, 2, 3]
    assert [e.prompt for e in episodes] == ["add retries", "cache the profile", "ship it"]
    for ep in episodes:  # re-served in full after each compaction, and listed each time
        assert set(ep.served) == {"n_retry0001", "n_cache0001"}
    assert {e.id for e in episodes} == {episode_id("s1", t) for t in (1, 2, 3)}


def test_absorption_takes_complete_units_and_never_counts_one_twice(lessons: Store):
    root = lessons.primary.root
    for turn in (1, 2):
        sessions.append(root, "s2", "prompt", turn=turn, prompt=f"p{turn}", served=["n_retry0001"])
        sessions.append(root, "s2", "used", turn=turn, used=["n_retry0001"], unused=[])
        sessions.append(root, "s2", "outcome", turn=turn, outcome="success")
    first = lessons.absorb("s2", final=False)  # a Stop: unit 2 is still open
    assert [e.turn for e in first] == [1]
    assert lessons.absorb("s2", final=False) == []
    last = lessons.absorb("s2", final=True)  # SessionEnd: the rest
    assert [e.turn for e in last] == [2]
    assert lessons.absorb("s2", final=True) == []
    stats = lessons.get("n_retry0001").stats
    assert (stats.attempts, stats.successes) == (2, 2)


def test_rose_used_attributes_to_the_latest_unit(lessons: Store, project: Path):
    _hook("user-prompt-submit", project, prompt="add retries")
    runner = CliRunner()
    res = runner.invoke(
        app, ["used", "-s", "s1", "--used", "n_retry0001", "--unused", "n_cache0001"]
    )
    assert res.exit_code == 0, res.output
    assert "prompt 1" in res.output
    res = runner.invoke(app, ["absorb", "-s", "s1", "--final", "--json"])
    assert res.exit_code == 0, res.output
    (ep,) = json.loads(res.output)
    assert ep["used"] == ["n_retry0001"] and set(ep["served"]) == {"n_retry0001", "n_cache0001"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["used", "-s", "s1", "--used", "n_nope00001"], "no lesson with id n_nope00001"),
        (["used", "-s", "s1", "--used", "not an id"], "not a lesson id"),
        (["used", "-s", "s1"], "at least one lesson"),
        (["used", "-s", "never", "--used", "n_retry0001"], "no recorded prompt"),
    ],
)
def test_rose_used_refuses_what_it_cannot_record(lessons: Store, project, args, message):
    _hook("user-prompt-submit", project, prompt="add retries")
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1
    assert message in res.output


def test_a_damaged_log_line_loses_only_itself(lessons: Store):
    root = lessons.primary.root
    sessions.append(root, "s3", "prompt", turn=1, prompt="p1", served=["n_retry0001", "bad id"])
    with sessions.log_path(root, "s3").open("a", encoding="utf-8") as fh:
        fh.write('{"t": "used", "turn": 1, "used": ["n_cache0001"\n')  # torn write
    sessions.append(root, "s3", "outcome", turn=1, outcome="splendid")  # not an outcome
    (ep,) = lessons.absorb("s3", final=True)
    assert (ep.served, ep.used, ep.outcome) == (["n_retry0001"], [], "unknown")


def _wait_for(predicate, timeout: float = 30.0) -> bool:
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_stop_and_session_end_absorb_through_the_job_runner(lessons: Store, project: Path):
    folder = lessons.primary.episodes
    _hook("user-prompt-submit", project, prompt="add retries")
    _hook("stop", project)  # unit 1 is still open: nothing to absorb yet
    _hook("user-prompt-submit", project, prompt="cache the profile")
    _hook("stop", project)  # unit 1 is complete now
    assert _wait_for(lambda: len(list(folder.glob("*.json"))) == 1)
    _hook("stop", project)  # again: already submitted, nothing new
    _hook("session-end", project, reason="exit")
    assert _wait_for(lambda: len(list(folder.glob("*.json"))) == 2)
    assert {e.turn for e in (lessons.get_episode(p.stem) for p in folder.glob("*.json"))} == {1, 2}

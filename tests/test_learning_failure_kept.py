"""A model that does not answer costs the session nothing: its learning waits and fails loud.

Locks in: a reflection whose model call timed out fails its job (`LearningFailed`), and
the session end's reflection then reads that stretch again, from where it started; a unit
whose judgement timed out is not absorbed (no episode with an unknown outcome) and the
session end fails, so its retry, with the model back, judges the unit and writes it; with
the model answering, the same session end is done and learns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose import config
from rose.errors import BackendTimeout, LearningFailed
from rose.events import read_events
from rose.files import sessions
from rose.jobs import learning
from rose.jobs.queue import JobContext
from rose.judge import calls
from rose.model.base import BackendAnswer
from rose.store.facade import Store

pytestmark = pytest.mark.graph

SID = "sess-slow-1"


class Silent:
    """A model that never answers in time."""

    name = "silent"

    def complete(self, call: str, prompt: str, schema: dict, *, timeout_s: float) -> BackendAnswer:
        raise BackendTimeout(self.name, timeout_s)


def _line(n: int, role: str, content) -> str:
    rec = {"type": role, "uuid": f"u{n}", "sessionId": SID, "version": "2.1.38",
           "message": {"role": role, "content": content}}  # fmt: skip
    return json.dumps(rec) + "\n"


@pytest.fixture
def session(store: Store, project: Path):
    config.set_override(store.primary.config, "agent", "simulated")
    path = project / "t.jsonl"
    path.write_text(
        _line(1, "user", "make the api listen on the right port")
        + _line(2, "assistant", [{"type": "text", "text": "It listens on 8081 now."}])
    )
    root = store.primary.root
    sessions.append(root, SID, "prompt", turn=1, prompt="make the api listen on the right port")
    return Store.open(project), path


def _silenced(monkeypatch: pytest.MonkeyPatch) -> None:
    real = calls.for_store
    monkeypatch.setattr(
        calls, "for_store", lambda s, backend=None, **kw: real(s, backend=Silent(), **kw)
    )


def _job(store: Store, payload: dict, attempt: int = 1) -> JobContext:
    return JobContext(store.primary, {"attempt": attempt}, payload)


def test_a_reflection_the_model_missed_fails_and_the_session_end_reads_it_again(
    session, monkeypatch
):
    store, path = session
    root = store.primary.root
    size = path.stat().st_size
    sessions.append(root, SID, "nudge", mode="background", why="turns", start=0, end=size)
    _silenced(monkeypatch)
    job = {"session": SID, "transcript": str(path), "start": 0, "end": size, "turn": 1}
    with pytest.raises(LearningFailed, match="BackendTimeout"):
        learning.reflect(_job(store, job))
    (said,) = [e for e in sessions.read(root, SID) if e["t"] == "reflected"]
    assert said["error"].startswith("BackendTimeout")
    monkeypatch.undo()
    config.set_override(store.primary.config, "agent", "simulated")
    end = {"session_id": SID, "transcript_path": str(path), "reason": "exit"}
    learning.session_end(_job(Store.open(root.parent), end))
    nudges = [e for e in sessions.read(root, SID) if e["t"] == "nudge"]
    assert nudges[-1]["mode"] == "session-end" and nudges[-1]["start"] == 0  # read again


def test_a_unit_the_model_could_not_judge_waits_for_the_retry(session, monkeypatch):
    store, path = session
    end = {"session_id": SID, "transcript_path": str(path), "reason": "exit"}
    _silenced(monkeypatch)
    with pytest.raises(LearningFailed):
        learning.session_end(_job(store, end))
    assert not list(store.primary.episodes.glob("*.json"))  # not written with outcome unknown
    monkeypatch.undo()
    learning.session_end(_job(Store.open(store.primary.root.parent), end, attempt=2))
    (episode,) = [json.loads(p.read_text()) for p in store.primary.episodes.glob("e_*.json")]
    assert episode["turn"] == 1 and episode["outcome"] != "unknown"
    judged = [e for e in read_events(store.primary.events, kind="judge") if e["call"] == "assess"]
    assert [bool(e.get("error")) for e in judged][-1] is False

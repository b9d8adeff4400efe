"""The learning jobs judge each unit of work once, whichever job gets there, and retry safely.

Locks in: a Stop's absorb job judges (`assess`) and writes the complete units so far; the
SessionEnd job judges and writes only the rest, then reflects once over the transcript
after the last reflection; running SessionEnd's job again (a retry) judges nothing twice,
writes no second episode and does not reflect again; each unit is judged on its own part
of the transcript (found by its prompt), and the lesson ids the agent cited there are noted
for its episode; without a readable transcript, units are still absorbed, credited nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rose import config
from rose.events import read_events
from rose.files import sessions
from rose.jobs import learning
from rose.jobs.queue import JobContext
from rose.store.facade import Store
from rose.transcripts.transcript import read

pytestmark = pytest.mark.graph

SID = "sess-learn-1"


def _line(n: int, role: str, content) -> str:
    rec = {"type": role, "uuid": f"u{n}", "sessionId": SID, "version": "2.1.38",
           "message": {"role": role, "content": content}}  # fmt: skip
    return json.dumps(rec) + "\n"


def _transcript(path: Path, lesson_id: str) -> Path:
    lines = [
        _line(1, "user", "make the api listen on the right port"),
        _line(2, "assistant", [{"type": "text", "text": f"Per {lesson_id[:10]}, port 8081."}]),
        _line(3, "user", "now restart it"),
        _line(4, "assistant", [{"type": "text", "text": "Restarted."}]),
    ]
    path.write_text("".join(lines))
    return path


@pytest.fixture
def setup(store: Store, project: Path):
    config.set_override(store.primary.config, "agent", "simulated")
    lesson = store.add("The api listens on 8081.", title="API port")
    root = store.primary.root
    for turn, prompt in ((1, "make the api listen on the right port"), (2, "now restart it")):
        sessions.append(root, SID, "prompt", turn=turn, prompt=prompt, served=[lesson.id])
    return Store.open(project), lesson, _transcript(project / "t.jsonl", lesson.id)


def _job(store: Store, payload: dict) -> JobContext:
    return JobContext(store.primary, {"attempt": 1}, payload)


def _calls(store: Store, call: str) -> int:
    return sum(1 for e in read_events(store.primary.events, kind="judge") if e["call"] == call)


def test_stop_then_session_end_judge_each_unit_once(setup):
    store, lesson, transcript = setup
    learning.absorb(_job(store, {"session": SID, "final": False, "transcript": str(transcript)}))
    assert _calls(store, "assess") == 1 and len(list(store.primary.episodes.glob("*.json"))) == 1
    end = {"session_id": SID, "transcript_path": str(transcript), "reason": "exit"}
    learning.session_end(_job(store, end))
    assert _calls(store, "assess") == 2 and _calls(store, "reflect") == 1
    learning.session_end(_job(store, end))  # the same end, retried
    assert _calls(store, "assess") == 2 and _calls(store, "reflect") == 1
    episodes = sorted(
        (json.loads(p.read_text()) for p in store.primary.episodes.glob("*.json")),
        key=lambda e: e["turn"],
    )
    assert [e["turn"] for e in episodes] == [1, 2]
    assert episodes[0]["citations"] == [lesson.id]  # cited by its short id in unit 1
    assert episodes[1]["citations"] == []
    assert all(e["outcome"] != "unknown" for e in episodes)


def test_each_unit_gets_its_own_part_of_the_transcript(setup):
    store, _lesson, transcript = setup
    parts = learning.unit_steps(read(transcript), [(1, "make the api listen on the right port"),
                                                   (2, "now restart it")])  # fmt: skip
    assert [s.text for s in parts[2]] == ["now restart it", "Restarted."]
    assert parts[1][0].text.startswith("make the api") and len(parts[1]) == 2
    moved = learning.unit_steps(read(transcript), [(1, "a prompt the hook saw differently"),
                                                   (2, "now restart it")])  # fmt: skip
    assert len(moved[1]) == 2 and len(moved[2]) == 2  # the first by position, the second by text


def test_without_a_transcript_units_are_absorbed_and_credit_nothing(setup):
    store, _lesson, _transcript = setup
    learning.session_end(_job(store, {"session_id": SID, "transcript_path": "", "reason": "x"}))
    assert _calls(store, "assess") == 0
    episodes = [json.loads(p.read_text()) for p in store.primary.episodes.glob("*.json")]
    assert len(episodes) == 2
    assert all(e["outcome"] == "unknown" and not e["used"] for e in episodes)


RACE = """
import sys
from pathlib import Path
from rose.jobs import learning
from rose.jobs.queue import JobContext
from rose.store.facade import Store
kind, project, transcript, sid = sys.argv[1:5]
store = Store.open(Path(project))
sys.stdin.readline()  # start together
job = JobContext(store.primary, {"attempt": 1}, (
    {"session": sid, "final": False, "transcript": transcript} if kind == "absorb"
    else {"session_id": sid, "transcript_path": transcript, "reason": "exit"}))
getattr(learning, kind)(job)
"""


def test_a_stop_job_and_session_end_side_by_side_judge_each_unit_once(setup, project: Path):
    import subprocess
    import sys

    store, _lesson, transcript = setup
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, kind, str(project), str(transcript), SID],
            stdin=subprocess.PIPE,
            text=True,
        )
        for kind in ("absorb", "session_end", "absorb", "session_end")
    ]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.close()
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    assert _calls(store, "assess") == 2  # two units, each judged once
    outcomes = [e for e in sessions.read(store.primary.root, SID) if e["t"] == "outcome"]
    assert sorted(e["turn"] for e in outcomes) == [1, 2]
    assert len(list(store.primary.episodes.glob("*.json"))) == 2


def test_a_resumed_session_that_ends_again_is_reflected_on_again(setup):
    store, _lesson, transcript = setup
    end = {"session_id": SID, "transcript_path": str(transcript), "reason": "exit"}
    learning.session_end(_job(store, end))
    assert _calls(store, "reflect") == 1
    with open(transcript, "a") as fh:
        fh.write(_line(5, "user", "and add a health check"))
        fh.write(_line(6, "assistant", [{"type": "text", "text": "Added /healthz."}]))
    sessions.append(store.primary.root, SID, "prompt", turn=3, prompt="and add a health check")
    learning.session_end(_job(store, end))
    assert _calls(store, "reflect") == 2 and _calls(store, "assess") == 3
    nudges = [e for e in sessions.read(store.primary.root, SID) if e["t"] == "nudge"]
    assert nudges[1]["start"] == nudges[0]["end"] == len(_transcript_bytes_before(transcript))


def _transcript_bytes_before(transcript: Path) -> bytes:
    data = transcript.read_bytes()
    return data[: data.index(b'"uuid": "u5"')].rsplit(b"\n", 1)[0] + b"\n"


def test_a_reflection_speaks_for_the_unit_it_was_started_in(setup):
    """A background reflection started in unit 1 that runs after unit 2 began: its
    verdicts go to unit 1, about what unit 1 was served."""
    store, lesson, transcript = setup
    root = store.primary.root
    sessions.append(root, SID, "prompt", turn=3, prompt="unrelated", served=[])
    cut = transcript.read_bytes().index(b'"uuid": "u3"')
    start_of_u3 = transcript.read_bytes()[:cut].rsplit(b"\n", 1)[0] + b"\n"
    payload = {"session": SID, "transcript": str(transcript), "start": 0,
               "end": len(start_of_u3), "turn": 1, "cwd": ""}  # fmt: skip
    learning.reflect(_job(store, payload))
    (done,) = [e for e in sessions.read(root, SID) if e["t"] == "reflected"]
    assert done["turn"] == 1
    spoke = [e for e in sessions.read(root, SID) if e["t"] == "used"]
    assert all(e["turn"] == 1 and set(e["used"] + e["unused"]) <= {lesson.id} for e in spoke)


def _corrected(store: Store, project: Path, host: str, sid: str) -> tuple[Any, Any, Path]:
    """A session of seed 5's world the user had to correct, written as `host`'s transcript in
    `project`, its unit opened in the session log: (the world, the session, the file)."""
    from rose.model.registry import simulated_model
    from rose.sim import World
    from rose.sim.agent import Agent
    from rose.sim.hosts import transcript as host_files
    from rose.sim.hosts.scoreboard import plain_prompt

    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", simulated_model(seed=5))
    world = World.generate(5)
    agent = Agent(world, seed=5)
    task, session = next((t, s) for t in world.tasks if (s := agent.session(t, "")).steered)
    path = project / ("session.jsonl" if host == "claude_code" else "rollout-x.jsonl")
    path.write_text(getattr(host_files, host)(session, session_id=sid, cwd=str(project)))
    root = Store.open(project).primary.root
    sessions.append(root, sid, "prompt", turn=1, prompt=plain_prompt(task), served=[])
    return world, session, path


def _judged_and_taught(store: Store, project: Path, world: Any, session: Any) -> None:
    """The unit's episode has an outcome, and a stored lesson holds what the user taught."""
    (episode,) = [json.loads(p.read_text()) for p in store.primary.episodes.glob("*.json")]
    assert episode["outcome"] in ("success", "partial", "failure")
    taught = [f for f in session.first.missing if not world.facts[f].known]
    lessons = [p.read_text() for p in project.glob(".rose*/nodes/*/*.md")]
    lessons += [p.read_text() for p in (project.parent / "home" / ".rose").glob("nodes/*/*.md")]
    assert lessons and any(set(world.facts_in(text)) & set(taught) for text in lessons)


@pytest.mark.parametrize("host", ["claude_code", "codex"])
def test_a_corrected_session_is_judged_and_taught_from_either_hosts_transcript(
    store: Store, project: Path, host: str
):
    """The simulated agent fails, the user corrects it; from the host's own transcript the
    session's end judges the unit (not a success at the first attempt) and mints a lesson
    holding what the user said, reconciled into the store."""
    world, session, path = _corrected(store, project, host, "s-host")
    end = {"session_id": "s-host", "transcript_path": str(path), "reason": "exit", "cwd": ""}
    learning.session_end(_job(Store.open(project), end))
    _judged_and_taught(store, project, world, session)


def test_a_correction_past_the_jobs_first_window_is_still_judged_and_taught(
    store: Store, project: Path, monkeypatch: pytest.MonkeyPatch
):
    """A session longer than the jobs' byte cap is read on in windows: the user's correction
    past the first one still judges the unit and mints the lesson, and nothing is cut."""
    from rose.transcripts import bounded as _bounded

    world, session, path = _corrected(store, project, "claude_code", "s-long")
    data = path.read_bytes()
    monkeypatch.setattr(_bounded, "JOB_BYTES", max(len(ln) for ln in data.splitlines()) + 1)
    assert len(data) > 2 * _bounded.JOB_BYTES  # the correction lies past the first window
    end = {"session_id": "s-long", "transcript_path": str(path), "reason": "exit", "cwd": ""}
    learning.session_end(_job(Store.open(project), end))
    _judged_and_taught(store, project, world, session)
    assert read_events(store.primary.events, kind="transcript-cut") == []


def test_a_lesson_that_cannot_be_stored_keeps_the_verdicts_and_fails_the_job(
    setup, monkeypatch: pytest.MonkeyPatch
):
    """A store locked past its deadline while a reflection stores its lesson: what the
    reflection said is in the session's log all the same, and the job fails, visibly."""
    from rose.errors import StoreLocked
    from rose.jobs import capture
    from rose.loop.reflection import reflect as reflection
    from rose.models import Node

    store, lesson, transcript = setup

    def locked(*_a, **_k):
        raise StoreLocked(store.graph_path, "pid 1", 30.0, "held")

    def found(*_a, **_k):
        out = reflection.Reflection(used=[lesson.id])
        return object(), out

    monkeypatch.setattr(capture, "capture", locked)
    monkeypatch.setattr(reflection, "reflect", found)
    monkeypatch.setattr(reflection, "minted_nodes", lambda *_a, **_k: [Node(title="t", body="b")])
    payload = {"session": SID, "transcript": str(transcript), "start": 0, "turn": 1}
    with pytest.raises(StoreLocked):
        learning.reflect(_job(store, payload))
    entries = sessions.read(store.primary.root, SID)
    (said,) = [e for e in entries if e["t"] == "used"]
    assert said["used"] == [lesson.id] and said["source"] == "background"
    (done,) = [e for e in entries if e["t"] == "reflected"]
    assert "could not be stored" in done["error"]


def test_a_reflection_that_fails_never_keeps_the_episodes_out(setup):
    """Junk in the session's scratch log makes the closing reflection fail: the units are
    absorbed all the same, and the job fails (so it is retried, and shown)."""
    store, _lesson, transcript = setup
    sessions.append(store.primary.root, SID, "nudge", mode="block", why="x", start=0, end="?")
    end = {"session_id": SID, "transcript_path": str(transcript), "reason": "exit"}
    with pytest.raises(ValueError):
        learning.session_end(_job(store, end))
    assert len(list(store.primary.episodes.glob("*.json"))) == 2
    assert read_events(store.primary.events, kind="reflect-failed")

"""The Stop hook starts reflections on structural occasions, per mode, and never loops.

Locks in, through real `rose hook stop` processes over a Claude Code transcript that grows
turn by turn: a nudge fires once the tool calls, failed tool calls or turns since the last
reflection reach their settings (and not before); the cooldown holds the next one back;
`block` answers the host with `decision: block` and a reason naming the session, and a
Stop from that continuation (`stop_hook_active`) blocks nothing; `background` queues a
`reflect` job instead of answering; `off` does neither; under ROSE_CHILD nothing happens.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rose import config
from rose.files import sessions
from rose.store.facade import Store
from tests._hookrun import run_hook
from tests._jobs import finished, wait_for

SID = "sess-reflect-1"


class Transcript:
    """A Claude Code 2.x session file that the test appends turns to."""

    def __init__(self, path: Path):
        self.path = path
        self.n = 0

    def _line(self, kind: str, content) -> dict:
        self.n += 1
        return {
            "type": kind,
            "uuid": f"u{self.n}",
            "parentUuid": f"u{self.n - 1}" if self.n > 1 else None,
            "sessionId": SID,
            "version": "2.1.38",
            "cwd": "/work",
            "timestamp": f"2026-12-01T10:00:{self.n % 60:02d}.000Z",
            "message": {"role": kind, "content": content},
        }

    def turn(self, prompt: str, *, tools: int = 0, failed: int = 0) -> None:
        lines = [self._line("user", prompt)]
        for i in range(tools):
            tid = f"toolu_{self.n}_{i}"
            use = {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": f"ls {i}"}}
            lines.append(self._line("assistant", [use]))
            bad = i < failed
            result = {
                "type": "tool_result",
                "tool_use_id": tid,
                "content": "Exit code 1\nno such file" if bad else "ok",
                "is_error": bad,
            }
            lines.append(self._line("user", [result]))
        lines.append(self._line("assistant", [{"type": "text", "text": "Done."}]))
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(line) + "\n" for line in lines)


@pytest.fixture
def rose_store(store: Store, project: Path) -> Store:
    config.set_override(store.primary.config, "agent", "simulated")
    return store


def _stop(project: Path, transcript: Path, **extra):
    payload = {
        "session_id": SID,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        **extra,
    }
    code, out, _raw, err = run_hook("stop", payload)
    assert code == 0, err
    return out


def _nudges(store: Store) -> list[dict]:
    return [e for e in sessions.read(store.primary.root, SID) if e["t"] == "nudge"]


def _set(store: Store, **values: str) -> None:
    for key, value in values.items():
        config.set_override(store.primary.config, f"reflect.{key}", value)


def test_block_mode_nudges_on_tool_calls_and_never_loops(rose_store: Store, project: Path):
    _set(rose_store, mode="block", nudge_after_tool_calls="5", nudge_after_turns="10")
    t = Transcript(project / "t.jsonl")
    t.turn("first", tools=3)
    assert _stop(project, t.path) is None  # 3 < 5
    t.turn("second", tools=2)
    out = _stop(project, t.path)
    assert out["decision"] == "block" and SID in out["reason"]
    assert "rose used" in out["reason"] or "rose add" in out["reason"]
    (nudge,) = _nudges(rose_store)
    assert nudge["mode"] == "block" and nudge["why"] == "5 tool calls"
    assert _stop(project, t.path, stop_hook_active=True) is None  # the reflection turn
    t.turn("third", tools=9)
    assert _stop(project, t.path) is None  # due, but within the cooldown
    assert len(_nudges(rose_store)) == 1


def test_failed_tool_calls_and_turns_are_occasions_too(rose_store: Store, project: Path):
    _set(rose_store, mode="block", nudge_cooldown_s="0", nudge_after_turns="3")
    t = Transcript(project / "t.jsonl")
    t.turn("a", tools=2, failed=2)
    assert _stop(project, t.path)["decision"] == "block"
    assert _nudges(rose_store)[-1]["why"] == "2 failed tool calls"
    for p in ("b", "c"):
        t.turn(p)
        assert _stop(project, t.path) is None
    t.turn("d")
    assert _stop(project, t.path)["decision"] == "block"
    assert _nudges(rose_store)[-1]["why"] == "3 turns"


def test_background_mode_queues_a_reflect_job_and_answers_nothing(rose_store: Store, project: Path):
    _set(rose_store, mode="background", nudge_after_tool_calls="2")
    t = Transcript(project / "t.jsonl")
    t.turn("a", tools=2)
    assert _stop(project, t.path) is None
    records = [json.loads(p.read_text()) for p in rose_store.primary.jobs.glob("*.json")]
    assert [r["kind"] for r in records] == ["reflect"]
    (nudge,) = _nudges(rose_store)
    assert nudge["mode"] == "background" and nudge["start"] == 0
    assert nudge["end"] == t.path.stat().st_size
    done = wait_for(lambda: finished(rose_store.primary, records[0]["id"]), timeout=60)
    assert done["state"] == "done", done
    (reflected,) = [e for e in sessions.read(rose_store.primary.root, SID) if e["t"] == "reflected"]
    assert reflected["produced"] is False and not reflected.get("error")


def test_off_mode_and_child_processes_do_nothing(rose_store: Store, project: Path):
    _set(rose_store, mode="off", nudge_after_tool_calls="1")
    t = Transcript(project / "t.jsonl")
    t.turn("a", tools=4)
    assert _stop(project, t.path) is None and not _nudges(rose_store)
    _set(rose_store, mode="block")
    payload = {"session_id": SID, "transcript_path": str(t.path), "cwd": str(project)}
    code, out, _raw, _err = run_hook("stop", payload, env={"ROSE_CHILD": "1"})
    assert code == 0 and out is None and not _nudges(rose_store)


def test_codex_sessions_are_counted_from_their_rollout(rose_store: Store, project: Path):
    """Codex's Stop payload (it carries `turn_id`) and rollout file count the same way: the
    hand-made rollout holds two failed tool calls, which is an occasion by itself."""
    _set(rose_store, mode="block", nudge_after_turns="10", nudge_after_tool_calls="10")
    rollout = project / "rollout-2026-12-01T10-00-00-abc.jsonl"
    fixture = Path(__file__).parent / "fixtures" / "transcripts" / "codex-0.171-hand.jsonl"
    rollout.write_bytes(fixture.read_bytes())
    out = _stop(project, rollout, turn_id="turn-1", model="gpt-5-codex")
    assert out["decision"] == "block" and SID in out["reason"]
    assert _nudges(rose_store)[-1]["why"] == "2 failed tool calls"


def test_the_backoff_holds_nudges_back_until_one_produces_something(
    rose_store: Store, project: Path
):
    """After a reflection that produced nothing, the next waits twice the cooldown
    (`nudge_backoff_after` 1); once one produced something, the plain cooldown again."""
    _set(rose_store, mode="block", nudge_after_turns="1", nudge_cooldown_s="100",
         nudge_backoff_after="1")  # fmt: skip
    t = Transcript(project / "t.jsonl")
    t.turn("a")
    assert _stop(project, t.path)["decision"] == "block"
    record = rose_store.primary.sessions / f"{SID}.json"

    def last_nudge_ago(seconds: float) -> None:
        rec = json.loads(record.read_text())
        rec["reflect"]["last"] = time.time() - seconds
        record.write_text(json.dumps(rec))

    t.turn("b")
    last_nudge_ago(150)  # past the cooldown, within twice it: the empty one holds it back
    assert _stop(project, t.path) is None
    sessions.append(rose_store.primary.root, SID, "minted", turn=1, id="n_0123456789ab")
    t.turn("c")
    last_nudge_ago(150)
    assert _stop(project, t.path)["decision"] == "block"  # it produced: plain cooldown
    t.turn("d")
    last_nudge_ago(250)  # one empty again, but past twice the cooldown
    assert _stop(project, t.path)["decision"] == "block"

"""A reflector that sees the work fail mid-session restores dropped detail for the rest of the
session; the prompt hook serves it; a success with it served makes it a patch of the lesson.

Locks in: the reflect answer's outcome reaches descent (`during_session`), which writes the
restored claims to the session's `restored` file (not the lesson file) and logs the
expansion for the unit's episode; the next prompt's block carries a `<lesson-restored>`
piece for the lesson although the lesson is still in context (fresh), once only, and every
later unit logs the lesson as in context with the claims as its patches; the unit that
then succeeds and used the lesson credits them (`patch_rescues`), and they become patches
of the lesson (sticky), where before they were in the session alone.
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from rose import config
from rose.events import read_events
from rose.files import sessions
from rose.hooks import main as hooks
from rose.jobs import learning
from rose.loop.abstraction import descend
from rose.sim import Agent
from rose.sim.hosts.transcript import claude_code
from rose.sim.markers import TASK, drop
from rose.store.facade import Store
from tests._descent import level1

pytestmark = pytest.mark.graph

SID = "sess-during-1"
SEED = 1


def _prompt(monkeypatch: pytest.MonkeyPatch, project: Path, text: str) -> str:
    payload = {"session_id": SID, "cwd": str(project), "hook_event_name": "UserPromptSubmit",
               "prompt": text, "transcript_path": ""}  # fmt: skip
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    out = io.StringIO()
    with redirect_stdout(out):
        hooks.main(["user-prompt-submit"])
    answer = json.loads(out.getvalue()) if out.getvalue().strip() else {}
    return (answer.get("hookSpecificOutput") or {}).get("additionalContext", "")


def test_restored_mid_session_served_then_kept_once_it_rescues(
    store: Store, project: Path, monkeypatch: pytest.MonkeyPatch
):
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", f"seed={SEED}")
    store = Store.open(project)
    fam = level1(store, SEED)
    root = store.primary.root
    prompt = drop(fam.task.prompt, TASK).strip()
    first = _prompt(monkeypatch, project, prompt)
    assert fam.apex in first and "lesson-restored" not in first
    session = Agent(fam.world, seed=SEED).session(fam.task, first, steer=False)
    assert not session.outcome.ok
    path = project / "t.jsonl"
    path.write_text(claude_code(session, session_id=SID, cwd=str(project)))

    learning.reflect_on(store, SID, str(path), source="reflector")
    restored = sessions.restored(root, SID)
    dropped = {c.claim for c in store.get(fam.apex).dropped}
    assert restored and {r["text"] for r in restored} <= dropped
    assert store.get(fam.apex).patches == []  # the lesson file is not touched
    (event,) = read_events(store.primary.events, kind="descend")
    assert event["during"] is True and event["lesson"] == fam.apex
    expands = [e for e in sessions.read(root, SID) if e["t"] == "expand"]
    assert {e["claim"] for e in expands} == {r["claim"] for r in restored}

    again = _prompt(monkeypatch, project, "That is not right. It still fails; please try again.")
    assert f'<lesson-restored id="{fam.apex}">' in again
    assert all(r["text"] in again for r in restored)
    third = _prompt(monkeypatch, project, "And the docs?")
    assert "lesson-restored" not in third  # delivered once: still in context
    units = [e for e in sessions.read(root, SID) if e["t"] == "prompt"]
    patches = sorted(r["patch"] for r in restored)
    for unit in units[1:]:
        assert fam.apex in unit["served"] and sorted(unit["patched"][fam.apex]) == patches

    sessions.append(root, SID, "used", turn=2, used=[fam.apex], unused=[])
    sessions.append(root, SID, "outcome", turn=2, outcome="success")
    sessions.append(root, SID, "outcome", turn=3, outcome="failure")
    written = store.absorb(SID, final=True)
    rescued = {e.turn: sorted(x.claim for x in e.patch_rescues) for e in written}
    assert rescued[2] == patches and rescued[3] == []
    assert descend.keep_rescues(store, SID, written) == [fam.apex]
    assert sorted(store.get(fam.apex).patches) == sorted(r["text"] for r in restored)
    assert read_events(store.primary.events, kind="sticky")[0]["lessons"] == [fam.apex]

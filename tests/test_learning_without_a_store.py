"""ROSE installed for the user, in a repository with no store: a session still teaches it.

Locks in, through real hook processes and the real detached job: SessionEnd with no store
anywhere makes the global store to hold its job; the job reads the transcript, reflects on
what the user had to correct, and the lesson (about this project) lands in a new `.rose/`
at the repository's root; the next prompt's status line says the store was made, once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose.model.registry import simulated_model
from rose.sim import World
from rose.sim.agent import Agent
from rose.sim.hosts.scoreboard import plain_prompt
from rose.sim.hosts.transcript import claude_code
from tests._hookrun import run_hook
from tests._jobs import wait_for

pytestmark = pytest.mark.graph

SEED = 4


def _project_task(world: World):
    """A task whose facts are all about project-scoped topics, that fails without help."""
    agent = Agent(world, seed=SEED, explains=1.0)
    for task in world.tasks:
        needs = {world.facts[f].topic for f in task.needs}
        if all(world.topics[t].scope == "project" for t in needs):
            session = agent.session(task, "")
            if session.steered:
                return task, session
    raise AssertionError("the world has no such task")


def test_a_session_in_a_storeless_repository_creates_its_store(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (project / ".git").mkdir()
    glob = tmp_path / "home" / ".rose"
    assert not glob.exists()
    monkeypatch.setenv("ROSE_AGENT", "simulated")
    monkeypatch.setenv("ROSE_MODEL", simulated_model(seed=SEED))
    world = World.generate(SEED)
    task, session = _project_task(world)
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(claude_code(session, session_id="s-1", cwd=str(project)))
    end = {"session_id": "s-1", "transcript_path": str(transcript), "cwd": str(project),
           "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}  # fmt: skip
    code, _out, _raw, err = run_hook("session-end", end)
    assert code == 0, err
    assert glob.is_dir()  # made to hold the job
    store = project / ".rose"
    wait_for(lambda: list(store.glob("nodes/*/*.md")), timeout=90)
    (job,) = [json.loads(p.read_text()) for p in (glob / "jobs").glob("*.json")]
    assert job["kind"] == "session-end"
    prompt = {"session_id": "s-2", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
              "prompt": plain_prompt(task)}  # fmt: skip
    code, out, _raw, err = run_hook("user-prompt-submit", prompt)
    assert code == 0, err
    assert "new store: .rose/" in out["systemMessage"]
    code, again, _raw, _err = run_hook("user-prompt-submit", {**prompt, "session_id": "s-3"})
    assert "new store" not in (again or {}).get("systemMessage", "")

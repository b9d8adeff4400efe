"""A simulated session written out in the hosts' own formats reads back, through ROSE's
transcript reader and digest, as the same session.

Locks in: for a session where the user had to steer, the digest ROSE builds from the
Claude Code file and from the Codex rollout has one User/Agent/Tool line per line of
the session's own record, each carrying the same facts (the task marker aside, which no
host writes); the lesson the agent cited is in `cited`; and the simulated model's assess
and reflect answer the same from ROSE's digest as from the session's own record (the
outcome, whether it was steered, which lessons were used; whether a lesson was found and
which facts it holds).
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.sim import Agent, SimulatedBackend, World, examples
from rose.sim.hosts.transcript import claude_code, codex
from rose.transcripts.digest import build
from rose.transcripts.transcript import read

SEEDS = range(6)
LESSON_ID = "n_0a1b2c3d4e5f"


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(2)


def _sessions(world: World):
    task = examples.focus_task(world)
    lesson = examples.lesson(world, LESSON_ID, examples.unknown(world, task)[:1])
    for seed in SEEDS:
        session = Agent(world, seed=seed, explains=1.0).session(task, examples.block([lesson]))
        assert session.steered  # the lesson holds one of the facts the task needs
        yield task, lesson, session


def _digest(tmp_path, session, host: str) -> str:
    if host == "claude-code":
        path = tmp_path / "3f1c2a9e.jsonl"
        path.write_text(claude_code(session, session_id="3f1c2a9e-0000-4000-8000-1", cwd="/w"))
    else:
        path = tmp_path / "rollout-2026-01-05T09-00-00-019e.jsonl"
        path.write_text(codex(session, session_id="019e0000-0000-7000-8000-1", cwd="/w"))
    t = read(path)
    assert t.host == host and t.skipped == 0
    return build(t).text


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_the_digest_carries_the_sessions_facts_line_by_line(world, tmp_path, host):
    for _task, _lesson, session in _sessions(world):
        ours = _digest(tmp_path, session, host).splitlines()
        theirs = session.transcript.splitlines()
        assert [ln.split(": ", 1)[0] for ln in ours] == [ln.split(": ", 1)[0] for ln in theirs]
        assert [world.facts_in(ln) for ln in ours] == [world.facts_in(ln) for ln in theirs]


def test_a_lesson_the_agent_cited_is_cited(world, tmp_path):
    citing = [s for _, _, s in _sessions(world) if f"(lesson {LESSON_ID})" in s.transcript]
    assert citing
    for session in citing:
        for write in (claude_code, codex):
            path = tmp_path / "session.jsonl"
            path.write_text(write(session, session_id="s", cwd="/w"))
            assert build(read(path)).cited == [LESSON_ID]


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_assess_and_reflect_judge_our_digest_as_the_sessions_own(world, tmp_path, host):
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    for task, lesson, session in _sessions(world):
        ours = _digest(tmp_path, session, host)
        answers = []
        for digest in (ours, session.transcript):
            context = {"prompt": task.prompt, "digest": digest, "served": [lesson]}
            assessed = judge.ask("assess", context)
            reflected = judge.ask("reflect", context)
            facts = [f for x in reflected.new_lessons for f in world.facts_in(x.body)]
            answers.append(
                (
                    assessed.outcome,
                    assessed.steered,
                    assessed.used_ids(),
                    reflected.found,
                    sorted(facts),
                )
            )
        assert answers[0] == answers[1]
        assert answers[0][1] and answers[0][3]  # steered, and something was learnt

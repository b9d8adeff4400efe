"""The head start: the model CLIs a prompt's recall will ask, started as the hook begins.

Locks in: recall notes the backend, its model, the relevance schema and how many questions
its first level asked, in the judge cache's folder, only for a backend that starts CLIs
ahead (another backend's recall removes the note); the note starts exactly that many CLIs,
and the relevance call recall then makes takes one of them (the argv built from the note
is the call's own); a note that fails any check (another backend, a model name that is an
option, a count out of range, a schema that is not an object, broken JSON) starts nothing;
ROSE_HEAD_START=0 turns it off; the prompt hook starts it only on its way to the model,
never when the view answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose.hooks import main as hooks
from rose.hosts.payload import Root
from rose.judge.calls import Judge, schema_of
from rose.loop.selection import head_start
from rose.model.claude import ClaudeBackend
from rose.model.scripted import ScriptedBackend
from tests import test_backend_claude_warm as warm
from tests.test_backend_claude_warm import asked, started, wait_for

fake = warm.fake  # the fake claude CLI on PATH, new enough to be started ahead


def _judge(backend) -> Judge:
    return Judge(backend, cache_path=None, events_path=None)


def test_the_note_starts_the_first_levels_clis_and_the_call_takes_one(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_ANSWER", json.dumps({"verdicts": []}))
    folder = tmp_path / "judge-cache"
    assert head_start.note(folder, _judge(ClaudeBackend(model="haiku")), 2)
    assert not head_start.note(folder, _judge(ClaudeBackend(model="haiku")), 2), "unchanged"
    note = json.loads((folder / head_start.NAME).read_text())
    assert note["n"] == 2 and note["model"] == "haiku" and note["backend"] == "claude"
    assert note["schema"] == schema_of("relevance")

    assert head_start.start(folder) == 2
    wait_for(lambda: len(started(fake)) == 2)
    spares = {c["pid"] for c in started(fake)}
    # recall's own call, as the judge makes it: the schema from the models, not the note
    ClaudeBackend(model="haiku").complete("relevance", "q", schema_of("relevance"), timeout_s=10)
    (call,) = asked(fake)
    assert call["pid"] in spares, "the call started its own CLI instead of taking the spare"


def test_a_backend_that_cannot_start_ahead_leaves_no_note(tmp_path: Path):
    folder = tmp_path / "judge-cache"
    assert head_start.note(folder, _judge(ClaudeBackend()), 1)
    assert head_start.note(folder, _judge(ScriptedBackend()), 1)  # the old note goes
    assert not (folder / head_start.NAME).exists()
    assert not head_start.note(folder, _judge(ClaudeBackend()), 0)  # nothing was asked


@pytest.mark.parametrize(
    "change",
    [
        {"backend": "codex"},
        {"backend": "sh"},
        {"model": "--dangerously-skip-permissions"},
        {"model": "haiku; rm -rf ~"},
        {"model": 3},
        {"n": 0},
        {"n": head_start.MAX_AHEAD + 1},
        {"n": True},
        {"n": "2"},
        {"schema": "{}"},
        {"call": "reflect"},
    ],
)
def test_a_note_that_fails_a_check_starts_nothing(fake, tmp_path: Path, change: dict):
    folder = tmp_path / "judge-cache"
    head_start.note(folder, _judge(ClaudeBackend()), 1)
    path = folder / head_start.NAME
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    assert head_start.read(folder) is None
    assert head_start.start(folder) == 0
    assert fake.calls() == []


def test_broken_or_missing_notes_and_the_switch_start_nothing(fake, tmp_path, monkeypatch):
    folder = tmp_path / "judge-cache"
    assert head_start.start(folder) == 0  # none yet
    head_start.note(folder, _judge(ClaudeBackend()), 1)
    monkeypatch.setenv("ROSE_HEAD_START", "0")
    assert head_start.start(folder) == 0
    monkeypatch.delenv("ROSE_HEAD_START")
    (folder / head_start.NAME).write_text('{"backend": "claude", "n": ')
    assert head_start.start(folder) == 0
    assert fake.calls() == []


@pytest.mark.parametrize("fits", [True, False])
def test_the_hook_starts_it_only_on_its_way_to_the_model(tmp_path, monkeypatch, fits: bool):
    view = {"enabled": True, "empty": False, "fits": fits, "lessons": []}
    monkeypatch.setattr(hooks, "_read_view", lambda roots: (view, True))
    begun: list[Path] = []
    monkeypatch.setattr(head_start, "start", lambda folder: begun.append(folder) or 0)
    from rose.loop.selection import recall

    monkeypatch.setattr(recall, "recall_for_hook", lambda *a: (view, [], "", {}))
    hooks._choose("a prompt", [Root(str(tmp_path / ".rose"), "project")], str(tmp_path))
    assert begun == ([] if fits else [tmp_path / ".rose" / "judge-cache"])

"""The keeper: relevance CLIs kept started between prompts by a process of their own.

Locks in: a keeper started after a model-decided prompt holds CLIs started under the
call's exact argv and environment, and the next call is answered by one of them (and
`prewarm` leaves the starting to it); a call with another argv is not; once quiet it
starts as many as the last prompt asked (within `MAX_KEPT`); idle, it dismisses its CLIs
without asking the model and leaves no process and no socket; killed, its CLIs exit on
their own and the next call starts its own; a question past its deadline times out and
its CLI is killed; a CLI's failure reads as a direct call's; CLIs that keep dying end the
keeper; ROSE_KEEP_WARM=0, `keep_warm_s` 0 or a socket folder another user could reach
keep nothing; recall has one started once the model decided a prompt; `rose status`
shows each keeper, and `stop_all` ends them; a keeper past `MAX_KEEPERS` stops the one
idle longest.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from rose.errors import BackendFailed, BackendTimeout
from rose.host._payload import Root
from rose.model import _keeper
from rose.model.claude import ClaudeBackend
from tests._kept import gone, own_folder
from tests.test_backend_claude import ANSWER, SCHEMA
from tests.test_backend_claude_warm import asked, calls, started, wait_for
from tests.test_backend_claude_warm import fake as warm_fake

fake = warm_fake


@pytest.fixture(autouse=True)
def keeping(monkeypatch):
    """Keeping on, its sockets in a short folder of this test's own; every keeper ended."""
    with own_folder(monkeypatch, "rk-", _keeper.stop_all) as run:
        yield run


def _sockets(run: Path) -> list[Path]:
    return list((run / f"rose-{os.getuid()}").glob("*.sock"))


def test_a_kept_cli_answers_the_next_call_and_the_used_ones_are_started_again(fake, keeping):
    backend = ClaudeBackend()
    assert backend.keep_warm(SCHEMA, 2, idle_s=30)
    wait_for(lambda: len(started(fake)) == 2)
    assert not backend.keep_warm(SCHEMA, 2, idle_s=30), "one is up already"
    kept = {c["pid"] for c in started(fake)}
    (keeper,) = {c["ppid"] for c in started(fake)}
    assert keeper != os.getpid(), "the CLIs are the keeper's, not this process's"
    assert backend.prewarm(SCHEMA, 2) == 0, "the keeper's CLIs are started already"

    answers: list = []
    threads = [
        threading.Thread(
            target=lambda: answers.append(backend.complete("relevance", "q", SCHEMA, timeout_s=10))
        )
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a.data for a in answers] == [ANSWER, ANSWER]
    assert {c["pid"] for c in asked(fake)} == kept, "each question went to a kept CLI"
    assert all(c["cwd"] is None or "rose-claude-" in c["cwd"] for c in asked(fake))
    # once quiet, as many as were asked are started again, by the keeper
    wait_for(lambda: len(started(fake)) == 4)
    assert {c["ppid"] for c in started(fake)} == {keeper}
    time.sleep(_keeper.QUIET_S + 0.3)
    assert len(started(fake)) == 4, "no more than the last prompt asked"


def test_a_call_with_another_argv_starts_its_own_cli(fake):
    assert ClaudeBackend(model="haiku").keep_warm(SCHEMA, 1, idle_s=30)
    wait_for(lambda: len(started(fake)) == 1)
    (kept,) = started(fake)
    answer = ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    assert answer.data == ANSWER
    (call,) = asked(fake)
    assert call["pid"] != kept["pid"] and call["ppid"] == os.getpid()


def test_another_environment_is_another_key(monkeypatch):
    argv = ["claude", "-p"]
    here = _keeper.key_for(argv)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    assert _keeper.key_for(argv) != here, "a CLI started for another endpoint must not answer"
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.setenv("OLDPWD", "/elsewhere")
    assert _keeper.key_for(argv) == here, "the shell's last folder changes nothing in a call"
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "1e863b71-faea-4ebb-bd6e-684c601d6a11")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/tmp/elsewhere")
    assert _keeper.key_for(argv) == here, "the next session's prompts find the same keeper"


def test_a_new_keeper_past_the_cap_stops_the_one_idle_longest(fake, keeping, monkeypatch):
    pids = []
    for n in range(_keeper.MAX_KEEPERS + 1):  # each its own environment: its own key
        monkeypatch.setenv("ROSE_TEST_TERMINAL", str(n))
        assert ClaudeBackend().keep_warm(SCHEMA, 1, idle_s=30)
        wait_for(lambda n=n: len(started(fake)) == n + 1)
        pids.append(started(fake)[-1]["ppid"])
        time.sleep(0.3)  # the first is idle longest
    wait_for(lambda: len(_sockets(keeping)) == _keeper.MAX_KEEPERS, 15)
    wait_for(lambda: gone(pids[0]), 15)
    assert sorted(r["pid"] for r in _keeper.status_all()) == sorted(pids[1:])


def test_a_stopped_keeper_dismisses_its_clis(fake, keeping):
    assert ClaudeBackend().keep_warm(SCHEMA, 1, idle_s=30)
    wait_for(lambda: len(started(fake)) == 1)
    assert _keeper.stop_all() == 1
    wait_for(lambda: not _sockets(keeping), 15)
    wait_for(lambda: gone(started(fake)[0]["pid"]), 15)
    assert _keeper.stop_all() == 0


def test_an_idle_keeper_dismisses_its_clis_and_leaves_nothing(fake, keeping):
    assert ClaudeBackend().keep_warm(SCHEMA, 2, idle_s=1.5)
    wait_for(lambda: len(started(fake)) == 2)
    pids = [c["pid"] for c in started(fake)]
    wait_for(lambda: not _sockets(keeping), 15)
    wait_for(lambda: all(gone(p) for p in pids), 15)
    dismissed = [c for c in calls(fake) if "message" in c and c["message"] is None]
    assert sorted(c["pid"] for c in dismissed) == sorted(pids), "dismissed by EOF"
    assert asked(fake) == [], "a dismissed CLI never asks the model"


def test_a_killed_keepers_clis_exit_and_the_next_call_starts_its_own(fake, keeping):
    assert ClaudeBackend().keep_warm(SCHEMA, 2, idle_s=30)
    wait_for(lambda: len(started(fake)) == 2)
    pids = [c["pid"] for c in started(fake)]
    os.kill(started(fake)[0]["ppid"], signal.SIGKILL)
    wait_for(lambda: all(gone(p) for p in pids), 15)
    assert _sockets(keeping), "a killed keeper leaves its socket behind"
    answer = ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    assert answer.data == ANSWER
    (call,) = asked(fake)
    assert call["ppid"] == os.getpid()
    assert not _sockets(keeping), "the stale socket is cleared for the next keeper"


def test_a_question_past_its_deadline_times_out_and_its_cli_is_killed(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "slow")
    assert ClaudeBackend().keep_warm(SCHEMA, 1, idle_s=30)
    wait_for(lambda: len(started(fake)) == 1)
    (kept,) = started(fake)
    t0 = time.monotonic()
    with pytest.raises(BackendTimeout):
        ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=1.0)
    assert time.monotonic() - t0 < 1.0 + _keeper._GRACE_S + 1
    assert asked(fake)[0]["pid"] == kept["pid"]
    wait_for(lambda: gone(kept["pid"]), 10)


def test_a_failing_cli_reads_as_a_direct_calls_failure(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "fail")
    assert ClaudeBackend().keep_warm(SCHEMA, 1, idle_s=30)
    wait_for(lambda: len(started(fake)) == 1)
    with pytest.raises(BackendFailed, match="Invalid API key"):
        ClaudeBackend().complete("relevance", "q", SCHEMA, timeout_s=10)
    assert asked(fake)[0]["ppid"] != os.getpid(), "the kept CLI was asked"


def test_clis_that_keep_dying_end_the_keeper(fake, keeping, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "die-early")
    assert ClaudeBackend().keep_warm(SCHEMA, 1, idle_s=60)
    wait_for(lambda: len(started(fake)) >= 1)
    wait_for(lambda: not _sockets(keeping), 15)
    assert len(started(fake)) <= _keeper._DEAD_STARTS + 1, "no loop of starts"


@pytest.mark.parametrize("how", ["switch", "zero", "folder"])
def test_keeping_off_keeps_nothing(fake, keeping, monkeypatch, how):
    if how == "switch":
        monkeypatch.setenv("ROSE_KEEP_WARM", "0")
    elif how == "folder":  # another user could reach a socket in it
        folder = keeping / f"rose-{os.getuid()}"
        folder.mkdir(mode=0o700)
        folder.chmod(0o777)
    idle = 0 if how == "zero" else 30
    assert not ClaudeBackend().keep_warm(SCHEMA, 2, idle_s=idle)
    time.sleep(_keeper.QUIET_S + 0.3)
    assert started(fake) == [] and _sockets(keeping) == []


def test_recall_has_a_keeper_started_once_the_model_decided(fake, keeping, tmp_path):
    from rose.loop import head_start

    folder = tmp_path / "judge-cache"  # as recall ends: the note, then the keeper from it
    _note(folder, (0, 600))
    assert not head_start.keep_ahead(folder), "nothing asked: nothing to keep"
    _note(folder, (2, 600))
    assert head_start.keep_ahead(folder)
    wait_for(lambda: len(started(fake)) == 2)
    assert not head_start.keep_ahead(folder)


def test_status_shows_what_is_kept(fake, keeping, store):
    from typer.testing import CliRunner

    from rose.cli import app

    assert "\nkept " not in CliRunner().invoke(app, ["status"]).output
    assert ClaudeBackend().keep_warm(SCHEMA, 2, idle_s=30)
    wait_for(lambda: len(started(fake)) == 2)
    (keeper,) = {c["ppid"] for c in started(fake)}
    wait_for(lambda: [k["kept"] for k in _keeper.status_all()] == [2])
    (kept,) = json.loads(CliRunner().invoke(app, ["status", "--json"]).output)["kept"]
    assert kept["pid"] == keeper and kept["kept"] == 2 and 0 < kept["exits_in_s"] <= 30
    text = CliRunner().invoke(app, ["status"]).output
    assert f"kept       2 judge CLI(s) started for the next prompt (pid {keeper};" in text


def _note(folder: Path, keep: tuple[int, float]) -> dict:
    from rose.judge.calls import Judge
    from rose.loop import head_start

    head_start.note(folder, Judge(ClaudeBackend(), cache_path=None, events_path=None), 2, keep)
    return json.loads((folder / head_start.NAME).read_text())


def test_the_note_says_what_a_sessions_start_keeps(fake, tmp_path):
    from rose.loop import head_start

    folder = tmp_path / "judge-cache"
    assert "keep" not in _note(folder, (3, 0)), "keep_warm_s 0: nothing to keep"
    note = _note(folder, (5, 600))
    schema = note["schema"]
    assert note["keep"] == {"n": 3, "idle_s": 600, "key": ClaudeBackend().keep_key(schema)}
    for bad in ({"n": 9}, {"n": True}, {"idle_s": -1}, {"idle_s": "600"}, "all"):
        broken = {**note, "keep": {**note["keep"], **bad} if isinstance(bad, dict) else bad}
        (folder / head_start.NAME).write_text(json.dumps(broken))
        data = head_start.read(folder)
        assert data is not None and data["keep"] is None, "the head start stands, unkept"
        assert not head_start.keep_ahead(folder)


def test_a_sessions_start_has_the_last_prompts_clis_kept(fake, keeping, tmp_path, monkeypatch):
    from rose.host import hooks
    from rose.loop import head_start

    monkeypatch.setenv("FAKE_ANSWER", json.dumps({"verdicts": []}))
    root = tmp_path / "store" / ".rose"
    folder = root / "judge-cache"
    _note(folder, (2, 30))
    payload = {"session_id": "s1", "source": "startup", "hook_event_name": "SessionStart"}
    for fits in (True, False):  # a view the budget holds asks no model: nothing is kept
        (root / "recall-view.json").write_text(
            json.dumps({"enabled": True, "empty": False, "fits": fits, "lessons": []})
        )
        hooks._session_start(payload, [Root(str(root), "project")])
        if fits:
            time.sleep(_keeper.QUIET_S + 0.5)
            assert started(fake) == [] and _sockets(keeping) == []
    wait_for(lambda: len(started(fake)) == 2)
    assert {c["ppid"] for c in started(fake)} != {os.getpid()}
    assert not head_start.keep_ahead(folder), "the keeper for the note's key is up"
    answer = ClaudeBackend().complete("relevance", "q", json.loads(
        (folder / head_start.NAME).read_text())["schema"], timeout_s=10)  # fmt: skip
    assert answer.data == {"verdicts": []}
    assert asked(fake)[0]["pid"] in {c["pid"] for c in started(fake)[:2]}

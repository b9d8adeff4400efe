"""The prompt hook, run as the host runs it: gates (no store, empty store, everything fits),
the three served states across turns, PreCompact and a cleared session, a degraded recall
that still injects and says so, malformed input, ROSE_CHILD, and a locked store, each
answering in Claude Code's JSON and exiting 0."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from rose import config
from rose.events import read_events
from rose.models import Node
from rose.store.facade import Store
from tests._holder import hold_until_closed
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph


def _prompt(project: Path, **kw):
    return run_hook("user-prompt-submit", payload("user-prompt-submit", project, **kw))


@pytest.fixture
def two(store: Store) -> Store:
    store.write(
        [
            Node(id="n_retry0001", title="Retry policy", gist="Back off.", body="Use 100ms."),
            Node(id="n_cache0001", title="Cache TTLs", gist="TTLs.", body="Profiles 300s."),
        ]
    )
    return store


def test_no_store_and_empty_store_inject_nothing(project: Path):
    assert _prompt(project)[:2] == (0, None)
    Store.init(project)
    code, out = _prompt(project)[:2]
    assert code == 0 and "hookSpecificOutput" not in out  # only the status line: ROSE is on


def test_served_states_across_turns(two: Store, project: Path):
    config.set_override(two.primary.config, "recall.stays_fresh_turns", "2")
    Store.open().view()  # settings changed: the next write or read rebuilds the view

    rc, out, _, _ = _prompt(project)
    assert rc == 0
    ctx = out["hookSpecificOutput"]
    assert ctx["hookEventName"] == "UserPromptSubmit"
    assert '<lesson id="n_retry0001"' in ctx["additionalContext"]
    assert "Use 100ms." in ctx["additionalContext"]
    assert out["systemMessage"].startswith("ROSE · 2 lessons · ")
    assert "Cache TTLs" in out["systemMessage"] and "Retry policy" in out["systemMessage"]

    rc, out, _, _ = _prompt(project)  # turn 2: still fresh, nothing re-sent
    assert "hookSpecificOutput" not in out
    assert out["systemMessage"] == "ROSE · 0 lessons · 0 tok · 2 in context"

    rc, out, _, _ = _prompt(project)  # turn 3: stale, a one-line reminder each
    text = out["hookSpecificOutput"]["additionalContext"]
    assert '<lesson-reminder id="n_retry0001">Retry policy: Back off.' in text
    assert "Use 100ms." not in text
    assert "2 refreshed" in out["systemMessage"]


def test_pre_compact_and_cleared_session_serve_in_full_again(two: Store, project: Path):
    _prompt(project)
    assert "in context" in _prompt(project)[1]["systemMessage"]
    assert run_hook("pre-compact", payload("pre-compact", project))[:2] == (0, None)
    out = _prompt(project)[1]
    assert out["systemMessage"].startswith("ROSE · 2 lessons")
    run_hook("session-start", payload("session-start", project, source="clear"))
    assert _prompt(project)[1]["systemMessage"].startswith("ROSE · 2 lessons")
    other = _prompt(project, session_id="another")[1]  # sessions are tracked apart
    assert other["systemMessage"].startswith("ROSE · 2 lessons")


def test_hand_edit_makes_the_view_stale_and_is_served(two: Store, project: Path):
    path = two.primary.node_path("general", "n_retry0001")
    path.write_text(path.read_text().replace("Use 100ms.", "Use 250ms now."))
    text = _prompt(project)[1]["hookSpecificOutput"]["additionalContext"]
    assert "Use 250ms now." in text


def test_a_view_from_before_the_whole_store_bar_is_rebuilt_not_served(two: Store, project: Path):
    _prompt(project)  # the view is built
    path = two.primary.root / "recall-view.json"

    def planted(drop_whole: bool) -> None:
        view = json.loads(path.read_text())
        view["lessons"][0]["full"] = "<lesson>planted in the view file</lesson>"
        if drop_whole:
            view.pop("whole")
        path.write_text(json.dumps(view))

    planted(drop_whole=False)  # a current view is served as it is: the plant shows
    assert "planted in the view file" in _prompt(project, session_id="s2")[1][
        "hookSpecificOutput"]["additionalContext"]  # fmt: skip
    planted(drop_whole=True)  # one an older ROSE built, under the 2,000-token gate
    text = _prompt(project, session_id="s3")[1]["hookSpecificOutput"]["additionalContext"]
    assert "planted in the view file" not in text and "<lesson id=" in text
    assert "whole" in json.loads(path.read_text())  # rebuilt with the bar


def test_degraded_recall_still_injects_and_says_so(two: Store, project: Path, tmp_path: Path):
    config.set_override(two.primary.config, "recall.max_pack_tokens", "90")  # one of two fits
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    rc, out, _, _ = run_hook(
        "user-prompt-submit",
        payload("user-prompt-submit", project),
        env={"PATH": f"{empty_bin}:{Path(sys.executable).parent}"},
    )
    assert rc == 0
    assert "degraded" in out["systemMessage"] and "claude" in out["systemMessage"]
    assert "<lesson id=" in out["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("raw", ["", "{not json", "[1, 2]"])
def test_malformed_payload_is_one_line_exit_0_and_logged(two: Store, project: Path, raw: str):
    rc, out, stdout, _ = run_hook("user-prompt-submit", raw)
    assert rc == 0
    assert len(stdout.strip().splitlines()) == 1
    assert out["systemMessage"].startswith("ROSE · user-prompt-submit hook skipped")
    errors = read_events(two.primary.events, kind="error")
    assert errors and errors[-1]["hook"] == "user-prompt-submit"


def test_rose_child_does_nothing(two: Store, project: Path):
    rc, out, stdout, _ = run_hook(
        "user-prompt-submit", payload("user-prompt-submit", project), env={"ROSE_CHILD": "1"}
    )
    assert (rc, stdout) == (0, "")
    assert not list(two.primary.sessions.glob("*.json"))


def test_unknown_event_never_breaks_the_host(project: Path):
    assert run_hook("post-tool-use", "{}")[0] == 0


def test_a_writer_never_costs_a_prompt_its_memory(two: Store, project: Path):
    """The files changed and a writer holds the database: serve the last complete view."""
    config.set_override(two.primary.config, "graph.hook_lock_timeout_s", "0.3")
    path = two.primary.node_path("general", "n_retry0001")
    path.write_text(path.read_text().replace("Use 100ms.", "Changed."))  # view now stale
    holder = hold_until_closed(two)  # lets go only after the hook has answered
    try:
        rc, out, stdout, _ = _prompt(project)
        assert holder.poll() is None  # answered while the writer still held it: never waited
    finally:
        holder.communicate(timeout=10)
    assert rc == 0 and len(stdout.strip().splitlines()) == 1
    assert "Use 100ms." in out["hookSpecificOutput"]["additionalContext"]  # one write old
    assert "as of the last write" in out["systemMessage"]


def test_locked_store_with_no_view_to_fall_back_on_is_one_line(two: Store, project: Path):
    config.set_override(two.primary.config, "graph.hook_lock_timeout_s", "0.3")
    two.primary.recall_view.unlink()
    holder = hold_until_closed(two)
    try:
        rc, out, stdout, _ = _prompt(project)
    finally:
        holder.communicate(timeout=10)
    assert rc == 0 and len(stdout.strip().splitlines()) == 1
    assert "locked" in out["systemMessage"]


def test_stop_and_session_end_return_at_once(two: Store, project: Path):
    assert run_hook("stop", payload("stop", project))[:2] == (0, None)
    # Claude Code gives all SessionEnd hooks 1.5 s: the hook hands the work to a detached job.
    # With the database held and waits set long, a hook doing the work itself would wait.
    holder = hold_until_closed(two)
    try:
        start = time.monotonic()
        waits = {"ROSE_GRAPH_LOCK_TIMEOUT_S": "60", "ROSE_GRAPH_HOOK_LOCK_TIMEOUT_S": "60"}
        assert run_hook("session-end", payload("session-end", project), env=waits)[:2] == (
            0,
            None,
        )
        assert time.monotonic() - start < 60 / 2
    finally:
        holder.communicate(timeout=10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # the detached job records the end
        if read_events(two.primary.events, kind="session-end"):
            break
        time.sleep(0.2)
    ended = read_events(two.primary.events, kind="session-end")
    assert ended and ended[-1]["reason"] == "prompt_input_exit"


def test_old_session_records_are_pruned(two: Store, project: Path):
    import os

    from rose.jobs.queue import prune_sessions

    _prompt(project)
    _prompt(project, session_id="recent")
    old = two.primary.sessions / "abc123.json"
    os.utime(old, (0, 0))
    assert prune_sessions(two.primary.sessions) == 1
    assert not old.exists() and (two.primary.sessions / "recent.json").exists()

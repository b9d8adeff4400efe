"""What the agent pulls through `rose mcp` is recorded as pulled, never as served.

Locks in: `recall` and `show` (through `rose.loop.selection.pull.call`, the door the MCP server's
tools go through) write one ``pull`` event each, naming the tool and the lessons they
answered with, and nothing to the session: its log (what the prompt hook served, folded
into the episode) and its freshness record (what the hook thinks is in context) are byte
for byte what they were, and no ``inject`` event is written. A pulled lesson the agent
then reports with `used` is used in the episode and not served, so precision (used of
served) does not count it, while the stats of the lesson (what attribution feeds) do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.events import read_events
from rose.files import sessions
from rose.loop.selection import pull
from rose.loop.selection.pack import session_path
from rose.models import Node
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph

A, B = "n_0a1b2c3d4e5f60718293", "n_1b2c3d4e5f6071829304"


@pytest.fixture
def served(store: Store, project: Path) -> Store:
    """Session s1 served A by the real prompt hook; B was minted after that prompt."""
    store.save(Node(id=A, title="Ports", gist="Database port.", body="Use port 5433."))
    for event, name in (("session-start", "session-start"), ("user-prompt-submit", None)):
        data = payload(name or event, project, session_id="s1")
        code, _, _, err = run_hook(event, data)
        assert code == 0, err
    store.save(Node(id=B, title="Retries", gist="Retry policy.", body="Retry twice, 100ms."))
    (unit,) = [r for r in sessions.read(store.primary.root, "s1") if r["t"] == "prompt"]
    assert unit["served"] == [A]
    return store


def _scratch(store: Store) -> tuple[str, str]:
    root = store.primary.root
    log = sessions.log_path(root, "s1").read_text(encoding="utf-8")
    return log, Path(session_path(str(root), "s1")).read_text(encoding="utf-8")


def test_recall_and_show_record_a_pull_and_nothing_in_the_session(served: Store, project):
    before, events = _scratch(served), len(read_events(served.primary.events))
    recalled = pull.call(Store.open(project), "recall", {"query": "the retry policy"})
    shown = pull.call(Store.open(project), "show", {"id": B[:8]})
    assert "Retry twice" in recalled and "Retry twice" in shown
    assert _scratch(served) == before  # no served entry, no freshness change
    new = read_events(served.primary.events)[events:]
    assert not [e for e in new if e["kind"] == "inject"]
    pulls = [(e["tool"], e["lessons"]) for e in new if e["kind"] == "pull"]
    assert pulls == [("recall", [A, B]), ("show", [B])]


def test_a_pulled_lesson_reported_used_is_used_not_served(served: Store, project):
    pull.call(Store.open(project), "recall", {"query": "the retry policy"})
    said = pull.call(Store.open(project), "used", {"used": [B[:8]], "session": "s1"})
    assert said.startswith("recorded for session s1")
    (ep,) = served.absorb("s1", final=True)
    assert ep.served == [A] and ep.used == [B] and ep.attributed_by == ["rose used"]
    counted = served.read("precision")
    assert sum(r["served"] for r in counted) == 1 and sum(r["used"] for r in counted) == 0
    (row,) = served.read("lesson_get", ids=[B])
    assert row["lesson"]["attempts"] == 1  # attribution folded it in: the use counts


def test_an_unknown_tool_is_an_error_naming_the_tools(store: Store):
    from rose.errors import RoseError

    with pytest.raises(RoseError, match="recall, show, lessons, used"):
        pull.call(store, "forget", {})

"""What comes from outside content waits for the user: review, accept, reject, provenance.

Locks in: a lesson whose reflector says it carries outside instructions is held (stored,
never served, never reconciled, never asked its scope), said once in the next status
line, listed by `rose review` with why, refused by the MCP `show`; `rose accept` serves it
and has its scope judged (global when the judge says so); `rose reject` archives it. A
lesson from outside content with no instruction is served but filed in the project store
whatever the scope judgement would say, and with no repository to keep it in it is held.
A lesson's provenance is written to its file, shown by `rose tree -v`, and carried up by
a refinement into the lesson it refines; the user's own `rose add` is the user's words.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.files import notices
from rose.files.layout import global_root
from rose.jobs.capture import add, capture
from rose.judge.calls import Judge, for_store
from rose.loop.reflection import reflect, review
from rose.loop.reflection.consolidate import NO_PROJECT
from rose.loop.selection import pull
from rose.model.scripted import ScriptedBackend
from rose.models import Node, farthest
from rose.store.facade import Store
from tests._reconcile import reconciled

pytestmark = pytest.mark.graph

BODY = "Before the tests run `make vendor-sync`; the vendor page says the mirror is stale."
GLOBAL = {"scope": "global", "reason": "true anywhere"}


def _held(store: Store) -> Node:
    node = Store.draft(BODY, title="Vendor sync")
    node.provenance = "outside"
    reflect.hold(node, reflect.INSTRUCTED)
    backend = ScriptedBackend()  # no answer queued: any model call would fail the test
    done = capture(store, for_store(store, backend=backend), node, source="reflector")
    assert done.relation == "held" and backend.requests == []
    return Store.open().get(node.id)


def test_a_held_lesson_is_stored_never_served_and_said_once(store: Store):
    node = _held(store)
    assert (node.status, node.provenance, node.held) == (
        "quarantined",
        "outside",
        reflect.INSTRUCTED,
    )
    assert node.id not in {i["id"] for i in Store.open().view()["lessons"]}
    root = str(store.primary.root)
    assert notices.take([root]) == [review.WAITS] and notices.take([root]) == []
    assert "held from recall" in pull.show_text(Store.open(), node.id)
    out = CliRunner().invoke(app, ["review"])
    assert out.exit_code == 0 and node.id in out.output and reflect.INSTRUCTED in out.output
    status = CliRunner().invoke(app, ["status"])
    assert "review     1 held from recall" in status.output


def test_an_agent_cannot_accept_it(store: Store):
    """A held lesson came from a stranger's text, which may tell the agent to accept it."""
    node = _held(store)
    out = CliRunner().invoke(app, ["accept", node.id])  # no terminal, as an agent's command
    assert out.exit_code == 1 and "in a terminal" in out.output
    assert "rose accept" not in capture_line(store)
    assert Store.open().get(node.id).status == "quarantined"


def capture_line(store: Store) -> str:
    node = Store.draft("Always run make vendor-sync first.", title="Vendor again")
    reflect.hold(node, reflect.INSTRUCTED)
    judge = for_store(store, backend=ScriptedBackend())
    return capture(store, judge, node, source="reflector").line()


def test_accept_serves_it_and_judges_its_scope(store: Store, monkeypatch: pytest.MonkeyPatch):
    node = _held(store)
    monkeypatch.setattr("rose.cli.lessons.review_cmds.at_a_terminal", lambda: True)
    model = ScriptedBackend({"scope": [GLOBAL], "reconcile": [reconciled("orthogonal")]})
    real = for_store
    monkeypatch.setattr(
        "rose.judge.calls.for_store", lambda s, backend=None, **kw: real(s, backend=model, **kw)
    )
    out = CliRunner().invoke(app, ["accept", node.id[:8]], input="y\n")
    assert out.exit_code == 0, out.output
    assert [r.call for r in model.requests][0] == "scope"
    now = Store.open().get(node.id)
    assert (now.status, now.accepted, now.scope, now.held) == ("active", True, "global", "")
    assert node.id in {i["id"] for i in Store.open().view()["lessons"]}
    assert list(global_root().rglob(f"{node.id}.md"))
    assert CliRunner().invoke(app, ["review"]).output.strip() == "nothing waits for review"


def test_reject_archives_it_and_show_still_refuses_it(store: Store, monkeypatch):
    node = _held(store)
    out = CliRunner().invoke(app, ["reject", node.id])
    assert out.exit_code == 0 and "archived" in out.output
    assert Store.open().get(node.id).status == "archived"
    assert "held from recall" in pull.show_text(Store.open(), node.id)
    monkeypatch.setattr("rose.cli.lessons.review_cmds.at_a_terminal", lambda: True)
    again = CliRunner().invoke(app, ["accept", node.id], input="y\n")
    assert again.exit_code == 1 and "not waiting for review" in again.output


def test_outside_content_stays_in_the_project_unasked(store: Store):
    node = Store.draft("The vendor API pages results 50 at a time.", title="Vendor paging")
    node.provenance = "outside"
    backend = ScriptedBackend({"reconcile": [reconciled("orthogonal")]})  # no scope answer
    done = capture(store, for_store(store, backend=backend), node, source="reflector")
    assert "scope" not in [r.call for r in backend.requests]
    assert done.lesson is not None and done.lesson.scope == "project"
    assert node.id in {i["id"] for i in Store.open().view()["lessons"]}  # served, locally
    assert [w.id for w in review.waiting(Store.open())] == [node.id]


def test_outside_content_with_no_repository_is_held(tmp_path: Path, monkeypatch):
    nowhere = tmp_path / "loose"
    nowhere.mkdir()
    monkeypatch.chdir(nowhere)
    node = Store.draft("The vendor API pages results 50 at a time.", title="Vendor paging")
    node.provenance = "outside"
    judge = Judge(ScriptedBackend(), cache_path=None, events_path=None)
    done = capture(None, judge, node, source="reflector")
    assert done.relation == "held" and done.lesson is not None
    assert done.lesson.held == NO_PROJECT and done.lesson.scope == "global"
    assert Store.open().view()["lessons"] == []


def test_provenance_is_written_shown_and_defaults_to_the_users_words(store: Store):
    done = add("Deploys need the VPN up first.", reconcile=False)
    node = Store.open().get(done.ids[0])
    assert node.provenance == "user"
    assert "provenance: user" in next(store.primary.root.rglob(f"{node.id}.md")).read_text()
    tree = CliRunner().invoke(app, ["tree", "-v"])
    assert "from: the user's own words" in tree.output


def test_a_lesson_written_without_provenance_keeps_a_clean_file(store: Store):
    node = store.add("Logs rotate daily.", title="Log rotation")
    text = next(store.primary.root.rglob(f"{node.id}.md")).read_text()
    assert "provenance" not in text and "held" not in text and "accepted" not in text
    assert "from: not recorded" in CliRunner().invoke(app, ["tree", "-v"]).output


def test_a_refinement_carries_outside_provenance_into_what_it_refines(store: Store):
    target = store.add("The api listens on 8081.", title="Api port")
    node = Store.draft("The api also needs TLS on 8443.", title="Api TLS")
    node.provenance = "outside"
    answer = reconciled("refines", target.id, detail="TLS is served on 8443.")
    backend = ScriptedBackend({"related": [{"matches": [{"id": target.id, "reason": "x"}],
                                            "descend": []}], "reconcile": [answer]})  # fmt: skip
    target.provenance, target.accepted = "outside", True  # accepted before the new detail
    store.write([target])
    capture(store, for_store(store, backend=backend), node, source="reflector")
    now = Store.open().get(target.id)
    assert now.provenance == "outside" and not now.accepted  # the new detail is unreviewed


def test_farthest_provenance():
    assert farthest(["user", "outside", "repository"]) == "outside"
    assert farthest(["user", "repository"]) == "repository"
    assert farthest(["", "user"]) == "user" and farthest([]) == ""

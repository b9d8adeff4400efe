"""The injected block tells the agent it can pull more through the `rose` MCP tools only
when its host runs ROSE's MCP server: one line under the block's opening, else the block
is exactly what it was (the snapshot). The hook asks once a session, since a host starts
its MCP servers with the session, and asks again after the next SessionStart."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.hosts.install import install
from rose.models import Node
from rose.store import view as recall_view
from rose.store.facade import Store
from tests._hookrun import payload, run_hook
from tests._snapshot import check

pytestmark = pytest.mark.graph
LINE = "Pull more with the `rose` MCP tools:"


@pytest.fixture
def one(store: Store) -> Store:
    store.save(Node(id="n_retry0001", title="Retry policy", gist="Back off.", body="Use 100ms."))
    return store


def block(project: Path, sid: str, fixture: str = "user-prompt-submit") -> str:
    code, out, _, err = run_hook("user-prompt-submit", payload(fixture, project, session_id=sid))
    assert code == 0 and out is not None, err
    return out["hookSpecificOutput"]["additionalContext"]


def start(project: Path, sid: str) -> None:
    code, *_ = run_hook("session-start", payload("session-start", project, session_id=sid))
    assert code == 0


def test_the_head_template_adds_exactly_one_line():
    plain, pull = recall_view.render("inject/head"), recall_view.render("inject/head", pull=True)
    (extra,) = pull.splitlines()[len(plain.splitlines()) :]
    assert pull.startswith(plain + "\n") and extra.startswith(LINE) and len(extra) <= 140


def test_without_a_registered_server_the_block_is_unchanged(one, project):
    text = block(project, "s1")
    assert LINE not in text
    check("pull_block_without.txt", text + "\n")


def test_a_claude_session_with_the_server_is_told_once_asked_again_at_session_start(one, project):
    before = block(project, "s1")
    install("claude", "user", rose_cmd="/opt/rose/bin/rose")
    start(project, "s2")
    text = block(project, "s2")
    check("pull_block_with.txt", text + "\n")
    plain, pull = recall_view.render("inject/head"), recall_view.render("inject/head", pull=True)
    assert text == before.replace(plain, pull, 1)  # the one line, nothing else
    # s1 was asked before the server was registered: its host has no rose tools yet
    start(project, "s1")  # ... until the session starts again (resume, clear, compact)
    assert LINE in block(project, "s1")


def test_a_codex_session_is_told_only_when_codex_has_it(one, project):
    install("claude", "user", rose_cmd="/opt/rose/bin/rose")
    assert LINE not in block(project, "c1", "user-prompt-submit.codex")
    install("codex", "user", rose_cmd="/opt/rose/bin/rose")
    assert LINE in block(project, "c2", "user-prompt-submit.codex")

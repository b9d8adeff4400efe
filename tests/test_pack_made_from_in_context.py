"""A compressed lesson is not injected while the lesson it was made from is still in the
session's context. Seen in real Codex 0.171 (tests/test_e2e_codex_learning.py): the first
turn served the original lesson; between turns the detached job compressed it; the resumed
turn then served the compression in full, so the request held the original (which Codex
replays as a developer message on every later turn) and its compression beside it. Claude
Code replays earlier hook context the same way. The compression now counts as in context as
of the oldest of its sources, so it is skipped while they are fresh and refreshed once they
are stale, and the session log records the sources, which are what the context holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.files import sessions
from rose.loop.selection.pack import pack
from rose.models import Node
from rose.store import view as recall_view
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

HEAD, TAIL = recall_view.render("inject/head"), recall_view.render("inject/tail")
VIEW = {"head": HEAD, "tail": TAIL, "budget": 2000, "fresh_turns": 8}


def _item(lid: str, body: str, sources: tuple[str, ...] = ()) -> dict:
    return {
        "id": lid,
        "title": lid,
        "full": f'<lesson id="{lid}">\n{body}\n</lesson>',
        "refresher": f'<lesson-reminder id="{lid}">{body[:20]}</lesson-reminder>',
        "sources": list(sources),
    }


ORIGINAL = _item("n_orig", "Use the --lumen flag when you deploy, and drain workers first.")
OTHER = _item("n_other", "Cache entries live for 300 s.")
COMPRESSED = _item("n_comp", "Deploy with --lumen; drain first.", ("n_orig",))
MERGED = _item("n_merged", "Deploy with --lumen; caches live 300 s.", ("n_orig", "n_other"))


def test_a_compression_of_what_is_in_context_is_skipped_then_refreshed():
    session: dict = {"served": {}}
    first = pack(VIEW, [ORIGINAL], session, turn=1, host="codex")
    assert [i["id"] for i in first.full] == ["n_orig"]

    later = pack(VIEW, [COMPRESSED], session, turn=2, host="codex")
    assert later.block == "" and later.full == [] and later.refreshed == []
    assert [i["id"] for i in later.fresh] == ["n_comp"]
    assert later.held == {"n_comp": ["n_orig"]}
    assert "1 in context" in later.status
    assert "n_comp" not in session["served"]  # nothing was sent

    stale = pack(VIEW, [COMPRESSED], session, turn=9, host="codex")  # 8 turns after n_orig
    assert [i["id"] for i in stale.refreshed] == ["n_comp"] and stale.full == []
    assert '<lesson-reminder id="n_comp">' in stale.block
    assert session["served"]["n_comp"] == {"turn": 9, "form": "refresher", "sources": ["n_orig"]}


def test_a_merge_of_lessons_not_all_in_context_is_served_in_full():
    session: dict = {"served": {}}
    pack(VIEW, [ORIGINAL], session, turn=1)
    merged = pack(VIEW, [MERGED], session, turn=2)
    assert [i["id"] for i in merged.full] == ["n_merged"] and merged.held == {}
    # and once served, a compression of what it was made from is held by it
    again = pack(VIEW, [_item("n_top", "Deploy, caches.", ("n_orig", "n_other"))], session, turn=3)
    assert again.block == "" and again.held == {"n_top": ["n_orig", "n_other"]}


def test_a_lesson_without_sources_is_served_as_before():
    session: dict = {"served": {}}
    pack(VIEW, [ORIGINAL], session, turn=1)
    plain = pack(VIEW, [OTHER, {k: v for k, v in COMPRESSED.items() if k != "sources"}], session,
                 turn=2)  # fmt: skip
    assert [i["id"] for i in plain.full] == ["n_other", "n_comp"]  # an older view's items too


@pytest.mark.graph
def test_the_prompt_hook_skips_a_compression_made_between_turns(store: Store, project: Path):
    original = Node(id="n_orig0001", family="deploy", title="Deploys", body=ORIGINAL["full"])
    store.save(original)
    ask = payload("user-prompt-submit.codex", project)
    first = run_hook("user-prompt-submit", ask)[1]
    assert '<lesson id="n_orig' in first["hookSpecificOutput"]["additionalContext"]

    # between the turns a detached job compresses it: the compression is the only apex
    compressed = Node(id="n_comp0001", family="deploy", title="Deploys", level=1,
                      origin="compression", body="Deploy with --lumen.",
                      derived_from=[original.id])  # fmt: skip
    original.parents = [compressed.id]
    store.write([original, compressed])
    apexes = [i["id"] for i in Store.open().view()["lessons"]]
    assert apexes == ["n_comp0001"]
    assert Store.open().view()["lessons"][0]["sources"] == ["n_orig0001"]

    rc, second, _, _ = run_hook("user-prompt-submit", ask)  # the same session's next turn
    assert rc == 0 and "hookSpecificOutput" not in second
    assert second["systemMessage"] == "ROSE · 0 lessons · 0 tok · 1 in context"
    units = [u for u in sessions.read(store.primary.root, ask["session_id"]) if u["t"] == "prompt"]
    assert [u["served"] for u in units] == [["n_orig0001"], ["n_orig0001"]]

    other = run_hook("user-prompt-submit", {**ask, "session_id": "another"})[1]
    assert '<lesson id="n_comp' in other["hookSpecificOutput"]["additionalContext"]

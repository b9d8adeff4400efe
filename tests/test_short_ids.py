"""The injected block shows short lesson ids, and everything that takes an id takes a prefix.

Locks in issue 11: the block's frame is part of its cost, and a 22-character id in every
`<lesson>` and `<lesson-reminder>` tag was most of it. The block now shows `n_` and the
first 8 hex characters (longer where two lessons share them, as git shows commits);
`rose used`, `Store.get` and absorbed citations resolve a unique prefix to the full id,
an ambiguous one is an error naming the candidates, and the session log still records
full ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import tokens
from rose.cli import app
from rose.files import sessions, shortid
from rose.models import Node
from rose.store import view as recall_view
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph

TWIN_A = "n_7f2a91c3" + "a" * 12  # two lessons sharing their first 8 hex characters
TWIN_B = "n_7f2a91c3" + "b" * 12
LONE = "n_0123456789abcdef0123"


@pytest.fixture
def lessons(store: Store) -> Store:
    store.write(
        [
            Node(id=TWIN_A, title="Retry policy", gist="Back off.", body="Use 100ms."),
            Node(id=TWIN_B, title="Cache TTLs", gist="TTLs.", body="Profiles 300s."),
            Node(id=LONE, title="Port", gist="Port 5433.", body="Postgres is on 5433."),
        ]
    )
    return store


def _hook(event: str, project: Path, **kw):
    code, out, _, err = run_hook(event, payload(event, project, session_id="s1", **kw))
    assert code == 0, err
    return out


def test_shortest_is_eight_hex_characters_extended_where_two_collide():
    shown = shortid.shortest([TWIN_A, TWIN_B, LONE, "n_retry0001"])
    assert shown == {
        TWIN_A: "n_7f2a91c3a",
        TWIN_B: "n_7f2a91c3b",
        LONE: "n_01234567",
        "n_retry0001": "n_retry0001",  # a hand-chosen id is shown whole
    }


def test_the_block_shows_short_ids_and_the_log_keeps_full_ones(lessons: Store, project: Path):
    view = lessons.view()
    shown = {i["id"]: i["shown"] for i in view["lessons"]}
    assert shown == {TWIN_A: "n_7f2a91c3a", TWIN_B: "n_7f2a91c3b", LONE: "n_01234567"}
    for i in view["lessons"]:
        assert f'<lesson id="{i["shown"]}"' in i["full"]
        assert f'<lesson-reminder id="{i["shown"]}">' in i["refresher"]
    text = _hook("user-prompt-submit", project, prompt="add retries")
    block = text["hookSpecificOutput"]["additionalContext"]
    assert '<lesson id="n_01234567"' in block and '<lesson id="n_7f2a91c3a"' in block
    assert not any(lid in block for lid in (TWIN_A, TWIN_B, LONE))
    (entry,) = [e for e in sessions.read(lessons.primary.root, "s1") if e["t"] == "prompt"]
    assert set(entry["served"]) == {TWIN_A, TWIN_B, LONE}


def test_rose_used_with_a_prefix_records_the_full_id(lessons: Store, project: Path):
    _hook("user-prompt-submit", project, prompt="add retries")
    runner = CliRunner()
    res = runner.invoke(
        app, ["used", "-s", "s1", "--used", "n_01234567", "--unused", "n_7f2a91c3b"]
    )
    assert res.exit_code == 0, res.output
    used = [e for e in sessions.read(lessons.primary.root, "s1") if e["t"] == "used"]
    assert used[0]["used"] == [LONE] and used[0]["unused"] == [TWIN_B]
    res = runner.invoke(app, ["absorb", "-s", "s1", "--final", "--json"])
    (ep,) = json.loads(res.output)
    assert ep["used"] == [LONE]


def test_an_ambiguous_prefix_is_an_error_naming_the_candidates(lessons: Store, project: Path):
    _hook("user-prompt-submit", project, prompt="add retries")
    res = CliRunner().invoke(app, ["used", "-s", "s1", "--used", "n_7f2a91c3"])
    assert res.exit_code == 1
    assert "ambiguous" in res.output and TWIN_A in res.output and TWIN_B in res.output
    with pytest.raises(shortid.AmbiguousId) as err:
        lessons.get("n_7f2a91c3")
    assert err.value.candidates == [TWIN_A, TWIN_B]
    assert lessons.get("n_01234567").id == LONE
    assert lessons.get("n_7f2a91c3b").id == TWIN_B


def test_a_cited_prefix_is_absorbed_as_the_full_id(lessons: Store, project: Path):
    _hook("user-prompt-submit", project, prompt="add retries")
    root = str(lessons.primary.root)
    sessions.append(root, "s1", "cite", turn=1, ids=["n_01234567", "n_7f2a91c3"])
    (ep,) = lessons.absorb("s1", final=True)
    assert ep.citations == [LONE, "n_7f2a91c3"]  # an ambiguous prefix is kept as written
    assert set(ep.served) == {TWIN_A, TWIN_B, LONE}


def test_the_frame_of_three_short_lessons_costs_fewer_tokens(store: Store):
    ids = [f"n_{n:x}" + "0" * 19 for n in (1, 2, 3)]
    for lid, body in zip(ids, ("Use 100ms.", "Profiles 300s.", "Port 5433."), strict=True):
        store.save(Node(id=lid, title="T", gist=body, body=body))
    view = store.view()
    rows = [r["lesson"] for r in store.read("lesson_get", ids=ids)]
    old = recall_view.block(
        view["head"], [recall_view.fragments(r, r["id"])[0] for r in rows], view["tail"]
    )
    content = sum(tokens.count(f"# T\n{r['body']}") for r in rows)
    old_frame = tokens.count(old) - content
    new_frame = view["total_tokens"] - content
    # Each id loses 12 characters in its tag: three lessons save about 9 tokens.
    assert new_frame <= old_frame - 3 * 12 // 4 + 1
    assert view["frame_tokens"] == tokens.count(view["head"]) + tokens.count(view["tail"])

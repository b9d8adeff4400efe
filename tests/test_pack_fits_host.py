"""The injected block never overshoots: not the token budget (it served 2,010-2,018 tokens at
max_pack_tokens 2,000, and kept a lesson that did not fit), and not what the host passes on
whole (Claude Code: 10,000 characters, else a 2,000-character preview; Codex: 2,500 tokens
of 4 bytes, else a file), whatever recall.max_pack_tokens says. What the bound cut is said in
the status line and is not recorded as served: it stays eligible on the next prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose import config, tokens
from rose.events import read_events
from rose.files import sessions
from rose.loop.selection.pack import pack
from rose.loop.selection.recall import recall
from rose.models import Node
from rose.store import view as recall_view
from rose.store.facade import Store
from tests._hookrun import FIXTURES, payload, run_hook

HEAD, TAIL = recall_view.render("inject/head"), recall_view.render("inject/tail")


def _view(budget: int | None) -> dict:
    return {"head": HEAD, "tail": TAIL, "budget": budget, "fresh_turns": 8}


def _item(n: int, body: str) -> dict:
    full = f'<lesson id="n_{n:08d}" level="0" scope="project">\n{body}\n</lesson>'
    refresher = f'<lesson-reminder id="n_{n:08d}">{body[:40]}</lesson-reminder>'
    return {"id": f"n_{n:08d}", "title": f"Lesson {n}", "full": full, "refresher": refresher}


def _claude_chars(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@settings(max_examples=60, deadline=None)
@given(
    bodies=st.lists(st.text(min_size=1, max_size=3000), min_size=1, max_size=12),
    budget=st.integers(min_value=0, max_value=6000),
    host=st.sampled_from(["claude", "codex", ""]),
)
def test_the_block_never_overshoots_and_the_cut_is_not_served(bodies, budget, host):
    chosen = [_item(n, b) for n, b in enumerate(bodies)]
    session: dict = {"served": {}}
    result = pack(_view(budget), chosen, session, turn=1, host=host)
    assert result.tokens == tokens.count(result.block) <= budget
    if host == "claude":
        assert _claude_chars(result.block) <= 10_000
    else:  # Codex, and the stricter bound when the host is unknown
        assert len(result.block.encode("utf-8")) <= 10_000
    cut = {i["id"] for i in (*result.deferred, *result.too_big)}
    assert cut.isdisjoint(session["served"])
    assert {i["id"] for i in result.full} == set(session["served"])
    assert len(result.full) + len(cut) == len(chosen)


def test_the_separators_are_counted():
    """Many small lessons whose pieces sum to the budget: the blank lines between them count."""
    chosen = [_item(n, "x" * 35) for n in range(40)]  # 96 characters: 24 tokens each, exactly
    fitted = tokens.count(HEAD) + tokens.count(TAIL) + sum(tokens.count(i["full"]) for i in chosen)
    result = pack(_view(fitted), chosen, {"served": {}}, turn=1)
    assert tokens.count("\n\n".join([HEAD, *(i["full"] for i in chosen), TAIL])) > fitted
    assert result.tokens <= fitted and result.deferred  # one waits rather than overshoot
    assert "deferred (budget)" in result.status


def test_a_lesson_too_big_alone_is_never_served(tmp_path):
    result = pack(_view(500), [_item(1, "y" * 4000), _item(2, "ok")], {"served": {}}, turn=1)
    assert [i["id"] for i in result.too_big] == ["n_00000001"]
    assert [i["id"] for i in result.full] == ["n_00000002"]
    assert "1 too big (rose status)" in result.status


@pytest.mark.graph
def test_a_store_that_sums_to_the_budget_is_served_within_it(store: Store, project: Path):
    """The view said "fits" from the pieces' sum; the joined block was 10-18 tokens over."""
    # pieces of 104 characters: 26 tokens each, with nothing to round; one write, one sync
    store.write(
        [
            Node(id=f"n_tiny{n:05d}", title=f"Tiny {n}", gist="T.", body="t" * 32)
            for n in range(10, 40)
        ]
    )
    config.set_override(store.primary.config, "recall.whole_tokens", "100000")
    items = Store.open().view()["lessons"]
    summed = tokens.count(HEAD) + tokens.count(TAIL) + sum(i["full_tokens"] for i in items)
    whole = "\n\n".join([HEAD, *(i["full"] for i in items), TAIL])
    assert tokens.count(whole) > summed  # the blank lines between them: 15 tokens more
    config.set_override(store.primary.config, "recall.max_pack_tokens", str(summed))
    rc, out, _, _ = run_hook("user-prompt-submit", payload("user-prompt-submit", project))
    assert rc == 0
    assert tokens.count(out["hookSpecificOutput"]["additionalContext"]) <= summed
    (event,) = read_events(store.primary.events, kind="inject")
    assert event["tokens"] <= summed


@pytest.mark.graph
def test_recall_never_keeps_a_lesson_over_the_budget(store: Store):
    """Past the budget, with no model, the ranked apexes were cut to 'at least one'."""
    store.save(Node(id="n_big00001", title="Big", gist="Big.", body="Long words. " * 400))
    config.set_override(store.primary.config, "recall.max_pack_tokens", "300")
    res = recall(Store.open(), "anything", judge=None, deadline_s=1)
    assert res.chosen == []


# -- through the hook, as each host runs it ---------------------------------------------------


def _codex(project: Path, **changes) -> dict:
    data = json.loads((FIXTURES / "user-prompt-submit.codex.json").read_text())
    data["cwd"] = str(project)
    data.update(changes)
    return data


@pytest.fixture
def wide(store: Store) -> Store:
    """Twelve 1,500-character lessons served whole (budget 6,000): 18,000 characters."""
    body = "says: " + "é tout " * 210  # non-ASCII: UTF-8 bytes exceed characters
    store.write(
        [
            Node(
                id=f"n_wide{n:05d}",
                title=f"Wide lesson {n}",
                gist="Wide.",
                body=f"Lesson {n} {body}",
            )
            for n in range(12)
        ]
    )
    config.set_override(store.primary.config, "recall.max_pack_tokens", "6000")
    Store.open().view()
    return store


@pytest.mark.graph
@pytest.mark.parametrize("host", ["claude", "codex", "unknown"])
def test_the_block_fits_the_host_and_the_rest_waits_for_the_next_prompt(
    wide: Store, project: Path, host: str
):
    if host == "claude":
        data = payload("user-prompt-submit", project)
    elif host == "codex":
        data = _codex(project)
    else:
        data = {"session_id": "abc123", "cwd": str(project), "prompt": "Hi"}
    rc, out, _, _ = run_hook("user-prompt-submit", data)
    assert rc == 0
    block = out["hookSpecificOutput"]["additionalContext"]
    if host == "claude":
        assert 9_000 < _claude_chars(block) <= 10_000
        assert "deferred (size limit)" in out["systemMessage"]
    else:
        assert 9_000 < len(block.encode("utf-8")) <= 10_000
        assert "deferred (size limit)" in out["systemMessage"]
    served = {ln.split('"')[1] for ln in block.splitlines() if ln.startswith("<lesson id=")}
    assert 0 < len(served) < 12
    log = sessions.read(wide.primary.root, data["session_id"])
    assert set(log[-1]["served"]) == served  # the deferred were not recorded as served
    (event,) = read_events(wide.primary.events, kind="inject")
    assert len(event["deferred"]) == 12 - len(served)

    rc, out, _, _ = run_hook("user-prompt-submit", data)  # the next prompt serves the rest
    later = out["hookSpecificOutput"]["additionalContext"]
    again = {ln.split('"')[1] for ln in later.splitlines() if ln.startswith("<lesson id=")}
    assert again and again.isdisjoint(served)

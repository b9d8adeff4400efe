"""`rose add` without a model derives the gist (and the title, unless given) from the first
sentence: locks in that what was derived is marked `provisional` in the file and the graph
(a `--title` is not), and that the injected block never shows a title that only repeats the
body's first sentence, while a title written to say something else is still shown."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from rose import tokens
from rose.cli import app
from rose.inspect.trace import inspect
from rose.models import Node, title_repeats
from rose.store import view
from rose.store.facade import Store
from tests._snapshot import check

pytestmark = pytest.mark.graph

BODY = "Retry idempotent remote calls. S3 needs the body parsed before a retry."


def _front(store: Store, node: Node) -> dict:
    text = store.primary.node_path(node.family, node.id).read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def _row(store: Store, lesson_id: str) -> dict:
    return store.read("lesson_get", ids=[lesson_id])[0]["lesson"]


def test_add_without_title_marks_title_and_gist_provisional(store: Store):
    node = store.add(BODY)
    assert (node.title, node.gist) == (
        "Retry idempotent remote calls",
        "Retry idempotent remote calls.",
    )
    assert _front(store, node)["provisional"] == ["title", "gist"]
    assert _row(store, node.id)["provisional"] == ["title", "gist"]
    assert store.get(node.id).provisional == ["title", "gist"]


def test_add_with_title_marks_only_the_gist(store: Store):
    node = store.add(BODY, title="S3 retries")
    assert _front(store, node)["provisional"] == ["gist"]
    assert _row(store, node.id)["provisional"] == ["gist"]


def test_a_written_lesson_has_no_provisional_key(store: Store):
    node = store.save(Node(title="S3 retries", gist="Parse the body first.", body=BODY))
    assert "provisional" not in _front(store, node)
    assert _row(store, node.id)["provisional"] == []


def test_provisional_survives_a_save_and_orders_itself(store: Store):
    node = store.add(BODY)
    node.stats.attempts = 1
    store.save(node)  # e.g. a stats update must not forget what is still to be written
    assert store.get(node.id).provisional == ["title", "gist"]
    assert Node(title="t", provisional=["gist", "title", "gist"]).provisional == ["title", "gist"]


def test_query_finds_provisional_lessons():
    run = CliRunner().invoke
    assert run(app, ["init"]).exit_code == 0
    assert run(app, ["add", BODY]).exit_code == 0
    assert run(app, ["add", "Written one.", "--title", "Mine"]).exit_code == 0
    q = "MATCH (l:Lesson) WHERE list_contains(l.provisional, 'title') RETURN l.title AS t"
    res = run(app, ["query", q])
    assert res.exit_code == 0, res.output
    assert "Retry idempotent remote calls" in res.output and "Mine" not in res.output
    res = run(app, ["tree", "-v"])
    assert "provisional: title, gist" in res.output and "provisional: gist" in res.output


def test_first_sentence_title_is_not_injected_twice(store: Store):
    node = store.add(BODY)
    item = view.item(_row(store, node.id))
    assert item["full"].count("Retry idempotent remote calls") == 1
    assert "# " not in item["full"]
    assert item["refresher"].count("Retry idempotent remote calls") == 1
    # the counts are of what is injected, before and after rendering
    assert item["full_tokens"] == tokens.count(item["full"])
    assert _row(store, node.id)["tokens"] == tokens.count(BODY)


def test_hand_written_title_equal_to_the_first_sentence_is_dropped_too(store: Store):
    node = store.save(Node(title="  retry IDEMPOTENT remote calls!", gist="g", body=BODY))
    full = view.item(_row(store, node.id))["full"]
    assert full.casefold().count("retry idempotent remote calls") == 1


def test_distinct_title_is_still_shown(store: Store):
    node = store.add(BODY, title="S3 retries")
    row = _row(store, node.id)
    full = view.item(row)["full"]
    assert "# S3 retries\nRetry idempotent remote calls." in full
    assert row["tokens"] == tokens.count("S3 retries") + tokens.count(BODY)


@pytest.mark.parametrize(
    ("title", "body", "repeats"),
    [
        ("Retry idempotent remote calls", BODY, True),
        ("Retry idempotent remote calls.", BODY, True),
        ("S3 retries", BODY, False),
        ("Retry idempotent", BODY, False),  # a prefix that is not a cut: a title of its own
        ("Use the staging DB", "# Use the staging DB\nIt is on port 5433.", True),
        ("Use the staging DB", "Use the staging DB\nfor the e2e suite. Port 5433.", True),
        ("Retry idempotent remote…", BODY, True),  # the cut a long first sentence gets
        ("Anything", "", False),
    ],
)
def test_title_repeats_is_a_structural_comparison(title: str, body: str, repeats: bool):
    assert title_repeats(title, body) is repeats


def test_long_first_sentence_title_is_cut_and_still_dropped(store: Store):
    long = "Always " + "really " * 20 + "check the lock file before you bump a dependency."
    node = store.add(long)
    assert node.title.endswith("…")
    assert "# " not in view.item(_row(store, node.id))["full"]


def test_block_with_derived_and_written_titles_snapshot(store: Store):
    store.save(
        Node(
            id="n_a0000002",
            title="Retry idempotent remote calls",
            gist="Retry idempotent remote calls.",
            provisional=["title", "gist"],
            body=BODY,
        )
    )
    store.save(Node(id="n_b0000002", title="Test database", gist="Port 5433.", body="Port 5433."))
    _, result = inspect(store, "anything")
    check("provisional_block.txt", result.block + "\n")


def test_a_long_first_sentence_is_cut_at_a_word():
    """`rose add` titled a long note 'Before deploying the billing service to producti…',
    cut mid-word."""
    from rose.models import first_sentence

    text = "Before deploying the billing service to production always drain the queue workers"
    title = first_sentence(text, 50)
    assert title.endswith("…") and len(title) <= 50
    assert text.startswith(title[:-1]) and text[len(title) - 1] == " "
    assert first_sentence("x" * 80, 50) == "x" * 49 + "…"  # one long word: cut where it must

"""A lesson file with a byte that is not UTF-8 is served with U+FFFD in its place, and said.

Regression (issue 39, item 9): one stray byte (a Latin-1 character, a bad copy) made the
whole lesson unreadable (`LessonFileError`), so it was skipped from the index and from
recall. Now the file is decoded with replacement, indexed and served; one line names the
file and the byte's offset, an event records it, the file is left as it is, and every other
problem of a lesson file is still an error naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.events import read_events
from rose.models import Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph

BAD, GOOD = "n_badbyte0001", "n_goodone0001"


@pytest.fixture
def two(store: Store) -> Store:
    store.save(Node(id=BAD, family="enc", title="Encodings", body="Say caf\u00e9 in UTF-8."))
    store.save(Node(id=GOOD, family="net", title="Retry with backoff", body="Back off."))
    return store


def _file(store: Store, lesson_id: str) -> Path:
    (path,) = store.primary.nodes.rglob(f"{lesson_id}.md")
    return path


def _served() -> dict[str, str]:
    return {i["id"]: i["full"] for i in Store.open().view()["lessons"]}


def test_a_bad_byte_is_replaced_served_and_warned_once(
    two: Store, capsys: pytest.CaptureFixture[str]
):
    good_before = _served()[GOOD]
    path = _file(two, BAD)
    raw = path.read_bytes().replace("caf\u00e9".encode(), b"caf\xff")
    path.write_bytes(raw)
    offset = raw.index(b"\xff")
    capsys.readouterr()

    served = _served()
    assert "caf\ufffd" in served[BAD]
    assert served[GOOD] == good_before
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"rose: {path}: byte {offset} is not valid UTF-8; the lesson is read with U+FFFD in "
        "its place (the file is left as it is: fix the byte to silence this)"
    ]
    (event,) = read_events(two.primary.events, kind="lesson-bad-bytes")
    assert event == {**event, "path": str(path), "offset": offset}
    assert path.read_bytes() == raw  # never rewritten
    assert "caf\ufffd" in Store.open().get(BAD).body
    assert capsys.readouterr().err == ""  # said when read, not at every open

    _served()
    assert capsys.readouterr().err == ""


def test_broken_yaml_is_still_an_error_naming_the_file(two: Store):
    path = _file(two, BAD)
    path.write_bytes(path.read_bytes().replace(b"title:", b"title: [\xff", 1))
    fresh = Store.open()
    assert BAD not in {i["id"] for i in fresh.view()["lessons"]}
    ((where, why),) = fresh.last_sync.errors
    assert where == str(path) and "not valid YAML" in why

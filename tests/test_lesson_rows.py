"""`Store.lesson_rows` reads a few lessons each by its key (two statements each: the lesson,
then its text) and many in one batch statement, and both give the rows a batch gives."""

from __future__ import annotations

import pytest

from rose.models import Node
from rose.store.facade import Store
from tests._calls import statements

pytestmark = pytest.mark.graph


def test_few_lessons_are_read_by_key_and_many_in_one_batch(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    ids = [
        store.save(Node(id=f"n_rows{i:07d}", family="fam", title=f"L{i}", body=f"text {i}")).id
        for i in range(6)
    ]
    with store.graph() as g:
        batch = {r["lesson"]["id"]: r["lesson"] for r in g.q("lesson_get", ids=ids)}
    ran = statements(monkeypatch)
    few = store.lesson_rows(ids[:3])
    assert [n for n in ran if n.startswith("lesson_")] == ["lesson_get_one", "lesson_text_one"] * 3
    assert {r["lesson"]["id"]: r["lesson"] for r in few} == {i: batch[i] for i in ids[:3]}
    assert few[0]["lesson"]["body"] == "text 0"
    ran.clear()
    many = store.lesson_rows(ids)
    assert [n for n in ran if n.startswith("lesson_")] == ["lesson_get"]
    assert {r["lesson"]["id"]: r["lesson"] for r in many} == batch
    assert store.lesson_rows(["n_missing0001"]) == []


def test_rows_come_in_the_order_asked_at_every_size(store: Store):
    """What a caller hands a model in this order (the lessons a new one is reconciled with)
    reads the same whether the rows were found by key or in one batch."""
    ids = [
        store.save(Node(id=f"n_order{i:06d}", family="fam", title=f"L{i}", body=f"text {i}")).id
        for i in range(7)
    ]
    for asked in (ids[2::-1], [ids[5], ids[0], ids[6], ids[3], ids[1], ids[4], ids[0]]):
        assert [r["lesson"]["id"] for r in store.lesson_rows(asked)] == list(dict.fromkeys(asked))

"""The recall view carried forward after an edit is the view a rebuild would make.

Locks in: a sync that leaves the apexes as they were (lessons edited in place, their status
and links unchanged) moves the view's token total by what the edit moved, without rebuilding
it (`rose.store.view.advanced`); anything else (a status or a link changed, a lesson added,
a view that renders lessons) builds it again. After every step the view on disk is compared
with one built from scratch.
"""

from __future__ import annotations

import pytest

from rose.store import view as recall_view
from rose.store.facade import Store
from tests._calls import counted

pytestmark = pytest.mark.graph


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per view built from the graph (not carried forward)."""
    return counted(monkeypatch, recall_view, "build")


def _rebuilt(store: Store) -> dict:
    store.primary.recall_view.unlink()
    return store.view()


def _edit(store: Store, lesson_id: str, n: int) -> None:
    path = next(store.primary.nodes.rglob(f"{lesson_id}.md"))
    path.write_text(path.read_text(encoding="utf-8") + f"\nAnd one more thing, {n}.\n")


def test_edits_carry_the_view_forward_and_it_equals_a_rebuild(store: Store, builds: list[int]):
    (store.primary.root / "config.yaml").write_text("recall:\n  max_pack_tokens: 150\n")
    store = Store.open(store.primary.root.parent)
    ids = [store.add(f"Rule {i}: " + "check the inputs first. " * 12, family=f"f{i}").id
           for i in range(4)]  # fmt: skip
    first = _rebuilt(store)
    assert (first["apexes"], first["fits"], first["lessons"]) == (4, False, [])
    for n in range(5):
        _edit(store, ids[n % 4], n)
        before = len(builds)
        carried = store.view()
        assert len(builds) == before  # carried forward, not built
        assert carried["total_tokens"] > first["total_tokens"]
        assert _rebuilt(store) == carried


def test_recorded_episodes_carry_the_view_forward_and_it_equals_a_rebuild(
    store: Store, builds: list[int]
):
    """An episode moves no lesson in or out of the apexes: the view past the budget is carried
    forward (its evidence stamp moves) and equals a rebuild."""
    from rose.models import Episode

    (store.primary.root / "config.yaml").write_text("recall:\n  max_pack_tokens: 150\n")
    store = Store.open(store.primary.root.parent)
    ids = [store.add(f"Rule {i}: " + "check the inputs first. " * 12, family=f"f{i}").id
           for i in range(3)]  # fmt: skip
    first = _rebuilt(store)
    for n, outcome in enumerate(["success", "failure"]):
        store.save_episodes([Episode(prompt=f"task {n}", outcome=outcome, used=ids[:2])])
        before = len(builds)
        carried = store.view()
        assert len(builds) == before  # carried forward, not built
        assert carried["evidence"] != first["evidence"]
        assert _rebuilt(store) == carried


def test_a_changed_status_or_a_new_lesson_builds_the_view_again(store: Store, builds: list[int]):
    (store.primary.root / "config.yaml").write_text("recall:\n  max_pack_tokens: 150\n")
    store = Store.open(store.primary.root.parent)
    ids = [store.add(f"Rule {i}: " + "check the inputs first. " * 12, family=f"f{i}").id
           for i in range(3)]  # fmt: skip
    _rebuilt(store)
    node = store.get(ids[0])
    node.status = "archived"
    before = len(builds)
    store.save(node)
    assert len(builds) == before + 1
    assert store.view()["apexes"] == 2
    assert _rebuilt(store) == store.view()
    store.add("Rule 9: " + "log what you skipped. " * 12, family="f9")
    assert store.view()["apexes"] == 3
    assert _rebuilt(store) == store.view()


def test_a_view_that_renders_lessons_re_renders_only_the_edited_one(
    store: Store, builds: list[int], monkeypatch: pytest.MonkeyPatch
):
    lessons = [store.add(f"Keep cache {i} warm.", family="cache") for i in range(3)]
    assert store.view()["fits"]
    rendered = counted(monkeypatch, recall_view, "item")
    _edit(store, lessons[1].id, 1)
    before = len(builds)
    view = store.view()
    assert len(builds) == before and len(rendered) == 1  # one item rendered, none built
    assert "one more thing" in next(i for i in view["lessons"] if i["id"] == lessons[1].id)["full"]
    assert _rebuilt(store) == view


def test_a_view_that_renders_lessons_is_built_again_after_anything_but_text(
    store: Store, builds: list[int]
):
    from rose.models import Episode

    lessons = [store.add(f"Keep cache {i} warm.", family="cache") for i in range(2)]
    assert store.view()["fits"]
    steps = [
        lambda: store.save_episodes([Episode(outcome="success", used=[lessons[0].id])]),
        lambda: store.add("Warm the cache after a deploy.", family="cache"),
        lambda: _retitle_level(store, lessons[1].id),
    ]
    for step in steps:
        before = len(builds)
        step()  # a write refreshes the view itself; an episode file waits for the next open
        view = store.view()
        assert len(builds) == before + 1
        assert _rebuilt(store) == view


def _retitle_level(store: Store, lesson_id: str) -> None:
    node = store.get(lesson_id)
    node.level += 1
    store.save(node)


def test_an_edit_that_outgrows_the_budget_builds_the_view_again(store: Store, builds: list[int]):
    (store.primary.root / "config.yaml").write_text("recall:\n  max_pack_tokens: 200\n")
    store = Store.open(store.primary.root.parent)
    lesson = store.add("Keep the cache warm.", family="cache")
    assert store.view()["fits"]
    path = next(store.primary.nodes.rglob(f"{lesson.id}.md"))
    path.write_text(path.read_text(encoding="utf-8") + "\n" + "Check the hit rate. " * 60)
    before = len(builds)
    view = store.view()
    assert len(builds) == before + 1 and not view["fits"] and view["lessons"] == []
    assert _rebuilt(store) == view


@pytest.mark.parametrize("small", [0, 4])
def test_an_edit_below_an_apex_is_carried_forward_as_a_rebuild_would_count_it(
    store: Store, builds: list[int], monkeypatch: pytest.MonkeyPatch, small: int
):
    """Only the apexes' tokens count: an edit of a lesson a servable lesson was compressed
    from leaves the total as it was; once that one is archived, the edit counts. `small`:
    the apexes among the edited lessons found by the batch query (0) or one by one (4)."""
    from rose.graph import _apply
    from rose.models import Node

    monkeypatch.setattr(_apply, "SMALL", small)
    (store.primary.root / "config.yaml").write_text("recall:\n  max_pack_tokens: 150\n")
    store = Store.open(store.primary.root.parent)
    ids = [store.add(f"Rule {i}: " + "check the inputs first. " * 12, family=f"f{i}").id
           for i in range(3)]  # fmt: skip
    above = Node(id="n_above00001", family="f0", title="Rule 0, short", body="Check inputs.",
                 level=1, derived_from=[ids[0]])  # fmt: skip
    store.save(above)
    first = _rebuilt(store)
    _edit(store, ids[0], 1)
    before = len(builds)
    carried = store.view()
    assert len(builds) == before  # carried forward
    assert carried["total_tokens"] == first["total_tokens"]  # not an apex: nothing moved
    assert _rebuilt(store) == carried
    node = store.get(above.id)
    node.status = "archived"
    store.save(node)
    second = store.view()
    _edit(store, ids[0], 2)
    carried = store.view()
    assert carried["total_tokens"] > second["total_tokens"]  # an apex again: it counts
    assert _rebuilt(store) == carried

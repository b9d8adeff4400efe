"""Lesson file ↔ model and file ↔ graph ↔ model round trips keep every field: unicode, empty
lists, several parents, dropped claims, stats, provisional marks. Property tests, so odd text
is covered too."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rose.files.nodefile import dump_node, parse_node
from rose.models import Claim, Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=0, max_size=60)
_ids = st.lists(
    st.text(alphabet="0123456789abcdef", min_size=8, max_size=12).map(lambda s: "n_" + s),
    max_size=3,
    unique=True,
)
_time = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(timezone.utc)
).map(lambda d: d.replace(microsecond=0))


@st.composite
def nodes(draw) -> Node:
    return Node(
        title=draw(_text.filter(lambda s: s.strip())),
        gist=draw(_text),
        provisional=draw(st.sampled_from([[], ["title"], ["gist"], ["title", "gist"]])),
        body=draw(_text).strip("\n"),
        family=draw(st.sampled_from(["general", "retry", "db-ports", "x_1"])),
        level=draw(st.integers(0, 6)),
        status=draw(st.sampled_from(["active", "superseded", "demoted", "disputed", "archived"])),
        origin=draw(st.sampled_from(["reflection", "compression", "merge", "manual"])),
        conflict=draw(_text),
        derived_from=draw(_ids),
        parents=draw(_ids),
        dropped=[
            Claim(claim=c, kind=k, holder=h)
            for c, k, h in draw(
                st.lists(
                    st.tuples(
                        _text.filter(lambda s: s.strip()),
                        st.sampled_from(["parameter", "detail", "step"]),
                        _ids.filter(bool).map(lambda x: x[0]),
                    ),
                    max_size=3,
                )
            )
        ],
        preserve=draw(st.lists(_text, max_size=2)),
        patches=draw(st.lists(_text, max_size=2)),
        created=draw(_time),
        updated=draw(_time),
    )


@given(nodes())
@settings(max_examples=150)
def test_file_round_trip_keeps_every_field(node: Node):
    """Every field written about a lesson; what is observed of it is in episodes, not here."""
    path = Path(f"/x/{node.family}/{node.id}.md")
    assert parse_node(dump_node(node), path, "project") == node


@given(node=nodes())
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_graph_round_trip_keeps_every_field(store: Store, node: Node):
    # Links must point at lessons that exist; write the file directly to test the sync path.
    path = store.primary.node_path(node.family, node.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_node(node), encoding="utf-8")
    with store.graph() as g:
        back = store._get(g, node.id)
    path.unlink()
    assert back.model_dump() == node.model_dump()


def test_saved_lesson_with_two_parents_reads_back(store: Store):
    child = store.add("The detailed lesson body.", title="child")
    p1 = store.save(Node(title="p1", body="short", level=1, derived_from=[child.id]))
    p2 = store.save(Node(title="p2", body="other", level=1, derived_from=[child.id]))
    child.parents = [p1.id, p2.id]
    store.save(child)
    again = store.get(child.id)
    assert again.parents == [p1.id, p2.id]
    assert {r["id"] for r in store.read("ancestors", id=child.id)} == {p1.id, p2.id}

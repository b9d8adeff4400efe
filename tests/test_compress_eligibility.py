"""Which apexes may be compressed, and why the others may not.

Locks in: a lesson with no recorded episode in its subtree is never compressed (nothing
to replay), nor one with fewer than `compress.min_successes` attributed successes, one at
`compress.max_level`, or a disputed one; every apex is listed with its reason; an attempt
is recorded in the event log (not the lesson file), so a lesson is tried again only after
a new attributed success; asking for a lesson that is not due is an error saying why.
"""

from __future__ import annotations

import pytest

from rose import config
from rose.errors import RoseError
from rose.loop.abstraction import compress as c
from rose.models import Node
from tests._compress import family, judge, prober, succeed


def test_nothing_without_episodes_is_compressed(store):
    store.save(Node(title="Ports", body="The database listens on 5433, not 5432. " * 8))
    (row,) = c.eligible(store)
    assert not row.eligible and "successes" in row.reason
    assert c.compress_due(store, judge=None, prober=None) == []


def test_successes_with_nothing_to_replay_are_not_enough(project):
    f = family(project, seed=0)
    lone = Node(title="Lone", body="Always pin the toolchain version in CI. " * 4)
    f.store.write([lone], [e.model_copy(update={"accepted_summary": ""}) for e in
                           succeed(lone.id, f.work[:3])])  # fmt: skip
    rows = {r.id: r for r in c.eligible(f.store)}
    assert rows[f.node.id].eligible
    assert not rows[lone.id].eligible and "no recorded episode" in rows[lone.id].reason


def test_min_successes_max_level_and_status_are_reasons(project):
    f = family(project, seed=0)
    config.set_override(f.store.primary.config, "compress.min_successes", "50")
    (row,) = c.eligible(type(f.store).open(project))
    assert "of the 50 needed" in row.reason
    config.set_override(f.store.primary.config, "compress.min_successes", "2")
    node = f.store.get(f.node.id)
    node.level = 6
    f.store.save(node)
    (row,) = c.eligible(type(f.store).open(project))
    assert "compress.max_level" in row.reason
    node.level, node.status = 0, "disputed"
    f.store.save(node)
    (row,) = c.eligible(type(f.store).open(project))
    assert row.reason.startswith("disputed")


def test_an_attempt_is_an_event_and_waits_for_a_new_success(project):
    f = family(project, seed=1, spans=False)
    j = judge(f)
    (attempt,) = c.compress_due(f.store, judge=j, prober=prober(j))
    assert attempt.result == "rejected"
    assert "successes" not in f.store.primary.node_path(f.node.family, f.node.id).read_text()
    assert c.last_attempts(f.store) == {f.node.id: len(f.work)}
    with pytest.raises(RoseError, match="since its last attempt"):
        c.compress(f.store, f.node.id, judge=j, prober=prober(j))
    f.store.write([], succeed(f.node.id, f.work[:1]))
    assert c.eligible(f.store)[0].eligible

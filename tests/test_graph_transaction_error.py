"""A statement that fails inside a transaction surfaces as itself, not as the ROLLBACK after it.

Regression: the engine rolls a transaction back on its own when a statement fails (a
duplicate primary key, a full buffer pool), so `Graph.transaction`'s own ROLLBACK raised "No
active transaction for ROLLBACK" and hid the cause (a 100,000-lesson reindex reported only
that).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rose.errors import QueryError
from rose.graph.engine import open_graph

pytestmark = pytest.mark.graph

ENGINE = os.environ.get("ROSE_GRAPH_ENGINE", "kuzu")


def test_the_failing_statement_is_the_error_and_nothing_is_kept(tmp_path: Path):
    with open_graph(tmp_path / "g.db", ENGINE) as g:
        g.run("CREATE NODE TABLE T(id INT64 PRIMARY KEY)", name="schema")
        with pytest.raises(QueryError) as info, g.transaction():
            g.run("CREATE (:T {id: 1})", name="first")
            g.run("CREATE (:T {id: 1})", name="duplicate")
        assert info.value.name == "duplicate"
        assert g.run("MATCH (t:T) RETURN count(t) AS n", name="count") == [{"n": 0}]

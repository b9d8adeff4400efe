"""Every Cypher file parses and runs against a fresh schema, and every one is used by the
library: no dead statements, and no statement assembled in Python."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from rose.graph import queries
from rose.graph.engine import open_graph
from rose.graph.rows import claim_rows, episode_row, lesson_row
from rose.graph.sync import ensure_schema
from rose.models import Claim, Episode, Node

pytestmark = pytest.mark.graph

ENGINE = os.environ.get("ROSE_GRAPH_ENGINE", "kuzu")

ROOT = Path(__file__).resolve().parents[1] / "rose"

_PARAMS = {
    "id": "n_none",
    "ids": [],
    "paths": [],
    "scope": "",
    "limit": 5,
    "everything": False,
    "key": "k",
    "value": "v",
    "rows": [],
}


def _rows(name: str) -> list[dict]:
    """One realistic row for the statements that take rows (an empty list has no type)."""
    node = Node(title="t", dropped=[Claim(claim="c", holder="n_holder1")])
    return {
        "lessons_create": [lesson_row(node, "/p.md")],
        "claims_create": claim_rows(node),
        "episodes_create": [episode_row(Episode(), "project", "/e.json")],
        "files_put": [
            {
                "path": "/p",
                "kind": "node",
                "scope": "project",
                "mtime_ns": 1,
                "size": 1,
                "item": "n_x",
                "error": "",
            }
        ],
    }[name]


@pytest.mark.parametrize("name", [n for n in queries.names() if n != "schema"])
def test_query_runs_on_fresh_schema(tmp_path: Path, name: str):
    text = queries.load(name)
    wanted = set(re.findall(r"\$(\w+)", text))
    params = {k: _rows(name) if k == "rows" else _PARAMS[k] for k in wanted}
    with open_graph(tmp_path / "g.db", ENGINE) as g:
        ensure_schema(g)
        g.q(name, **params)


def test_every_query_file_is_used():
    source = "\n".join(
        p.read_text(encoding="utf-8") for p in ROOT.rglob("*.py") if "queries" not in p.parts
    )
    unused = [n for n in queries.names() if f'"{n}"' not in source]
    assert unused == []


def test_no_cypher_is_written_in_python():
    pattern = re.compile(r"[\"'](MATCH|MERGE|CREATE|UNWIND) [\(\$a-zA-Z]")
    offenders = [
        str(p) for p in ROOT.rglob("*.py") if pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_only_the_engine_module_imports_the_engine():
    pattern = re.compile(r"^\s*(import|from)\s+(kuzu|ladybug)\b", re.M)
    importers = sorted(
        str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if pattern.search(p.read_text())
    )
    assert importers == ["graph/engine.py"]

"""A graph database deleted or emptied by hand is rebuilt from the files, in one line and an event.

Regression (issue 39, item 9): deleting `graph.kuzu` was rebuilt with no word and no event,
and once the database had been checkpointed the log left beside it made the engine's open
fail with a traceback (`IndexError: unordered_map::at`) on every command; a database
truncated to 0 bytes was taken for a new one, silently. Now the leftover log is removed, the
files rebuild the graph, and stderr has one line naming the file and what happened. A store
whose graph was never built (new, or cloned with its lesson files) still builds it in silence.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rose.events import read_events
from rose.graph.engine import open_graph
from rose.models import Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph

ENGINE = os.environ.get("ROSE_GRAPH_ENGINE", "kuzu")
IDS = ("n_retry000001", "n_pinning0001")


@pytest.fixture
def lessons(store: Store) -> Store:
    store.save(Node(id=IDS[0], family="net", title="Retry with backoff", body="Back off."))
    store.save(Node(id=IDS[1], family="deps", title="Pin the engine", body="Pin it."))
    return store


def _checkpoint(path: Path) -> None:
    """Fold the log into the file, as a store in use for a while has it."""
    with open_graph(path, ENGINE) as g:
        g.run("CHECKPOINT", name="checkpoint")


def _served() -> list[str]:
    return sorted(i["id"] for i in Store.open().view()["lessons"])


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("checkpointed", [False, True])
def test_a_deleted_database_is_rebuilt_and_said_once(
    lessons: Store, capsys: pytest.CaptureFixture[str], checkpointed: bool
):
    path = lessons.graph_path
    if checkpointed:
        _checkpoint(path)
        lessons.save(Node(id="n_third000001", family="disk", title="Check disks", body="df."))
    capsys.readouterr()
    path.unlink()  # its log (`graph.kuzu.wal`) stays, as `rm .rose/graph.kuzu` leaves it
    served = _served()
    assert set(IDS) <= set(served)
    line = _one_line(capsys.readouterr().err)
    assert line == (
        f"rose: the graph database {path} was missing (deleted since it was last built); "
        f"rebuilt it from the files ({len(served)} read)"
    )
    (event,) = read_events(lessons.primary.events, kind="graph-rebuilt")
    assert event["path"] == str(path) and event["reason"].startswith("missing")
    assert event["read"] == len(served)
    assert _served() == served  # rebuilt: nothing more to say
    assert capsys.readouterr().err == ""


def test_a_database_truncated_to_nothing_is_rebuilt_and_said(
    lessons: Store, capsys: pytest.CaptureFixture[str]
):
    path = lessons.graph_path
    _checkpoint(path)
    capsys.readouterr()
    os.truncate(path, 0)
    assert _served() == sorted(IDS)
    line = _one_line(capsys.readouterr().err)
    assert line == (
        f"rose: the graph database {path} was damaged (it was truncated to 0 bytes); "
        "rebuilt it from the files (2 read)"
    )
    (event,) = read_events(lessons.primary.events, kind="graph-rebuilt")
    assert event["reason"].startswith("empty")


def test_a_truncated_database_is_rebuilt_and_said(
    lessons: Store, capsys: pytest.CaptureFixture[str]
):
    path = lessons.graph_path
    _checkpoint(path)
    capsys.readouterr()
    os.truncate(path, path.stat().st_size // 2)
    assert _served() == sorted(IDS)
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"rose: the graph database {path} was damaged (")
    assert line.endswith("and rebuilt it from the files (2 read)")
    (event,) = read_events(lessons.primary.events, kind="graph-rebuilt")
    assert event["moved_to"] and event["read"] == 2


def test_a_fresh_store_builds_its_graph_silently(
    lessons: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """A clone: the lesson files came with the repository, the database (ignored) did not."""
    clone = tmp_path / "clone"
    clone.mkdir()
    Store.init(clone)
    shutil.copytree(lessons.primary.nodes, clone / ".rose" / "nodes", dirs_exist_ok=True)
    capsys.readouterr()
    os.chdir(clone)
    assert _served() == sorted(IDS)
    assert capsys.readouterr().err == ""
    assert not read_events(clone / ".rose" / "events.jsonl", kind="graph-rebuilt")

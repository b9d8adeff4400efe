"""The event log is append-only and safe under concurrent writers: whole lines, none lost,
secrets redacted, unreadable lines skipped rather than fatal."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from rose.events import append_event, read_events


def _writer(path: str, n: int, who: int) -> None:
    for i in range(n):
        append_event(Path(path), "test", {"who": who, "i": i, "pad": "x" * 300})


def test_concurrent_appenders_lose_nothing(tmp_path: Path):
    path = tmp_path / "events.jsonl"
    procs = [
        mp.get_context("fork").Process(target=_writer, args=(str(path), 200, w)) for w in range(6)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    events = read_events(path)
    assert len(events) == 1200
    assert {(e["who"], e["i"]) for e in events} == {(w, i) for w in range(6) for i in range(200)}


def test_filter_limit_redaction_and_bad_lines(tmp_path: Path):
    path = tmp_path / "events.jsonl"
    append_event(path, "a", {"note": "password=hunter2hunter2"})
    with path.open("a") as fh:
        fh.write("{not json\n")
    append_event(path, "b")
    append_event(path, "a", {"n": 2})
    assert [e["kind"] for e in read_events(path)] == ["a", "b", "a"]
    assert [e.get("n") for e in read_events(path, kind="a", limit=1)] == [2]
    assert "hunter2" not in path.read_text()

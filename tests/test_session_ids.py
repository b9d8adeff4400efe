"""Session ids map to file names one to one.

An id that is a file name already (ASCII letters, digits, `-`, `_`, at most 80) keeps its
name, so every log written before keeps its place; any other id is named by a digest of
the raw id, so ids that differ only in the characters a file name cannot hold
(`a/b/../../c` against `abc`) never share a session's log, record or lock.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.files import sessions
from rose.loop.selection.pack import session_path


@pytest.mark.parametrize(
    "sid", ["abc", "0f8d2c4e-7b1a-4c39-9e5d-2a6b8c1f3e70", "s-1_x", "A" * 80, "default"]
)
def test_a_safe_id_keeps_its_name(sid: str):
    assert sessions.safe_id(sid) == sid
    assert Path(session_path("/store", sid)).name == f"{sid}.json"


def test_ids_a_file_name_cannot_hold_never_collide():
    raw = ["a/b/../../c", "abc/", "ab c", "a" * 81, "a" * 82, "é", "../abc", "abc\n"]
    names = [sessions.safe_id(s) for s in [*raw, "abc", "c", "e", "a" * 80]]
    assert len(set(names)) == len(names), names
    for s in raw:
        name = sessions.safe_id(s)
        assert name.startswith("x-") and sessions.safe_id(name) == name  # a digest is safe
        assert "/" not in name and ".." not in name
    assert sessions.safe_id("") == "default"


def test_two_sessions_whose_ids_normalised_alike_keep_two_logs(tmp_path: Path):
    sessions.append(tmp_path, "abc", "prompt", turn=1, prompt="mine")
    sessions.append(tmp_path, "a/b/../../c", "prompt", turn=1, prompt="theirs")
    assert [e["prompt"] for e in sessions.read(tmp_path, "abc")] == ["mine"]
    assert [e["prompt"] for e in sessions.read(tmp_path, "a/b/../../c")] == ["theirs"]
    logs = sorted(p.name for p in (tmp_path / "sessions").iterdir())
    assert len(logs) == 2 and "abc.log" in logs

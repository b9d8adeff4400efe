"""A transcript that cannot be read, or is not one, is a RoseError that names the file.

Locks in: a missing file, a folder, a file that is not JSON lines and JSON lines of
another shape each raise TranscriptError with the path and what to give instead (the CLI
prints it as one line); an empty file is a session with nothing in it yet, not an error.
"""

from __future__ import annotations

import pytest

from rose.errors import RoseError, TranscriptError
from rose.transcripts.transcript import activity, read


def test_a_missing_file_names_the_path_and_what_to_give(tmp_path):
    path = tmp_path / "gone.jsonl"
    with pytest.raises(TranscriptError) as err:
        read(path)
    assert isinstance(err.value, RoseError)
    assert str(path) in str(err.value) and "no such file" in str(err.value)
    assert "Codex rollout" in str(err.value)
    with pytest.raises(TranscriptError):
        activity(path)


def test_a_folder_is_not_a_transcript(tmp_path):
    with pytest.raises(TranscriptError, match="folder"):
        read(tmp_path)


def test_other_json_lines_are_not_a_transcript(tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text('{"name": "a", "value": 1}\n{"name": "b"}\n')
    with pytest.raises(TranscriptError, match="not a Claude Code or Codex transcript"):
        read(path)


def test_text_is_not_json_lines(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\nabout nothing\n")
    with pytest.raises(TranscriptError, match="not JSON lines"):
        read(path)


def test_an_empty_file_is_an_empty_session(tmp_path):
    claude = tmp_path / "55604662.jsonl"
    claude.write_text("")
    rollout = tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl"
    rollout.write_text("\n")
    assert read(claude).host == "claude-code" and read(claude).steps == ()
    assert read(rollout).host == "codex"

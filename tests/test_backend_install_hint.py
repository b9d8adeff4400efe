"""A missing model CLI's error says how to get one that answers: it told a machine with
neither CLI to `rose config agent codex`, a backend that was not there either."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.errors import BackendUnavailable
from rose.model._proc import resolve_binary


def _path_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in names:
        exe = folder / name
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


def test_with_neither_cli_it_says_how_to_install(tmp_path, monkeypatch):
    _path_with(tmp_path, monkeypatch)
    with pytest.raises(BackendUnavailable) as err:
        resolve_binary("claude", "claude")
    assert "npm install -g @anthropic-ai/claude-code" in str(err.value)
    assert "rose config agent codex" not in str(err.value)


def test_with_the_other_cli_there_it_offers_the_switch(tmp_path, monkeypatch):
    _path_with(tmp_path, monkeypatch, "claude")
    with pytest.raises(BackendUnavailable) as err:
        resolve_binary("codex", "codex")
    assert "npm install -g @openai/codex" in str(err.value)
    assert "switch with `rose config agent claude`" in str(err.value)

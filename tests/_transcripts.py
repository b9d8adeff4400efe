"""The transcript fixtures (tests/fixtures/transcripts/, see its README) by name."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def fixture(name: str) -> Path:
    path = FIXTURES / f"{name}.jsonl"
    assert path.is_file(), path
    return path

"""TOML as ROSE reads it: Codex's config.toml, which `rose install` edits and Codex judge
calls read. Standard library only (tomllib; tomli on Python 3.10), so the prompt hook's
fast path may import it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # `typing` costs the prompt hook ~4 ms to import: only for the checker
if TYPE_CHECKING:
    from typing import Any


def codex_home() -> Path:
    """Where Codex keeps its config: $CODEX_HOME, else ~/.codex."""
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


def loads(text: str) -> dict[str, Any]:
    """A TOML document's tables; ValueError (with the parser's reason) when it is not TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # tomli is a dependency on Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from None


def read(path: Path) -> dict[str, Any]:
    """A TOML file's tables; ValueError when it is not valid TOML, OSError when unreadable."""
    return loads(path.read_text(encoding="utf-8"))

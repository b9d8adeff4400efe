"""Several files written as one unit: the intent is journalled first, so a write that dies
half way is finished by the next process that holds the store.

The journal (`write-journal.json`, machine-local) is written whole by rename before any of
its files, and removed after the last; the writer holds the graph database meanwhile, so
the next holder finds a journal only when its writer died, and completes it.
"""

from __future__ import annotations

import json
from pathlib import Path

from rose.disk.atomic import write_json, write_text

NAME = "write-journal.json"


def apply(root: Path, files: list[tuple[str, str]], remove: list[str]) -> None:
    """Write `files` (path, text) and remove `remove`, as one unit."""
    path = root / NAME
    write_json(path, {"files": [list(f) for f in files], "remove": list(remove)})
    _do(files, remove)
    path.unlink(missing_ok=True)


def replay(root: Path) -> int:
    """Finish a unit a dead writer left half done; returns how many files it wrote."""
    path = root / NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = [(str(p), str(t)) for p, t in data["files"]]
        remove = [str(p) for p in data["remove"]]
    except FileNotFoundError:
        return 0
    except (ValueError, KeyError, TypeError):  # not ours, or not whole: nothing was begun
        path.unlink(missing_ok=True)
        return 0
    _do(files, remove)
    path.unlink(missing_ok=True)
    return len(files)


def _do(files: list[tuple[str, str]], remove: list[str]) -> None:
    for p, text in files:
        write_text(Path(p), text)
    for p in remove:
        Path(p).unlink(missing_ok=True)

"""The notes a process leaves beside the graph database while it opens, holds or serves it,
and what they say once that process is dead: a crash or a kill inside the engine, which
`rose.graph.engine` takes for damage rather than reopening what could crash again."""

from __future__ import annotations

import json
import os
from contextlib import suppress
from pathlib import Path


def serving_note(path: Path, pid: int) -> Path:
    """The note a graph server leaves for the length of each session (`rose.graph.server`)."""
    return path.with_name(f"{path.name}.serving-{pid}")


def dead_notes(path: Path) -> list[tuple[Path, int, str]]:
    """(note, pid, what it was doing) for each process that died holding or opening `path`.

    A graph server that died between sessions held the database with nothing in hand (every
    session's work committed or rolled back): its holder note is cleared, not counted."""
    from rose.graph.engine import holder_file, opening_prefix, process_alive  # it imports this

    notes = {opening_prefix(path): "died inside the engine's open",
             serving_note(path, 0).name[:-1]: "(graph server) died serving a session"}  # fmt: skip
    found = []
    with suppress(OSError):
        for entry in os.scandir(path.parent):
            for prefix, doing in notes.items():
                tail = entry.name[len(prefix) :]
                if (
                    entry.name.startswith(prefix)
                    and tail.isdigit()
                    and not process_alive(int(tail))
                ):
                    found.append((Path(entry.path), int(tail), doing))
    note = holder_file(path)
    try:
        info = json.loads(note.read_text(encoding="utf-8"))
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return found
    if pid != os.getpid() and not process_alive(pid):
        if info.get("serve") and not any(p == pid for _, p, _ in found):
            note.unlink(missing_ok=True)
        else:
            found.append((note, pid, f"({info.get('cmd', '?')}) died with it open"))
    return found


def crash_note(path: Path) -> str | None:
    """Why the database is taken for damaged after a process died with it, or None."""
    dead = dead_notes(path)
    if not dead:
        return None
    _, pid, doing = dead[0]
    return f"process {pid} {doing}: a crash, or a kill"

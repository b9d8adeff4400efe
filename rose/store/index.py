"""The one-line-per-lesson index (`.rose/index.txt`) for grep and reading, rebuilt when stale."""

from __future__ import annotations

from pathlib import Path

from rose.disk.atomic import uncached, write_text
from rose.errors import WriteFailed
from rose.files import scan
from rose.store.facade import Store

_HEAD = "# rose index "


def index(store: Store) -> tuple[Path, list[str]]:
    """The index file and its lines; rebuilt from the graph when the lesson files moved on."""
    path = store.primary.root / "index.txt"
    with store.graph() as g:
        stamp = scan.stamp(store.last_sync.survey, store.roots)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        if lines and lines[0] == _HEAD + stamp:
            return path, lines[1:]
        rows = g.q("lessons_all")
    body = [
        f"{r['id']}\tL{r['level']}\t{r['scope']}/{r['family']}\t{_one_line(r['title'])} — "
        f"{_one_line(r['gist'])}"
        for r in rows
        if r["status"] in ("active", "disputed")
    ]
    try:
        write_text(path, "\n".join([_HEAD + stamp, *body]) + "\n")
    except WriteFailed as exc:  # the lines are printed all the same
        uncached(exc, "the index")
    return path, body


def _one_line(text: str) -> str:
    return " ".join(text.split())

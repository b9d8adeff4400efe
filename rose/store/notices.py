"""What a detached job did that the user should hear of, kept for the next status line.

A job that creates a store, for instance, runs after the session it learnt from, with no
terminal to print to. It appends a few words to `<store>/notices.log`; the next prompt hook
takes them (renaming the file first, so two hooks never both show a notice) and puts them
in its status line, once.

Standard library only: the prompt hook takes notices on its fast path.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from rose.atomic import append_line

FILE = "notices.log"


def keep(root: str | Path, short: str) -> None:
    """Keep `short` for the next status line of the store at `root`."""
    append_line(Path(root) / FILE, short.replace("\n", " ").strip())


def take(roots: list[str]) -> list[str]:
    """The notices kept in the stores at `roots`, oldest first, each handed out once."""
    out: list[str] = []
    for root in roots:
        path = os.path.join(root, FILE)
        taking = f"{path}.taking-{os.getpid()}"
        try:
            os.rename(path, taking)
        except OSError:
            continue  # none kept, or another hook took them
        with contextlib.suppress(OSError), open(taking, encoding="utf-8") as fh:
            out += [line.strip() for line in fh if line.strip()]
        with contextlib.suppress(OSError):
            os.unlink(taking)
    return list(dict.fromkeys(out))


#: A few words for each repair this process made to a store (a damaged database rebuilt)
#: that no status line has shown yet: the prompt hook takes them for its own.
_NOTICES: list[str] = []


def notify(line: str, short: str, *, keep_in: Path | None = None) -> None:
    """Tell the user what was repaired or made: the whole line on stderr now, a few words for
    later. With `keep_in` (a store's folder) the few words are also kept there, for the next
    prompt's status line: a detached job has no one to tell."""
    _NOTICES.append(short)
    print(f"rose: {line}", file=sys.stderr)
    if keep_in is not None:
        keep(keep_in, short)


def adopt(shorts: list[str]) -> None:
    """Take on the few words of repairs another process made for this one (the recall
    server's child), to be shown as this process's own."""
    _NOTICES.extend(str(s) for s in shorts)


def take_notices() -> list[str]:
    """The repairs not yet shown in a status line, oldest first; each is handed out once."""
    taken = _NOTICES[:]
    _NOTICES.clear()
    return taken

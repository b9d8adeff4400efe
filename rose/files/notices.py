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

from rose.disk.atomic import append_line

FILE = "notices.log"


#: Marks a notice kept for one folder's prompts: `@<folder>\t<words>`.
_ABOUT = "@"


def keep(root: str | Path, short: str, *, about: str | Path | None = None) -> None:
    """Keep `short` for the next status line of the store at `root`; with `about` (the folder
    it concerns, as a project kept in the global store), for a prompt in that folder only."""
    line = short.replace("\n", " ").replace("\t", " ").strip()
    if about is not None:
        line = f"{_ABOUT}{os.path.abspath(about)}\t{line}"
    append_line(Path(root) / FILE, line)


def take(roots: list[str], here: str | None = None) -> list[str]:
    """The notices kept in the stores at `roots` for a prompt in `here` (the working
    directory), oldest first, each handed out once. One kept about another folder is left
    for a prompt there: the global store is every project's, its notices are not."""
    here = os.path.abspath(here or os.getcwd())
    out: list[str] = []
    for root in roots:
        path = os.path.join(root, FILE)
        taking = f"{path}.taking-{os.getpid()}"
        try:
            os.rename(path, taking)
        except OSError:
            continue  # none kept, or another hook took them
        lines: list[str] = []
        with contextlib.suppress(OSError), open(taking, encoding="utf-8") as fh:
            lines = [line.strip() for line in fh if line.strip()]
        for line in lines:
            about, _, words = line[len(_ABOUT) :].partition("\t")
            if not line.startswith(_ABOUT) or not words:
                out.append(line)
            elif here == about or here.startswith(about.rstrip(os.sep) + os.sep):
                out.append(words)
            else:
                append_line(Path(path), line)  # another folder's: kept for its prompts
        with contextlib.suppress(OSError):
            os.unlink(taking)
    return list(dict.fromkeys(out))


#: A few words for each repair this process made to a store (a damaged database rebuilt)
#: that no status line has shown yet: the prompt hook takes them for its own.
_NOTICES: list[str] = []


def notify(
    line: str, short: str, *, keep_in: Path | None = None, about: Path | None = None
) -> None:
    """Tell the user what was repaired or made: the whole line on stderr now, a few words for
    later. With `keep_in` (a store's folder) the few words are also kept there, for the next
    prompt's status line: a detached job has no one to tell; with `about`, for the next
    prompt in that folder (`keep`)."""
    _NOTICES.append(short)
    print(f"rose: {line}", file=sys.stderr)
    if keep_in is not None:
        keep(keep_in, short, about=about)


def take_notices() -> list[str]:
    """The repairs not yet shown in a status line, oldest first; each is handed out once."""
    taken = _NOTICES[:]
    _NOTICES.clear()
    return taken

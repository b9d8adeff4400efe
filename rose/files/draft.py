"""What a taught text becomes: a level-0 lesson, verbatim, with a derived title and gist.

Without a model the gist, and the title unless given, are the first sentence: marked
provisional, for a later reconcile to write properly. Text piped in is often markdown: a
heading's `#`, a list item's `- ` or `1. ` and a quote's `>` mark its opening line, and
name nothing, so they are left out of the title and gist (the body keeps them).
"""

from __future__ import annotations

import re

from rose.errors import RoseError
from rose.models import Node, first_sentence, slug

_MARKUP = re.compile(r"^\s*(?:#+\s*|(?:>+|[-*+]|\d+[.)])(?:\s+|$))+")


def draft(body: str, *, title: str | None = None, family: str | None = None) -> Node:
    """A lesson as taught: level 0, origin manual, verbatim body; not written."""
    text = body.strip()
    if not text:
        raise RoseError("a lesson needs a body; pass text, or `-` to read it from stdin")
    title = (title or "").strip()
    lines = text.splitlines()
    first = _MARKUP.sub("", lines[0]).strip()
    opening = "\n".join([first, *lines[1:]])
    return Node(
        title=title or first_sentence(first, 80).rstrip(".").strip() or "Untitled lesson",
        gist=first_sentence(opening) or first_sentence(text),
        provisional=["gist"] if title else ["title", "gist"],
        body=text,
        family=family_folder(family) if family is not None else "general",
        origin="manual",
    )


def family_folder(family: str) -> str:
    """The folder name `--family` spells (`slug`); refused when it spells none, rather than
    filing the lesson under `general` unasked."""
    name = slug(family)
    if name == "general" and slug(f"{family} x") == "x":  # nothing but the fallback
        raise RoseError(
            f"family {family!r} has no letter or digit to name a folder by; give one such "
            "as `db-ports`, or leave the family out to file the lesson under `general`"
        )
    return name

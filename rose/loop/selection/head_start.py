"""A head start for the model CLIs a prompt's recall will ask: started as the hook begins.

Past the budget, recall's relevance questions each run the model CLI once, and most of a
`claude -p` call is the CLI starting. `ClaudeBackend.prewarm` starts them before the
questions are written, but only once recall, the judge and the store are loaded: several
hundred milliseconds after the hook began. What those CLIs need (the backend, its model,
the answer's schema, how many questions the walk's first level asks at once) does not
change from prompt to prompt, so recall notes it here (`note`) and the next prompt hook,
on its way to the model-decided path, starts them first (`start`), before it imports
anything heavy.
The spares are the backend's own (`rose.model._warm`): recall takes them by their exact
argv, and one it does not take is dismissed without asking the model.

The note is a machine-local cache in the judge cache's folder. Nothing in it is run: the
binary is the backend's own, found on PATH as every call finds it, and the note's fields
are checked (a known backend, a plain model name, a schema object, a small count) before
they become arguments. A note that fails the check is ignored.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rose.judge.base import Judge

NAME = "head-start.json"
CALL = "relevance"
_BACKENDS = ("claude",)  # the backends that can start a CLI ahead (`prewarm`)
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@\[\]/-]{0,99}")  # never an option's dash
MAX_AHEAD = 4  # as many as the backend keeps waiting (`rose.model._warm.MAX_SPARES`)


def note(folder: Path, judge: Judge, asked: int) -> bool:
    """Keep what the next prompt's head start needs, after a recall whose first level asked
    `asked` relevance questions at once through `judge`; whether the note was (re)written.
    A backend that cannot start a CLI ahead leaves none (an old note is removed). Only the
    first level's CLIs are started: those of later levels start as the level before them is
    asked (`Walk.ahead`); started with the hook too, they would only compete for the
    processor with the work before the first question (measured on 2 cores: slower, not
    faster)."""
    backend = getattr(judge, "backend", None)
    name = getattr(backend, "name", "")
    path = Path(folder) / NAME
    if backend is None or name not in _BACKENDS or not hasattr(backend, "prewarm") or asked <= 0:
        try:
            path.unlink()
            return True
        except FileNotFoundError:
            return False
    from rose.disk.atomic import write_text
    from rose.judge.calls import schema_of

    model = getattr(backend, "model", None) or None
    data: dict[str, Any] = {"backend": name, "model": model, "call": CALL,
                            "schema": schema_of(CALL), "n": min(asked, MAX_AHEAD)}  # fmt: skip
    text = json.dumps(data, separators=(",", ":"))
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, text, durable=False)
    return True


def read(folder: Path) -> dict[str, Any] | None:
    """The note in `folder` when it passes every check, else None."""
    try:
        data = json.loads((Path(folder) / NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("call") != CALL:
        return None
    model, schema, n = data.get("model"), data.get("schema"), data.get("n")
    if data.get("backend") not in _BACKENDS or not isinstance(schema, dict):
        return None
    if model is not None and not (isinstance(model, str) and _MODEL.fullmatch(model)):
        return None
    if not (isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_AHEAD):
        return None
    return data


def start(folder: Path) -> int:
    """Start the CLIs the note in `folder` asks for; how many were started. Never raises:
    without a usable note, a CLI or a spawn allowed, nothing starts and recall's calls
    start their own as before."""
    data = read(folder)
    from rose.processes import kept

    if data is None or os.environ.get("ROSE_HEAD_START") == "0" or kept.off("head-start"):
        return 0
    from rose.model.claude import ClaudeBackend

    try:
        return ClaudeBackend(model=data["model"]).prewarm(data["schema"], data["n"])
    except Exception:  # a head start is only ever a saving
        return 0

"""What a hook reads from the host before anything else: the stores that serve its folder,
the session a payload is about, and which host sent it. Standard library only: every hook,
the prompt hook's fast path included, imports it."""

from __future__ import annotations

import os
from pathlib import Path

from rose.files.layout import StoreDir, find_project_root, global_root


class Root(tuple[str, str]):
    """One store serving the hook's folder: its `.rose` folder and scope ("project" or
    "global"). A pair, so the stages that take `(folder, scope)` tuples take it as is."""

    __slots__ = ()

    def __new__(cls, path: str, scope: str) -> Root:
        return super().__new__(cls, (path, scope))

    @property
    def path(self) -> str:
        return self[0]

    @property
    def scope(self) -> str:
        return self[1]

    @property
    def events(self) -> Path:
        return Path(self[0]) / "events.jsonl"

    def store(self) -> StoreDir:
        return StoreDir(Path(self[0]), self[1])


def roots_for(cwd: str | None) -> list[Root]:
    """The stores that serve `cwd`, nearest first: its project's, then the global one."""
    start = Path(cwd) if cwd and os.path.isdir(cwd) else None
    roots = []
    project = find_project_root(start)
    if project is not None and project.is_dir():
        roots.append(Root(str(project), "project"))
    glob = global_root()
    if glob.is_dir():
        roots.append(Root(str(glob), "global"))
    return roots


def session_id(payload: dict) -> str:
    """The session a payload is about (`session_id`, or `sessionId` in some payloads);
    `default` when absent."""
    return str(payload.get("session_id") or payload.get("sessionId") or "default")


def host_of(payload: dict) -> str:
    """Which host sent the payload, for the size of answer it passes on whole.

    Codex sends `turn_id` (and `model`) with every prompt (codex-rs/hooks, the
    user-prompt-submit input schema); Claude Code names the event and sends neither.
    Any other shape is unknown, and gets the stricter bound.
    """
    if "turn_id" in payload:
        return "codex"
    if payload.get("hook_event_name") and "model" not in payload:
        return "claude"
    return ""

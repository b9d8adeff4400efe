"""The `rose mcp` tools called in-process, as an MCP client calls them, for a driven agent.

`rose.sim.hosts.drive.HookHost.tools` hands the agent it drives one of these for its session, so
that what the agent pulls goes through the door the server's tools go through
(`rose.loop.selection.pull.call`), against the same store, without the stdio round trip. Each call
opens the store as the server does (here the host's folder is the working directory),
answers and closes; a failure comes back as the text of the tool error the server would
send, and the agent reads it like any answer. `used` goes to the session named, as a host
that sets $ROSE_SESSION_ID for the server would have it. What a call cost the model (the
relevance calls of a `recall`) is counted apart from the prompt hook's, from the store's
event log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rose.errors import RoseError


class PullClient:
    """The tools for one session of the store in `folder`: ``client(tool, arguments)``
    answers ``{"text", "calls", "model_tokens"}`` (the model calls the answer made)."""

    def __init__(self, folder: Path, session: str, take: Callable[[], tuple[int, int]]):
        self.folder = Path(folder)
        self.session = session
        self.take = take  # the model calls (and their tokens) since it was last asked

    def __call__(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        from rose.loop.selection import pull
        from rose.store.facade import Store

        args = {**arguments, "session": self.session} if tool == "used" else dict(arguments)
        self.take()  # nothing before this call is its doing
        try:
            text = pull.call(Store.open(self.folder), tool, args)
        except RoseError as exc:  # what the server sends as a tool error
            text = f"error: {exc}"
        calls, spent = self.take()
        return {"text": text, "calls": calls, "model_tokens": spent}

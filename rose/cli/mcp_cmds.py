"""The MCP server: `rose mcp`."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)


def mcp() -> None:
    """Serve ROSE's memory to the agent as an MCP server over stdio (the host starts it).

    Tools: recall (lessons for a query, as the prompt hook chooses them), show (a lesson by
    id, with the claims its compression dropped and the lessons holding them), lessons (the
    families and their apexes) and used (which lessons bore on the work, recorded as `rose
    used` records it; the session is the one given, else $ROSE_SESSION_ID, else the session
    this store's log wrote last). `rose install` registers it for Claude Code and Codex.
    Failures come back as tool errors; the server keeps running.
    """
    from rose.hooks.mcp_server import main

    raise typer.Exit(main())

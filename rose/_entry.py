"""The `rose` command's entry point: hooks take a light path, everything else the full CLI.

A hook runs on every prompt, so `rose hook ...` must not pay for importing typer,
pydantic or the graph engine unless the work needs them; `rose mcp` (started by the host
with each session) skips typer too.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from rose.hooks.main import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    if sys.argv[1:] == ["mcp"]:  # the host starts the server: no typer on the way
        if os.environ.get("ROSE_CHILD"):
            sys.exit(0)  # a model call ROSE spawned needs no memory server
        from rose.hooks.mcp_server import main as mcp_main

        sys.exit(mcp_main())
    from rose.cli import main as cli_main

    cli_main()

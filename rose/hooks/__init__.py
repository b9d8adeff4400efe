"""What the hosts run: the hook entry points, the Stop hook's nudge, ROSE's MCP server and
its in-process client."""

"""Claude Code and Codex: install, their settings files, hook trust, MCP wiring, and the
hook payloads they send."""

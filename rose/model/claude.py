"""The `claude` CLI in print mode as a model backend.

One call is one ``claude -p`` process with no tools, no hooks, no saved session and a
short system prompt, run in an empty scratch directory so that no project CLAUDE.md is
read into the judgement. The prompt goes on stdin; stdout is the JSON envelope of
``--output-format json``.
"""

from __future__ import annotations

import json
import tempfile
import time
from typing import Any

from rose.errors import BackendFailed, BackendTimeout
from rose.model import _proc
from rose.model._schema import check_answer, extract_object, parse_answer
from rose.model.base import BackendAnswer, Usage

SYSTEM_PROMPT = (
    "You answer one question for ROSE, a memory for coding agents. "
    "Reply with exactly one JSON object that fits the requested schema. "
    "Do not use tools and do not add commentary."
)
NO_HOOKS = json.dumps({"disableAllHooks": True}, separators=(",", ":"))

# `--json-schema` (answer in `structured_output`) is documented for Claude Code 2.1 and
# seen in the field late in 2.0.x, but no changelog entry pins the release that added it.
# So: 2.1.0 and newer get the flag; anything older, or a version we cannot read, gets the
# schema written into the prompt, which every version honours. Even with the flag we fall
# back to the `result` text when `structured_output` is missing (a known CLI bug).
NATIVE_SCHEMA_SINCE = (2, 1, 0)
_VERSION_PROBE_S = 15.0


def schema_contract(schema: dict[str, Any]) -> str:
    """The instruction appended to the prompt when the CLI cannot enforce the schema itself."""
    return (
        "\n\nAnswer with one JSON object matching this JSON schema, inside a ```json fenced "
        "block, and nothing else:\n" + json.dumps(schema, indent=1)
    )


def claude_version(path: str, timeout_s: float = _VERSION_PROBE_S) -> tuple[int, int, int] | None:
    """The version `path --version` reports, read once per binary per process."""
    return _proc.version("claude", path, timeout_s)


class ClaudeBackend:
    """Answers through `claude -p`, with `--json-schema` where the installed CLI has it."""

    name = "claude"

    def __init__(self, model: str | None = None, binary: str = "claude"):
        self.model = model
        self.binary = binary

    def complete(
        self, call: str, prompt: str, schema: dict[str, Any], *, timeout_s: float
    ) -> BackendAnswer:
        _proc.ensure_spawn_allowed(self.name)
        path = _proc.resolve_binary(self.name, self.binary)
        started = time.monotonic()
        version = claude_version(path, min(timeout_s, _VERSION_PROBE_S))
        remaining = timeout_s - (time.monotonic() - started)  # the deadline covers the probe
        if remaining <= 0:
            raise BackendTimeout(self.name, timeout_s)
        native = version is not None and version >= NATIVE_SCHEMA_SINCE
        argv = self._argv(path, schema if native else None)
        stdin = prompt if native else prompt + schema_contract(schema)
        with tempfile.TemporaryDirectory(prefix="rose-claude-") as scratch:
            try:
                result = _proc.run(self.name, argv, stdin=stdin, timeout_s=remaining, cwd=scratch)
            except BackendTimeout:
                raise BackendTimeout(self.name, timeout_s) from None
        envelope = _envelope(result.stdout)
        text = envelope.get("result")
        text = text if isinstance(text, str) else ""
        if envelope.get("is_error"):
            why = text or str(envelope.get("subtype") or "no detail")
            raise BackendFailed(self.name, f"the CLI reported an error: {why[:300]}")
        structured = envelope.get("structured_output")
        if native and structured is not None:
            as_text = json.dumps(structured)
            data = check_answer(call, structured, schema, as_text)
            raw = text or as_text
        else:
            raw = text
            data = parse_answer(call, text, schema)
        return BackendAnswer(data=data, raw=raw, usage=_usage(envelope, result.wall_s))

    def _argv(self, path: str, schema: dict[str, Any] | None) -> list[str]:
        argv = [
            path,
            "-p",
            "--output-format",
            "json",
            "--tools",
            "",
            "--system-prompt",
            SYSTEM_PROMPT,
            "--no-session-persistence",
            "--settings",
            NO_HOOKS,
            # No MCP server either: ~/.claude.json may register `rose mcp`, which a model
            # call has no use for (and would pay a process start for).
            "--strict-mcp-config",
        ]
        if schema is not None:
            argv += ["--json-schema", json.dumps(_for_cli(schema), separators=(",", ":"))]
        if self.model:
            argv += ["--model", self.model]
        return argv


def _for_cli(schema: dict[str, Any]) -> dict[str, Any]:
    # Newer CLIs reject a `$schema` dialect they do not register; the shape is what matters.
    return {key: value for key, value in schema.items() if key != "$schema"}


def _envelope(stdout: str) -> dict[str, Any]:
    """The result envelope on stdout; tolerant of log lines printed before it."""
    envelope = extract_object(stdout)
    if envelope is None or not ("result" in envelope or "structured_output" in envelope):
        raise BackendFailed(
            "claude",
            "stdout was not the JSON envelope of `--output-format json` "
            f"(is this Claude Code?): {stdout.strip()[:200]!r}",
        )
    return envelope


def _usage(envelope: dict[str, Any], wall_s: float) -> Usage:
    """Tokens as ROSE counts them: input includes cache reads and writes; cached is the reads."""
    usage = envelope.get("usage")
    usage = usage if isinstance(usage, dict) else {}

    def count(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, (int, float)) else 0

    cached = count("cache_read_input_tokens")
    cost = envelope.get("total_cost_usd")
    return Usage(
        input_tokens=count("input_tokens") + count("cache_creation_input_tokens") + cached,
        cached_tokens=cached,
        output_tokens=count("output_tokens"),
        cost_usd=float(cost) if isinstance(cost, (int, float)) else 0.0,
        wall_s=wall_s,
    )

"""`codex exec` as a model backend.

One call is one ``codex exec`` in a read-only sandbox, run in a scratch directory that
holds the schema file and the answer file (and no AGENTS.md, so the project's own
instructions, ROSE's block included, stay out of the judgement). The prompt goes on
stdin; the final message is read from ``--output-last-message``; usage comes from the
``--json`` event stream on stdout. The scratch directory is removed however the call ends.

A call is not a session of the user's: on a Codex that has the flags (0.171 and newer, the
release they were checked against; older ones get neither) it runs with `--ephemeral`, so
no rollout lands among the user's sessions for `codex resume` to list, with hooks
disabled, so the user's own hooks do not run for ROSE's questions, and with each MCP
server of the user's config.toml disabled (`-c mcp_servers.<name>.enabled=false`): a
question uses no tool, and Codex would start every server, each a process, for each one.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from rose.disk import tomlfile
from rose.disk.jsonl import objects as json_lines
from rose.errors import AnswerInvalid, BackendFailed, BackendTimeout
from rose.model import _proc
from rose.model._schema import check_answer, extract_object
from rose.model.base import BackendAnswer, Usage

PREAMBLE = (
    "You answer one question for ROSE, a memory for coding agents. Do not run commands or "
    "edit files. Your final message must be exactly one JSON object fitting the output "
    "schema.\n\n"
)


QUIET_SINCE = (0, 171, 0)  # --ephemeral, --disable hooks, mcp_servers.<name>.enabled, checked
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")  # a server name a dotted -c path can spell
_VERSION_PROBE_S = 15.0


class CodexBackend:
    """Answers through `codex exec --output-schema`."""

    name = "codex"

    def __init__(self, model: str | None = None, binary: str = "codex"):
        self.model = model
        self.binary = binary

    def complete(
        self, call: str, prompt: str, schema: dict[str, Any], *, timeout_s: float
    ) -> BackendAnswer:
        _proc.ensure_spawn_allowed(self.name)
        path = _proc.resolve_binary(self.name, self.binary)
        started = time.monotonic()
        version = _proc.version(self.name, path, min(timeout_s, _VERSION_PROBE_S))
        remaining = timeout_s - (time.monotonic() - started)  # the deadline covers the probe
        if remaining <= 0:
            raise BackendTimeout(self.name, timeout_s)
        quiet = version is not None and version >= QUIET_SINCE
        with tempfile.TemporaryDirectory(prefix="rose-codex-") as scratch:
            schema_file = Path(scratch, "schema.json")
            answer_file = Path(scratch, "answer.json")
            schema_file.write_text(json.dumps(schema), encoding="utf-8")
            argv = self._argv(path, schema_file, answer_file, quiet=quiet)
            result = _proc.run(
                self.name, argv, stdin=PREAMBLE + prompt, timeout_s=remaining, cwd=scratch
            )
            text = answer_file.read_text(encoding="utf-8") if answer_file.exists() else ""
        events = _events(result.stdout)
        if not text.strip():
            raise BackendFailed(self.name, f"codex exec gave no final message{_errors(events)}")
        data = _decode(call, text)
        data = check_answer(call, data, schema, text)
        return BackendAnswer(data=data, raw=text, usage=_usage(events, result.wall_s))

    def _argv(
        self, path: str, schema_file: Path, answer_file: Path, *, quiet: bool = False
    ) -> list[str]:
        argv = [
            path,
            "exec",
            "--json",
            "--output-schema",
            str(schema_file),
            "--output-last-message",
            str(answer_file),
            "--sandbox",
            "read-only",
            "--skip-git-repo-check",
        ]
        if quiet:
            argv += ["--ephemeral", "--disable", "hooks"]
            for name in user_mcp_servers():
                argv += ["-c", f"mcp_servers.{name}.enabled=false"]
        if self.model:
            argv += ["-m", self.model]
        return [*argv, "-"]


def user_mcp_servers() -> list[str]:
    """The MCP servers the user's config.toml registers (none when it is missing or not
    TOML: Codex reports that itself). A name a dotted `-c` path cannot spell is left."""
    try:
        servers = tomlfile.read(tomlfile.codex_home() / "config.toml").get("mcp_servers")
    except (OSError, ValueError):
        return []
    if not isinstance(servers, dict):
        return []
    return sorted(n for n, v in servers.items() if isinstance(v, dict) and _BARE_KEY.fullmatch(n))


def _decode(call: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    data = extract_object(text)
    if data is None:
        raise AnswerInvalid(call, text, "the final message holds no JSON object")
    return data


def _events(stdout: str) -> list[dict[str, Any]]:
    """The JSONL events of `codex exec --json`; lines that are not JSON objects are skipped."""
    return json_lines(stdout.splitlines())


def _errors(events: list[dict[str, Any]]) -> str:
    messages = []
    for event in events:
        if event.get("type") == "error":
            messages.append(str(event.get("message", "")))
        elif event.get("type") == "turn.failed":
            error = event.get("error")
            messages.append(str(error.get("message", "")) if isinstance(error, dict) else "")
    messages = [m for m in messages if m]
    return f": {messages[-1][:300]}" if messages else ""


def _usage(events: list[dict[str, Any]], wall_s: float) -> Usage:
    """Sum the usage of every completed turn; codex reports tokens but no cost."""
    usage = Usage(wall_s=wall_s)
    for event in events:
        if event.get("type") != "turn.completed" or not isinstance(event.get("usage"), dict):
            continue
        counts = event["usage"]

        def count(key: str, counts: dict[str, Any] = counts) -> int:
            value = counts.get(key)
            return int(value) if isinstance(value, (int, float)) else 0

        usage.input_tokens += count("input_tokens")
        usage.cached_tokens += count("cached_input_tokens")
        usage.output_tokens += count("output_tokens")
    return usage

"""The `claude` CLI in print mode as a model backend.

One call is one ``claude -p`` process with no tools, no hooks, no saved session, no
CLAUDE.md and a short system prompt, run in an empty scratch directory. The prompt goes
on stdin; stdout is the JSON envelope of ``--output-format json``.

On a CLI of `WARM_SINCE` or newer the same process speaks stream-json instead: the prompt
is one user message and the envelope is the last (``result``) line. The request it sends
is the same (checked against the loopback's log), and such a process can be started
before its prompt is known (`prewarm`, `rose.model._warm`), which takes most of the CLI's
start-up off the caller's wait.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from typing import Any

from rose.disk.jsonl import objects as json_lines
from rose.errors import BackendFailed, BackendTimeout, RoseError
from rose.model import _proc, _warm
from rose.model._schema import check_answer, extract_object, parse_answer
from rose.model.base import BackendAnswer, Usage
from rose.processes.kept import off as switched_off

SYSTEM_PROMPT = (
    "You answer one question for ROSE, a memory for coding agents. "
    "Reply with exactly one JSON object that fits the requested schema. "
    "Do not use tools and do not add commentary."
)
NO_HOOKS = json.dumps({"disableAllHooks": True}, separators=(",", ":"))
# No CLAUDE.md either: the CLI would put the user's ~/.claude/CLAUDE.md (and any found above
# the scratch directory) into every question, as instructions that override its defaults
# (checked against Claude Code 2.1.332 and the loopback's log: the variable leaves the
# prompt alone in the user message, the rest of the request unchanged).
NO_MEMORY_FILES = {"CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1"}

# `--json-schema` (answer in `structured_output`) is documented for Claude Code 2.1 and
# seen in the field late in 2.0.x, but no changelog entry pins the release that added it.
# So: 2.1.0 and newer get the flag; anything older, or a version we cannot read, gets the
# schema written into the prompt, which every version honours. Even with the flag we fall
# back to the `result` text when `structured_output` is missing (a known CLI bug).
NATIVE_SCHEMA_SINCE = (2, 1, 0)
_VERSION_PROBE_S = 15.0

# Stream-json in and out, checked against Claude Code 2.1.332 (older CLIs keep the plain
# call). Measured there (2 cores, load 1-2, loopback model): a call's spawn-to-exit is
# ~0.41 s either way; written to a process started 1-1.5 s before, 0.13-0.21 s.
# `--verbose` is required by stream-json output, and it would turn on thinking-display
# updates (`thinking.display: "updates"` and one more beta header in the request):
# `--thinking-display omitted` with CLAUDE_CODE_THINKING_DISPLAY_UPDATES=0 keeps the
# request what the plain call sends.
WARM_SINCE = (2, 1, 332)
_STREAM_FLAGS = ["--input-format", "stream-json", "--verbose", "--thinking-display", "omitted"]
STREAM_ENV = {"CLAUDE_CODE_THINKING_DISPLAY_UPDATES": "0", **NO_MEMORY_FILES}
SCRATCH = "rose-claude-"


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
        streaming = version is not None and version >= WARM_SINCE
        argv = self._argv(path, schema if native else None, streaming=streaming)
        stdin = prompt if native else prompt + schema_contract(schema)
        try:
            if streaming:
                result = self._streamed(argv, stdin, remaining)
            else:
                with tempfile.TemporaryDirectory(prefix=SCRATCH) as scratch:
                    result = _proc.run(
                        self.name, argv, stdin=stdin, timeout_s=remaining, cwd=scratch,
                        env=NO_MEMORY_FILES,
                    )  # fmt: skip
        except BackendTimeout:
            raise BackendTimeout(self.name, timeout_s) from None
        envelope = _envelope(result.stdout, streamed=streaming)
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

    def prewarm(self, schema: dict[str, Any], n: int = 1) -> int:
        """Start CLIs for questions with `schema` still to come, until `n` wait (at most
        `_warm.MAX_SPARES`); how many were started. Never raises: where no CLI can be
        started (none installed, too old for stream-json, spawning refused) it starts
        none, and the call itself reports why."""
        try:
            if switched_off("spares"):
                return 0
            _proc.ensure_spawn_allowed(self.name)
            argv = self.stream_argv(schema)
            if argv is None:
                return 0
            return _warm.fill(tuple(argv), n, SCRATCH, self._spawner(argv))
        except (RoseError, OSError):
            return 0

    def stream_argv(self, schema: dict[str, Any]) -> list[str] | None:
        """The argv of a stream-json call with `schema` (None: the installed CLI is too old
        for one, or its version cannot be read); raises BackendUnavailable without a CLI."""
        path = _proc.resolve_binary(self.name, self.binary)
        version = claude_version(path)
        if version is None or version < WARM_SINCE:
            return None
        return self._argv(path, schema, streaming=True)

    def _streamed(self, argv: list[str], prompt: str, timeout_s: float) -> _proc.ProcResult:
        """One question through a CLI in stream-json: a spare started for this argv if one
        waits, else a new one; the clock starts as the prompt is written."""
        message = {"type": "user", "message": {"role": "user", "content": prompt}}
        line = json.dumps(message) + "\n"
        spare = _warm.take(tuple(argv)) or _warm.start(SCRATCH, self._spawner(argv))
        try:
            return _proc.finish_at(
                self.name, spare.proc, line, timeout_s,
                started=time.monotonic(), last=is_result,
            )  # fmt: skip
        finally:
            spare.close()

    def _spawner(self, argv: list[str]) -> _warm.Spawner:
        def spawn(scratch: str) -> subprocess.Popen[str]:
            return _proc.spawn(self.name, argv, cwd=scratch, env=STREAM_ENV)

        return spawn

    def _argv(
        self, path: str, schema: dict[str, Any] | None, *, streaming: bool = False
    ) -> list[str]:
        argv = [
            path,
            "-p",
            "--output-format",
            "stream-json" if streaming else "json",
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
        if streaming:
            argv += _STREAM_FLAGS
        if schema is not None:
            argv += ["--json-schema", json.dumps(_for_cli(schema), separators=(",", ":"))]
        if self.model:
            argv += ["--model", self.model]
        return argv


def _for_cli(schema: dict[str, Any]) -> dict[str, Any]:
    # Newer CLIs reject a `$schema` dialect they do not register; the shape is what matters.
    return {key: value for key, value in schema.items() if key != "$schema"}


def _envelope(stdout: str, *, streamed: bool = False) -> dict[str, Any]:
    """The result envelope on stdout; tolerant of log lines printed before it. Streamed,
    it is the last line whose type is ``result``."""
    envelope = _result_line(stdout) if streamed else extract_object(stdout)
    if envelope is None or not ("result" in envelope or "structured_output" in envelope):
        raise BackendFailed(
            "claude",
            "stdout was not the JSON envelope of `--output-format json` "
            f"(is this Claude Code?): {stdout.strip()[:200]!r}",
        )
    return envelope


def is_result(line: str) -> bool:
    """Whether a stream-json line is the result: the last the answer needs."""
    if '"result"' not in line:
        return False
    try:
        return json.loads(line).get("type") == "result"
    except (ValueError, AttributeError):
        return False


def _result_line(stdout: str) -> dict[str, Any] | None:
    return next(
        (e for e in reversed(json_lines(stdout.splitlines())) if e.get("type") == "result"), None
    )


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

"""A rig for end-to-end tests against the real Codex CLI, offline.

The shared rig (tests/_e2e_rig.py: a temporary HOME and project, the loopback model server,
`rose` from this checkout) with Codex pointed at the server through a custom provider in
the temporary ~/.codex/config.toml (`model_provider = "mock"`, `wire_api = "responses"`):
`codex exec` posts `/v1/responses` to 127.0.0.1 only, and so do the `codex exec
--output-schema` judge calls of ROSE's codex backend, which the detached jobs make. The
real ~/.codex and ~/.rose are never read.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from tests._e2e_rig import LoopbackRig, read_jsonl

INSTALL = "npm install --prefix /tmp/codex171 @openai/codex@0.171.0"
MODEL = "gpt-5.2-codex"  # a name only: the loopback answers whatever is asked


def codex_binary(explicit: str | None) -> str:
    """The CLI that $ROSE_E2E_CODEX names, or skip saying how to run the test.

    Only a CLI named explicitly is tested: the README's suite stays fast and skips these
    tests, and CI's end-to-end step runs them against the version it installs."""
    if explicit and os.path.isfile(explicit) and os.access(explicit, os.X_OK):
        return explicit
    if explicit:
        pytest.skip(f"no Codex binary at {explicit} ($ROSE_E2E_CODEX; `{INSTALL}`)")
    pytest.skip(
        f"runs with ROSE_E2E_CODEX=<path to codex> (`{INSTALL}`, then "
        "ROSE_E2E_CODEX=/tmp/codex171/node_modules/.bin/codex; see e2e/README.md)"
    )


def provider_config(port: int) -> str:
    """The config.toml that sends Codex's model requests to the loopback on `port`."""
    return (
        f'model = "{MODEL}"\nmodel_provider = "mock"\n\n'
        f'[model_providers.mock]\nname = "mock"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        'wire_api = "responses"\n'
    )


class CodexRig(LoopbackRig):
    """One temporary HOME (its ~/.codex/config.toml pointing at the loopback), one project,
    one loopback server; `codex exec` runs in it."""

    def __init__(self, root: Path, codex: str, *, seed: int = 0, size: str = "small"):
        super().__init__(root, codex, seed=seed, size=size)
        self.codex = codex
        self.config = self.home / ".codex" / "config.toml"
        self.hooks = self.home / ".codex" / "hooks.json"
        self.config.parent.mkdir(parents=True, exist_ok=True)
        self.env.update({"NO_COLOR": "1", "RUST_LOG": "error"})

    def session(self, prompt: str, *, resume: str | None = None) -> dict[str, Any]:
        """One `codex exec` (or `codex exec resume <id>`) run: its session id, last message,
        the requests it made (`requests`), its rollout, and when each hook line reached
        stderr (`hooks`: (seconds since start, line), stamped as it arrived)."""
        before = len(read_jsonl(self.log))
        # not --json: with it, Codex no longer announces its hooks on stderr
        argv = [self.codex, "exec", *(("resume",) if resume else ()), "--skip-git-repo-check",
                *((resume,) if resume else ()), prompt]  # fmt: skip
        proc = subprocess.Popen(
            argv, cwd=self.project, env=self.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        start = time.monotonic()
        stamped: list[tuple[float, str]] = []
        lines: list[str] = []

        def pump(pipe: IO[str], into: list, stamp: bool) -> None:
            for line in pipe:
                into.append((time.monotonic() - start, line.rstrip("\n")) if stamp else line)

        assert proc.stdout is not None and proc.stderr is not None
        readers = [
            threading.Thread(target=pump, args=(proc.stdout, lines, False), daemon=True),
            threading.Thread(target=pump, args=(proc.stderr, stamped, True), daemon=True),
        ]
        for reader in readers:
            reader.start()
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        finally:
            for reader in readers:
                reader.join(10)
            proc.stdout.close()
            proc.stderr.close()
        out = "".join(lines)
        err = "\n".join(line for _, line in stamped)
        assert proc.returncode == 0, f"codex exec failed ({proc.returncode}): {err[-800:]}"
        said = [
            line.split(":", 1)[1].strip() for _, line in stamped if line.startswith("session id:")
        ]
        sid = said[0] if said else ""
        return {
            "session_id": sid or resume or "",
            "result": out.strip(),  # the last message: all `codex exec` prints on stdout
            "stderr": err,
            "hooks": [(t, line) for t, line in stamped if line.startswith("hook: ")],
            "requests": read_jsonl(self.log)[before:],
            "rollout": self.rollout(sid or resume or ""),
        }

    def rollout(self, session: str) -> list[dict[str, Any]]:
        found = sorted((self.home / ".codex" / "sessions").glob(f"*/*/*/rollout-*-{session}.jsonl"))
        return read_jsonl(found[0]) if session and found else []


def hook_ms(result: dict[str, Any], event: str) -> float | None:
    """Milliseconds from Codex announcing `event`'s hook on stderr to its `Completed` line:
    the hook's wall time as the host saw it, process start included (stamped as the lines
    arrived, so within a few milliseconds)."""
    began = next((t for t, line in result["hooks"] if line == f"hook: {event}"), None)
    ended = next((t for t, line in result["hooks"] if line == f"hook: {event} Completed"), None)
    if began is None or ended is None:
        return None
    return round((ended - began) * 1000, 1)


def developer_texts(post: dict[str, Any]) -> list[str]:
    """The text of each developer message in a Responses request body, in order."""
    out = []
    for item in post.get("input") or []:
        if isinstance(item, dict) and item.get("role") == "developer":
            parts = item.get("content") or []
            out.append("\n".join(str(p.get("text") or "") for p in parts if isinstance(p, dict)))
    return out


def prompt_recorded_ms(rollout: list[dict[str, Any]]) -> float | None:
    """Milliseconds, by Codex's own clock in its rollout, from the last turn's settings being
    applied to its prompt being recorded: the start hooks (SessionStart, UserPromptSubmit)
    run in between, and Codex records the prompt with what they answered."""
    began, gap = None, None
    for rec in rollout:
        payload = rec.get("payload") or {}
        if rec.get("type") == "event_msg" and payload.get("type") == "thread_settings_applied":
            began = _stamp(rec)
        elif (
            began is not None
            and rec.get("type") == "response_item"
            and payload.get("type") == "message"
            and payload.get("role") == "user"
        ):
            gap, began = round((_stamp(rec) - began) * 1000, 1), None
    return gap


def _stamp(rec: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(str(rec["timestamp"]).replace("Z", "+00:00")).timestamp()

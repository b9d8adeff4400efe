"""The real host CLIs against the loopback world: the server as a process of its own, the
environment that points Claude Code at it, waiting for ROSE's detached jobs, and what a
Claude Code transcript says of the prompt hook's timing.

The end-to-end tests and `benchmarks/host_latency.py` run `claude -p` this way: every
request the CLI makes, and every judge call ROSE's backend makes through it, reaches
127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every whole JSON line of `path` (none when it is missing; a line being written is
    skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


class Server:
    """`python -m rose.sim.hosts.loopback` started as a child process, which stops by itself once
    this process is gone or it has been idle `idle_s` seconds."""

    def __init__(
        self,
        log: Path,
        out: Path,
        env: dict[str, str],
        *,
        seed: int = 0,
        size: str = "small",
        idle_s: float = 300,
        wait_s: float = 30,
        pace: tuple[float, float] = (0.0, 0.0),
    ):
        self._out = out.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rose.sim.hosts.loopback", "--log", str(log),
             "--seed", str(seed),
             "--size", size, "--idle", str(idle_s), "--parent", str(os.getpid()),
             "--first-token", str(pace[0]), "--tokens-per-s", str(pace[1])],
            stdout=self._out, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        deadline = time.monotonic() + wait_s
        while "PORT" not in out.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"the loopback server did not start: {out.read_text()[-500:]}")
            time.sleep(0.05)
        self.port = int(out.read_text().split()[1])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self._out.close()


def claude_env(port: int) -> dict[str, str]:
    """What points `claude` at the loopback on `port`, with its background traffic off."""
    return {
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "sk-ant-fake-e2e-loopback",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }


def settle(project: Path, timeout: float = 90, *, ended: str = "") -> None:
    """Wait until the store's detached jobs are done (none queued, deferred or running);
    with `ended`, first until that session's session-end job is on the ledger (its hook
    may submit it as the CLI exits). Raises TimeoutError naming what it waited for when
    that does not happen within `timeout` seconds."""
    jobs = project / ".rose" / "jobs"
    deadline = time.monotonic() + timeout
    while True:
        records = []
        for path in jobs.glob("*.json"):
            try:
                records.append(json.loads(path.read_text()))
            except (OSError, ValueError):
                records.append({"state": "being written"})
        states = [r.get("state") for r in records]
        seen = not ended or any(
            r.get("kind") == "session-end" and str(r.get("key", "")).startswith(f"{ended}:")
            for r in records
        )
        if seen and not any(
            s in ("queued", "deferred", "running", "being written") for s in states
        ):
            return
        if time.monotonic() > deadline:
            what = states if seen else f"no session-end job for {ended} yet"
            raise TimeoutError(f"ROSE's jobs did not finish in {timeout:g} s: {what}")
        time.sleep(0.2)


def attachments(transcript: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The attachments of one kind in a Claude Code transcript."""
    return [
        r["attachment"]
        for r in transcript
        if r.get("type") == "attachment" and (r.get("attachment") or {}).get("type") == kind
    ]


def stamp(record: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(record["timestamp"]).replace("Z", "+00:00")).timestamp()


def _first_prompt(transcript: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((r for r in transcript if r.get("type") == "user" and "timestamp" in r), None)


def prompt_hook_ms(transcript: list[dict[str, Any]]) -> float | None:
    """Milliseconds from the prompt's record to the attachment the CLI writes with the
    prompt hook's answer (its status line), by the CLI's own clock: the hook's wall time
    as the host saw it, process start included."""
    user = _first_prompt(transcript)
    answer = next(
        (
            r
            for r in transcript
            if r.get("type") == "attachment"
            and (r.get("attachment") or {}).get("type") == "hook_system_message"
            and (r.get("attachment") or {}).get("hookEvent") == "UserPromptSubmit"
        ),
        None,
    )
    if user is None or answer is None:
        return None
    return round((stamp(answer) - stamp(user)) * 1000, 1)


def prompt_to_reply_ms(transcript: list[dict[str, Any]]) -> float | None:
    """Milliseconds from the prompt's record to the model's first reply, by the CLI's own
    clock: the prompt hooks run in between (the loopback answers in about a millisecond)."""
    user = _first_prompt(transcript)
    reply = next((r for r in transcript if r.get("type") == "assistant" and "timestamp" in r), None)
    if user is None or reply is None:
        return None
    return round((stamp(reply) - stamp(user)) * 1000, 1)

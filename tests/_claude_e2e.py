"""A rig for end-to-end tests against the real Claude Code CLI, offline.

It starts the loopback model server (`rose.sim.loopback`, playing the simulated world) as
a process of its own, which stops once the test's process is gone, and runs `claude -p`
and `rose` in a temporary HOME and project with an environment built from scratch: the
CLI talks to 127.0.0.1 only and the real ~/.claude and ~/.rose are never read. Hooks run
ROSE from this checkout (`sys.executable -m rose`, PYTHONPATH passed on), and so do the
detached jobs they start, whose `claude -p` judge calls come back to the same server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = ("/tmp/cc332/node_modules/.bin/claude", "/tmp/cc/node_modules/.bin/claude")
PINNED = "2.1.332"
INSTALL = f"npm install --prefix /tmp/cc332 @anthropic-ai/claude-code@{PINNED}"


def claude_binary(explicit: str | None) -> str:
    """The CLI to test ($ROSE_E2E_CLAUDE, else a local install), or skip saying how to get one."""
    for path in (explicit,) if explicit else CANDIDATES:  # a path given is the only one tried
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    where = explicit or " or ".join(CANDIDATES)
    pytest.skip(f"no Claude Code CLI at {where} (set ROSE_E2E_CLAUDE, or `{INSTALL}`)")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line being written
    return out


class Rig:
    """One temporary HOME, one project, one loopback server; `claude -p` runs in it."""

    def __init__(self, root: Path, claude: str, *, seed: int = 0, size: str = "small"):
        self.claude = claude
        self.home, self.project, self.log = root / "home", root / "project", root / "requests.jsonl"
        for folder in (self.home / "tmp", self.project):
            folder.mkdir(parents=True, exist_ok=True)
        out = root / "loopback.out"
        self._out = out.open("w")
        self.server = subprocess.Popen(
            [sys.executable, "-m", "rose.sim.loopback", "--log", str(self.log), "--seed",
             str(seed), "--size", size, "--idle", "300", "--parent", str(os.getpid())],
            stdout=self._out, stderr=subprocess.STDOUT, env=self._base_env(),
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while "PORT" not in out.read_text():
            if self.server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the loopback server did not start: {out.read_text()[-500:]}")
            time.sleep(0.05)
        self.port = int(out.read_text().split()[1])
        # the CLI's folder first on PATH: ROSE's claude backend runs `claude` from there
        base = self._base_env()
        base["PATH"] = os.pathsep.join([str(Path(claude).parent), base["PATH"]])
        self.env = {
            **base,
            "HOME": str(self.home),
            "TMPDIR": str(self.home / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}",
            "ANTHROPIC_API_KEY": "sk-ant-fake-e2e-loopback",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "NO_PROXY": "127.0.0.1,localhost",
        }

    @staticmethod
    def _base_env() -> dict[str, str]:
        bin_dirs = [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
        env = {"PATH": os.pathsep.join(dict.fromkeys(bin_dirs)), "LANG": "C.UTF-8"}
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        return env

    def close(self) -> None:
        if self.server.poll() is None:
            self.server.terminate()
            self.server.wait(10)
        self._out.close()

    # -- running things ----------------------------------------------------------------------

    def rose(self, *args: str) -> subprocess.CompletedProcess[str]:
        cp = subprocess.run(
            [sys.executable, "-m", "rose", *args], cwd=self.project, env=self.env,
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert cp.returncode == 0, f"rose {' '.join(args)}: {cp.stderr or cp.stdout}"
        return cp

    def session(self, prompt: str, *extra: str) -> dict[str, Any]:
        """One `claude -p` run (Bash allowed, as a user who lets it run checks would); its
        result envelope, plus the requests it made (`requests`) and its transcript."""
        before = len(read_jsonl(self.log))
        cp = subprocess.run(
            [self.claude, "-p", prompt, "--output-format", "json", "--allowedTools", "Bash",
             *extra],
            cwd=self.project, env=self.env, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert cp.returncode == 0, f"claude -p failed ({cp.returncode}): {cp.stderr[-800:]}"
        result = json.loads(cp.stdout.strip().splitlines()[-1])
        result["requests"] = read_jsonl(self.log)[before:]
        result["transcript"] = self.transcript(str(result.get("session_id") or ""))
        return result

    def transcript(self, session: str) -> list[dict[str, Any]]:
        found = list((self.home / ".claude" / "projects").glob(f"*/{session}.jsonl"))
        return read_jsonl(found[0]) if found else []

    def settle(self, timeout: float = 90) -> None:
        """Wait until ROSE's detached jobs are done (none queued or running)."""
        jobs = self.project / ".rose" / "jobs"
        deadline = time.monotonic() + timeout
        time.sleep(0.3)  # a SessionEnd hook's job is submitted as the CLI exits
        while True:
            states = []
            for path in jobs.glob("*.json"):
                try:
                    states.append(json.loads(path.read_text()).get("state"))
                except (OSError, ValueError):
                    states.append("being written")
            if not any(s in ("queued", "running", "being written") for s in states):
                return
            assert time.monotonic() < deadline, f"ROSE's jobs did not finish: {states}"
            time.sleep(0.2)

    # -- reading what happened ---------------------------------------------------------------

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        found = read_jsonl(self.project / ".rose" / "events.jsonl")
        return [e for e in found if kind is None or e.get("kind") == kind]

    def nodes(self) -> list[dict[str, Any]]:
        """Every lesson file's front matter (id, level, status...) and body."""
        out = []
        for path in sorted((self.project / ".rose" / "nodes").glob("*/*.md")):
            _, head, body = path.read_text(encoding="utf-8").split("---\n", 2)
            fields = dict(
                line.split(": ", 1) for line in head.splitlines() if ": " in line and line[0] != " "
            )
            out.append({**fields, "level": int(fields.get("level", 0)), "body": body.strip()})
        return out


def played(requests: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    """What the loopback played for these requests, in one role ("agent", "judge")."""
    return [r["played"] for r in requests if (r.get("played") or {}).get("role") == role]


def agent_posts(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request bodies the loopback answered as the agent."""
    return [r["body"] for r in requests if (r.get("played") or {}).get("role") == "agent"]


def attachments(transcript: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        r["attachment"]
        for r in transcript
        if r.get("type") == "attachment" and (r.get("attachment") or {}).get("type") == kind
    ]


def stamp(record: dict[str, Any]) -> float:
    from datetime import datetime

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

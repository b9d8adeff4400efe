"""A rig for end-to-end tests against the real Claude Code CLI, offline.

The shared rig (tests/_e2e_rig.py: a temporary HOME and project, the loopback model server,
`rose` from this checkout) with `claude -p` pointed at the server: the CLI talks to
127.0.0.1 only and the real ~/.claude and ~/.rose are never read. Hooks run ROSE from this
checkout, and so do the detached jobs they start, whose `claude -p` judge calls come back to
the same server.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rose.sim.hosts.clis import (
    attachments,
    claude_env,
    prompt_hook_ms,
    prompt_to_reply_ms,
    read_jsonl,
    stamp,
)
from tests._e2e_rig import LoopbackRig, agent_posts, body_text, played

__all__ = [
    "Rig",
    "agent_posts",
    "attachments",
    "body_text",
    "claude_binary",
    "played",
    "prompt_hook_ms",
    "prompt_to_reply_ms",
    "read_jsonl",
    "stamp",
]

PINNED = "2.1.332"
INSTALL = f"npm install --prefix /tmp/cc332 @anthropic-ai/claude-code@{PINNED}"


def claude_binary(explicit: str | None) -> str:
    """The CLI that $ROSE_E2E_CLAUDE names, or skip saying how to run the test.

    Only a CLI named explicitly is tested: the README's suite stays fast and skips these
    tests, and CI's end-to-end step runs them against the version it installs."""
    if explicit and os.path.isfile(explicit) and os.access(explicit, os.X_OK):
        return explicit
    if explicit:
        pytest.skip(f"no Claude Code CLI at {explicit} ($ROSE_E2E_CLAUDE; `{INSTALL}`)")
    pytest.skip(
        f"runs with ROSE_E2E_CLAUDE=<path to claude> (`{INSTALL}`, then "
        "ROSE_E2E_CLAUDE=/tmp/cc332/node_modules/.bin/claude; see e2e/README.md)"
    )


class Rig(LoopbackRig):
    """One temporary HOME, one project, one loopback server; `claude -p` runs in it."""

    def __init__(self, root: Path, claude: str, *, seed: int = 0, size: str = "small"):
        super().__init__(root, claude, seed=seed, size=size)
        self.claude = claude
        self.env.update(claude_env(self.port))

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
        self.ended = str(result.get("session_id") or "")  # its SessionEnd hook queues a job
        return result

    def transcript(self, session: str) -> list[dict[str, Any]]:
        found = list((self.home / ".claude" / "projects").glob(f"*/{session}.jsonl"))
        return read_jsonl(found[0]) if found else []

"""What the end-to-end rigs for the real CLIs share (tests/_claude_e2e.py, tests/_codex_e2e.py).

A rig is one temporary HOME, one project and one loopback model server
(`rose.sim.hosts.loopback`, playing the simulated world) started as a process of its own, which
stops once the test's process is gone. `rose` runs from this checkout (`sys.executable -m
rose`, PYTHONPATH passed on) in an environment built from scratch, so the host's hooks,
ROSE's detached jobs and the judge calls they make all reach 127.0.0.1 only, and the real
~/.claude, ~/.codex and ~/.rose are never read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rose.sim.hosts.clis import Server, read_jsonl, settle
from rose.sim.hosts.loopback import REALISTIC

#: The judge's pace in the end-to-end tests: a real model's, never a millisecond's
#: (`ROSE_E2E_PACE=first_token,tokens_per_s` sets another; `0,0` answers at once).
PACE: tuple[float, float] = tuple(  # type: ignore[assignment]
    float(x) for x in os.environ.get("ROSE_E2E_PACE", ",".join(map(str, REALISTIC))).split(",")
)
#: How long `settle` waits for a session's learning at that pace: a session end makes a
#: dozen judge calls of a few seconds each, one after another.
SETTLE_S = 300.0

__all__ = ["LoopbackRig", "agent_posts", "body_text", "played", "read_jsonl", "unaided_task"]


class LoopbackRig:
    """The HOME, the project, the server and ROSE; a host's rig adds how to run a session.

    `cli` is the host's binary: its folder goes first on PATH, since ROSE's backend for that
    host runs it by name from there."""

    def __init__(
        self,
        root: Path,
        cli: str,
        *,
        seed: int = 0,
        size: str = "small",
        pace: tuple[float, float] = PACE,
    ):
        self.home, self.project, self.log = root / "home", root / "project", root / "requests.jsonl"
        for folder in (self.home / "tmp", self.project):
            folder.mkdir(parents=True, exist_ok=True)
        self.server = Server(
            self.log, root / "loopback.out", self._base_env(), seed=seed, size=size, pace=pace
        )
        self.ended = ""  # the session whose end's job `settle` waits to see first
        self.port = self.server.port
        base = self._base_env()
        base["PATH"] = os.pathsep.join([str(Path(cli).parent), base["PATH"]])
        self.env = {
            **base,
            "HOME": str(self.home),
            "TMPDIR": str(self.home / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
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
        self.server.close()

    def rose(self, *args: str) -> subprocess.CompletedProcess[str]:
        cp = subprocess.run(
            [sys.executable, "-m", "rose", *args], cwd=self.project, env=self.env,
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert cp.returncode == 0, f"rose {' '.join(args)}: {cp.stderr or cp.stdout}"
        return cp

    def settle(self, timeout: float = SETTLE_S) -> None:
        """Wait until ROSE's detached jobs are done (none waiting or running), after the last
        session's end (a host whose session end submits a job says which: `ended`)."""
        settle(self.project, timeout, ended=self.ended)
        self.ended = ""

    def requests(self) -> list[dict[str, Any]]:
        return read_jsonl(self.log)

    def since(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every request from the first of `requests` (a session's) on, the detached jobs'
        included; none when that session made none."""
        every = self.requests()
        first = requests[0] if requests else None
        at = next((i for i, r in enumerate(every) if r == first), len(every))
        return every[at:]

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

    def compressed(self) -> list[dict[str, Any]]:
        """The active lessons above level 0."""
        return [n for n in self.nodes() if n["level"] >= 1 and n.get("status") == "active"]


def unaided_task(world: Any) -> Any:
    """A task the agent cannot do unaided (it needs facts it does not know), with words no
    other task shares, so the loopback knows it from what the user typed."""
    from rose.sim.markers import strip

    words = [strip(t.prompt) for t in world.tasks]
    return next(
        t
        for t in world.tasks
        if words.count(strip(t.prompt)) == 1
        and 2 <= sum(not world.facts[f].known for f in t.needs) <= 3
    )


def played(requests: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    """What the loopback played for these requests, in one role ("agent", "judge")."""
    return [r["played"] for r in requests if (r.get("played") or {}).get("role") == role]


def agent_posts(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request bodies the loopback answered as the agent."""
    return [r["body"] for r in requests if (r.get("played") or {}).get("role") == "agent"]


def body_text(post: object) -> str:
    """Every string in a request body, one a line: what the model was shown, unescaped."""
    if isinstance(post, str):
        return post
    if isinstance(post, dict):
        return "\n".join(body_text(v) for v in post.values())
    if isinstance(post, list):
        return "\n".join(body_text(v) for v in post)
    return ""

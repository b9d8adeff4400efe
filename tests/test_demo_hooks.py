"""The demo's in-process loop is the loop a host runs: the same sessions through real `rose hook`
processes and the real detached SessionEnd job give the same blocks, calls and episodes.

Locks in: `rose.sim.hosts.drive.HookHost` drives the hook entry point in-process and runs the
Stop and SessionEnd hooks' jobs at once; if that ever diverged from what Claude Code gets
(a handler the in-process path skips, a payload field it invents, a job it does not run),
the demo's figures would describe a ROSE no user runs. The simulated world is chosen by the store's
own `model` setting, so the hook processes answer from the same world as the demo.
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

from rose.model.registry import simulated_model
from rose.sim import World
from rose.sim.hosts import scoreboard
from rose.sim.hosts.drive import HookHost, Tally, global_dir

pytestmark = [pytest.mark.graph, pytest.mark.heavy]

SEED = 2
# By the third session every hook and job kind has run on both sides: lessons minted into the
# global and the project store, one served, replies after failures, a selection rule
# proposed, counterfactual checks. A fourth session ran the same paths again.
SESSIONS = 3


class Subprocesses:
    """The host as Claude Code is: every hook a `python -m rose hook` process."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.root = folder / ".rose"
        self.env = {
            **os.environ,
            "ROSE_HOME": str(self.root),
            "ROSE_GLOBAL_HOME": str(global_dir(self.root)),
        }
        self.tally = Tally(self.root / "events.jsonl")
        self.tally.take()
        self.ended = 0

    def _hook(self, event: str, session: str, **extra: Any) -> dict | None:
        payload = {"session_id": session, "cwd": str(self.folder), **extra}
        proc = subprocess.run(
            [sys.executable, "-m", "rose", "hook", event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout) if proc.stdout.strip() else None

    def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
        if first:
            self._hook("session-start", session, hook_event_name="SessionStart", source="startup")
        out = self._hook(
            "user-prompt-submit", session, hook_event_name="UserPromptSubmit", prompt=text
        )
        block = ((out or {}).get("hookSpecificOutput") or {}).get("additionalContext", "")
        calls, spent = self.tally.take()
        return {"block": block, "calls": calls, "model_tokens": spent}

    def _write(self, session: str, transcript: str) -> dict[str, str]:
        path = self.folder / "transcripts" / f"{session}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_text(transcript)
        return {"transcript_path": str(path)}

    def stop(self, session: str, transcript: str = "") -> dict[str, Any]:
        where = self._write(session, transcript)
        self._hook("stop", session, hook_event_name="Stop", stop_hook_active=False, **where)
        deadline = time.monotonic() + 90
        while not self._quiet():  # the detached jobs it started, before the user replies
            assert time.monotonic() < deadline, "the Stop hook's jobs did not finish"
            time.sleep(0.1)
        calls, spent = self.tally.take()
        return {"calls": calls, "model_tokens": spent}

    def _quiet(self) -> bool:
        for path in (self.root / "jobs").glob("*.json"):
            try:
                if json.loads(path.read_text()).get("state") in ("queued", "running"):
                    return False
            except (OSError, ValueError):
                return False  # being written
        return True

    def end(self, session: str, transcript: str = "") -> dict[str, Any]:
        where = self._write(session, transcript)
        self._hook("stop", session, hook_event_name="Stop", stop_hook_active=False, **where)
        self._hook("session-end", session, hook_event_name="SessionEnd", reason="exit", **where)
        self.ended += 1
        deadline = time.monotonic() + 90
        # the detached job's work, all of it, and every job the Stop before it started (the
        # in-process loop runs them all at once; a prompt after one still running could
        # miss a judgement it cached: seen under heavy load)
        while self._ends() < self.ended or not self._quiet():
            assert time.monotonic() < deadline, "the SessionEnd job did not finish"
            time.sleep(0.1)
        calls, spent = self.tally.take()
        return {"calls": calls, "model_tokens": spent}

    def _ends(self) -> int:
        try:
            lines = (self.root / "events.jsonl").read_text().splitlines()
        except FileNotFoundError:
            return 0
        return sum(1 for line in lines if '"kind": "session-end"' in line)


def test_the_in_process_loop_matches_real_hook_processes(tmp_path: Path):
    world = World.generate(SEED)
    model = simulated_model(seed=SEED)
    with HookHost(tmp_path / "inproc", model=model) as host:
        inproc = scoreboard.run(world, host, sessions=SESSIONS, seed=SEED)
        figures = host.metrics()
    HookHost(tmp_path / "procs", model=model)  # made the same way
    procs = Subprocesses(tmp_path / "procs")
    real = scoreboard.run(world, procs, sessions=SESSIONS, seed=SEED)

    def seen(records: list[scoreboard.Record]) -> list[tuple]:
        return [(r.task, r.ok, r.tokens, r.frame, r.present, r.calls) for r in records]

    assert seen(inproc) == seen(real)
    assert any(r.tokens for r in real) and all(r.background_calls for r in real)
    units = sum(r.attempts for r in real)  # a reply to a failure is a unit of work too
    assert figures["episodes"] == units == len(list((procs.root / "episodes").glob("*.json")))
    assert figures["hook_errors"] == 0 and not procs.tally.errors
    assert figures["jobs_failed"] == 0
    assert figures["minted"] >= 1  # the sessions taught it something, and it kept it
    assert _titles(tmp_path / "inproc") == _titles(tmp_path / "procs")


def _titles(folder: Path) -> list[str]:
    """Every lesson's title in the store at `folder` and its global store."""
    found = [*folder.glob(".rose/nodes/*/*.md"), *folder.glob(".rose-global/nodes/*/*.md")]
    return sorted(p.read_text().split("title: ", 1)[1].splitlines()[0] for p in found)

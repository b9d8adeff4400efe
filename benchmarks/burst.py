"""Whether a burst of sessions ending at once is learnt from, every one: the queue defers and
coalesces, never drops.

    python benchmarks/burst.py [--sessions 25] [--queue-max 20] [--json]

One store reconciling against the simulated world. Each session is a real Claude Code
transcript (tests/fixtures/transcripts/claude-code-2.x-hand.jsonl under a session id of its
own) whose hooks fire as the host would: a prompt, a Stop, a SessionEnd; all the sessions'
hooks are fired as fast as processes start, then the script waits for the jobs to settle.
Reported: sessions ended, sessions learnt from (their session-end job done, its event
logged), jobs failed and dropped (a `dropped` job event: none since the queue defers), and
the wall time. The target: every session ended is learnt from.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rose.sim.hosts.clis import read_jsonl, settle  # noqa: E402

TRANSCRIPT = REPO / "tests" / "fixtures" / "transcripts" / "claude-code-2.x-hand.jsonl"


def _hook(event: str, payload: dict, env: dict[str, str]) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rose", "hook", event], stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, text=True,
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload))
    proc.stdin.close()
    return proc


def run(sessions: int, queue_max: int, root: Path) -> dict:
    project, home = root / "project", root / "home"
    project.mkdir(parents=True)
    home.mkdir()
    (project / ".git").mkdir()
    env = {**os.environ, "HOME": str(home), "ROSE_GLOBAL_HOME": str(home / ".rose"),
           "PYTHONPATH": str(REPO), "ROSE_KEEP_WARM": "0"}  # fmt: skip
    env.pop("ROSE_HOME", None)
    rose = [sys.executable, "-m", "rose"]
    subprocess.run([*rose, "init"], cwd=project, env=env, check=True, capture_output=True)
    for key, value in (("agent", "simulated"), ("jobs.queue_max", str(queue_max))):
        subprocess.run([*rose, "config", key, value], cwd=project, env=env, check=True,
                       capture_output=True)  # fmt: skip
    started = time.monotonic()
    procs = []
    for n in range(sessions):
        sid = f"burst-{n:03d}"
        path = root / f"{sid}.jsonl"
        path.write_text(TRANSCRIPT.read_text())
        base = {"session_id": sid, "transcript_path": str(path), "cwd": str(project)}
        for event, extra in (
            ("session-start", {"source": "startup"}),
            ("user-prompt-submit", {"prompt": "fix the failing build"}),
            ("stop", {"stop_hook_active": False}),
            ("session-end", {"reason": "exit"}),
        ):
            procs.append(_hook(event, {**base, **extra, "hook_event_name": event}, env))
            if event != "session-end":
                procs[-1].wait()  # a session's hooks come one after another
    codes = [p.wait() for p in procs]
    fired = time.monotonic() - started
    settle(project, timeout=1800)
    events = read_jsonl(project / ".rose" / "events.jsonl")
    ended = {e.get("session") for e in events if e.get("kind") == "session-end"}
    job_events = [e for e in events if e.get("kind") == "job"]
    records = [json.loads(p.read_text()) for p in (project / ".rose" / "jobs").glob("*.json")]
    return {
        "sessions": sessions,
        "queue_max": queue_max,
        "hooks_failed": sum(1 for c in codes if c),
        "learnt_from": len(ended),
        "failed_jobs": sum(1 for r in records if r.get("state") == "failed"),
        "dropped": sum(1 for e in job_events if e.get("state") == "dropped"),
        "hooks_s": round(fired, 1),
        "wall_s": round(time.monotonic() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=25)
    ap.add_argument("--queue-max", type=int, default=20, help="jobs.queue_max for the run")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rose-burst-") as tmp:
        out = run(args.sessions, args.queue_max, Path(tmp))
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(
            f"{out['sessions']} sessions ended in {out['hooks_s']} s of hooks "
            f"({out['hooks_failed']} hooks failed): learnt from {out['learnt_from']}, "
            f"{out['failed_jobs']} jobs failed, {out['dropped']} dropped; settled in "
            f"{out['wall_s']} s (jobs.queue_max {out['queue_max']})"
        )
    return 0 if out["learnt_from"] == out["sessions"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""Whether what the user types lands while many rose processes share one store.

    python benchmarks/contention.py [--writers 8] [--rounds 25] [--json]

One temporary project store, the simulated world as its model (`rose config agent
simulated`) and a budget that holds every lesson, so the recall view renders them all.
`--writers` processes' worth of threads each run `--rounds` rounds, one command after
another, as an agent at work does: `rose add` (a text of its own, reconciled), the prompt
hook (`python -m rose hook user-prompt-submit`), `rose used` (naming the lesson it added,
else one served) and the Stop hook; all of them against the one store at once, with its
graph database one process's at a time. Then again with `rose add --no-reconcile` and no
kept process (`ROSE_KEEP_WARM=0`: no graph server holds the database between
commands). After the commands, the store's detached jobs are waited for
(`rose.sim.hosts.clis.settle`).

Per run: each command's attempts and failures (a non-zero exit), how many `rose add`s said
"deferred" (stored without the database, finished by a job), the lessons lost (a typed text
in no lesson file, or not in the recall view file once the jobs settled) and the wall
time. The target is no failure and nothing lost. Figures, never a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

COMMANDS = ("add", "prompt", "used", "stop")
_ID = re.compile(r"\bn_[0-9a-f]{8,20}\b")


def _env(home: Path, keep_warm: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSE_")}
    env |= {"HOME": str(home), "ROSE_GLOBAL_HOME": str(home / ".rose")}
    if not keep_warm:
        env["ROSE_KEEP_WARM"] = "0"
    return env


def _run(argv: list[str], cwd: Path, env: dict, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rose", *argv],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.attempted = dict.fromkeys(COMMANDS, 0)
        self.failed = dict.fromkeys(COMMANDS, 0)
        self.deferred = 0
        self.errors: list[str] = []

    def count(self, command: str, proc: subprocess.CompletedProcess) -> None:
        with self.lock:
            self.attempted[command] += 1
            if proc.returncode != 0:
                self.failed[command] += 1
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
                self.errors.append(f"{command}: exit {proc.returncode}: {tail[0][:200]}")
            elif command == "add" and "deferred" in proc.stdout:
                self.deferred += 1


def _writer(w: int, rounds: int, project: Path, env: dict, reconcile: bool, t: Tally) -> list[str]:
    """One writer's rounds; the unique words each of its lessons carries."""
    typed = []
    session = f"bench-w{w}"
    hook = {"session_id": session, "cwd": str(project), "permission_mode": "default"}
    hook["transcript_path"] = str(project / f"{session}.jsonl")
    for r in range(rounds):
        mark = f"zq{w:02d}x{r:03d}"
        text = (
            f"Build step {mark}: the {mark} target needs the cache folder warmed before "
            f"linking, or the linker times out after {30 + r} seconds on writer {w}'s runner."
        )
        typed.append(mark)
        add = ["add", text, "--scope", "project", *([] if reconcile else ["--no-reconcile"])]
        proc = _run(add, project, env)
        t.count("add", proc)
        added = _ID.findall(proc.stdout)
        prompt = {**hook, "hook_event_name": "UserPromptSubmit", "prompt": f"Link the {mark}"}
        t.count("prompt", _run(["hook", "user-prompt-submit"], project, env, json.dumps(prompt)))
        if added:
            t.count("used", _run(["used", "-s", session, "--used", added[0]], project, env))
        stop = {**hook, "hook_event_name": "Stop", "stop_hook_active": False}
        t.count("stop", _run(["hook", "stop"], project, env, json.dumps(stop)))
    return typed


def run(writers: int, rounds: int, *, reconcile: bool) -> dict:
    from rose import config
    from rose.jobs import queue as jobs
    from rose.model.registry import simulated_model
    from rose.sim.hosts.clis import settle
    from rose.store.facade import Store

    with tempfile.TemporaryDirectory(prefix="rose-contention-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        project.mkdir()
        env = _env(home, keep_warm=reconcile)
        os.environ.update({"HOME": env["HOME"], "ROSE_GLOBAL_HOME": env["ROSE_GLOBAL_HOME"]})
        store = Store.init(project)
        cfg = store.primary.config
        for key, value in (
            ("agent", "simulated"),
            ("model", simulated_model(seed=7, size="small")),
            ("recall.max_pack_tokens", "400000"),  # the view renders every lesson
            ("recall.whole_tokens", "400000"),
            ("graph.keep_open_s", "20"),  # a kept graph server ends soon after the run
        ):
            config.set_override(cfg, key, value)
        t = Tally()
        start = time.monotonic()
        with ThreadPoolExecutor(writers) as pool:
            futures = [
                pool.submit(_writer, w, rounds, project, env, reconcile, t) for w in range(writers)
            ]
            typed = [m for f in futures for m in f.result()]
        commands_s = time.monotonic() - start
        try:
            settle(project, timeout=600)
        except TimeoutError:  # a job queued with no runner: run what waits here
            jobs.run_here(store.primary)
            settle(project, timeout=600)
        wall = time.monotonic() - start
        files = "\n".join(p.read_text() for p in (project / ".rose" / "nodes").rglob("*.md"))
        view = json.loads((project / ".rose" / "recall-view.json").read_text())
        shown = "\n".join(i["full"] for i in view.get("lessons") or [])
        ledger = jobs.jobs(store.primary, everything=True)
        failed_jobs = [r for r in ledger if r["state"] == "failed"]
        return {
            "writers": writers,
            "rounds": rounds,
            "reconcile": reconcile,
            "keep_warm": reconcile,
            "attempted": t.attempted,
            "failed": t.failed,
            "deferred_adds": t.deferred,
            "lost_files": sum(m not in files for m in typed),
            "lost_view": sum(m not in shown for m in typed),
            "failed_jobs": len(failed_jobs),
            "commands_s": round(commands_s, 1),
            "wall_s": round(wall, 1),
            "errors": t.errors[:10],
        }


def _line(r: dict) -> str:
    mode = "reconciled, kept warm" if r["reconcile"] else "--no-reconcile, ROSE_KEEP_WARM=0"
    counts = ", ".join(f"{c} {r['failed'][c]}/{r['attempted'][c]}" for c in COMMANDS)
    return (
        f"{r['writers']} writers x {r['rounds']} rounds ({mode}): failed {counts}; "
        f"{r['deferred_adds']} adds deferred; lost {r['lost_files']} (files), "
        f"{r['lost_view']} (recall view); {r['failed_jobs']} jobs failed; "
        f"commands {r['commands_s']} s, wall {r['wall_s']} s"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = ap.parse_args()
    results = [run(args.writers, args.rounds, reconcile=r) for r in (True, False)]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        print(_line(r))
        for e in r["errors"]:
            print(f"  {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

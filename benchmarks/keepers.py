"""What each process-keeping mechanism saves a user, at a real model's pace: each switched
off in turn against all of them on.

    python benchmarks/keepers.py [--claude PATH] [--runs 5] [--sizes 0,1000] [--pace 2,50]
                                 [--arms all,-graph,...] [--json] [--keep DIR]

Runs the real `claude -p` offline against the loopback server, as `host_latency.py` does,
on stores where the model decides the prompt (the world's lessons among `--sizes` lessons
about other subjects, the default budget). One arm is one HOME (so each has its own kept
process) and one copy of each size's store, with one environment:

- **all**: every mechanism on, as shipped.
- **-graph**: no graph server (`ROSE_KEEP_OFF=graph`; its inotify watch goes with it).
- **-watch**: the graph server without its watch of the store's folders (`watch`).
- **-spares**: no CLIs started ahead of their question within a process (`spares`).
- **none**: nothing kept or started ahead (`ROSE_KEEP_WARM=0`, `spares`).

Each round runs one task in every arm and size, in a rotating order, and waits for the
session-end job before the next. Per run: the CLI's wall time (the whole turn, spawn to
exit: what the user waits), the prompt hook's time by the CLI's clock, the time to the
model's first reply, and the session-end learning job's wall (ledger start to end). The
report gives medians and each arm's saving to switch back on: its median less all's, in
ms and as a share of all's turn wall (prompt path) or job wall (jobs).
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synth_world import generate  # noqa: E402
from host_latency import WARMUP, Host, _index, _say, host_args, prepared  # noqa: E402

from rose.sim import World
from rose.sim.hosts import clis as hosts  # noqa: E402
from rose.sim.markers import strip  # noqa: E402

SEED = 0
ARMS: dict[str, dict[str, str]] = {
    "all": {},
    "-graph": {"ROSE_KEEP_OFF": "graph"},
    "-watch": {"ROSE_KEEP_OFF": "watch"},
    "-spares": {"ROSE_KEEP_OFF": "spares"},
    "none": {"ROSE_KEEP_WARM": "0", "ROSE_KEEP_OFF": "spares"},
}
FIGURES = ("wall_ms", "hook_ms", "reply_ms", "job_ms")


def build_templates(host: Host, root: Path, world: World, sizes: list[int]) -> dict[int, Path]:
    """Each size's store, indexed and with its family gists written, once for every arm."""
    out: dict[int, Path] = {}
    for n in sizes:
        project = root / f"template-{n}"
        project.mkdir()
        generate(project / ".rose", n, world)
        settings = {"agent": "claude", "reflect.mode": "off"}
        settings["attribute.counterfactual_calls"] = "0"  # as host_latency.py runs it
        for k, v in settings.items():
            host.rose(project, "config", k, v)
        _index(host, project)
        out[n] = project
    return out


def arm_host(builder: Host, root: Path, extra: dict[str, str]) -> Host:
    """An arm's HOME and environment, asking the builder's loopback server: one server for
    every arm, so none sits idle past its idle exit while the other arms run."""
    host = copy.copy(builder)
    host.root, host.home = root, root / "home"
    (host.home / "tmp").mkdir(parents=True)
    host.env = {**builder.env, **extra, "HOME": str(host.home), "TMPDIR": str(host.home / "tmp")}
    host.env["XDG_CONFIG_HOME"] = str(host.home / ".config")
    host.env["XDG_CACHE_HOME"] = str(host.home / ".cache")
    return host


def arm_project(host: Host, template: Path, project: Path) -> None:
    """A copy of the template's store, reindexed in place and with ROSE installed."""
    project.mkdir()
    shutil.copytree(template / ".rose", project / ".rose")
    host.rose(project, "reindex")
    host.rose(project, "install", "--scope", "project")


def _epoch(stamp: object) -> float:
    """Seconds since the epoch for a ledger time; 0 when absent or unreadable."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except ValueError:
        return 0.0


def job_ms(project: Path, session: str) -> float | None:
    """The session-end job's wall, from its ledger record."""
    for path in (project / ".rose" / "jobs").glob("*.json"):
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if rec.get("kind") == "session-end" and str(rec.get("key", "")).startswith(f"{session}:"):
            start, end = _epoch(rec.get("started")), _epoch(rec.get("ended"))
            if start and end:
                return round((end - start) * 1000, 1)
    return None


def run(
    hosts_by_arm: dict[str, Host], projects: dict[tuple[str, int], Path], world: World, runs: int
) -> dict[tuple[str, int], list[dict[str, Any]]]:
    tasks = [strip(t.prompt) for t in world.tasks]
    tasks = [t for t in tasks if tasks.count(t) == 1]
    cells = list(projects)
    rows: dict[tuple[str, int], list[dict[str, Any]]] = {c: [] for c in cells}
    for r in range(WARMUP + runs):
        prompt = tasks[r % len(tasks)]
        order = cells[r % len(cells) :] + cells[: r % len(cells)]
        _say(f"round {r + 1}/{WARMUP + runs}" + (" (warm-up)" if r < WARMUP else ""))
        for cell in order:
            arm, _ = cell
            try:
                row = hosts_by_arm[arm].session(projects[cell], prompt)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                _say(f"{arm} at {cell[1]} lessons: {exc} (the run is left out)")
                hosts.settle(projects[cell], timeout=900)
                continue
            hosts.settle(projects[cell], timeout=900, ended=row["session"])
            row["job_ms"] = job_ms(projects[cell], row.pop("session"))
            if r >= WARMUP:
                rows[cell].append(row)
    return rows


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(vals), 1) if vals else None


def summarise(
    rows: dict[tuple[str, int], list[dict[str, Any]]], arms: list[str], sizes: list[int]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in sizes:
        base = {f: _median(rows[("all", n)], f) for f in FIGURES} if "all" in arms else {}
        for arm in arms:
            med = {f: _median(rows[(arm, n)], f) for f in FIGURES}
            saving: dict[str, Any] = {}
            for f in FIGURES:
                mine, ref = med[f], base.get(f)
                saving[f] = None if mine is None or ref is None else round(mine - ref, 1)
            wall, job = base.get("wall_ms"), base.get("job_ms")
            share = {
                "hook_pct_of_turn": _pct(saving["hook_ms"], wall),
                "turn_pct": _pct(saving["wall_ms"], wall),
                "job_pct": _pct(saving["job_ms"], job),
            }
            out.setdefault(str(n), {})[arm] = {
                "median": med, "saving": saving, "share": share, "runs": rows[(arm, n)],
            }  # fmt: skip
    return out


def _pct(part: float | None, whole: float | None) -> float | None:
    return None if part is None or not whole else round(100 * part / whole, 1)


def render(result: dict[str, Any], version: str, pace: tuple[float, float], runs: int) -> str:
    lines = [
        f"keepers · {version} · loopback judge at {pace[0]:g} s + {pace[1]:g} tokens/s · "
        f"medians of {runs} runs · saving = arm's median less all's (what switching it on saves)",
    ]
    for size, arms in result.items():
        lines += [
            "",
            f"{size} lessons",
            f"{'arm':<12} {'turn ms':>9} {'hook ms':>8} {'reply ms':>9} {'job ms':>9}"
            f" {'hook saves':>11} {'% turn':>7} {'turn saves':>11} {'% turn':>7}"
            f" {'job saves':>10} {'% job':>6}",
        ]
        for arm, r in arms.items():
            m, s, p = r["median"], r["saving"], r["share"]
            lines.append(
                f"{arm:<12} {_f(m['wall_ms']):>9} {_f(m['hook_ms']):>8} {_f(m['reply_ms']):>9}"
                f" {_f(m['job_ms']):>9} {_f(s['hook_ms']):>11} {_f(p['hook_pct_of_turn']):>7}"
                f" {_f(s['wall_ms']):>11} {_f(p['turn_pct']):>7} {_f(s['job_ms']):>10}"
                f" {_f(p['job_pct']):>6}"
            )
    lines += [
        "",
        "turn: the CLI's wall, spawn to exit; hook: the prompt's record to the hook's status "
        "line; reply: to the model's first reply (CLI's clock); job: the session-end job, "
        "ledger start to end",
    ]
    return "\n".join(lines)


def _f(v: float | None) -> str:
    return "—" if v is None else f"{v:,.0f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    host_args(ap, runs="timed runs per arm and size", sizes="store sizes")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"of {', '.join(ARMS)}")
    args = ap.parse_args(argv)
    first, per_s = (float(x) for x in args.pace.split(","))
    arms = [a for a in args.arms.split(",") if a]
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        _say(f"unknown arm(s) {', '.join(unknown)}: choose from {', '.join(ARMS)}")
        return 2
    ready = prepared(args, "rose-keepers-")
    if ready is None:
        return 2
    claude, sizes, version, root = ready
    world = World.generate(SEED)
    by_arm: dict[str, Host] = {}
    try:
        builder = Host(root / "build", claude, (first, per_s))
        by_arm["(build)"] = builder
        _say(f"building stores of {args.sizes} lessons under {root}")
        templates = build_templates(builder, root / "build", world, sizes)
        projects: dict[tuple[str, int], Path] = {}
        for arm in arms:
            host = arm_host(builder, root / arm, ARMS[arm])
            by_arm[arm] = host
            for n in sizes:
                projects[(arm, n)] = root / arm / f"project-{n}"
                arm_project(host, templates[n], projects[(arm, n)])
        rows = run({a: by_arm[a] for a in arms}, projects, world, args.runs)
    finally:
        for host in by_arm.values():
            host.stop_kept()
        if "(build)" in by_arm:
            by_arm["(build)"].server.close()
    result = summarise(rows, arms, sizes)
    if args.json:
        pace = {"first_token_s": first, "tokens_per_s": per_s}
        print(json.dumps({"claude": version, "pace": pace, "runs": args.runs,
                          "sizes": result}, indent=1))  # fmt: skip
    else:
        print(render(result, version, (first, per_s), args.runs))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

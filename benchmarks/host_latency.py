"""What ROSE's prompt hook adds to the real Claude Code CLI's round trip, the model-decided
path included.

    python benchmarks/host_latency.py [--claude PATH] [--runs 5] [--sizes 0,1000]
                                      [--pace 2,50] [--json]

Runs `claude -p` offline: every request the CLI makes, and every judge call ROSE's `claude`
backend makes through it (`claude -p --json-schema`), goes to the loopback server
(`rose.sim.hosts.loopback`), which plays the simulated world's agent and model. The judge answers
at a real model's pace (`--pace FIRST_TOKEN_S,TOKENS_PER_S`, default 2 s then 50 tokens a
second: `rose.sim.hosts.loopback.REALISTIC`; `--pace 0,0` answers at once). One temporary HOME;
one project per configuration:

- **bare**: ROSE not installed; the CLI's own round trip.
- **view**: ROSE installed (`rose install --scope project`), the world's lessons in a budget
  that holds them whole: the hook answers from the recall view, no model call.
- **model N**: ROSE installed, a store of about N lessons over the world (`_synth_world.py`:
  the world's lessons among families about other subjects; 0 is the world's lessons alone)
  at the default budget, which does not hold them, so the model decides: recall's
  relevance calls each run the `claude` CLI once more, back to the loopback: past one
  question, the apexes in up to `recall.apex_chunks` parallel questions (else the family
  level, then the opened families' apexes), then the second pass. The family gists are
  written first, as a session's end would.

Each round runs one task of the world in every configuration, in a rotating order, and
waits for ROSE's detached jobs (the session-end job) before the next. Per run: the CLI's
wall time (spawn to exit), and by the CLI's own clock the prompt hook's time (the prompt's
record to the hook's status line) and the time to the model's first reply; the relevance
calls recall made (ROSE's judge events), and how many of them answered within their
deadline (`calls.prompt_s`) rather than timing out. The report gives medians, what each
configuration adds to bare's time to the first reply, and the share of relevance
judgements that arrived in time; the target is that the model-decided path adds at most
about one second beyond the model's own answer time (a miss is reported, never an error).

The CLI is `--claude`, else $ROSE_E2E_CLAUDE, else a local install under /tmp/cc332, else
`claude` on PATH. Without one, the script says how to install it and exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synth_world import generate  # noqa: E402

from rose.sim import World
from rose.sim.hosts import clis as hosts  # noqa: E402
from rose.sim.hosts.loopback import REALISTIC  # noqa: E402
from rose.sim.markers import strip  # noqa: E402

TARGET_ADDED_MS = 1000.0  # the model-decided path, over the bare CLI's time to first reply
LOCAL = Path("/tmp/cc332/node_modules/.bin/claude")
INSTALL = "npm install --prefix /tmp/cc332 @anthropic-ai/claude-code@2.1.332"
SEED = 0
VIEW_BUDGET = 100_000_000  # every lesson fits: the recall view answers
WARMUP = 1
RECALL_CALLS = ("relevance", "family_gist")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def find_claude(given: str | None) -> str | None:
    """The CLI to run: a path given is the only one tried."""
    tried = [given] if given else [os.environ.get("ROSE_E2E_CLAUDE"), str(LOCAL)]
    for path in tried if given else [*tried, shutil.which("claude")]:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


class Host:
    """The HOME, the loopback server and the environment every `claude` and `rose` run gets."""

    def __init__(self, root: Path, claude: str, pace: tuple[float, float] = REALISTIC):
        self.root, self.claude, self.pace = root, claude, pace
        self.home = root / "home"
        (self.home / "tmp").mkdir(parents=True)
        bin_dirs = [Path(claude).parent, Path(sys.executable).parent, "/usr/local/bin", "/usr/bin"]
        base = {
            "PATH": os.pathsep.join(dict.fromkeys(str(d) for d in [*bin_dirs, "/bin"])),
            "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join(
                [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
            ),
        }
        if os.environ.get("ROSE_GRAPH_ENGINE"):
            base["ROSE_GRAPH_ENGINE"] = os.environ["ROSE_GRAPH_ENGINE"]
        self.log = root / "requests.jsonl"
        self.server = hosts.Server(
            self.log, root / "loopback.out", base, seed=SEED, size="default", pace=pace
        )
        self.env = {
            **base,
            **hosts.claude_env(self.server.port),
            "HOME": str(self.home),
            "TMPDIR": str(self.home / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
        }

    def stop_kept(self) -> None:
        """End the graph servers the runs left up in this HOME."""
        subprocess.run(
            [sys.executable, "-c", _STOP_KEPT], env=self.env, capture_output=True, timeout=60,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def rose(self, project: Path, *args: str) -> str:
        cp = subprocess.run(
            [sys.executable, "-m", "rose", *args], cwd=project, env=self.env,
            capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if cp.returncode != 0:
            raise RuntimeError(f"rose {' '.join(args)} failed: {(cp.stderr or cp.stdout)[-600:]}")
        return cp.stdout

    def session(self, project: Path, prompt: str) -> dict[str, Any]:
        t0 = time.perf_counter()
        cp = subprocess.run(
            [self.claude, "-p", prompt, "--output-format", "json", "--allowedTools", "Bash"],
            cwd=project, env=self.env, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        wall = (time.perf_counter() - t0) * 1000
        if cp.returncode != 0:
            why = (cp.stderr or cp.stdout)[-600:]
            raise RuntimeError(f"claude -p failed ({cp.returncode}): {why}")
        result = json.loads(cp.stdout.strip().splitlines()[-1])
        sid = str(result.get("session_id") or "")
        found = list((self.home / ".claude" / "projects").glob(f"*/{sid}.jsonl"))
        transcript = hosts.read_jsonl(found[0]) if found else []
        first = next((r for r in transcript if "timestamp" in r), None)
        user = next((r for r in transcript if r.get("type") == "user" and "timestamp" in r), None)
        start = (hosts.stamp(user) - hosts.stamp(first)) * 1000 if first and user else None
        return {
            "session": sid,
            "wall_ms": round(wall, 1),
            "start_ms": None if start is None else round(start, 1),
            "hook_ms": hosts.prompt_hook_ms(transcript),
            "reply_ms": hosts.prompt_to_reply_ms(transcript),
        }


class Config:
    def __init__(self, name: str, project: Path, size: int | None, settings: dict[str, str]):
        self.name, self.project, self.size, self.settings = name, project, size, settings
        self.installed = size is not None
        self.runs: list[dict[str, Any]] = []
        self.setup: dict[str, Any] = {}

    def judge_events(self) -> list[dict[str, Any]]:
        rows = hosts.read_jsonl(self.project / ".rose" / "events.jsonl")
        return [r for r in rows if r.get("kind") == "judge" and r.get("call") in RECALL_CALLS]


def configs_for(root: Path, sizes: list[int]) -> list[Config]:
    budget = {"recall.max_pack_tokens": str(VIEW_BUDGET), "recall.whole_tokens": str(VIEW_BUDGET)}
    out = [
        Config("bare", root / "bare", None, {}),
        Config("view", root / "view", 0, budget),
        Config("view no-mcp", root / "view-no-mcp", 0, {**budget, "install": "--no-mcp"}),
        # the world's lessons in one relevance question: the walk's shortest model path
        Config("model 1q", root / "model-1q", 0, {"recall.max_candidates": "1000"}),
    ]
    return out + [Config(f"model {n}", root / f"model-{n}", n, {}) for n in sizes]


def setup(host: Host, world: World, configs: list[Config]) -> None:
    """Every configuration's project: its store written and indexed, ROSE installed."""
    for c in configs:
        c.project.mkdir()
        if c.size is None:
            continue
        built = generate(c.project / ".rose", c.size, world)
        settings = {"agent": "claude", "reflect.mode": "off", **c.settings}
        settings["attribute.counterfactual_calls"] = "0"  # the session-end job: not measured
        install = settings.pop("install", "")
        for key, val in settings.items():
            host.rose(c.project, "config", key, val)
        host.rose(c.project, "install", "--scope", "project", *install.split())
        t0 = time.perf_counter()
        apexes, gists = _index(host, c.project)
        c.setup = {"lessons": built.lessons, "apexes": apexes, "gist_calls": gists}
        c.setup["index_and_gists_s"] = round(time.perf_counter() - t0, 2)


_STOP_KEPT = """
from rose.graph import server
server.stop_all()
"""

_GISTS = """
from rose.judge.calls import for_store
from rose.loop.selection import families
from rose.store.facade import Store
store = Store.open()
print(len(store.read("apexes", scope="")), families.refresh(store, for_store(store)))
"""


def _index(host: Host, project: Path) -> tuple[int, int]:
    """Index the store and write its family gists through the `claude` backend, as a
    session's end does; (apexes, gists written)."""
    cp = subprocess.run(
        [sys.executable, "-c", _GISTS], cwd=project, env=host.env, capture_output=True,
        text=True, timeout=1800, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if cp.returncode != 0:
        raise RuntimeError(f"indexing the store failed: {cp.stderr[-600:]}")
    apexes, gists = cp.stdout.split()[-2:]
    return int(apexes), int(gists)


def run(host: Host, configs: list[Config], world: World, runs: int) -> None:
    tasks = [strip(t.prompt) for t in world.tasks]
    tasks = [t for t in tasks if tasks.count(t) == 1]  # a task the loopback knows by its words
    for r in range(WARMUP + runs):
        prompt = tasks[r % len(tasks)]
        order = configs[r % len(configs) :] + configs[: r % len(configs)]
        _say(f"round {r + 1}/{WARMUP + runs}" + (" (warm-up)" if r < WARMUP else ""))
        for c in order:
            before = len(c.judge_events())
            row = host.session(c.project, prompt)
            row.pop("session")
            if c.installed:
                hosts.settle(c.project, timeout=600)
            asked = [e for e in c.judge_events()[before:] if e.get("call") == "relevance"]
            row["recall_calls"] = len(asked)
            row["in_time"] = sum(1 for e in asked if not e.get("error") and not e.get("cached"))
            row["late"] = sum(1 for e in asked if e.get("error") == "BackendTimeout")
            if r >= WARMUP:
                c.runs.append(row)


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(vals), 1) if vals else None


def summarise(configs: list[Config]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    bare = _median(configs[0].runs, "reply_ms")
    for c in configs:
        reply = _median(c.runs, "reply_ms")
        added = round(reply - bare, 1) if reply is not None and bare is not None else None
        out[c.name] = {
            "setup": c.setup,
            "wall_ms": _median(c.runs, "wall_ms"),
            "start_ms": _median(c.runs, "start_ms"),
            "hook_ms": _median(c.runs, "hook_ms"),
            "reply_ms": reply,
            "added_ms": added,
            "recall_calls": _median(c.runs, "recall_calls"),
            "relevance_in_time": sum(r.get("in_time", 0) for r in c.runs),
            "relevance_late": sum(r.get("late", 0) for r in c.runs),
            "relevance_asked": sum(r.get("recall_calls", 0) for r in c.runs),
            "runs": c.runs,
        }
    return out


def render(result: dict[str, Any], claude: str, version: str, pace: tuple[float, float]) -> str:
    lines = [
        f"host latency · {version} ({claude}) · loopback judge at {pace[0]:g} s + "
        f"{pace[1]:g} tokens/s · medians of {len(next(iter(result.values()))['runs'])} runs each",
        "",
        f"{'config':<12} {'lessons':>8} {'apexes':>7} {'calls':>6} {'in time':>8} {'start ms':>9} "
        f"{'hook ms':>8} {'to reply ms':>12} {'added ms':>9} {'CLI wall ms':>12}  target",
    ]
    for name, r in result.items():
        lessons, apexes = r["setup"].get("lessons", "—"), r["setup"].get("apexes", "—")
        added = r["added_ms"]
        target = ""
        if name.startswith("model") and added is not None:
            met = added <= TARGET_ADDED_MS
            target = f"≤ {TARGET_ADDED_MS:,.0f} ms added: {'met' if met else 'MISSED'}"
        asked = r["relevance_asked"]
        in_time = f"{r['relevance_in_time']}/{asked}" if asked else "—"
        lines.append(
            f"{name:<12} {lessons!s:>8} {apexes!s:>7} {_fmt(r['recall_calls']):>6} {in_time:>8} "
            f"{_fmt(r['start_ms']):>9} {_fmt(r['hook_ms']):>8} "
            f"{_fmt(r['reply_ms']):>12} {_fmt(added):>9} {_fmt(r['wall_ms']):>12}  {target}"
        )
    lines.append("")
    lines.append(
        "start: the session's first record to the prompt's (SessionStart hooks, MCP servers "
        "connecting); hook: the prompt's record to the prompt hook's status line; to reply: "
        "to the model's first reply (all by the CLI's clock); added: over bare's to reply; "
        "in time: relevance judgements answered within their deadline, of those asked"
    )
    return "\n".join(lines)


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:,.1f}" if v % 1 else f"{v:,.0f}"


def host_args(ap: argparse.ArgumentParser, *, runs: str, sizes: str) -> None:
    """The options of a benchmark that runs the real CLI against the loopback judge."""
    ap.add_argument("--claude", default=None, help="the Claude Code CLI to run")
    ap.add_argument("--runs", type=int, default=5, help=runs)
    ap.add_argument("--sizes", default="0,1000", help=sizes)
    ap.add_argument("--json", action="store_true", help="print the figures only, as JSON")
    ap.add_argument("--keep", default=None, help="keep the homes and projects in this folder")
    ap.add_argument(
        "--pace",
        default=",".join(f"{x:g}" for x in REALISTIC),
        help="the judge's pace: seconds to its first token, tokens a second (0,0: at once)",
    )


def prepared(args: argparse.Namespace, prefix: str) -> tuple[str, list[int], str, Path] | None:
    """What `host_args` asked for, ready: the CLI, the sizes, the CLI's version and the folder
    to work in (made); None, said why, when no CLI is found."""
    claude = find_claude(args.claude)
    if claude is None:
        where = args.claude or "--claude, $ROSE_E2E_CLAUDE, /tmp/cc332 or PATH"
        _say(f"no Claude Code CLI at {where} (give --claude PATH, or `{INSTALL}`)")
        return None
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    version = subprocess.run([claude, "--version"], capture_output=True, text=True).stdout.strip()
    root = Path(args.keep or tempfile.mkdtemp(prefix=prefix))
    root.mkdir(parents=True, exist_ok=True)
    return claude, sizes, version, root


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    host_args(
        ap, runs="timed runs per configuration", sizes="store sizes of the model-decided runs"
    )
    args = ap.parse_args(argv)
    first, per_s = (float(x) for x in args.pace.split(","))
    ready = prepared(args, "rose-host-latency-")
    if ready is None:
        return 2
    claude, sizes, version, root = ready
    world = World.generate(SEED)
    host = Host(root, claude, (first, per_s))
    try:
        configs = configs_for(root, sizes)
        _say(f"setting up {len(configs)} configurations under {root}")
        setup(host, world, configs)
        run(host, configs, world, args.runs)
    finally:
        host.stop_kept()
        host.server.close()
    result = summarise(configs)
    if args.json:
        pace = {"first_token_s": first, "tokens_per_s": per_s}
        print(json.dumps({"claude": version, "pace": pace, "configs": result}, indent=1))
    else:
        print(render(result, claude, version, (first, per_s)))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

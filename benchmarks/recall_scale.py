"""What a prompt costs recall as the store grows: calls, judge tokens, injected tokens, wall.

    python benchmarks/recall_scale.py [--json] [--sizes 1000,10000] [--prompts N]
                                      [--passes 1,2] [--second-calls K]
                                      [--world-seed S] [--keep DIR]

For each size a store over the simulated world is written straight to disk
(`_synth_world.py`: the world's own lessons among synthetic families about subjects outside
it), indexed, and its family gists written once (`rose.loop.selection.families.refresh`, the work
a session's end does; its calls are reported apart, as setup). Then the first --prompts
of the world's tasks are sent, each as a new session, through the real prompt hook
(`python -m rose hook user-prompt-submit`, a process per prompt, with the simulated
backend), once with one pass (`recall.second_look_calls: 0`) and once with the second
pass (`--second-calls` of them, default 1 as the setting). Per prompt, medians and maxima
of: relevance calls (first pass, second pass), tokens offered to the judge (the rendered
prompts, as the simulated backend counts them), tokens injected, and the hook's wall
time, process start to answer; and, by the world's truth, the share of needed facts the
block held, overall and on the bridged tasks' hidden topic (reachable only through a found
lesson's wording). The bound is printed beside the calls: `recall.judge_calls` +
`recall.second_look_calls`.

With and without pull: each prompt's block is then given to the simulated agent
(`rose.sim.agent.Agent`, the world's seed), first without the memory's tools and then with
them (`rose.sim.pulling.attempt`: after its checks fail it pulls through `rose.loop.selection.pull`,
the door `rose mcp` serves, in this process against the same store). Reported: the share
of prompts that succeed without and with pull, the pull calls an attempt made, the tokens
of the answers it read, and the relevance calls and judge tokens its pulled recalls cost
(each a bounded recall of its own, counted apart from the hook's).
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

from _synth_world import generate  # beside this script, which is run as a file

from rose import config, tokens
from rose.judge.calls import for_store
from rose.loop.selection import families
from rose.model.registry import simulated_model
from rose.sim import World, pulling
from rose.sim.agent import Agent, Turn
from rose.sim.hosts import scoreboard
from rose.store.facade import Store

HERE = Path(__file__).resolve().parent


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _env(root: Path, second: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSE_")}
    env["ROSE_HOME"] = str(root)
    env["ROSE_GLOBAL_HOME"] = str(root.parent / "home" / ".rose")
    env["ROSE_RECALL_SECOND_LOOK_CALLS"] = str(second)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), env.get("PYTHONPATH", "")])
    return env


def _events(path: Path, offset: int) -> tuple[list[dict], int]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], offset
    rows = []
    for line in data[offset:].splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return rows, len(data)


def prepare(size: int, world: World, work: Path) -> tuple[Path, dict[str, Any]]:
    """The project folder of a `size`-lesson store, indexed, its family gists written."""
    folder = work / str(size) / "project"
    root = folder / ".rose"
    built = generate(root, size, world)
    os.environ["ROSE_GLOBAL_HOME"] = str(folder.parent / "home" / ".rose")
    t0 = time.perf_counter()
    store = Store.open(folder)
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", simulated_model(seed=world.seed))
    store = Store.open(folder)
    store.view()
    indexed = time.perf_counter() - t0
    t0 = time.perf_counter()
    judge = for_store(store)
    gists = families.refresh(store, judge)
    apexes = store.read("apexes", scope="")
    setup = {
        "lessons": built.lessons,
        "world_lessons": built.world_lessons,
        "families": built.families,
        "apexes": len(apexes),
        "index_s": round(indexed, 2),
        "gist_calls": gists,
        "gist_s": round(time.perf_counter() - t0, 2),
    }
    return folder, setup


def _forget_relevance(cache: Path) -> None:
    """Drop the cached relevance judgements (the family gists stay): each run starts cold,
    so a prompt's calls are what it costs, not what an earlier run left in the cache."""
    for entry in cache.glob("*/*.json"):
        try:
            if json.loads(entry.read_text(encoding="utf-8")).get("call") == "relevance":
                entry.unlink()
        except (OSError, ValueError):
            continue


def run_prompts(folder: Path, world: World, n: int, second: int) -> list[dict[str, Any]]:
    """Each of the first `n` tasks, a new session each, through the real prompt hook."""
    root = folder / ".rose"
    _forget_relevance(Store.open(folder).primary.judge_cache)
    env = _env(root, second)
    os.environ["ROSE_RECALL_SECOND_LOOK_CALLS"] = str(second)  # the agent's pulls: as the hook
    events = root / "events.jsonl"
    _, offset = _events(events, 0)
    cmd = [sys.executable, "-m", "rose", "hook", "user-prompt-submit"]
    out = []
    run = time.time_ns()  # a new session each prompt, never one a kept store saw before
    for i, task in enumerate(world.tasks[:n]):
        payload = {
            "session_id": f"scale-{run}-{second}-{i}",
            "transcript_path": "",
            "cwd": str(folder),
            "hook_event_name": "UserPromptSubmit",
            "prompt": scoreboard.plain_prompt(task),
        }
        t0 = time.perf_counter()
        done = subprocess.run(
            cmd, input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=folder
        )
        wall = time.perf_counter() - t0
        answer = json.loads(done.stdout) if done.stdout.strip() else {}
        block = (answer.get("hookSpecificOutput") or {}).get("additionalContext", "")
        rows, offset = _events(events, offset)
        judged = [r for r in rows if r.get("kind") == "judge" and not r.get("cached")]
        offered = sum(int((r.get("simulated") or {}).get("input_tokens", 0)) for r in judged)
        held = set(world.facts_in(block))
        needed = [f for f in task.needs if not world.facts[f].known]
        hidden = [f for f in needed if world.facts[f].topic in task.hidden]
        note = str(answer.get("systemMessage") or "")
        pull, offset = _pull(folder, world, task, block, payload["session_id"], events, offset)
        out.append(
            {
                **pull,
                "task": task.id,
                "calls": len(judged),
                "second": _second_calls(note),
                "judge_tokens": offered,
                "injected_tokens": tokens.count(block),
                "wall_s": wall,
                "recall": sum(f in held for f in needed) / len(needed) if needed else None,
                "hidden_recall": sum(f in held for f in hidden) / len(hidden) if hidden else None,
                "errors": [r.get("detail", "") for r in rows if r.get("kind") == "error"],
                "note": note,
            }
        )
    return out


def _pull(
    folder: Path, world: World, task: Any, block: str, session: str, events: Path, offset: int
) -> tuple[dict[str, Any], int]:
    """The agent's attempt with `block` in context, without the memory's tools and with
    them; what pulling cost (its calls, the tokens read, the model calls of its recalls)."""
    from rose.loop.selection import pull

    agent = Agent(world, seed=world.seed)
    turns = (Turn(block),)
    alone = agent.solve(task, turns)

    def tools(tool: str, arguments: dict[str, Any]) -> str:
        args = {**arguments, "session": session} if tool == "used" else arguments
        return pull.call(Store.open(folder), tool, args)

    pulled, _ = pulling.attempt(agent, task, turns, tools, set())
    rows, offset = _events(events, offset)
    judged = [r for r in rows if r.get("kind") == "judge" and not r.get("cached")]
    asks = [p for p in pulled.pulls if p.tool != "used"]
    return {
        "ok_alone": alone.ok,
        "ok_pull": pulled.ok,
        "pull_calls": len(asks),
        "pulled_tokens": sum(tokens.count(p.text) for p in asks),
        "pull_model_calls": len(judged),
        "pull_judge_tokens": sum(
            int((r.get("simulated") or {}).get("input_tokens", 0)) for r in judged
        ),
    }, offset


def _second_calls(note: str) -> int:
    """The second pass's calls, as the hook's note reports them ("2nd pass: +1 (1 call)")."""
    if "2nd pass:" not in note:
        return 0
    tail = note.split("2nd pass:", 1)[1]
    inside = tail.split("(", 1)[1].split(" ", 1)[0] if "(" in tail else "0"
    return int(inside) if inside.isdigit() else 0


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def med(key: str) -> float:
        return round(statistics.median(r[key] for r in rows), 3)

    def share(key: str) -> float | None:
        values = [r[key] for r in rows if r[key] is not None]
        return round(sum(values) / len(values), 3) if values else None

    return {
        "prompts": len(rows),
        "calls_median": med("calls"),
        "calls_max": max(r["calls"] for r in rows),
        "second_pass_calls_median": med("second"),
        "judge_tokens_median": med("judge_tokens"),
        "judge_tokens_max": max(r["judge_tokens"] for r in rows),
        "injected_tokens_median": med("injected_tokens"),
        "wall_s_median": med("wall_s"),
        "wall_s_max": round(max(r["wall_s"] for r in rows), 3),
        "recall": share("recall"),
        "hidden_recall": share("hidden_recall"),
        "errors": sum(len(r["errors"]) for r in rows),
        "success_alone": share("ok_alone"),
        "success_pull": share("ok_pull"),
        "pull_calls_mean": round(statistics.mean(r["pull_calls"] for r in rows), 3),
        "pulled_tokens_mean": round(statistics.mean(r["pulled_tokens"] for r in rows), 1),
        "pull_model_calls_mean": round(statistics.mean(r["pull_model_calls"] for r in rows), 3),
        "pull_judge_tokens_mean": round(statistics.mean(r["pull_judge_tokens"] for r in rows), 1),
        "rows": rows,
    }


def render(result: dict[str, Any]) -> str:
    p = result["params"]
    lines = [
        f"recall at scale · world {p['world_seed']} · {p['prompts']} prompts a size · bound "
        f"{p['judge_calls']} + {p['second_pass_calls']} calls, {p['max_candidates']} lines a call",
        "",
    ]
    head = (
        "size", "apexes", "families", "pass", "calls med/max", "2nd", "judge tok med/max",
        "injected", "wall s med/max", "recall", "hidden", "ok alone", "ok pull", "pulls",
        "pulled tok", "pull calls", "pull judge tok",
    )  # fmt: skip
    rows = [list(head)]
    for size, entry in result["sizes"].items():
        for passes, s in entry["runs"].items():
            rows.append(
                [
                    size,
                    str(entry["setup"]["apexes"]),
                    str(entry["setup"]["families"]),
                    passes,
                    f"{s['calls_median']:g}/{s['calls_max']}",
                    f"{s['second_pass_calls_median']:g}",
                    f"{s['judge_tokens_median']:,.0f}/{s['judge_tokens_max']:,}",
                    f"{s['injected_tokens_median']:,.0f}",
                    f"{s['wall_s_median']:.2f}/{s['wall_s_max']:.2f}",
                    "—" if s["recall"] is None else f"{s['recall']:.0%}",
                    "—" if s["hidden_recall"] is None else f"{s['hidden_recall']:.0%}",
                    f"{s['success_alone']:.0%}",
                    f"{s['success_pull']:.0%}",
                    f"{s['pull_calls_mean']:.2f}",
                    f"{s['pulled_tokens_mean']:,.0f}",
                    f"{s['pull_model_calls_mean']:.2f}",
                    f"{s['pull_judge_tokens_mean']:,.0f}",
                ]
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.append("")
    for size, entry in result["sizes"].items():
        s = entry["setup"]
        lines.append(
            f"  {size}: {s['lessons']:,} lessons ({s['world_lessons']} the world's), indexed in "
            f"{s['index_s']} s; {s['gist_calls']} family gists written in {s['gist_s']} s"
        )
    lines.append(f"wall {result['wall_s']:.1f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes")
    ap.add_argument("--prompts", type=int, default=16, help="prompts per size and pass")
    ap.add_argument("--passes", default="1,2", help="1: one pass, 2: with the second pass")
    ap.add_argument("--second-calls", type=int, default=1, help="second-pass calls (pass 2)")
    ap.add_argument("--world-seed", type=int, default=0, help="the simulated world's seed")
    ap.add_argument("--keep", default=None, help="keep the stores here (reused next run)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    passes = [int(p) for p in args.passes.split(",") if p.strip()]
    if not sizes or args.prompts < 1 or not set(passes) <= {1, 2} or args.second_calls < 1:
        ap.error("bad arguments")
    started = time.perf_counter()
    world = World.generate(args.world_seed)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rose-scale-"))
    saved_env = dict(os.environ)
    result: dict[str, Any] = {"sizes": {}}
    try:
        for size in sizes:
            _say(f"{size:,}: building and indexing")
            folder, setup = prepare(size, world, work)
            rc = Store.open(folder).config.recall
            entry: dict[str, Any] = {"setup": setup, "runs": {}}
            for n in passes:
                _say(f"{size:,}: {args.prompts} prompts, {'one pass' if n == 1 else 'two passes'}")
                rows = run_prompts(folder, world, args.prompts, 0 if n == 1 else args.second_calls)
                entry["runs"]["one" if n == 1 else "two"] = summarise(rows)
            result["sizes"][str(size)] = entry
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        if not args.keep:
            from rose.graph import server

            server.stop_under(work)  # the graph servers its stores' opens started
            shutil.rmtree(work, ignore_errors=True)
    result["params"] = {
        "sizes": sizes,
        "prompts": args.prompts,
        "world_seed": args.world_seed,
        "judge_calls": rc.judge_calls,
        "second_pass_calls": args.second_calls,
        "max_candidates": rc.max_candidates,
    }
    result["wall_s"] = round(time.perf_counter() - started, 2)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

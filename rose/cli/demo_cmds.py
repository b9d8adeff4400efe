"""`rose demo`: ROSE run on the simulated world, for someone with no model CLI.

The one CLI module that may import `rose.sim`: it wires the world's side of the run
(`rose.sim.scoreboard`: the task stream, the agent, the score) to ROSE's side
(`rose.host.drive`: a store of its own, driven through the real hooks) and prints both.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import typer

from rose.cli._out import emit_json


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    sessions: int = typer.Option(20, "--sessions", "-n", min=1, help="Sessions to simulate."),
    seed: int = typer.Option(0, "--seed", help="Which world, and which stream of tasks in it."),
    noise: float = typer.Option(
        0.0,
        "--noise",
        min=0.0,
        max=1.0,
        help="Share of the model's judgements that come out wrong.",
    ),
    where: str = typer.Option(
        None,
        "--dir",
        help="Make the demo's store in this (new or empty) folder; default: a temp one.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Run ROSE on a simulated world: sessions through its real hooks, then what happened.

    A store is made, empty, in a folder of its own. Each session, the prompt hook recalls
    lessons for a task with the simulated model, a simulated agent works the task from what
    was injected (the user corrects it when it fails), and at the session's end its
    transcript is judged, its episode written, and a reflection mints what the user had to
    teach, reconciled with what the store knows. The world, which knows what each task
    needed, scores the work; the store is left in place for `rose tree`, `rose trace` and
    `rose query`. With --json, stages not built yet give null.
    """
    from rose.errors import RoseError
    from rose.host.drive import HookHost
    from rose.model.registry import simulated_model
    from rose.sim import World, scoreboard

    folder = _folder(where)
    world = World.generate(seed)
    model = simulated_model(seed=seed, noise=noise)
    with HookHost(folder, model=model) as host:
        bar = typer.progressbar(
            length=sessions, label="sessions", file=sys.stderr, hidden=not sys.stderr.isatty()
        )
        with bar:
            records = scoreboard.run(world, host, sessions=sessions, seed=seed, progress=bar.update)
        figures = scoreboard.metrics([records], host.metrics())
    if figures["hook_errors"]:
        raise RoseError(
            f"{figures['hook_errors']} hook call(s) failed during the demo: "
            f"{host.tally.errors[0]} (the store's events.jsonl at {figures['store']} has them all)"
        )
    if figures["jobs_failed"]:
        raise RoseError(
            f"{figures['jobs_failed']} job(s) failed during the demo: `rose jobs` run in "
            f"{folder} lists them, each with its log"
        )
    if as_json:
        emit_json(figures)
        return
    prompt = scoreboard.plain_prompt(scoreboard.stream(world, sessions, seed)[-1])
    typer.echo(_report(figures, world=world, seed=seed, noise=noise, prompt=prompt))


def _folder(where: str | None) -> Path:
    from rose.errors import RoseError

    if not where:
        return Path(tempfile.mkdtemp(prefix="rose-demo-"))
    folder = Path(where).expanduser().resolve()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise RoseError(f"{folder} is not an empty folder; give --dir a new or empty one")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.0%}"


def _num(v: float | None, digits: int = 0) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"


def _report(f: dict[str, Any], *, world: Any, seed: int, noise: float, prompt: str) -> str:
    from rose.host.drive import DOES, STAGES

    n = f["sessions"]
    frm = f["measured_from"]
    lines = [
        f"ROSE demo · world {seed}: {len(world.topics)} topics, {len(world.tasks)} tasks · "
        f"judge noise {noise:.0%}",
        f"The store starts empty; the world's knowledge is {world.tokens():,} tokens of lessons",
        "a person would write once every topic was learnt. ROSE mints its own from sessions.",
        "",
        f"{n} sessions through ROSE's hooks; after warm-up (sessions {frm}-{n}):",
        f"  tasks solved at the first attempt  {_pct(f['success_rate'])}"
        "   (the rest needed the user's correction)",
        f"  injected tokens per prompt         {_num(f['tokens_per_prompt'])}"
        f"   (frame {_num(f['frame_tokens_per_prompt'])}: preamble, tags, ids, titles)",
        f"  needed facts in the injected block {_pct(f['recall'])}",
        f"  lessons injected per prompt        {_num(f['lessons_per_prompt'], 1)}",
        f"  model calls per prompt             {_num(f['model_calls_per_prompt'], 2)}"
        "   (recall's relevance call; a repeated prompt's answer is cached)",
        f"  precision (used ÷ served)          {_pct(f['precision'])}"
        + ("   (nothing was served)" if f["precision"] is None else ""),
        "",
        "Over the stream:",
        *_trend(f["over_time"]),
        "",
        f"The store: {f['lessons']} lessons, {f['apexes']} apexes, highest level "
        f"{f['max_level']}; {f['episodes']} episodes recorded, one a unit of work, each judged"
        " once it is complete.",
    ]
    figures = [
        ("lessons minted", f["minted"]),
        ("compressions accepted", f["compressions_accepted"]),
        ("compressions rejected", f["compressions_rejected"]),
        ("merges", f["merges"]),
        ("rescues by descent", f["rescues"]),
        ("conflicts raised", f["conflicts"]),
        ("selection rules", f["rules"]),
        ("rules per lesson", f["routing_rules"]),
    ]
    shown = [f"{name} {value}" for name, value in figures if value is not None]
    if shown:
        lines.append("  " + " · ".join(shown))
    if f["max_level"]:
        lines += ["", _tree(Path(f["store"]))]
    built = [DOES[s] for s, ok in STAGES.items() if ok]
    missing = [DOES[s] for s, ok in STAGES.items() if not ok]
    lines += ["", "Built:", *(f"  {b}" for b in built)]
    if missing:
        lines += ["Not built yet (null in --json):", *(f"  {m}" for m in missing)]
    folder = Path(f["store"]).parent
    lines += [
        "",
        f"The store is left at {f['store']}. Try:",
        f"  cd {folder}",
        "  rose tree",
        f'  rose trace --prompt "{prompt}"',
        "  rose query    (a Cypher console: the README's graph schema lists the tables)",
    ]
    return "\n".join(lines)


def _trend(buckets: list[dict[str, Any]]) -> list[str]:
    rows = [
        ("sessions", [b["sessions"] for b in buckets]),
        ("tokens per prompt", [_num(b["tokens_per_prompt"]) for b in buckets]),
        ("first attempt", [_pct(b["success_rate"]) for b in buckets]),
    ]
    width = max(len(c) for _, cells in rows for c in cells)
    return [f"  {name:<18}" + " ".join(c.rjust(width) for c in cells) for name, cells in rows]


def _tree(root: Path) -> str:
    from rose.inspect.tree import build, render_text
    from rose.store.facade import Store

    return render_text(build(Store(root, None)))

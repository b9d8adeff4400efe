"""`rose demo`: ROSE run on the simulated world, for someone with no model CLI.

The one CLI module that may import `rose.sim`: it wires the world's side of the run
(`rose.sim.hosts.scoreboard`: the task stream, the agent, the score) to ROSE's side
(`rose.sim.hosts.drive`: a store of its own, driven through the real hooks) and prints both.
A figure alone says little ("50 % solved": of what could be?), so the same stream is also
worked by two references that need no store and no model (`rose.sim.hosts.arms`): no memory
below ROSE, the learnability ceiling above it.
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import typer

from rose.cli._chart import bar, rows
from rose.cli._out import emit_json

WRAP = 92  # the width prose is wrapped at

#: The arms the demo compares, in the order shown (ROSE between its references): the name
#: printed, and what the arm is, in one sentence.
ARMS: dict[str, tuple[str, str]] = {
    "none": ("no memory", "the agent alone: nothing is injected."),
    "rose": ("ROSE", "learning from an empty store, through its real hooks."),
    "ceiling": (
        "ceiling",
        "every fact the task needs that a user taught, or the agent found, before this "
        "session, and nothing else: no learner can do better on this stream.",
    ),
}


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
    was injected (after a failure it may find a missing fact itself; the user corrects
    it), and at the session's end its transcript is judged, its episode written, and a
    reflection mints what the user taught or the agent found, reconciled with what the
    store knows. The world is the quality benchmark's: tasks recur, a long block costs
    attention. The world, which knows what each task
    needed, scores the work; the store is left in place for `rose tree`, `rose trace` and
    `rose query`. The same stream is also worked with no memory and by the ceiling (every
    needed fact taught or found before the session, served): ROSE is shown between the two, after
    warm-up and over the sessions. With --json, stages not built yet give null and
    "baselines" holds the two references' figures.
    """
    from rose.errors import RoseError
    from rose.model.registry import simulated_model
    from rose.sim import World
    from rose.sim.hosts import scoreboard
    from rose.sim.hosts.drive import HookHost
    from rose.sim.realism import Realism

    real = Realism()  # the world as close to real work as the quality benchmark's
    folder = _folder(where)
    world = World.generate(seed)
    model = simulated_model(seed=seed, noise=noise)
    with HookHost(folder, model=model) as host:
        bar = typer.progressbar(
            length=sessions, label="sessions", file=sys.stderr, hidden=not sys.stderr.isatty()
        )
        with bar:
            records = scoreboard.run(
                world, host, sessions=sessions, seed=seed, progress=bar.update, world_is=real
            )
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
    figures["failures_by_cause"] = _split(figures["failures_by_cause"])
    figures["baselines"] = baselines(world, sessions=sessions, seed=seed)
    figures["ceiling_share"] = share(
        figures["success_rate"], figures["baselines"]["ceiling"]["success_rate"]
    )
    _leave_trend(figures, seed=seed)
    if as_json:
        emit_json(figures)
        return
    last = scoreboard.stream(world, sessions, seed, real.recurrence)[-1]
    prompt = scoreboard.plain_prompt(last)
    typer.echo(_report(figures, world=world, seed=seed, noise=noise, prompt=prompt))


def _leave_trend(f: dict[str, Any], *, seed: int) -> None:
    """Success and tokens over the sessions, each arm's, beside the store for `rose view`."""
    from rose.disk.atomic import write_json
    from rose.files.layout import StoreDir

    trend = {key: arm["over_time"] for key, arm in _arms(f).items()}
    summary = {"sessions": f["sessions"], "seed": seed, "over_time": trend}
    write_json(StoreDir(Path(f["store"]), "project").demo, summary)


def _folder(where: str | None) -> Path:
    from rose.errors import RoseError

    if not where:
        return Path(tempfile.mkdtemp(prefix="rose-demo-"))
    folder = Path(where).expanduser().resolve()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise RoseError(f"{folder} is not an empty folder; give --dir a new or empty one")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def baselines(world: Any, *, sessions: int, seed: int) -> dict[str, dict[str, Any]]:
    """The references on ROSE's own stream (same world, seed and sessions), so its figures
    read against what no memory and a perfect learner achieve: the world's pooled figures
    and the trend of each. Neither has a store nor calls a model: well under a second."""
    from rose.sim.hosts import scoreboard
    from rose.sim.hosts.arms import Ceiling, NoMemory
    from rose.sim.hosts.drive import framed
    from rose.sim.realism import Realism

    arms = {"none": NoMemory(), "ceiling": Ceiling(world, framed)}
    out: dict[str, dict[str, Any]] = {}
    for name, arm in arms.items():
        records = scoreboard.run(world, arm, sessions=sessions, seed=seed, world_is=Realism())
        out[name] = {**scoreboard.pooled([records]), "over_time": scoreboard.over_time(records)}
    return out


def _split(causes: dict[str, int]) -> dict[str, int]:
    """ROSE's failures as the demo can tell them apart: those no learner could have avoided
    (never taught) and the rest. Telling the rest apart means asking its recall again, which
    the quality benchmark does and the demo does not."""
    never = causes.get("never_taught", 0)
    return {"never_taught": never, "other": sum(causes.values()) - never}


def share(rate: float | None, ceiling: float | None) -> float | None:
    """`rate` as a share of the ceiling's: None when the ceiling solved nothing (no needed
    fact had been taught in time, so the stream cannot tell a learner from no memory)."""
    if rate is None or not ceiling:
        return None
    return round(rate / ceiling, 4)


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.0%}"


def _num(v: float | None, digits: int = 0) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"


def _report(f: dict[str, Any], *, world: Any, seed: int, noise: float, prompt: str) -> str:
    n = f["sessions"]
    lines = [
        f"ROSE demo · world {seed}: {len(world.topics)} topics, {len(world.tasks)} tasks · "
        f"judge noise {noise:.0%}",
        f"The store starts empty; the world's knowledge is {world.tokens():,} tokens of lessons",
        "a person would write once every topic was learnt. ROSE mints its own from sessions.",
        "",
        f"The same {n} sessions (one stream of tasks, one simulated agent), three ways:",
        *_meanings(),
        "",
        *_compared(f),
        *_verdict(f),
        "",
        *_prompts(f),
        "",
        "Over the stream: tasks solved at the first attempt (a full bar is 100%), and tokens",
        "injected per prompt (no memory injects none):",
        *_chart(f),
        "",
        *_store(f),
        "",
        *_stages(),
    ]
    folder = Path(f["store"]).parent
    lines += [
        "",
        f"The store is left at {f['store']}. Try:",
        f"  cd {folder}",
        "  rose tree",
        "  rose view --open    (the graph as one HTML page: lessons, edges, the sessions)",
        f'  rose trace --prompt "{prompt}"',
        "  rose query    (a Cypher console: the README's graph schema lists the tables)",
    ]
    return "\n".join(lines)


def _arms(f: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each arm's figures by its key in `ARMS`, in `ARMS`' order."""
    found = {**f["baselines"], "rose": f}
    return {key: found[key] for key in ARMS}


def _meanings() -> list[str]:
    width = max(len(name) for name, _ in ARMS.values())
    out: list[str] = []
    for name, meaning in ARMS.values():
        head = f"  {name:<{width}}  "
        out += textwrap.wrap(meaning, WRAP, initial_indent=head, subsequent_indent=" " * len(head))
    return out


def _compared(f: dict[str, Any]) -> list[str]:
    """The arms side by side after warm-up, each figure of the world's over the same window."""
    arms = list(_arms(f).values())
    figures = [
        ("tasks solved at the first attempt", [_pct(a["success_rate"]) for a in arms]),
        ("  95% interval", [_span(a["success_ci"]) for a in arms]),
        ("needed facts in the injected block", [_pct(a["recall"]) for a in arms]),
        ("injected tokens per prompt", [_num(a["tokens_per_prompt"]) for a in arms]),
        ("precision (used ÷ served)", [_pct(a["precision"]) for a in arms]),
    ]
    lines = [f"After warm-up (sessions {f['measured_from']}-{f['sessions']}):"]
    lines += rows(
        [name for name, _ in figures],
        [[cells[i] for _, cells in figures] for i in range(len(arms))],
        header=["", *(name for name, _ in ARMS.values())],
        right=[False, True, True, True],
    )
    return lines


def _verdict(f: dict[str, Any]) -> list[str]:
    """ROSE's success as a share of the ceiling's, and how many of its failures no learner
    could have avoided: the reading the table asks for, in words."""
    ceiling = f["baselines"]["ceiling"]["success_rate"]
    if f["ceiling_share"] is None:
        said = [
            "The ceiling solved none: no needed fact had been taught in time, so this stream "
            "cannot tell a learner from no memory (try more --sessions)."
        ]
    else:
        said = [
            f"ROSE solved {_pct(f['success_rate'])} at the first attempt, "
            f"{_pct(f['ceiling_share'])} of the ceiling's {_pct(ceiling)}; "
            "the rest needed the user's correction."
        ]
    causes = f.get("failures_by_cause") or {}
    failed = sum(causes.values())
    if failed:
        said.append(
            f"Of ROSE's {failed} failed first attempt{'' if failed == 1 else 's'}, "
            f"{causes.get('never_taught', 0)} needed a fact no one had taught yet: no memory "
            "could have served it."
        )
    return [line for sentence in said for line in textwrap.wrap(sentence, WRAP)]


def _prompts(f: dict[str, Any]) -> list[str]:
    return [
        "What ROSE's prompts held and cost, after warm-up:",
        f"  frame tokens per prompt            {_num(f['frame_tokens_per_prompt'])}"
        "   (preamble, tags, ids, titles)",
        f"  lessons injected per prompt        {_num(f['lessons_per_prompt'], 1)}",
        f"  model calls per prompt             {_num(f['model_calls_per_prompt'], 2)}"
        "   (recall's relevance call; a repeated prompt's answer is cached)",
    ]


def _chart(f: dict[str, Any]) -> list[str]:
    """One row per slice of sessions: each arm's success as a bar, ROSE's between its
    references, then the tokens ROSE and the ceiling injected per prompt."""
    trends = [a["over_time"] for a in _arms(f).values()]
    labels = [b["sessions"] for b in trends[0]]
    tokens = [trends[1], trends[2]]  # ROSE's and the ceiling's
    return rows(
        labels,
        [
            *([bar(b["success_rate"]) for b in trend] for trend in trends),
            *([_num(b["tokens_per_prompt"]) for b in trend] for trend in tokens),
        ],
        header=["sessions", *(name for name, _ in ARMS.values()), "ROSE tokens", "ceiling tokens"],
        right=[False, False, False, False, True, True],
    )


def _superseded(n: int) -> str:
    """The lessons `rose tree` and `rose view` show beyond those served, said once."""
    if not n:
        return ""
    return f"{n} more superseded by their compressions (kept for descent); "


def _store(f: dict[str, Any]) -> list[str]:
    lines = textwrap.wrap(
        f"The store: {f['lessons']} lessons served, {f['apexes']} of them apexes, highest level "
        f"{f['max_level']}; {_superseded(f.get('superseded', 0))}{f['episodes']} episodes "
        "recorded, one a unit of work, each judged once it is complete.",
        WRAP,
    )
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
    return lines


def _stages() -> list[str]:
    """Built and not built, as `rose.sim.hosts.drive.STAGES` says: the one source of truth."""
    from rose.sim.hosts.drive import DOES, STAGES

    built = [DOES[s] for s, ok in STAGES.items() if ok]
    missing = [DOES[s] for s, ok in STAGES.items() if not ok]
    lines = ["Built:", *(f"  {b}" for b in built)]
    if missing:
        lines += ["Not built yet (null in --json):", *(f"  {m}" for m in missing)]
    return lines


def _span(ci: list[float] | None) -> str:
    return "—" if ci is None else f"{ci[0]:.0%}–{ci[1]:.0%}"


def _tree(root: Path) -> str:
    from rose.inspect.tree import build, render_text
    from rose.store.facade import Store

    return render_text(build(Store(root, None)))

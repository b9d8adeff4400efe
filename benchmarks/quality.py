"""What memory buys on the simulated world: task success against the tokens it costs, per arm.

    python benchmarks/quality.py [--json] [--seeds 0,1,2] [--sessions N] [--noise P]
                                 [--size default] [--arms none,flat,...] [--out DIR]
                                 [--plot PATH]

Each seed draws a world (`rose.sim.World`) and a stream of --sessions tasks in it, and
every arm works the same stream with the same simulated agent; only what is injected
differs. The reference arms start from the world's own lessons (one verbose level-0 lesson
per topic, as a person would write them, once every topic was learnt); ROSE starts from an
empty store and mints its lessons from the sessions themselves. The arms:

- ``none``: nothing is injected;
- ``flat``: every level-0 lesson in full on every prompt (the one big instructions file);
- ``topk``: the level-0 lessons the model judges relevant to the prompt (one `relevance`
  call over all of them), in full, within `recall.max_pack_tokens`: filtering alone;
- ``collapsed``: the same judgement over the lessons of every level at once, instead of
  walking from the apexes (the same as topk while every lesson is level 0);
- ``rose``: ROSE as it is, through its real hooks (`rose.host.drive`), from an empty store:
  the prompt hook's recall, the session log, and at the session's end its transcript judged
  (`assess`), its episode written, a reflection minting lessons, consolidation;
- ``rose-jump``, ``rose-stepwise``: ROSE descending by `delta-jump` (a failed compressed
  lesson gets the whole text of the lesson holding the detail it dropped) or `stepwise`
  (the next lesson below, whatever the manifest says: the baseline) instead of
  `delta-patch` (the dropped claims the judge finds likely to explain the failure);
- ``rose-norules``: ROSE writing and following no selection rules (`routing.enabled:
  false`), so that what rules change in selection is measured;
- ``rose-seeded``: the same, starting from the world's lessons as the reference arms do
  (``rose-seeded-norules`` without rules), so the walk selects from the first prompt;
- ``rose-twopass``, ``rose-seeded-twopass``: ROSE (and ROSE seeded) asking the second
  pass whenever the model decides (`recall.second_look: always`; by default it is asked
  only of a store whose apexes outgrow one question, which these stores do not), so that
  what it buys and costs (its calls, its tokens) is measured;
- ``rose-noise10``, ``rose-noise20``: ROSE with 10 % / 20 % of the model's judgements
  wrong (the agent and the world unchanged); rose-noise20 only when asked for;
- ``rose-pull``: ROSE with its MCP server registered (the block says so) and the agent
  given its tools, called in-process through the server's own door (`rose.loop.pull.call`):
  after a failed check the agent may `recall` with the symptoms or `show` a compressed
  lesson, and try again in the same turn (`rose.sim.pulling`), so that what pulling buys
  and costs beside ``rose`` is measured (``rose-seeded-pull`` beside ``rose-seeded``: a
  store that holds what the tasks need from the start); only when asked for.

Figures are the world's (`rose.sim.scoreboard`), after warm-up (the second half of each
stream), pooled over the seeds: first-attempt task success, injected tokens per prompt
(frame apart), recall (needed facts in the block), model calls per prompt on the prompt's
path and per session in the background, simulated model tokens, the share of retries that
held (the user only said "that is not right": what the host injected with the reply is all
that changed), ``missed held`` the share of prompts whose block lacked a fact the task
needed that held anyway (only a pull can do that), ``pulls/prompt`` and ``pulled
tok/prompt`` the agent's calls to the memory's tools in its first attempt and the tokens it
read from them, ``pull calls/prompt`` the model calls those answers cost, and the tasks an
arm failed that `none` solved on the same stream; ``cf
agree`` is how often counterfactual checks agreed with attribution
(`rose.loop.counterfactual`). ``sel. precision`` and ``sel. recall`` are precision (served
lessons used) and recall over the prompts where ROSE's walk chose among its lessons (the
store outgrew the budget: where selection rules act), ``rules`` the selection rules
written; below the table, rules over lessons as each store grew. A figure a stage cannot
measure yet is null. Targets from
ARCHITECTURE.md are printed beside ROSE's figures; a miss is reported, never an error.
Under the table, ``timeouts`` counts the deadlines that passed in the ROSE arms
(`rose.host.drive.timeouts`): a seeded run gives the same figures run to run when it says
none, whatever the machine's load.
Results are written to --out (default benchmarks/results/) as JSON with the parameters
and the commit, and beside it a PNG of tokens per prompt and success over the stream, one
line per arm (`_plot.py`; needs matplotlib, `pip install 'rose-memory[bench]'`, else one
line says so). `--plot PATH` puts the PNG there instead; `--out ''` writes no JSON, and
no PNG unless `--plot` asks for one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from _plot import plot  # beside this script, which is run as a file

from rose import tokens
from rose.host.drive import FIGURES, HookHost, Tally, not_built
from rose.judge.calls import Judge
from rose.loop import route
from rose.model.registry import simulated_model
from rose.sim import SimulatedBackend, World, scoreboard
from rose.store import view as recall_view
from rose.store.facade import Store

HERE = Path(__file__).resolve().parent
ARMS = (
    "none", "flat", "topk", "collapsed", "rose", "rose-norules", "rose-jump", "rose-stepwise",
    "rose-noise10",
)  # fmt: skip
OPTIONAL = (
    "rose-seeded", "rose-seeded-norules", "rose-twopass", "rose-seeded-twopass", "rose-noise20",
    "rose-pull", "rose-seeded-pull",
)  # fmt: skip
NOISE_ARMS = {"rose-noise10": 0.10, "rose-noise20": 0.20}
#: The ROSE arms that descend another way (`recall.strategy`); `rose` is delta-patch.
STRATEGY_ARMS = {"rose-jump": "delta-jump", "rose-stepwise": "stepwise"}
#: The ROSE arms that start from the world's lessons rather than an empty store.
SEEDED_ARMS = ("rose-seeded", "rose-seeded-norules", "rose-seeded-twopass", "rose-seeded-pull")
#: The ROSE arms that write and follow no selection rules (`routing.enabled: false`).
NORULES_ARMS = ("rose-norules", "rose-seeded-norules")
#: The ROSE arms that ask the second pass whenever the model decides
#: (`recall.second_look: always`); by default a store that fits one question gets none.
TWOPASS_ARMS = ("rose-twopass", "rose-seeded-twopass")
#: The ROSE arms whose agent may pull through the MCP server's tools (`rose.sim.pulling`).
PULL_ARMS = ("rose-pull", "rose-seeded-pull")
STAGE_FIGURES = ["background_calls_per_session", *(k for keys in FIGURES.values() for k in keys)]
SERVE = {"relevant": 0, "maybe": 1, "descend": 2}  # verdicts a filter serves, in this order

#: (name, what is compared, the bound): ARCHITECTURE.md's targets on the simulated world.
TARGETS = (
    ("success within 1 point of flat", "success_vs_flat", -0.01),
    ("success within 1 point of topk", "success_vs_topk", -0.01),
    ("tokens ≤ 40% of flat's", "tokens_vs_flat", 0.40),
    ("tokens ≤ 60% of topk's", "tokens_vs_topk", 0.60),
    ("precision ≥ 60%", "precision", 0.60),
    ("≤ 1 recall call per prompt", "model_calls_per_prompt", 1.0),
    ("≤ 3 points lost under 10% noise", "success_vs_noise10", -0.03),
)
_AT_LEAST = {"success_vs_flat", "success_vs_topk", "precision", "success_vs_noise10"}


# -- the arms that are not ROSE ------------------------------------------------------------


class NoMemory:
    def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
        return {"block": ""}

    def stop(self, session: str, transcript: str = "") -> dict[str, Any]:
        return {}

    def end(self, session: str, transcript: str = "") -> dict[str, Any]:
        return {}


class Served:
    """Lessons read from a seeded store, rendered as the prompt hook renders them."""

    def __init__(self, store: Store):
        rows = [r["lesson"] for r in store.read("lesson_get", ids=_lesson_ids(store))]
        self.items = sorted((recall_view.item(r) for r in rows), key=lambda i: i["id"])
        self.head = recall_view.render("inject/head")
        self.tail = recall_view.render("inject/tail")
        self.budget = store.config.recall.max_pack_tokens

    def block(self, items: list[dict]) -> str:
        return "\n\n".join([self.head, *(i["full"] for i in items), self.tail]) if items else ""


def _lesson_ids(store: Store) -> list[str]:
    return [r["id"] for r in store.read("lessons_all") if r["status"] in ("active", "disputed")]


class Flat:
    def __init__(self, served: Served):
        self.text = served.block([i for i in served.items if i["level"] == 0])

    def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
        return {"block": self.text if first else ""}  # a reply: every lesson is in context

    def stop(self, session: str, transcript: str = "") -> dict[str, Any]:
        return {}

    def end(self, session: str, transcript: str = "") -> dict[str, Any]:
        return {}


class Filter:
    """One relevance judgement over a fixed set of lessons, then the chosen ones in full."""

    def __init__(self, served: Served, judge: Judge, tally: Tally, *, level0_only: bool):
        self.served = served
        self.items = [i for i in served.items if i["level"] == 0 or not level0_only]
        self.judge = judge
        self.tally = tally

    def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
        offered = [{"id": i["id"], "title": i["title"], "gist": i["gist"]} for i in self.items]
        answer = self.judge.ask("relevance", {"prompt": text, "candidates": offered})
        rank = {v.id: SERVE[v.verdict] for v in answer.verdicts if v.verdict in SERVE}
        chosen = sorted((i for i in self.items if i["id"] in rank), key=lambda i: rank[i["id"]])
        room = self.served.budget - tokens.count(self.served.head) - tokens.count(self.served.tail)
        block = self.served.block(_within(chosen, room))
        calls, spent = self.tally.take()
        return {"block": block, "calls": calls, "model_tokens": spent}

    def stop(self, session: str, transcript: str = "") -> dict[str, Any]:
        return {}

    def end(self, session: str, transcript: str = "") -> dict[str, Any]:
        return {}


def _within(items: list[dict], room: int) -> list[dict]:
    """The chosen lessons in order while they fit `room` (at least one), as recall packs."""
    out: list[dict] = []
    used = 0
    for item in items:
        if used + item["full_tokens"] <= room or not out:
            out.append(item)
            used += item["full_tokens"]
    return out


# -- running one seed ----------------------------------------------------------------------


def run_seed(
    seed: int, arms: list[str], *, sessions: int, noise: float, size: str, work: Path
) -> dict[str, tuple[list[scoreboard.Record], dict[str, Any]]]:
    """Every arm on seed `seed`'s world and stream: (records, the harness's figures) each."""
    world = World.generate(seed, size=size)
    lessons = scoreboard.seed_lessons(world)
    out: dict[str, tuple[list[scoreboard.Record], dict[str, Any]]] = {}

    def play(host: Any) -> list[scoreboard.Record]:
        return scoreboard.run(world, host, sessions=sessions, seed=seed)

    # Figures of ROSE's store and stages: an arm that is not ROSE has none of them.
    absent = dict.fromkeys(["apexes", "max_level", "episodes", *STAGE_FIGURES])
    if "none" in arms:
        out["none"] = (play(NoMemory()), {**absent, "lessons": 0})
    plain = [a for a in arms if a in ("flat", "topk", "collapsed")]
    if plain:
        model = simulated_model(seed=seed, size=size, noise=noise)
        with HookHost(work / f"seed{seed}-lessons", model=model, lessons=lessons) as seeded:
            served = Served(Store.open(seeded.folder))
        for arm in plain:
            host: Any = Flat(served)
            if arm != "flat":
                tally = Tally(work / f"seed{seed}-{arm}-events.jsonl")
                judge = Judge(
                    SimulatedBackend(world, seed=seed, noise=noise),
                    cache_path=work / f"seed{seed}-{arm}-cache",
                    events_path=tally.path,
                    model_name=model,
                )
                host = Filter(served, judge, tally, level0_only=arm == "topk")
            out[arm] = (play(host), {**absent, "lessons": len(served.items)})
    for arm in (a for a in arms if a.startswith("rose")):
        model = simulated_model(seed=seed, size=size, noise=NOISE_ARMS.get(arm, noise))
        start = lessons if arm in SEEDED_ARMS else ()
        settings = {"recall.strategy": STRATEGY_ARMS[arm]} if arm in STRATEGY_ARMS else {}
        if arm in NORULES_ARMS:
            settings["routing.enabled"] = "false"
        if arm in TWOPASS_ARMS:
            settings["recall.second_look"] = "always"
        folder = work / f"seed{seed}-{arm}"
        pull = arm in PULL_ARMS
        with HookHost(folder, model=model, lessons=start, settings=settings, pull=pull) as rose:
            growth = Growth(rose, every=max(1, sessions // 4))
            records = play(growth)
            figures = {**rose.metrics(), "rules_growth": growth.points}
        out[arm] = (records, figures)
    return out


class Growth:
    """A ROSE host, counted as the store grows: after every `every` sessions, the selection
    rules and the lessons (`rose route`'s ratio), so the bet that rules track kinds of
    work, not lessons, is measured (the ratio should fall)."""

    def __init__(self, host: HookHost, every: int):
        self.host, self.every, self.ended = host, every, 0
        self.points: list[dict[str, Any]] = []

    def prompt(self, session: str, text: str, *, first: bool = True) -> Mapping[str, Any]:
        return self.host.prompt(session, text, first=first)

    def stop(self, session: str, transcript: str = "") -> Mapping[str, Any]:
        return self.host.stop(session, transcript)

    def tools(self, session: str) -> Any:
        return self.host.tools(session)

    def end(self, session: str, transcript: str = "") -> Mapping[str, Any]:
        answer = self.host.end(session, transcript)
        self.ended += 1
        if self.ended % self.every == 0:
            n_rules, n_lessons = route.counts(self.host.store())
            self.points.append({"sessions": self.ended, "rules": n_rules, "lessons": n_lessons})
        return answer


# -- pooling, targets, printing ------------------------------------------------------------


def pool(
    per_seed: dict[int, dict[str, tuple[list[scoreboard.Record], dict[str, Any]]]],
    arms: list[str],
) -> dict[str, dict[str, Any]]:
    """Each arm's figures over every seed; harness figures averaged, `store` dropped."""
    out: dict[str, dict[str, Any]] = {}
    for arm in arms:
        runs = [per_seed[s][arm][0] for s in per_seed]
        harness = _average([per_seed[s][arm][1] for s in per_seed])
        harness["store"] = None
        if "timeouts" in harness:  # a count over the whole run, not a mean
            harness["timeouts"] = sum(per_seed[s][arm][1]["timeouts"] for s in per_seed)
        figures = scoreboard.metrics(runs, harness)
        if "none" in arms:
            worse = [
                f"{s}:{t}"
                for s in per_seed
                for t in scoreboard.worse_than(per_seed[s][arm][0], per_seed[s]["none"][0])
            ]
            figures["worse_than_none"] = len(worse)
            figures["worse_tasks"] = worse
        figures["per_seed"] = {
            str(s): scoreboard.pooled([per_seed[s][arm][0]])["success_rate"] for s in per_seed
        }
        if arm.startswith("rose"):  # each seed's own counts: an average of counts says less
            figures["rules_growth"] = {
                str(s): per_seed[s][arm][1]["rules_growth"] for s in per_seed
            }
        out[arm] = figures
    return out


def _average(dicts: list[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in dicts[0]:
        values = [d.get(key) for d in dicts]
        nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        out[key] = (
            round(sum(nums) / len(nums), 4) if nums and len(nums) == len(values) else values[0]
        )
    return out


def targets(arms: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """ROSE's figure against each target: met, missed, or why it cannot be measured yet."""
    rose = arms.get("rose")
    if rose is None:
        return []

    def gap(other: str, key: str, ratio: bool) -> float | None:
        a, b = rose.get(key), (arms.get(other) or {}).get(key)
        if a is None or b is None:
            return None
        if ratio:
            return round(a / b, 4) if b else None
        return round(a - b, 4)

    figures: dict[str, float | None] = {
        "success_vs_flat": gap("flat", "success_rate", False),
        "success_vs_topk": gap("topk", "success_rate", False),
        "tokens_vs_flat": gap("flat", "tokens_per_prompt", True),
        "tokens_vs_topk": gap("topk", "tokens_per_prompt", True),
        "precision": rose.get("precision"),
        "model_calls_per_prompt": rose.get("model_calls_per_prompt"),
        "success_vs_noise10": None,
    }
    noisy = arms.get("rose-noise10")
    if noisy and noisy.get("success_rate") is not None and rose.get("success_rate") is not None:
        figures["success_vs_noise10"] = round(noisy["success_rate"] - rose["success_rate"], 4)
    out = []
    for name, key, bound in TARGETS:
        value = figures[key]
        if value is None:
            why = "nothing was served" if key == "precision" else "an arm it needs was not run"
            verdict = f"not measured ({why})"
        else:
            met = value >= bound if key in _AT_LEAST else value <= bound
            verdict = "met" if met else "missed"
        out.append(
            {"target": name, "measure": key, "figure": value, "bound": bound, "verdict": verdict}
        )
    return out


def _shown(measure: str, value: float | None) -> str:
    """A target's figure as it reads: points of success, a share of tokens, a rate, calls."""
    if value is None:
        return "—"
    if measure.startswith("success"):
        return f"{value * 100:+.1f} pts"
    if measure.startswith("tokens") or measure == "precision":
        return f"{value:.1%}"
    return f"{value:.2f}"


def _fmt(key: str, value: Any) -> str:
    if value is None:
        return "—"
    if key in (
        "success_rate",
        "recall",
        "precision",
        "selection_precision",
        "selection_recall",
        "retry_success_rate",
        "counterfactual_agreement",
        "missed_success_rate",
    ):
        return f"{value:.1%}"
    if key in (
        "model_calls_per_prompt",
        "background_calls_per_session",
        "pulls_per_prompt",
        "pull_model_calls_per_prompt",
    ):
        return f"{value:.2f}"
    return f"{value:,.0f}"


COLUMNS = (
    ("success", "success_rate"),
    ("tokens/prompt", "tokens_per_prompt"),
    ("frame", "frame_tokens_per_prompt"),
    ("recall", "recall"),
    ("precision", "precision"),
    ("sel. precision", "selection_precision"),
    ("sel. recall", "selection_recall"),
    ("rules", "rules"),
    ("cf agree", "counterfactual_agreement"),
    ("calls/prompt", "model_calls_per_prompt"),
    ("bg calls/session", "background_calls_per_session"),
    ("model tok/prompt", "model_tokens_per_prompt"),
    ("retry held", "retry_success_rate"),
    ("missed held", "missed_success_rate"),
    ("pulls/prompt", "pulls_per_prompt"),
    ("pulled tok/prompt", "pulled_tokens_per_prompt"),
    ("pull calls/prompt", "pull_model_calls_per_prompt"),
    ("compressed", "compressions_accepted"),
    ("rescues", "rescues"),
    ("worse than none", "worse_than_none"),
)


def render(result: Mapping[str, Any]) -> str:
    p = result["params"]
    head = (
        f"quality · seeds {','.join(map(str, p['seeds']))} · {p['sessions']} sessions each "
        f"(measured from session {p['measured_from']}) · world {p['size']} · noise {p['noise']:.0%}"
    )
    rows = [["arm", *(c for c, _ in COLUMNS)]]
    for arm, f in result["arms"].items():
        rows.append([arm, *(_fmt(k, f.get(k)) for _, k in COLUMNS)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [head, ""]
    for r in rows:
        lines.append(
            "  ".join(
                [r[0].ljust(widths[0])]
                + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
            )
        )
    lines += _growth(result["arms"])
    late = {arm: f["timeouts"] for arm, f in result["arms"].items() if "timeouts" in f}
    if late:
        lines += ["", _timeouts_line(late)]
    if result["targets"]:
        lines += ["", "targets (ROSE, after warm-up)"]
        for t in result["targets"]:
            figure = _shown(t["measure"], t["figure"])
            lines.append(f"  {t['target']:<34} {figure:>10}   {t['verdict']}")
    lines += ["", "not built yet (null above): " + ", ".join(p["not_built"])]
    lines.append(f"wall {result['wall_s']:.1f} s")
    return "\n".join(lines)


def _growth(arms: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Selection rules over lessons as each ROSE arm's store grew, seed by seed."""
    lines = []
    for arm, f in arms.items():
        for seed, points in (f.get("rules_growth") or {}).items():
            if any(p["rules"] for p in points):
                steps = " · ".join(
                    f"{p['sessions']}: {p['rules']}/{p['lessons']}"
                    + (f" ({p['rules'] / p['lessons']:.2f})" if p["lessons"] else "")
                    for p in points
                )
                lines.append(f"  {arm} seed {seed}  {steps}")
    if not lines:
        return []
    return ["", "selection rules / lessons as the store grew (after N sessions)", *lines]


def _timeouts_line(late: Mapping[str, int]) -> str:
    """Whether any deadline passed (`rose.host.drive.timeouts`): a seeded run repeats only
    when none did."""
    hit = {arm: n for arm, n in late.items() if n}
    if not hit:
        return "timeouts: none (no figure depended on the machine's speed)"
    arms = ", ".join(f"{arm} {n}" for arm, n in hit.items())
    return f"timeouts: {arms}; these arms' figures depended on the machine's speed"


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)  # progress: stdout is the table or the JSON


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated world seeds")
    ap.add_argument("--sessions", type=int, default=40, help="sessions per seed")
    ap.add_argument("--noise", type=float, default=0.0, help="judge noise of the judged arms")
    ap.add_argument("--size", default="default", help="world size: small, default, large")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"of {', '.join(ARMS + OPTIONAL)}")
    ap.add_argument("--out", default=str(HERE / "results"), help="results folder ('' for none)")
    ap.add_argument("--plot", default=None, help="write the PNG here (default: beside the JSON)")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = sorted(set(arms) - set(ARMS + OPTIONAL))
    if unknown or not seeds or args.sessions < 1 or not 0 <= args.noise <= 1:
        ap.error(f"bad arguments (unknown arms: {', '.join(unknown) or 'none'})")
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="rose-quality-"))
    try:
        per_seed = {}
        for seed in seeds:
            _say(f"seed {seed}: {', '.join(arms)}")
            per_seed[seed] = run_seed(
                seed, arms, sessions=args.sessions, noise=args.noise, size=args.size, work=work
            )
    finally:
        from rose.graph import server

        server.stop_under(work)  # the graph servers its stores' opens started
        shutil.rmtree(work, ignore_errors=True)
    pooled = pool(per_seed, arms)
    result = {
        "params": {
            "seeds": seeds,
            "sessions": args.sessions,
            "measured_from": args.sessions // 2 + 1,
            "noise": args.noise,
            "size": args.size,
            "arms": arms,
            "not_built": not_built(),
            "commit": _git("rev-parse", "HEAD") or None,
            "uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no")),
        },
        "arms": pooled,
        "targets": targets(pooled),
        "wall_s": round(time.perf_counter() - started, 2),
    }
    picture = Path(args.plot) if args.plot else None
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        path = out / f"quality-{stamp}.json"
        path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        _say(f"results written to {path}")
        picture = picture or path.with_suffix(".png")
    if picture and plot(result, picture):
        _say(f"plot written to {picture}")
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

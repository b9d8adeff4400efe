"""What memory buys on the simulated world: task success against the tokens it costs, per arm.

    python benchmarks/quality.py [--json] [--seeds 1,2] [--sessions N] [--arms a,b,...]
                                 [--recurrence S] [--discovery P] [--distraction S]
                                 [--noise P] [--size default] [--jobs N] [--out DIR]
                                 [--plot PATH] [--write-table] [--publish RESULT]
                                 [--check-table]

Each seed draws a world (`rose.sim.World`) and a stream of --sessions tasks in it, and
every arm works the same stream with the same simulated agent; only what is injected
differs. How close the world is to real work is three numbers (`rose.sim.realism`, each
0 for off, so the old world is `--recurrence 0 --discovery 0 --distraction 0`): how
often kinds of task recur (a Zipf exponent), the chance the agent finds a missing fact
itself after a failure, and how much a long block costs attention (NoLiMa's curve). The
default arms, like for like with ROSE from an empty store:

- ``none``: nothing is injected;
- ``ceiling``: on each prompt, exactly the needed facts among those taught or found in
  earlier sessions (`rose.sim.hosts.arms.Ceiling`): the best any learner could do;
- ``flat-learned``, ``topk-learned``: the level-0 lessons the ``rose`` arm's store held
  before each session, served whole, or filtered by one `relevance` call within
  `recall.max_pack_tokens` (no compression, no rules): ROSE's knowledge without its
  machinery (asking for either runs ``rose``);
- ``rose``: ROSE as it is, through its real hooks (`rose.sim.hosts.drive`), from an empty store;
  ``rose-norules`` the same writing and following no selection rules;

and those handed the world's lessons (one verbose level-0 lesson per topic): ``flat``
(all of them in full), ``topk`` (filtered), ``rose-seeded``; and ``rose-noise10``, ROSE
with 10 % of the model's judgements wrong. On request: ``collapsed`` (topk's judgement
over every level at once), ``rose-jump`` and ``rose-stepwise`` (descending by
`delta-jump` or `stepwise` instead of `delta-patch`), ``rose-seeded-norules``,
``rose-twopass`` and ``rose-seeded-twopass`` (`recall.second_look: always`),
``rose-noise20``, ``rose-pull`` and ``rose-seeded-pull`` (the agent given the MCP
server's tools: `rose.sim.pulling`).

Every figure is the world's (`rose.sim.hosts.scoreboard`), over one window (the second half of
each stream), pooled over the seeds: first-attempt success with its 95 % interval,
injected tokens per prompt, recall, precision (lessons acted on over lessons in the
block) and selection precision (the same where ROSE's walk chose), success on bridge
tasks, model calls per prompt and per session, the share of retries that held, and each
failed first attempt under one cause (`rose.sim.hosts.causes`; for ROSE, its recall asked again
with and without rules: `_selection.py`). ARCHITECTURE.md's targets are printed beside
the figures with paired 95 % intervals (`_targets.py`); a miss is reported, never an
error. Under the table, ``timeouts`` counts the deadlines that passed in the ROSE arms
(`rose.sim.hosts.drive.timeouts`): a seeded run gives the same figures run to run when it says
none, whatever the machine's load. Seeds run in parallel processes (`--jobs`).

The standing run is the default size (`STANDING`); `--write-table` writes its table into
README.md and benchmarks/README.md, stamped with a fingerprint of the files that decide
its figures (`_table.py`), `--publish RESULT` does so for a saved result, and
`--check-table` says whether the published table is current. Results are written to
--out (default benchmarks/results/) as JSON with the parameters and the commit, and
beside it a PNG of tokens per prompt and success over the stream, one line per arm
(`_plot.py`; needs matplotlib, `pip install 'rose-memory[bench]'`, else one line says
so). `--plot PATH` puts the PNG there instead; `--out ''` writes no JSON, and no PNG
unless `--plot` asks for one.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import _selection  # beside this script, which is run as a file
import _table
import _targets
from _plot import plot

from rose import tokens
from rose.errors import RoseError
from rose.judge.calls import Judge
from rose.loop.selection import route
from rose.model.registry import simulated_model
from rose.sim import SimulatedBackend, World
from rose.sim.hosts import scoreboard
from rose.sim.hosts.arms import Ceiling, NoMemory
from rose.sim.hosts.causes import Selection
from rose.sim.hosts.drive import FIGURES, HookHost, Tally, framed, not_built
from rose.sim.realism import Realism
from rose.store import view as recall_view
from rose.store.facade import Store

HERE = Path(__file__).resolve().parent
ARMS = (
    "none", "ceiling", "flat-learned", "topk-learned", "rose", "rose-norules", "rose-seeded",
    "flat", "topk", "rose-noise10",
)  # fmt: skip
OPTIONAL = (
    "collapsed", "rose-jump", "rose-stepwise", "rose-seeded-norules", "rose-twopass",
    "rose-seeded-twopass", "rose-noise20", "rose-pull", "rose-seeded-pull",
)  # fmt: skip
#: The standing run: its size keeps each paired interval of the targets within a few points
#: and the whole run within 25 minutes on two cores (benchmarks/README.md has its figures).
STANDING = {"seeds": "1,2", "sessions": 100}
#: The arms that serve the level-0 lessons ROSE's own store held before each session: they
#: need the `rose` arm, which runs whenever one of them is asked for.
LEARNED_ARMS = ("flat-learned", "topk-learned")
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

# -- the arms that are not ROSE ------------------------------------------------------------


class Served:
    """Lessons read from a seeded store, rendered as the prompt hook renders them, with the
    store's frame and budget (`lessons` False: the frame and budget alone)."""

    def __init__(self, store: Store, *, lessons: bool = True):
        ids = _lesson_ids(store) if lessons else []
        rows = [r["lesson"] for r in store.read("lesson_get", ids=ids)] if ids else []
        self.items = sorted((recall_view.item(r) for r in rows), key=lambda i: i["id"])
        self.head = recall_view.render("inject/head")
        self.tail = recall_view.render("inject/tail")
        self.budget = store.config.recall.max_pack_tokens

    def block(self, items: list[dict]) -> str:
        return "\n\n".join([self.head, *(i["full"] for i in items), self.tail]) if items else ""


def _lesson_ids(store: Store) -> list[str]:
    return [r["id"] for r in store.read("lessons_all") if r["status"] in ("active", "disputed")]


class Library:
    """The lessons an arm that is not ROSE serves from: a fixed set (the world's), or the
    level-0 lessons ROSE's store held before each session (`snapshots`, one a session, in
    the stream's order: the `-learned` arms)."""

    def __init__(self, served: Served, snapshots: list[list[dict]] | None = None):
        self.served = served
        self.snapshots = snapshots
        self.session = -1

    def next_session(self) -> None:
        self.session += 1

    def items(self) -> list[dict]:
        if self.snapshots is None:
            return self.served.items
        return self.snapshots[self.session] if self.session < len(self.snapshots) else []


class Flat(NoMemory):
    """Every level-0 lesson of the library in full on a session's prompt."""

    def __init__(self, library: Library):
        self.library = library

    def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
        if not first:  # a reply: every lesson is in context
            return {"block": ""}
        self.library.next_session()
        items = [i for i in self.library.items() if i["level"] == 0]
        return {"block": self.library.served.block(items)}

    def explain(self, session: str, text: str, block: str) -> Selection:
        return _selection.of_items(self.library.items(), block)


class Filter(NoMemory):
    """One relevance judgement over the library's lessons, then the chosen ones in full,
    within the budget."""

    def __init__(self, library: Library, judge: Judge, tally: Tally, *, level0_only: bool):
        self.library = library
        self.level0_only = level0_only
        self.judge = judge
        self.tally = tally
        self.chosen: list[str] = []

    def _items(self) -> list[dict]:
        return [i for i in self.library.items() if i["level"] == 0 or not self.level0_only]

    def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
        if first:
            self.library.next_session()
        items = self._items()
        if not items:
            self.chosen = []
            return {"block": ""}
        offered = [{"id": i["id"], "title": i["title"], "gist": i["gist"]} for i in items]
        answer = self.judge.ask("relevance", {"prompt": text, "candidates": offered})
        rank = {v.id: SERVE[v.verdict] for v in answer.verdicts if v.verdict in SERVE}
        chosen = sorted((i for i in items if i["id"] in rank), key=lambda i: rank[i["id"]])
        self.chosen = [i["id"] for i in chosen]
        served = self.library.served
        room = served.budget - tokens.count(served.head) - tokens.count(served.tail)
        block = served.block(_within(chosen, room))
        calls, spent = self.tally.take()
        return {"block": block, "calls": calls, "model_tokens": spent}

    def explain(self, session: str, text: str, block: str) -> Selection:
        return _selection.of_items(self._items(), block, self.chosen)


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


Ran = tuple[list[scoreboard.Record], dict[str, Any]]  # an arm's records, its harness figures


def run_seed(
    seed: int,
    arms: list[str],
    *,
    sessions: int,
    noise: float,
    size: str,
    work: Path,
    world_is: Realism,
) -> dict[str, Ran]:
    """Every arm on seed `seed`'s world and stream: (records, the harness's figures) each."""
    one = Seed(seed, sessions=sessions, noise=noise, size=size, work=work, world_is=world_is)
    out: dict[str, Ran] = {}
    if "none" in arms:
        out["none"] = (one.play(NoMemory()), {**ABSENT, "lessons": 0})
    if "ceiling" in arms:
        out["ceiling"] = (one.play(Ceiling(one.world, framed)), {**ABSENT, "lessons": None})
    out.update(one.seeded([a for a in arms if a in ("flat", "topk", "collapsed")]))
    learned = [a for a in arms if a in LEARNED_ARMS]
    snapshots: list[list[dict]] = []
    for arm in (a for a in arms if a.startswith("rose")):
        out[arm] = one.rose(arm, snapshots if arm == "rose" and learned else None)
    out.update(one.learned(learned, snapshots))
    return out


#: Figures of ROSE's store and stages: an arm that is not ROSE has none of them.
ABSENT = dict.fromkeys(["apexes", "max_level", "episodes", *STAGE_FIGURES])


class Seed:
    """One seed's world and stream, and how each kind of arm is run on it."""

    def __init__(
        self, seed: int, *, sessions: int, noise: float, size: str, work: Path, world_is: Realism
    ):
        self.seed, self.sessions, self.noise, self.size = seed, sessions, noise, size
        self.work, self.world_is = work, world_is
        self.world = World.generate(seed, size=size)
        self.lessons = scoreboard.seed_lessons(self.world)
        self.given = {f for d in self.world.lessons() for f in d.facts}  # a seeded arm's start

    def play(self, host: Any, taught: Collection[str] = ()) -> list[scoreboard.Record]:
        began = time.perf_counter()
        records = scoreboard.run(
            self.world,
            host,
            sessions=self.sessions,
            seed=self.seed,
            taught=taught,
            world_is=self.world_is,
        )
        window = scoreboard.measured(records)
        _say(
            f"seed {self.seed}: an arm done in {time.perf_counter() - began:.0f} s "
            f"({sum(r.ok for r in window)}/{len(window)} held in the window)"
        )
        return records

    def judge(self, arm: str, what: str, noise: float) -> Judge:
        """A judge of the world's model for `arm`, with a cache and event log of its own."""
        tally = Tally(self.work / f"seed{self.seed}-{arm}-{what}-events.jsonl")
        return Judge(
            SimulatedBackend(self.world, seed=self.seed, noise=noise),
            cache_path=self.work / f"seed{self.seed}-{arm}-{what}-cache",
            events_path=tally.path,
            model_name=simulated_model(seed=self.seed, size=self.size, noise=noise),
        )

    def _filter(self, arm: str, library: Library, *, level0_only: bool) -> Filter:
        judge = self.judge(arm, "recall", self.noise)
        return Filter(library, judge, Tally(judge.events_path), level0_only=level0_only)

    def seeded(self, arms: list[str]) -> dict[str, Ran]:
        """The arms handed the world's lessons: every one in full, or filtered."""
        if not arms:
            return {}
        model = simulated_model(seed=self.seed, size=self.size, noise=self.noise)
        folder = self.work / f"seed{self.seed}-lessons"
        with HookHost(folder, model=model, lessons=self.lessons) as seeded:
            served = Served(Store.open(seeded.folder))
        out = {}
        for arm in arms:
            host: Any = Flat(Library(served))
            if arm != "flat":
                host = self._filter(arm, Library(served), level0_only=arm == "topk")
            out[arm] = (self.play(host, self.given), {**ABSENT, "lessons": len(served.items)})
        return out

    def rose(self, arm: str, snapshots: list[list[dict]] | None) -> Ran:
        """A ROSE arm through its hooks; with `snapshots`, the level-0 lessons its store held
        before each session are kept there."""
        noise = NOISE_ARMS.get(arm, self.noise)
        model = simulated_model(seed=self.seed, size=self.size, noise=noise)
        start = self.lessons if arm in SEEDED_ARMS else ()
        settings = {"recall.strategy": STRATEGY_ARMS[arm]} if arm in STRATEGY_ARMS else {}
        if arm in NORULES_ARMS:
            settings["routing.enabled"] = "false"
        if arm in TWOPASS_ARMS:
            settings["recall.second_look"] = "always"
        folder = self.work / f"seed{self.seed}-{arm}"
        pull = arm in PULL_ARMS
        with HookHost(folder, model=model, lessons=start, settings=settings, pull=pull) as host:
            asker = functools.cache(lambda: self.judge(arm, "explain", noise))
            every = max(1, self.sessions // 4)
            watched = Watched(host, every=every, snapshots=snapshots, judge=asker)
            records = self.play(watched, self.given if arm in SEEDED_ARMS else ())
            return records, {**host.metrics(), "rules_growth": watched.points}

    def learned(self, arms: list[str], snapshots: list[list[dict]]) -> dict[str, Ran]:
        """The arms serving the level-0 lessons the rose arm's store held before each session."""
        if not arms:
            return {}
        with HookHost(self.work / f"seed{self.seed}-frame", model="") as bare:
            frame = Served(Store.open(bare.folder), lessons=False)  # the frame and budget
        out = {}
        for arm in arms:
            library = Library(frame, snapshots)
            host: Any = Flat(library)
            if arm == "topk-learned":
                host = self._filter(arm, library, level0_only=True)
            lessons = len(snapshots[-1]) if snapshots else 0
            out[arm] = (self.play(host), {**ABSENT, "lessons": lessons})
        return out


class Watched:
    """A ROSE host, watched as it works: after every `every` sessions, the selection rules
    and the lessons (`rose route`'s ratio), so the bet that rules track kinds of work, not
    lessons, is measured (the ratio should fall); before each session, with `snapshots`,
    the level-0 lessons its store held (what the `-learned` arms serve); and for a prompt
    whose attempt fails, what its store held and how its recall chose (`explain`)."""

    def __init__(self, host: HookHost, every: int, snapshots: list[list[dict]] | None,
                 judge: Callable[[], Judge]):  # fmt: skip
        self.host, self.every, self.ended = host, every, 0
        self.points: list[dict[str, Any]] = []
        self.snapshots = snapshots
        self.judge = judge

    def prompt(self, session: str, text: str, *, first: bool = True) -> Mapping[str, Any]:
        if first and self.snapshots is not None:
            self.snapshots.append(_selection.level0_items(self.host.store()))
        return self.host.prompt(session, text, first=first)

    def explain(self, session: str, text: str, block: str) -> Selection:
        return _selection.of_rose(self.host.store(), text, block, self.judge)

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


def _shown(measure: str, value: float | None) -> str:
    """A target's figure as it reads: points of success, a share (of tokens, of the
    ceiling's success), a rate, calls."""
    if value is None:
        return "—"
    if measure in ("success_vs_ceiling", "precision") or "tokens" in measure:
        return f"{value:.1%}"
    if "success" in measure:
        return f"{value * 100:+.1f} pts"
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
        "bridge_success_rate",
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
    ("95% interval", "success_ci"),
    ("tokens/prompt", "tokens_per_prompt"),
    ("recall", "recall"),
    ("precision", "precision"),
    ("sel. precision", "selection_precision"),
    ("bridge", "bridge_success_rate"),
    ("bridge n", "bridge_attempts"),
    ("calls/prompt", "model_calls_per_prompt"),
    ("bg calls/session", "background_calls_per_session"),
    ("retry held", "retry_success_rate"),
    ("rules", "rules"),
    ("compressed", "compressions_accepted"),
    ("rescues", "rescues"),
    ("worse than none", "worse_than_none"),
)
#: Shown only when an arm that pulls was run.
PULL_COLUMNS = (
    ("missed held", "missed_success_rate"),
    ("pulls/prompt", "pulls_per_prompt"),
    ("pulled tok/prompt", "pulled_tokens_per_prompt"),
    ("pull calls/prompt", "pull_model_calls_per_prompt"),
)
#: The causes of failure as the table heads them (`rose.sim.hosts.causes.CAUSES`, in order).
CAUSE_HEADS = {
    "never_taught": "never taught",
    "not_stored": "not stored",
    "not_recalled_relevance": "relevance",
    "not_recalled_rule": "rule",
    "not_recalled_budget": "budget",
    "not_recalled_title_gist": "title/gist",
    "compressed_away": "compressed away",
    "not_applied": "not applied",
}


def _grid(header: list[str], rows: list[list[str]]) -> list[str]:
    """Rows under `header`, the first column left-aligned and the rest right-aligned."""
    every = [header, *rows]
    widths = [max(len(r[i]) for r in every) for i in range(len(header))]
    return [
        "  ".join(
            [r[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True))]
        )
        for r in every
    ]


def _ci(ci: list[float] | None, pct: bool = True) -> str:
    if ci is None:
        return "—"
    return f"{ci[0]:.1%}–{ci[1]:.1%}" if pct else f"{ci[0]:.2f}–{ci[1]:.2f}"


def render(result: Mapping[str, Any]) -> str:
    p, w = result["params"], result["window"]
    seeds = ",".join(map(str, w["seeds"]))
    head = (
        f"quality · seeds {seeds} · {p['sessions']} sessions each · every figure over sessions "
        f"{w['from_session']}-{w['to_session']} of each stream · world {p['size']} · noise "
        f"{p['noise']:.0%}"
    )
    arms = result["arms"]
    columns = COLUMNS + (PULL_COLUMNS if any(a in PULL_ARMS for a in arms) else ())
    rows = [
        [arm, *(_ci(f.get(k)) if k == "success_ci" else _fmt(k, f.get(k)) for _, k in columns)]
        for arm, f in arms.items()
    ]
    lines = [head, "", *_grid(["arm", *(c for c, _ in columns)], rows)]
    causes = [
        [arm, *(str((f.get("failures_by_cause") or {}).get(k, "—")) for k in CAUSE_HEADS)]
        for arm, f in arms.items()
    ]
    lines += ["", "failed first attempts, by cause (the first that applies, in this order)"]
    lines += _grid(["arm", *CAUSE_HEADS.values()], causes)
    lines += _growth(arms)
    late = {arm: f["timeouts"] for arm, f in arms.items() if "timeouts" in f}
    if late:
        lines += ["", _timeouts_line(late)]
    if any(t["figure"] is not None for t in result["targets"]):
        lines += ["", "targets (ARCHITECTURE.md), paired 95% intervals over the same sessions"]
        for t in result["targets"]:
            figure = _shown(t["measure"], t["figure"])
            ci = t.get("ci")
            span = f"[{_shown(t['measure'], ci[0])}, {_shown(t['measure'], ci[1])}]" if ci else ""
            sure = (
                "" if t["figure"] is None else " (resolved)" if t["resolved"] else " (within noise)"
            )
            lines.append(f"  {t['target']:<34} {figure:>9} {span:>22}   {t['verdict']}{sure}")
    lines += ["", "not built yet (null above): " + (", ".join(p["not_built"]) or "nothing")]
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
    """Whether any deadline passed (`rose.sim.hosts.drive.timeouts`): a seeded run repeats only
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
    ap.add_argument("--seeds", default=STANDING["seeds"], help="comma-separated world seeds")
    ap.add_argument("--sessions", type=int, default=STANDING["sessions"], help="sessions per seed")
    ap.add_argument("--noise", type=float, default=0.0, help="judge noise of the judged arms")
    ap.add_argument("--size", default="default", help="world size: small, default, large")
    real = Realism()
    ap.add_argument(
        "--recurrence", type=float, default=real.recurrence,
        help="Zipf exponent of how often each kind of task recurs (0: uniform)",
    )  # fmt: skip
    ap.add_argument(
        "--discovery", type=float, default=real.discovery,
        help="chance the agent finds a missing fact itself after a failure (0: never)",
    )  # fmt: skip
    ap.add_argument(
        "--distraction", type=float, default=real.distraction,
        help="scale of the attention a long block costs (1: NoLiMa's curve; 0: free)",
    )  # fmt: skip
    ap.add_argument("--arms", default=",".join(ARMS), help=f"of {', '.join(ARMS + OPTIONAL)}")
    ap.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="seeds run at once (processes)"
    )
    ap.add_argument("--out", default=str(HERE / "results"), help="results folder ('' for none)")
    ap.add_argument("--plot", default=None, help="write the PNG here (default: beside the JSON)")
    ap.add_argument(
        "--keep", metavar="DIR", default=None,
        help="work in DIR and keep its stores, caches and event logs (for `rose trace`)",
    )  # fmt: skip
    ap.add_argument(
        "--write-table",
        action="store_true",
        help="publish the run's table in README.md and benchmarks/README.md, stamped",
    )
    ap.add_argument(
        "--publish", metavar="RESULT", help="publish the table of a saved result (no run)"
    )
    ap.add_argument(
        "--check-table",
        action="store_true",
        help="say whether the published table is current (exit 1 when stale); no run",
    )
    args = ap.parse_args(argv)
    if args.check_table:
        current, message = _table.check(_table.ROOT)
        print(message)
        return 0 if current else 1
    if args.publish:
        return _publish(json.loads(Path(args.publish).read_text(encoding="utf-8")))
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    try:
        world_is = Realism(args.recurrence, args.discovery, args.distraction)
    except ValueError as exc:
        ap.error(str(exc))
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = sorted(set(arms) - set(ARMS + OPTIONAL))
    if unknown or not seeds or args.sessions < 1 or not 0 <= args.noise <= 1:
        ap.error(f"bad arguments (unknown arms: {', '.join(unknown) or 'none'})")
    if any(a in LEARNED_ARMS for a in arms) and "rose" not in arms:
        _say("the -learned arms serve what the rose arm's store held: rose runs too")
        arms.insert(0, "rose")
    started = time.perf_counter()
    fingerprint = _table.fingerprint(_table.ROOT)  # what the figures are made from
    if args.keep:
        work = Path(args.keep).resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="rose-quality-"))
    try:
        _say(f"seeds {', '.join(map(str, seeds))}: {', '.join(arms)}")
        run = functools.partial(
            run_seed, arms=arms, sessions=args.sessions, noise=args.noise, size=args.size,
            work=work, world_is=world_is,
        )  # fmt: skip
        if min(args.jobs, len(seeds)) > 1:  # each seed is a world and stores of its own
            spawn = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(min(args.jobs, len(seeds)), mp_context=spawn) as workers:
                per_seed = dict(zip(seeds, workers.map(run, seeds), strict=True))
        else:
            per_seed = {seed: run(seed) for seed in seeds}
    finally:
        from rose.graph import server

        server.stop_under(work)  # the graph servers its stores' opens started
        if args.keep:
            _say(f"stores kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    records = {s: {a: per_seed[s][a][0] for a in arms} for s in per_seed}
    keys = _targets.clusters(records)  # each window position's stream and task
    pooled = pool(per_seed, arms)
    for arm, rows in _targets.window(records).items():  # sessions of one task move together
        pooled[arm]["success_ci"] = _targets.rate_interval(rows, keys)
    result = {
        "params": {
            "seeds": seeds,
            "sessions": args.sessions,
            "measured_from": args.sessions // 2 + 1,
            "noise": args.noise,
            "size": args.size,
            **dataclasses.asdict(world_is),  # recurrence, discovery, distraction
            "arms": arms,
            "not_built": not_built(),
            "commit": _git("rev-parse", "HEAD") or None,
            "fingerprint": fingerprint,
            "uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no")),
        },
        "arms": pooled,
        "window": {
            "from_session": args.sessions // 2 + 1,
            "to_session": args.sessions,
            "seeds": seeds,
            "attempts": len(seeds) * (args.sessions - args.sessions // 2),
        },
        "targets": _targets.assess(_targets.window(records), keys=keys),
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
    return _publish(result) if args.write_table else 0


def _publish(result: Mapping[str, Any]) -> int:
    """Write `result`'s table where README.md and benchmarks/README.md show it."""
    try:
        stamp = _table.write(result, _table.ROOT)
    except RoseError as exc:
        _say(str(exc))
        return 1
    _say(f"table written to {', '.join(_table.FILES)} (fingerprint {stamp.fingerprint})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

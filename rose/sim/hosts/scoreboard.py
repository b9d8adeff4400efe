"""The scoreboard's world side: a seeded stream of tasks worked through a host, and the score.

A *host* is whatever serves memory: ROSE through its real hooks (`rose.sim.hosts.drive`), or a
benchmark arm (no memory, every lesson in full, relevance filtering alone). For each
session the host is given the user's prompt and answers with the block it injects; the
simulated agent works the task from that block, the user steers after a failure, and the
host is told the session ended. The host never learns how the work went from the world:
whatever it records, it records from what its own hooks saw.

Every figure computed here is the world's, which alone knows each task's needs:

- ``success_rate``: the agent's first attempt held, before any correction from the user;
- ``tokens_per_prompt``: what the injected block costs (`rose.tokens`, as the harness
  counts), frame included; ``frame_tokens_per_prompt``: the part of it that is not a
  lesson's own text (preamble, tags, ids, titles);
- ``recall``: of the facts the tasks needed and the agent did not already know, the share
  whose true variant was in the block; ``selection_recall``: the same over the prompts
  where the host's recall chose among its lessons (its answer's ``recall`` is "judged");
- ``missed_success_rate``: of the prompts whose block lacked the true variant of a fact
  the task needed, the share whose first attempt held anyway (only pulling can do that);
- ``pulls_per_prompt``, ``pulled_tokens_per_prompt``: the calls the agent made to the
  memory's tools during its first attempt (`recall`, `show`; not its `used` reports) and
  the tokens of what they answered, which it read; ``pull_model_calls_per_prompt``: the
  model calls the host says those answers cost (a `recall` that had to choose).

- ``precision``: of the lessons the block held (in any form), the share the first attempt
  acted on; ``selection_precision``: the same over the prompts where the host's recall
  chose among its lessons;
- ``success_ci``: the 95 % interval of ``success_rate``; ``bridge_success_rate`` over the
  ``bridge_attempts``, the tasks needing a topic their prompt never names;
- ``failures_by_cause``: each failed first attempt under one cause (`rose.sim.hosts.causes`).

The host adds what it can see of itself (model calls, lessons, episodes, the figures of
each stage), through `metrics`. Every rate is measured over one window, the second half of
the stream, after warm-up (`measured_from`); the trend over the whole of it (`over_time`).
A host that offers the memory's tools has ``tools(session)``: a callable of (tool,
arguments) answering ``{"text", "calls", "model_tokens"}``; the agent then reads the text
(`rose.sim.pulling`).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rose import tokens
from rose.sim import parse, realism
from rose.sim.agent import Agent, Outcome, Session
from rose.sim.hosts import causes
from rose.sim.hosts.transcript import claude_code
from rose.sim.markers import strip
from rose.sim.world import Task, World

#: The figures every scoreboard reports, in this order; None where a stage is not built yet.
KEYS = (
    "sessions",
    "success_rate",
    "tokens_per_prompt",
    "frame_tokens_per_prompt",
    "precision",
    "counterfactual_agreement",
    "recall",
    "selection_precision",
    "selection_recall",
    "model_calls_per_prompt",
    "background_calls_per_session",
    "model_tokens_per_prompt",
    "lessons",
    "minted",
    "apexes",
    "max_level",
    "compressions_accepted",
    "compressions_rejected",
    "rescues",
    "merges",
    "conflicts",
    "rules",
    "routing_rules",
    "held_out_pass_rate",
    "episodes",
    "store",
)


class Host(Protocol):
    """What serves memory to the simulated agent, one session at a time.

    `prompt` answers with ``{"block": the injected text, "calls": model calls made on the
    prompt's path, "model_tokens": their simulated tokens}`` and, from a host that selects,
    ``"recall": "judged"`` when it chose among its lessons (`first`: the session's first
    prompt; else the user's reply after a failure). `stop` is told a turn ended, with the
    transcript so far, and `end` that the session did, with all of it (Claude Code's JSONL,
    as the host would have written it); both answer with the counts for the work they did
    (``calls``, ``model_tokens``).
    """

    def prompt(self, session: str, text: str, *, first: bool = True) -> Mapping[str, Any]: ...

    def stop(self, session: str, transcript: str) -> Mapping[str, Any]: ...

    def end(self, session: str, transcript: str) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Record:
    """One session as the world saw it."""

    index: int
    task: str
    ok: bool  # the first attempt held, without the user's correction
    steered: bool  # the user replied to a failure
    retried: bool  # the user replied to a failure only that it was not right
    rescued: bool  # ... and the second attempt held, with what the host injected with it
    attempts: int  # the agent's attempts (the user's prompt, then one a reply)
    tokens: int
    frame: int
    lessons: int  # lesson pieces in the block (in full or as reminders)
    needed: int  # facts the task needed that the agent did not already know
    present: int  # of those, the ones whose true variant the block held
    calls: int
    model_tokens: int
    background_calls: int
    selected: bool = False  # the host's recall chose among its lessons (the walk ran)
    pulls: int = 0  # calls to the memory's tools that read (recall, show), first attempt
    pulled_tokens: int = 0  # the tokens of what they answered
    pull_calls: int = 0  # the model calls the host says they cost
    reports: int = 0  # `used` reports the agent made in its first attempt
    bridge: bool = False  # the task needs a topic its prompt never names
    served: int = 0  # lessons the block held (in any form)
    used: int = 0  # of those, the ones the first attempt acted on
    cause: str = ""  # why the first attempt failed (`rose.sim.hosts.causes`); "" when it held
    discovered: int = 0  # facts the agent found by itself after its first attempt failed


_NONE = Outcome(False, "", (), ())  # the outcome of a session not yet over


def stream(world: World, sessions: int, seed: int, recurrence: float = 0.0) -> list[Task]:
    """The seeded order tasks arrive in: drawn with replacement, so work recurs; with
    `recurrence`, from a Zipf distribution over a seeded ranking of the tasks
    (`rose.sim.realism`), else uniformly."""
    rng = random.Random(f"stream:{seed}")
    if not recurrence:
        return [rng.choice(world.tasks) for _ in range(sessions)]
    weights = realism.zipf_weights(len(world.tasks), recurrence)
    ranked = _ranking(world, seed, weights)
    return rng.choices(ranked, weights=weights, k=sessions)


def _ranking(world: World, seed: int, weights: Sequence[float]) -> list[Task]:
    """The tasks from most to least frequent: seeded, with the bridge tasks placed so that
    they get their share of the world's tasks in the draws too (each rank goes to whichever
    kind keeps the bridges' share of the weight so far nearest that share): left to a
    shuffle, a stream whose few frequent tasks are all of one kind holds few bridges or
    many."""
    rng = random.Random(f"ranks:{seed}")
    bridges = [t for t in world.tasks if t.hidden]
    bridges = rng.sample(bridges, len(bridges))
    others = [t for t in world.tasks if not t.hidden]
    others = rng.sample(others, len(others))
    share = len(bridges) / len(world.tasks)
    out: list[Task] = []
    held = total = 0.0
    for w in weights:
        total += w
        closer = abs(held + w - share * total) < abs(held - share * total)
        if bridges and (closer or not others):
            out.append(bridges.pop())
            held += w
        else:
            out.append(others.pop())
    return out


def seed_lessons(world: World) -> list[dict[str, str]]:
    """The lessons a person would have written once every topic was learnt: one per topic,
    in full (level 0), as id, title, gist, family and body.

    The ids are fixed by the world, as a shared store's are by its files: the model's
    prompts name lessons by id, and its (noisy) answers are drawn from its prompts, so a
    rerun of the same seed sees the same answers.
    """
    return [
        {
            "id": "n_"
            + hashlib.sha256(f"world {world.seed}: {d.family}".encode()).hexdigest()[:20],
            "title": d.title,
            "gist": d.gist,
            "family": d.family,
            "body": d.body,
        }
        for d in world.lessons()
    ]


def plain_prompt(task: Task) -> str:
    """A task's prompt as a person would type it: without the world's bookkeeping marker."""
    return strip(task.prompt)


def frame_tokens(block: str) -> int:
    """The tokens of `block` that are not lesson text: preamble, tags, ids and titles."""
    if not block:
        return 0
    content = 0
    for form, _lid, text in parse.injected(block):
        if form == "lesson":
            lines = text.strip("\n").splitlines()
            if lines and lines[0].startswith("# "):
                lines = lines[1:]  # the title is a label, not the lesson
            content += tokens.count("\n".join(lines).strip())
        elif form == "reminder":
            content += tokens.count(text.partition(": ")[2] or text)
    return max(0, tokens.count(block) - content)


def run(
    world: World,
    host: Host,
    *,
    sessions: int,
    seed: int = 0,
    decay: float = 0.05,
    progress: Callable[[int], None] | None = None,
    taught: Iterable[str] = (),
    world_is: realism.Realism = realism.OFF,
) -> list[Record]:
    """Work `sessions` tasks of the seeded stream through `host`; one record a session.

    `taught`: the facts the arm starts with (a seeded store's); each session adds what the
    user stated in it. A host with ``brief(task, taught)`` (the ceiling: an oracle) is told
    the task and what was taught before it ahead of the prompt; a host with
    ``explain(session, prompt, block)`` says what it held and how it chose
    (`rose.sim.hosts.causes.Selection`) for each prompt whose first attempt fails. `world_is`:
    how close the world is to real work (`rose.sim.realism`; the default is the old world,
    the benchmark and the demo pass `Realism()`).
    """
    agent = Agent(
        world,
        seed=seed,
        decay=decay,
        discovery=world_is.discovery,
        distraction=world_is.distraction,
    )
    known = world.known
    learnt = set(taught)
    brief = getattr(host, "brief", None)
    explain = getattr(host, "explain", None)
    out: list[Record] = []
    for i, task in enumerate(stream(world, sessions, seed, world_is.recurrence)):
        sid = f"sim-{seed}-{i:04d}"
        cwd = f"/work/{world.seed}"
        if brief is not None:
            brief(task, frozenset(learnt))
        served = host.prompt(sid, plain_prompt(task))
        block = str(served.get("block") or "")
        later = _Replies(host, task, sid, cwd)
        offered = getattr(host, "tools", None)
        client = offered(sid) if offered is not None else None
        tools = Ledger(client) if client is not None else None
        selection = None  # asked before the session: its hooks may change the store
        if explain is not None and (tools is not None or not agent.solve(task, block).ok):
            selection = explain(sid, plain_prompt(task), block)
        session = agent.session(task, block, follow_up=later, tools=tools, key=sid)
        cause = causes.of_attempt(world, task, session.first, block, learnt, selection)
        learnt |= causes.taught(world, session.transcript)
        in_block = causes.lessons_in(block)
        first = session.first.pulls
        reading = [p for p in first if p.tool in ("recall", "show")]
        ended = host.end(sid, claude_code(session, session_id=sid, cwd=cwd))
        held = set(world.facts_in(block))
        needed = [f for f in task.needs if f not in known]
        out.append(
            Record(
                index=i,
                task=task.id,
                ok=session.first.ok,
                steered=session.steered,
                retried=session.retried,
                # the user's "not right" alone was enough: one reply, and it held
                rescued=session.retried and session.replies == 1 and session.outcome.ok,
                attempts=session.attempts,
                tokens=tokens.count(block),
                frame=frame_tokens(block),
                lessons=sum(1 for form, _, _ in parse.injected(block) if form != "loose"),
                needed=len(needed),
                present=sum(1 for f in needed if f in held),
                calls=int(served.get("calls", 0)),
                model_tokens=int(served.get("model_tokens", 0)),
                background_calls=int(ended.get("calls", 0)) + later.calls,
                selected=served.get("recall") == "judged",
                pulls=len(reading),
                pulled_tokens=sum(tokens.count(p.text) for p in reading),
                pull_calls=tools.calls(len(first)) if tools is not None else 0,
                reports=sum(p.tool == "used" for p in first),
                bridge=bool(task.hidden),
                served=len(in_block),
                used=sum(1 for lid in session.first.used if lid in in_block),
                cause=cause,
                discovered=len(session.discovered),
            )
        )
        if progress is not None:
            progress(1)
    return out


class _Replies:
    """The host's turns after a failure: the turn's Stop with the transcript so far, then the
    user's reply as a prompt; what the host injected with it goes to the next attempt."""

    def __init__(self, host: Host, task: Task, session: str, cwd: str):
        self.host, self.task, self.session, self.cwd = host, task, session, cwd
        self.calls = 0  # the model calls they made, the stops' and the replies' prompts'

    def __call__(self, so_far: str, reply: str) -> str:
        partial = Session(self.task, _NONE, _NONE, False, "", so_far)
        transcript = claude_code(partial, session_id=self.session, cwd=self.cwd)
        stopped = self.host.stop(self.session, transcript)
        answer = self.host.prompt(self.session, strip(reply), first=False)
        self.calls += int(stopped.get("calls", 0)) + int(answer.get("calls", 0))
        return str(answer.get("block") or "")


class Ledger:
    """The host's tools as the agent calls them (text back), keeping each call's cost."""

    def __init__(self, client: Callable[[str, Mapping[str, Any]], Mapping[str, Any]]):
        self.client = client
        self.costs: list[int] = []  # model calls, one entry a tool call, in order

    def __call__(self, tool: str, arguments: Mapping[str, Any]) -> str:
        answer = self.client(tool, arguments)
        self.costs.append(int(answer.get("calls", 0)))
        return str(answer.get("text") or "")

    def calls(self, first: int) -> int:
        """The model calls of the first `first` tool calls."""
        return sum(self.costs[:first])


def measured(records: Sequence[Record]) -> list[Record]:
    """The records after warm-up: the second half of the stream (all of it, for one)."""
    return list(records[len(records) // 2 :])


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _recall(records: Sequence[Record]) -> float | None:
    needed = sum(r.needed for r in records)
    return round(sum(r.present for r in records) / needed, 4) if needed else None


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def interval(successes: int, n: int, z: float = 1.96) -> list[float] | None:
    """The 95 % Wilson interval of a rate of `successes` in `n`: unlike the normal one it
    stays inside [0, 1] and is not empty at 0 or n, which a small window often is."""
    if not n:
        return None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def pooled(runs: Sequence[Sequence[Record]]) -> dict[str, Any]:
    """What the world measured over several streams (seeds), each after its own warm-up:
    every figure over the same window (`measured`), precision included."""
    after = [r for records in runs for r in measured(records)]
    picked = [r for r in after if r.selected]
    bridges = [r for r in after if r.bridge]
    return {
        "sessions": sum(len(records) for records in runs),
        "measured_from": len(runs[0]) // 2 + 1 if runs and runs[0] else None,
        "attempts": len(after),
        "success_rate": _mean([float(r.ok) for r in after]),
        "success_ci": interval(sum(r.ok for r in after), len(after)),
        "precision": _ratio(sum(r.used for r in after), sum(r.served for r in after)),
        "selection_precision": _ratio(sum(r.used for r in picked), sum(r.served for r in picked)),
        "bridge_success_rate": _mean([float(r.ok) for r in bridges]),
        "bridge_attempts": len(bridges),
        "failures_by_cause": causes.counts([r.cause for r in after if not r.ok]),
        "discovered_per_session": _mean([r.discovered for r in after]),
        "steered_rate": _mean([float(r.steered) for r in after]),
        "retry_success_rate": _mean([float(r.rescued) for r in after if r.retried]),
        "tokens_per_prompt": _mean([r.tokens for r in after]),
        "frame_tokens_per_prompt": _mean([r.frame for r in after]),
        "lessons_per_prompt": _mean([r.lessons for r in after]),
        "recall": _recall(after),
        "selection_recall": _recall([r for r in after if r.selected]),
        "model_calls_per_prompt": _mean([r.calls for r in after]),
        "background_calls_per_session": _mean([r.background_calls for r in after]),
        "model_tokens_per_prompt": _mean([r.model_tokens for r in after]),
        "missed_success_rate": _mean([float(r.ok) for r in after if r.present < r.needed]),
        "pulls_per_prompt": _mean([r.pulls for r in after]),
        "pulled_tokens_per_prompt": _mean([r.pulled_tokens for r in after]),
        "pull_model_calls_per_prompt": _mean([r.pull_calls for r in after]),
        "used_reports_per_prompt": _mean([r.reports for r in after]),
    }


def over_time(records: Sequence[Record], buckets: int = 10) -> list[dict[str, Any]]:
    """The stream in up to `buckets` consecutive slices: tokens per prompt and success in each."""
    if not records:
        return []
    size = max(1, -(-len(records) // buckets))
    out = []
    for start in range(0, len(records), size):
        part = records[start : start + size]
        out.append(
            {
                "sessions": f"{start + 1}-{start + len(part)}",
                "tokens_per_prompt": _mean([r.tokens for r in part]),
                "success_rate": _mean([float(r.ok) for r in part]),
            }
        )
    return out


#: Figures both sides give: the world's, over the window, are the ones reported.
WINDOWED = ("precision", "selection_precision")


def metrics(runs: Sequence[Sequence[Record]], harness: Mapping[str, Any]) -> dict[str, Any]:
    """One object for the streams of `runs` (one per seed), pooled: every key of `KEYS` (the
    host's figures win where it gives one: it says None for what its stages cannot measure
    yet), then the rest of both, then the trend of the first stream. Precision is the
    world's, over the window (`WINDOWED`); the host's own (every episode, as attribution
    saw it) is kept beside, as ``attributed_precision``."""
    world = pooled(runs)
    # the store's own precision counts every episode, warm-up included, by attribution's
    # account; the world's counts the window, by what the agent acted on: the figure
    attributed = {f"attributed_{k}": harness[k] for k in WINDOWED if k in harness}
    own = {k: v for k, v in harness.items() if k not in WINDOWED}
    merged = {**world, **own, **attributed}
    out = {k: merged.get(k) for k in KEYS}
    out.update({k: v for k, v in merged.items() if k not in out})
    out["over_time"] = over_time(runs[0]) if runs else []
    return out


def worse_than(records: Sequence[Record], baseline: Sequence[Record]) -> list[str]:
    """Tasks this stream failed after warm-up where `baseline`, on the same stream, succeeded."""
    base = {r.index: r.ok for r in baseline}
    return sorted(
        {r.task for r in measured(records) if not r.ok and base.get(r.index, False)},
        key=lambda t: (len(t), t),
    )

"""ARCHITECTURE.md's targets on the simulated world, each with a 95 % interval.

Every arm works the same stream, so a target comparing two arms is paired: the interval
comes from resampling the window's sessions with replacement and recomputing the figure
over the same draw for both arms (a percentile bootstrap). Sessions of one task in one
stream are resampled together (a cluster): with tasks recurring, and the agent drawing
from the task and what it was given, they are not independent, and resampling them one
by one would make the interval too narrow. A verdict is the point figure against the
bound; ``resolved`` says whether the whole interval lies on one side of it, so a table can
tell a miss from noise.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rose.sim.hosts import scoreboard

Rows = Mapping[str, Sequence[scoreboard.Record]]  # arm -> its window's records, aligned
Figure = Callable[[Rows], float | None]

RESAMPLES = 2000


def _rate(records: Sequence[scoreboard.Record]) -> float | None:
    return sum(r.ok for r in records) / len(records) if records else None


def _tokens(records: Sequence[scoreboard.Record]) -> float | None:
    return sum(r.tokens for r in records) / len(records) if records else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _diff(a: float | None, b: float | None) -> float | None:
    return a - b if a is not None and b is not None else None


def _precision(records: Sequence[scoreboard.Record]) -> float | None:
    served = sum(r.served for r in records)
    return sum(r.used for r in records) / served if served else None


def _calls(records: Sequence[scoreboard.Record]) -> float | None:
    return sum(r.calls for r in records) / len(records) if records else None


@dataclass(frozen=True)
class Target:
    name: str
    measure: str
    arms: tuple[str, ...]  # the arms the figure reads, ROSE's first
    figure: Figure
    bound: float
    at_least: bool  # the figure must be at least the bound (else at most)


def _success_vs(rose: str, other: str, ratio: bool) -> Figure:
    join = _ratio if ratio else _diff
    return lambda rows: join(_rate(rows[rose]), _rate(rows[other]))


def _tokens_vs(rose: str, other: str) -> Figure:
    return lambda rows: _ratio(_tokens(rows[rose]), _tokens(rows[other]))


TARGETS = (
    Target("success ≥ 95% of the ceiling", "success_vs_ceiling", ("rose", "ceiling"),
           _success_vs("rose", "ceiling", True), 0.95, True),
    Target("success ≥ topk-learned's", "success_vs_topk_learned", ("rose", "topk-learned"),
           _success_vs("rose", "topk-learned", False), 0.0, True),
    Target("tokens ≤ 60% of topk-learned's", "tokens_vs_topk_learned", ("rose", "topk-learned"),
           _tokens_vs("rose", "topk-learned"), 0.60, False),
    Target("seeded: within 2 points of flat", "seeded_success_vs_flat", ("rose-seeded", "flat"),
           _success_vs("rose-seeded", "flat", False), -0.02, True),
    Target("seeded: tokens ≤ 40% of flat's", "seeded_tokens_vs_flat", ("rose-seeded", "flat"),
           _tokens_vs("rose-seeded", "flat"), 0.40, False),
    Target("seeded: tokens ≤ 60% of topk's", "seeded_tokens_vs_topk", ("rose-seeded", "topk"),
           _tokens_vs("rose-seeded", "topk"), 0.60, False),
    Target("rules never make it worse", "success_vs_norules", ("rose", "rose-norules"),
           _success_vs("rose", "rose-norules", False), 0.0, True),
    Target("precision ≥ 60%", "precision", ("rose",),
           lambda rows: _precision(rows["rose"]), 0.60, True),
    Target("≤ 1 model call per prompt", "model_calls_per_prompt", ("rose",),
           lambda rows: _calls(rows["rose"]), 1.0, False),
)  # fmt: skip


def window(per_seed: Mapping[int, Mapping[str, Sequence[scoreboard.Record]]]) -> dict[str, list]:
    """Each arm's records over the window, pooled over the seeds in the same order, so that
    position i of every arm is the same session of the same stream."""
    arms = next(iter(per_seed.values())).keys() if per_seed else []
    return {
        arm: [r for seed in per_seed for r in scoreboard.measured(per_seed[seed][arm])]
        for arm in arms
    }


def clusters(per_seed: Mapping[int, Mapping[str, Sequence[scoreboard.Record]]]) -> list[str]:
    """The cluster of each position of `window`'s rows: its stream and its task."""
    out: list[str] = []
    for seed, arms in per_seed.items():
        first = next(iter(arms.values()))
        out += [f"{seed}:{r.task}" for r in scoreboard.measured(first)]
    return out


def _groups(n: int, keys: Sequence[str] | None) -> list[list[int]]:
    """Positions 0..n-1 grouped by their cluster (each alone without `keys`)."""
    if keys is None:
        return [[i] for i in range(n)]
    by: dict[str, list[int]] = {}
    for i, key in enumerate(keys[:n]):
        by.setdefault(key, []).append(i)
    return list(by.values())


def draws(n: int, keys: Sequence[str] | None, seed: str, resamples: int) -> list[list[int]]:
    """`resamples` cluster-bootstrap draws of positions 0..n-1."""
    groups = _groups(n, keys)
    rng = random.Random(seed)
    return [
        [i for _ in groups for i in groups[rng.randrange(len(groups))]] for _ in range(resamples)
    ]


def _percentiles(got: list[float]) -> list[float]:
    got = sorted(got)
    return [round(got[int(0.025 * len(got))], 4), round(got[int(0.975 * len(got)) - 1], 4)]


def rate_interval(
    records: Sequence[scoreboard.Record], keys: Sequence[str] | None, resamples: int = RESAMPLES
) -> list[float] | None:
    """The 95 % cluster-bootstrap interval of the success rate of `records`."""
    if not records:
        return None
    got = []
    for pick in draws(len(records), keys, "rate", resamples):
        got.append(sum(records[i].ok for i in pick) / len(pick))
    return _percentiles(got)


def interval(
    target: Target,
    rows: Rows,
    resamples: int = RESAMPLES,
    keys: Sequence[str] | None = None,
) -> list[float] | None:
    """The 95 % percentile-bootstrap interval of `target`'s figure, paired across its arms,
    resampling whole clusters (`keys`: each position's) when given."""
    n = len(rows[target.arms[0]])
    if not n:
        return None
    got: list[float] = []
    for pick in draws(n, keys, f"targets:{target.measure}", resamples):
        drawn = {arm: [rows[arm][i] for i in pick] for arm in target.arms}
        value = target.figure(drawn)
        if value is not None:
            got.append(value)
    if len(got) < resamples // 2:  # the figure is mostly undefined: no interval
        return None
    return _percentiles(got)


def assess(
    rows: Rows, resamples: int = RESAMPLES, keys: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Every target: its figure, interval, verdict (met, missed, or why not measured) and
    whether the interval resolves it."""
    out = []
    for t in TARGETS:
        entry: dict[str, Any] = {"target": t.name, "measure": t.measure, "bound": t.bound}
        missing = [a for a in t.arms if a not in rows]
        value = None if missing else t.figure(rows)
        if missing or value is None:
            why = f"arm {', '.join(missing)} not run" if missing else "nothing to measure"
            entry.update(figure=None, ci=None, verdict=f"not measured ({why})", resolved=False)
            out.append(entry)
            continue
        ci = interval(t, rows, resamples, keys)
        met = value >= t.bound if t.at_least else value <= t.bound
        clear = ci is not None and (ci[0] > t.bound or ci[1] < t.bound)
        entry.update(
            figure=round(value, 4), ci=ci, verdict="met" if met else "missed", resolved=clear
        )
        out.append(entry)
    return out

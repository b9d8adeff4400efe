"""ARCHITECTURE.md's targets on the simulated world, each with a 95 % interval.

Every arm works the same stream, so a target comparing two arms is paired: the interval
comes from resampling the window's sessions (seed and position in the stream) with
replacement and recomputing the figure over the same draw for both arms (a percentile
bootstrap). A verdict is the point figure against the bound; ``resolved`` says whether the
whole interval lies on one side of it, so a table can tell a miss from noise.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rose.sim import scoreboard

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


def interval(target: Target, rows: Rows, resamples: int = RESAMPLES) -> list[float] | None:
    """The 95 % percentile-bootstrap interval of `target`'s figure, paired across its arms."""
    n = len(rows[target.arms[0]])
    if not n:
        return None
    rng = random.Random(f"targets:{target.measure}")
    got: list[float] = []
    for _ in range(resamples):
        pick = [rng.randrange(n) for _ in range(n)]
        drawn = {arm: [rows[arm][i] for i in pick] for arm in target.arms}
        value = target.figure(drawn)
        if value is not None:
            got.append(value)
    if len(got) < resamples // 2:  # the figure is mostly undefined: no interval
        return None
    got.sort()
    return [round(got[int(0.025 * len(got))], 4), round(got[int(0.975 * len(got)) - 1], 4)]


def assess(rows: Rows, resamples: int = RESAMPLES) -> list[dict[str, Any]]:
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
        ci = interval(t, rows, resamples)
        met = value >= t.bound if t.at_least else value <= t.bound
        clear = ci is not None and (ci[0] > t.bound or ci[1] < t.bound)
        entry.update(
            figure=round(value, 4), ci=ci, verdict="met" if met else "missed", resolved=clear
        )
        out.append(entry)
    return out

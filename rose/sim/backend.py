"""`SimulatedBackend`: the model of the simulated world, behind the real Backend protocol.

It answers every semantic call from the same rendered prompt a real backend receives,
reading it back with `rose.sim.parse`, and answers from the world's truth. Knobs:
``noise`` flips that fraction of judgements, ``under_report`` leaves that fraction of
dropped claims undeclared. Everything is a pure function of (seed, call, prompt), so a
run is reproducible. Nothing is measured, so the answer's `Usage` is all zeros; what a
hosted model would have charged and taken is projected into `Usage.simulated`, never slept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rose import tokens
from rose.errors import BackendFailed
from rose.model.base import BackendAnswer, SimulatedUsage, Usage
from rose.sim import choose, compress, learn
from rose.sim.draws import Draws
from rose.sim.world import World

Handler = Callable[[World, str, Draws], dict[str, Any]]

HANDLERS: dict[str, Handler] = {
    "relevance": choose.relevance,
    "related": choose.related,
    "reconcile": choose.reconcile,
    "scope": choose.scope,
    "select": choose.select,
    "assess": learn.assess,
    "reflect": learn.reflect,
    "rank_repairs": learn.rank_repairs,
    "replay_probe": learn.replay_probe,
    "replay_judge": learn.replay_judge,
    "compress": compress.compress,
    "merge": compress.merge,
}

# A made-up mid-sized hosted model: dollars per token, and seconds per call and per token.
PRICE_IN = 3e-6
PRICE_OUT = 15e-6
LATENCY_BASE_S = 0.6
LATENCY_PER_IN_S = 0.00002
LATENCY_PER_OUT_S = 0.012


def simulated_usage(prompt: str, raw: str) -> Usage:
    """No measured figures, and a projection of what a hosted model would have charged."""
    n_in, n_out = tokens.count(prompt), tokens.count(raw)
    return Usage(
        simulated=SimulatedUsage(
            input_tokens=n_in,
            output_tokens=n_out,
            cost_usd=round(n_in * PRICE_IN + n_out * PRICE_OUT, 8),
            wall_s=round(LATENCY_BASE_S + n_in * LATENCY_PER_IN_S + n_out * LATENCY_PER_OUT_S, 4),
        )
    )


class SimulatedBackend:
    """Answers the judge from a `World`; without one, from ``World.generate(seed)``."""

    name = "simulated"

    def __init__(
        self,
        world: World | None = None,
        *,
        noise: float = 0.0,
        seed: int = 0,
        under_report: float = 0.0,
    ):
        for knob, value in (("noise", noise), ("under_report", under_report)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{knob} must be between 0 and 1, not {value}")
        self.world = world if world is not None else World.generate(seed)
        self.noise = noise
        self.seed = seed
        self.under_report = under_report
        self.requests: list[tuple[str, str]] = []  # (call, prompt), in order

    def complete(
        self, call: str, prompt: str, schema: dict[str, Any], *, timeout_s: float
    ) -> BackendAnswer:
        handler = HANDLERS.get(call)
        if handler is None:
            raise BackendFailed(self.name, f"the simulated world has no answer for call {call!r}")
        self.requests.append((call, prompt))
        draws = Draws(self.seed, call, prompt, noise=self.noise, under_report=self.under_report)
        data = handler(self.world, prompt, draws)
        raw = json.dumps(data, ensure_ascii=False, sort_keys=True)
        return BackendAnswer(data=json.loads(raw), raw=raw, usage=simulated_usage(prompt, raw))

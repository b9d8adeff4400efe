"""`SimulatedBackend`: the model of the simulated world, behind the real Backend protocol.

It answers every semantic call from the same rendered prompt a real backend receives,
reading it back with `rose.sim.parse`, and from nothing else: the task marker is removed
before a handler sees the prompt, so no answer can depend on which task it was (its true
needs are knowledge no real model has). What a handler may read is listed in its
module's docstring. Knobs: ``noise`` flips that fraction of judgements,
``under_report`` leaves that fraction of dropped claims undeclared, ``over_cut`` makes
the compressor cut each remaining unprotected fact with that chance once it is within
budget (the agent's attention decay is the agent's knob, `rose.sim.agent.Agent`).
Everything is a pure function of (seed, call, prompt), so a run is reproducible. Nothing
is measured, so the answer's `Usage` is all zeros; what a hosted model would have
charged and taken is projected into `Usage.simulated`, never slept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rose import tokens
from rose.errors import BackendFailed
from rose.model.base import BackendAnswer, SimulatedUsage, Usage
from rose.sim.draws import Draws
from rose.sim.markers import TASK, drop
from rose.sim.model import choose, compress, learn, replay
from rose.sim.reading import Reader
from rose.sim.world import World

Handler = Callable[[Reader, str, Draws], dict[str, Any]]

HANDLERS: dict[str, Handler] = {
    "relevance": choose.relevance,
    "family_gist": choose.family_gist,
    "related": choose.related,
    "reconcile": choose.reconcile,
    "scope": choose.scope,
    "rule_form": choose.rule_form,
    "rule_conflict": choose.rule_conflict,
    "gist": choose.gist,
    "assess": learn.assess,
    "reflect": learn.reflect,
    "split": learn.split,
    "rank_repairs": learn.rank_repairs,
    "replay_probe": replay.replay_probe,
    "replay_judge": replay.replay_judge,
    "counterfactual_probe": replay.counterfactual_probe,
    "counterfactual": replay.counterfactual,
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
        over_cut: float = 0.0,
    ):
        knobs = (("noise", noise), ("under_report", under_report), ("over_cut", over_cut))
        for knob, value in knobs:
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{knob} must be between 0 and 1, not {value}")
        self.world = world if world is not None else World.generate(seed)
        self.reader = Reader(self.world)
        self.noise = noise
        self.seed = seed
        self.under_report = under_report
        self.over_cut = over_cut
        self.requests: list[tuple[str, str]] = []  # (call, prompt), in order

    def complete(
        self, call: str, prompt: str, schema: dict[str, Any], *, timeout_s: float
    ) -> BackendAnswer:
        handler = HANDLERS.get(call)
        if handler is None:
            raise BackendFailed(self.name, f"the simulated world has no answer for call {call!r}")
        self.requests.append((call, prompt))
        seen = drop(prompt, TASK)  # the model never learns which task this was
        draws = Draws(
            self.seed,
            call,
            seen,
            noise=self.noise,
            under_report=self.under_report,
            over_cut=self.over_cut,
        )
        data = handler(self.reader, seen, draws)  # the words, never the world's hidden truth
        raw = json.dumps(data, ensure_ascii=False, sort_keys=True)
        return BackendAnswer(data=json.loads(raw), raw=raw, usage=simulated_usage(prompt, raw))

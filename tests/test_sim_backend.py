"""The simulated backend is deterministic for a seed, and its knobs do what they say.

Locks in: benchmarks and loop tests are reproducible (same seed and world -> the same
answer to every call, whatever order calls come in; another seed -> another world and
other noise); `noise` flips about the asked fraction of judgements; `under_report`
leaves about that fraction of dropped claims undeclared; a whole run (sessions and their
assessment, with every knob on) repeats exactly for a seed; latency, cost and token estimates
are projected into Usage.simulated without sleeping, never into the measured fields; an
unknown call is a backend failure, not a guess.
"""

from __future__ import annotations

import time

import pytest

from rose import tokens
from rose.errors import BackendFailed
from rose.judge.calls import Judge, render, schema_of
from rose.model.base import Usage
from rose.sim import Agent, SimulatedBackend, World, examples
from rose.sim.model.backend import LATENCY_BASE_S


def _answers(backend: SimulatedBackend, contexts: dict, order=None) -> dict[str, str]:
    names = order or list(contexts)
    return {
        n: backend.complete(n, render(n, contexts[n]), schema_of(n), timeout_s=1).raw for n in names
    }


def test_same_seed_same_answers_in_any_order():
    world = World.generate(3)
    ctx = examples.contexts(world)
    a = _answers(SimulatedBackend(world, seed=9, noise=0.3, under_report=0.3), ctx)
    b = _answers(
        SimulatedBackend(World.generate(3), seed=9, noise=0.3, under_report=0.3),
        ctx,
        order=list(reversed(ctx)),
    )
    assert a == b


def test_different_seed_different_answers():
    world = World.generate(3)
    ctx = examples.contexts(world)
    answers = [_answers(SimulatedBackend(world, seed=s, noise=0.3), ctx) for s in range(4)]
    assert len({tuple(sorted(a.items())) for a in answers}) > 1
    other = World.generate(4)
    assert _answers(SimulatedBackend(other), examples.contexts(other)) != _answers(
        SimulatedBackend(world), ctx
    )


def test_default_world_comes_from_the_seed():
    assert SimulatedBackend(seed=2).world == World.generate(2)
    assert SimulatedBackend().world == World.generate(0)


def _relevance_verdicts(backend: SimulatedBackend) -> list[str]:
    world = backend.world
    cands = [examples.candidate(c) for c in examples.topic_lessons(world).values()]
    out = []
    for task in world.tasks:
        prompt = render("relevance", {"prompt": task.prompt, "candidates": cands})
        data = backend.complete("relevance", prompt, {}, timeout_s=1).data
        given = {v["id"]: v["verdict"] for v in data["verdicts"]}
        out += [given.get(c["id"], "unrelated") for c in cands]  # one left out is unrelated
    return out


@pytest.mark.parametrize("noise", [0.1, 0.3])
def test_noise_flips_about_the_asked_fraction(noise):
    world = World.generate(1, topics=12, tasks=40)
    clean = _relevance_verdicts(SimulatedBackend(world, seed=5))
    noisy = _relevance_verdicts(SimulatedBackend(world, seed=5, noise=noise))
    assert len(clean) == 480
    flipped = sum(a != b for a, b in zip(clean, noisy, strict=True)) / len(clean)
    assert abs(flipped - noise) < 0.06


def test_under_report_omits_about_that_fraction_of_declarations():
    world = World.generate(2, topics=12, facts_per_topic=7)
    lessons = list(examples.topic_lessons(world).values())

    def declared(under: float) -> tuple[int, int]:
        backend = SimulatedBackend(world, seed=1, under_report=under)
        dropped = claims = 0
        for a, b in zip(lessons, lessons[1:], strict=False):
            budget = tokens.count(a["body"]) + tokens.count(b["body"]) - 1
            prompt = render("merge", {"lessons": [a, b], "budget_tokens": budget})
            data = backend.complete("merge", prompt, {}, timeout_s=1).data
            facts_in = {f for x in (a, b) for f in world.facts_in(x["body"])}
            dropped += len(facts_in - set(world.facts_in(data["body"])))
            claims += sum(1 for d in data["dropped"] if world.facts_in(d["claim"]))
        return dropped, claims

    total, all_declared = declared(0.0)
    assert all_declared == total > 40
    _, half = declared(0.5)
    assert abs(half / total - 0.5) < 0.15
    assert declared(1.0)[1] == 0


def test_usage_is_simulated_not_slept():
    world = World.generate(3)
    backend = SimulatedBackend(world)
    prompt = render("relevance", examples.contexts(world)["relevance"])
    started = time.perf_counter()
    simulated_s = 0.0
    for _ in range(50):
        answer = backend.complete("relevance", prompt, {}, timeout_s=1)
        simulated_s += answer.usage.simulated.wall_s
    # had each answer slept its simulated wall time, the loop would take all of it
    assert time.perf_counter() - started < simulated_s / 10
    assert answer.usage == Usage(simulated=answer.usage.simulated)  # nothing measured
    sim = answer.usage.simulated
    assert sim.input_tokens == tokens.count(prompt)
    assert sim.output_tokens == tokens.count(answer.raw)
    assert sim.wall_s > 0.6 and sim.cost_usd > 0
    assert len(backend.requests) == 50


def test_judge_logs_simulated_cost_apart(tmp_path):
    world = World.generate(3)
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=tmp_path / "e.jsonl")
    started = time.perf_counter()
    judge.ask("scope", examples.contexts(world)["scope"])
    elapsed_ms = (time.perf_counter() - started) * 1000
    from rose.events import read_events

    (event,) = read_events(tmp_path / "e.jsonl", kind="judge")
    assert 0 < event["latency_ms"] <= elapsed_ms < LATENCY_BASE_S * 1000
    assert (event["cost_usd"], event["input_tokens"], event["output_tokens"]) == (0, 0, 0)
    assert "backend_latency_ms" not in event
    sim = event["simulated"]
    assert sim["latency_ms"] > 600 and sim["cost_usd"] > 0 and sim["input_tokens"] > 0


def test_unknown_call_fails():
    with pytest.raises(BackendFailed, match="no answer"):
        SimulatedBackend().complete("horoscope", "hello", {}, timeout_s=1)


def test_knobs_are_checked():
    with pytest.raises(ValueError):
        SimulatedBackend(noise=1.5)
    with pytest.raises(ValueError):
        SimulatedBackend(over_cut=-0.1)


def test_a_whole_run_is_deterministic_for_a_seed():
    def run(seed: int) -> list[str]:
        world = World.generate(seed, size="small")
        judge = Judge(
            SimulatedBackend(world, seed=seed, noise=0.1, over_cut=0.3),
            cache_path=None,
            events_path=None,
        )
        out = []
        for episode in examples.episodes(world, Agent(world, seed=seed, decay=0.1)):
            ctx = {"prompt": episode.task.prompt, "digest": episode.session.digest}
            answer = judge.ask("assess", {**ctx, "served": list(episode.served)})
            out += [episode.session.transcript, answer.model_dump_json()]
        return out

    assert run(4) == run(4)
    assert run(4) != run(5)


_RUN = """
import hashlib
from rose.judge.calls import Judge
from rose.sim import Agent, SimulatedBackend, World, examples
world = World.generate(3, size="small")
judge = Judge(SimulatedBackend(world, seed=3, noise=0.2, over_cut=0.3), cache_path=None,
              events_path=None)
out = [judge.ask(n, c).model_dump_json() for n, c in examples.contexts(world).items()]
out += [e.session.transcript for e in examples.episodes(world, Agent(world, seed=3))]
print(hashlib.sha256("\\n".join(out).encode()).hexdigest())
"""


def test_a_run_does_not_depend_on_the_process():
    """Set and hash order change between interpreters; the world's answers must not."""
    import os
    import subprocess
    import sys

    digests = {
        subprocess.run(
            [sys.executable, "-c", _RUN],
            env={**os.environ, "PYTHONHASHSEED": str(h)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for h in (1, 2)
    }
    assert len(digests) == 1

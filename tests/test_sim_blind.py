"""No simulated model call knows what its prompt cannot show.

Locks in: the task marker stands for knowledge no real model has (the task's true
needs), so the backend removes it before any handler reads the prompt, and no handler
would use it if it were left in: every call's answer is the same whichever task's marker
the prompt carries, or none; the handler modules never look a task up. Wholesale: the
handlers reach the world only through `rose.sim.reading` (checked from their imports),
and every call, on the same prompts, answers the same in two worlds that differ only in
what words cannot show (which principles the agent knows, which variant of a disputed
detail is stale, each topic's true scope, which tasks there are and what they need).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from rose.judge.calls import CALLS, render
from rose.sim import SimulatedBackend, World, examples
from rose.sim.draws import Draws
from rose.sim.markers import TASK, drop, find, mark
from rose.sim.model.backend import HANDLERS
from rose.sim.reading import Reader

SIM = Path(__file__).resolve().parents[1] / "rose" / "sim" / "model"
HANDLER_MODULES = ("choose.py", "learn.py", "replay.py", "compress.py")


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(6)


def _variants(world: World, prompt: str) -> list[str]:
    (tid,) = find(prompt, TASK) or [""]
    others = [t.id for t in world.tasks if t.id != tid][:2]
    out = [drop(prompt, TASK)]
    out += [prompt.replace(mark(TASK, tid), mark(TASK, o)) for o in others] if tid else []
    return out


@pytest.mark.parametrize("call", sorted(CALLS))
def test_no_handler_reads_the_task_marker(world, call):
    prompt = render(call, examples.contexts(world)[call])
    draws = Draws(3, call, drop(prompt, TASK), noise=0.2, under_report=0.2, over_cut=0.2)
    reader = Reader(world)
    answer = HANDLERS[call](reader, prompt, draws)
    for variant in _variants(world, prompt):
        assert HANDLERS[call](reader, variant, draws) == answer
    backend = SimulatedBackend(world, seed=3, noise=0.2)
    raw = {
        backend.complete(call, v, {}, timeout_s=1).raw for v in [prompt, *_variants(world, prompt)]
    }
    assert len(raw) == 1


def test_the_prompts_do_carry_it_so_the_check_means_something(world):
    prompts = [render(c, ctx) for c, ctx in examples.contexts(world).items()]
    assert sum(bool(find(p, TASK)) for p in prompts) >= 6


def test_handler_modules_never_look_a_task_up():
    for name in HANDLER_MODULES:
        tree = ast.parse((SIM / name).read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not {"TASK", "task_in"} & (names | attrs), name
        assert "needs" not in attrs, name


#: What a handler module may import of the simulated world: the words and how to read them.
MAY_READ = {"rose.sim.reading", "rose.sim.parse", "rose.sim.vocab", "rose.sim.draws",
            "rose.sim.markers", "rose.sim.prose"}  # fmt: skip


def _sim_imports(tree: ast.Module) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rose.sim"):
            mod = node.module or ""
            out |= {f"{mod}.{a.name}" if mod == "rose.sim" else mod for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("rose.sim")}
    return out


def test_handler_modules_reach_the_world_only_through_the_reader():
    for name in HANDLER_MODULES:
        tree = ast.parse((SIM / name).read_text(encoding="utf-8"))
        assert _sim_imports(tree) <= MAY_READ, name
    assert set(HANDLERS.values())  # every handler is one of those modules'
    assert {h.__module__ for h in HANDLERS.values()} == {
        f"rose.sim.model.{n.removesuffix('.py')}" for n in HANDLER_MODULES
    }


def _twin(world: World) -> World:
    """`world` with everything its words cannot show changed: the known principles, which
    variant of each disputed detail is stale, every topic's scope, and the tasks."""
    facts = {}
    for f in world.facts.values():
        variants = [v for v in world.facts.values() if v.base == f.base]
        stale = f.stale if len(variants) < 2 else not f.stale
        facts[f.id] = replace(f, known=not f.known, stale=stale)
    topics = {
        n: replace(t, scope="project" if t.scope == "global" else "global")
        for n, t in world.topics.items()
    }
    tasks = tuple(
        replace(t, needs=t.needs[:1], hidden=t.topics) for t in reversed(world.tasks[::2])
    )
    return World(world.seed, topics, facts, tasks)


@pytest.mark.parametrize("seed", [0, 2, 6])
def test_every_call_answers_the_same_in_a_world_differing_only_in_what_is_hidden(seed):
    world = World.generate(seed)
    twin = _twin(world)
    assert world.known != twin.known and world.tasks != twin.tasks  # the twin does differ
    assert any(f.stale for f in world.facts.values())
    one, other = (SimulatedBackend(w, seed=3, noise=0.2) for w in (world, twin))
    for call, context in examples.contexts(world).items():
        prompt = render(call, context)
        a = one.complete(call, prompt, {}, timeout_s=1).raw
        assert a == other.complete(call, prompt, {}, timeout_s=1).raw, call

"""No simulated model call knows which task it is answering for.

Locks in: the task marker stands for knowledge no real model has (the task's true
needs), so the backend removes it before any handler reads the prompt, and no handler
would use it if it were left in: every call's answer is the same whichever task's marker
the prompt carries, or none; the handler modules never look a task up.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rose.judge.calls import CALLS, render
from rose.sim import SimulatedBackend, World, examples
from rose.sim.backend import HANDLERS
from rose.sim.draws import Draws
from rose.sim.markers import TASK, drop, find, mark

SIM = Path(__file__).resolve().parents[1] / "rose" / "sim"
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
    answer = HANDLERS[call](world, prompt, draws)
    for variant in _variants(world, prompt):
        assert HANDLERS[call](world, variant, draws) == answer
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

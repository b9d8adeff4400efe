"""The simulated knowledge world: facts, tasks, an agent and a model whose truth is known.

The machines ROSE is built on have no model, so the loop runs against this world in
tests, the demo and the benchmarks. Nothing outside this package may read its markers.
"""

from rose.sim.agent import Agent, Outcome, Session, solve
from rose.sim.backend import SimulatedBackend
from rose.sim.world import Draft, Fact, Task, Topic, World

__all__ = [
    "Agent",
    "Draft",
    "Fact",
    "Outcome",
    "Session",
    "SimulatedBackend",
    "Task",
    "Topic",
    "World",
    "solve",
]

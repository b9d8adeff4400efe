"""The simulated knowledge world: facts, tasks, an agent and a model whose truth is known.

The machines ROSE is built on have no model, so the loop runs against this world in
tests, the demo and the benchmarks. Nothing outside this package may read its markers.

The world is an adversary, not an accomplice. The simulated model answers each call from
the words its prompt shows (what each call may read is in its module's docstring:
`choose`, `learn`, `replay`, `compress`) and never from the task's true needs, which it is
not shown; the simulated agent acts from a context window, attends less to what it was
shown long ago, takes the stale side of an unsurfaced conflict half the time, and reports
failures as symptoms in words, successes as a summary that leaves things out.

What it does not model:

- Language. Prose is generated from a small vocabulary and read back by the same rules
  (whole-word topic names, fact markers beside the words that state them): there are no
  synonyms, paraphrases, typos, or lessons about two things that share a name.
- Code and tools. A task succeeds exactly when every fact it needs was acted on rightly;
  there is no partial credit within a fact, no environment to explore, no test to run,
  and no way to recover a missing fact except a lesson (injected, or pulled by the agent
  after a failed check: `pulling`) or the user's correction (a surfaced conflict is
  settled by "checking", which always finds the truth).
- Facts beyond the three kinds, and tasks beyond needing a set of facts: no ordering of
  steps, no facts that interact, no knowledge that is wrong only in some contexts.
- Attention within a lesson: the agent attends to a lesson whole or not at all, by its
  age alone; a long block is as easy to read as a short one, and position in the block
  does not matter.
- Users beyond steering: the user states exactly what was missing, once, and is right.
- Model cost and latency are projected (`backend.simulated_usage`), never measured.
"""

from rose.sim.agent import Agent, Outcome, Session, Turn, solve
from rose.sim.backend import SimulatedBackend
from rose.sim.world import SIZES, Draft, Fact, Task, Topic, World

__all__ = [
    "SIZES",
    "Agent",
    "Draft",
    "Fact",
    "Outcome",
    "Session",
    "SimulatedBackend",
    "Task",
    "Topic",
    "Turn",
    "World",
    "solve",
]

"""The simulated knowledge world: facts, tasks, an agent and a model whose truth is known.

The machines ROSE is built on have no model, so the loop runs against this world in
tests, the demo and the benchmarks. Nothing outside this package may read its markers.

How close the world is to real work is `rose.sim.realism`: how often kinds of task recur,
how often the agent finds a missing fact itself, how much a long block costs attention.

The world is an adversary, not an accomplice. The simulated model answers each call from
the words its prompt shows, through `reading.Reader`, which holds nothing words hide (what
each call may read is in its module's docstring: `choose`, `learn`, `replay`,
`compress`), and never from the task's true needs, which it is not shown; the simulated
agent acts from a context window, attends less to what it was shown long ago, takes the
stale side of an unsurfaced conflict half the time, and reports failures as symptoms in
words, successes as a summary that leaves things out.

What it does not model:

- Language. Prose is generated from a small vocabulary and read back by the same rules
  (whole-word topic names, fact markers beside the words that state them): there are no
  synonyms, paraphrases, typos, or lessons about two things that share a name.
- Code and tools. A task succeeds exactly when every fact it needs was acted on rightly;
  there is no partial credit within a fact and no environment to explore: a missing fact
  comes from a lesson (injected, or pulled by the agent after a failed check: `pulling`),
  the user's correction, or, with `realism.discovery`, the agent finding it by itself
  after a failure, a draw per session and fact rather than a search (a surfaced conflict
  is settled by "checking", which always finds the truth).
- Facts beyond the three kinds, and tasks beyond needing a set of facts: no ordering of
  steps, no facts that interact, no knowledge that is wrong only in some contexts.
- Attention within a lesson: the agent attends to a lesson whole or not at all, by its
  age; with `realism.distraction` each needed fact it was given is then acted on with a
  chance that falls with the unrelated tokens around it (NoLiMa's curve), wherever in the
  block it sits: position does not matter.
- Users beyond steering: the user states exactly what was missing, once, and is right.
- Model cost and latency are projected (`backend.simulated_usage`), never measured.
"""

from rose.sim.agent import Agent, Outcome, Session, Turn, solve
from rose.sim.model.backend import SimulatedBackend
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

"""How close the simulated world is to real work: three properties, each a number, 0 for off.

- ``recurrence``: the exponent ``s`` of the Zipf distribution tasks are drawn from, the
  k-th most frequent kind of task coming with weight ``1 / k**s``. Real repositories see a
  few kinds of work often and most rarely: the sizes and change counts of software's parts
  follow power laws with exponents near 1 (Louridas, Spinellis and Vlachos, "Power Laws
  in Software", ACM TOSEM 18(1), 2008), so the default is Zipf's own ``s = 1``: in the
  default world's 64 tasks the most frequent comes 32 times as often as the median one.
  0 draws tasks uniformly, as the world did before.
- ``discovery``: after a failed attempt, the chance, drawn per session and fact, that the
  agent finds a fact it lacked by itself (reads a file, runs a command) and tries again:
  a turn of its own, shown in the transcript as a command, its output and its conclusion,
  so a reflection can learn it. The default, 0.25, is a modelling choice rather than a
  measurement: a value in a config file is found by reading it, a convention or a trap
  rarely is, and a quarter keeps the user's corrections the main teacher.
- ``distraction``: the chance that the agent acts on a needed fact it was given falls with
  the unrelated tokens around it, as ``exp(-distraction * u / 90,000)`` for ``u`` tokens of
  context that state none of the task's facts. The curve is NoLiMa's (Modarressi et al.,
  ICML 2025, arXiv 2502.05167): GPT-4o, one of its best models, kept 98.8 / 98.7 / 96.4 /
  89.8 / 82.2 / 70.2 % of its short-context score at 1k / 2k / 4k / 8k / 16k / 32k tokens
  of haystack, which ``exp(-u / 90k)`` follows within 1.7 points at every length (98.9,
  97.8, 95.7, 91.5, 83.7, 70.1). NoLiMa's needles share no words with the question, as a
  lesson's wording rarely matches a prompt's; a weaker model falls faster (Llama 3.3 70B
  kept 44 % at 32k), so scale 1 is the kind end. It was fixed from those figures before
  any ROSE arm ran with it. 0: a block costs no attention, however long.

Turning one off changes no other draw: each is drawn under a key of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: NoLiMa's GPT-4o retention, fitted: the tokens over which attention to a fact falls by 1/e.
DISTRACTION_SCALE_TOKENS = 90_000


@dataclass(frozen=True)
class Realism:
    recurrence: float = 1.0
    discovery: float = 0.25
    distraction: float = 1.0

    def __post_init__(self) -> None:
        for name in ("recurrence", "discovery", "distraction"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be at least 0, not {getattr(self, name)}")
        if self.discovery > 1:
            raise ValueError(f"discovery is a chance: at most 1, not {self.discovery}")


#: The world as it was: tasks drawn uniformly, nothing discovered, a long block free.
OFF = Realism(recurrence=0.0, discovery=0.0, distraction=0.0)


def retention(unrelated_tokens: int, distraction: float) -> float:
    """The chance the agent acts on a fact it was given, among `unrelated_tokens`."""
    return math.exp(-distraction * max(0, unrelated_tokens) / DISTRACTION_SCALE_TOKENS)


def zipf_weights(n: int, recurrence: float) -> list[float]:
    """The weight of the k-th most frequent of `n` kinds of task (k from 1)."""
    return [1.0 / (k**recurrence) for k in range(1, n + 1)]

"""The marker syntax of the simulated world, defined here and nowhere else.

A marker is ``⟦k:value⟧``: one letter saying what it marks, then its value. Prose
written by the world carries markers so that the simulation can read back which
facts a text holds; the harness must never read them (a test greps for `OPEN`
outside ``rose/sim``), or it would be judging by a lookup table the real world lacks.

Kinds, and what each stands for in words a real reader would have:

- ``f`` a fact (``⟦f:db.2a⟧``), beside the words that state it: reading it is reading
  what a sentence says.
- ``q`` a question about which variant of a disputed detail holds (``⟦q:db.2⟧``, the
  detail's base id), beside the question's words.
- ``o`` an outcome (``⟦o:ok⟧`` / ``⟦o:fail⟧``), beside the agent saying it is done or stuck.
- ``u`` the user steering (``⟦u:steer⟧``), beside the user saying "that is not right".
- ``d`` the agent's own discovery (``⟦d:found⟧``), beside the agent saying what it found
  out by looking (a file it read, a command it ran), before the fact it found.
- ``k`` a task (``⟦k:t3⟧``): the world's own bookkeeping, standing for nothing a reader
  could know. The simulated model never sees it (`rose.sim.model.backend` removes it before
  any call is answered); only the simulated agent, which is the world acting, looks a
  task up by it.

Topics have no marker: a topic is recognised by its name as a whole word, as a reader
would. Failure symptoms and accepted summaries carry no fact marker: they say what went
wrong or what was done in words (a subject and a value), never which fact it was.
"""

from __future__ import annotations

import re

OPEN = "\u27e6"  # ⟦
CLOSE = "\u27e7"  # ⟧

FACT = "f"
QUESTION = "q"
TASK = "k"
OUTCOME = "o"
USER = "u"
DISCOVERY = "d"

_MARKER = re.compile(OPEN + r"([a-z]):([^" + CLOSE + r"\s]*)" + CLOSE)


def mark(kind: str, value: str) -> str:
    """The marker of `value` as a `kind`."""
    return f"{OPEN}{kind}:{value}{CLOSE}"


def find(text: str, kind: str) -> list[str]:
    """The values of every `kind` marker in `text`, first occurrence order, no repeats."""
    return list(dict.fromkeys(v for k, v in _MARKER.findall(text) if k == kind))


def last(text: str, kind: str) -> str | None:
    """The value of the last `kind` marker in `text`, if any."""
    found = [v for k, v in _MARKER.findall(text) if k == kind]
    return found[-1] if found else None


def has(text: str, kind: str, value: str) -> bool:
    return mark(kind, value) in text


def drop(text: str, kind: str) -> str:
    """`text` without its `kind` markers (and the space before each)."""
    return re.sub(r" ?" + OPEN + kind + ":[^" + CLOSE + r"\s]*" + CLOSE, "", text)


def strip(text: str) -> str:
    """`text` without its markers, for prose a person reads."""
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r" ?" + _MARKER.pattern, "", text)).strip()

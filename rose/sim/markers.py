"""The marker syntax of the simulated world, defined here and nowhere else.

A marker is ``⟦k:value⟧``: one letter saying what it marks, then its value. Prose
written by the world carries markers so that the simulation can read back which
facts a text holds; the harness must never read them (a test greps for `OPEN`
outside ``rose/sim``), or it would be judging by a lookup table the real world lacks.

Kinds: ``f`` a fact (``⟦f:db.2a⟧``), ``t`` a topic (``⟦t:db⟧``), ``s`` the symptom of a
missing fact (``⟦s:db.2a⟧``), ``k`` a task (``⟦k:t3⟧``), ``o`` an outcome
(``⟦o:ok⟧`` / ``⟦o:fail⟧``), ``u`` the user steering (``⟦u:steer⟧``).
"""

from __future__ import annotations

import re

OPEN = "\u27e6"  # ⟦
CLOSE = "\u27e7"  # ⟧

FACT = "f"
TOPIC = "t"
SYMPTOM = "s"
TASK = "k"
OUTCOME = "o"
USER = "u"

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


def strip(text: str) -> str:
    """`text` without its markers, for prose a person reads."""
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r" ?" + _MARKER.pattern, "", text)).strip()

"""How the simulated agent puts what it did into words, and how those words are read back.

Four kinds of sentence: a transcript line per thing done (a tool call states the value it
used, a reasoning line the step it took), a symptom per thing that went wrong, and a
summary line per thing an accepted outcome mentions. Symptoms and summaries carry no fact
marker: a symptom says a subject and the wrong value ("The database port was 8080 and
that did not work."), a summary the subject and the value used, so whoever reads them
must read the words. Transcript lines carry the marker of the fact they act on, beside
the words that state it, since a command that sets a port states the port.
"""

from __future__ import annotations

import re

from rose.sim import vocab
from rose.sim.world import Fact

_WRONG = re.compile(r"\bwas (\S+) and that did not work\b")
_SYMPTOM = re.compile(r"did not work|failed without any error|broke in a way")


def _doing(fact: Fact) -> str:
    return f"go {fact.phrase} first" if fact.mentions else fact.phrase


def acted(fact: Fact, *, value: str = "", marker: bool = True) -> tuple[str, bool]:
    """(transcript line, is a tool call) for acting on `fact` (with `value`, for a detail)."""
    m = f" {fact.marker}" if marker else ""
    if fact.kind == "detail":
        return f"Tool: configure the {fact.topic} {fact.subject} as {value or fact.value}{m}", True
    if fact.kind == "trap":
        return f"Tool: in the {fact.topic} code, {fact.phrase} rather than {fact.wrong}{m}", True
    return f"Agent: For {fact.topic}, I will {_doing(fact)}{m}.", False


def discovered(fact: Fact) -> list[tuple[str, str]]:
    """The transcript of finding `fact` by looking: the command (what it read, and what
    that showed), then the agent's conclusion, the fact in its words."""
    from rose.sim.agent import FOUND
    from rose.sim.markers import strip

    where = (
        f"read the {fact.topic} {fact.subject} setting in the repository"
        if fact.kind == "detail"
        else f"read the {fact.topic} code and its history"
    )
    return [
        ("tool", f"Tool: {where} (output: {strip(fact.text)})"),
        ("found", f"Agent: {FOUND} Found it by looking: {fact.text}"),
    ]


def habit(fact: Fact) -> str:
    """The reasoning line of acting on a fact the agent knew anyway."""
    return f"Agent: For {fact.topic}, I {_doing(fact)}, {vocab.HABIT} {fact.marker}."


def defaulted(fact: Fact, guess: str) -> tuple[str, bool] | None:
    """The line of doing without `fact`: a guessed value, the wrong default, or nothing."""
    if fact.kind == "detail":
        return acted(fact, value=guess, marker=False)
    if fact.kind == "trap":
        return f"Tool: in the {fact.topic} code, {fact.wrong}", True
    return None


def checking(fact: Fact) -> str:
    return (
        f"Agent: The lessons disagree on the {fact.topic} {fact.subject}, and one says it is "
        "unresolved; checking which holds before relying on either."
    )


def symptom(fact: Fact, wrong: str = "") -> str:
    """What going without `fact` looks like: a subject and what was wrong, never which fact."""
    if fact.kind == "detail":
        return f"The {fact.topic} {fact.subject} was {wrong} and that did not work."
    if fact.kind == "trap":
        return (
            f"The {fact.topic} code went with the usual default ({fact.wrong}) and failed "
            "without any error."
        )
    return f"The {fact.topic} work broke in a way that only showed up later."


def is_symptom(sentence: str) -> bool:
    """Whether `sentence` says something went wrong (not, say, which work it was)."""
    return bool(_SYMPTOM.search(sentence))


def wrong_value(sentence: str) -> str:
    """The value a detail symptom says was wrong ("" when it names none)."""
    m = _WRONG.search(sentence)
    return m.group(1) if m else ""


def summary(fact: Fact) -> str:
    """How a summary of finished work mentions `fact`: its subject and value, in words."""
    if fact.kind == "detail":
        return f"The {fact.topic} {fact.subject} is set to {fact.value}."
    if fact.mentions:
        return f"Went {fact.phrase} first for the {fact.topic} change."
    return f"For {fact.topic}, made sure to {fact.phrase}."

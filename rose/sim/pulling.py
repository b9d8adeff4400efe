"""The simulated agent pulling memory itself, through the tools `rose mcp` serves.

Given the tools (`rose.sim.agent.Tools`: a tool's name and arguments in, the text it
answered out, as an MCP client calls them), the agent pulls after a failed check, and only
then. Before its first attempt it has nothing to ask with that the prompt hook did not
already recall for (the prompt's own words). Once its checks fail it has something new:
what they said went wrong, the symptoms (a topic, a subject, a wrong value; never which
fact). It never knows what the task needs. For each topic a symptom names:

- when a lesson in its context names that topic (in its title or text, as it reads them)
  and is compressed (its block says level 1 or more) or there only as a one-line reminder,
  that lesson is what it had and it fell short: it `show`s it, for what its compression
  dropped (the delta manifest's claims, each in words);
- otherwise nothing it had could say more: it `recall`s, one query for all such topics,
  made of their symptoms in their own words.

At most `MAX_PULLS` calls an attempt, the recall first, and nothing asked twice in a
session. Each answer enters its context as text it reads like any other (`Agent.solve`'s
`pulled`): a recalled lesson block as that lesson, a shown lesson's text as the lesson it
asked about, with the attention a lesson of its age gets. When the answers say something
its context did not (a sentence it had not read), it tries once more in the same turn,
the rest of its context read exactly as before, so that the retry differs only by what was
pulled; when they do not, it reports the failure as it stood. Then it reports what the
pulls brought it with `used` (the lessons recalled that its context did not hold, and
those it showed): those it acted on as used, the others as unused, which attribution folds
as it folds `rose used`. The lessons it had only from the prompt hook it leaves to the
judges, as it does without the tools, so that its own word does not stand in for theirs.

The transcript shows each pull as a tool call by what was asked (the recall's query; for a
`show`, the topic, not the id, so that looking a lesson up never reads as citing it), and
not the `used` report, which goes straight to the session's log. What pulling costs is
counted by the world from `Outcome.pulls`: the calls, and the tokens of the answers read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rose.sim import parse, prose
from rose.sim.agent import Outcome, Pulled, Turn
from rose.sim.markers import OUTCOME, drop

if TYPE_CHECKING:
    from rose.sim.agent import Agent, Tools
    from rose.sim.world import Task

#: The most calls to the memory one attempt makes (the `used` report apart).
MAX_PULLS = 3
#: The tools that bring text into the context.
READING = ("recall", "show")


def attempt(
    agent: Agent,
    task: Task,
    turns: tuple[Turn, ...],
    tools: Tools,
    asked: set[tuple[str, str]],
) -> tuple[Outcome, tuple[Turn, ...]]:
    """One attempt at `task`, pulling after a failed check (see the module's docstring):
    the outcome, with the pulls it made, and what the pulls added to the context."""
    first = agent.solve(task, turns)
    if first.ok:
        return first, ()
    symptoms = [s for s in parse.sentences(drop(first.text, OUTCOME)) if prose.is_symptom(s)]
    calls = _asks(agent, symptoms, turns, asked)
    if not calls:
        return first, ()
    pulls: list[Pulled] = []
    got: list[Turn] = []
    lines = [("reason", f"Agent: The checks failed. {' '.join(symptoms)} Asking ROSE's memory.")]
    for tool, argument, topic in calls:
        asked.add((tool, argument))
        text = tools(tool, {"query" if tool == "recall" else "id": argument})
        pulls.append(Pulled(tool, argument, text))
        got.append(Turn(text, about=argument if tool == "show" else ""))
        what = argument if tool == "recall" else f"the {topic} lesson"
        lines.append(("tool", f"Tool: rose {tool}: {what}"))
    world = agent.world
    had = {f for t in turns for f in world.facts_in(t.text)}
    new = {f for t in got for f in world.facts_in(t.text)} - had
    final = agent.solve(task, turns, pulled=got) if new else first
    before = {lid for t in turns for _, lid, _ in parse.injected(t.text) if lid}
    pulled = [i for i in _lessons_in(got) if i not in before or i in {t.about for t in got}]
    if pulled:
        acted = set(final.used)
        report = {
            "used": [i for i in pulled if i in acted],
            "unused": [i for i in pulled if i not in acted],
        }
        text = tools("used", report)
        pulls.append(Pulled("used", " ".join(report["used"] + report["unused"]), text))
    steps = (*first.lines, *lines, *(final.lines if new else ()))
    outcome = Outcome(
        final.ok, final.text, final.applied, final.missing, final.used, steps, tuple(pulls)
    )
    return outcome, tuple(got)


def _asks(
    agent: Agent, symptoms: list[str], turns: tuple[Turn, ...], asked: set[tuple[str, str]]
) -> list[tuple[str, str, str]]:
    """The calls to make for `symptoms`, as (tool, argument, topic), at most `MAX_PULLS`."""
    world = agent.world
    text: dict[str, str] = {}
    short: set[str] = set()  # compressed, or only a reminder: there is more to show
    full: set[str] = set()
    for turn in turns:
        levels = parse.levels(turn.text)
        for form, lid, piece in parse.injected(turn.text):
            lid = lid or turn.about
            if not lid:
                continue
            text[lid] = text.get(lid, "") + "\n" + piece
            if form == "reminder" or (form == "lesson" and levels.get(lid, 0) > 0):
                short.add(lid)
            elif form != "restored":  # in full at level 0, or shown already
                full.add(lid)
    shows: list[tuple[str, str, str]] = []
    unknown: list[str] = []
    for sentence in symptoms:
        for topic in world.topics_in(sentence):
            more = [
                i
                for i in text
                if i in short - full
                and topic in world.topics_in(text[i])
                and ("show", i) not in asked
                and all(i != s[1] for s in shows)
            ]
            if more:
                shows.append(("show", more[0], topic))
            elif sentence not in unknown:
                unknown.append(sentence)
    query = " ".join(unknown)
    recall = [("recall", query, "")] if unknown and ("recall", query) not in asked else []
    return [*recall, *shows][:MAX_PULLS]


def _lessons_in(got: list[Turn]) -> list[str]:
    """The lessons the pulled text is: recalled blocks by their ids, shown ones by the id asked."""
    ids = [lid for t in got for form, lid, _ in parse.injected(t.text) if form == "lesson"]
    return list(dict.fromkeys([*ids, *(t.about for t in got if t.about)]))

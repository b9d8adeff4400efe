"""The simulated model's answers to the calls that choose and classify: relevance, related,
scope, reconcile, gist and the rule calls. Each reads only what its prompt shows.

- ``relevance`` reads words: the topics the task names, the topics each candidate line
  (title and gist, never a body) names, and the topics the lessons already found name.
  A gist that does not name a topic is not matched to it, however much its body says
  about it; a topic reached only through a bridging lesson's wording is a ``maybe``
  once that lesson is among those found, and invisible before.
- ``relevance`` follows the selection rules shown (``- when ...: ...``): a
  rule whose condition the task meets (it names a topic the task names, and any kind of
  work it names, a verb or an object, is the task's) brings the topics its advice names
  in as if the task named them, or, when its advice says they do not apply (``nothing``,
  ``skip``), judges the lessons of those topics unrelated: a line whose title's topic (the
  first it names) is one of them, or naming only them.
- ``relevance`` takes a word for its topic wherever it stands: a gist saying
  "deploy, including deploy migrations" (the deploy pipeline's migrations step, a homonym)
  reads as about the migrations topic too, so the deploy lesson is chosen for migrations
  work. Nothing in a line tells the two senses apart; a rule to skip the deploy lessons
  when the task touches migrations does.
- ``relevance`` cites, in a verdict a skip rule decided, the ids of the rules that did.
- ``gist`` rewrites a passed-over lesson's line to name the topics its body names and those
  the task that needed it names (what a reader of the two would write); ``rule_conflict``
  reads the rules' words: the same topics and kinds of work in the condition, and one says
  to read a topic the other says to skip.
- ``rule_form`` reads the rule's words: conditioned when its condition names a topic or a
  kind of work the world's tasks come in (a verb or an object of a task's wording), about
  one lesson when it names a lesson id.
- ``family_gist`` names the topics (or outside subjects) its lessons' lines name, most
  named first; a line naming no topic but a subject outside the world (`vocab.OUTSIDE`) is
  ``unrelated`` to every task, not too general to judge.
- ``related`` likewise matches topics named in candidate lines. ``related``
  asks to see below a line that names no topic, or names the new lesson's subject among
  two or more others (a summary of several lessons: which of them holds the point cannot
  be told from it), as ``relevance`` does.
- ``scope`` and ``reconcile`` read lessons in full: the topics they name and the facts
  they carry (markers beside the words that state them), compared fact by fact. The
  reconciler writes the new lesson's title and gist as a writer would (`World.lesson`),
  and for a refinement the detail as the terse sentences of the facts the target lacks,
  and the topics of those facts that the target's title and gist do not name (read as
  ``relevance`` reads a line); of two lessons it refines, it picks one whose line names
  them.
"""

from __future__ import annotations

import re
from typing import Any

from rose.sim import parse, vocab
from rose.sim.draws import Draws
from rose.sim.markers import QUESTION, mark, strip
from rose.sim.reading import Reader

_WRONG_VERDICT = {
    "relevant": "unrelated",
    "maybe": "unrelated",
    "unrelated": "relevant",
    "descend": "unrelated",
}
_LESSON_ID = re.compile(r"(?<![\w-])n_[0-9a-z]{3,}(?![\w-])")
_RANK = ("contradicts", "duplicate", "refines", "specialises", "orthogonal")
_WRONG_RELATION = {
    "contradicts": "refines",
    "duplicate": "refines",
    "refines": "duplicate",
    "specialises": "orthogonal",
    "orthogonal": "specialises",
}


def _names(topics: set[str]) -> str:
    return ", ".join(sorted(topics)) or "nothing recognisable"


def _follow(
    world: Reader, prompt: str, asked: set[str]
) -> tuple[set[str], set[str], dict[str, list[str]]]:
    """(topics to read, topics to skip, the ids of the rules that skip each) by the shown
    rules whose condition the task meets: the condition names a topic the task names, and
    every kind of work it names (a verb, an object) is the task's too. A rule to read a
    topic outweighs one to skip it."""
    read: set[str] = set()
    skip: dict[str, list[str]] = {}
    kinds = world.kinds_in(parse.section(prompt, "task"))
    for rid, rule in parse.items(parse.section(prompt, "rules")):
        cond, _, advice = rule.partition(":")
        if not set(world.topics_in(cond)) & asked or not world.kinds_in(cond) <= kinds:
            continue
        named = set(world.topics_in(advice)) - asked
        if any(w in advice.lower().split() for w in ("nothing", "skip", "skipped")):
            for topic in named:
                skip.setdefault(topic, []).append(rid)
        else:
            read |= named
    skipped = {t: ids for t, ids in skip.items() if t not in read}
    return read, set(skipped), skipped


def _skipped(world: Reader, line: str, skip: set[str]) -> bool:
    """A candidate line is one of the lessons a rule says do not apply: the topic it leads
    with (its title's) is one of them, or every topic it names is."""
    topics = world.topics_in(line)
    return bool(topics) and (topics[0] in skip or set(topics) <= skip)


def relevance(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    asked = set(world.topics_in(parse.section(prompt, "task")))
    read, skip, skipped_by = _follow(world, prompt, asked)
    asked |= read
    reach = set(world.topics_in(parse.section(prompt, "found"))) - asked
    verdicts = []
    for cid, line in parse.items(parse.section(prompt, "candidates")):
        topics = set(world.topics_in(line))
        cited: list[str] = []
        if _skipped(world, line, skip):
            verdict, reason = (
                "unrelated",
                f"a selection rule says {_names(topics & skip)} does not apply",
            )
            cited = sorted({r for t in topics & skip for r in skipped_by[t]})
        elif not topics and world.outside_in(line):
            outside = set(world.outside_in(line))
            verdict, reason = "unrelated", f"about {_names(outside)}, which the task does not touch"
        else:
            verdict, reason = _verdict(topics, asked, reach)
        if d.flip(cid):
            verdict, reason = _WRONG_VERDICT[verdict], f"judged otherwise: {reason}"
        if verdict != "unrelated" or cited:  # a candidate left out is unrelated
            verdicts.append({"id": cid, "verdict": verdict, "reason": reason, "rules": cited})
    return {"verdicts": verdicts}


def _verdict(topics: set[str], asked: set[str], reach: set[str]) -> tuple[str, str]:
    if not topics:
        return "descend", "its summary is too general to judge"
    if topics & asked:
        if len(topics - asked - reach) >= 2:
            return "descend", f"covers {_names(topics)}; too broad to judge from its summary"
        return "relevant", f"about {_names(topics & asked)}, which the task is about"
    if topics & reach:
        return "maybe", f"about {_names(topics & reach)}, which a chosen lesson points to"
    return "unrelated", f"about {_names(topics)}, which the task does not touch"


def family_gist(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    """One line for a family: the subjects its lessons' lines name, most named first."""
    lines = [line for _, line in parse.items(parse.section(prompt, "lessons"))]
    counts: dict[str, int] = {}
    for line in lines:
        for name in world.topics_in(line) or world.outside_in(line):
            counts[name] = counts.get(name, 0) + 1
    named = sorted(counts, key=lambda t: -counts[t])  # stable: ties keep first mention
    if len(named) > 1 and d.flip("gist"):
        named = named[:-1]  # a summary that misses one subject
    if not named:
        return {"gist": "Assorted notes."}
    shown = named[:4] + (["more"] if len(named) > 4 else [])
    return {"gist": f"Lessons about {', '.join(shown)}."}


def related(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    subjects = world.subjects_in(parse.section(prompt, "new"))
    matches, descend = [], []
    for cid, line in parse.items(parse.section(prompt, "candidates")):
        topics = set(world.topics_in(line))
        shared = topics & subjects
        if not topics or (shared and len(topics - subjects) >= 2):
            if not d.flip(cid):  # a wrong call here misses the branch
                why = f"covers {_names(topics)}" if topics else "its summary names no subject"
                descend.append({"id": cid, "reason": f"{why}: too general to tell"})
        elif bool(shared) != d.flip(cid):
            matches.append({"id": cid, "reason": f"also about {_names(shared)}"})
    return {"matches": matches, "descend": descend}


def gist(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    """A lesson's line rewritten to name the topics its body is about and those of the task
    that needed it (the task's words and the body's: a reader sees both)."""
    blocks = parse.lessons(prompt)
    title, _old, body = parse.lesson_parts(blocks[0][1] if blocks else "")
    held = list(dict.fromkeys(world.topics_in(body)))
    task = [t for t in world.topics_in(parse.section(prompt, "task")) if t not in held]
    if d.flip("gist"):
        task = []  # a rewrite that still misses what the task was about
    facts = world.facts_in(body)
    if facts and "give it back unchanged" not in prompt:
        title = world.lesson(facts, verbose=False).title
    about = ", ".join(held) or "nothing recognisable"
    needed = f"; what {', '.join(task)} work relies on" if task else ""
    return {"title": title.strip() or "Notes", "gist": f"About {about}{needed}."}


def rule_conflict(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    """The rules in use for the same kind of task (the same topics and kinds of work in the
    condition) whose advice on a topic is the opposite of the new rule's."""

    def read(rule: str) -> tuple[frozenset[str], set[str], set[str], bool]:
        cond, _, advice = rule.partition(":")
        negative = any(w in advice.lower().split() for w in ("nothing", "skip", "skipped"))
        return (
            frozenset(world.topics_in(cond)),
            world.kinds_in(cond),
            set(world.topics_in(advice)),
            negative,
        )

    new = parse.items(parse.section(prompt, "new"))
    if not new:
        return {"conflicts": []}
    topics, kinds, advice, negative = read(new[0][1])
    conflicts = []
    for rid, rule in parse.items(parse.section(prompt, "existing")):
        o_topics, o_kinds, o_advice, o_negative = read(rule)
        opposite = topics == o_topics and kinds == o_kinds and bool(advice & o_advice)
        if (opposite and negative != o_negative) != d.flip(rid):
            conflicts.append({"id": rid, "reason": f"the opposite advice on {_names(advice)}"})
    return {"conflicts": conflicts}


def rule_form(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    body = parse.section(prompt, "rule")
    fields = dict(line.split(": ", 1) for line in body.splitlines() if ": " in line)
    when, then = fields.get("when", ""), fields.get("then", "")
    words = set(re.findall(r"[a-z]+", strip(when).lower()))
    kinds = {w for v in vocab.VERBS for w in v} | {w for o in vocab.OBJECTS for w in o.split()}
    conditioned = bool(world.topics_in(when)) or bool(words & kinds)
    one_lesson = bool(_LESSON_ID.search(f"{when} {then}"))
    if d.flip("conditioned"):
        conditioned = not conditioned
    if d.flip("one-lesson"):
        one_lesson = not one_lesson
    why = (
        "it is a verdict on one lesson, not on where to look"
        if one_lesson
        else f"it applies when the task touches {_names(set(world.topics_in(when)))}"
        if conditioned
        else "it names no kind of task"
    )
    return {"conditioned": conditioned, "about_one_lesson": one_lesson, "reason": why}


def scope(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    blocks = parse.lessons(prompt)
    subjects = world.subjects_in(blocks[0][1] if blocks else prompt)
    # a tool used everywhere is recognised by its name, as a reader knows a vendor's
    wide = sum(1 for t in subjects if t in vocab.GLOBAL_TOPICS)
    answer = "global" if subjects and wide * 2 >= len(subjects) else "project"
    if d.flip("scope"):
        answer = "project" if answer == "global" else "global"
    return {"scope": answer, "reason": f"about {_names(subjects)}"}


def reconcile(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    new_blocks = parse.lessons(parse.section(prompt, "new"))
    new = world.facts_in(new_blocks[0][1]) if new_blocks else []
    existing = parse.lessons(parse.section(prompt, "existing"))
    held = {eid: world.facts_in(block) for eid, block in existing}
    lines = {eid: " ".join(parse.lesson_parts(block)[:2]) for eid, block in existing}
    best = ("orthogonal", "", "", "it shares no subject with any existing lesson")
    best_at = (_RANK.index(best[0]), False)
    for eid, facts in held.items():
        found = _relation(world, new, facts)
        # of two lessons it refines, the one whose line names what it adds
        unnamed = found[0] == "refines" and bool(_unnamed(world, new, facts, lines[eid]))
        if (_RANK.index(found[0]), unnamed) < best_at:
            best, best_at = (found[0], eid, found[1], found[2]), (_RANK.index(found[0]), unnamed)
    relation, target, question, reason = best
    if d.flip("relation") and (existing or relation != "orthogonal"):
        relation, question = _WRONG_RELATION[relation], ""
        target = "" if relation == "orthogonal" else (target or existing[0][0])
        reason = f"judged otherwise: {reason}"
    lacking = [f for f in new if f not in held.get(target, [])] or new
    detail = " ".join(world.facts[f].terse for f in lacking) if relation == "refines" else ""
    other: list[str] = []
    if relation == "refines" and not d.flip("other-subjects"):  # a miss keeps it folded in
        other = _unnamed(world, new, held.get(target, []), lines.get(target, ""))
    title, gist = _heading(world, new, new_blocks[0][1] if new_blocks else "")
    return {
        "relation": relation,
        "target": target,
        "question": question,
        "detail": detail or ("More on the same points." if relation == "refines" else ""),
        "other_subjects": other,
        "title": title,
        "gist": gist,
        "reason": reason,
    }


def _unnamed(world: Reader, new: list[str], old: list[str], line: str) -> list[str]:
    """The topics of what `new` adds to `old` that `line` (the old lesson's title and gist)
    does not name, in order."""
    adds = [world.facts[f].topic for f in new if f not in old]
    named = set(world.topics_in(line))
    return [t for t in dict.fromkeys(adds) if t not in named]


def _heading(world: Reader, facts: list[str], block: str) -> tuple[str, str]:
    """The title and gist a writer gives a lesson holding `facts` (or what its block shows)."""
    if facts:
        draft = world.lesson(facts, verbose=False)
        return draft.title, draft.gist
    title, gist, _body = parse.lesson_parts(block)
    return title.strip() or "Notes", gist.strip() or "Notes on nothing in particular."


def _relation(world: Reader, new: list[str], old: list[str]) -> tuple[str, str, str]:
    """(relation, question, reason) between a new lesson's facts and an existing one's."""
    for a in new:
        for b in old:
            if world.conflicting(a, b):
                fa, fb = world.facts[a], world.facts[b]
                question = (
                    f"Which holds now for the {fa.topic} {fa.subject} {mark(QUESTION, fa.base)}: "
                    f"{fa.value} or {fb.value}? Was the other only true at the time?"
                )
                return "contradicts", question, f"they give the {fa.subject} different values"
    n, o = set(new), set(old)
    if n and n <= o:
        return "duplicate", "", "everything it says is already there"
    if n & o:
        return "refines", "", "it adds detail to points already made"
    shared = {world.facts[f].topic for f in n} & {world.facts[f].topic for f in o}
    if shared:
        return "specialises", "", f"different points about {_names(shared)}"
    return "orthogonal", "", "it shares no subject"

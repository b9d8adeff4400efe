"""The simulated model's answers to the calls that learn from work: assess, reflect and
rank_repairs. Each reads only what its prompt shows, as a real model would.

- ``assess`` reads the digest line by line: the lesson ids the agent cited, and the facts
  its tool calls and reasoning state (their markers sit beside the words that state
  them) matched against what each served lesson says (its facts' markers, likewise).
  A fact the user stated first, or that the agent says it did out of habit, is no
  evidence for a lesson. So a lesson is credited only when the digest shows it at work:
  an empty digest credits nothing, a principle that left no trace is missed, and a
  relevant lesson the agent ignored is not used. It never sees which task it was, only
  the task's words. An unused lesson's cause is read the same way: ``redundant`` when the
  agent says it did the lesson's fact out of habit, ``irrelevant`` when none of the
  lesson's topics is named by the task or the digest, ``ignored`` otherwise; none when
  the digest is empty (nothing to tell from).
- ``reflect`` reads the facts the user stated when steering (a user's words), and those the
  agent says it found by looking (its own words, the discovery marker beside them), for its
  lessons, one per topic of those facts (as the prompt asks: one subject a lesson), and
  says of each served lesson what ``assess`` would, quoting for a used one the sentences
  that state a fact the digest shows the agent acting on; how the work stands is the last
  outcome the agent reported, and a failure is the agent's own report of its symptoms.
- ``reflect`` writes a selection rule when the user had to supply facts of a topic the
  task's words never name (the task: the request that opened the work, the first of the
  session's earlier requests when the prompt shows them, since a reply continues it):
  "when the task touches <a topic it names>: also read the <that topic> lessons" (what
  the task named and what the user said, nothing else); and one to skip a topic whose
  served lessons it found unused, with no used lesson about it, when the prompt says
  recall chose them: "when the task touches <a topic it names>: nothing in the <that
  topic> lessons applies" (what the task said and what the reflector saw chosen, served
  and used). It proposes a rule from each session that shows the mistake; the harness
  writes it only once enough sessions have (`rose.loop.selection.route`). A lesson served for a
  homonym (its gist borrows the task's topic's name) is such a mistake, made again on
  every task naming that topic.
- ``split`` reads the document's words only, as a careful model splits a file of notes: a
  lesson for each paragraph (a list, unbroken by a blank line, is one paragraph), its body
  the paragraph verbatim, its title the heading it sits under (with the paragraph's first
  words when the heading holds several), its gist the first sentence, its family the
  heading's name (else the first topic the paragraph names, else the file's name); a fenced
  block goes with the paragraph before it; a line of a few words or a heading alone is no
  lesson. With ``noise``, a
  paragraph is now and then lumped into the lesson before it (two points in one).
- ``rank_repairs`` reads words only: the topics, subjects, wrong values and defaults a
  symptom names, and the same in each claim. A symptom never says which fact was
  missing, so claims sharing its topic and subject tie, and the tie is drawn.
"""

from __future__ import annotations

import re
from typing import Any

from rose.sim import parse, prose, vocab
from rose.sim.draws import Draws
from rose.sim.markers import DISCOVERY, FACT, OUTCOME, USER, last, mark, strip
from rose.sim.reading import Reader

STEER = mark(USER, "steer")
FOUND = mark(DISCOVERY, "found")


_CITED = re.compile(r"(?<![\w-])(n_[0-9a-f]{8,})(?![\w-])")


def _named(phrase: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(phrase.lower())}(?![\w-])", text.lower()) is not None


def assess(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    digest = parse.section(prompt, "digest")
    served = parse.lessons(parse.section(prompt, "served"))
    holds = {lid: set(world.facts_in(block)) for lid, block in served}
    evidence, acted_at_end = _evidence(world, digest, holds)
    final = last(digest, OUTCOME)
    if final == "ok":
        outcome = "success"
    elif final == "fail" and acted_at_end:
        outcome = "partial"
    else:
        outcome = "failure"
    if d.flip("outcome"):
        outcome = "failure" if outcome == "success" else "success"
    steered = (STEER in digest) != d.flip("steered")
    worked_on = world.subjects_in(parse.section(prompt, "task") + "\n" + digest)
    habits = _habits(world, digest)
    lessons = []
    for lid, held in holds.items():
        used = (lid in evidence) != d.flip("used", lid)
        topics = {world.facts[f].topic for f in held}
        cause = (
            ""
            if used or not digest.strip()
            else "redundant"
            if held & habits
            else "irrelevant"
            if not topics & worked_on
            else "ignored"
        )
        reason = evidence.get(lid, "nothing in the digest shows it changed what was done")
        lessons.append({"id": lid, "used": used, "cause": cause, "reason": reason})
    why = "the digest shows nothing done" if not digest.strip() else f"the work ended in {outcome}"
    return {"outcome": outcome, "steered": steered, "reason": why, "lessons": lessons}


def _evidence(world: Reader, digest: str, holds: dict[str, set[str]]) -> tuple[dict[str, str], int]:
    """What the digest shows each served lesson doing, and how much the last attempt did."""
    evidence: dict[str, str] = {}
    # facts the user stated, or the agent found by looking: what follows is theirs, not a
    # lesson's
    told: set[str] = set()
    acted_at_end = 0
    for line in digest.splitlines():
        if line.startswith("User:"):
            told |= set(world.facts_in(line))
            acted_at_end = 0
            continue
        if FOUND in line:
            told |= set(world.facts_in(line))
            continue
        if not line.startswith(("Agent:", "Tool:")):
            continue
        cited = _CITED.findall(line)  # the block shows short ids: a prefix names its lesson
        for lid in holds:
            if lid and (_named(lid, line) or any(lid.startswith(c) for c in cited)):
                evidence.setdefault(lid, "the agent cited it")
        facts = [] if vocab.HABIT in line else world.facts_in(line)
        acted_at_end += len(facts)
        for f in (f for f in facts if f not in told):
            fact = world.facts[f]
            for lid in (lid for lid, held in holds.items() if f in held):
                evidence.setdefault(lid, f"the agent acted on its {fact.topic} {fact.subject}")
    return evidence, acted_at_end


def _habits(world: Reader, digest: str) -> set[str]:
    """The facts the agent says it acted on out of habit: it knew them anyway."""
    return {
        f
        for line in digest.splitlines()
        if line.startswith("Agent:") and vocab.HABIT in line
        for f in world.facts_in(line)
    }


def reflect(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    digest = parse.section(prompt, "digest")
    # what the user said when steering, and what the agent says it found by looking
    taught = [f for line in digest.splitlines() if STEER in line or FOUND in line
              for f in world.facts_in(line)]  # fmt: skip
    taught = list(dict.fromkeys(taught))
    # the user's words when the user supplied every fact of it, else what the agent found
    told = {f for line in digest.splitlines() if STEER in line for f in world.facts_in(line)}
    uses, spans = _reflected_uses(world, prompt, digest, d)
    standing = _standing(digest, d)
    rules = _rules(world, _opening(prompt), taught, _unused_topics(world, prompt, uses), d)
    if not taught or d.flip("found"):
        return {
            "found": False,
            "reason": "nothing here was new to the agent",
            "new_lessons": [],
            "lessons": uses,
            "load_bearing": spans,
            "rules": rules,
            **standing,
        }
    by_topic: dict[str, list[str]] = {}
    for f in taught:
        by_topic.setdefault(world.facts[f].topic, []).append(f)
    drafts = []
    for n, (topic, facts) in enumerate(by_topic.items()):
        draw = d.unit("salt") if n == 0 else d.unit("salt", topic)  # the first: as one lesson
        drafts.append(world.lesson(facts, verbose=True, salt=int(draw * 1_000_000)))
    return {
        "found": True,
        "reason": f"{len(taught)} fact(s) the agent lacked, supplied by the user or found, "
        f"about {', '.join(by_topic)}",
        "new_lessons": [
            {
                "title": x.title,
                "gist": x.gist,
                "family": x.family,
                "body": x.body,
                "provenance": "user" if set(facts) <= told else "repository",
                "outside_instructions": False,
            }
            for x, facts in zip(drafts, by_topic.values(), strict=True)
        ],
        "lessons": uses,
        "load_bearing": spans,
        "rules": rules,
        **standing,
    }


def _opening(prompt: str) -> str:
    """The request that opened the work: the first of the session's earlier requests the
    prompt shows (a reply continues it), else the task itself."""
    earlier = re.findall(r"<request>\n?(.*?)\n?</request>", parse.section(prompt, "earlier"), re.S)
    return earlier[0] if earlier else parse.section(prompt, "task")


def _rules(
    world: Reader, task: str, taught: list[str], unused: set[str], d: Draws
) -> list[dict[str, str]]:
    """Where the knowledge was: the topics the user had to supply that the task never named
    (read them whenever the task touches its topic), and the topics whose chosen lessons
    did nothing for the task (`unused`: skip them when it does)."""
    named = world.topics_in(task)
    if not named or d.flip("rules"):
        return []
    missing = dict.fromkeys(world.facts[f].topic for f in taught)
    read = [t for t in missing if t not in named]
    skip = sorted(unused - set(named) - set(missing))
    when = f"the task touches {named[0]}"
    return [
        *({"when": when, "then": f"also read the {t} lessons"} for t in read),
        *({"when": when, "then": f"nothing in the {t} lessons applies"} for t in skip),
    ]


def _unused_topics(world: Reader, prompt: str, uses: list[dict[str, Any]]) -> set[str]:
    """The topics of the served lessons the reflector found unused, less any topic a used
    lesson is about; none when recall served every lesson (nothing was chosen)."""
    if "chosen for this task" not in prompt:
        return set()
    about = {
        lid: {world.facts[f].topic for f in world.facts_in(block)}
        for lid, block in parse.lessons(parse.section(prompt, "served"))
    }
    used = {t for u in uses if u["used"] for t in about.get(u["id"], set())}
    return {t for u in uses if not u["used"] for t in about.get(u["id"], set())} - used


def _standing(digest: str, d: Draws) -> dict[str, str]:
    """How the work stands at the end of the reflected turns (the last outcome the agent
    reported), and on a failure the agent's own report of it, as a reflector would quote."""
    final = last(digest, OUTCOME)
    outcome = {"ok": "success", "fail": "failure"}.get(final or "", "unknown")
    if outcome != "unknown" and d.flip("standing"):
        outcome = "failure" if outcome == "success" else "success"
    said = [ln for ln in digest.splitlines() if ln.startswith("Agent:") and last(ln, OUTCOME)]
    failure = strip(said[-1].removeprefix("Agent:")).strip() if said and final == "fail" else ""
    return {"outcome": outcome, "failure": failure if outcome == "failure" else ""}


def _reflected_uses(
    world: Reader, prompt: str, digest: str, d: Draws
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """What a reflector shown the served lessons says of them: used or not, by the same
    evidence as `assess`, and for each used one the sentence stating a fact it acted on."""
    served = parse.lessons(parse.section(prompt, "served"))
    holds = {lid: set(world.facts_in(block)) for lid, block in served}
    evidence, _ = _evidence(world, digest, holds)
    acted = {
        f
        for line in digest.splitlines()
        if line.startswith(("Agent:", "Tool:")) and vocab.HABIT not in line
        for f in world.facts_in(line)
    }
    uses, spans = [], []
    for lid, block in served:
        used = (lid in evidence) != d.flip("reflect-used", lid)
        why = evidence.get(lid, "nothing in the digest shows it changed what was done")
        uses.append({"id": lid, "used": used, "reason": why})
        if not used:
            continue
        body = parse.lesson_parts(block)[2]
        for sentence in parse.sentences(body):
            if any(mark(FACT, f) in sentence for f in acted & holds[lid]):
                spans.append({"id": lid, "span": sentence})
    return uses, spans


def _features(world: Reader, text: str) -> tuple[set[str], set[str], set[str]]:
    """(topics, detail subjects, trap defaults) that `text` names in words."""
    plain = strip(text)
    subjects = {thing for thing, _ in vocab.THINGS if _named(thing, plain)}
    defaults = {default for default, _ in vocab.TRAPS if _named(default, plain)}
    return set(world.topics_in(plain)), subjects, defaults


def _match(world: Reader, symptom: str, claim: str) -> float:
    """How well `claim`'s absence explains `symptom`, judged from their words."""
    s_topics, s_subjects, s_defaults = _features(world, symptom)
    c_topics, c_subjects, c_defaults = _features(world, claim)
    if not s_topics & c_topics:
        return 0.05
    if s_subjects:
        if s_subjects & c_subjects:
            wrong = prose.wrong_value(strip(symptom))
            return 0.25 if wrong and _named(wrong, strip(claim)) else 0.85
    elif s_defaults:
        if s_defaults & c_defaults:
            return 0.9
    elif not c_subjects and not c_defaults and _principle(world, claim, s_topics):
        return 0.7  # something was not done right: any way of going about it could be it
    return 0.35


def _principle(world: Reader, claim: str, topics: set[str]) -> bool:
    """`claim` states a way of going about one of `topics` (not a reason or an anecdote)."""
    return any(
        world.facts[f].kind == "principle" and world.facts[f].topic in topics
        for f in world.stated(claim)
    )


def rank_repairs(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    symptoms = [
        s for s in parse.sentences(strip(parse.section(prompt, "failure"))) if prose.is_symptom(s)
    ]
    ranking = []
    for cid, claim in parse.items(parse.section(prompt, "claims")):
        best = max((_match(world, s, claim) for s in symptoms), default=0.05)
        score = min(1.0, best + 0.15 * d.unit("score", cid))
        if d.flip(cid):
            score = 1 - score
        reason = (
            "its absence would explain what went wrong"
            if best >= 0.7
            else "about the same area, but not what went wrong"
            if best >= 0.25
            else "unrelated to the failure"
        )
        ranking.append({"id": cid, "usefulness": round(score, 3), "reason": reason})
    return {"ranking": ranking}


_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
#: Words a paragraph needs to be a lesson: fewer is a label, not a point.
_POINT_WORDS = 4


def split(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    document = parse.section(prompt, "document")
    name = re.search(r"^The document is (.+?)(?:, part \d+ of \d+|:)", prompt, re.M)
    stem = _family(name.group(1).rsplit(".", 1)[0]) if name else "notes"
    lessons: list[dict[str, str]] = []
    for heading, paragraphs in _sections(document):
        for k, para in enumerate(paragraphs):
            if lessons and d.flip("lump", heading, k):  # two points run into one lesson
                lessons[-1]["body"] += "\n\n" + para
                continue
            first = (parse.sentences(strip(para).lstrip("-*0123456789. ")) or [para])[0]
            words = first.split()
            lead = " ".join(words[:8]).rstrip(".:;,") + (" …" if len(words) > 8 else "")
            title = (
                heading
                if heading and len(paragraphs) == 1
                else (f"{heading}: {lead}" if heading else lead)
            )
            topics = world.topics_in(para)
            family = _family(heading) if heading else (_family(topics[0]) if topics else stem)
            lessons.append({"title": title, "gist": first, "family": family, "body": para})
    return {"lessons": lessons}


def _sections(document: str) -> list[tuple[str, list[str]]]:
    """(heading, its paragraphs that make a point) in order; "" before the first heading."""
    out: list[tuple[str, list[str]]] = [("", [])]
    block: list[str] = []
    fenced = False

    def close() -> None:
        text = "\n".join(block).strip()
        block.clear()
        if text.startswith("```") and out[-1][1]:  # a fenced block shows the point before it
            out[-1][1][-1] += "\n\n" + text
        elif len(strip(text).split()) >= _POINT_WORDS and not text.startswith("```"):
            out[-1][1].append(text)

    for line in document.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading:
            close()
            out.append((strip(heading.group(1)), []))
        elif not line.strip() and not fenced:
            close()
        else:
            block.append(line)
    close()
    return [(h, ps) for h, ps in out if ps]


def _family(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:64].strip("-")
    return slug or "notes"

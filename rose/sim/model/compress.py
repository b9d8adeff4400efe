"""The simulated compressor and merger: they cut what a careful model would, in its order.

Compression removes filler first (sentences carrying no fact), then rewrites the verbose
fact sentences in their terse form, and only then drops facts, least evidenced first:
a fact in an evidence span or a preserve hint is never dropped, nor any fact when the
prompt says to keep every claim; with no evidence at all it drops at most one. It
declares what it removed the way the prompt asks: each filler sentence as an anecdote
(kind `example`), each rationale a terse rewrite cut off as a claim of its own (kind
`other`), each dropped fact in its terse form; the ``under_report`` knob leaves that
share of them undeclared; the ``noise`` knob makes it cut one protected fact too, and
the ``over_cut`` knob makes it keep cutting past the budget, each unprotected fact with
that chance, evidence or none.

The merger keeps the children's principles and traps, the details evidence or a preserve
hint protects, and every fact of the children whose every claim the prompt says to keep,
in terse form; it declares the rest the same way, each claim with the child that holds
it, and leaves out unprotected facts while it is over its budget.

What they read: the lessons' facts (their markers, beside the words that state them), the
budget, and the facts the evidence and preserve hints carry or state in words (a judge's
reason may quote a fact without its marker). They write a gist the way `World.gist` does:
the compressor's names at most two topics, the merger's every child's (the topics of the
children's facts, as its prompt asks), and so does the merger's title.
"""

from __future__ import annotations

from typing import Any

from rose import tokens
from rose.sim import parse
from rose.sim.draws import Draws
from rose.sim.reading import CLAIM_KIND, Reader


def compress(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    blocks = parse.lessons(prompt)
    _title, gist, body = parse.lesson_parts(blocks[0][1] if blocks else "")
    ratio = _ratio(parse.section(prompt, "budget"))
    limit = ratio * tokens.count(body)
    evidence, preserve = parse.section(prompt, "evidence"), parse.section(prompt, "preserve")
    protected = set(world.facts_in(evidence)) | set(world.stated(evidence))
    has_evidence = bool(protected)
    protected |= set(world.facts_in(preserve)) | set(world.stated(preserve))
    if parse.section(prompt, "claims"):  # told to keep every claim
        protected |= set(world.facts_in(body))

    sentences = parse.sentences(body)
    kept = [s for s in sentences if world.facts_in(s)] or sentences
    removed = [{"claim": s, "kind": "example"} for s in sentences if s not in kept]
    if tokens.count(" ".join(kept)) > limit:
        shorter = [_terse(world, s) for s in kept]
        removed += [_rationale(world, s) for s, t in zip(kept, shorter, strict=True) if t != s]
        kept = shorter
    dropped: list[str] = []
    pool = sorted(
        (f for f in world.facts_in(" ".join(kept)) if f not in protected),
        key=lambda f: d.unit("drop", f),
    )
    allowed = len(pool) if has_evidence else 1
    while pool and len(dropped) < allowed and tokens.count(" ".join(kept)) > limit:
        kept, dropped = _without(world, kept, pool.pop(0), dropped)
    for f in [f for f in world.facts_in(" ".join(kept)) if f not in protected]:
        if d.cut(f) and len(world.facts_in(" ".join(kept))) > 1:
            kept, dropped = _without(world, kept, f, dropped)
    rest = [f for f in world.facts_in(" ".join(kept)) if f in protected]
    if rest and d.flip("cut"):
        kept, dropped = _without(world, kept, rest[int(d.unit("which") * len(rest))], dropped)
    if not kept:  # never answer an empty body: put the last cut back
        kept, dropped = [world.facts[dropped[-1]].terse], dropped[:-1]
    remaining = world.facts_in(" ".join(kept))
    claims = [c for c in removed if not d.omit(c["claim"])] + [
        {"claim": world.facts[f].terse, "kind": CLAIM_KIND[world.facts[f].kind]}
        for f in dropped
        if not d.omit(f)
    ]
    return {
        "body": " ".join(kept),
        "gist": world.gist(remaining) if remaining else (gist or "A lesson."),
        "dropped": claims,
    }


def _ratio(budget: str) -> float:
    try:
        return float(budget.strip().rstrip("%")) / 100
    except ValueError:
        return 0.75


def _terse(world: Reader, sentence: str) -> str:
    facts = world.facts_in(sentence)
    if len(facts) != 1:
        return sentence
    terse = world.facts[facts[0]].terse
    return terse if len(terse) < len(sentence) else sentence


def _rationale(world: Reader, sentence: str) -> dict[str, str]:
    """What a terse rewrite of a verbose fact sentence cut: the reason or warning after the
    fact, as a sentence of its own that names its topic."""
    fact = world.facts[world.facts_in(sentence)[0]]
    tail = sentence.split(fact.marker, 1)[-1].strip(" ,;.")
    for word in ("and ", "because ", "so "):
        tail = tail.removeprefix(word)
    return {"claim": f"{fact.topic.capitalize()}: {tail}.", "kind": "other"}


def _without(
    world: Reader, kept: list[str], fact: str, dropped: list[str]
) -> tuple[list[str], list[str]]:
    return [s for s in kept if fact not in world.facts_in(s)], [*dropped, fact]


def merge(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    """A shared parent: the children's principles and traps, and the details the evidence or
    the preserve hints carry, in terse form; the other details declared dropped, each held by
    the child stating it, and, as the compressor does, each child's filler and each
    rationale the terse form cut. Over the budget, it leaves out unprotected facts until the
    body fits, and answers over budget when only protected ones are left."""
    blocks = [
        (i, parse.lesson_parts(b)[2]) for i, b in parse.lessons(parse.section(prompt, "lessons"))
    ]
    holder: dict[str, str] = {}
    for lesson_id, body in blocks:
        for f in world.facts_in(body):
            holder.setdefault(f, lesson_id)
    facts = list(holder)
    if not facts:
        return {
            "title": "Shared practice",
            "gist": "What these lessons have in common.",
            "family": "general",
            "body": "These lessons are used together.",
            "dropped": [],
        }
    budget = _tokens(parse.section(prompt, "budget"))
    shown = parse.section(prompt, "evidence") + "\n" + parse.section(prompt, "preserve")
    protected = set(world.facts_in(shown)) | set(world.stated(shown))
    keep = parse.section(prompt, "claims")  # the children whose every claim it must state
    protected |= {
        f for lesson_id, body in blocks if lesson_id in keep for f in world.facts_in(body)
    }
    kept = [f for f in facts if world.facts[f].kind != "detail" or f in protected] or facts[:1]
    spare = sorted((f for f in kept if f not in protected), key=lambda f: d.unit("drop", f))
    while spare and len(kept) > 1 and _cost(world, kept) > budget:
        kept.remove(spare.pop(0))
    claims: dict[str, dict[str, str]] = {}
    for lesson_id, body in blocks:
        for sentence in parse.sentences(body):
            if not world.facts_in(sentence):
                cut = {"claim": sentence, "kind": "example"}
            elif _terse(world, sentence) != sentence:
                cut = _rationale(world, sentence)
            else:
                continue
            claims.setdefault(cut["claim"], {**cut, "holder": lesson_id})
    for f in facts:
        if f not in kept:
            claims[f] = {
                "claim": world.facts[f].terse,
                "kind": CLAIM_KIND[world.facts[f].kind],
                "holder": holder[f],
            }
    names = list(dict.fromkeys(world.facts[f].topic for f in facts))
    return {
        "title": "Working with " + " and ".join(names),  # as the prompt asks: every child's
        "gist": world.gist(facts, every=True),
        "family": "-".join(names[:2]),
        "body": world.lesson(kept, verbose=False).body,
        "dropped": [c for key, c in claims.items() if not d.omit(key)],
    }


def _tokens(budget: str) -> float:
    try:
        return float(budget.split()[0])
    except (ValueError, IndexError):
        return float("inf")


def _cost(world: Reader, facts: list[str]) -> int:
    return tokens.count(world.lesson(facts, verbose=False).body)

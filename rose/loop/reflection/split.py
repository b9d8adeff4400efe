"""Splitting a document into lessons (`rose import`): the code cuts, the model decides.

A CLAUDE.md, an AGENTS.md or any Markdown file holds many points; a lesson holds one. The
code only cuts the file into parts that fit one call (`chunks`: at its headings, then at
its paragraphs, then at its lines, never inside a word it need not cut), and the `split`
call reads each part and writes its lessons, one point each, in the file's own words where
they are precise. Which text is a point, and where one ends, is the model's to say: no
heading or blank line is taken for a lesson's edge here.

The text is redacted before any of it reaches a model. Every part is split before anything
is stored, so a model that fails leaves nothing behind (`SplitFailed` names the file and the
part).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rose import tokens
from rose.errors import MODEL_FAILURES, RoseError
from rose.judge.base import SPLIT, Judge
from rose.judge.models import SplitContext, SplitLesson

#: Tokens of the document one `split` call is shown at most: its answer writes them out
#: again, so a part is kept well inside what a model writes in one answer.
PART_TOKENS = 3000

_HEADING = re.compile(r"^#{1,6}\s")
_FENCE = re.compile(r"^\s*(```|~~~)")


class SplitFailed(RoseError):
    """The model could not split one part of a file: nothing of the file was stored."""

    def __init__(self, name: str, part: int, parts: int, why: str):
        self.name, self.part, self.parts, self.why = name, part, parts, why
        where = f"part {part} of {parts}" if parts > 1 else "it"
        super().__init__(
            f"could not import {name}: the model failed to split {where} ({why}); nothing was "
            "stored. Check the model with `rose doctor`, then run the import again"
        )


@dataclass(frozen=True)
class Split:
    """A document as the model split it: its lessons in order, and how many calls it took."""

    name: str
    lessons: list[SplitLesson]
    parts: int


def split(judge: Judge, name: str, text: str, *, budget: int = PART_TOKENS) -> Split:
    """Ask the `split` call about each part of `text` (the file `name`), in order."""
    from rose.redaction.redact import redact

    parts = chunks(redact(text), budget)
    if not parts:
        raise RoseError(f"{name} holds no text to import")
    lessons: list[SplitLesson] = []
    for number, part in enumerate(parts, 1):
        context = SplitContext(name=name, text=part, part=number, parts=len(parts))
        try:
            answer = judge.ask(SPLIT, context)
        except MODEL_FAILURES as exc:
            raise SplitFailed(name, number, len(parts), str(exc)) from None
        lessons += answer.lessons
    return Split(name, lessons, len(parts))


def chunks(text: str, budget: int = PART_TOKENS) -> list[str]:
    """`text` cut into parts of at most `budget` tokens (`rose.tokens.count`): whole
    sections (a heading and what follows it up to the next) packed together while they fit;
    a section too big alone cut at its paragraphs, each later piece opening with the
    section's heading (so the model knows what it continues); a paragraph too big, at its
    lines; a line too big, at its characters."""
    parts: list[str] = []
    for section in _sections(text):
        pieces = [section] if _fits(section, budget) else _cut_section(section, budget)
        for piece in pieces:
            if parts and _fits(f"{parts[-1]}\n\n{piece}", budget):
                parts[-1] = f"{parts[-1]}\n\n{piece}"
            else:
                parts.append(piece)
    return parts


def _fits(text: str, budget: int) -> bool:
    return tokens.count(text) <= budget


def _blocks(text: str, starts: Any) -> list[str]:
    """`text` cut before each line `starts(line)` says opens a block, never inside a fenced
    code block; blank blocks dropped."""
    out: list[list[str]] = [[]]
    fenced = False
    for line in text.splitlines():
        if not fenced and starts(line) and any(s.strip() for s in out[-1]):
            out.append([])
        out[-1].append(line)
        if _FENCE.match(line):
            fenced = not fenced
    return [b for b in ("\n".join(lines).strip("\n") for lines in out) if b.strip()]


def _sections(text: str) -> list[str]:
    return _blocks(text, lambda line: bool(_HEADING.match(line)))


def _paragraphs(text: str) -> list[str]:
    """`text` cut at its blank lines (outside fenced blocks)."""
    out: list[list[str]] = [[]]
    fenced = False
    for line in text.splitlines():
        if not fenced and not line.strip():
            out.append([])
            continue
        out[-1].append(line)
        if _FENCE.match(line):
            fenced = not fenced
    return [b for b in ("\n".join(lines) for lines in out) if b.strip()]


def _cut_section(section: str, budget: int) -> list[str]:
    first, _, rest = section.partition("\n")
    heading = first if _HEADING.match(first) else ""
    body = rest if heading else section
    lead = f"{heading} (continued)\n\n" if heading else ""
    room = max(1, budget - tokens.count(lead))
    pieces: list[str] = []
    for para in _paragraphs(body):
        for bit in [para] if _fits(para, room) else _cut_lines(para, room):
            if pieces and _fits(f"{pieces[-1]}\n\n{bit}", room):
                pieces[-1] = f"{pieces[-1]}\n\n{bit}"
            else:
                pieces.append(bit)
    if not pieces:
        return [section[: budget * 4]]
    out = [f"{heading}\n\n{pieces[0]}" if heading else pieces[0]]
    out += [lead + p for p in pieces[1:]]
    return [p if _fits(p, budget) else p[: budget * 4] for p in out]


def _cut_lines(para: str, budget: int) -> list[str]:
    """A paragraph too big for one part, at its lines; a line too big, at its characters
    (four to a token, as `rose.tokens` counts)."""
    width = budget * 4
    lines = [
        line[i : i + width]
        for line in para.splitlines()
        for i in range(0, max(len(line), 1), width)
    ]
    out: list[str] = []
    for line in lines:
        if out and _fits(f"{out[-1]}\n{line}", budget):
            out[-1] = f"{out[-1]}\n{line}"
        else:
            out.append(line)
    return out

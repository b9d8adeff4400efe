"""Reading a rendered prompt back: the other half of the templates' layout.

The templates in ``prompts/`` wrap each part of a prompt in a tag (``<task>``,
``<candidates>``, ``<digest>`` ...), render a candidate as one ``- [id] title — gist``
line, a claim as ``- [id] (kind) claim`` and a lesson in full as a
``<lesson id="...">`` block (title and gist lines, a blank line, the body). The
simulated backend reads only what these functions find, so a template that drifts
from this layout fails the contract test instead of being silently misread.
"""

from __future__ import annotations

import re

_LESSON = re.compile(r'<lesson id="([^"]*)">\n(.*?)\n</lesson>', re.DOTALL)
_INJECTED = re.compile(
    r'<lesson id="([^"]*)"[^>]*>(.*?)</lesson>'
    r'|<lesson-reminder id="([^"]*)">(.*?)</lesson-reminder>'
    r'|<lesson-restored id="([^"]*)">(.*?)</lesson-restored>',
    re.DOTALL,
)
_ITEM = re.compile(r"^- \[([^\]]+)\] (.*)$", re.MULTILINE)
_LEVEL = re.compile(r'<lesson id="([^"]*)" level="(\d+)"')


def section(prompt: str, tag: str) -> str:
    """The text inside the first ``<tag>...</tag>``, or "" when the prompt has none."""
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", prompt, re.DOTALL)
    return m.group(1) if m else ""


def lessons(text: str) -> list[tuple[str, str]]:
    """Every ``<lesson id="...">`` block in `text`, as (id, block text)."""
    return _LESSON.findall(text)


def lesson_parts(block: str) -> tuple[str, str, str]:
    """A lesson block's (title, gist, body)."""
    head, _, body = block.partition("\n\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)
    return fields.get("title", ""), fields.get("gist", ""), body


def items(text: str) -> list[tuple[str, str]]:
    """Every ``- [id] rest`` line in `text`, as (id, rest)."""
    return _ITEM.findall(text)


def bullets(text: str) -> list[str]:
    """Every ``- text`` line in `text`, without the dash."""
    return [line[2:] for line in text.splitlines() if line.startswith("- ")]


def sentences(text: str) -> list[str]:
    """`text` split into sentences (the world's prose never has a full stop mid-sentence)."""
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def injected(text: str) -> list[tuple[str, str, str]]:
    """`text` as (form, lesson id, text) pieces: ``lesson``, ``reminder`` and ``restored``
    (detail restored to a lesson) elements, and the ``loose`` text between them (id "")."""
    out: list[tuple[str, str, str]] = []
    pos = 0
    for m in _INJECTED.finditer(text):
        if text[pos : m.start()].strip():
            out.append(("loose", "", text[pos : m.start()]))
        if m.group(1) is not None:
            out.append(("lesson", m.group(1), m.group(2)))
        elif m.group(3) is not None:
            out.append(("reminder", m.group(3), m.group(4)))
        else:
            out.append(("restored", m.group(5), m.group(6)))
        pos = m.end()
    if text[pos:].strip():
        out.append(("loose", "", text[pos:]))
    return out


def levels(text: str) -> dict[str, int]:
    """The level each injected ``<lesson id="..." level="N">`` block in `text` says it is."""
    return {lid: int(n) for lid, n in _LEVEL.findall(text)}

"""The frame is closed to its content: inserted text cannot open or close a template's tags.

Every template frames what it inserts in XML-like tags (`<rose-memory>`, `<lesson id=...>`,
`<digest>`); a lesson body holding `</lesson></rose-memory>` would end the frame and speak
outside it, in the host agent's context or a judge's prompt. Both Jinja environments pass
every `{{ }}` output through `closed`. Standard library only: the prompt hook imports it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TypeVar, overload

from rose.prompt_files import prompts_dir, template_names, template_text

T = TypeVar("T")

# A tag name's characters: a frame tag is its name followed by anything else, or the end.
_NAME = r"[\w.:-]"
_CLOSING = re.compile(rf"</\s*([A-Za-z]{_NAME}*)")


def _all_template_names() -> list[str]:
    """`template_names()` and those in its subfolders (`inject/lesson`), which it skips."""
    names = list(template_names())
    pending = [(d, f"{d.name}/") for d in prompts_dir().iterdir() if d.is_dir()]
    while pending:
        folder, prefix = pending.pop()
        for p in folder.iterdir():
            if p.is_dir():
                pending.append((p, f"{prefix}{p.name}/"))
            elif p.name.endswith(".j2"):
                names.append(prefix + p.name[:-3])
    return sorted(set(names))


@cache
def frame_tags() -> frozenset[str]:
    """Every tag name a template closes (lower case): derived from the templates, so a new
    template's tags are covered without a list to keep."""
    return HOST_TAGS | frozenset(
        m.group(1).lower()
        for name in _all_template_names()
        for m in _CLOSING.finditer(template_text(name))
    )


#: The tags the hosts frame their own context in, around ROSE's block: a lesson must not
#: close or open them either (Claude Code's reminders and hook output, a system turn).
HOST_TAGS = frozenset({"system-reminder", "system", "user-prompt-submit-hook", "command-name"})
# Invisible characters a `<` may hide behind: zero-width spaces and joiners, soft hyphens.
_HIDDEN = "\u00ad\u200b-\u200f\u2060-\u2064\ufeff"


@cache
def _opening() -> re.Pattern[str]:
    """The `<` of a frame tag, opening or closing, however spaced or cased."""
    names = "|".join(re.escape(t) for t in sorted(frame_tags(), key=len, reverse=True))
    gap = rf"[\s{_HIDDEN}]*"
    return re.compile(rf"[<＜](?={gap}[/／]?{gap}(?:{names})(?!{_NAME}))", re.IGNORECASE)


@overload
def closed(value: str) -> str: ...
@overload
def closed(value: T) -> T: ...
def closed(value: object) -> object:
    """`value` with the `<` of every frame tag in it written `&lt;`, nothing else changed (so
    `a < b`, `List<String>` and `<div>` arrive intact); a non-string as it is."""
    if not isinstance(value, str) or ("<" not in value and "＜" not in value):
        return value
    return _opening().sub("&lt;", value)

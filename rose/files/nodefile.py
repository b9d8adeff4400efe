"""Lesson files (`nodes/<family>/<id>.md`: YAML front matter + body) and episode JSON files
(with the corrections checks write beside them, `c_` ids)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import ValidationError

from rose.errors import LessonFileError
from rose.models import Correction, Episode, Node

_FENCE = "---"
# libyaml's safe loader and dumper when PyYAML was built with it (about 6x faster);
# the pure-Python safe ones otherwise. Both are the *safe* variants.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
# Front-matter keys in the order a reader expects them; scope comes from the store's location.
_ORDER = (
    "id",
    "family",
    "title",
    "gist",
    "provisional",
    "level",
    "status",
    "origin",
    "provenance",
    "held",
    "accepted",
    "conflict",
    "disputes",
    "derived_from",
    "parents",
    "dropped",
    "preserve",
    "patches",
    "created",
    "updated",
)
_WHEN_SET = ("provisional", "provenance", "held", "accepted")
# What was observed of a lesson is folded from episodes by the graph, never kept in its file.
# Older files carried these; they are read past (and gone at the next write).
OBSERVED = ("stats", "covers_tasks", "load_bearing")


def pydantic_reason(exc: ValidationError) -> str:
    """`field: message` for each problem, the way a person would want it."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(file)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def dump_node(node: Node) -> str:
    data = node.model_dump(mode="json", exclude={"body", "scope"})
    # These only appear when set, so a written lesson stays clean.
    front = {k: data[k] for k in _ORDER if k not in _WHEN_SET or data[k]}
    text = yaml.dump(front, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    body = node.body.rstrip("\n")
    return f"{_FENCE}\n{text}{_FENCE}\n{body}\n" if body else f"{_FENCE}\n{text}{_FENCE}\n"


def parse_node(text: str, path: Path, scope: str) -> Node:
    """Parse one lesson file; any problem is a LessonFileError naming the file and why."""
    if not text.startswith(_FENCE + "\n"):
        raise LessonFileError(path, "no YAML front matter (the file must start with '---')")
    end = text.find(f"\n{_FENCE}\n", len(_FENCE))
    if end < 0:
        if text.rstrip("\n").endswith(f"\n{_FENCE}"):
            end = text.rstrip("\n").rfind(f"\n{_FENCE}")
        else:
            raise LessonFileError(path, "front matter is never closed with '---'")
    try:
        front = yaml.load(text[len(_FENCE) + 1 : end + 1], Loader=_Loader)  # noqa: S506
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark else ""
        raise LessonFileError(path, f"front matter is not valid YAML{where}") from None
    if not isinstance(front, dict):
        raise LessonFileError(path, "front matter must be a mapping of fields")
    if not front.get("id"):
        raise LessonFileError(path, "front matter has no id")
    body = text[end + len(_FENCE) + 2 :].strip("\n")
    for key in OBSERVED:
        front.pop(key, None)
    try:
        node = Node.model_validate({**front, "body": body, "scope": scope})
    except ValidationError as exc:
        raise LessonFileError(path, pydantic_reason(exc)) from None
    if path.stem != node.id:
        raise LessonFileError(path, f"file name does not match its id {node.id!r}")
    return node


@dataclass(frozen=True)
class LessonRead:
    node: Node
    #: The offset of the file's first byte that is not UTF-8, or None when every byte is.
    bad_byte: int | None = None


def read_node(path: Path, scope: str) -> Node:
    return read_lesson(path, scope).node


def read_lesson(path: Path, scope: str) -> LessonRead:
    """The lesson in a file. A byte that is not UTF-8 (a stray Latin-1 character, a bad
    copy) is read as U+FFFD and its offset kept for a warning, so one byte does not keep a
    whole lesson from being served; the file is left as it is. Anything else is strict."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LessonFileError(path, f"unreadable: {exc}") from None
    try:
        return LessonRead(parse_node(raw.decode("utf-8"), path, scope))
    except UnicodeDecodeError as exc:
        bad = exc.start
    return LessonRead(parse_node(raw.decode("utf-8", errors="replace"), path, scope), bad)


def dump_episode(ep: Episode) -> dict:
    return ep.model_dump(mode="json")


def read_episode(path: Path) -> Episode:
    return _read_json(path, Episode)


def is_correction(path: Path) -> bool:
    """Whether a file of `episodes/` holds a check's correction rather than an episode."""
    return path.name.startswith("c_")


def read_record(path: Path) -> Episode | Correction:
    """A file of `episodes/`: an episode, or a correction written beside one."""
    return _read_json(path, Correction) if is_correction(path) else _read_json(path, Episode)


_Record = TypeVar("_Record", Episode, Correction)


def _read_json(path: Path, model: type[_Record]) -> _Record:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonFileError(path, f"unreadable: {exc}") from None
    except json.JSONDecodeError as exc:
        raise LessonFileError(path, f"not valid JSON at line {exc.lineno}") from None
    try:
        item = model.model_validate(data)
    except ValidationError as exc:
        raise LessonFileError(path, pydantic_reason(exc)) from None
    if path.stem != item.id:
        raise LessonFileError(path, f"file name does not match its id {item.id!r}")
    return item

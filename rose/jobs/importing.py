"""`rose import`: a file of notes (CLAUDE.md, AGENTS.md, any Markdown) taught as lessons.

The model splits the file into lessons of one point each (`rose.loop.reflection.split`), and each is
then taught as `rose add` teaches one: consolidated with what is known (`capture`, source
`user`), so a point the store already holds is not stored twice. Each carries the file's
provenance: `repository` for a file inside the current repository (its CLAUDE.md, its
AGENTS.md), `outside` for one beyond it, whose lessons stay in this project's store until
the user accepts them, as all outside content does (`rose.loop.reflection.consolidate`); the caller
may say otherwise (`--from`). Nothing is stored until the whole file is split, and a store
that fails part way says what it stored before it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rose.errors import RoseError
from rose.jobs.capture import capture
from rose.judge.base import Judge
from rose.judge.models import SplitLesson
from rose.loop.reflection.consolidate import Consolidated
from rose.loop.reflection.split import PART_TOKENS, split
from rose.models import PROVENANCES, Node
from rose.store.facade import Store


@dataclass
class Imported:
    """What an import made of a file: its lessons as split, in how many calls, and (unless
    it was a dry run) what became of each."""

    path: Path
    provenance: str
    lessons: list[SplitLesson]
    parts: int
    done: list[Consolidated] = field(default_factory=list)


def import_file(
    path: Path,
    *,
    provenance: str | None = None,
    scope: str | None = None,
    reconcile: bool = True,
    dry_run: bool = False,
    judge: Judge | None = None,
    budget: int = PART_TOKENS,
    start: Path | None = None,
) -> Imported:
    """Split `path` into lessons and teach each (`dry_run`: only split it).

    `provenance` None: the file's own (`provenance_of`). `judge` None: the store's (the
    defaults when there is no store yet). `scope`, `reconcile`: as for `rose add`."""
    if provenance is not None and provenance not in PROVENANCES:
        raise RoseError(f"--from {provenance!r} is not one of {', '.join(PROVENANCES)}")
    text = _read(path)
    came = provenance or provenance_of(path, start)
    asked = judge if judge is not None else _judge(start)
    parts = split(asked, path.name, text, budget=budget)
    out = Imported(path, came, parts.lessons, parts.parts)
    if dry_run:
        return out
    for number, lesson in enumerate(parts.lessons, 1):
        try:
            node = as_node(lesson, came)
            done = capture(
                None, judge, node, source="user", scope=scope, reconcile=reconcile, start=start
            )
        except Exception as exc:
            raise _stopped(out, number, lesson, exc) from exc
        out.done.append(done)
    return out


def as_node(lesson: SplitLesson, provenance: str) -> Node:
    """A split lesson as a lesson to teach: its title and gist written (by the model), not
    derived from its first sentence."""
    node = Store.draft(lesson.body, title=lesson.title, family=lesson.family)
    node.gist = lesson.gist.strip()
    node.provisional = [p for p in node.provisional if p not in ("title", "gist")]
    node.provenance = provenance  # type: ignore[assignment]
    return node


def provenance_of(path: Path, start: Path | None = None) -> str:
    """`repository` for a file inside the current repository (the folder of the project
    store, or of `.git`, found from `start` upwards), else `outside`."""
    where = path.resolve()
    return "repository" if any(where.is_relative_to(r) for r in _repositories(start)) else "outside"


def _repositories(start: Path | None) -> list[Path]:
    here = (start or Path.cwd()).resolve()
    roots = [d for d in (here, *here.parents) if (d / ".git").exists()][:1]
    try:
        project = Store.open(start).project
    except RoseError:
        project = None
    if project is not None:
        roots.append(project.root.resolve().parent)
    return roots


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RoseError(f"cannot import {path}: there is no such file") from None
    except UnicodeDecodeError:
        raise RoseError(f"cannot import {path}: it is not UTF-8 text") from None
    except OSError as exc:
        raise RoseError(f"cannot import {path}: {exc.strerror or exc}") from None


def _judge(start: Path | None) -> Judge:
    """The store's judge, else one on the default backend with no cache or log."""
    from rose.judge import calls

    try:
        return calls.for_store(Store.open(start))
    except RoseError:
        from rose import config as configmod
        from rose.model.registry import make_backend

        settings = configmod.load([])
        backend = make_backend(settings.agent, model=settings.model or None)
        return calls.Judge(backend, cache_path=None, events_path=None)


def _stopped(out: Imported, number: int, lesson: SplitLesson, exc: Exception) -> RoseError:
    """The error of an import that stopped at lesson `number`: what was stored before it."""
    total = len(out.lessons)
    stored = "; ".join(d.line() for d in out.done) or "nothing"
    why = str(exc) if isinstance(exc, RoseError) else f"{type(exc).__name__}: {exc}"
    return RoseError(
        f"import of {out.path} stopped at lesson {number} of {total} ({lesson.title}): {why}. "
        f"Stored before it: {stored}"
    )

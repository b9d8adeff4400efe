"""Checks' corrections of attribution, applied to the episodes they name as the graph holds them.

A correction (`rose.models.Correction`, a `c_` file beside the episode it corrects) says a
check found a lesson used, or not, where the episode's attribution said otherwise. The
graph keeps each as a `Correction` row and holds every episode with its corrections
applied (`rose.models.corrected`): its `used_ids` and `unused_ids`, and so its USED edges,
COVERS and every fold, follow the check, while the episode's file stays as it was written.

A correction that comes, changes or goes changes how its episode is held: the sync reads
that episode's file again and replaces it (`reread`), with everything a changed episode
moves. An episode that arrives after its correction (a pull in any order) finds it among
the rows (`apply`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from rose.errors import LessonFileError
from rose.files.nodefile import read_episode
from rose.files.scan import FileState, Survey
from rose.graph.engine import Graph
from rose.models import Correction, Episode, corrected


def row(c: Correction, path: str) -> dict:
    """A correction's `Correction` row."""
    return {"id": c.id, "episode": c.episode, "lesson": c.lesson, "used": c.used,
            "time": c.time.isoformat(), "path": path}  # fmt: skip


def _from_row(r: dict) -> Correction:
    return Correction(id=r["id"], episode=r["episode"], lesson=r["lesson"], used=bool(r["used"]),
                      time=r["time"])  # fmt: skip


def _ours(ids: Iterable[str]) -> list[str]:
    """The ids among `ids` that name corrections (a file of `episodes/` is one or the other)."""
    return sorted(i for i in ids if i.startswith("c_"))


def targets(g: Graph, coming: Sequence[Correction], going: Iterable[str]) -> set[str]:
    """The episodes whose corrections come (`coming`) or go or change (`going`: the ids of
    the episode files' items being replaced or removed)."""
    named = {c.episode for c in coming}
    ask = _ours(going)
    if ask:
        named |= {r["episode"] for r in g.q("corrections_get", ids=ask)}
    return named


def reread(
    g: Graph, survey: Survey, ids: Iterable[str]
) -> tuple[list[tuple[Episode, FileState]], list[dict]]:
    """The episodes `ids` read again from their files, to be replaced in the graph, and the
    `files_holding` rows they replace (`{"item", "kind", "path"}`). An episode the graph
    does not hold, or whose file cannot be read, is left alone."""
    ask = sorted(ids)
    if not ask:
        return [], []
    states = survey.states()
    out: list[tuple[Episode, FileState]] = []
    old: list[dict] = []
    for r in g.q("files_holding", ids=ask):
        st = states.get(r["path"])
        if st is None:
            continue
        try:
            ep = read_episode(Path(st.path))
        except LessonFileError:
            continue
        out.append((ep, st))
        old.append({"item": ep.id, "kind": "episode", "path": st.path})
    return out, old


def apply(
    g: Graph,
    episodes: list[Episode],
    coming: Sequence[Correction],
    going: Iterable[str],
    *,
    full: bool,
) -> list[Episode]:
    """`episodes` with their corrections applied: those of this sync (`coming`) and, short
    of a full rebuild, those the graph holds that are not going (`going`)."""
    gone = set(going)
    held: list[Correction] = []
    ids = [e.id for e in episodes]
    if ids and not full:
        held = [_from_row(r) for r in g.q("corrections_of", ids=ids) if r["id"] not in gone]
    every = sorted([*held, *coming], key=lambda c: (c.time, c.id))
    if not every:
        return episodes
    return [corrected(e, every) for e in episodes]


def write(g: Graph, coming: Sequence[tuple[Correction, str]], going: Iterable[str]) -> None:
    """Replace the `going` correction rows with the `coming` ones (correction, path)."""
    ask = _ours(going)
    if ask:
        g.q("corrections_delete", ids=ask)
    if coming:
        g.q("corrections_create", rows=[row(c, path) for c, path in coming])

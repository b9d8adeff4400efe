"""Bring the graph up to date with the files, re-reading only what changed.

Every file the graph has read is remembered as a `SourceFile` row (path, mtime,
size, the id it holds, or why it could not be read). A sync stats the files,
compares, parses only new or changed ones, and replaces exactly the lessons and
episodes they hold, re-linking edges at either end. A full sync wipes and
rebuilds; deleting the database therefore loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from rose.errors import LessonFileError, QueryError
from rose.files import scan as store_scan
from rose.files.layout import StoreDir
from rose.files.nodefile import read_lesson, read_record
from rose.files.scan import FileState, Survey
from rose.graph import _corrections, synced
from rose.graph._apply import apply
from rose.graph.engine import Graph
from rose.graph.rows import (
    SMALL,
    episode_folds,
    spans_by_lesson,
)
from rose.models import Correction, Episode, Node
from rose.queries.named import load, statements

# What was observed, folded from episodes into lessons and claims: after every link.
_FOLDS = ("fold_use", "fold_expansions", "fold_rescues", "fold_claim_rescues", "fold_patch_rescues")
#: The folds that count a rescued claim for the lesson holding it, as well as by lesson.
_BY_HOLDER = ("fold_rescues", "fold_claim_rescues")


class SchemaOutdated(Exception):
    """The database was built for another schema: delete it and rebuild from the files."""


@lru_cache(maxsize=1)
def schema_version() -> str:
    return hashlib.sha256(load("schema").encode()).hexdigest()[:12]


@dataclass
class SyncReport:
    full: bool = False
    read: int = 0
    removed: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    #: The scan the sync made (or was handed): every file, and what differs from the last one.
    survey: Survey = field(default_factory=Survey, repr=False)
    #: `fingerprint(survey, broken files)`: what the graph's meta record holds after the sync.
    fingerprint: str = ""
    #: The database's identity when `survey` was made (`rose.store.opened.unchanged`).
    held_by: list | None = field(default=None, repr=False)
    #: The fingerprint the graph held before the sync, and how much the sync moved the apexes'
    #: token total when it left the apexes as they were (else None): the recall view is
    #: carried forward from these (`rose.store.view.advanced`).
    before: str = ""
    apex_delta: int | None = None
    #: The lessons a sync that changed nothing but lessons' text updated in place (their
    #: links, status and the lesson ids all as they were, no episode moved), else None: the
    #: recall view that renders lessons re-renders only these (`rose.store.view.patched`).
    edited: list[str] | None = None
    #: Whether the sync found a database no sync had written (new, or rebuilt from nothing).
    new_database: bool = False
    #: The lesson files this sync read with a byte that is not UTF-8: the first one's offset.
    bad_bytes: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.read or self.removed or self.full)


def scan(dirs: list[StoreDir], prev: dict | None = None, db: Path | None = None) -> Survey:
    """Every lesson and episode file of every scope, project scope first; `prev` is the
    survey kept beside the database `db` (`synced.read_listing`), when there is one. Where
    a graph server holds `db` and watches the folders, only those changed since `prev` are
    scanned (`rose.graph._watch`)."""
    roots = [(str(d.root), d.scope) for d in dirs]
    if db is None:
        return store_scan.survey(roots, prev=prev)
    from rose.graph import server

    tops = [os.path.join(r, sub) for r, _ in roots for sub in ("nodes", "episodes")]
    told = server.changes(db, tops, (prev or {}).get("watch"))
    if told is None:
        return store_scan.survey(roots, prev=prev)
    fresh, dirty = tuple(t + os.sep for t in told["fresh"]), set(told["dirty"])

    def clean(folder: str) -> bool:
        return folder not in dirty and not (folder + os.sep).startswith(fresh)

    return store_scan.survey(roots, prev=prev, clean=clean, token=told["token"])


def ensure_schema(g: Graph) -> dict[str, str] | None:
    """Create the tables if needed; the database's meta record, or None when it holds
    another schema version."""
    try:
        meta = {r["key"]: r["value"] for r in g.q("meta_get")}
    except QueryError:  # a new database: no tables yet
        meta = {}
    if meta.get("schema") == schema_version():
        return meta
    if meta.get("schema") is not None:
        return None
    for stmt in statements("schema"):
        g.run(stmt, name="schema")
    g.q("meta_set", key="schema", value=schema_version())
    return {"schema": schema_version()}


def fingerprint(survey: Survey, broken: list[str]) -> str:
    """Every file the graph was built from, with its stat, as one short string.

    Episodes are listed without a stat, except the `broken` ones (files that failed to
    parse): those are stat'ed, so repairing one changes the fingerprint. The folders are
    hashed in the order `scan` found them, which is a function of the files alone (each
    folder in name order).
    """
    # Change detection, not security: sha1 is the cheapest of hashlib's (0.7 ms for 1.5 MB).
    h = hashlib.sha1(usedforsecurity=False)
    for _, data in survey.parts():
        h.update(data)
    rows: list[tuple] = []
    for path in sorted(broken):
        if survey.holds_episode(path):
            try:
                s = os.stat(path)
                rows.append(("broken", path, s.st_mtime_ns, s.st_size))
            except OSError:
                pass
    if rows:
        h.update(marshal.dumps(rows, 2))
    return h.hexdigest()


def _parse(
    changed: list[FileState],
    claimed_by: Callable[[list[str]], dict[str, str]],
    bad_bytes: dict[str, int],
):
    """Parse changed files; an id already held by another file is an error for the newcomer.

    `claimed_by(ids)` says which unchanged file holds each of `ids` (by id), if any. Returns
    the lessons, the episodes and the corrections (`rose.graph._corrections`) read, each with
    its file's state, and what each file holds (or why it could not be read). A lesson file
    read with a byte that is not UTF-8 goes into `bad_bytes` with its offset.
    """
    parsed: list[tuple[FileState, Node | Episode | Correction | None, str]] = []
    for st in changed:
        try:
            item: Node | Episode | Correction | None
            if st.kind == "node":
                read = read_lesson(Path(st.path), st.scope)
                item = read.node
                if read.bad_byte is not None:
                    bad_bytes[st.path] = read.bad_byte
            else:
                item = read_record(Path(st.path))
        except LessonFileError as exc:
            parsed.append((st, None, exc.reason))
            continue
        parsed.append((st, item, ""))
    claimed = claimed_by(sorted({item.id for _, item, _ in parsed if item is not None}))
    nodes: list[tuple[Node, FileState]] = []
    episodes: list[tuple[Episode, FileState]] = []
    corrections: list[tuple[Correction, FileState]] = []
    results: dict[str, tuple[str, str]] = {}  # path -> (item id, error)
    for st, item, error in parsed:
        other = claimed.get(item.id) if item is not None else None
        if item is not None and other and other != st.path:
            error = f"duplicate id {item.id}: also in {other}"
        if item is None or error:
            results[st.path] = ("", error)
            continue
        claimed[item.id] = st.path
        results[st.path] = (item.id, "")
        if isinstance(item, Node):
            nodes.append((item, st))
        elif isinstance(item, Correction):
            corrections.append((item, st))
        else:
            episodes.append((item, st))
    return nodes, episodes, corrections, results


def _fold(
    g: Graph, full: bool, every: set[str], by_fold: dict[str, set[str]] | None, claims: set[str]
) -> None:
    """Recompute what episodes say of lessons (and claims): with every fold, those in
    `every` (lessons written, whose whole record may have moved), or all of them when
    `full`; with each fold, those in `by_fold` for it, and for the folds by holder, the
    holders of `claims`. A record from before the folds were apart (`by_fold` None) runs
    every fold for `every` and the holders."""
    if full:
        for fold in _FOLDS:
            g.q(fold, everything=True, ids=[])
        _fold_spans(g, True, [])
        return
    holders = {r["id"] for r in g.q("claim_holders", ids=sorted(claims))} if claims else set()
    if by_fold is None:
        every, by_fold = every | holders, {}
    for fold in _FOLDS:
        named = every | by_fold.get(fold, set()) | (holders if fold in _BY_HOLDER else set())
        if named:
            g.q(fold, everything=False, ids=sorted(named))
    named = every | by_fold.get("spans", set())
    if named:
        _fold_spans(g, False, sorted(named))


def _fold_spans(g: Graph, full: bool, ids: list[str]) -> None:
    spans = spans_by_lesson(g.q("spans_of", everything=full, ids=ids))
    rows = [{"id": i, "spans": s} for i, s in spans.items()]
    rows += [{"id": i, "spans": []} for i in ids if i not in spans]
    if rows:
        g.q("lessons_set_spans", rows=rows)


def sync(
    g: Graph, dirs: list[StoreDir], *, full: bool = False, known: SyncReport | None = None
) -> SyncReport:
    """Make the graph match the files; a no-op (no writes) when nothing changed.

    `known` is a report of a scan made just before (`Store.graph` checks the files before it
    opens the database): when the graph holds exactly that fingerprint, it is the answer, and
    the files are not scanned again.
    """
    t0 = time.monotonic()
    meta = ensure_schema(g)
    if meta is None:
        raise SchemaOutdated(str(g.path))
    if meta.get("derive"):  # a sync that crashed between its two transactions
        _derive(g, json.loads(meta["derive"]))
    errors = [tuple(e) for e in json.loads(meta.get("file_errors") or "[]")]
    if known is not None and not full and meta.get("files") == known.fingerprint:
        # The graph holds what the scan found; its broken files are the graph's record, not
        # the scan's (a lesson's breaking or mending leaves the fingerprint as it was, and
        # another process may have synced it in between).
        return replace(known, errors=errors, held_by=None)
    if _reusable(g, known, errors):  # the scan made just before the open still stands
        current, print_ = known.survey, known.fingerprint  # type: ignore[union-attr]
    else:
        current = scan(dirs, None if full else synced.read_listing(g.path), g.path)
        print_ = fingerprint(current, [p for p, _ in errors])
    if not full and meta.get("files") == print_:
        # Nothing changed: no rows read, no writes (but a fresher listing kept).
        if current.keep:
            synced.write_listing(g.path, print_, current)
        return SyncReport(
            errors=errors, seconds=time.monotonic() - t0, survey=current, fingerprint=print_
        )
    changed, removed, known_rows, old_errors, claimed_by = _diff(g, meta, current, errors, full)
    stale = set(removed) | {st.path for st in changed}
    report = SyncReport(
        full=full, read=len(changed), removed=len(removed), survey=current, fingerprint=print_
    )
    report.before = meta.get("files") or ""
    report.new_database = "files" not in meta
    if not (full or changed or removed):
        report.errors = sorted(old_errors)
        _record(g, print_, report.errors)
        synced.write_listing(g.path, print_, current)
        report.seconds = time.monotonic() - t0
        return report

    nodes, episodes, corrections, results = _parse(changed, claimed_by, report.bad_bytes)
    old = [known_rows[p] for p in stale if p in known_rows and known_rows[p]["item"]]
    episodes, old = _corrected(g, current, episodes, corrections, old, full)
    episode_ids = {r["item"] for r in old if r["kind"] == "episode"} | {e.id for e, _ in episodes}
    by_fold, claim_refs = _moved(g, old, [e for e, _ in episodes])

    errs = dict(old_errors)
    errs.update({p: e for p, (_, e) in results.items() if e})
    report.errors = sorted(errs.items())

    with g.transaction():
        if full:
            g.q("wipe")
        done = apply(
            g,
            [(n, st.path) for n, st in nodes],
            [(e, st.scope, st.path) for e, st in episodes],
            {r["item"] for r in old if r["kind"] == "node"},
            {r["item"] for r in old if r["kind"] == "episode"},
            full=full,
        )
        going = {r["item"] for r in old if r["kind"] == "episode"}
        _corrections.write(g, [(c, st.path) for c, st in corrections], going)
        # Derived edges and folds read what this transaction wrote: they run in the next one
        # (the engine's reads of relationships written earlier in the same transaction can
        # miss or repeat some). Recorded here, so a crash in between is finished on next open.
        # A sync that changed no episode and only lessons' text has nothing to derive.
        report.apex_delta = None if full else done.apex_delta
        if not (full or episode_ids) and done.apex_delta is not None and done.updated is not None:
            report.edited = sorted(done.updated)
        derive = {"full": full, "episodes": done.episodes, "lessons": sorted(done.lessons)}
        derive["folds"] = {fold: sorted(ids) for fold, ids in by_fold.items() if ids}
        derive["claims"] = sorted(claim_refs)
        todo = full or bool(episode_ids or done.episodes or done.lessons or claim_refs)
        todo = todo or any(by_fold.values())
        _put_files(g, changed, [] if full else removed, results)
        meta = {"derive": json.dumps(derive) if todo else ""}
        if full:
            meta["schema"] = schema_version()
        _record(g, print_, report.errors, meta)
    if todo:
        _derive(g, derive)
    synced.write_listing(g.path, print_, current)
    report.seconds = time.monotonic() - t0
    return report


def _corrected(
    g: Graph,
    current: Survey,
    episodes: list[tuple[Episode, FileState]],
    corrections: list[tuple[Correction, FileState]],
    old: list[dict],
    full: bool,
) -> tuple[list[tuple[Episode, FileState]], list[dict]]:
    """The episodes to write with their corrections applied, and the rows they replace: the
    episodes whose corrections this sync brings, changes or removes are read again from
    their files and replaced too (`rose.graph._corrections`)."""
    going = {r["item"] for r in old if r["kind"] == "episode"}
    if not full:
        named = _corrections.targets(g, [c for c, _ in corrections], going)
        named -= going | {e.id for e, _ in episodes}  # replaced already
        again, replaced = _corrections.reread(g, current, named)
        episodes, old = [*episodes, *again], [*old, *replaced]
    eps = [e for e, _ in episodes]
    fixed = _corrections.apply(g, eps, [c for c, _ in corrections], going, full=full)
    return [(e, st) for e, (_, st) in zip(fixed, episodes, strict=True)], old


def _moved(
    g: Graph, old: list[dict], episodes: list[Episode]
) -> tuple[dict[str, set[str]], set[str]]:
    """The lessons whose record the changed episodes touch, before and after the change, by
    fold, and the claims they say rescued (`episode_folds`)."""
    by_fold: dict[str, set[str]] = {}
    claims: set[str] = set()
    old_ids = sorted({r["item"] for r in old if r["kind"] == "episode"})
    old_eps = [r["episode"] for r in g.q("episode_get", ids=old_ids)] if old_ids else []
    for ref in [*old_eps, *episodes]:
        moved, rescued = episode_folds(ref)
        for fold, ids in moved.items():
            by_fold.setdefault(fold, set()).update(ids)
        claims |= rescued
    return by_fold, claims


def _put_files(g: Graph, changed: list[FileState], removed: list[str], results: dict) -> None:
    """The files' own rows: what each changed file holds (or why it could not be read)."""
    if removed:
        g.q("files_delete", paths=sorted(removed))
    rows = [
        {
            "path": st.path,
            "kind": st.kind,
            "scope": st.scope,
            "mtime_ns": st.mtime_ns,
            "size": st.size,
            "item": results[st.path][0],
            "error": results[st.path][1],
        }
        for st in changed
    ]
    if len(rows) > SMALL:
        g.q("files_put", rows=rows)
    else:
        for r in rows:
            g.q("file_put_one", **r)


def _derive(g: Graph, todo: dict) -> None:
    """Draw the edges derived from others (COVERS, from USED) and fold what the episodes say
    into lessons and claims, then clear the record of the work to do."""
    full = bool(todo.get("full"))
    with g.transaction():
        if full or todo.get("episodes"):
            g.q("link_covers", everything=full, ids=todo.get("episodes", []))
        folds = todo.get("folds")
        by_fold = {f: set(ids) for f, ids in folds.items()} if isinstance(folds, dict) else None
        _fold(g, full, set(todo.get("lessons", [])), by_fold, set(todo.get("claims", [])))
        g.q("meta_set", key="derive", value="")


def _diff(g: Graph, meta: dict, current: Survey, errors: list, full: bool):
    """What changed against what the graph holds: (changed files, removed paths, the rows of
    both by path, the other files' errors, and `claimed_by` for `_parse`).

    What the graph holds is the survey kept for its fingerprint (`rose.graph.synced`), which
    `current` was compared with as it was made; every file's row is read only when that
    survey is missing or of another state.
    """
    if full or not current.base or current.base != meta.get("files"):
        states = current.states()
        every = {} if full else {r["path"]: r for r in g.q("files_all")}
        changed = [
            st
            for p, st in states.items()
            if p not in every or (every[p]["mtime_ns"], every[p]["size"]) != (st.mtime_ns, st.size)
        ]
        changed += _fixed_episodes(states, every, changed)
        removed = [p for p in every if p not in states]
        stale = set(removed) | {st.path for st in changed}
        held_stale = {every[p]["item"] for p in stale if p in every and every[p]["item"]}
        errs = [(p, r["error"]) for p, r in every.items() if r["error"]]
        changed += [states[p] for p in _freed(errs, held_stale, stale) if p in states]
        stale = set(removed) | {st.path for st in changed}
        rows = {p: every[p] for p in stale if p in every}
        others = [(p, r["error"]) for p, r in every.items() if r["error"] and p not in stale]
        held = {r["item"]: p for p, r in every.items() if r["item"] and p not in stale}
        return changed, removed, rows, others, lambda ids: {i: held[i] for i in ids if i in held}
    changed = list(current.changed)
    removed = list(current.removed)
    seen = {st.path for st in changed}
    changed += [  # broken episodes are read again: see `_fixed_episodes`
        _episode_state(current, p) for p, _ in errors if p not in seen and current.holds_episode(p)
    ]
    stale = set(removed) | {st.path for st in changed}
    if len(stale) > SMALL:
        rows = {r["path"]: r for r in g.q("files_get", paths=sorted(stale))}
    else:
        rows = {r["path"]: r for p in sorted(stale) for r in g.q("file_get_one", path=p)}

    # An id that one of these files held is held by no other file (a duplicate is kept as
    # an error, holding nothing): only the others are looked up.
    held_here = {r["item"] for r in rows.values() if r["item"]}
    freed = _freed(errors, held_here, stale)
    if freed:  # refused as duplicates of an id these files held: read again
        states = current.states()
        changed += [states[p] for p in freed if p in states]
        stale |= set(freed)
        rows.update({r["path"]: r for p in freed for r in g.q("file_get_one", path=p)})

    def claimed_by(ids: list[str]) -> dict[str, str]:
        ask = [i for i in ids if i not in held_here]
        found = g.q("files_holding", ids=ask) if ask else []
        return {r["item"]: r["path"] for r in found if r["path"] not in stale}

    return changed, removed, rows, [(p, e) for p, e in errors if p not in stale], claimed_by


def _freed(errors: list, ids: set[str], stale: set[str]) -> list[str]:
    """The other broken files refused as a duplicate of one of `ids` (`_parse`): the file that
    held the id changed or went, so they are read again (the first read keeps the id)."""
    head = "duplicate id "
    return [
        p
        for p, e in errors
        if p not in stale and e.startswith(head) and e[len(head) :].split(":", 1)[0] in ids
    ]


def _episode_state(survey: Survey, path: str) -> FileState:
    scope = survey.folders[os.path.dirname(path)][1]
    return FileState(path, "episode", scope, 0, 0)


def _reusable(g: Graph, known: SyncReport | None, errors: list) -> bool:
    """Whether `known`'s scan can stand for a scan now: nobody wrote the database since it
    was made (so nobody synced newer files in), and the broken files are the ones it used."""
    if known is None or not known.held_by or known.errors != errors:
        return False
    return synced.identity(g.path) == known.held_by


def _record(g: Graph, print_: str, errors: list, more: dict[str, str] | None = None) -> None:
    """What the next open compares against, written with the rows it describes (and `more`
    meta entries), in one statement."""
    meta = {"file_errors": json.dumps(errors), "files": print_, **(more or {})}
    if meta.keys() == {"file_errors", "files", "derive"}:  # every sync that wrote something
        g.q("meta_put_synced", **meta)
    else:
        g.q("meta_put", rows=[{"key": k, "value": v} for k, v in meta.items()])


def _fixed_episodes(current: dict, known: dict, changed: list) -> list[FileState]:
    """Broken episode files to read again: episodes carry no stat, so a repaired one (the only
    edit an episode ever gets) shows only by parsing it again. They are few."""
    seen = {st.path for st in changed}
    return [
        current[p]
        for p, r in known.items()
        if r["error"] and r["kind"] == "episode" and p in current and p not in seen
    ]

"""The Store: the one door to lessons and episodes, over both scopes, files plus graph."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose import config as configmod
from rose.disk.atomic import uncached, write_json, write_text
from rose.errors import (
    GraphDamaged,
    LessonNotFound,
    QueryError,
    RoseError,
    StoreNotFound,
    StoreReadOnly,
    WriteFailed,
)
from rose.events import append_event
from rose.files import journal, shortid
from rose.files.draft import draft
from rose.files.layout import StoreDir, find_project_root, global_root
from rose.files.nodefile import dump_episode, dump_node
from rose.files.notices import notify
from rose.graph.engine import (
    Graph,
    LazyGraph,
    open_graph,
    query_damage,
    remove_database,
    set_aside,
)
from rose.graph.rows import episode_from_row, lessons_get, node_from_row
from rose.graph.sync import SchemaOutdated, SyncReport, sync
from rose.models import Correction, Episode, Node, RoutingRule, derived_id, now
from rose.store import _damage, links, opened, unwritable

#: One record as a dict: a named query's row, or a line, entry or event built from rows.
Row = dict[str, Any]


@dataclass(frozen=True)
class Problem:
    path: str
    reason: str


class Store:
    """Project store layered over the global one (`~/.rose`), with one graph indexing both.

    The graph lives in the primary store (the project one when there is one)
    and is brought up to date with the files on every open.
    """

    def __init__(self, project: Path | None, global_dir: Path | None):
        self.project = StoreDir(project, "project") if project else None
        self.global_ = StoreDir(global_dir, "global") if global_dir else None
        if not (self.project or self.global_):
            raise StoreNotFound(Path.cwd())
        self.primary: StoreDir = self.project or self.global_  # type: ignore[assignment]
        self.config = configmod.load([d.config for d in reversed(self.dirs)])
        self.engine = os.environ.get("ROSE_GRAPH_ENGINE") or self.config.graph.engine
        #: How long an open waits for another process's lock; hooks lower it.
        self.lock_timeout_s = self.config.graph.lock_timeout_s
        #: How long a graph server started by this store's opens keeps the database open.
        self.keep_open_s = self.config.graph.keep_open_s
        #: (view key, fingerprint) the recall view was last found or made current for.
        self.view_checked: tuple[list, str] | None = None
        self.last_sync = SyncReport()
        #: Why the graph was opened read-only or built in memory (`rose.store.unwritable`).
        self.unwritable: StoreReadOnly | None = None

    # -- finding and creating ------------------------------------------------------------

    @classmethod
    def open(cls, start: Path | None = None) -> Store:
        """The store for the working directory: nearest `.rose` up the tree, plus `~/.rose`."""
        glob = global_root()
        return cls(find_project_root(start), glob if glob.is_dir() else None)

    @classmethod
    def init(cls, where: Path | None = None, *, scope: str = "project") -> Store:
        """Create `.rose/` in `where` (or `~/.rose` for the global scope); idempotent."""
        if scope == "global":
            StoreDir(global_root(), "global").create()
            return cls.open(where)
        env = os.environ.get("ROSE_HOME")
        root = Path(env).expanduser() if env else (where or Path.cwd()) / ".rose"
        StoreDir(root, "project").create()
        glob = global_root()
        return cls(root.resolve(), glob if glob.is_dir() else None)

    @property
    def dirs(self) -> list[StoreDir]:
        return [d for d in (self.project, self.global_) if d]

    def dir_for(self, scope: str) -> StoreDir:
        d = self.project if scope == "project" else self.global_
        if d is None:
            hint = "rose init" if scope == "project" else "rose init --scope global"
            raise RoseError(f"there is no {scope} store; create it with `{hint}`")
        return d

    @property
    def graph_path(self) -> Path:
        return self.primary.graph_path(self.engine)

    # -- the graph -------------------------------------------------------------------------

    @contextmanager
    def graph(self, *, deadline_s: float | None = None, full: bool = False) -> Iterator[Graph]:
        """Open the graph, bring it up to date with the files, and close it afterwards.

        Hold it only for quick work: under kuzu every other process waits meanwhile. A
        damaged database is moved aside and rebuilt from the files, and the user told; one
        found damaged only by the work inside is moved aside for the next command.

        When the files, the database and the recall view are as the last holder left them
        (`rose.graph.synced`), the database is opened only by the first statement run on it:
        an open with nothing changed and nothing asked costs the file scan alone.
        """
        deadline = deadline_s if deadline_s is not None else self.lock_timeout_s
        known, view_ok = (None, False) if full else opened.unchanged(self)
        if known is not None and view_ok and not known.held_by:
            self.last_sync = known
            with ExitStack() as outer:
                lazy = LazyGraph(self.graph_path, lambda: self._open_late(outer, deadline, known))
                try:
                    yield lazy
                    if lazy.opened:
                        opened.remember(self)
                except QueryError as exc:
                    if not exc.damaged:
                        raise
                    outer.close()
                    raise self._damaged_in_use(exc) from None
            return
        stack, g, healed = self._synced(deadline, full, known)
        with stack:
            try:
                if healed:
                    self._rebuilt(*healed)
                self._refresh_view(g)
                yield g
                opened.remember(self)
            except QueryError as exc:
                if not exc.damaged:
                    raise
                stack.close()  # closed before it is moved
                raise self._damaged_in_use(exc) from None

    def _open_late(self, outer: ExitStack, deadline: float, known: SyncReport) -> Graph:
        """The database behind a lazy graph, opened at its first statement and synced (a
        no-op when it still holds what `known` found), closed with the `with` around it."""
        stack, g, healed = self._synced(deadline, False, known)
        outer.enter_context(stack)
        if healed:
            self._rebuilt(*healed)
        if self.last_sync is not known:  # another process synced newer files meanwhile
            self._refresh_view(g)
        return g

    def _synced(
        self, deadline: float, full: bool, known: SyncReport | None = None
    ) -> tuple[ExitStack, Graph, tuple[GraphDamaged, Path] | None]:
        """The graph, open and up to date, and (the damage, where it went) if it was healed.

        A database built for another schema is deleted and rebuilt; a damaged one (it fails
        to open, or to sync) is moved aside and rebuilt; each at most once.
        """
        path = self.graph_path
        outdated, first, healed = False, None, None
        lost = _damage.lost(self)  # deleted or emptied by hand: said once rebuilt
        while True:
            stack = ExitStack()
            try:
                try:
                    opening = open_graph(
                        path, self.engine, deadline_s=deadline, keep_s=self.keep_open_s
                    )
                    g = stack.enter_context(opening)
                except StoreReadOnly as exc:  # reads go on; a write stops at `Store.write`
                    return (*unwritable.read_graph(self, exc, known, deadline), None)
                journal.replay(self.primary.root)  # a write that died half way: finish it
                self.last_sync = sync(g, self.dirs, full=full, known=known)
                if lost and self.last_sync.new_database and not (first or outdated):
                    _damage.rebuilt_lost(self, lost)
                _damage.bad_bytes(self)
                return stack, g, healed
            except SchemaOutdated:
                stack.close()
                if outdated:
                    raise
                outdated = True
                remove_database(path)  # built by another version: rebuild from files
            except (GraphDamaged, QueryError) as exc:
                stack.close()
                if isinstance(exc, QueryError) and not exc.damaged:
                    raise
                damage = exc if isinstance(exc, GraphDamaged) else query_damage(path, exc)
                if first is not None:
                    why = f"a new one fails too: {damage.detail}"
                    raise GraphDamaged(path, first.detail, why) from None
                first = damage
                moved = self._set_aside(damage)
                healed = (damage, moved) if moved else None
            except BaseException:
                stack.close()
                raise

    def _set_aside(self, damage: GraphDamaged) -> Path | None:
        try:
            return set_aside(self.graph_path, self.engine, damage)
        except OSError as exc:
            why = f"moving it aside failed: {exc}"
            raise GraphDamaged(self.graph_path, damage.detail, why) from None

    def _damaged_in_use(self, exc: QueryError) -> GraphDamaged:
        return _damage.damaged_in_use(self, exc)

    def _rebuilt(self, damage: GraphDamaged, moved: Path) -> None:
        _damage.rebuilt(self, damage, moved)

    def read(self, name: str, **params: Any) -> list[Row]:
        """Run one named read query on an up-to-date graph."""
        with self.graph() as g:
            return g.q(name, **params)

    def reads(self, *queries: tuple[str, dict[str, Any]]) -> list[list[Row]]:
        """Run several named read queries in one open of the graph (each open costs a sync)."""
        with self.graph() as g:
            return [g.q(name, **params) for name, params in queries]

    def reindex(self) -> SyncReport:
        """Rebuild the whole graph from the files."""
        with self.graph(full=True):
            report = self.last_sync
        self.log("reindex", {"read": report.read, "seconds": round(report.seconds, 3)})
        return report

    def query(self, text: str, *, write: bool = False) -> list[list[dict]]:
        """Run user-supplied Cypher, one or more `;`-separated statements: rows per statement.

        Read-only unless `write`: the database opens read-only, and a statement that is not
        a read of the graph (one that reads or writes files, loads extensions, reaches other
        databases) is refused before any runs. The rows come back redacted.
        """
        from rose.errors import QueryError
        from rose.graph.readonly import graph_write_refused, is_read_only_error, statements
        from rose.redaction.redact import redact_obj

        stmts = statements(text, engine=self.engine, write=write)
        with self.graph() as g:
            if write:
                return [redact_obj(g.run(s, name="<console>")) for s in stmts]
            if self.unwritable is not None:  # a store that cannot be written: this graph
                return [redact_obj(g.run(s, name="<console>")) for s in stmts]
        deadline = self.lock_timeout_s
        results: list[list[dict]] = []
        with open_graph(self.graph_path, self.engine, read_only=True, deadline_s=deadline) as g:
            for number, s in enumerate(stmts, 1):
                try:
                    results.append(g.run(s, name="<console>"))
                except QueryError as exc:
                    if is_read_only_error(str(exc)):
                        raise graph_write_refused(number if len(stmts) > 1 else None) from None
                    raise
        return [redact_obj(rows) for rows in results]

    # -- lessons ---------------------------------------------------------------------------

    def get(self, lesson_id: str) -> Node:
        """The lesson with this id, or with the one id it is a unique prefix of (as the
        injected block shows it); an ambiguous prefix is an error naming the candidates."""
        if not lesson_id.strip():  # the prefix of every id: not "ambiguous", just missing
            raise RoseError("no lesson id given (it is empty); `rose tree` lists the ids")
        with self.graph() as g:
            if not g.q("lesson_ids", ids=[lesson_id]):
                every = [r["id"] for r in g.q("lesson_id_list")]
                lesson_id = shortid.resolve(lesson_id, every) or lesson_id
            return self._get(g, lesson_id)

    def unused_id(self, *parts: str) -> str:
        """A new lesson's id derived from `parts` (what it came of: `derived_id`), the first
        of that line no lesson here holds: a lesson made again from the same work (a source
        restored by demotion, compressed to the same text) gets a new id, the same one on
        every run, never the old lesson's."""
        with self.graph() as g:
            for start in range(0, 1000, 8):
                ids = [
                    derived_id("n", *parts, *([str(k)] if k else []))
                    for k in range(start, start + 8)
                ]
                taken = {r["id"] for r in g.q("lesson_ids", ids=ids)}
                free = [i for i in ids if i not in taken]
                if free:
                    return free[0]
        raise RoseError(f"no free lesson id derived from {parts!r} in 1,000 tries")

    def lesson_rows(self, ids: list[str], g: Graph | None = None) -> list[dict]:
        """`lesson_get` rows for `ids` (any order), each found by its key when they are few
        (the batch form joins every lesson with every text: ~15 ms at 10,000 lessons); read in
        `g` when given, else in an open of its own."""
        if g is not None:
            return lessons_get(g, ids)
        with self.graph() as opened_graph:
            return lessons_get(opened_graph, ids)

    def _get(self, g: Graph, lesson_id: str) -> Node:
        rows = lessons_get(g, [lesson_id])
        if not rows:
            raise LessonNotFound(lesson_id)
        return node_from_row(rows[0]["lesson"], g.q("claims_of", ids=[lesson_id]))

    def get_episode(self, episode_id: str) -> Episode:
        rows = self.read("episode_get", ids=[episode_id])
        if not rows:
            raise RoseError(f"no episode with id {episode_id!r}")
        return episode_from_row(rows[0]["episode"])

    def save(self, node: Node, *, scope: str | None = None) -> Node:
        """Write a lesson file and index it; refuses unknown links and cycles.

        An existing lesson is written back where it lives (editing a global
        lesson updates the global store); a new one goes to `scope`, else its
        own `scope` field (project by default).
        """
        return self.write([node], scope=scope)[0]

    def write(
        self,
        nodes: list[Node],
        episodes: list[Episode] | None = None,
        *,
        scope: str | None = None,
        move: bool = False,
    ) -> list[Node]:
        """Write several lessons (and new episodes) as one unit: one lock, one sync.

        Links may point at other lessons of the same write (a new level and the lesson it
        compresses). The graph shows all of them or, if the write dies half way, the next
        open finishes it from the journal first (`rose.files.journal`). An existing lesson
        is written back to the scope it lives in, unless `move`: then to `scope`, its old
        file removed in the same unit (`Store.move`).
        """
        import json

        with self.graph() as g:
            batch = {n.id: n for n in nodes}
            files: list[tuple[str, str]] = []
            remove: list[str] = []
            out: list[Node] = []
            for node in nodes:
                existing = g.q("lesson_place_one", id=node.id)
                old_path = Path(existing[0]["path"]) if existing else None
                if existing and not (move and scope):
                    node.scope = existing[0]["scope"]
                elif scope:
                    node.scope = scope  # type: ignore[assignment]
                links.check(g, node, batch)
                node.updated = now()
                node = redacted(node)
                target = self.dir_for(node.scope).node_path(node.family, node.id)
                files.append((str(target), dump_node(node)))
                if old_path and old_path != target:
                    remove.append(str(old_path))
                out.append(node)
            for ep in episodes or []:
                if not any(d.episode_path(ep.id).exists() for d in self.dirs):
                    path = self.dir_for(scope or "project").episode_path(ep.id)
                    files.append((str(path), json.dumps(dump_episode(ep), ensure_ascii=False)))
            if self.unwritable:  # the store cannot take the write: say so, write nothing
                raise self.unwritable
            journal.apply(self.primary.root, files, remove)
            self.last_sync = sync(g, self.dirs, known=opened.after_write(self, files, remove))
            self._refresh_view(g)
        for node in out:
            self.log("write", {"id": node.id, "scope": node.scope, "level": node.level})
        return out

    def move(self, node: Node, scope: str) -> Node:
        """Write a lesson to the `scope` store and remove it from where it lived, as one
        journalled unit: a move that dies half way is finished by the next open, never
        leaving the lesson in neither store nor (once that open has run) in both."""
        return self.write([node], scope=scope, move=True)[0]

    def _save_unindexed(self, node: Node, scope: str, exc: GraphDamaged) -> Node:
        """Write a new, unlinked lesson's file without the graph; the next open reads it in."""
        node = self.keep_unindexed(node, scope=scope, why=exc.detail)
        target = self.dir_for(node.scope).node_path(node.family, node.id)
        notify(f"lesson written to {target}, but not indexed: {exc}", "lesson saved, not indexed")
        return node

    def keep_unindexed(self, node: Node, *, scope: str, why: str) -> Node:
        """Write a new, unlinked lesson's file without opening the graph (it is damaged, or
        another process holds it): atomic and redacted like every write. The next open
        reads it in, and the file's folder moving on makes the recall view stale."""
        node.scope = scope  # type: ignore[assignment]
        node.updated = now()
        node = redacted(node)
        write_text(self.dir_for(node.scope).node_path(node.family, node.id), dump_node(node))
        self.log("write", {"id": node.id, "scope": node.scope, "unindexed": why})
        return node

    def add(
        self,
        body: str,
        *,
        title: str | None = None,
        family: str | None = None,
        scope: str | None = None,
    ) -> Node:
        """Record a lesson as taught, as it is (`draft`), without reconciling it.

        `rose add` reconciles it first (`rose.loop.reflection.consolidate`); this is the plain
        write.
        """
        node = self.keep(self.draft(body, title=title, family=family), scope=scope or "project")
        why = self.too_big(node)  # accepted, and the CLI warns: it would never be served
        self.log("add", {"id": node.id, "scope": node.scope, **({"too_big": why} if why else {})})
        return node

    draft = staticmethod(draft)  # what a taught text becomes: `rose.files.draft`

    def keep(self, node: Node, *, scope: str) -> Node:
        """Write a new lesson to `scope`; when the index cannot be rebuilt, its file still is
        (the next open indexes it): a lesson taught is never lost to a damaged database."""
        try:
            return self.save(node, scope=scope)
        except GraphDamaged as exc:
            return self._save_unindexed(node, scope, exc)

    def too_big(self, node: Node) -> str:
        """Why `node` can never be served under the recall budget, or "" when it can."""
        from rose.store import view as recall_view

        return recall_view.budget_warning(node.model_dump(), self.config.recall.max_pack_tokens)

    # -- episodes --------------------------------------------------------------------------

    def save_episode(self, ep: Episode, *, scope: str = "project") -> Episode:
        """Write an episode file (once: an episode is never edited) and index it."""
        self.save_episodes([ep], scope=scope)
        return ep

    def save_episodes(self, eps: list[Episode], *, scope: str = "project") -> list[Episode]:
        """Write the episodes not yet on disk; returns those written now.

        An episode is the record of what was observed and is written once: one whose id
        is already on disk (in either scope) is left as it is, so writing the same unit
        of work twice counts it once. Recording costs one new file and takes no lock:
        the next open of the graph (any read) folds the new files in.
        """
        written = []
        for ep in eps:
            if any(d.episode_path(ep.id).exists() for d in self.dirs):
                continue
            write_json(self.dir_for(scope).episode_path(ep.id), dump_episode(ep))
            written.append(ep)
        if written:
            self.log("episodes", {"written": len(written), "ids": [e.id for e in written][:20]})
        return written

    def save_correction(self, correction: Correction) -> bool:
        """Write a check's correction of an episode's attribution beside the episode (in the
        scope holding it), once: False when the episode is in no store, or the pair was
        corrected already. Like an episode, it takes no lock: the next open reads it in,
        and the graph holds the episode corrected from then on."""
        for d in self.dirs:
            if d.episode_path(correction.episode).exists():
                path = d.episode_path(correction.id)
                if path.exists():
                    return False
                write_json(path, correction.model_dump(mode="json"))
                return True
        return False

    def attribute(
        self,
        session_id: str,
        used: list[str],
        unused: list[str] | None = None,
        *,
        load_bearing: list[tuple[str, str]] | None = None,
        turn: int | None = None,
        source: str = "rose used",
    ) -> int:
        """Record which served lessons bore on a unit of work (`rose used`); returns its turn.

        Goes to the session's append-only log, folded into the episode at absorption.
        """
        from rose.store.attribution import record_used

        return record_used(
            self, session_id, used, unused, load_bearing=load_bearing, turn=turn, source=source
        )

    def absorb(self, session_id: str, *, final: bool, hold: Collection[int] = ()) -> list[Episode]:
        """Fold a session's scratch log into episodes, one per complete unit of work.

        Without `final` the unit still open (the latest prompt) waits for a later call;
        with it (the session ended) every unit is absorbed, but those of turns in `hold`.
        Idempotent: a unit already absorbed is not written again.
        """
        from rose.store import absorb

        # An agent cites the block's short ids: the ids are listed only when one is short.
        every = absorb.resolver(lambda: [r["id"] for r in self.read("lesson_id_list")])
        eps = absorb.episodes(
            str(self.primary.root), session_id, final=final, resolve=every, hold=hold
        )
        return self.save_episodes(eps)

    # -- the recall view -------------------------------------------------------------------

    @property
    def roots(self) -> list[tuple[str, str]]:
        return [(str(d.root), d.scope) for d in self.dirs]

    def _refresh_view(self, g: Graph) -> None:
        """Rewrite the recall view when the files or the recall settings moved on."""
        from rose.store import view as recall_view

        recall_view.refresh(self, g)

    def view(self) -> dict:
        """The current recall view, rebuilt first if the files changed underneath it."""
        from rose.store import view as recall_view

        with self.graph():
            pass
        return recall_view.read(self.primary.recall_view) or {}

    # -- selection rules -------------------------------------------------------------------

    def rules(self) -> tuple[list[RoutingRule], list[Problem]]:
        """The selection rules (`routing/` of the primary store) and the files that failed."""
        from rose.files import routing

        rules, errors = routing.load_all(self.primary.routing)
        return rules, [Problem(str(e.path), e.reason) for e in errors]

    def save_rule(self, rule: RoutingRule) -> RoutingRule:
        """Write a selection rule (redacted, atomic); the rule as it is on disk."""
        from rose.files import routing

        path = routing.save(self.primary.routing, rule)
        return routing.load(path)

    def forget_rule(self, rule_id: str) -> bool:
        from rose.files import routing

        return routing.delete(self.primary.routing, rule_id)

    def propose_rule(self, rule_id: str, when: str, then: str, *, session: str) -> int:
        """Record that `session` proposed a rule; how many distinct sessions have."""
        from rose.files import routing

        return routing.propose(self.primary.routing, rule_id, when, then, session)

    # -- events ----------------------------------------------------------------------------

    def log(self, kind: str, data: dict | None = None) -> None:
        try:
            append_event(self.primary.events, kind, data)
        except WriteFailed as exc:
            if not self.unwritable:  # a read of a read-only store goes on without its log
                raise
            uncached(exc, "an event")


def redacted(node: Node) -> Node:
    """The node as it will be on disk: every text field passed through redaction."""
    from rose.redaction.redact import redact_obj

    return Node.model_validate(redact_obj(node.model_dump()))

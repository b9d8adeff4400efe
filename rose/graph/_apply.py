"""Writing what changed into the graph, at the cost of what changed.

A changed lesson is updated in place, so the edges that other files give it (episodes
that served it, lessons derived from it, claims it holds) stay where they are; only its
own lists are re-linked, and edges neither end names any more are removed. Its dropped
claims are kept, added or removed by id (a hash of the text), so an episode's record of
which claim rescued it survives an edit of another claim. A new or removed episode is
created or deleted with its own edges. Whatever names something the graph does not hold
yet (a lesson filed before its parent, an episode before its lesson) is remembered as a
`Pending` row, and linked when that thing arrives: no write ever scans the whole store
for who might mention it.

A full rebuild wipes the graph and links everything.
"""

from __future__ import annotations

from rose.graph.engine import Graph
from rose.graph.rows import claim_rows, episode_row, lesson_row
from rose.models import Episode, Node

# Each link query joins its sources (lessons, or episodes, in `ids`) to what their lists name.
LESSON_LINKS = ("link_derived", "link_parents", "link_disputes", "link_dropped", "link_held_by")
EPISODE_LINKS = (
    "link_served",
    "link_used",
    "link_expanded",
    "link_patch_rescued",
    "link_rescued",  # to claims: after they exist
)
LINKS = LESSON_LINKS + EPISODE_LINKS


def apply(
    g: Graph,
    nodes: list[tuple[Node, str]],
    episodes: list[tuple[Episode, str, str]],
    old_lessons: set[str],
    old_episodes: set[str],
    *,
    full: bool,
) -> list[str]:
    """Make the graph hold `nodes` (node, path) and `episodes` (episode, scope, path) in place
    of `old_lessons` and `old_episodes`, inside the caller's transaction. Returns the
    sources whose derived edges (COVERS) are drawn once this has committed."""
    new_lessons = {n.id: (n, path) for n, path in nodes}
    if full:
        _create(g, nodes, episodes)
        for link in LINKS:
            g.q(link, everything=True, ids=[])
        have = set(new_lessons) | {c["id"] for n, _ in nodes for c in claim_rows(n)}
        _pending(g, nodes, [e for e, _, _ in episodes], appeared=set(), have=have)
        return []

    updated = old_lessons & new_lessons.keys()
    created = new_lessons.keys() - old_lessons
    deleted = old_lessons - new_lessons.keys()
    remember: list[dict] = []
    if deleted:  # whatever named them links again if they come back
        remember += g.q("neighbours", ids=sorted(deleted))
        g.q("lessons_delete", ids=sorted(deleted))
    if old_episodes:
        g.q("episodes_delete", ids=sorted(old_episodes))
    new_claims = _update(g, [new_lessons[i] for i in sorted(updated)], remember)
    _create(g, [new_lessons[i] for i in sorted(created)], episodes)
    new_claims |= {c["id"] for n, _ in (new_lessons[i] for i in created) for c in claim_rows(n)}

    appeared = set(created) | new_claims
    waiting = {r["src"] for r in g.q("pending_for", ids=sorted(appeared))} if appeared else set()
    # What waits may be either kind; each query matches only its own table's ids.
    lesson_sources = sorted(set(new_lessons) | waiting)
    episode_sources = sorted({e.id for e, _, _ in episodes} | waiting)
    if lesson_sources:
        for link in LESSON_LINKS:
            g.q(link, everything=False, ids=lesson_sources)
    if episode_sources:
        for link in EPISODE_LINKS:
            g.q(link, everything=False, ids=episode_sources)
    sources = sorted(set(lesson_sources) | set(episode_sources))
    if remember:
        g.q("pending_put", rows=[{"src": r["src"], "dst": r["dst"]} for r in remember])
    written = [new_lessons[i] for i in sorted(new_lessons)]
    _pending(g, written, [e for e, _, _ in episodes], appeared)
    return sources


def _create(g: Graph, nodes: list[tuple[Node, str]], episodes: list[tuple[Episode, str, str]]):
    if nodes:
        g.q("lessons_create", rows=[lesson_row(n, path) for n, path in nodes])
        claims = [c for n, _ in nodes for c in claim_rows(n)]
        if claims:
            g.q("claims_create", rows=claims)
    if episodes:
        g.q("episodes_create", rows=[episode_row(e, scope, path) for e, scope, path in episodes])


def _update(g: Graph, nodes: list[tuple[Node, str]], remember: list[dict]) -> set[str]:
    """Update changed lessons in place; returns the ids of the claims they newly drop."""
    if not nodes:
        return set()
    ids = [n.id for n, _ in nodes]
    g.q("lessons_update", rows=[lesson_row(n, path) for n, path in nodes])
    g.q("unlink_derived", ids=ids)
    g.q("unlink_disputes", ids=ids)
    old = {r["id"] for r in g.q("claims_of", ids=ids)}
    rows = {c["id"]: c for n, _ in nodes for c in claim_rows(n)}
    gone = sorted(old - rows.keys())
    if gone:  # an episode whose failure a removed claim rescued links again if it returns
        remember += g.q("claim_rescuers", ids=gone)
        g.q("claims_delete", ids=gone)
    kept = [rows[i] for i in sorted(old & rows.keys())]
    if kept:
        g.q("claims_update", rows=kept)
        g.q("unlink_held_by", ids=[r["id"] for r in kept])
    added = [rows[i] for i in sorted(rows.keys() - old)]
    if added:
        g.q("claims_create", rows=added)
    return {r["id"] for r in added}


def _pending(
    g: Graph,
    nodes: list[tuple[Node, str]],
    episodes: list[Episode],
    appeared: set[str],
    have: set[str] | None = None,
) -> None:
    """Re-record what the written lessons and episodes name that the graph does not hold
    (`have`: everything it holds, when the caller knows; a full rebuild does)."""
    sources = [n.id for n, _ in nodes] + [e.id for e in episodes]
    if not sources and not appeared:
        return
    if have is None:
        g.q("pending_delete", ids=sorted(set(sources) | appeared))
    lessons: dict[str, set[str]] = {}
    claims: dict[str, set[str]] = {}
    for n, _ in nodes:
        named = {*n.derived_from, *n.parents, *n.disputes, *(c.holder for c in n.dropped)}
        lessons[n.id] = named
    for e in episodes:
        lessons[e.id] = {*e.served, *e.used, *(x.lesson for x in [*e.expansions, *e.patch_rescues])}
        claims[e.id] = {x.claim for x in e.rescues}
    if have is None:
        want_l = sorted({i for v in lessons.values() for i in v})
        want_c = sorted({i for v in claims.values() for i in v})
        have = {r["id"] for r in g.q("lesson_ids", ids=want_l)} if want_l else set()
        have |= {r["id"] for r in g.q("claim_ids", ids=want_c)} if want_c else set()
    rows = [
        {"src": src, "dst": dst}
        for table in (lessons, claims)
        for src, named in table.items()
        for dst in sorted(named - have)
    ]
    if rows:
        g.q("pending_put", rows=rows)

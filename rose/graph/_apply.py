"""Writing what changed into the graph, at the cost of what changed.

A changed lesson is updated in place, so the edges that other files give it (episodes
that served it, lessons derived from it, claims it holds) stay where they are; only its
own lists are re-linked, and edges neither end names any more are removed. Its dropped
claims are kept, added or removed by id (a hash of the text), so an episode's record of
which claim rescued it survives an edit of another claim. An update compares the graph's
copy of the lesson's lists and claims first: a lesson whose text alone changed is one
update, with nothing re-linked and nothing folded again. A new or removed episode is
created or deleted with its own edges. Whatever names something the graph does not hold
yet (a lesson filed before its parent, an episode before its lesson) is remembered as a
`Pending` row, and linked when that thing arrives: no write ever scans the whole store
for who might mention it.

A full rebuild wipes the graph and links everything.
"""

from __future__ import annotations

from rose.graph.engine import Graph
from rose.graph.rows import SMALL, claim_rows, episode_row, lesson_row
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
#: The episode's list each episode link draws its edges from.
_LISTED_BY = {
    "link_served": "served",
    "link_used": "used",
    "link_expanded": "expansions",
    "link_patch_rescued": "patch_rescues",
    "link_rescued": "rescues",
}


class Applied:
    """What `apply` did that the second step of a sync (`rose.graph.sync._derive`) depends on:
    the episodes whose derived edges (COVERS) are drawn, and the lessons whose observed
    record (the folds) may have moved. A lesson whose text alone changed is in neither: what
    episodes say of it stays as it was. And for the recall view, `apex_delta`: when the
    apexes are the lessons they were, how much their token total moved (else None)."""

    __slots__ = ("apex_delta", "episodes", "lessons", "updated")

    def __init__(self) -> None:
        self.episodes: list[str] = []
        self.lessons: set[str] = set()
        self.apex_delta: int | None = None
        #: The lessons updated in place, when none of them changed level (another apex's
        #: level-0 sources may have moved then); None when not known (a batch update).
        self.updated: list[str] | None = []


def apply(
    g: Graph,
    nodes: list[tuple[Node, str]],
    episodes: list[tuple[Episode, str, str]],
    old_lessons: set[str],
    old_episodes: set[str],
    *,
    full: bool,
) -> Applied:
    """Make the graph hold `nodes` (node, path) and `episodes` (episode, scope, path) in place
    of `old_lessons` and `old_episodes`, inside the caller's transaction."""
    new_lessons = {n.id: (n, path) for n, path in nodes}
    done = Applied()
    if full:
        _create(g, nodes, episodes)
        for link in LINKS:
            g.q(link, everything=True, ids=[])
        have = set(new_lessons) | {c["id"] for n, _ in nodes for c in claim_rows(n)}
        _pending(g, nodes, [e for e, _, _ in episodes], appeared=set(), have=have)
        return done

    updated = old_lessons & new_lessons.keys()
    created = new_lessons.keys() - old_lessons
    deleted = old_lessons - new_lessons.keys()
    remember: list[dict] = []
    if deleted:
        _delete(g, sorted(deleted), remember, done)
    if old_episodes:
        g.q("episodes_delete", ids=sorted(old_episodes))
    reshaped, new_claims = _update(g, [new_lessons[i] for i in sorted(updated)], remember, done)
    if created or deleted:
        done.apex_delta = None  # the apexes may be other lessons now (an episode moves none)
    new_claims |= _create(g, [new_lessons[i] for i in sorted(created)], episodes, done)

    appeared = set(created) | new_claims
    waiting = {r["src"] for r in g.q("pending_for", ids=sorted(appeared))} if appeared else set()
    # What waits may be either kind; each query matches only its own table's ids.
    lesson_sources = sorted(created | reshaped | waiting)
    episode_sources = sorted({e.id for e, _, _ in episodes} | waiting)
    if lesson_sources:
        for link in LESSON_LINKS:
            g.q(link, everything=False, ids=lesson_sources)
    new_episodes = [e for e, _, _ in episodes]
    if episode_sources:
        for link in EPISODE_LINKS:
            # Without anything waiting, the sources are these episodes: a link none of them
            # has a list for draws nothing (most episodes name no expansion and no rescue).
            if waiting or any(getattr(e, _LISTED_BY[link]) for e in new_episodes):
                g.q(link, everything=False, ids=episode_sources)
    # COVERS is drawn from the successes' uses (`link_covers`): from these episodes, only.
    done.episodes = (
        episode_sources
        if waiting
        else [e.id for e in new_episodes if e.outcome == "success" and e.used]
    )
    if remember:
        g.q("pending_put", rows=[{"src": r["src"], "dst": r["dst"]} for r in remember])
    written = [new_lessons[i] for i in sorted(created | reshaped)]
    _pending(g, written, [e for e, _, _ in episodes], appeared)
    return done


def _delete(g: Graph, ids: list[str], remember: list[dict], done: Applied) -> None:
    """Delete lessons; whatever named them links again if they come back."""
    remember += g.q("neighbours", ids=ids)
    # The holders of their claims count those claims' rescues: folded again.
    done.lessons |= {r["holder"] for r in g.q("claims_of", ids=ids)}
    g.q("lessons_delete", ids=ids)


def _create(
    g: Graph,
    nodes: list[tuple[Node, str]],
    episodes: list[tuple[Episode, str, str]],
    done: Applied | None = None,
) -> set[str]:
    """Create lessons (with their claims) and episodes; returns the new claims' ids. The new
    lessons, and the holders of their claims, are folded (`done`)."""
    claims = [c for n, _ in nodes for c in claim_rows(n)]
    if nodes:
        g.q("lessons_create", rows=[lesson_row(n, path) for n, path in nodes])
        if claims:
            g.q("claims_create", rows=claims)
    if episodes:
        g.q("episodes_create", rows=[episode_row(e, scope, path) for e, scope, path in episodes])
    if done is not None:
        done.lessons |= {n.id for n, _ in nodes} | {c["holder"] for c in claims}
    return {c["id"] for c in claims}


_CLAIM_FIELDS = ("pos", "claim", "kind", "holder", "tokens")


def shape_of(g: Graph, ids: list[str]) -> list[dict]:
    """`lessons_shape` for `ids`: a row per dropped claim, or one with claim null."""
    if len(ids) > SMALL:
        return g.q("lessons_shape", ids=ids)
    out: list[dict] = []
    for i in ids:
        for lesson in g.q("lessons_shape_one", id=i):
            claims = g.q("claims_dropped_one", id=i) or [{"claim": None}]
            out += [{**lesson, **c} for c in claims]
    return out


def _update(
    g: Graph, nodes: list[tuple[Node, str]], remember: list[dict], done: Applied
) -> tuple[set[str], set[str]]:
    """Update changed lessons in place. Returns the lessons whose links changed (their own
    lists or their claims: re-linked) and the ids of the claims they newly drop.

    The graph's copy of each lesson's lists and claims is read first, so that a lesson whose
    text alone changed costs one update: its edges and what episodes say of it stay."""
    if not nodes:
        done.apex_delta = 0
        return set(), set()
    ids = [n.id for n, _ in nodes]
    shape: dict[str, dict] = {}
    old: dict[str, dict] = {}
    for r in shape_of(g, ids):
        shape[r["id"]] = r
        if r["claim"] is not None:
            old[r["claim"]] = {
                "owner": r["id"],
                "pos": r["pos"],
                "claim": r["text"],
                "kind": r["kind"],
                "holder": r["holder"],
                "tokens": r["tokens"],
            }
    rows = [lesson_row(n, path) for n, path in nodes]
    if len(rows) > SMALL:
        g.q("lessons_update", rows=rows)
        done.updated = None
    else:
        for r in rows:
            _update_one(g, r, shape.get(r["id"]))
        same_level = all(r["level"] == shape.get(r["id"], {}).get("level") for r in rows)
        done.updated = ids if same_level else None
    lists = ("derived_ids", "parent_ids", "dispute_ids")
    relinked = {r["id"] for r in rows if any(r[k] != shape.get(r["id"], {}).get(k) for k in lists)}
    done.lessons |= {
        r["id"] for r in rows if r["patch_ids"] != shape.get(r["id"], {}).get("patch_ids")
    }
    if relinked:
        g.q("unlink_derived", ids=sorted(relinked))
        g.q("unlink_disputes", ids=sorted(relinked))
    elif all(r["id"] in shape and r["status"] == shape[r["id"]]["status"] for r in rows):
        done.apex_delta = _apex_delta(g, rows, shape)  # no edge and no status moved
    new = {c["id"]: c for n, _ in nodes for c in claim_rows(n)}
    gone = sorted(old.keys() - new.keys())
    if gone:  # an episode whose failure a removed claim rescued links again if it returns
        remember += g.q("claim_rescuers", ids=gone)
        g.q("claims_delete", ids=gone)
    changed = [
        new[i]
        for i in sorted(old.keys() & new.keys())
        if any(new[i][k] != old[i][k] for k in _CLAIM_FIELDS)
    ]
    if changed:
        g.q("claims_update", rows=changed)
    moved = [c["id"] for c in changed if c["holder"] != old[c["id"]]["holder"]]
    if moved:
        g.q("unlink_held_by", ids=moved)
    added = [new[i] for i in sorted(new.keys() - old.keys())]
    if added:
        g.q("claims_create", rows=added)
    # A claim added, removed or moved to another holder changes its owner's links and what
    # the holders (old and new) count of rescues.
    touched = [*(old[i] for i in gone), *added, *(new[i] for i in moved)]
    relinked |= {c["owner"] for c in touched}
    done.lessons |= {c["holder"] for c in touched} | {old[i]["holder"] for i in moved}
    done.lessons |= {c["owner"] for c in touched}
    return relinked, {c["id"] for c in added}


#: The columns an update writes (`lessons_update`), and those of them a body edit moves.
_UPDATED = ("scope", "family", "title", "gist", "provisional", "level", "status", "origin",
            "provenance", "held", "accepted", "conflict", "tokens", "gist_tokens", "derived_ids",
            "parent_ids", "dispute_ids",
            "preserve", "patches", "patch_ids", "created", "updated", "path")  # fmt: skip
_REBODY = ("tokens", "gist_tokens", "updated")


def _update_one(g: Graph, row: dict, was: dict | None) -> None:
    """Write one changed lesson: its body and counts alone when nothing else moved (an edit of
    the text, the commonest change), else every column."""
    cols = {k: row[k] for k in _UPDATED}
    if was is not None and all(cols[k] == was.get(k) for k in _UPDATED if k not in _REBODY):
        g.q("lesson_rebody_one", id=row["id"], body=row["body"], **{k: row[k] for k in _REBODY})
    else:
        g.q("lessons_update_one", id=row["id"], body=row["body"], **cols)


def _apex_delta(g: Graph, rows: list[dict], shape: dict[str, dict]) -> int:
    """How much the apexes' token total moved with these updated lessons (their status and
    links as they were, so the apexes are the lessons they were)."""
    moved = {r["id"]: r["tokens"] - shape[r["id"]]["lesson_tokens"] for r in rows}
    ask = sorted(i for i, d in moved.items() if d)
    if len(ask) > SMALL:
        apexes = [r["id"] for r in g.q("apexes_among", ids=ask)]
    else:  # servable, and nothing servable derived from it (as apexes_among asks)
        apexes = [
            i
            for i in ask
            if shape[i]["status"] in _SERVABLE
            and not any(r["status"] in _SERVABLE for r in g.q("lesson_above_one", id=i))
        ]
    return sum(moved[i] for i in apexes)


_SERVABLE = ("active", "disputed")


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

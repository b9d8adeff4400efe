"""The materialised recall view: what the prompt hook needs, precomputed on every write.

`recall-view.json` holds the apexes of both scopes with their injected forms already
rendered (full block and one-line reminder), their token counts, and the budget
decision (empty store, or everything fits). The hook's fast path reads it with the
standard library only; its `stamp` says which lesson and config files it was built
from, so a hand edit or a `git pull` makes it stale and the hook takes the slow path.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose import tokens
from rose.disk.atomic import uncached, write_json
from rose.errors import WriteFailed
from rose.files import scan, shortid
from rose.frame import closed
from rose.graph.engine import Graph
from rose.models import claim_id, shown_title
from rose.prompt_files import template_text

if TYPE_CHECKING:
    from rose.store.facade import Store

# 12: closed frames (11: stamps by folder; 10: files; 9: head_pull; 8: sources; 7: patch ids;
# 6: short ids; 5: exact totals). A view without `kept_scan` is checked by listing every folder;
# the next write adds it.
FORMAT = 12


@cache
def _template(name: str):
    import jinja2

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        finalize=closed,  # a lesson cannot end the frame it is shown in
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    text = template_text(name)
    return env.from_string(text)


def render(name: str, **context: Any) -> str:
    return _template(name).render(**context).strip("\n")


def fragments(lesson: dict, shown: str | None = None) -> tuple[str, str]:
    """The full block and the one-line reminder for one lesson (a `lesson_get` row).

    The id is shown as `shown` (from `shortid.shortest` over the store's lessons; by
    default its shortest form alone). A title that only repeats the text under it (a
    first-sentence title) is left out.
    """
    shown = shown or shortid.shortest([lesson["id"]])[lesson["id"]]
    body = lesson["body"] or lesson["gist"]
    full = render(
        "inject/lesson",
        id=shown,
        level=lesson["level"],
        scope=lesson["scope"],
        title=shown_title(lesson["title"], body),
        body=body,
        patches=lesson["patches"],
        conflict=lesson["conflict"],
    )
    gist = lesson["gist"] or lesson["title"]
    title = shown_title(lesson["title"], gist)
    refresher = render("inject/refresher", id=shown, title=title, gist=gist)
    return full, refresher


def item(row: dict, shown: str | None = None, sources: list[str] | None = None) -> dict:
    """A lesson as recall serves it: its fields, both injected forms and their token counts.

    `id` stays the full id (the session log records it); `shown` is what the block shows.
    `patch_ids` name the patches its full form carries, for the log to say they were served.
    `sources` are the level-0 lessons it was compressed or merged from (`sources_among`): while
    they are all still in a session's context, so is what it says (rose.loop.selection.pack).
    """
    shown = shown or shortid.shortest([row["id"]])[row["id"]]
    full, refresher = fragments(row, shown)
    return {
        "id": row["id"],
        "shown": shown,
        "title": row["title"],
        "gist": row["gist"],
        "level": row["level"],
        "scope": row["scope"],
        "family": row["family"],
        "full": full,
        "refresher": refresher,
        "patch_ids": [claim_id(row["id"], p) for p in row["patches"] or []],
        "full_tokens": tokens.count(full),
        "refresher_tokens": tokens.count(refresher),
        "successes": row["successes"],
        "failures": row["failures"],
        "sources": sorted(sources or []),
    }


def sources_among(g: Any, rows: dict[str, dict]) -> dict[str, list[str]]:
    """The level-0 lessons below each of `rows` (`lesson_get` rows by id) that was compressed
    or merged from others, in one statement in the open graph `g` (none when no row is)."""
    deep = [i for i, row in rows.items() if row.get("level") and row.get("derived_ids")]
    if not deep:
        return {}
    return {r["id"]: list(r["sources"]) for r in g.q("sources_among", ids=deep)}


# Tokens the <lesson> wrapper (tags and a short id) adds around a lesson's title and body,
# for the estimate below.
WRAP_TOKENS = 13


def estimate(row: dict) -> int:
    """A lesson's injected cost before rendering it (an `apexes`/`lessons` row)."""
    return row.get("full_tokens") or row["tokens"] + WRAP_TOKENS


def block(head: str, pieces: list[str], tail: str) -> str:
    """The injected block: the frame around the pieces, a blank line between each."""
    return "\n\n".join([head, *pieces, tail])


# The longest block any host passes on whole, in UTF-16 units (Claude Code's measure, the
# looser of the two): `rose.loop.selection.pack.HOSTS` has each host's bound.
HOST_CHARS = 10_000


def budget_warning(lesson: dict, budget: int) -> str:
    """Why `lesson` (a `lesson_get` row or a Node's dump) can never be served, or "" if it can.

    Served alone its block must fit `budget` tokens and what a host passes on whole; past
    either, every prompt leaves it out.
    """
    text = block(render("inject/head"), [fragments(lesson)[0]], render("inject/tail"))
    cost = tokens.count(text)
    if cost > budget:
        over = f"over recall.max_pack_tokens ({budget:,})"
    elif len(text.encode("utf-16-le", "surrogatepass")) // 2 > HOST_CHARS:
        over = f"longer than Claude Code or Codex passes on whole ({HOST_CHARS:,} characters)"
    else:
        return ""
    return (
        f"{lesson['id']} alone is {cost:,} tokens, {over}: it is never served; "
        "split it into smaller lessons" + (" or raise the budget" if cost > budget else "")
    )


def stamps(
    survey: Any, roots: list[tuple[str, str]], fingerprint: str, config: Any, kept_scan: str
) -> dict:
    """What a view is built from (the files, by the hook's stamp and by the graph's
    fingerprint, and the recall settings): a view holding all of these is current.
    `kept_scan` names the file in the store root where the last scan is kept
    (`rose.graph.synced`): the hook's check of the stamp takes unchanged folders' names
    from it."""
    rc = config.recall
    return {
        "format": FORMAT,
        "kept_scan": kept_scan,
        "stamp": scan.stamp(survey, roots),
        "evidence": scan.evidence_stamp(survey),  # the stats shown in the view
        "files": fingerprint,
        "budget": rc.max_pack_tokens,
        "whole": rc.whole_tokens,
        "enabled": rc.enabled,
        "fresh_turns": rc.stays_fresh_turns,
    }


#: What a view is built for besides the files: a view carried forward or patched keeps them.
_SETTINGS = ("format", "budget", "whole", "enabled", "fresh_turns")


def whole_limit(settings: dict) -> int:
    """The most tokens a store's apexes may total to be served whole (`recall.whole_tokens`,
    within `recall.max_pack_tokens`), from a view's settings (`stamps`)."""
    return min(int(settings["budget"]), int(settings["whole"]))


def advanced(current: dict | None, want: dict, since: str, delta: int | None) -> dict | None:
    """The view after a sync that left the apexes as they were and moved their token total by
    `delta` (None: not known), from `current`, the view built for the files the sync started
    from (`since`, their fingerprint); or None when it must be built again.

    Only a view that renders no lesson, before and after, is carried forward: one that renders
    them shows what changed (`build`)."""
    if delta is None or not current or current.get("files") != since or current.get("lessons"):
        return None
    if any(current.get(k) != want[k] for k in _SETTINGS) or not current.get("apexes"):
        return None
    total = int(current["total_tokens"]) + delta
    if current.get("fits") or total <= whole_limit(want) * 1.5:  # it may fit now: render it
        return None
    frame = {"head": render("inject/head"), "tail": render("inject/tail")}
    if any(current.get(k) != v for k, v in frame.items()):
        return None
    return {**current, **want, "total_tokens": total}


def patched(
    g: Graph, current: dict | None, want: dict, since: str, edited: list[str] | None
) -> dict | None:
    """The view that renders lessons after a sync that changed only the text of `edited`
    lessons (their links, status and level as they were, no lesson added or removed, no
    episode moved: `SyncReport.edited`), from `current`, the view built for the files the
    sync started from (`since`): the edited apexes' items rendered again, every other item
    kept as it was; or None when it must be built again (it no longer fits, or anything
    else moved)."""
    from rose.graph.rows import lessons_get

    if edited is None or not current or current.get("files") != since:
        return None
    if not (current.get("fits") and current.get("lessons")):
        return None
    if any(current.get(k) != want[k] for k in _SETTINGS):
        return None
    head, tail = render("inject/head"), render("inject/tail")
    frame = {"head": head, "tail": tail, "head_pull": render("inject/head", pull=True)}
    if any(current.get(k) != v for k, v in frame.items()):
        return None
    shown = {i["id"]: i for i in current["lessons"]}
    rows = {
        r["lesson"]["id"]: r["lesson"] for r in lessons_get(g, [i for i in edited if i in shown])
    }
    lessons = [
        item(rows[i["id"]], i["shown"], i["sources"]) if i["id"] in rows else i
        for i in current["lessons"]
    ]
    total = tokens.count(block(head, [i["full"] for i in lessons], tail))
    if total > whole_limit(want):
        return None
    return {**current, **want, "total_tokens": total, "lessons": lessons}


def build(g: Graph, config: Any, want: dict) -> dict:
    """The view for the graph as it is now; `want` is what it is built from (`stamps`).

    Lessons are rendered into it only when the apexes may fit what is served whole
    (`whole_limit`): past it the hook needs the model anyway, and a large store must not
    rewrite megabytes per save.
    """
    head, tail = render("inject/head"), render("inject/tail")
    frame = tokens.count(head) + tokens.count(tail)
    limit = min(config.recall.max_pack_tokens, config.recall.whole_tokens)
    # Totals first: a store far past the budget is decided without fetching every apex.
    (totals,) = g.q("apex_totals")
    count = int(totals["apexes"])
    total = frame + int(totals["tokens"]) + count * WRAP_TOKENS
    apexes: list[dict] = []
    lessons: list[dict] = []
    if count and total <= limit * 1.5:  # could fit: render, and count exactly
        apexes = g.q("apexes", scope="")
        rows = {
            r["lesson"]["id"]: r["lesson"] for r in g.q("lesson_get", ids=[a["id"] for a in apexes])
        }
        shown = shortid.shortest(r["id"] for r in g.q("lesson_id_list"))
        below = sources_among(g, rows)
        lessons = [item(rows[a["id"]], shown.get(a["id"]), below.get(a["id"])) for a in apexes]
        total = tokens.count(block(head, [i["full"] for i in lessons], tail))
    fits = bool(count) and total <= limit
    return {
        **want,
        "empty": not count,
        "fits": fits,
        "apexes": count,
        "total_tokens": total,
        "frame_tokens": frame,
        "head": head,
        # The head for a session whose host has ROSE's MCP server (the hook picks it).
        "head_pull": render("inject/head", pull=True),
        "tail": tail,
        "lessons": lessons if fits else [],
    }


def refresh(store: Store, g: Graph) -> None:
    """Rewrite `store`'s recall view when the files or the recall settings moved on since it
    was written: carried forward (`advanced`), patched (`patched`) or built again."""
    from rose.graph import synced
    from rose.store import opened

    # The key first: a config edit landing between it and the stamp below can only make
    # the next open think the view stale, never current.
    report = store.last_sync
    key = opened.view_key(store, report.fingerprint)
    kept = synced.listing_path(store.graph_path).name
    want = stamps(report.survey, store.roots, report.fingerprint, store.config, kept)
    current = read(store.primary.recall_view)
    if not (current and all(current.get(k) == v for k, v in want.items())):
        view = advanced(current, want, report.before, report.apex_delta)
        view = view or patched(g, current, want, report.before, report.edited)
        view = view or build(g, store.config, want)
        write(store.primary.recall_view, view)
    store.view_checked = (key, report.fingerprint)


def write(path, view: dict) -> None:
    """Compact JSON: the prompt hook parses this file on every prompt."""
    try:
        write_json(path, view, compact=True, durable=False)  # rebuilt when missing or stale
    except WriteFailed as exc:
        uncached(exc, "the recall view")


def read(path: Path) -> dict | None:
    """The recall view at `path`, or None when it is missing or unreadable."""
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None

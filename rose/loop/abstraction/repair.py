"""Repair: a dropped claim that keeps rescuing a lesson is folded back into its body.

A compression declares what it cut; descent restores a cut claim as a trial patch when the
lesson fails; a claim that has rescued the same lesson `compress.repair_after` times is
proof the compression cut too deep. Repair appends the claim's text to the lesson's body,
as a paragraph of its own, and takes it out of the lesson's manifest (`dropped`) and its
patches, in one write: the graph heals where it was over-cut. This is structure (counts
and the claim's own words), so no model is asked.

A rescue is counted from the episodes as descent's prior counts it (`descend.priors`): a
failure the claim turned on this lesson (`Episode.rescues`), or a successful use of the
lesson with the claim served as its patch (`Episode.patch_rescues`). A refinement's patch
(detail registered on a lesson above the one it refined) is repaired the same way, since
it is a patch with a record of its own.

Only apexes are repaired, the lessons recall serves and descent patches; a lesson with
something servable above it is served through that. Deltas are inherited, so a claim may
have been dropped below the apex. Then the lower lesson's manifest entry stays (its body
still lacks the text, and its record is still true), and the apex no longer offers the
claim because its body holds it word for word (descent skips it, and so does repair). A
claim the apex dropped itself leaves its manifest. Lessons above the apex that are not
servable (demoted, archived) inherit the shorter manifest: they are never served again.

Repair runs after a session's episodes are written (`after_episodes`, from the learning
jobs), over the lessons the new episodes name as rescued, and by hand (`rose repair`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from rose.models import Episode, Node, claim_id
from rose.store.facade import Row, Store


@dataclass(frozen=True)
class Repair:
    """A claim folded (or, in a dry run, due to be folded) into a lesson's body.

    `claim` is the id descent knows it by (the dropping lesson's `claim_id`, or the
    lesson's own for a patch), `owner` the lesson whose manifest lists it ("" for a patch
    in no manifest), `patch` whether the lesson carried it as a patch."""

    lesson: str
    claim: str
    text: str
    rescues: int
    owner: str = ""
    holder: str = ""
    patch: bool = False


def due(store: Store, lessons: Iterable[str] | None = None) -> list[Repair]:
    """The claims that rescued an apex at least `compress.repair_after` times: of every
    apex, or of those among `lessons`. One open of the graph."""
    threshold = store.config.compress.repair_after
    want = set(lessons) if lessons is not None else None
    out: list[Repair] = []
    with store.graph() as g:
        ids = [a["id"] for a in g.q("apexes", scope="") if want is None or a["id"] in want]
        for row in g.q("lesson_get", ids=ids) if ids else []:
            lesson = row["lesson"]
            manifest = g.q("delta_manifest", id=lesson["id"])
            entries = _entries(lesson, manifest)
            cids = [cid for rows in entries.values() for cid, _, _ in rows]
            record = g.q("claim_record", id=lesson["id"], ids=cids) if cids else []
            turned = {r["id"]: int(r["rescued"] or 0) for r in record}
            out += _reached(lesson, entries, turned, threshold)
    return sorted(out, key=lambda r: (r.lesson, r.claim))


def _entries(lesson: Row, manifest: list[Row]) -> dict[str, list[tuple[str, str, str]]]:
    """What the lesson could fold back: text -> (claim id, owner, holder) of each manifest
    entry stating it, [] for a patch in no manifest; what its body holds already is left out."""
    body = lesson["body"] or ""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for r in manifest:
        text = r["claim"].strip()
        if text not in body:
            out.setdefault(text, []).append((r["id"], r["dropped_by"], r["holder"]))
    for p in lesson["patches"] or []:
        if p.strip() not in body:
            out.setdefault(p.strip(), [])
    return out


def _reached(
    lesson: Row, entries: dict[str, list[tuple[str, str, str]]], turned: dict[str, int], at: int
) -> list[Repair]:
    """The entries whose rescues of the lesson reach `at`: failures turned, plus successful
    uses with the text served as the lesson's patch (counted only while it carries it)."""
    served = {a: int(n) for a, _, n in (v.rpartition("|") for v in lesson["patch_rescues"] or [])}
    patches = {p.strip() for p in lesson["patches"] or []}
    out = []
    for text, rows in entries.items():
        rescues = served.get(claim_id(lesson["id"], text), 0)
        rescues += sum(turned.get(cid, 0) for cid, _, _ in rows)
        if rescues < at:
            continue
        own = next((r for r in rows if r[1] == lesson["id"]), rows[0] if rows else None)
        cid, owner, holder = own or (claim_id(lesson["id"], text), "", "")
        out.append(Repair(lesson["id"], cid, text, rescues, owner, holder, text in patches))
    return out


def fold(node: Node, repairs: Iterable[Repair]) -> Node:
    """`node` with each repaired claim appended to its body as a paragraph of its own, and
    gone from its manifest and its patches."""
    texts = [r.text for r in repairs if r.lesson == node.id and r.text not in node.body]
    if not texts:
        return node
    node.body = "\n\n".join([node.body.rstrip(), *texts]).strip()
    gone = set(texts)
    node.dropped = [c for c in node.dropped if c.claim.strip() not in gone]
    node.patches = [p for p in node.patches if p.strip() not in gone]
    return node


def repair(
    store: Store, lessons: Iterable[str] | None = None, *, dry_run: bool = False
) -> list[Repair]:
    """Fold back every claim due (see `due`), each lesson in one write with all its claims,
    and log a ``repair`` event for each; with `dry_run`, only say what is due."""
    found = due(store, lessons)
    if dry_run or not found:
        return found
    by_lesson: dict[str, list[Repair]] = {}
    for r in found:
        by_lesson.setdefault(r.lesson, []).append(r)
    nodes = [fold(store.get(i), rs) for i, rs in by_lesson.items()]
    store.write(nodes)
    threshold = store.config.compress.repair_after
    for r in found:
        store.log("repair", {**asdict(r), "text": r.text[:300], "repair_after": threshold})
    return found


def after_episodes(store: Store, episodes: Iterable[Episode]) -> list[Repair]:
    """Repair the lessons that newly written episodes name as rescued (a session's end)."""
    named = {x.lesson for e in episodes for x in [*e.rescues, *e.patch_rescues]}
    return repair(store, named) if named else []

"""What the seeded selection-rule tests read from a store's episodes (tests/test_route_sim_*)."""

from __future__ import annotations

from rose.store.facade import Store


def served_and_used(store: Store, since: int) -> tuple[int, int, int]:
    """Lessons served, lessons used, and episodes, over the sessions numbered `since` and on
    (each test names its sessions `<name>-<n>`): a selection's precision is used ÷ served."""
    rows = store.query(
        "MATCH (e:Episode) OPTIONAL MATCH (e)-[:SERVED]->(l:Lesson) "
        "OPTIONAL MATCH (e)-[u:USED]->(l) WITH e, count(l) AS s, count(u) AS u "
        "RETURN e.session AS session, s, u"
    )[0]
    later = [r for r in rows if int(r["session"].rsplit("-", 1)[1]) >= since]
    return sum(r["s"] for r in later), sum(r["u"] for r in later), len(later)

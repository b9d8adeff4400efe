"""Named questions about the lesson DAG, answered by the graph engine.

These are what the later stages ask: recall (apexes), compression (subtree,
regression set, inherited deltas), descent (candidates), refinement
(ancestors), merging (co-usage) and conflicts.
"""

from __future__ import annotations

from rose.store.facade import Store


def apexes(store: Store, scope: str = "") -> list[dict]:
    """Servable lessons with no servable parent; `scope` '' means both scopes."""
    return store.read("apexes", scope=scope)


def subtree(store: Store, lesson_id: str) -> list[dict]:
    """The lesson and everything below it, each once."""
    return store.read("subtree", id=lesson_id)


def regression_set(store: Store, lesson_id: str) -> list[dict]:
    """Episodes covered anywhere in the lesson's subtree."""
    return store.read("regression_set", id=lesson_id)


def delta_manifest(store: Store, lesson_id: str) -> list[dict]:
    """Claims dropped anywhere in the subtree, each with the lesson that still holds it."""
    return store.read("delta_manifest", id=lesson_id)


def descent_candidates(store: Store, lesson_id: str) -> list[dict]:
    """The delta manifest with each holder's rescue and expansion counts and token cost."""
    return store.read("descent_candidates", id=lesson_id)


def ancestors(store: Store, lesson_id: str) -> list[dict]:
    """Every lesson above this one, with `is_apex` set on the tops."""
    return store.read("ancestors", id=lesson_id)


def co_usage(store: Store, limit: int = 50) -> list[dict]:
    """Pairs of lessons used together on successful episodes, most frequent first."""
    return store.read("co_usage", limit=limit)


def conflicts(store: Store) -> list[dict]:
    """Lessons holding an unresolved contradiction, with the lessons they dispute."""
    return store.read("conflicts")

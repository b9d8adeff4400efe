"""A store with one attributed episode serving a few lessons, and a scripted judge for it."""

from __future__ import annotations

from pathlib import Path

from rose.judge.calls import Judge
from rose.model.scripted import ScriptedBackend
from rose.models import Episode, Node
from rose.store.facade import Store


def served(project: Path, n: int = 3, *, used: int = 1) -> tuple[Store, list[str]]:
    """`n` lessons, all served on one attributed episode, the first `used` of them used."""
    store = Store.init(project)
    nodes = [Node(title=f"Lesson {i}", body=f"Point number {i}.") for i in range(n)]
    ids = [x.id for x in nodes]
    ep = Episode(prompt="fix the port", outcome="success", served=ids, used=ids[:used],
                 unused=ids[used:], attributed_by=["assess"])  # fmt: skip
    store.write(nodes, [ep])
    return store, ids


def scripted(store: Store, *, probes: int = 20, changed: list[bool] | None = None):
    """A judge on a scripted backend: `probes` approaches, and a judgement per `changed`."""
    backend = ScriptedBackend()
    for i in range(probes):
        backend.push("counterfactual_probe", {"approach": f"approach {i}"})
    for c in changed if changed is not None else [True] * 10:
        backend.push("counterfactual", {"changed": c, "reason": "because"})
    return Judge(backend, cache_path=None, events_path=store.primary.events), backend

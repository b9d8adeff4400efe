"""Helpers for the consolidation tests: scripted answers, and a store that counts its writes."""

from __future__ import annotations

from rose.judge.calls import Judge, for_store
from rose.model.scripted import ScriptedBackend
from rose.models import Node
from rose.store.facade import Store


class CountingStore(Store):
    """A real Store that records each `write` unit it is asked for (the ids in it)."""

    units: list[list[str]]

    def write(self, nodes, episodes=None, *, scope=None):  # type: ignore[override]
        if not hasattr(self, "units"):
            self.units = []
        self.units.append([n.id for n in nodes])
        return super().write(nodes, episodes, scope=scope)


def counting(store: Store) -> CountingStore:
    out = CountingStore(
        store.project.root if store.project else None,
        store.global_.root if store.global_ else None,
    )
    out.units = []
    return out


def judge(store: Store, **queues: list) -> tuple[Judge, ScriptedBackend]:
    backend = ScriptedBackend(queues)
    return for_store(store, backend=backend), backend


def related(matches: tuple[str, ...] = (), descend: tuple[str, ...] = ()) -> dict:
    return {
        "matches": [{"id": i, "reason": "same subject"} for i in matches],
        "descend": [{"id": i, "reason": "too general"} for i in descend],
    }


def reconciled(
    relation: str,
    target: str = "",
    *,
    question: str = "",
    detail: str = "",
    title: str = "Written title",
    gist: str = "Written gist.",
) -> dict:
    return {
        "relation": relation,
        "target": target,
        "question": question,
        "detail": detail,
        "title": title,
        "gist": gist,
        "reason": "because",
    }


def lesson(lid: str, body: str, **fields) -> Node:
    return Node(id=lid, title=fields.pop("title", body.split(".")[0]), body=body, **fields)

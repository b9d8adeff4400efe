"""A store's health: broken files, links to lessons that do not exist, and cycles of links,
each with the path to mend (`rose doctor`, `rose status`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

from rose.store.facade import Problem

if TYPE_CHECKING:
    from rose.graph.engine import Graph
    from rose.store.facade import Store


def problems(store: Store, g: Graph) -> list[Problem]:
    """Broken files, links to lessons that do not exist, and cycles, each with its path."""
    dangling = g.q("dangling_refs")  # first: a lazy graph opens (and syncs) on it
    out = [Problem(p, r) for p, r in store.last_sync.errors]
    for r in dangling:
        out.append(Problem(r["path"], f"links to {r['missing']}, which does not exist"))
    dag = nx.DiGraph((r["parent"], r["child"]) for r in g.q("edges_all"))
    paths = {r["id"]: r["path"] for r in g.q("lessons_all")}
    for ring in sorted(sorted(c) for c in nx.strongly_connected_components(dag)):
        if len(ring) == 1 and not dag.has_edge(ring[0], ring[0]):
            continue
        loop = [a for a, _ in nx.find_cycle(dag.subgraph(ring), ring[0])]
        names = " -> ".join([*loop, loop[0]])
        if len(loop) < len(ring):
            names += "; also in it: " + ", ".join(i for i in ring if i not in loop)
        from_outside = sorted({p for c in ring for p in dag.predecessors(c)} - set(ring))
        effect = (
            f"recall reaches them only through {', '.join(from_outside)}"
            if from_outside
            else f"{'both' if len(ring) == 2 else f'all {len(ring)}'} are out of recall"
        )
        reason = (
            f"part of a cycle of links ({names}): {effect} until a parents/derived_from "
            "link between them is removed"
        )
        out += [Problem(paths.get(i, i), reason) for i in ring]
    return out

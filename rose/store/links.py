"""A lesson's links checked before it is written: no link to a lesson that does not exist,
none that would close a cycle in the DAG."""

from __future__ import annotations

from rose.errors import CycleError, LessonNotFound
from rose.graph.engine import Graph
from rose.models import Node


def check(g: Graph, node: Node, batch: dict[str, Node] | None = None) -> None:
    """Refuse links to unknown lessons and links that would close a cycle.

    The write adds edges node -> child (derived_from) and parent -> node (parents); a
    cycle appears exactly when some child already reaches the node or a parent. One
    bounded query over the graph answers that; only when it finds a path is the whole
    DAG checked (the graph still holds the node's old links, which this write replaces).
    """
    refs = set(node.derived_from) | set(node.parents) | set(node.disputes)
    known = {r["id"] for r in g.q("lesson_ids", ids=sorted(refs))} if refs else set()
    known |= set(batch or ())
    for ref in sorted(refs - known - {node.id}):
        raise LessonNotFound(ref)
    children, parents = set(node.derived_from), set(node.parents)
    if node.id in children | parents or children & parents:
        loop = sorted((children & parents) | ({node.id} & (children | parents)))[0]
        raise CycleError([node.id, loop, node.id] if loop != node.id else [node.id, node.id])
    # A new cycle runs down a new child (or an existing edge out of the node) and back up
    # through a new parent (or an existing edge into the node).
    start = children | ({node.id} if parents else set())
    end = parents | ({node.id} if children else set())
    if batch and len(batch) > 1:  # the graph does not hold the other new links yet
        _cycle_exactly(g, node, list(batch.values()))
    elif start and g.q("reaches", **{"from": sorted(start), "to": sorted(end)}):
        _cycle_exactly(g, node, [node])


def _cycle_exactly(g: Graph, node: Node, written: list[Node]) -> None:
    """The whole DAG checked, with the written lessons' links in place of their old ones."""
    import networkx as nx

    dag = nx.DiGraph()
    mine = {n.id for n in written}
    for r in g.q("links_all"):
        if r["id"] not in mine:  # the written lessons' own lists are replaced
            dag.add_edges_from((r["id"], c) for c in r["derived"])
            dag.add_edges_from((p, r["id"]) for p in r["parents"])
    for n in written:
        dag.add_edges_from((n.id, c) for c in n.derived_from)
        dag.add_edges_from((p, n.id) for p in n.parents)
    try:
        cycle = nx.find_cycle(dag, node.id)
    except (nx.NetworkXNoCycle, nx.NodeNotFound):
        return
    raise CycleError([a for a, _ in cycle] + [cycle[0][0]])

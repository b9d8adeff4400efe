"""Which apexes have been used together often enough to earn a shared parent.

Co-usage is counted, never judged: it is an observed outcome. The graph answers, for each
successful episode, which active apexes sit above (or at) a lesson it used (`apex_uses`),
so a use of a lesson since compressed counts for the form that serves it now. Two apexes
are used together on an episode when it used a lesson under each, not merely one lesson
below both (a diamond); a group is used together on the episodes that used every member.
Counted by serving (`merge.together: served`, from `apex_served`), a group is together on
the successful episodes that were served every member and used one at least.

Groups are found with networkx: apexes of one scope (the caller may key a scope by family
too) are joined where a pair was used
together on at least `min_co_uses` episodes; in each connected component the most co-used
pair not yet grouped seeds a group, which then takes, one at a time, the apex joined to
every member that keeps the most episodes of the whole group (still at least
`min_co_uses`), up to `max_children`. An apex is in one group at most: once merged it is no
longer an apex, and its uses count for the parent in the next pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rose.store.facade import Row

#: episode -> apex -> the lessons under that apex the episode used.
Uses = dict[str, dict[str, set[str]]]


@dataclass(frozen=True)
class Group:
    """Apexes (sorted ids) of one scope and the successful episodes that count for them
    together (used all of them; by serving, served all and used one)."""

    members: tuple[str, ...]
    scope: str
    episodes: tuple[str, ...]

    @property
    def co_uses(self) -> int:
        return len(self.episodes)

    @property
    def key(self) -> str:
        """The group's name in the event log: its members' ids, sorted, comma-separated."""
        return ",".join(self.members)


def usage(rows: Iterable[Row]) -> tuple[Uses, dict[str, str]]:
    """`apex_uses` rows as (episode -> apex -> lessons used under it, apex -> scope)."""
    uses: Uses = {}
    scope: dict[str, str] = {}
    for r in rows:
        uses.setdefault(r["episode"], {}).setdefault(r["apex"], set()).add(r["used"])
        scope[r["apex"]] = r["scope"]
    return uses, scope


#: episode -> the apexes above (or at) a lesson it was served (`merge.together: served`).
Served = dict[str, set[str]]


def served_usage(rows: Iterable[Row]) -> Served:
    """`apex_served` rows as episode -> the apexes it was served."""
    out: Served = {}
    for r in rows:
        out.setdefault(r["episode"], set()).add(r["apex"])
    return out


def together(uses: Uses, members: Sequence[str], served: Served | None = None) -> list[str]:
    """The episodes that used a lesson under every member, through two lessons at least;
    with `served`, those that were served every member and used one at least."""
    if served is not None:
        return sorted(
            e
            for e, apexes in served.items()
            if set(members) <= apexes and any(m in uses.get(e, {}) for m in members)
        )
    out = []
    for episode, by_apex in uses.items():
        if all(m in by_apex for m in members):
            used = set().union(*(by_apex[m] for m in members))
            if len(used) >= 2:
                out.append(episode)
    return sorted(out)


def pairs(
    uses: Uses, scope: dict[str, str], served: Served | None = None
) -> Counter[tuple[str, str]]:
    """How many episodes used each pair of apexes of one scope together (with `served`:
    were served both and used one at least)."""
    out: Counter[tuple[str, str]] = Counter()
    if served is not None:
        for e, apexes in served.items():
            used = uses.get(e, {})
            for a, b in combinations(sorted(x for x in apexes if x in scope), 2):
                if scope[a] == scope[b] and (a in used or b in used):
                    out[(a, b)] += 1
        return out
    for by_apex in uses.values():
        for a, b in combinations(sorted(by_apex), 2):
            if scope[a] == scope[b] and len(by_apex[a] | by_apex[b]) >= 2:
                out[(a, b)] += 1
    return out


def groups(
    uses: Uses,
    scope: dict[str, str],
    *,
    min_co_uses: int,
    max_children: int,
    served: Served | None = None,
) -> list[Group]:
    """Disjoint groups of 2 to `max_children` apexes, each used together on at least
    `min_co_uses` episodes, most co-used first."""
    import networkx as nx

    graph = nx.Graph()
    for (a, b), n in pairs(uses, scope, served).items():
        if n >= min_co_uses:
            graph.add_edge(a, b, weight=n)
    out: list[Group] = []
    for component in nx.connected_components(graph):
        left = set(component)
        while True:
            edges = sorted(
                (-graph[a][b]["weight"], *sorted((a, b))) for a, b in graph.subgraph(left).edges
            )
            if not edges:
                break
            members = list(edges[0][1:])
            while len(members) < max_children:
                common = set.intersection(*(set(graph[m]) for m in members)) & left
                ranked = sorted((-len(together(uses, [*members, c], served)), c) for c in common)
                if not ranked or -ranked[0][0] < min_co_uses:
                    break
                members.append(ranked[0][1])
            left -= set(members)
            members.sort()
            episodes = tuple(together(uses, members, served))
            out.append(Group(tuple(members), scope[members[0]], episodes))
    return sorted(out, key=lambda g: (-g.co_uses, g.members))


def near(
    uses: Uses,
    scope: dict[str, str],
    *,
    min_co_uses: int,
    limit: int,
    served: Served | None = None,
) -> list[Group]:
    """The pairs used together on fewer than `min_co_uses` episodes, most co-used first."""
    counted = pairs(uses, scope, served).items()
    below = sorted((-n, a, b) for (a, b), n in counted if n < min_co_uses)[:limit]
    return [Group((a, b), scope[a], tuple(together(uses, (a, b), served))) for _, a, b in below]

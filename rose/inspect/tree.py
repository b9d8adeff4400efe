"""The lesson DAG from its apexes down, as text or as Graphviz DOT."""

from __future__ import annotations

from datetime import datetime, timezone

import networkx as nx

from rose.models import claim_id
from rose.store.facade import Store


def build(store: Store, family: str | None = None) -> nx.DiGraph:
    """The DAG (parent → child, toward detail) with lesson fields, own dropped claims and
    patches, each with its rescues: the failures a claim turned (folded from the episodes)
    plus the successful uses its text was served on as a lesson's patch."""
    with store.graph() as g:
        lessons = g.q("lessons_all")
        edges = g.q("edges_all")
        ids = [r["id"] for r in lessons]
        claims = g.q("claims_of", ids=ids) if ids else []
        patched = g.q("patches_of", ids=ids) if ids else []
    dag = nx.DiGraph()
    for r in lessons:
        if family is None or r["family"] == family:
            dag.add_node(r["id"], **r, dropped=[], patches=[])
    dag.add_edges_from(
        (e["parent"], e["child"]) for e in edges if e["parent"] in dag and e["child"] in dag
    )
    served: dict[str, int] = {}  # claim text -> successful uses it was served on as a patch
    for r in patched:
        counts = {a: int(n) for a, _, n in (v.rpartition("|") for v in r["patch_rescues"] or [])}
        for text in r["patches"] or []:
            n = counts.get(claim_id(r["id"], text), 0)
            served[text.strip()] = served.get(text.strip(), 0) + n
            if r["id"] in dag:
                dag.nodes[r["id"]]["patches"].append({"claim": text, "rescues": n})
    for c in claims:
        if c["owner"] in dag:
            rescues = int(c["rescues"] or 0) + served.get(c["claim"].strip(), 0)
            dag.nodes[c["owner"]]["dropped"].append({**c, "rescues": rescues})
    return dag


def _roots(dag: nx.DiGraph, recent: bool) -> list[str]:
    roots = [n for n in dag if dag.in_degree(n) == 0]
    if recent:
        return sorted(roots, key=lambda n: _newest_below(dag, n), reverse=True)
    return sorted(roots, key=lambda n: (dag.nodes[n]["family"], -dag.nodes[n]["level"], n))


def _newest_below(dag: nx.DiGraph, n: str) -> str:
    return max(dag.nodes[d]["updated"] for d in {n, *nx.descendants(dag, n)})


def _age(iso: str) -> str:
    try:
        secs = (datetime.now(timezone.utc) - datetime.fromisoformat(iso)).total_seconds()
    except ValueError:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{int(secs // size)}{unit} ago"
    return "just now"


def render_text(dag: nx.DiGraph, *, verbose: bool = False, recent: bool = False) -> str:
    """Indented tree from each apex; a node reached twice is shown once, then referenced."""
    lines: list[str] = []
    seen: set[str] = set()

    def walk(n: str, depth: int) -> None:
        a = dag.nodes[n]
        pad = "  " * depth
        mark = "" if a["status"] == "active" else f" [{a['status']}]"
        when = f" · {_age(a['updated'])}" if recent else ""
        if n in seen:
            lines.append(f"{pad}↳ {n} (shown above)")
            return
        seen.add(n)
        lines.append(f"{pad}L{a['level']} {n}  {a['title']}  ({a['tokens']} tok){mark}{when}")
        if verbose:
            lines.extend(_details(a, pad + "    "))
        lines.extend(_manifest(a, pad + "    ", verbose))
        for child in sorted(dag.successors(n), key=lambda c: (-dag.nodes[c]["level"], c)):
            walk(child, depth + 1)

    family = None
    for root in _roots(dag, recent):
        if not recent and dag.nodes[root]["family"] != family:
            family = dag.nodes[root]["family"]
            lines.append(f"{family}/")
        walk(root, 1)
    for n in sorted(set(dag) - seen):  # only reachable when the links form a cycle
        walk(n, 1)
    return "\n".join(lines)


def _details(a: dict, pad: str) -> list[str]:
    """What `-v` adds under a lesson: its gist, where it came from, what is not final yet."""
    out = [f"{pad}gist: {a['gist']}"] if a["gist"] else []
    out.append(f"{pad}from: {provenance(a)}")
    if a.get("held"):
        out.append(f"{pad}held for review: {a['held']}")
    marks = a.get("provisional") or ()
    derived = ", ".join(f for f in marks if f in ("title", "gist"))
    if derived:
        out.append(f"{pad}provisional: {derived} (first sentence, not yet written)")
    if "scope" in marks:
        out.append(f"{pad}scope not judged yet: filed where it was added; a job asks")
    if "reconcile" in marks:
        out.append(f"{pad}not reconciled yet: the model was unavailable; a job does it")
    return out


_FROM = {
    "user": "the user's own words",
    "repository": "the repository and the work in it",
    "outside": "outside content",
    "": "not recorded",
}


def provenance(a: dict) -> str:
    """Where a lesson's content came from, as `rose tree -v` says it."""
    text = _FROM.get(a.get("provenance") or "", str(a.get("provenance")))
    if a.get("provenance") == "outside":
        text += " (accepted)" if a.get("accepted") else " (not accepted: kept to this project)"
    return text


def _manifest(a: dict, pad: str, verbose: bool) -> list[str]:
    """A lesson's dropped claims with their holders; verbose: their rescues, and its patches."""
    out = []
    for c in a["dropped"]:
        held = f"held by {c['holder']}" + (f" · rescued {c['rescues']}" if verbose else "")
        out.append(f"{pad}− dropped {c['kind']}: {c['claim']}  ({held})")
    for p in a["patches"] if verbose else ():
        out.append(f"{pad}+ patch: {p['claim']}  (rescued {p['rescues']})")
    return out


def _dot(*lines: str) -> str:
    """A DOT quoted string holding `lines` as written: UTF-8 kept as it is, a backslash and a
    quote escaped (`C:\\certs` stays), the lines joined by DOT's `\\n`."""
    esc = [x.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") for x in lines]
    return '"' + "\\n".join(esc) + '"'


def render_dot(dag: nx.DiGraph) -> str:
    """Graphviz DOT: one rank per level, dropped-claim counts on edges, disputed nodes marked."""
    q = _dot
    out = ["digraph rose {", "  rankdir=TB;", "  node [shape=box, fontsize=10];"]
    for n, a in sorted(dag.nodes(data=True)):
        style = ', style=filled, fillcolor="#f4cccc"' if a["status"] == "disputed" else ""
        label = q(f"L{a['level']} {a['title']}", n)
        out.append(f"  {q(n)} [label={label}{style}];")
    levels: dict[int, list[str]] = {}
    for n, a in dag.nodes(data=True):
        levels.setdefault(a["level"], []).append(n)
    for level in sorted(levels):
        members = " ".join(q(n) for n in sorted(levels[level]))
        out.append(f"  {{ rank=same; {members} }}")
    for p, c in sorted(dag.edges()):
        below = {c, *nx.descendants(dag, c)}
        dropped = sum(1 for cl in dag.nodes[p]["dropped"] if cl["holder"] in below)
        label = f' [label="{dropped} dropped"]' if dropped else ""
        out.append(f"  {q(p)} -> {q(c)}{label};")
    out.append("}")
    return "\n".join(out)

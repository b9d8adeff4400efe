"""`rose view`: the lesson DAG as one self-contained HTML page, for a person to look at.

The page needs no server and no network: the graph is laid out here (families side by side,
levels one above another, the apexes on top) and written into the page as HTML and SVG, so
every title is text in the page as written; each lesson's detail travels as JSON inside a
`<script type="application/json">`; the script and style ship beside this module
(`_viewer_assets/`) and are inlined. The script only selects, searches and follows the URL
fragment (`#q=word&lesson=n_…`), building the detail with `textContent`: lesson text is
untrusted and never reaches the page as markup.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from rose.disk.atomic import write_text
from rose.inspect.tree import build, provenance
from rose.store.facade import Store

NODE_W, NODE_H = 190, 46  # a lesson's box, in pixels
GAP_X, GAP_Y = 18, 64  # between boxes on a level, and between levels
BAND_GAP, PAD, HEAD = 36, 16, 30  # between families, around the graph, a family's heading
ASSETS = "_viewer_assets"


@dataclass(frozen=True)
class Box:
    """One lesson where the page draws it."""

    id: str
    title: str
    level: int
    status: str
    x: int
    y: int


@dataclass(frozen=True)
class Edge:
    """A `derived_from` link: `parent` was derived from `child`; a merge's parent has several."""

    parent: str
    child: str
    kind: str  # "compression" | "merge"
    path: str  # the SVG path from the parent's bottom to the child's top


@dataclass(frozen=True)
class Band:
    family: str
    x: int
    width: int


@dataclass
class Layout:
    boxes: list[Box] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    width: int = 0
    height: int = 0


@dataclass(frozen=True)
class Viewed:
    """What `rose view` wrote: where, and how many lessons it drew."""

    path: Path
    lessons: int


def view(store: Store, out: Path | None = None) -> Viewed:
    """Write the page for `store` to `out` (default: the store's machine-local `view.html`,
    which its `.gitignore` lists), through the atomic, redacting writer."""
    text, lessons = page(store)
    path = out if out is not None else store.primary.view
    if out is None:
        store.primary.ignore(path.name)
    write_text(path, text)
    return Viewed(path, lessons)


def page(store: Store) -> tuple[str, int]:
    """The page's HTML, and how many lessons it draws."""
    lessons, dag = collect(store)
    laid = layout(dag)
    demo = demo_panel(store.primary.demo)
    html = _template().render(
        lessons=len(lessons),
        families=len(laid.bands),
        laid=laid,
        demo=demo,
        node_w=NODE_W,
        node_h=NODE_H,
        chart_w=CHART_W,
        chart_h=CHART_H,
        data=script_json({"lessons": lessons}),
        css=_asset("viewer.css"),
        js=_asset("viewer.js"),
    )
    return html, len(lessons)


def collect(store: Store) -> tuple[list[dict[str, Any]], Any]:
    """Every lesson with what the detail shows: its text, where it came from, its record as
    the graph folds it from the episodes, its dropped claims and patches, its links."""
    from rose.graph.rows import lessons_get

    dag = build(store)
    ids = sorted(dag)
    with store.graph() as g:
        rows = {r["lesson"]["id"]: r["lesson"] for r in lessons_get(g, ids)} if ids else {}
    out = []
    for n in ids:
        a = dag.nodes[n]
        r = rows.get(n, {})
        out.append(
            {
                **{k: a[k] for k in ("id", "family", "title", "gist", "level", "status")},
                **{k: a[k] or "" for k in ("origin", "provenance", "held")},
                "from": provenance(a),
                "body": r.get("body", ""),
                "conflict": r.get("conflict") or "",
                "disputes": list(r.get("dispute_ids") or []),
                "record": {k: int(r.get(k) or 0) for k in _RECORD},
                "last_used": _iso(r.get("last_used")),
                "tokens": int(a["tokens"] or 0),
                "dropped": [
                    {k: c[k] for k in ("claim", "kind", "holder", "rescues")} for c in a["dropped"]
                ],
                "patches": a["patches"],
                "parents": sorted(dag.predecessors(n)),
                "children": sorted(dag.successors(n)),
            }
        )
    return out, dag


_RECORD = ("attempts", "successes", "failures", "rescues", "expansions")


def _iso(value: Any) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else str(value or "")


def layout(dag: Any) -> Layout:
    """Families as bands left to right (by name), levels as rows (the highest on top, the
    same row in every band); on a row, lessons ordered by where their parents stand (then
    by id; those with none last), so what a lesson was derived from stands below it.
    Deterministic."""
    if not dag:
        return Layout()
    top = max(dag.nodes[n]["level"] for n in dag)
    families: dict[str, dict[int, list[str]]] = {}
    for n in sorted(dag):
        a = dag.nodes[n]
        families.setdefault(a["family"], {}).setdefault(a["level"], []).append(n)
    laid = Layout()
    x0 = PAD
    centre: dict[str, float] = {}
    for family in sorted(families):
        levels = families[family]
        wide = max(len(row) for row in levels.values())
        width = wide * NODE_W + (wide - 1) * GAP_X
        for level in sorted(levels, reverse=True):
            row = sorted(levels[level], key=lambda n: (_under(dag, n, centre), n))
            for i, n in enumerate(row):
                x = x0 + i * (NODE_W + GAP_X)
                y = PAD + HEAD + (top - level) * (NODE_H + GAP_Y)
                centre[n] = x + NODE_W / 2
                a = dag.nodes[n]
                laid.boxes.append(Box(n, a["title"], level, a["status"], x, y))
        laid.bands.append(Band(family, x0, width))
        x0 += width + BAND_GAP
    at = {b.id: b for b in laid.boxes}
    for p, c in sorted(dag.edges()):
        kind = "merge" if dag.nodes[p]["origin"] == "merge" or dag.out_degree(p) > 1 else ""
        laid.edges.append(Edge(p, c, kind or "compression", _curve(at[p], at[c])))
    laid.width = x0 - BAND_GAP + PAD
    laid.height = PAD + HEAD + (top + 1) * (NODE_H + GAP_Y) - GAP_Y + PAD
    return laid


def _under(dag: Any, n: str, centre: dict[str, float]) -> float:
    """Where `n`'s parents already stand, on average; past every one for a lesson with none."""
    xs = [centre[p] for p in dag.predecessors(n) if p in centre]
    return sum(xs) / len(xs) if xs else float("inf")


def _curve(p: Box, c: Box) -> str:
    x1, y1 = p.x + NODE_W // 2, p.y + NODE_H
    x2, y2 = c.x + NODE_W // 2, c.y
    mid = (y1 + y2) // 2
    return f"M{x1},{y1} C{x1},{mid} {x2},{mid} {x2},{y2}"


@dataclass(frozen=True)
class Series:
    name: str
    css: str  # the class the line is drawn with
    points: str  # SVG polyline points


@dataclass(frozen=True)
class Chart:
    title: str
    top: str  # the label at the top of the y axis
    series: list[Series]
    first: str  # the first and last slices of sessions, under the x axis
    last: str


@dataclass(frozen=True)
class DemoPanel:
    sessions: int
    charts: list[Chart]


CHART_W, CHART_H = 320, 110
_ARMS = (("none", "no memory", "none"), ("rose", "ROSE", "rose"), ("ceiling", "ceiling", "ceil"))


def demo_panel(path: Path) -> DemoPanel | None:
    """The demo's success and tokens over its sessions, from what `rose demo` left beside the
    store; None for a store the demo did not make (or a summary that does not read)."""
    try:
        demo = json.loads(path.read_text(encoding="utf-8"))
        trends = {arm: demo["over_time"][arm] for arm, _, _ in _ARMS}
        slices = [b["sessions"] for b in trends["rose"]]
        sessions = int(demo["sessions"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not slices:
        return None
    success = [
        Series(name, css, _points([b["success_rate"] for b in trends[arm]], 1.0))
        for arm, name, css in _ARMS
    ]
    costly = [(arm, name, css) for arm, name, css in _ARMS if arm != "none"]
    most = max(
        (b["tokens_per_prompt"] or 0 for arm, _, _ in costly for b in trends[arm]), default=0
    )
    tokens = [
        Series(name, css, _points([b["tokens_per_prompt"] for b in trends[arm]], most or 1))
        for arm, name, css in costly
    ]
    return DemoPanel(
        sessions,
        [
            Chart("tasks solved at the first attempt", "100%", success, slices[0], slices[-1]),
            Chart("tokens injected per prompt", f"{most:,.0f}", tokens, slices[0], slices[-1]),
        ],
    )


def _points(values: list[float | None], top: float) -> str:
    step = CHART_W / max(1, len(values) - 1)
    return " ".join(
        f"{i * step:.1f},{CHART_H - (v or 0) / top * CHART_H:.1f}" for i, v in enumerate(values)
    )


def script_json(data: Any) -> str:
    """JSON safe inside a `<script>` element: no `<`, `>` or `&` (so no `</script>` or
    `<!--` in lesson text can end or bend the element), nor a line separator JS refuses."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    for raw, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _asset(name: str) -> str:
    return (resources.files("rose.inspect") / ASSETS / name).read_text(encoding="utf-8")


@cache
def _template() -> Any:
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=True,  # every value is escaped but the three marked safe below
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["trusted"] = Markup  # only the shipped CSS and JS, and `script_json`'s output
    return env.from_string(_asset("page.html.j2"))

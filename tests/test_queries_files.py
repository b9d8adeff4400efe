"""Every Cypher file parses and runs against a fresh schema, and every one is used by the
library: no dead statements, and no statement assembled in Python.

The two static guards read the code's syntax tree: a query file counts as used only when its
name reaches the executor, and any string anywhere in the code that looks like Cypher fails,
unless it is in an explicit allow-list with its reason."""

from __future__ import annotations

import ast
import inspect
import os
import re
from pathlib import Path
from typing import Any

import pytest

from rose.graph import _corrections
from rose.graph.engine import Graph, open_graph
from rose.graph.rows import claim_rows, episode_row, lesson_row
from rose.graph.sync import ensure_schema
from rose.models import Claim, Correction, Episode, Node
from rose.queries import named as queries
from rose.store.facade import Store

pytestmark = pytest.mark.graph

ENGINE = os.environ.get("ROSE_GRAPH_ENGINE", "kuzu")

ROOT = Path(__file__).resolve().parents[1] / "rose"

_PARAMS = {
    "id": "n_none",
    "ids": [],
    "from": [],
    "to": [],
    "paths": [],
    "path": "/p",
    "scope": "",
    "limit": 5,
    "everything": False,
    "key": "k",
    "value": "v",
    "rows": [],
}


def _rows(name: str) -> list[dict]:
    """One realistic row for the statements that take rows (an empty list has no type)."""
    node = Node(title="t", dropped=[Claim(claim="c", holder="n_holder1")])
    return {
        "lessons_create": [lesson_row(node, "/p.md")],
        "claims_create": claim_rows(node),
        "episodes_create": [episode_row(Episode(), "project", "/e.json")],
        "lessons_set_spans": [{"id": "n_x", "spans": ["a sentence"]}],
        "lessons_update": [lesson_row(node, "/p.md")],
        "claims_update": claim_rows(node),
        "pending_put": [{"src": "n_src1", "dst": "n_dst1"}],
        "meta_put": [{"key": "k", "value": "v"}],
        "files_put": _file_rows(),
        "corrections_create": [
            _corrections.row(Correction(episode="e_x000", lesson="n_x000", used=True), "/c.json")
        ],
    }[name]


def _scalars(name: str) -> dict[str, Any]:
    """Realistic values for the statements that take a row's columns as parameters."""
    node = Node(title="t", body="b")
    meta = {"files": "f", "file_errors": "[]", "derive": ""}
    return {
        "lessons_update_one": lesson_row(node, "/p.md"),
        "lesson_rebody_one": lesson_row(node, "/p.md"),
        "file_put_one": _file_rows()[0],
        "meta_put_synced": meta,
    }.get(name, {})


def _file_rows() -> list[dict]:
    return [
        {
            "path": "/p",
            "kind": "node",
            "scope": "project",
            "mtime_ns": 1,
            "size": 1,
            "item": "n_x",
            "error": "",
        }
    ]


@pytest.mark.parametrize("name", [n for n in queries.names() if n != "schema"])
def test_query_runs_on_fresh_schema(tmp_path: Path, name: str):
    text = queries.load(name)
    wanted = set(re.findall(r"\$(\w+)", text))
    given = {**_PARAMS, **_scalars(name)}
    params = {k: _rows(name) if k == "rows" else given[k] for k in wanted}
    with open_graph(tmp_path / "g.db", ENGINE) as g:
        ensure_schema(g)
        g.q(name, **params)


# -- every query file is used ---------------------------------------------------------------
#
# A name counts as used only when it reaches the executor as a literal: the first argument
# (or `name=`) of a call to a `Graph`/`Store` method or a `rose.queries.named` function that
# takes a query `name`, or a string of a literal tuple/list (inline, or a module-level
# constant) that a `for` loop or a comprehension feeds to such a call through its variable.
# `Graph.run` is not an executor: it takes a statement, and its `name=` only labels errors.


def _takes_name(fn: Any) -> bool:
    params = [p for p in inspect.signature(fn).parameters if p != "self"]
    return params[:1] == ["name"]


_METHODS = {
    n
    for cls in (Graph, Store)
    for n, fn in inspect.getmembers(cls, inspect.isfunction)
    if not n.startswith("_") and _takes_name(fn)
}
_LOADERS = {
    n
    for n, fn in vars(queries).items()
    if callable(fn) and getattr(fn, "__module__", "") == queries.__name__ and _takes_name(fn)
}


def _strings_of(node: ast.expr | None) -> list[str] | None:
    """The strings of a literal tuple, list or set of strings, else None."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or not node.elts:
        return None
    values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
    if len(values) < len(node.elts) or not all(isinstance(v, str) for v in values):
        return None
    return values


def _name_constants(tree: ast.Module) -> dict[str, list[str]]:
    """Module-level `NAMES = ("a", "b")` (or a list), by name."""
    found: dict[str, list[str]] = {}
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
        strings = _strings_of(getattr(stmt, "value", None))
        if isinstance(target, ast.Name) and strings is not None:
            found[target.id] = strings
    return found


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


class _ExecutorCalls(ast.NodeVisitor):
    """Every query name one module passes to the executor."""

    def __init__(self, tree: ast.Module):
        self.names: set[str] = set()
        self._constants = _name_constants(tree)
        self._loops: list[dict[str, list[str]]] = [{}]  # loop variable -> the names it takes
        self._loaders: set[str] = set()  # local names of `rose.queries.named.load` and co.
        self._modules = {queries.__name__}  # local names of the `rose.queries.named` module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == queries.__name__:
                self._loaders |= {a.asname or a.name for a in node.names if a.name in _LOADERS}
            elif isinstance(node, ast.ImportFrom) and node.module == "rose.queries":
                self._modules |= {a.asname or a.name for a in node.names if a.name == "named"}
            elif isinstance(node, ast.Import):
                self._modules |= {
                    a.asname for a in node.names if a.name == queries.__name__ and a.asname
                }
        self.visit(tree)

    def _is_executor(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            return func.id in self._loaders
        if not isinstance(func, ast.Attribute):
            return False
        return func.attr in _METHODS or (
            func.attr in _LOADERS and _dotted(func.value) in self._modules
        )

    def _bound(self, target: ast.expr, it: ast.expr) -> dict[str, list[str]]:
        strings = _strings_of(it)
        if strings is None and isinstance(it, ast.Name):
            strings = self._constants.get(it.id)
        return {target.id: strings} if isinstance(target, ast.Name) and strings else {}

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self._loops.append({**self._loops[-1], **self._bound(node.target, node.iter)})
        for stmt in node.body:
            self.visit(stmt)
        self._loops.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    def _visit_comprehension(self, node: Any) -> None:
        bound: dict[str, list[str]] = {}
        for gen in node.generators:
            bound |= self._bound(gen.target, gen.iter)
        self._loops.append({**self._loops[-1], **bound})
        self.generic_visit(node)
        self._loops.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension

    def visit_Call(self, node: ast.Call) -> None:
        if self._is_executor(node.func):
            arg = node.args[0] if node.args else None
            arg = next((k.value for k in node.keywords if k.arg == "name"), arg)
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                self.names.add(arg.value)
            elif isinstance(arg, ast.Name):
                self.names.update(self._loops[-1].get(arg.id, ()))
        self.generic_visit(node)


def _executor_names(source: str) -> set[str]:
    return _ExecutorCalls(ast.parse(source)).names


def _library_executor_names() -> set[str]:
    return {n for p in ROOT.rglob("*.py") for n in _executor_names(p.read_text("utf-8"))}


_USAGE_SAMPLE = '''
"""Reads lesson_doc; see also "lesson_docstring"."""
import rose.queries.named
from rose.queries import named as qm
from rose.queries.named import load as get_text

_LINKS = ("link_a", "link_b")
_OTHER = ("looped_elsewhere",)
_UNRELATED = "lesson_unrelated"


def f(g, store, other):
    """Runs lesson_docstring."""
    # g.q("lesson_comment")
    g.q("lesson_q", ids=[])
    store.read(name="lesson_kw")
    get_text("lesson_loader")
    qm.statements("lesson_module")
    rose.queries.named.load("lesson_dotted")
    for link in _LINKS:
        g.q(link)
    rows = [g.q(n) for n in ["comp_a", "comp_b"]]
    for other in _OTHER:
        print(other)
    g.q(other)
    print("lesson_print", {"lesson_key": 1}, f"{g}lesson_fstring", _UNRELATED)
    g.get("lesson_get_method")
    g.run("lesson_statement", name="lesson_label")
    load("lesson_unimported")
    json.load("lesson_other_load")
    return rows
'''


def test_usage_detector_counts_only_executor_calls():
    assert {"q", "read"} <= _METHODS and {"load", "statements"} <= _LOADERS
    assert _executor_names(_USAGE_SAMPLE) == {
        "lesson_q",
        "lesson_kw",
        "lesson_loader",
        "lesson_module",
        "lesson_dotted",
        "link_a",
        "link_b",
        "comp_a",
        "comp_b",
    }


def test_every_query_file_is_used():
    """The schema counts through the schema setup's `statements("schema")`."""
    assert sorted(set(queries.names()) - _library_executor_names()) == []


def test_every_executor_call_names_a_query_file():
    assert sorted(_library_executor_names() - set(queries.names())) == []


# -- no Cypher in Python ----------------------------------------------------------------------
#
# A clause keyword alone is English ("match", "set", "return", "commit"), so each rule asks for
# Cypher-shaped syntax beside it: a node or relationship pattern, a label, a `$param`, a
# property test, or a control statement that is the whole string.

_CLAUSE = r"(?:where|return|with|set|delete|detach|remove|merge|match|create|unwind|on|union)"
_PARAM = r"\$[a-z_]\w*(?![\w$^{(\\])"  # `$ids`, not TeX's `$n$`, `$f(w)$` or `${HOME}`
_OP = r"(?:=(?!=)|<>|<=|>=|<(?!<)|>(?!>)|\bin\b|\bcontains\b|\bstarts\s+with\b|\bends\s+with\b)"

# (rule, pattern, cased): uncased rules also read across lines, with `$` ending a line.
_RULE_TABLE = [
    # MATCH (n:L / MATCH (n {..} / MATCH ()-[ / MATCH (n) RETURN, not `match()` or prose
    (
        "pattern clause",
        r"\b(?:optional\s+match|match|merge|create)\s*\(\s*(?:\w*\s*[:{]|\w*\s*\)\s*<?-\s*[\[-]"
        rf"|\w+\s*\)\s*(?:,|;|\b{_CLAUSE}\b))",
        False,
    ),
    (
        "relationship pattern",  # -[r:USED|HELD_BY*1..2 {k: v}]->(
        r"<?-\s*\[\s*\w*\s*(?::\s*\w+(?:\s*\|\s*:?\s*\w+)*)?\s*(?:\*[\d.]*)?\s*(?:\{[^{}]*\})?"
        r"\s*\]\s*->?\s*\(",
        True,
    ),
    ("labelled node", r"\(\s*\w*:[A-Z]\w*\s*[){]", True),  # (l:Lesson), not `(x: Any)`
    ("unwind", r"\bunwind\s+\S+\s+as\s+\w+", False),
    ("detach delete", r"\bdetach\s+delete\b", False),
    ("property test", rf"\b(?:set|where)\s+\w+\.\w+\s*{_OP}", False),
    (
        "projection",  # RETURN l.title AS t / WITH e, count(l) AS n ORDER BY
        r"\b(?:return|with)\s+(?:distinct\s+)?(?:[\w.]+\s*,\s*)*\w+(?:\.\w+|\([^()]*\))\s+as\s+\w+"
        rf"\s*(?:,|;|$|\b(?:order|limit|skip|{_CLAUSE})\b)",
        False,
    ),
    (
        "parameter",  # l.id IN $ids / LIMIT $n / WHERE $everything OR / {id: $id}
        rf"\w\.\w+\s*{_OP}\s*{_PARAM}|\b(?:limit|skip)\s+{_PARAM}|\bwhere\s+{_PARAM}\s+(?:or|and)\b"
        rf"|\{{\s*\w+\s*:\s*{_PARAM}",
        False,
    ),
    (
        "schema statement",
        r"\bcreate\s+(?:node|rel)\s+table\b|\b(?:create|drop|alter)\s+(?:table|sequence|macro)"
        r"\s+(?:if\s+(?:not\s+)?exists\s+)?\w+\s*(?:\(|;|$|\b(?:add|drop|rename|as|start)\b)",
        False,
    ),
    ("transaction", r"\bbegin\s+(?:read\s+(?:only\s+)?|write\s+)?transaction\b", False),
    # a bare "commit" is English (`git commit`), so a lowercase one needs its semicolon
    ("bare control statement", r"\A\s*(?:COMMIT|ROLLBACK|CHECKPOINT)\s*;?\s*\Z", True),
    ("control statement", r"(?:\A|;)\s*(?:commit|rollback|checkpoint)\s*;", False),
    (
        "engine statement",  # COPY T FROM 'f' / COPY (MATCH ..) TO / LOAD FROM / INSTALL x; ...
        r"\bcopy\s+\w+\s+from\s*['\"$(]|\bcopy\s*\(\s*(?:optional\s+)?match\b"
        r"|\bload\s+(?:with\s+headers\s*\([^)]*\)\s*)?from\s*['\"$]|\bload\s+extension\b"
        r"|\binstall\s+\w+\s*;|\b(?:export|import)\s+database\b"
        r"|\battach\s+['\"][^'\"]*['\"]\s+as\s+\w+",
        False,
    ),
    ("procedure call", r"\bcall\s+\w+\s*\([^()]*\)\s*(?:return\b|yield\b|where\b|;)", False),
]
_RULES = {
    name: re.compile(pattern, 0 if cased else re.IGNORECASE | re.MULTILINE)
    for name, pattern, cased in _RULE_TABLE
}

# Strings that are Cypher on purpose, keyed by (file, the whole string), each with its reason.
_ALLOWED = {
    ("rose/graph/engine.py", "BEGIN TRANSACTION"): (
        "Graph.transaction() is the executor's own transaction control, not a query: a query "
        "file must run alone on a fresh schema, and COMMIT or ROLLBACK alone cannot"
    ),
    ("rose/graph/engine.py", "COMMIT"): "Graph.transaction() ends its transaction (as above)",
    ("rose/graph/engine.py", "ROLLBACK"): "Graph.transaction() undoes a failed one (as above)",
    ("rose/graph/server.py", "BEGIN TRANSACTION READ ONLY"): (
        "a graph server runs each statement of a read-only session in a read-only transaction"
    ),
    ("rose/graph/server.py", "ROLLBACK"): (
        "a graph server ends that transaction, and rolls back one a session left open"
    ),
}
# Whole files allowed to name Cypher keywords: they check a user's statements, run none.
_ALLOWED_FILES = {
    "rose/graph/readonly.py": (
        "tells `rose query` and a graph server's read-only sessions which statements write, "
        "by keyword"
    ),
}

_SCANNED = [ROOT, ROOT.parent / "benchmarks", ROOT.parent / "e2e"]


def _cypher_rule(text: str) -> str | None:
    return next((name for name, rx in _RULES.items() if rx.search(text)), None)


def _literal(node: ast.expr) -> str | None:
    """A string literal's text; an f-string's with each `{...}` read as `x`."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
    return None


def _summands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _summands(node.left) + _summands(node.right)
    return [node]


class _Strings(ast.NodeVisitor):
    """Every string a module writes, `"a" + x + f"b{y}"` read as one string (`"axbx"`).

    Implicitly concatenated literals are one constant already, joined by the parser.
    """

    def __init__(self, tree: ast.AST):
        self.found: list[tuple[int, str]] = []
        self.visit(tree)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self.found.append((node.lineno, node.value))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self.found.append((node.lineno, _literal(node) or ""))
        self._visit_holes(node)

    def _visit_holes(self, node: ast.JoinedStr) -> None:
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                self.visit(v.value)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        parts = _summands(node)
        texts = [_literal(p) for p in parts]
        if all(t is None for t in texts):
            self.generic_visit(node)
            return
        self.found.append((node.lineno, "".join("x" if t is None else t for t in texts)))
        for part, text in zip(parts, texts, strict=True):
            if text is None:
                self.visit(part)
            elif isinstance(part, ast.JoinedStr):
                self._visit_holes(part)


def _cypher_in(source: str) -> list[tuple[int, str]]:
    """(line, string) for every string in `source` that looks like Cypher."""
    return [(n, s) for n, s in _Strings(ast.parse(source)).found if _cypher_rule(s)]


_CYPHER_SAMPLES = [
    'a = "rows come from MATCH (l:Lesson) RETURN l, then prose"',
    'a = "match (l:lesson) where l.id = $id return l.title as title"',
    'a = """Reads\n    OPTIONAL MATCH (l)\n    WHERE l.id IN $ids\n    RETURN l\n"""',
    'a = f"MATCH (n:{label}) RETURN n"',
    'a = f"{prefix} WHERE x.level = {level}"',
    'a = "MATCH (l" ":Lesson) RETURN l"',
    'a = "MATCH (" + var + ":Lesson) RETURN " + var',
    'a = "MATCH (a), (b) " + f"MERGE (a)-[:{rel}]->(b)"',
    'a = "unwind $rows as r create (:Lesson {id: r.id})"',
    'a = "CREATE NODE TABLE T(id STRING, PRIMARY KEY (id))"',
    'a = "begin transaction"',
    'a = "COMMIT"',
    'a = "rollback;"',
    "a = \"copy Lesson from 'rows.csv'\"",
    'a = "CALL show_tables() RETURN *"',
    'a = "match (n) detach delete n"',
    'a = "WITH e, count(l) AS n ORDER BY n"',
]

_ENGLISH = [
    "match the names and return them",
    "Return the lesson as a dict.",
    "Set the value with care; create a new one, then delete the old.",
    "no query named 'x' in rose/queries/",
    "pip install 'rose-memory[ladybug]'",
    "delete the files, then commit",
    "commit",
    "the directory where config.yaml is",
    "Call open_graph() once per unit of work.",
    "rows as dicts keyed by the RETURN names",
    "timeout (default: 5)",
    "with e.g. a tuple of names, or i.e. a list",
    "copy the file to the backup, load from disk",
    "executables first in $PATH, set $HOME",
    "matches (case-insensitively) and creates (if needed) the store",
]


@pytest.mark.parametrize("source", _CYPHER_SAMPLES)
def test_cypher_detector_flags_statements(source: str):
    assert _cypher_in(source)


def test_cypher_detector_reads_split_strings_whole():
    assert [_cypher_rule(s) for s in ("MATCH (l", ":Lesson) RETURN l", "MATCH (")] == [None] * 3


@pytest.mark.parametrize("text", _ENGLISH)
def test_cypher_detector_spares_english(text: str):
    assert _cypher_rule(text) is None


@pytest.mark.parametrize("name", queries.names())
def test_cypher_detector_flags_every_query_file(name: str):
    for statement in queries.statements(name):
        assert _cypher_rule(statement) and _cypher_rule(statement.lower()), statement


def test_no_cypher_is_written_in_python():
    found = {
        (str(p.relative_to(ROOT.parent)), line, text)
        for top in _SCANNED
        for p in top.rglob("*.py")
        for line, text in _cypher_in(p.read_text("utf-8"))
    }
    offenders = sorted(
        f"{p}:{line}: {text!r}"
        for p, line, text in found
        if (p, text) not in _ALLOWED and p not in _ALLOWED_FILES
    )
    stale = sorted(set(_ALLOWED) - {(p, text) for p, _, text in found})
    assert offenders == []
    assert stale == [], "allow-list entries that no longer match anything"


def test_only_the_engine_module_imports_the_engine():
    pattern = re.compile(
        r"^\s*(import|from)\s+(kuzu|ladybug)\b|(import_module|_import)\(\s*[\"'](kuzu|ladybug)\b",
        re.M,
    )
    importers = sorted(
        str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if pattern.search(p.read_text())
    )
    assert importers == ["graph/engine.py"]

"""Which of a user's Cypher statements `rose query` may run without `--write`.

Without it a statement may only read the graph, by an allow-list: it begins with a read
clause (MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN, CALL; EXPLAIN/PROFILE before it), no
other clause's keyword stands bare in it, a CALL names a procedure that reports on the
graph or the engine (`show_tables`, `table_info` ...) or a setting that only changes how
a query runs (`threads`, `timeout` ...). So `LOAD FROM '<file>'` and the table functions
behind it (`read_csv_*`, `read_parquet`, `json_scan`, which CALL also reaches, and which
crash kuzu 0.11.3 when called so), `COPY`, `EXPORT`/`IMPORT DATABASE`, extensions
(`INSTALL`, `LOAD '<path>'` loads any shared library), `ATTACH`/`USE`, `CHECKPOINT`,
graph writes and settings such as `home_directory` are refused before anything runs.
Scalar and aggregate functions compute over values (none in kuzu 0.11.3 reads a file; the
engine refuses a table function where one is expected), so any may be used.

Each statement is looked at by the words the engine would see: case, comments, whitespace,
strings and backquoted names do not hide or fake a keyword. A clause's keyword used as a
name is read as one where the grammar allows nothing else (after `.`, `:` or `$`, before
`:`); elsewhere it goes in backquotes.

The lexing follows kuzu 0.11's grammar (src/antlr4/Cypher.g4): strings with backslash
escapes (ladybug also takes `''` inside single quotes), `/* */` and `//` comments, and a
character no token rule matches stands alone, as the engine's `Unknown` token does. Every
reading (with and without `''`) is checked, so a disagreement about where a string ends
cannot hide a statement from the check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rose.errors import QueryError

_HEX = "[0-9A-Fa-f]"
_ESCAPE = rf"\\(?:[\\'\"BbFfNnRrTt]|[Xx]{_HEX}{{2}}|[Uu]{_HEX}{{4}}(?:{_HEX}{{4}})?)"
_STRING = {
    False: re.compile(rf"'(?:[^'\\]|{_ESCAPE})*'|\"(?:[^\"\\]|{_ESCAPE})*\""),
    True: re.compile(rf"'(?:[^'\\]|{_ESCAPE}|'')*'|\"(?:[^\"\\]|{_ESCAPE})*\""),
}
_COMMENT = re.compile(r"/\*(?:[^*]|\*[^/])*\*/|//[^\r\n]*\r?(?:\n|\Z)")
_NAME = re.compile(r"(?:`[^`]*`)+")
_WORD = re.compile(r"\w+")
# The grammar's WHITESPACE besides what str.isspace() already covers.
_SPACE = "\u180e\u200b"

#: The words a read statement may begin with (after EXPLAIN [LOGICAL] or PROFILE).
_READ_HEADS = ("MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CALL")
_PREFIXES = ("EXPLAIN", "LOGICAL", "PROFILE")
#: The other words that begin a clause or a statement in the engine's grammar, and what
#: that clause does; none may stand bare (as a keyword) in a read statement.
_CLAUSES = {
    "LOAD": "LOAD FROM reads a file",
    "COPY": "COPY ... FROM reads files into the graph",
    "EXPORT": "EXPORT DATABASE writes the whole database to files",
    "IMPORT": "IMPORT DATABASE loads a database from files",
    "INSTALL": "INSTALL downloads and installs an extension",
    "FORCE": "FORCE INSTALL downloads and installs an extension",
    "UNINSTALL": "UNINSTALL removes an extension",
    "UPDATE": "UPDATE reinstalls an extension",
    "ATTACH": "ATTACH attaches another database",
    "DETACH": "DETACH detaches a database or deletes from the graph",
    "USE": "USE switches to an attached database",
    "CHECKPOINT": "CHECKPOINT writes the database file",
    "BEGIN": "BEGIN starts a transaction",
    "COMMIT": "COMMIT ends a transaction",
    "ROLLBACK": "ROLLBACK ends a transaction",
    "CREATE": "CREATE changes the graph",
    "MERGE": "MERGE changes the graph",
    "SET": "SET changes the graph",
    "DELETE": "DELETE changes the graph",
    "REMOVE": "REMOVE changes the graph",
    "DROP": "DROP changes the graph",
    "ALTER": "ALTER changes the graph",
    "COMMENT": "COMMENT ON changes the graph",
}
#: Procedures a read statement may CALL: each reports on the graph, its indexes or the
#: engine, and reads no file.
_PROCEDURES = frozenset({
    "SHOW_TABLES", "TABLE_INFO", "SHOW_CONNECTION", "SHOW_FUNCTIONS", "SHOW_INDEXES",
    "SHOW_SEQUENCES", "SHOW_WARNINGS", "SHOW_PROJECTED_GRAPHS", "PROJECTED_GRAPH_INFO",
    "SHOW_LOADED_EXTENSIONS", "SHOW_OFFICIAL_EXTENSIONS", "SHOW_ATTACHED_DATABASES",
    "DB_VERSION", "CATALOG_VERSION", "STATS_INFO", "QUERY_FTS_INDEX", "QUERY_VECTOR_INDEX",
})  # fmt: skip
#: Settings a read statement may change (`CALL threads = 2`): how a query runs, for this
#: connection only; not where files are read from or whether the database spills.
_SETTINGS = frozenset({
    "THREADS", "TIMEOUT", "PROGRESS_BAR", "VAR_LENGTH_EXTEND_MAX_DEPTH", "ENABLE_SEMI_MASK",
    "DISABLE_MAP_KEY_CHECK", "ENABLE_ZONE_MAP", "WARNING_LIMIT",
    "RECURSIVE_PATTERN_SEMANTIC", "RECURSIVE_PATTERN_FACTOR",
})  # fmt: skip


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "name" (backquoted), "string" or "punct"
    text: str  # a word upper-cased, a name unquoted
    start: int


class WriteRefused(QueryError):
    """A statement is not a read of the graph while `rose query` is read-only."""

    def __init__(self, what: str, number: int | None = None):
        self.what = what
        where = f"statement {number}: " if number else ""
        super().__init__(
            "<console>",
            f"{where}refused: {what}, and `rose query` is read-only; add --write to run it",
        )


def _tokens(text: str, doubled_quotes: bool) -> list[_Token]:
    string = _STRING[doubled_quotes]
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch in _SPACE:
            i += 1
            continue
        if ch == "/" and (m := _COMMENT.match(text, i)):
            i = m.end()
            continue
        if ch in "'\"" and (m := string.match(text, i)):
            out.append(_Token("string", m.group(), i))
        elif ch == "`" and (m := _NAME.match(text, i)):
            out.append(_Token("name", m.group()[1:-1].replace("``", "`"), i))
        elif m := _WORD.match(text, i):
            out.append(_Token("word", m.group().upper(), i))
        else:  # an unterminated string or comment, or an operator: one character on its own
            out.append(_Token("punct", ch, i))
            i += 1
            continue
        i = m.end()
    return out


def _split(tokens: list[_Token]) -> list[list[_Token]]:
    parts: list[list[_Token]] = [[]]
    for tok in tokens:
        if tok.kind == "punct" and tok.text == ";":
            parts.append([])
        else:
            parts[-1].append(tok)
    return [p for p in parts if p]


def _refusal(tokens: list[_Token]) -> str | None:
    """What `tokens` (one statement) does beyond reading the graph, or None."""
    head = next((t for t in tokens if not (t.kind == "word" and t.text in _PREFIXES)), None)
    if head is None:
        return None  # EXPLAIN alone: nothing runs
    if head.kind != "word" or head.text not in _READ_HEADS:
        if head.kind == "word" and head.text in _CLAUSES:
            nxt = _after(tokens, head)
            if head.text == "COPY" and (nxt.kind, nxt.text) == ("punct", "("):
                return "COPY ... TO writes a file"
            if head.text == "LOAD" and not (nxt.kind == "word" and nxt.text in ("FROM", "WITH")):
                return "LOAD loads an extension"
            return _CLAUSES[head.text]
        return (
            f"a statement beginning with {head.text!r} is not a read query (those begin "
            "with MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN or CALL)"
        )
    for i, tok in enumerate(tokens):
        if tok.kind != "word" or _is_name(tokens, i):
            continue
        if tok.text in _CLAUSES:
            return f"{_CLAUSES[tok.text]} (as a name it goes in backquotes)"
        if tok.text == "CALL":
            what = _call_refusal(tokens, i)
            if what:
                return what
    return None


def _after(tokens: list[_Token], tok: _Token) -> _Token:
    i = tokens.index(tok) + 1
    return tokens[i] if i < len(tokens) else _Token("punct", "", -1)


def _is_name(tokens: list[_Token], i: int) -> bool:
    """Whether the word at `i` stands where the grammar takes only a name: a property
    (`l.load`), a label or a type (`:Set`), a parameter (`$use`), a map key, a variable
    before its label or a property (`{load: 1}`, `(load:Lesson)`, `load.id`)."""
    before = tokens[i - 1] if i else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    return (before is not None and before.kind == "punct" and before.text in ".:$") or (
        after is not None and after.kind == "punct" and after.text in ":."
    )


def _call_refusal(tokens: list[_Token], i: int) -> str | None:
    """Why the CALL at `i` is not one a read statement may make (None: it may)."""
    name = tokens[i + 1] if i + 1 < len(tokens) else None
    nxt = tokens[i + 2] if i + 2 < len(tokens) else None
    if name is None or name.kind not in ("word", "name") or nxt is None:
        return "CALL names no procedure"
    called = name.text.upper()
    if (nxt.kind, nxt.text) == ("punct", "(") and called in _PROCEDURES:
        return None
    if (nxt.kind, nxt.text) == ("punct", "=") and called in _SETTINGS:
        return None
    if (nxt.kind, nxt.text) == ("punct", "="):
        return f"CALL {called} = ... changes a setting a read query may not"
    return (
        f"CALL {called} is not one of the procedures a read query may call "
        "(SHOW_TABLES, TABLE_INFO, SHOW_FUNCTIONS ...; it may read files or change the graph)"
    )


def statements(text: str, *, engine: str = "kuzu", write: bool = False) -> list[str]:
    """`text` split into its statements as the engine splits it, empty ones dropped.

    Unless `write`, first raises WriteRefused if any statement, under either reading of
    its strings, is not a read of the graph: nothing has run by then.
    """
    if not write:
        readings = [_split(_tokens(text, doubled)) for doubled in (False, True)]
        several = any(len(parts) > 1 for parts in readings)
        for parts in readings:
            for number, part in enumerate(parts, 1):
                what = _refusal(part)
                if what:
                    raise WriteRefused(what, number if several else None)
    doubled = engine == "ladybug"
    pieces, start = [], 0
    for tok in _tokens(text, doubled):
        if tok.kind == "punct" and tok.text == ";":
            pieces.append(text[start : tok.start])
            start = tok.start + 1
    pieces.append(text[start:])
    return [p.strip() for p in pieces if _tokens(p, doubled)]


def graph_write_refused(number: int | None = None) -> WriteRefused:
    """The refusal for a statement the engine's read-only open turned down."""
    return WriteRefused("this statement changes the graph", number)


def is_read_only_error(message: str) -> bool:
    """Whether the engine refused a statement because the database is open read-only.

    A parser error quotes the statement, which may say anything, so it never counts.
    """
    low = message.lower()
    if low.startswith("parser exception"):
        return False
    return (
        "in a read-only database" in low
        or "for a read only database" in low
        or "inside a read-only transaction" in low  # a graph server's read-only session
    )


_TX_WORDS = ("BEGIN", "COMMIT", "ROLLBACK")


def session_refusal(statement: str, engine: str) -> str | None:
    """Why a graph server's read-only session may not run `statement` (None: it may). Each
    runs in a read-only transaction of its own, so one statement, not a transaction's
    control (`rose.graph.server`)."""
    try:
        parts = statements(statement, engine=engine, write=False)
    except QueryError as exc:
        return exc.message
    if len(parts) != 1 or parts[0].lstrip().split(None, 1)[0].upper() in _TX_WORDS:
        return "Cannot run this statement in a read-only database session"
    return None

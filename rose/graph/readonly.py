"""Which of a user's Cypher statements `rose query` may run without `--write`.

The engine's read-only open already refuses changes to the graph, but not statements that
write elsewhere: `COPY (...) TO 'f'` and `EXPORT DATABASE` write files (unredacted),
`INSTALL`/`LOAD` fetch and load extensions (a `LOAD '<path>'` loads any shared library),
`ATTACH`/`DETACH`/`USE` reach other databases, and `CHECKPOINT` writes the database file. So
each statement is looked at first, by the words the engine would see: case, comments,
whitespace, strings and backquoted names do not hide or fake a keyword.

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

#: Leading keyword -> what the statement does outside the graph (or to the database file).
_STATEMENTS = {
    "COPY": "COPY ... FROM loads files into the graph",
    "EXPORT": "EXPORT DATABASE writes the whole database to files",
    "IMPORT": "IMPORT DATABASE loads a database from files",
    "INSTALL": "INSTALL downloads and installs an extension",
    "FORCE": "FORCE INSTALL downloads and installs an extension",
    "UNINSTALL": "UNINSTALL removes an extension",
    "UPDATE": "UPDATE reinstalls an extension",
    "LOAD": "LOAD loads an extension",
    "ATTACH": "ATTACH attaches another database",
    "DETACH": "DETACH detaches a database",
    "USE": "USE switches to an attached database",
    "CHECKPOINT": "CHECKPOINT writes the database file",
}
# `LOAD FROM`/`LOAD WITH HEADERS` read a file as rows: a reading clause, not an extension.
_LOAD_READS = ("FROM", "WITH")
# Procedures that build or drop indexes change the database; `_`-names are internal.
_CALL_WRITES = ("CREATE_", "DROP_", "_")


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "name" (backquoted), "string" or "punct"
    text: str  # a word upper-cased, a name unquoted
    start: int


class WriteRefused(QueryError):
    """A statement would write outside the graph (or change it) while `rose query` is read-only."""

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
    rest = tokens
    # EXPLAIN [LOGICAL] / PROFILE prefix a statement; PROFILE runs it. Stray punctuation
    # before the first word cannot make a valid statement, so it is skipped too.
    while rest and (rest[0].kind == "punct" or rest[0].text in ("EXPLAIN", "LOGICAL", "PROFILE")):
        rest = rest[1:]
    if rest and rest[0].kind == "word" and rest[0].text in _STATEMENTS:
        first = rest[0].text
        nxt = rest[1] if len(rest) > 1 else _Token("punct", "", -1)
        if first == "COPY" and (nxt.kind, nxt.text) == ("punct", "("):
            return "COPY ... TO writes a file"
        if not (first == "LOAD" and nxt.kind == "word" and nxt.text in _LOAD_READS):
            return _STATEMENTS[first]
    for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if a.kind == "word" and a.text == "CALL" and b.kind in ("word", "name"):
            name = b.text.upper()
            if c.kind == "punct" and c.text == "(" and name.startswith(_CALL_WRITES):
                return f"CALL {name} changes the database"
    return None


def statements(text: str, *, engine: str = "kuzu", write: bool = False) -> list[str]:
    """`text` split into its statements as the engine splits it, empty ones dropped.

    Unless `write`, first raises WriteRefused if any statement, under either reading of
    its strings, would write outside the graph: nothing has run by then.
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

"""Cypher statements, one `.cypher` file each in `rose/queries/`, loaded by name."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load(name: str) -> str:
    """The statement text of `rose/queries/<name>.cypher`, without `//` comment lines."""
    try:
        text = resources.files("rose.queries").joinpath(f"{name}.cypher").read_text("utf-8")
    except FileNotFoundError:
        raise KeyError(f"no query named {name!r} in rose/queries/") from None
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("//")]
    return "\n".join(lines).strip()


def statements(name: str) -> list[str]:
    """A multi-statement file (the schema) split into its statements."""
    return [s.strip() for s in load(name).split(";") if s.strip()]


def names() -> list[str]:
    return sorted(
        p.name.removesuffix(".cypher")
        for p in resources.files("rose.queries").iterdir()
        if p.name.endswith(".cypher")
    )


def schema_text() -> str:
    """The graph's tables as `rose query` users read them: each node table with its columns
    (the key first), each relationship with its ends; from the schema file itself."""
    import re
    import textwrap

    nodes, rels = [], []
    for stmt in statements("schema"):
        m = re.match(r"CREATE (NODE|REL) TABLE IF NOT EXISTS (\w+)\((.*)\)$", stmt, re.S)
        if m is None or m[2] == "Meta":
            continue
        parts = [p.strip() for p in m[3].split(",")]
        if m[1] == "NODE":
            cols = [p.split()[0] + (" (key)" if "PRIMARY KEY" in p else "") for p in parts]
            line = f"  {m[2]}: {', '.join(cols)}"
            nodes.append(textwrap.fill(line, 100, subsequent_indent="      "))
        else:
            ends = parts[0].split()  # FROM A TO B
            extra = f" ({', '.join(p.split()[0] for p in parts[1:])})" if parts[1:] else ""
            rels.append(f"  {m[2]}: {ends[1]} → {ends[3]}{extra}")
    return "\n".join(["Node tables:", *nodes, "Relationships:", *rels])

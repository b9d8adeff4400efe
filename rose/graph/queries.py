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

"""Plain word search over every lesson of every scope, for people (`rose search`, the MCP
`search` tool): what a person types to find a lesson they half remember.

It is never a step of recall: recall asks the model which lessons bear on a prompt, and no
word count stands in for that judgement. Here a word ranking is the point: a BM25 score
over the query's words, with a hit in the title weighing more than one in the gist, and one
in the gist more than one in the body (BM25F: the fields' weighted counts are pooled before
they saturate). A query word matches a word of a lesson that is it or begins with it
(`port` finds `ports`). Lessons recall may serve come first, then the rest (superseded,
archived, held for review ...), each with its status said.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from rose.files import shortid
from rose.models import SERVABLE
from rose.store.facade import Store

#: How much a hit weighs in each field.
WEIGHTS = {"title": 3.0, "gist": 2.0, "body": 1.0}
#: BM25's saturation and length normalisation.
K1, B = 1.2, 0.75
#: The shortest query word matched as a prefix; a shorter one must match a whole word.
PREFIX_MIN = 3
#: Characters of context a snippet keeps before and after the first match.
BEFORE, AFTER = 40, 80

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Hit:
    """One lesson found: where it lives, how well it matched, and its words around the
    first match."""

    id: str
    short: str
    scope: str
    family: str
    title: str
    level: int
    status: str
    score: float
    snippet: str

    @property
    def held(self) -> bool:
        """Held for the user's review: no agent may read its text (`rose.loop.selection.pull`)."""
        return self.status == "quarantined"

    def line(self) -> str:
        """`short-id  scope  family  title — snippet`, its status said when not active."""
        mark = "" if self.status == "active" else f" [{_STATUS.get(self.status, self.status)}]"
        tail = f" — {self.snippet}" if self.snippet else ""
        return f"{self.short}  {self.scope}  {self.family}  {self.title}{mark}{tail}"

    def as_json(self) -> dict[str, Any]:
        return asdict(self) | {"score": round(self.score, 4)}


_STATUS = {"quarantined": "held for review"}


def words(text: str) -> list[str]:
    """`text`'s words, lowercased."""
    return [w.lower() for w in _WORD.findall(text)]


def search(store: Store, query: str, *, limit: int = 20, held: bool = True) -> list[Hit]:
    """The lessons of every scope that hold a word of `query`, best first (servable ones
    before the rest), at most `limit`. `held` False leaves out lessons held for review."""
    terms = list(dict.fromkeys(words(query)))
    if not terms:
        return []
    rows = [r for r in store.read("lessons_text_all") if held or not _held(r)]
    return rank(rows, terms, limit=limit)


def rank(rows: list[dict[str, Any]], terms: list[str], *, limit: int) -> list[Hit]:
    """`rows` (`lessons_text_all`) that hold any of `terms`, scored and cut to `limit`."""
    counts = [{f: Counter(words(str(r.get(f) or ""))) for f in WEIGHTS} for r in rows]
    lengths = [sum(WEIGHTS[f] * sum(c[f].values()) for f in WEIGHTS) for c in counts]
    mean = (sum(lengths) / len(lengths)) if lengths else 0.0
    tfs = [{t: sum(WEIGHTS[f] * _tf(c[f], t) for f in WEIGHTS) for t in terms} for c in counts]
    n = len(rows)
    idf = {t: _idf(n, sum(1 for tf in tfs if tf[t] > 0)) for t in terms}
    shown = shortid.shortest(str(r["id"]) for r in rows)
    hits = []
    for row, tf, length in zip(rows, tfs, lengths, strict=True):
        norm = K1 * (1 - B + B * length / mean) if mean else K1
        score = sum(idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm) for t in terms if tf[t] > 0)
        if score > 0:
            hits.append(_hit(row, score, shown[str(row["id"])], terms))
    hits.sort(key=lambda h: (h.status not in SERVABLE, -h.score, h.id))
    return hits[:limit]


def _tf(counts: Counter[str], term: str) -> int:
    if len(term) < PREFIX_MIN:
        return counts.get(term, 0)
    return sum(n for w, n in counts.items() if w.startswith(term))


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _held(row: dict[str, Any]) -> bool:
    """As `rose.loop.selection.pull.show_text` tells a lesson no agent may read."""
    status = str(row.get("status") or "")
    return status == "quarantined" or (bool(row.get("held")) and status not in SERVABLE)


def _hit(row: dict[str, Any], score: float, short: str, terms: list[str]) -> Hit:
    return Hit(
        id=str(row["id"]),
        short=short,
        scope=str(row.get("scope") or ""),
        family=str(row.get("family") or ""),
        title=_flat(str(row.get("title") or "")),
        level=int(row.get("level") or 0),
        status=str(row.get("status") or ""),
        score=score,
        snippet=snippet(str(row.get("body") or "") or str(row.get("gist") or ""), terms),
    )


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def snippet(text: str, terms: list[str]) -> str:
    """`text` on one line around the first word a term matches (its start when none does),
    cut at word boundaries, with `…` where it was cut."""
    flat = _flat(text)
    at = _first(flat, terms)
    start = max(0, at - BEFORE)
    end = min(len(flat), at + AFTER)
    if start > 0:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < at else start
    if end < len(flat):
        space = flat.rfind(" ", at, end)
        end = space if space > at else end
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")


def _first(text: str, terms: list[str]) -> int:
    for m in _WORD.finditer(text):
        word = m.group().lower()
        if any(word == t or (len(t) >= PREFIX_MIN and word.startswith(t)) for t in terms):
            return m.start()
    return 0


def report(hits: list[Hit], query: str) -> str:
    """The hits one line each, or one line saying none was found."""
    if not hits:
        return f"no lesson holds any word of {query.strip()!r}"
    return "\n".join(h.line() for h in hits)

"""What the simulated model may know of the world: the words, and nothing the words hide.

Every handler of the simulated model (`choose`, `learn`, `replay`, `compress`) is given a
`Reader`, never the `World`: it reads topics by name, facts by the words that state them
(their markers), and writes lessons in the world's prose. What a prompt cannot show is
not here: which principles the agent already knows, which variant of a disputed detail is
the stale one, which scope a topic truly has, which tasks exist and what they need.
`tests/test_sim_blind.py` checks the handler modules import the world through this module
alone, and that two worlds differing only in what is hidden get the same answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

from rose.sim.markers import FACT, mark
from rose.sim.world import CLAIM_KIND, Draft, FactKind

if TYPE_CHECKING:
    from rose.sim.world import World

__all__ = ["CLAIM_KIND", "Reader", "Said"]


@dataclass(frozen=True)
class Said:
    """A fact as its words say it: what a reader of the sentence knows."""

    id: str
    base: str
    topic: str
    kind: FactKind
    subject: str
    text: str
    terse: str
    mentions: tuple[str, ...]
    value: str
    phrase: str
    wrong: str
    homonym: str

    @property
    def marker(self) -> str:
        return mark(FACT, self.id)


class Reader:
    """The world as a model reading its prose knows it."""

    def __init__(self, world: World):
        self._world = world

    @cached_property
    def facts(self) -> Mapping[str, Said]:
        """Every fact by its marker, as its words state it."""
        said = {
            f.id: Said(
                f.id,
                f.base,
                f.topic,
                f.kind,
                f.subject,
                f.text,
                f.terse,
                f.mentions,
                f.value,
                f.phrase,
                f.wrong,
                f.homonym,
            )  # fmt: skip
            for f in self._world.facts.values()
        }
        return MappingProxyType(said)

    @property
    def topics(self) -> frozenset[str]:
        """The names of the project's areas: words a reader recognises."""
        return frozenset(self._world.topics)

    @property
    def homonyms(self) -> dict[str, str]:
        """Each topic whose facts' wording borrows another's name: in the wording itself."""
        return self._world.homonyms

    def facts_in(self, text: str) -> list[str]:
        return self._world.facts_in(text)

    def topics_in(self, text: str) -> list[str]:
        return self._world.topics_in(text)

    def outside_in(self, text: str) -> list[str]:
        return self._world.outside_in(text)

    def kinds_in(self, text: str) -> set[str]:
        return self._world.kinds_in(text)

    def subjects_in(self, text: str) -> set[str]:
        return self._world.subjects_in(text)

    def stated(self, text: str) -> list[str]:
        return self._world.stated(text)

    def conflicting(self, a: str, b: str) -> bool:
        """Whether two facts say different things of the same subject (their words do)."""
        return self._world.conflicting(a, b)

    def gist(self, fact_ids: list[str] | tuple[str, ...], *, every: bool = False) -> str:
        return self._world.gist(fact_ids, every=every)

    def lesson(
        self, fact_ids: list[str] | tuple[str, ...], *, verbose: bool = True, salt: int = 0
    ) -> Draft:
        """A lesson written from facts, in the world's prose."""
        return self._world.lesson(fact_ids, verbose=verbose, salt=salt)

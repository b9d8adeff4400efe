"""Deterministic draws for the simulated world: a pure function of the seed, the call,
the prompt and what is being decided, so an answer never depends on the order calls
were made in, and the same prompt always gets the same answer.
"""

from __future__ import annotations

import hashlib


class Draws:
    def __init__(
        self,
        seed: int,
        call: str,
        prompt: str,
        *,
        noise: float = 0.0,
        under_report: float = 0.0,
        over_cut: float = 0.0,
    ):
        self.base = f"{seed}|{call}|{hashlib.sha256(prompt.encode('utf-8')).hexdigest()}"
        self.noise = noise
        self.under_report = under_report
        self.over_cut = over_cut

    def unit(self, *parts: object) -> float:
        """A number in [0, 1) fixed by `parts`."""
        key = "|".join([self.base, *map(str, parts)]).encode("utf-8")
        return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64

    def flip(self, *parts: object) -> bool:
        """Whether the judgement named by `parts` comes out wrong (a `noise` fraction do)."""
        return self.noise > 0 and self.unit("noise", *parts) < self.noise

    def omit(self, *parts: object) -> bool:
        """Whether the dropped claim named by `parts` goes undeclared (`under_report`)."""
        return self.under_report > 0 and self.unit("omit", *parts) < self.under_report

    def cut(self, *parts: object) -> bool:
        """Whether the compressor also cuts what `parts` names, past its budget (`over_cut`)."""
        return self.over_cut > 0 and self.unit("over", *parts) < self.over_cut

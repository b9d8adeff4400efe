"""How a function's CPU time grows with its input: a linear-time check, no wall-clock bound."""

from __future__ import annotations

import time
from collections.abc import Callable

#: Inputs this many times longer: a linear function takes about this many times longer, a
#: quadratic one its square.
GROWTH = 10
#: The bound between the two (GROWTH 10: linear about 10, quadratic 100).
LINEAR_BOUND = 30


def growth(fn: Callable[[str], object], unit: str, repeats: int, tries: int = 3) -> float:
    """How many times the CPU time `fn` takes on `unit * repeats * GROWTH` is the time it takes
    on `unit * repeats`, the best of `tries` runs of each. CPU time of this thread, not wall
    time: other processes on a busy machine do not count (measured 9.3-10.8 for redact at
    GROWTH 10 on a loaded machine; a quadratic regex gave 99)."""

    def best(text: str) -> float:
        runs = []
        for _ in range(tries):
            started = time.thread_time()
            fn(text)
            runs.append(time.thread_time() - started)
        return min(runs)

    fn(unit * repeats)  # compiled, cached: the first run pays what later ones do not
    return best(unit * repeats * GROWTH) / best(unit * repeats)

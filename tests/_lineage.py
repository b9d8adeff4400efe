"""A small compressed lineage built by hand, and units of work recorded the way the hooks do,
for the repair, demotion and tree tests.

    L0 (superseded, verbose)  <-  L1 (superseded, dropped FIRST and SECOND, held by L0)
                              <-  L2 (the apex, dropped THIRD, held by L1)

`two_levels` stops at L1 (then the apex). `unit` appends one unit of work to a session's log
(what was served, the patches its block carried, who used it, the outcome, any rescue) and
`absorb` writes the session's episodes and runs what the learning jobs run on them.
"""

from __future__ import annotations

import itertools

from rose.files import sessions
from rose.jobs import learning
from rose.models import Claim, Episode, Node, claim_id
from rose.store.facade import Store

L0, L1, L2 = "n_orig0001", "n_comp0001", "n_comp0002"
FIRST = "Retry at most three times with 100 ms, 400 ms and 1.6 s between tries."
SECOND = "Only idempotent requests are retried; a POST never is."
THIRD = "Jitter each wait by a quarter either way."
VERBOSE = f"Retrying remote calls. {FIRST} {SECOND} {THIRD} We learnt this the hard way."
#: Each unit opens a second after the one before, so "newest first" never ties.
_CLOCK = itertools.count(1)


def _l0_l1() -> tuple[Node, Node]:
    l0 = Node(id=L0, family="retry", title="Retries", body=VERBOSE, status="superseded",
              parents=[L1])  # fmt: skip
    l1 = Node(id=L1, family="retry", title="Retries", level=1, origin="compression",
              body=f"Retry remote calls with backoff. {THIRD}", derived_from=[L0],
              dropped=[Claim(claim=FIRST, kind="parameter", holder=L0),
                       Claim(claim=SECOND, kind="caveat", holder=L0)])  # fmt: skip
    return l0, l1


def two_levels(store: Store) -> None:
    """L0 and its compression L1, the apex, which dropped FIRST and SECOND (held by L0)."""
    store.write(list(_l0_l1()))


def three_levels(store: Store) -> None:
    """`two_levels` compressed once more: L2, the apex, dropped THIRD (held by L1)."""
    l0, l1 = _l0_l1()
    l1.status, l1.parents = "superseded", [L2]
    l2 = Node(id=L2, family="retry", title="Retries", level=2, origin="compression",
              body="Retry remote calls with backoff.", derived_from=[L1],
              dropped=[Claim(claim=THIRD, kind="parameter", holder=L1)])  # fmt: skip
    store.write([l0, l1, l2])


def patch(store: Store, lesson: str, text: str) -> str:
    """Attach `text` to `lesson` as a patch (as descent does after a failure); its id."""
    node = store.get(lesson)
    node.patches = [*node.patches, text]
    store.save(node)
    return claim_id(lesson, text)


def unit(
    store: Store,
    sid: str,
    turn: int,
    *,
    lesson: str,
    outcome: str,
    patches: tuple[str, ...] = (),
    used: bool = True,
    rescued: str = "",
) -> None:
    """One unit of work in session `sid`'s log: `lesson` served with `patches` (their ids)
    in its block, used or not, the outcome, and the claim id that `rescued` it, if any."""
    root = store.primary.root
    at = next(_CLOCK)
    when = f"2026-01-01T{at // 3600:02d}:{at // 60 % 60:02d}:{at % 60:02d}.000+00:00"
    more = {"patched": {lesson: list(patches)}} if patches else {}
    sessions.append(root, sid, "prompt", turn=turn, prompt=f"retry the client ({sid}:{turn})",
                    served=[lesson], time=when, **more)  # fmt: skip
    verdict = {"used": [lesson], "unused": []} if used else {"used": [], "unused": [lesson]}
    sessions.append(root, sid, "used", turn=turn, **verdict)
    if rescued:
        sessions.append(root, sid, "rescue", turn=turn, lesson=lesson, claim=rescued)
    sessions.append(root, sid, "outcome", turn=turn, outcome=outcome)


def absorb(store: Store, sid: str) -> list[Episode]:
    """Write the session's episodes and act on them as the learning jobs do (`heal`)."""
    written = store.absorb(sid, final=True)
    learning.heal(store, written)
    return written

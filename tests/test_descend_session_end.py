"""A session that failed with a compressed lesson served leaves a trial patch on it, and the
next success with that patch served is a rescue that raises the claim's prior.

Locks in: the SessionEnd job judges the unit (`assess`, simulated world, on the digest of a
real Claude Code transcript) a failure, ranks the compressed lesson's dropped claims from
the digest's words, registers those likely to explain it (or the best) as patches on the
lesson (written through the Store, so the recall view serves it), logs a `descend` event,
and records the expansions in the unit's episode. A later unit that used the lesson, had
the patches served and succeeded credits them (`Episode.patch_rescues`) and each claim's
Laplace prior on the lesson rises from 1/3 (tried once, no rescue) to 2/3.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose import config
from rose.events import read_events
from rose.files import sessions
from rose.jobs import learning
from rose.jobs.queue import JobContext
from rose.loop.abstraction import descend
from rose.models import claim_id
from rose.sim import Agent
from rose.sim.hosts.transcript import claude_code
from rose.sim.markers import TASK, drop
from rose.store.facade import Store
from tests._descent import level1

pytestmark = pytest.mark.graph

SID = "sess-descend-1"
SEED = 1


def test_a_failed_session_leaves_a_trial_patch_that_a_success_credits(store: Store, project: Path):
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", f"seed={SEED}")
    store = Store.open(project)
    fam = level1(store, SEED)
    lesson = store.get(fam.apex)
    block = descend_block(fam)
    session = Agent(fam.world, seed=SEED).session(fam.task, block, steer=False)
    assert not session.outcome.ok
    path = project / "t.jsonl"
    path.write_text(claude_code(session, session_id=SID, cwd=str(project)))
    root = store.primary.root
    prompt = drop(fam.task.prompt, TASK).strip()
    sessions.append(root, SID, "prompt", turn=1, prompt=prompt, served=[lesson.id])
    job = JobContext(store.primary, {"attempt": 1}, {"session_id": SID,
                     "transcript_path": str(path), "reason": "exit"})  # fmt: skip
    learning.session_end(job)

    (ep,) = [e for e in (store.get_episode(i) for i in _episodes(store)) if e.turn == 1]
    assert ep.outcome in ("failure", "partial")
    patched = store.get(fam.apex).patches  # the claims the judge found likely, or the best
    assert patched and set(patched) <= {c.claim for c in lesson.dropped}
    cids = [claim_id(fam.apex, p) for p in patched]
    assert [(x.lesson, x.claim) for x in ep.expansions] == [(fam.apex, c) for c in cids]
    (event,) = read_events(store.primary.events, kind="descend")
    assert (event["lesson"], event["claims"], event["strategy"]) == (fam.apex, cids, "delta-patch")
    assert event["judged"] is True
    view = next(i for i in store.view()["lessons"] if i["id"] == fam.apex)
    assert view["patch_ids"] == cids and all(p in view["full"] for p in patched)
    pairs = list(zip(cids, patched, strict=True))
    assert set(descend.priors(store, fam.apex, pairs).values()) == {(1 / 3, 1, 0)}

    # The next serving carries the patches, the lesson is used and the work succeeds.
    sessions.append(root, "s2", "prompt", turn=1, prompt=prompt, served=[fam.apex],
                    patched={fam.apex: cids})  # fmt: skip
    sessions.append(root, "s2", "used", turn=1, used=[fam.apex], unused=[])
    sessions.append(root, "s2", "outcome", turn=1, outcome="success")
    (later,) = store.absorb("s2", final=True)
    assert [(x.lesson, x.claim) for x in later.patch_rescues] == [(fam.apex, c) for c in cids]
    assert set(descend.priors(store, fam.apex, pairs).values()) == {(2 / 3, 1, 1)}
    store.reindex()
    assert set(descend.priors(store, fam.apex, pairs).values()) == {(2 / 3, 1, 1)}


def descend_block(fam) -> str:
    from tests._descent import Attempt, context

    return context(fam.nodes, Attempt(serve=(fam.apex,)))


def _episodes(store: Store) -> list[str]:
    return [p.stem for p in store.primary.episodes.glob("*.json")]

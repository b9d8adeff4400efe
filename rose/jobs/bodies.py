"""Every job body the queue runs, one function each, taking the job's context.

The queue names these functions in its registry (`queue.KINDS`), so a kind and its body
are tied by reference, checked by the type checker and followed by a rename. The queue is
imported by the hooks, so this module loads nothing beyond the standard library: each
body imports its stage when it runs, in the runner's process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rose.jobs.queue import JobContext


def session_end(job: JobContext) -> None:
    """After a session: judge its units, reflect, reconcile, absorb; queue the follow-ups."""
    from rose.jobs import learning

    learning.session_end(job)


def absorb(job: JobContext) -> None:
    """Fold a session's units into episodes."""
    from rose.jobs import learning

    learning.absorb(job)


def reflect(job: JobContext) -> None:
    """Reflect on a stretch of a session the Stop hook judged worth it."""
    from rose.jobs import learning

    learning.reflect(job)


def reflect_fork(job: JobContext) -> None:
    """Reflect through a fork of the session's own agent."""
    from rose.jobs import learning

    learning.reflect_fork(job)


def restore(job: JobContext) -> None:
    """Descent mid-session: restore what a failure says a compressed lesson dropped."""
    from rose.jobs import learning

    learning.restore(job)


def reconcile(job: JobContext) -> None:
    """Reconcile every lesson stored while the judge was unavailable or the graph busy,
    after taking in what a `rose add` that died left. Fails (kept in `rose jobs` with the
    reason) while any is left, so the next lesson stored queues it again: a job done with
    lessons still waiting would keep its key from running again for `jobs.keep_days`."""
    from rose.errors import RoseError
    from rose.loop.reflection import consolidate

    store = job.store()
    consolidate.take_in(store)
    consolidate.reconcile_pending(store)
    left = [r["id"] for r in store.read("unreconciled")]  # raises when it cannot tell
    if left:
        raise RoseError(
            f"{len(left)} lesson(s) still not reconciled ({', '.join(left[:5])}): the judge's "
            "answers did not fit; the next lesson stored queues this job again"
        )


def compress(job: JobContext) -> None:
    """Compress what is due (queued after a session that succeeded); each attempt is a
    `compress` event."""
    from rose.judge.calls import for_store
    from rose.loop.abstraction import compress as compression

    store = job.store()
    compression.compress_due(store, judge=for_store(store))


def merge(job: JobContext) -> None:
    """Merge what is due (queued after a session that succeeded); each attempt is a `merge`
    event."""
    from rose.judge.calls import for_store
    from rose.loop.abstraction import merge as merging

    store = job.store()
    merging.merge_due(store, judge=for_store(store))


def counterfactual(job: JobContext) -> None:
    """Check a sample of attributions within the budget (queued after a session's attributed
    episodes); each check is an event."""
    from rose.judge.calls import for_store
    from rose.loop.reflection import counterfactual as checks

    store = job.store()
    checks.counterfactual(store, judge=for_store(store))


def relevance_late(job: JobContext) -> None:
    """Ask a prompt's timed-out relevance questions again at a background call's deadline."""
    from rose.loop.selection import late

    late.answer_late(job.store(), job.payload)

"""What is observed is recorded once, as episodes, and the graph folds it into each lesson.

Locks in: counters kept in lesson files lost evidence under concurrent writers (four
processes adding 10 successes each left 27, not 40) and made every use a rewrite of a
committed file. Now every outcome is a new episode file, the graph folds the episodes into
each lesson's stats, regression set, load-bearing spans and claim rescue counts at sync,
a reindex recomputes the same figures from the files, a lesson file carries no counters,
and claim ids survive edits of other claims.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rose.files.nodefile import dump_node
from rose.models import Claim, ClaimRef, Episode, Node, Span, claim_id
from rose.store.facade import Store

pytestmark = pytest.mark.graph

_RECORDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from rose.models import Episode
    from rose.store.facade import Store

    lesson, worker = sys.argv[1], int(sys.argv[2])
    store = Store.open(Path.cwd())
    for i in range(25):
        outcome = "failure" if (worker + i) % 5 == 0 else "success"
        store.save_episode(Episode(prompt=f"w{worker} #{i}", outcome=outcome, used=[lesson]))
    """
)


def _stats(store: Store, lesson_id: str):
    return store.get(lesson_id).stats


def record_concurrently(
    project: Path, lesson_id: str, recorder: str = _RECORDER, *, workers: int = 8
) -> int:
    """`workers` processes each recording 25 outcomes for `lesson_id`; how many failed."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", recorder, lesson_id, str(w)],
            cwd=project,
            env=os.environ.copy(),
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    errors = [p.communicate(timeout=240)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * workers, errors
    return sum(1 for w in range(workers) for i in range(25) if (w + i) % 5 == 0)


def test_eight_processes_recording_25_outcomes_each_give_exactly_200(store: Store, project: Path):
    lesson = store.add("Retry idempotent calls with backoff.", family="retry")
    failures = record_concurrently(project, lesson.id)
    stats = _stats(store, lesson.id)
    assert (stats.attempts, stats.successes, stats.failures) == (200, 200 - failures, failures)
    assert len(list(store.primary.episodes.glob("*.json"))) == 200
    store.reindex()
    again = _stats(store, lesson.id)
    assert (again.attempts, again.successes, again.failures) == (200, 200 - failures, failures)
    assert len(store.get(lesson.id).covers_tasks) == 200 - failures


def test_a_use_never_rewrites_the_lesson_file(store: Store):
    lesson = store.add("Use port 5433 for the test database.", family="db")
    path = store.primary.node_path("db", lesson.id)
    before = path.read_bytes()
    store.save_episode(Episode(outcome="success", served=[lesson.id], used=[lesson.id]))
    assert path.read_bytes() == before
    assert b"successes" not in before and b"stats" not in before
    assert _stats(store, lesson.id).successes == 1


def test_served_but_unused_scores_neither(store: Store):
    lesson = store.add("Docs live in docs/.", family="docs")
    store.save_episode(Episode(outcome="failure", served=[lesson.id], used=[]))
    stats = _stats(store, lesson.id)
    assert (stats.attempts, stats.successes, stats.failures) == (0, 0, 0)


def test_an_episode_is_written_once(store: Store):
    lesson = store.add("Run ruff before committing.", family="lint")
    ep = Episode(outcome="success", used=[lesson.id])
    assert store.save_episodes([ep, ep]) == [ep]
    assert store.save_episodes([ep]) == []
    assert _stats(store, lesson.id).successes == 1


def test_counters_in_an_older_lesson_file_are_read_past(store: Store):
    node = Node(title="Old lesson", body="An older file with counters.", family="old")
    path = store.primary.node_path("old", node.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    legacy = dump_node(node).replace(
        "level: 0\n",
        "level: 0\ncovers_tasks: [e_abcdef12]\nload_bearing: [x]\n"
        "stats: {attempts: 9, successes: 7, failures: 2}\n",
    )
    path.write_text(legacy, encoding="utf-8")
    got = store.get(node.id)
    assert (got.stats.successes, got.covers_tasks, got.load_bearing) == (0, [], [])
    store.save(got)
    assert "stats" not in path.read_text(encoding="utf-8")


def test_spans_expansions_and_rescues_are_folded(store: Store):
    base = store.save(Node(title="Base", body="Timeout is 30s. Retry thrice.", family="net"))
    claims = [
        Claim(claim="Timeout is 30s", holder=base.id),
        Claim(claim="Retry thrice", holder=base.id),
    ]
    top = store.save(
        Node(title="Top", body="Retry briefly.", level=1, derived_from=[base.id], dropped=claims)
    )
    retry = claim_id(top.id, "Retry thrice")
    ref = ClaimRef(lesson=top.id, claim=retry)
    store.save_episode(
        Episode(
            outcome="success",
            used=[top.id],
            load_bearing=[Span(lesson=top.id, span="Retry briefly.")],
            expansions=[ref],
            rescues=[ref],
        )
    )
    got_top, got_base = store.get(top.id), store.get(base.id)
    assert got_top.load_bearing == ["Retry briefly."]
    assert (got_top.stats.expansions, got_base.stats.rescues) == (1, 1)
    rescues = {r["id"]: r["rescues"] for r in store.read("claims_of", ids=[top.id])}
    assert rescues == {retry: 1, claim_id(top.id, "Timeout is 30s"): 0}

    # Folding a claim back into the body keeps the other claim's id, and its record.
    got_top.dropped = [c for c in got_top.dropped if c.claim == "Retry thrice"]
    got_top.body = "Retry briefly. Timeout is 30s."
    store.save(got_top)
    assert {r["id"]: r["rescues"] for r in store.read("claims_of", ids=[top.id])} == {retry: 1}
    assert store.get(base.id).stats.rescues == 1
    store.reindex()
    assert store.get(base.id).stats.rescues == 1
    assert store.get(top.id).load_bearing == ["Retry briefly."]


def test_removing_an_episode_file_takes_its_evidence_with_it(store: Store):
    lesson = store.add("Pin the Node version.", family="node")
    ep = store.save_episode(Episode(outcome="success", used=[lesson.id]))
    assert _stats(store, lesson.id).successes == 1
    store.primary.episode_path(ep.id).unlink()
    assert _stats(store, lesson.id).successes == 0
    assert store.get(lesson.id).covers_tasks == []


def _git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    res = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_two_clones_merge_their_evidence_through_git(tmp_path: Path):
    seed = tmp_path / "seed"
    seed.mkdir()
    _git("init", "-q", "-b", "main", cwd=seed)
    lesson = Store.init(seed).add("Use the staging bucket for tests.", family="s3")
    _git("add", "-A", cwd=seed)
    _git("commit", "-qm", "lesson", cwd=seed)
    _git("clone", "-q", "--bare", str(seed), "origin.git", cwd=tmp_path)
    clones = []
    for name in ("a", "b"):
        _git("clone", "-q", str(tmp_path / "origin.git"), name, cwd=tmp_path)
        clones.append(tmp_path / name)
    for n, clone in enumerate(clones):
        store = Store.open(clone)
        for i in range(n + 2):  # a: 2 successes, b: 3 successes
            store.save_episode(
                Episode(prompt=f"{clone.name}{i}", outcome="success", used=[lesson.id])
            )
        _git("add", "-A", cwd=clone)
        status = _git("status", "--porcelain", cwd=clone)
        assert ".rose/episodes/" in status and "graph" not in status and ".md" not in status
        _git("commit", "-qm", f"work in {clone.name}", cwd=clone)
    a, b = clones
    _git("push", "-q", "origin", "main", cwd=b)
    _git("pull", "-q", "--no-rebase", "origin", "main", cwd=a)  # a merge: no conflict
    assert Store.open(a).get(lesson.id).stats.successes == 5

"""Concurrent cache writers lose nothing and corrupt nothing.

Locks in: hooks and detached reflectors write the judge cache at the same time. Eight
processes each storing their own keys and racing on the same shared keys must leave
every key present, every entry parseable, and every shared entry equal to one writer's
whole answer (never a mix, never a torn file), with no stray temp files behind.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from rose.judge.cache import JudgeCache, digest

WRITERS = 8
OWN = 40
SHARED = 15


def _answer(writer: int, i: int) -> dict:
    return {"writer": writer, "i": i, "text": f"answer {i} from {writer} " + "x" * 2000}


def _write(root: str, writer: int) -> None:
    cache = JudgeCache(Path(root))
    for i in range(OWN):
        cache.put(digest(f"own-{writer}-{i}"), "relevance", _answer(writer, i))
        if i < SHARED:
            cache.put(digest(f"shared-{i}"), "relevance", _answer(writer, i))


def test_eight_processes(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write, args=(str(tmp_path), w)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * WRITERS

    cache = JudgeCache(tmp_path)
    for w in range(WRITERS):
        for i in range(OWN):
            assert cache.get(digest(f"own-{w}-{i}")) == _answer(w, i)
    for i in range(SHARED):
        got = cache.get(digest(f"shared-{i}"))
        assert got is not None
        assert got == _answer(got["writer"], i)
    assert len(cache) == WRITERS * OWN + SHARED
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(".json")]

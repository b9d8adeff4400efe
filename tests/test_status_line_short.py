"""The status line is one short line under the prompt: counts, tokens and a few titles
shortened with an ellipsis, "+N" for the rest, about 100 characters at most (three 80-character
titles made it 273). The whole titles are in `rose trace`."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.inspect.trace import inspect, render
from rose.loop.selection.pack import STATUS_CHARS, Pack
from rose.models import Node
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

LONG = [  # 80 characters each
    "Retry the HTTP client with exponential backoff and jitter, never in a tight loop",
    "Pin every transitive dependency in the lockfile before the release branch is cut",
    "Run database migrations inside one transaction: a failure must leave no half-row",
]


def _pack(titles: list[str], **extra) -> Pack:
    p = Pack()
    p.full = [{"id": f"n_{n:08d}", "title": t} for n, t in enumerate(titles)]
    p.tokens = 1234
    for key, value in extra.items():
        setattr(p, key, value)
    return p


def test_three_long_titles_fit_in_one_short_line():
    line = _pack(LONG).status
    assert len(line) <= STATUS_CHARS
    assert line.startswith("ROSE · 3 lessons · 1234 tok — Retry the HTTP client")
    assert "…" in line and "\n" not in line


def test_many_titles_end_in_a_count_of_the_rest():
    line = _pack([f"Lesson number {n}" for n in range(12)]).status
    assert len(line) <= STATUS_CHARS
    assert line.split(" — ")[1].split(", ")[0] == "Lesson number 0"
    shown = line.count("Lesson number")
    assert line.endswith(f" +{12 - shown}") and 0 < shown < 12


def test_everything_else_still_fits():
    one = {"id": "n_00000009", "title": "x"}
    line = _pack(
        LONG,
        refreshed=[one],
        fresh=[one, one],
        deferred=[one],
        cut_by="size limit",
        note="degraded: model backend 'claude' is unavailable: `claude` is not on PATH at all",
    ).status
    assert len(line) <= STATUS_CHARS + 20  # a long note keeps its gist, the titles give way
    for part in ("1 refreshed", "2 in context", "1 deferred (size limit)"):
        assert part in line
    assert "degraded: model backend" in line


@pytest.mark.graph
def test_the_hook_status_line_is_short_and_trace_has_the_whole_titles(store: Store, project: Path):
    for n, title in enumerate(LONG):
        store.save(Node(id=f"n_long{n:05d}", title=title, gist="G.", body=f"Body {n}."))
    rc, out, _, _ = run_hook("user-prompt-submit", payload("user-prompt-submit", project))
    assert rc == 0
    assert len(out["systemMessage"]) <= STATUS_CHARS
    assert out["systemMessage"].startswith("ROSE · 3 lessons · ")
    text = render(*inspect(Store.open(), "anything"))
    assert all(title in text for title in LONG)

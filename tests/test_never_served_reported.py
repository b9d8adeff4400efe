"""Lessons recall can never serve are reported, not passed as `health ok`: a hand-made cycle
between two lesson files names both files and says both are out of recall until it is fixed
(it named one); a lesson too big to serve even alone (a 5 MB lesson is 1.3M tokens) is
accepted by `rose add` with a warning, and `rose status` lists it under health."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.files.nodefile import dump_node
from rose.inspect.status import status
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph


def _problems(store: Store) -> dict[str, str]:
    return {p["path"]: p["reason"] for p in status(store)["health"]["problems"]}


def test_a_two_lesson_cycle_names_both_and_says_they_are_out_of_recall(store: Store):
    a, b = store.add("Lesson a."), store.add("Lesson b.")
    a.parents, b.parents = [b.id], [a.id]  # by hand: each the other's parent
    for n in (a, b):
        store.primary.node_path(n.family, n.id).write_text(dump_node(n), encoding="utf-8")
    problems = _problems(Store.open())
    paths = {str(store.primary.node_path(n.family, n.id)) for n in (a, b)}
    assert paths <= set(problems)
    for path in paths:
        reason = problems[path]
        assert a.id in reason and b.id in reason
        assert "both are out of recall until" in reason
    assert status(Store.open())["apexes"] == []  # it is true: neither is ever served


def test_a_cycle_under_a_parent_says_how_recall_reaches_it(store: Store):
    a, b, top = store.add("Lesson a."), store.add("Lesson b."), store.add("Top.")
    a.parents, b.parents = [b.id, top.id], [a.id]
    for n in (a, b):
        store.primary.node_path(n.family, n.id).write_text(dump_node(n), encoding="utf-8")
    reasons = set(_problems(Store.open()).values())
    assert len(reasons) == 1 and f"recall reaches them only through {top.id}" in reasons.pop()


def test_a_lesson_too_big_to_serve_is_warned_at_add_and_in_status(store: Store, project: Path):
    huge = "A huge lesson. " + "x" * 5_000_000
    res = CliRunner().invoke(app, ["add", "-"], input=huge)
    assert res.exit_code == 0, res.output
    assert "rose: warning: n_" in res.output and "1,250," in res.output
    assert "it is never served" in res.output
    store = Store.open()
    (reason,) = _problems(store).values()
    assert "over recall.max_pack_tokens (2,000)" in reason
    assert status(store)["health"]["ok"] is False
    text = CliRunner().invoke(app, ["status"]).output
    assert "health     1 problem(s)" in text and "never served" in text

    small = CliRunner().invoke(app, ["add", "A small lesson."])
    assert "warning" not in small.output
    rc, out, _, _ = run_hook("user-prompt-submit", payload("user-prompt-submit", project))
    assert rc == 0 and "A small lesson." in out["hookSpecificOutput"]["additionalContext"]


def test_a_lesson_longer_than_any_host_passes_is_reported(store: Store):
    config.set_override(store.primary.config, "recall.max_pack_tokens", "50000")
    store = Store.open()
    store.add("Long. " + "y" * 12_000)
    (reason,) = _problems(store).values()
    assert "longer than Claude Code or Codex passes on whole" in reason

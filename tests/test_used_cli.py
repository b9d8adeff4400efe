"""`rose used` records the reflector's verdict, its load-bearing sentences and who spoke.

Locks in: each `--load-bearing ID=TEXT` (repeatable, any unique id prefix) is appended as a
span and lands in the episode's load-bearing spans, and its lesson counts as used; the
source is "rose used" unless `--source reflector` says a forked reflector spoke; a lesson
named both used and unused, a malformed `ID=TEXT` and an unknown source are refused with
one line and a non-zero exit, recording nothing.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.files import sessions
from rose.models import Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph

A, B = "n_0a1b2c3d4e5f60718293", "n_1b2c3d4e5f6071829304"


@pytest.fixture
def unit(store: Store) -> Store:
    store.save(Node(id=A, title="Ports", body="Use port 5433. Never 5432."))
    store.save(Node(id=B, title="Retries", body="Retry twice."))
    sessions.append(store.primary.root, "s1", "prompt", turn=1, prompt="p", served=[A, B])
    return store


def _used(*args: str):
    return CliRunner().invoke(app, ["used", "-s", "s1", *args])


def test_load_bearing_sentences_are_spans_and_their_lesson_was_used(unit: Store):
    res = _used(
        "--unused",
        B[:10],
        "--load-bearing",
        f"{A[:10]}=Use port 5433.",
        "--load-bearing",
        f"{A}=Never 5432.",
    )
    assert res.exit_code == 0, res.output
    (ep,) = unit.absorb("s1", final=True)
    assert ep.used == [A] and ep.unused == [B] and ep.attributed_by == ["rose used"]
    assert [(s.lesson, s.span) for s in ep.load_bearing] == [
        (A, "Use port 5433."),
        (A, "Never 5432."),
    ]
    assert unit.get(A).load_bearing == ["Use port 5433.", "Never 5432."]


def test_a_forked_reflector_says_so(unit: Store):
    assert _used("--used", A, "--source", "reflector").exit_code == 0
    (entry,) = [e for e in sessions.read(unit.primary.root, "s1") if e["t"] == "used"]
    assert entry["source"] == "reflector"
    (ep,) = unit.absorb("s1", final=True)
    assert ep.attributed_by == ["reflector"] and ep.used == [A]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--used", A, "--unused", A[:10]], "both used and unused"),
        (["--unused", A, "--load-bearing", f"{A}=Use port 5433."], "both used and unused"),
        (["--load-bearing", "no sentence here"], "ID=TEXT"),
        (["--load-bearing", f"{A}=  "], "ID=TEXT"),
        (["--used", A, "--source", "assess"], "assess"),
    ],
)
def test_what_cannot_be_recorded_is_refused(unit: Store, args: list[str], message: str):
    res = _used(*args)
    assert res.exit_code != 0
    assert message in res.output
    assert [e["t"] for e in sessions.read(unit.primary.root, "s1")] == ["prompt"]

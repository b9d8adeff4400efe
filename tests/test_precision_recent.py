"""`rose status` reports precision over the store's most recent episodes beside the all-time
figure.

Locks in: the window is the last `RECENT` episodes that served a lesson, newest by their
recorded time (then turn, then id), not by the order their files were written; episodes
that served nothing are not in it; a lesson used without being served is not counted; a
window with nothing served has no ratio (None, and no "last" figure in the text), never a 0.
A store whose early episodes used nothing and whose late ones used everything shows 50 %
all time and 100 % recently: a status that ignored the window would show 50 % twice.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.inspect.precision import RECENT, precision, text
from rose.inspect.status import status
from rose.models import Episode, Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph

P1, P2 = "n_proj000001", "n_proj000002"
START = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def lessons(store: Store) -> Store:
    store.save(Node(id=P1, title="Project one", body="One."))
    store.save(Node(id=P2, title="Project two", body="Two."))
    return store


def _ep(minute: int, served: list[str], used: list[str], **kw) -> Episode:
    return Episode(served=served, used=used, time=START + timedelta(minutes=minute), **kw)


def _early_unused_late_used(store: Store) -> None:
    """RECENT early episodes that used nothing, RECENT late ones that used what they were
    served (and P2, not served: not counted), then three that served nothing. The late ones
    are written first, so the order of writing would pick the wrong window."""
    late = [_ep(1000 + i, [P1], [P1, P2]) for i in range(RECENT)]
    early = [_ep(i, [P1], []) for i in range(RECENT)]
    idle = [_ep(5000 + i, [], []) for i in range(3)]
    store.save_episodes(late + early + idle)


def test_recent_window_is_the_latest_episodes_that_served(lessons: Store):
    _early_unused_late_used(lessons)
    p = status(lessons)["precision"]
    assert (p["served"], p["used"], p["precision"]) == (2 * RECENT, RECENT, 0.5)
    assert p["recent"] == {"episodes": RECENT, "served": RECENT, "used": RECENT, "precision": 1}


def test_a_wider_window_reaches_back_into_the_early_episodes(lessons: Store):
    _early_unused_late_used(lessons)
    with lessons.graph() as g:
        wider = precision(g, last=RECENT + 10)["recent"]
        everything = precision(g, last=10 * RECENT)["recent"]
    assert (wider["episodes"], wider["served"], wider["used"]) == (RECENT + 10, RECENT + 10, RECENT)
    assert everything == {
        "episodes": 2 * RECENT,
        "served": 2 * RECENT,
        "used": RECENT,
        "precision": 0.5,
    }


def test_one_time_stamp_is_ordered_by_turn_then_id(lessons: Store):
    lessons.save_episodes(
        [
            _ep(7, [P1, P2], [], session="s_one", turn=2, id="e_b"),  # the highest id
            _ep(7, [P1], [P1], session="s_one", turn=3, id="e_a"),  # the newest
            _ep(7, [P2], [], session="s_one", turn=3, id="e_0"),
        ]
    )
    with lessons.graph() as g:
        newest = precision(g, last=1)["recent"]
        two = precision(g, last=2)["recent"]
    assert (newest["episodes"], newest["served"], newest["used"]) == (1, 1, 1)
    assert (two["episodes"], two["served"], two["used"]) == (2, 2, 1)


def test_a_window_with_nothing_served_has_no_ratio(lessons: Store):
    lessons.save_episodes([_ep(1, [], []), _ep(2, [], [P1])])
    p = status(lessons)["precision"]
    assert p["recent"] == {"episodes": 0, "served": 0, "used": 0, "precision": None}
    assert text(p)[0] == "precision  — (0/0) of served lessons used"


def test_status_text_and_json_show_the_recent_figure(lessons: Store):
    _early_unused_late_used(lessons)
    runner = CliRunner()
    res = runner.invoke(app, ["status"])
    assert res.exit_code == 0, res.output
    line = f"precision  50% ({RECENT}/{2 * RECENT}) of served lessons used"
    assert f"{line} · last {RECENT} episodes 100% ({RECENT}/{RECENT})" in res.output
    res = runner.invoke(app, ["status", "--json"])
    recent = json.loads(res.output)["precision"]["recent"]
    assert recent == {"episodes": RECENT, "served": RECENT, "used": RECENT, "precision": 1.0}

"""A counterfactual check that disagrees with attribution corrects the lesson's record.

Locks in: a disagreement was logged and the episode kept its attribution, so a lesson
credited for work it did not change kept the success (and one that changed the work kept
none). Now the check writes a correction beside the episode (a `c_` file; the episode's
own file is never edited), and the graph holds the episode with the lesson moved to what
the check found: its successes, its regression set and precision follow, after a reindex
too. A check that agrees writes nothing. A corrected pair is not checked again, even on a
machine whose event log never saw the check. A correction that arrives before its
episode (a pull in any order) applies when the episode comes; one removed restores the
attribution as written. `rose status` counts the corrections.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.disk.atomic import write_json
from rose.events import read_events
from rose.inspect.status import status
from rose.loop.abstraction import replay as _replay
from rose.loop.reflection.counterfactual import CHECKED, counterfactual, due
from rose.models import Correction, Episode, Node
from rose.store import dag
from rose.store.facade import Store
from tests._counterfactual import scripted, served

pytestmark = pytest.mark.graph


def _check(store: Store, *changed: bool):
    judge, _ = scripted(store, changed=list(changed))
    return counterfactual(store, judge=judge, prober=_replay.in_process_set(judge), calls=6)


def _episode_file(store: Store) -> Path:
    (path,) = [p for p in store.primary.episodes.glob("e_*.json")]
    return path


def test_a_lesson_credited_for_what_it_did_not_change_loses_the_success(project: Path):
    store, (lesson,) = served(project, 1, used=1)
    path = _episode_file(store)
    written = path.read_text()
    assert store.get(lesson).stats.successes == 1 and dag.regression_set(store, lesson)
    (check,) = _check(store, False)  # the approach did not change without it
    assert (check.agree, check.corrected) == (False, True)
    fix = Correction(episode=path.stem, lesson=lesson, used=False)
    assert (path.parent / f"{fix.id}.json").is_file()
    assert path.read_text() == written  # the episode is never edited
    ep = store.get_episode(path.stem)
    assert (ep.used, ep.unused) == ([], [lesson])
    assert store.get(lesson).stats.successes == 0
    assert dag.regression_set(store, lesson) == []
    assert status(store)["precision"]["used"] == 0
    store.reindex()
    assert store.get(lesson).stats.successes == 0 and store.get_episode(path.stem).used == []
    (event,) = read_events(store.primary.events, kind=CHECKED)
    assert event["corrected"] is True
    assert status(store)["counterfactual"]["corrected"] == 1
    shown = CliRunner().invoke(app, ["status"])
    assert "1 record(s) corrected to the check's verdict" in shown.stdout


def test_a_lesson_that_changed_the_work_is_credited_with_it(project: Path):
    store, (lesson,) = served(project, 1, used=0)
    assert store.get(lesson).stats.successes == 0
    (check,) = _check(store, True)
    assert check.corrected
    ep = store.get_episode(_episode_file(store).stem)
    assert (ep.used, ep.unused) == ([lesson], [])
    assert store.get(lesson).stats.successes == 1
    assert [r["id"] for r in dag.regression_set(store, lesson)] == [ep.id]


def test_a_check_that_agrees_writes_nothing(project: Path):
    store, (lesson,) = served(project, 1, used=1)
    (check,) = _check(store, True)
    assert (check.agree, check.corrected) == (True, False)
    assert list(store.primary.episodes.glob("c_*.json")) == []
    assert store.get(lesson).stats.successes == 1


def test_a_corrected_pair_is_not_checked_again_elsewhere(project: Path):
    store, _ = served(project, 1, used=1)
    _check(store, False)
    store.primary.events.unlink()  # another machine: its log never saw the check
    assert due(store) == []


def test_a_correction_before_its_episode_applies_and_one_removed_restores(project: Path):
    store = Store.init(project)
    node = Node(title="Ports", body="The staging database listens on 5433.")
    store.write([node])
    ep = Episode(prompt="fix the port", outcome="success", served=[node.id], used=[node.id],
                 attributed_by=["assess"])  # fmt: skip
    fix = Correction(episode=ep.id, lesson=node.id, used=False, reason="no change")
    write_json(store.primary.episodes / f"{fix.id}.json", json.loads(fix.model_dump_json()))
    assert store.get(node.id).stats.successes == 0
    store.save_episodes([ep])
    assert store.get_episode(ep.id).used == [] and store.get(node.id).stats.successes == 0
    (store.primary.episodes / f"{fix.id}.json").unlink()
    assert store.get_episode(ep.id).used == [node.id]
    assert store.get(node.id).stats.successes == 1

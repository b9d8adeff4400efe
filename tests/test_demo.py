"""`rose demo` runs ROSE on the simulated world for someone with no model CLI, and says what
happened without flattering it.

Locks in: the demo makes a store of its own (never the user's project or `~/.rose`), starts
it empty and says so, runs each session through the real hooks, records one episode a
session and mints lessons from what the user had to correct, and leaves the store in
place; `--json` has every scoreboard key, null exactly where a stage is not built; the text
names the stages not built yet; a folder given with --dir must be new or empty; the
environment is the user's again after.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.sim.hosts.drive import FIGURES, STAGES, not_built
from rose.sim.hosts.scoreboard import KEYS
from rose.sim.markers import OPEN

pytestmark = pytest.mark.graph


def _demo(*args: str):
    return CliRunner().invoke(app, ["demo", *args], prog_name="rose")


@pytest.mark.heavy
def test_json_has_every_key_and_null_where_a_stage_is_not_built(tmp_path: Path, project: Path):
    before = dict(os.environ)
    res = _demo("--sessions", "2", "--seed", "1", "--json", "--dir", str(tmp_path / "demo"))
    assert res.exit_code == 0, res.output
    figures = json.loads(res.stdout)
    assert list(figures)[: len(KEYS)] == list(KEYS)
    # one episode a unit of work: a session's first prompt, and the user's reply to a failure
    assert figures["sessions"] == 2 and 2 <= figures["episodes"] <= 6
    assert figures["lessons"] == figures["apexes"] >= 1 and figures["minted"] >= 1
    # a task may recur in the second session (the world's tasks recur) and earn one
    # compression; lessons of one subject served together on it may earn a merge; each
    # raises the level by one at most
    assert figures["compressions_accepted"] <= 1 and figures["merges"] <= 1
    assert figures["max_level"] <= figures["compressions_accepted"] + figures["merges"]
    # what `rose tree` shows beyond the lessons served: what the new forms stand in for
    made = figures["minted"] + figures["compressions_accepted"] + figures["merges"]
    assert figures["superseded"] == made - figures["lessons"]
    assert 0 <= figures["success_rate"] <= 1 and figures["tokens_per_prompt"] > 0
    assert 0 < figures["frame_tokens_per_prompt"] < figures["tokens_per_prompt"]
    for stage, names in FIGURES.items():
        for name in names:
            if name == "held_out_pass_rate":
                continue  # a rate of nothing: null until a compressed lesson meets new work
            if name == "counterfactual_agreement" and not figures["counterfactual_checked"]:
                continue  # likewise until a counterfactual check is made
            assert (figures[name] is None) == (not STAGES[stage]), name
    assert figures["background_calls_per_session"] >= 2  # assess and reflect, each session
    assert figures["store"] == str(tmp_path / "demo" / ".rose")
    assert figures["hook_errors"] == 0 and figures["jobs_failed"] == 0
    assert (
        len(list((tmp_path / "demo" / ".rose" / "episodes").glob("*.json"))) == figures["episodes"]
    )
    assert not (project / ".rose").exists()  # the user's project is left alone
    assert not (Path.home() / ".rose").exists()
    assert dict(os.environ) == before


def test_the_text_says_it_starts_empty_what_is_not_built_and_where_the_store_is(tmp_path: Path):
    where = tmp_path / "demo"
    res = _demo("--sessions", "2", "--dir", str(where))
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "The store starts empty" in out and "lessons minted" in out
    # Every stage is built now: the "Not built yet" list is shown exactly while one is not.
    assert ("Not built yet" in out) == bool(not_built())
    assert "selection rules" in out
    assert f"The store is left at {where / '.rose'}" in out
    assert "rose tree" in out and "rose trace --prompt" in out and "rose query" in out
    assert "rose view --open" in out
    assert OPEN not in out  # the prompt suggested for `rose trace` is a person's words


def test_dir_must_be_new_or_empty(tmp_path: Path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    res = _demo("--sessions", "1", "--dir", str(tmp_path / "full"))
    assert res.exit_code == 1 and "not an empty folder" in res.output
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("args", [["--sessions", "0"], ["--noise", "1.5"]])
def test_bad_options_are_refused(args: list[str]):
    assert _demo(*args).exit_code == 2

"""`rose demo` shows ROSE between no memory and the learnability ceiling, on its own stream.

Locks in: the demo printed ROSE's figures alone, so a newcomer could not tell whether 50 %
solved was good (the ceiling on that stream may be 50 %). Now `--json` carries the two
reference arms exactly as the scoreboard computes them for the same world, seed and
sessions, and ROSE's success as a share of the ceiling's; the text says in one sentence
what each row is, puts the three side by side, states the share, and charts every slice of
sessions with a bar per arm; the "not built" list is `rose.sim.hosts.drive.STAGES`' and only it.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest

from rose.cli._chart import FULL, TRACK, bar
from rose.cli.demo_cmds import ARMS, _report, _stages, share
from rose.sim import World
from rose.sim.hosts import scoreboard
from rose.sim.hosts.arms import Ceiling, NoMemory
from rose.sim.hosts.drive import DOES, STAGES, framed, not_built
from rose.sim.realism import Realism
from tests._demo_run import demo_json

pytestmark = pytest.mark.graph

SEED, SESSIONS = 1, 5  # a stream short enough to run, long enough for the ceiling to learn


@pytest.fixture
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`rose demo -n 5 --seed 1 --json`'s figures: one run shared with the compress job test."""
    return demo_json(tmp_path_factory, sessions=SESSIONS, seed=SEED)[0]


@functools.cache  # read, never changed
def _expected(arm: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What the scoreboard itself says of a reference arm on the demo's stream."""
    world = World.generate(SEED)
    host = NoMemory() if arm == "none" else Ceiling(world, framed)
    records = scoreboard.run(world, host, sessions=SESSIONS, seed=SEED, world_is=Realism())
    return scoreboard.pooled([records]), scoreboard.over_time(records)


@pytest.mark.heavy
def test_json_baselines_are_the_scoreboards_on_the_same_stream(figures: dict[str, Any]):
    assert set(figures["baselines"]) == {"none", "ceiling"}
    # ROSE's failures: the never taught apart, the rest not told apart (no second asking)
    assert set(figures["failures_by_cause"]) == {"never_taught", "other"}
    for arm in ("none", "ceiling"):
        pooled, trend = _expected(arm)
        assert figures["baselines"][arm] == json.loads(json.dumps({**pooled, "over_time": trend}))
    ceiling = figures["baselines"]["ceiling"]["success_rate"]
    assert figures["ceiling_share"] == share(figures["success_rate"], ceiling)
    # the references' trend is sliced as ROSE's, so the chart's rows line up
    assert [b["sessions"] for b in figures["baselines"]["ceiling"]["over_time"]] == [
        b["sessions"] for b in figures["over_time"]
    ]


@pytest.mark.heavy
def test_text_names_the_three_rows_states_the_share_and_charts_every_slice(
    figures: dict[str, Any],
):
    """The text the demo prints for these figures (the CLI's text mode prints this report:
    tests/test_demo.py runs it)."""
    out = _report(figures, world=World.generate(SEED), seed=SEED, noise=0.0, prompt="a task")
    flat = " ".join(out.split())
    for name, meaning in ARMS.values():
        assert f"{name} {meaning}" in flat  # each row's one-sentence meaning, beside its name
    none, none_trend = _expected("none")
    ceiling, ceiling_trend = _expected("ceiling")
    solved = next(line for line in out.splitlines() if "tasks solved at the first attempt" in line)
    cells = solved.split()[-3:]  # no memory, ROSE, ceiling
    assert (
        cells[0] == f"{none['success_rate']:.0%}" and cells[2] == f"{ceiling['success_rate']:.0%}"
    )
    said = re.search(
        r"ROSE solved (\d+)% at the first attempt, (\d+)% of the ceiling's (\d+)%", flat
    )
    if ceiling["success_rate"]:
        assert said is not None and said[1] == cells[1].rstrip("%")
        assert said[3] == f"{ceiling['success_rate']:.0%}".rstrip("%")
        solved_by_rose = round(int(said[1]) / 100 * ceiling["attempts"])  # of the same window
        rate = solved_by_rose / ceiling["attempts"]
        assert said[2] == f"{share(rate, ceiling['success_rate']):.0%}".rstrip("%")
    else:
        assert said is None and "The ceiling solved none" in flat
    lines = out.splitlines()
    for slice_none, slice_ceiling in zip(none_trend, ceiling_trend, strict=True):
        row = next(line for line in lines if line.startswith(f"  {slice_none['sessions']} "))
        bars = re.findall(rf"[{FULL}{TRACK}▏▎▍▌▋▊▉]{{10}} +\d+%", row)
        assert len(bars) == 3, row
        assert bars[0] == bar(slice_none["success_rate"])
        assert bars[2] == bar(slice_ceiling["success_rate"])
        assert row.split()[-1] == f"{slice_ceiling['tokens_per_prompt']:,.0f}"


def test_a_bar_is_as_long_as_its_rate_and_always_as_wide():
    assert bar(0.0) == TRACK * 10 + "   0%"
    assert bar(1.0) == FULL * 10 + " 100%"
    assert bar(0.5).startswith(FULL * 5 + TRACK * 5)
    assert bar(0.55).startswith(FULL * 5 + "▌")  # half a cell more: the part cell shows it
    assert {len(bar(r / 100)) for r in range(101)} == {len(bar(None))}


def test_the_share_of_the_ceiling_is_none_when_the_ceiling_solved_nothing():
    assert share(0.25, 0.5) == 0.5
    assert share(0.5, 0.5) == 1.0
    assert share(0.0, 0.0) is None and share(None, 0.5) is None


def test_not_built_lists_exactly_the_stages_drive_says_are_not_built(
    monkeypatch: pytest.MonkeyPatch,
):
    assert ("Not built yet (null in --json):" in _stages()) == bool(not_built())
    monkeypatch.setitem(STAGES, "routing", False)
    text = _stages()
    missing = text[text.index("Not built yet (null in --json):") + 1 :]
    assert missing == [f"  {DOES['routing']}"]
    assert f"  {DOES['routing']}" not in text[: text.index("Not built yet (null in --json):")]

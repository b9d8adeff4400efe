"""A store the demo leaves behind answers from the world it was built from.

Locks in: the simulated backend was always world 0 with no noise, whatever the demo's
--seed and --noise, so a hook (or `rose trace` on the demo's store) judged lessons of one
world with the words of another. Now the store's `model` setting names the world and its
knobs (`seed=3,noise=0.1`), which every process opening the store reads; an empty setting
is still world 0, and a setting that names no world is BackendUnavailable saying what
would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.errors import BackendUnavailable
from rose.model.registry import make_backend, simulated_model
from rose.sim import World
from rose.sim.hosts import scoreboard
from rose.sim.hosts.drive import HookHost


def test_the_model_setting_picks_the_world_and_its_knobs():
    backend = make_backend("simulated", model=simulated_model(seed=3, noise=0.1, size="small"))
    assert backend.world == World.generate(3, size="small")  # type: ignore[attr-defined]
    assert (backend.seed, backend.noise) == (3, 0.1)  # type: ignore[attr-defined]
    default = make_backend("simulated")
    assert default.world == World.generate(0) and default.noise == 0.0  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("model", "says"),
    [("opus", "names no simulated world"), ("seed=x", "seed must be a whole number"),
     ("size=huge", "size must be one of"), ("noise=2", "noise must be between 0 and 1")],
)  # fmt: skip
def test_a_model_that_names_no_world_is_unavailable(model: str, says: str):
    with pytest.raises(BackendUnavailable, match=says):
        make_backend("simulated", model=model)


def test_unknown_knobs_are_refused_when_writing_the_setting():
    with pytest.raises(ValueError, match="temperature"):
        simulated_model(seed=1, temperature=0.2)


@pytest.mark.graph
def test_rose_trace_on_a_demo_store_judges_with_its_own_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A store made as the demo makes its own (here holding the world's lessons, so that
    recall must choose) answers `rose recall` with the world its setting names."""
    where = tmp_path / "demo"
    world = World.generate(7)
    HookHost(where, model=simulated_model(seed=7), lessons=scoreboard.seed_lessons(world))
    task = next(t for t in world.tasks if len(t.topics) == 1 and not t.hidden)
    monkeypatch.chdir(where)
    res = CliRunner().invoke(app, ["recall", "--prompt", scoreboard.plain_prompt(task), "--json"])
    assert res.exit_code == 0, res.output
    shown = json.loads(res.stdout)
    assert not shown["degraded"]
    # World 0's words do not know this world's other topics: it would open them all.
    assert [x["title"] for x in shown["lessons"]] == [
        f"{t.capitalize()} notes" for t in task.topics
    ]

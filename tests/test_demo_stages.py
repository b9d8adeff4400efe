"""The scoreboard's list of built stages matches the code, so no figure is claimed or hidden.

Locks in: the demo and the benchmark print null for the figures of a stage that is not
built and name it as not built; a stage issue that adds its module under rose/loop/ must
flip its line in `rose.sim.hosts.drive.STAGES` (and fill its figures), and a stage marked
built must have its module. Every stage has words for the demo, every figure belongs to a known
stage and is one of the scoreboard's keys.
"""

from __future__ import annotations

from pathlib import Path

from rose.sim.hosts.drive import DOES, FIGURES, MODULES, STAGES, not_built
from rose.sim.hosts.scoreboard import KEYS

LOOP = Path(__file__).resolve().parents[1] / "rose" / "loop"


def test_a_stage_is_built_exactly_when_its_module_exists():
    for stage, module in MODULES.items():
        exists = any(LOOP.rglob(f"{module}.py"))
        assert exists == STAGES[stage], (
            f"rose/loop/{module}.py {'exists' if exists else 'is missing'} but "
            f"rose.sim.hosts.drive.STAGES says {stage} is "
            f"{'built' if STAGES[stage] else 'not built'}"
        )


def test_every_stage_has_words_and_every_figure_a_stage_and_a_key():
    assert set(DOES) == set(STAGES)
    assert set(MODULES) <= set(STAGES) and set(FIGURES) <= set(STAGES)
    for names in FIGURES.values():
        assert set(names) <= set(KEYS)
    assert not_built() == [s for s in STAGES if not STAGES[s]]

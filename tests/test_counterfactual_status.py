"""`rose status` reports how often counterfactual checks agree with attribution.

Locks in: after checks that agree once and disagree once, `rose status --json` carries
the rate with its counts, apart for lessons attributed used and unused, and the text
prints it under precision; with nothing checked the rate is null and the text says
nothing of it; a pair checked twice counts once, by its latest check. `rose attribute
--counterfactual --calls 0` asks nothing and says so; `--calls` alone is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.inspect.status import status
from rose.loop.abstraction import replay as _replay
from rose.loop.reflection.counterfactual import CHECKED, counterfactual
from tests._counterfactual import scripted, served

pytestmark = pytest.mark.graph


def _status(*args: str):
    res = CliRunner().invoke(app, ["status", *args])
    assert res.exit_code == 0, res.output
    return res.stdout


def test_status_reports_the_agreement_rate(project: Path):
    store, ids = served(project, 2, used=1)  # the first used, the second not
    assert status(store)["counterfactual"]["agreement"] is None
    assert "counterfactual" not in _status()
    judge, _ = scripted(store, changed=[True, True])  # both changed: only the used one agrees
    checks = counterfactual(store, judge=judge, prober=_replay.in_process_set(judge), calls=6)
    assert len(checks) == 2
    figures = json.loads(_status("--json"))["counterfactual"]
    assert figures == {
        "checked": 2,
        "agreed": 1,
        "agreement": 0.5,
        "used": {"checked": 1, "agreed": 1},
        "unused": {"checked": 1, "agreed": 0},
        "corrected": 1,
    }
    line = next(x for x in _status().splitlines() if "counterfactual" in x)
    assert "50% (1/2)" in line and "used 1/1" in line and "unused 0/1" in line
    unused = next(c for c in checks if not c.used)
    store.log(CHECKED, {"episode": unused.episode, "lesson": unused.lesson, "used": False,
                        "changed": False})  # fmt: skip
    again = status(store)["counterfactual"]
    assert again["agreed"] == again["checked"] == 2  # the latest check of the pair counts


def test_the_command_with_no_budget_asks_nothing_and_says_so(project: Path):
    served(project, 1)
    res = CliRunner().invoke(app, ["attribute", "--counterfactual", "--calls", "0", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["checks"] == []
    res = CliRunner().invoke(app, ["attribute", "--counterfactual", "--calls", "0"])
    assert "nothing checked" in res.stdout and "no counterfactual check made yet" in res.stdout
    assert CliRunner().invoke(app, ["attribute", "--calls", "3"]).exit_code == 2

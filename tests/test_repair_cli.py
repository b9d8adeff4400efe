"""`rose repair` folds back what is due over every apex; `--dry-run` only says what is.

Locks in the command's surface: --dry-run --json lists each due claim with its lesson, id,
rescues, owner and holder and writes nothing; a plain run folds it and says so in one line
per claim; once nothing is due it says that, and exits 0 each time.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.models import claim_id
from rose.store.facade import Store
from tests._lineage import FIRST, L0, L1, patch, two_levels
from tests._lineage import unit as record

pytestmark = pytest.mark.graph


def _cli(*args: str):
    res = CliRunner().invoke(app, list(args), prog_name="rose")
    assert res.exit_code == 0, res.output
    return res.output


def test_dry_run_then_repair_then_nothing_due(store: Store):
    two_levels(store)
    pid = patch(store, L1, FIRST)
    for turn in range(1, 4):
        record(store, "s1", turn, lesson=L1, outcome="success", patches=(pid,))
    store.absorb("s1", final=True)  # written without the learning job: nothing folded yet

    (due,) = json.loads(_cli("repair", "--dry-run", "--json"))
    assert due["lesson"] == L1 and due["claim"] == claim_id(L1, FIRST)
    assert (due["rescues"], due["owner"], due["holder"], due["patch"]) == (3, L1, L0, True)
    assert store.get(L1).patches == [FIRST]  # a dry run writes nothing

    out = _cli("repair")
    assert out.strip() == (f"{L1}: folded back (3 rescues; dropped by {L1}, held by {L0}): {FIRST}")
    assert FIRST in store.get(L1).body
    assert _cli("repair").startswith("nothing to repair")

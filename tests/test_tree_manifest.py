"""`rose tree -v` shows each lesson's manifest with the rescues of every dropped claim, and
the patches it carries with theirs; without -v the tree is as it was.

Locks in: the tree listed what each compression dropped and who holds it, but not whether
restoring it had ever helped, so nothing showed which claims were on their way to being
folded back (repair). Now -v adds each claim's rescues, folded from the episodes by the
graph (failures it turned, plus successful uses its text was served on as a patch), and
each patch with the successful uses it was served on.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.models import claim_id
from rose.store.facade import Store
from tests._lineage import FIRST, L0, L1, SECOND, absorb, patch, two_levels
from tests._lineage import unit as record

pytestmark = pytest.mark.graph


def _tree(*args: str) -> list[str]:
    res = CliRunner().invoke(app, ["tree", *args], prog_name="rose")
    assert res.exit_code == 0, res.output
    return [line.strip() for line in res.output.splitlines()]


def test_tree_v_prints_each_claims_holder_and_rescues(store: Store):
    two_levels(store)
    pid = patch(store, L1, FIRST)
    record(store, "s1", 1, lesson=L1, outcome="success", patches=(pid,))
    record(store, "s1", 2, lesson=L1, outcome="success", patches=(pid,))
    record(store, "s1", 3, lesson=L1, outcome="failure", rescued=claim_id(L1, SECOND))
    absorb(store, "s1")  # two rescues: below compress.repair_after, nothing is folded

    lines = _tree("-v")
    assert f"− dropped parameter: {FIRST}  (held by {L0} · rescued 2)" in lines
    assert f"− dropped caveat: {SECOND}  (held by {L0} · rescued 1)" in lines
    assert f"+ patch: {FIRST}  (rescued 2)" in lines

    plain = _tree()
    assert f"− dropped parameter: {FIRST}  (held by {L0})" in plain
    assert not any("rescued" in line or "+ patch" in line for line in plain)

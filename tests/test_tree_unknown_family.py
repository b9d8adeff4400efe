"""`rose tree --family` with no such family fails, naming the families that exist.

Locks in: `rose tree --family nosuch` said "no lessons yet" and exited 0, as though the
store were empty; it now exits 1 and names the families.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.store.facade import Store
from tests._reconcile import lesson

pytestmark = pytest.mark.graph


def test_an_unknown_family_fails_naming_the_families(store: Store):
    store.save(lesson("n_tls000001", "Certs.", family="tls"))
    store.save(lesson("n_db0000001", "Ports.", family="db"))
    res = CliRunner().invoke(app, ["tree", "--family", "nosuch"])
    assert res.exit_code == 1
    assert "no family 'nosuch'" in res.stderr and "db, tls" in res.stderr
    assert CliRunner().invoke(app, ["tree", "--family", "tls"]).exit_code == 0

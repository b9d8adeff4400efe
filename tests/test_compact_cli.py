"""`rose compact`: list what is due and why not, compress, dry-run, one lesson.

Locks in the command's parsing and output over the library (which the stage tests cover):
--list names every apex with its reason, --due only the due ones, --dry-run writes
nothing, a plain run compresses what is due through the store's configured backend (the
simulated world here, replayed in fresh processes), and --node on a lesson that is not
due exits 1 with one line saying why.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rose.cli import app
from tests._compress import family


def test_compact_lists_dry_runs_and_compresses(project):
    f = family(project, seed=0)
    run = CliRunner().invoke
    listed = run(app, ["compact", "--list"])
    assert listed.exit_code == 0 and f"{f.node.id}" in listed.output and "due" in listed.output
    dry = run(app, ["compact", "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    (attempt,) = json.loads(dry.output)
    assert attempt["result"] == "dry-run" and attempt["reason"] == "would be accepted"
    assert f.store.get(f.node.id).status == "active"
    done = run(app, ["compact", "--limit", "1"])
    assert done.exit_code == 0 and "accepted as n_" in done.output, done.output
    assert run(app, ["compact", "--due"]).output.strip() == "nothing is due"
    again = run(app, ["compact", "--node", f.node.id])
    assert again.exit_code == 1 and "not due" in again.output

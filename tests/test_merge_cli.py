"""`rose merge`: list the groups used together and why each is or is not due, dry-run, merge.

Locks in the command's parsing and output over the library (the stage tests cover the
rest): --list names each group with its co-use count and its reason, --json as objects,
pairs below `merge.min_co_uses` with how many were needed; --dry-run writes and logs
nothing; a plain run attempts what is due through the store's configured backend (the
simulated world, which cannot generalise prose it finds no facts in, so it is refused)
and says why; afterwards the group waits for a new co-use, and a run says nothing is due.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.events import read_events
from rose.store.facade import Store
from tests._merge import plain, used_by


def test_merge_lists_dry_runs_and_attempts(project):
    a, b, c = plain(project, 3, co_uses=0)
    store = Store.open(project)
    store.write([], used_by([a, b], 3, "ab") + used_by([b, c], 1, "bc"))
    config.set_override(store.primary.config, "agent", "simulated")
    run = CliRunner().invoke
    listed = run(app, ["merge", "--list"])
    assert listed.exit_code == 0, listed.output
    first, second = listed.output.splitlines()
    assert first == f"{a.id} + {b.id}  (3 co-uses, 4 episodes)  due"  # b: one more
    assert second.startswith(f"{b.id} + {c.id}  (1 co-use, 4 episodes)  not due: used together")
    assert "of the 3 needed (merge.min_co_uses)" in second
    rows = json.loads(run(app, ["merge", "--list", "--json"]).output)
    assert [(r["members"], r["co_uses"], r["due"]) for r in rows] == [
        ([a.id, b.id], 3, True), ([b.id, c.id], 1, False)
    ]  # fmt: skip
    dry = run(app, ["merge", "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    (attempt,) = json.loads(dry.output)
    assert attempt["result"] == "dry-run" and attempt["reason"].startswith("under-reported")
    assert read_events(store.primary.events, kind="merge") == []
    done = run(app, ["merge", "--limit", "1"])
    assert done.exit_code == 0 and done.output.startswith(f"{a.id} + {b.id}: rejected")
    assert "under-reported" in done.output
    assert "no new co-use" in run(app, ["merge", "--list"]).output
    assert run(app, ["merge"]).output.strip() == "nothing is due (`rose merge --list` says why)"
    assert run(app, ["merge", "--limit", "0"]).exit_code == 2

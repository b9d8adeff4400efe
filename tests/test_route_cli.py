"""`rose route` teaches, lists and forgets selection rules, and prints the growth ratio.

Locks in the command's surface: `--when/--then` judges the rule through the store's
configured backend and stores it (one line with its id); a rule of the wrong form exits
non-zero with the judge's reason and writes nothing; the listing shows each rule with its
record and ends with the ratio line; `--json` gives the rules with their records;
`--forget ID` deletes one, and an unknown id or a half-given rule is an error.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.loop.selection import route
from rose.model.registry import simulated_model
from rose.sim import World
from rose.store.facade import Store

pytestmark = pytest.mark.graph

SEED = 2


def _run(*args: str):
    return CliRunner().invoke(app, list(args), prog_name="rose")


@pytest.fixture
def topics(store: Store) -> list[str]:
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", simulated_model(seed=SEED, size="small"))
    return list(World.generate(SEED, size="small").topics)


def test_teach_list_forget(store: Store, topics: list[str]):
    a, b = topics[:2]
    taught = _run(
        "route", "--when", f"the task touches {a}", "--then", f"also read the {b} lessons"
    )
    assert taught.exit_code == 0, taught.output
    (rule,) = store.rules()[0]
    assert taught.output.strip() == f"stored {rule.id}: {rule.text()}"

    listing = _run("route")
    assert listing.exit_code == 0, listing.output
    lines = listing.output.strip().splitlines()
    assert lines[0] == f"{rule.id}  when the task touches {a}: also read the {b} lessons"
    assert lines[1].strip() == "manual; 0 selection(s), 0 of 0 served used, 0 misses"
    assert lines[-1].startswith("routing 1 selection rule over 0 lessons (ratio 0.00")

    (shown,) = json.loads(_run("route", "--json").output)
    assert shown["id"] == rule.id and shown["retired"] == ""
    assert shown["record"] == {"selections": 0, "served": 0, "used": 0, "misses": 0}

    gone = _run("route", "--forget", rule.id)
    assert gone.exit_code == 0 and gone.output.strip() == f"forgot {rule.id}"
    assert store.rules()[0] == []
    again = _run("route", "--forget", rule.id)
    assert again.exit_code != 0 and "no selection rule" in again.output


def test_a_refused_rule_exits_with_the_reason_and_writes_nothing(store: Store, topics: list[str]):
    res = _run("route", "--when", "always", "--then", "n_abc123 is rarely useful")
    assert res.exit_code != 0
    assert "selection rule refused" in res.output and "verdict on one lesson" in res.output
    assert store.rules()[0] == []


def test_a_half_given_rule_is_an_error(store: Store, topics: list[str]):
    res = _run("route", "--when", f"the task touches {topics[0]}")
    assert res.exit_code != 0 and "both --when and --then" in res.output
    assert store.rules()[0] == []


def test_a_taught_rule_retires_the_one_saying_the_opposite(store: Store, topics: list[str]):
    """The user's rule wins over a stored one for the same kind of task with the opposite
    advice: the stored one is kept on disk, retired with the reason, listed last, and no
    longer given to selection; a rule for another kind of task stays in use."""
    a, b, c = topics[:3]
    assert _run("route", "--when", f"the task touches {a}", "--then",
                f"nothing in the {b} lessons applies").exit_code == 0  # fmt: skip
    assert _run("route", "--when", f"the task touches {c}", "--then",
                f"nothing in the {b} lessons applies").exit_code == 0  # fmt: skip
    taught = _run(
        "route", "--when", f"the task touches {a}", "--then", f"also read the {b} lessons"
    )
    assert taught.exit_code == 0, taught.output
    rules = {r.then.split()[0] + r.when.split()[-1]: r for r in store.rules()[0]}
    skip_a, skip_c, read_a = rules[f"nothing{a}"], rules[f"nothing{c}"], rules[f"also{a}"]
    assert skip_a.retired.startswith(f"{read_a.id} (") and "says the opposite" in skip_a.retired
    assert not skip_c.retired and not read_a.retired
    assert {r.id for r in route.for_selection(store)} == {skip_c.id, read_a.id}
    listing = _run("route").output.strip().splitlines()
    assert listing[-3].startswith(f"{skip_a.id}  ") and "(retired: " in listing[-3]
    assert listing[-1].startswith("routing 2 selection rules over 0 lessons")

"""The small promises of the command line (issue "Never broken, never leaking", item 11).

Locks in: `rose --version` and `-h` exist; `--help` no longer labels every flag `<bool>`;
`rose events -n` is validated (`-n 0` showed everything, `-n -3` dropped the oldest three)
and `--kind nope` says which kinds the log holds instead of printing nothing; a family is
spelled the same everywhere (`rose tree --family "My Family"` found nothing after `rose add
--family "My Family"` stored it as my-family); `--agent` accepts exactly what `rose config
agent` accepts (it suggested `scripted`, which config rejects).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import rose
from rose import config
from rose.cli import app
from rose.models import slug

pytestmark = pytest.mark.graph


def _cli(*args: str, input: str | None = None):
    return CliRunner().invoke(app, list(args), input=input, prog_name="rose")


def test_version_and_short_help():
    res = _cli("--version")
    assert res.exit_code == 0 and res.output.strip() == f"rose {rose.__version__}"
    res = _cli("-h")
    assert res.exit_code == 0 and "Usage: rose" in res.output and "--version" in res.output
    res = _cli("status", "-h")
    assert res.exit_code == 0 and "Usage: rose status" in res.output


@pytest.mark.parametrize("args", [["--help"], ["status", "--help"], ["config", "--help"]])
def test_help_does_not_label_flags_with_their_type(args: list[str]):
    res = _cli(*args)
    assert res.exit_code == 0
    assert "<bool>" not in res.output


def test_events_limit_is_validated_and_all_shows_everything(store):
    for n in range(5):
        store.log("probe", {"n": n})
    for bad in ("0", "-3"):
        assert _cli("events", "-n", bad).exit_code == 2
    shown = json.loads(_cli("events", "--kind", "probe", "-n", "2", "--json").output)
    assert [e["n"] for e in shown] == [3, 4]
    shown = json.loads(_cli("events", "--kind", "probe", "--all", "--json").output)
    assert [e["n"] for e in shown] == [0, 1, 2, 3, 4]


def test_events_of_an_absent_kind_say_which_kinds_exist(store):
    store.log("probe", {})
    res = CliRunner().invoke(app, ["events", "--kind", "nope"])
    assert res.exit_code == 0
    assert "no 'nope' events" in res.output and "probe" in res.output
    res = CliRunner().invoke(app, ["events", "--kind", "nope", "--json"])
    assert json.loads(res.stdout) == []


def test_a_family_is_spelled_the_same_when_adding_and_listing(store):
    res = _cli("add", "Use port 5433 for the test database.", "--family", "My Family")
    assert res.exit_code == 0 and "my-family" in res.output
    for spelling in ("My Family", "my-family", "MY  FAMILY!"):
        res = _cli("tree", "--family", spelling)
        assert res.exit_code == 0 and "my-family/" in res.output, spelling
    other = _cli("tree", "--family", "other")  # one that does not exist: the known are named
    assert other.exit_code == 1 and "the families are: my-family" in other.output


@pytest.mark.parametrize("name", ["db_ports", "my-family", "retry", "a1"])
def test_normalising_a_valid_family_name_changes_nothing(name: str):
    assert slug(name) == name


@pytest.mark.parametrize(
    ("typed", "stored"), [("My Family", "my-family"), ("Café Crème", "cafe-creme"), ("_x", "x")]
)
def test_family_names_are_normalised(typed: str, stored: str):
    assert slug(typed) == stored


def test_agent_option_takes_what_the_agent_setting_takes(store):
    res = _cli("recall", "--prompt", "x", "--agent", "banana")
    assert res.exit_code == 2
    for choice in config.choices("agent"):
        assert choice in res.output
    assert "scripted" not in res.output
    help_text = " ".join(_cli("recall", "--help").output.split())
    listed = ", ".join(config.choices("agent")[:-1]) + f" or {config.choices('agent')[-1]}"
    assert listed in help_text

"""The prompt hook at its edges: a payload with a 5,000-digit number is one readable line
(it answered `'ValueError' object has no attribute 'msg'`); a closed stdout, or a reader
gone before the answer, prints no BrokenPipeError traceback, exits 0 and records nothing as
served (session record, session log, inject event), so the lessons come in full next time;
and an invalid ROSE_RECALL_MAX_PACK_TOKENS (`abc`) is ignored, as the config loader ignores
it, instead of sending every prompt down the slow path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rose.events import read_events
from rose.files import sessions
from rose.store.facade import Store
from tests._hookrun import payload, run_hook
from tests.test_hook_fast_path import _PROBE

pytestmark = pytest.mark.graph

HOOK = [sys.executable, "-m", "rose", "hook", "user-prompt-submit"]


@pytest.fixture
def one(store: Store) -> Store:
    store.add("Always pin the lockfile before a release.")
    store.view()
    return store


def test_a_huge_number_is_one_readable_line(one: Store, project: Path):
    raw = '{"prompt": "x", "cwd": "%s", "n": %s}' % (project, "9" * 5000)  # noqa: UP031
    rc, out, stdout, _ = run_hook("user-prompt-submit", raw)
    assert rc == 0 and len(stdout.strip().splitlines()) == 1
    message = out["systemMessage"]
    assert message.startswith("ROSE · user-prompt-submit hook skipped: hook payload is not valid")
    assert "digits" in message and "attribute" not in message


def _nothing_recorded(store: Store) -> None:
    assert not (store.primary.sessions / "abc123.json").exists()
    assert sessions.read(store.primary.root, "abc123") == []
    assert read_events(store.primary.events, kind="inject") == []
    (error,) = read_events(store.primary.events, kind="error")
    assert error["error"] == "AnswerNotWritten"


def test_a_closed_stdout_is_no_traceback_and_nothing_is_served(one: Store, project: Path):
    data = json.dumps(payload("user-prompt-submit", project))
    proc = subprocess.run(
        ["sh", "-c", '"$@" >&-', "sh", *HOOK], input=data, capture_output=True, text=True
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    _nothing_recorded(one)
    out = run_hook("user-prompt-submit", payload("user-prompt-submit", project))[1]
    assert out["systemMessage"].startswith("ROSE · 1 lesson · ")  # still due, in full


def test_a_reader_gone_before_the_answer_is_no_traceback(one: Store, project: Path):
    proc = subprocess.Popen(
        HOOK, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    proc.stdout.close()  # `| head -c 0`: nobody reads the answer
    _, err = proc.communicate(json.dumps(payload("user-prompt-submit", project)).encode())
    assert (proc.returncode, err.decode()) == (0, "")
    _nothing_recorded(one)


def test_a_failure_with_stdout_closed_is_no_traceback(one: Store, project: Path):
    proc = subprocess.run(
        ["sh", "-c", '"$@" >&-', "sh", *HOOK], input="{not json", capture_output=True, text=True
    )
    assert (proc.returncode, proc.stderr) == (0, "")


def _probe(project: Path, **env: str) -> tuple[dict | None, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE],
        input=json.dumps(payload("user-prompt-submit", project)),
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("HEAVY="))
    return (json.loads(proc.stdout) if proc.stdout.strip() else None), json.loads(line[6:])


@pytest.mark.parametrize("value", ["abc", "", "-5", "1.5", " 2000 "])
def test_an_invalid_or_equal_budget_override_keeps_the_fast_path(
    one: Store, project: Path, value: str
):
    out, heavy = _probe(project, ROSE_RECALL_MAX_PACK_TOKENS=value)
    assert out is not None and "hookSpecificOutput" in out
    assert heavy == []


def test_a_real_budget_override_takes_the_slow_path(one: Store, project: Path):
    out, heavy = _probe(project, ROSE_RECALL_MAX_PACK_TOKENS="1500")
    assert out is not None and "pydantic" in heavy  # the control: a changed budget is read

"""The queue defers and coalesces, failures show, and a failed job can be run again.

Locks in: work for one session coalesces while it waits (absorbs into one, a session end
takes over a waiting absorb, two reflections read one stretch from the earlier start to
the later end) and nothing running is touched; a job whose runner died and is queued again
starts a runner at once; a failing job's record carries its own account of why (the
`[rose] failed:` line), not "exited with code 1", and its failure is an `error` event; a
failed learning job leaves the next status line one notice; `rose status` is not healthy
while one of the last session ends failed to learn, and names it; `rose jobs --retry`
queues the failed job again with the input it kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.events import read_events
from rose.files import notices
from rose.files.layout import StoreDir
from rose.jobs import _ledger
from rose.jobs import queue as jobs
from tests._jobs import make_ledger, record


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StoreDir:
    return make_ledger(tmp_path, monkeypatch)


def _payload(d: StoreDir, job_id: str) -> dict:
    return json.loads((d.jobs / f"{job_id}.payload").read_text())


def test_absorbs_of_one_session_coalesce_and_a_session_end_takes_them_over(ledger):
    first = jobs.submit(
        ledger, "absorb", {"session": "s1", "final": False}, key="s1:1", spawn=False
    )
    again = jobs.submit(
        ledger, "absorb", {"session": "s1", "final": False}, key="s1:2", spawn=False
    )
    assert again == ("coalesced", first[1])
    other = jobs.submit(ledger, "absorb", {"session": "s2"}, key="s2:1", spawn=False)
    assert other[0] == "queued" and other[1] != first[1]
    end = jobs.submit(ledger, "session-end", {"session_id": "s1", "reason": "exit"}, key="s1:2",
                      spawn=False)  # fmt: skip
    assert end == ("coalesced", first[1])
    rec = record(ledger, first[1])
    assert (rec["kind"], rec["key"]) == ("session-end", "s1:2")
    assert _payload(ledger, first[1])["session_id"] == "s1"
    late = jobs.submit(ledger, "absorb", {"session": "s1"}, key="s1:3", spawn=False)
    assert late == ("coalesced", first[1]) and record(ledger, first[1])["kind"] == "session-end"
    assert len(list(ledger.jobs.glob("*.payload"))) == 2


def test_reflections_of_one_session_read_one_stretch(ledger):
    a = jobs.submit(ledger, "reflect", {"session": "s1", "start": 100, "end": 500, "turn": 2},
                    key="s1:reflect:500", spawn=False)  # fmt: skip
    b = jobs.submit(ledger, "reflect", {"session": "s1", "start": 500, "end": 900, "turn": 4},
                    key="s1:reflect:900", spawn=False)  # fmt: skip
    assert b == ("coalesced", a[1])
    assert {k: _payload(ledger, a[1])[k] for k in ("start", "end", "turn")} == {
        "start": 100,
        "end": 900,
        "turn": 4,
    }


def test_a_running_job_is_never_coalesced_into(ledger):
    first = jobs.submit(ledger, "absorb", {"session": "s1"}, key="s1:1", spawn=False)
    rec = record(ledger, first[1])
    rec["state"] = "running"
    (ledger.jobs / f"{first[1]}.json").write_text(json.dumps(rec))
    assert jobs.submit(ledger, "absorb", {"session": "s1"}, key="s1:2", spawn=False)[0] == "queued"


def test_a_job_whose_runner_died_starts_a_runner_when_queued_again(ledger, monkeypatch):
    started: list[StoreDir] = []
    monkeypatch.setattr(jobs, "_spawn_runner", started.append)
    _, job_id = jobs.submit(ledger, "flaky", {}, spawn=False)
    rec = record(ledger, job_id)
    rec.update(state="running", slot=0, pid=None, started=_ledger.iso(0))
    (ledger.jobs / f"{job_id}.json").write_text(json.dumps(rec))
    jobs.jobs(ledger)  # a look at the ledger finds the runner gone
    assert record(ledger, job_id)["state"] == "queued" and started == [ledger]


def _failed(ledger: StoreDir, kind: str, tail: list[str]) -> str:
    _, job_id = jobs.submit(ledger, kind, {"session_id": "s9"}, key="s9:3", spawn=False)
    rec = record(ledger, job_id)
    rec.update(state="running", attempt=2, started=_ledger.iso(0))
    with _ledger.locked(ledger.jobs):
        _ledger.finish(ledger, rec, 1, "exited with code 1", tail, retry=True)
    return job_id


def test_a_failed_job_says_why_in_its_own_words_and_as_an_error_event(ledger):
    why = "LearningFailed: reflecting on the session failed: BackendTimeout: no answer"
    job_id = _failed(ledger, "session-end", ["Traceback ...", f"{_ledger.FAILED}{why}"])
    assert record(ledger, job_id)["reason"] == why
    (error,) = read_events(ledger.events, kind="error")
    assert error["id"] == job_id and error["error"] == why


def test_a_failed_learning_job_is_said_once_in_the_status_line(ledger):
    _failed(ledger, "session-end", [f"{_ledger.FAILED}BackendTimeout: gave no answer within 9s"])
    said = notices.take([str(ledger.root)])
    assert said == ["learning from the last session failed: model timed out — rose jobs"]
    assert notices.take([str(ledger.root)]) == []
    _failed(ledger, "compress", [f"{_ledger.FAILED}BackendTimeout: x"])  # not learning
    assert notices.take([str(ledger.root)]) == []


def test_status_names_a_session_end_that_failed_to_learn_and_retry_requeues_it(ledger, monkeypatch):
    monkeypatch.setattr(jobs, "_spawn_runner", lambda d: None)
    job_id = _failed(ledger, "session-end", [f"{_ledger.FAILED}LearningFailed: timed out"])
    out = CliRunner().invoke(app, ["status"])
    assert "health     1 problem(s)" in out.output
    assert "learning from session s9 failed: LearningFailed: timed out" in out.output
    again = CliRunner().invoke(app, ["jobs", "--retry", job_id[:12]])
    assert again.exit_code == 0 and job_id in again.output
    rec = record(ledger, job_id)
    assert (rec["state"], rec["attempt"], rec["previous"]["reason"]) == (
        "queued",
        3,
        "LearningFailed: timed out",
    )
    assert "health     ok" in CliRunner().invoke(app, ["status"]).output
    none = CliRunner().invoke(app, ["jobs", "--retry"])
    assert none.exit_code == 1 and "no failed job" in none.output


def test_a_running_jobs_record_deleted_by_hand_is_written_again_and_said(ledger, capsys):
    _, job_id = jobs.submit(ledger, "span", {}, spawn=False)
    rec = record(ledger, job_id)
    rec.update(state="running", started=_ledger.iso(0))
    (ledger.jobs / f"{job_id}.json").unlink()  # the ledger cleared while it ran
    with _ledger.locked(ledger.jobs):
        _ledger.finish(ledger, rec, 0, "", [], retry=False)
    assert record(ledger, job_id)["state"] == "done"
    assert "was deleted while it ran" in capsys.readouterr().err
    (error,) = read_events(ledger.events, kind="error")
    assert error["id"] == job_id and "deleted" in error["error"]

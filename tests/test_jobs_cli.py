"""`rose jobs` and what `rose status` says about jobs and model spend.

Locks in that `rose jobs` lists recent and active jobs (everything with --all, records with
--json) and shows a failed job's reason and log tail; and that `rose status` counts running,
queued and failed jobs and sums the last 24 hours of judge calls from events.jsonl: measured
tokens and cost only, cached answers apart, a simulated backend's invented figures shown
separately and never added in.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.events import append_event
from rose.files.layout import StoreDir
from rose.inspect.status import spend
from rose.jobs import _ledger
from rose.jobs import queue as jobs
from tests._jobs import make_ledger, record

pytestmark = pytest.mark.graph


@pytest.fixture
def run():
    from rose.cli import app

    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StoreDir:
    return make_ledger(tmp_path, monkeypatch)


def _fail(d: StoreDir, job_id: str, **changes) -> None:
    rec = record(d, job_id)
    rec.update(state="failed", ended=_ledger.iso(time.time()), exit_code=1, **changes)
    (d.jobs / f"{job_id}.json").write_text(json.dumps(rec))


def test_jobs_lists_recent_and_active_and_the_failures_tail(run, ledger: StoreDir):
    assert run("jobs").output.startswith("no recent jobs")
    _, waiting = jobs.submit(ledger, "span", {"n": 1}, spawn=False)
    _, broken = jobs.submit(ledger, "crash", {"n": 2}, spawn=False)
    _, old = jobs.submit(ledger, "span", {"n": 3}, spawn=False)
    _fail(ledger, broken, reason="exited with code 1", tail=["Traceback", "ValueError: bad"])
    rec = record(ledger, old)
    rec.update(state="done", ended="2000-01-01T00:00:00.000+00:00")
    (ledger.jobs / f"{old}.json").write_text(json.dumps(rec))

    res = run("jobs")
    assert res.exit_code == 0, res.output
    assert waiting in res.output and broken in res.output and old not in res.output
    assert f"{broken} failed: exited with code 1\n  | Traceback\n  | ValueError: bad" in res.output
    assert old in run("jobs", "--all").output
    rows = json.loads(run("jobs", "--json").output)
    assert [r["id"] for r in rows] == [broken, waiting]
    assert {"kind", "key", "state", "attempt", "deadline_s", "pid", "exit_code"} <= set(rows[0])


def test_status_shows_jobs_and_the_last_days_spend(run, ledger: StoreDir):
    run("init")
    jobs.submit(ledger, "span", {"n": 1}, spawn=False)
    _fail(ledger, jobs.submit(ledger, "crash", {}, spawn=False)[1], reason="exited with code 1")
    log = ledger.events
    figures = {"input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.01}
    append_event(log, "judge", {"call": "relevance", "cached": False, **figures})
    append_event(log, "judge", {"call": "assess", "cached": False, "error": "BackendTimeout"})
    append_event(log, "judge", {"call": "relevance", "cached": True, **figures})
    sim = {"input_tokens": 500, "output_tokens": 50, "cost_usd": 0.5, "latency_ms": 900}
    append_event(log, "judge", {"call": "relevance", "cached": False, "simulated": sim})
    old = "2000-01-01T00:00:00.000+00:00"
    append_event(log, "judge", {"time": old, "call": "relevance", "cached": False, **figures})

    data = json.loads(run("status", "--json").output)
    assert data["jobs"]["queued"] == 1 and data["jobs"]["failed"] == 1
    assert data["jobs"]["running"] == 0
    assert data["jobs"]["failures"][0]["reason"] == "exited with code 1"
    sp = data["spend"]
    assert (sp["calls"], sp["failed"], sp["cached"]) == (2, 1, 1)
    assert (sp["input_tokens"], sp["output_tokens"], sp["cost_usd"]) == (1000, 200, 0.01)
    assert sp["cost_reported"] is True
    assert sp["simulated"] == {
        "calls": 1,
        **{k: sim[k] for k in ("input_tokens", "output_tokens", "cost_usd")},
    }

    text = run("status").output
    assert "jobs       0 running, 1 queued, 1 failed  (`rose jobs` lists them)" in text
    assert "spend 24h  2 model calls (1 failed), 1 answered from cache: " in text
    assert "1000 in / 200 out tokens, $0.0100" in text
    assert "simulated, not spent: 1 calls, 500 in / 50 out tokens, $0.5000" in text


def test_spend_without_a_reported_cost_says_so(tmp_path: Path):
    log = tmp_path / "events.jsonl"
    append_event(log, "judge", {"cached": False, "input_tokens": 10, "output_tokens": 2})
    sp = spend(log)
    assert sp["calls"] == 1 and sp["cost_usd"] == 0 and sp["cost_reported"] is False
    assert spend(tmp_path / "missing.jsonl")["calls"] == 0


def test_run_runs_the_waiting_jobs_here_and_says_how_each_ended(run, ledger, tmp_path):
    """A job whose model did not answer waited for the runner of the next hook, with no way
    to run it once the model was back."""
    assert run("jobs", "--run").output.startswith("no job waits")
    _, fine = jobs.submit(ledger, "span", {"sleep": 0, "out": str(tmp_path)}, spawn=False)
    _, broken = jobs.submit(ledger, "crash", {}, spawn=False)
    res = run("jobs", "--run")
    assert res.exit_code == 1  # one failed
    assert "running 2 waiting jobs" in res.output
    assert f"{fine} span done" in res.output and f"{broken} crash failed: " in res.output
    assert (tmp_path / f"{fine}.span").exists()
    assert run("jobs", "--run").output.startswith("no job waits")

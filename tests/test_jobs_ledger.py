"""The job ledger under .rose/jobs/: dedupe, the bounded queue, stale runners, pruning, the
redacted log, and the session-end job run through it.

Locks in that submitters racing with the same key make one job; that a done key suppresses
a resubmission while its record is kept and a failed one does not; that a submission past
`jobs.queue_max` is deferred (kept on disk, with its reason, run in submission order when
there is room), never dropped, and starts a runner for the jobs waiting;
that a running job whose runner died is failed (or retried) by the next look at the ledger;
that only old done jobs are pruned; that a private key split over lines never reaches the
log; and that SessionEnd's job is a ledger job whose payload is gone once it is done.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose.errors import RoseError
from rose.events import read_events
from rose.files.layout import StoreDir
from rose.jobs import _ledger, _runner
from rose.jobs import queue as jobs
from tests import _jobkinds
from tests._hookrun import payload, run_hook
from tests._jobs import finished, make_ledger, record, wait_for

QUEUE_ONLY = """
import json, sys
from pathlib import Path
from rose.jobs.queue import submit
from rose.files.layout import StoreDir
sys.stdin.readline()  # start together
out = submit(StoreDir(Path(sys.argv[1]), "project"), "span", {}, key="same", spawn=False)
print(json.dumps(out))
"""


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StoreDir:
    return make_ledger(tmp_path, monkeypatch)


def _set(d: StoreDir, job_id: str, **changes) -> None:
    rec = record(d, job_id)
    rec.update(changes)
    (d.jobs / f"{job_id}.json").write_text(json.dumps(rec))


def test_racing_submitters_with_one_key_make_one_job(ledger: StoreDir):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", QUEUE_ONLY, str(ledger.root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    time.sleep(0.3)  # let every interpreter start, then release them at once
    outs = [json.loads(p.communicate("go\n")[0]) for p in procs]
    assert sorted(o[0] for o in outs) == ["duplicate"] * 7 + ["queued"]
    assert len({o[1] for o in outs}) == 1
    assert len(list(ledger.jobs.glob("*.json"))) == 1


def test_a_done_key_suppresses_and_a_failed_one_does_not(ledger: StoreDir):
    outcome, first = jobs.submit(ledger, "span", {"n": 1}, spawn=False)
    assert outcome == "queued"
    assert jobs.submit(ledger, "span", {"n": 1}, spawn=False) == ("duplicate", first)
    assert jobs.submit(ledger, "span", {"n": 2}, spawn=False)[0] == "queued"  # another key
    assert jobs.submit(ledger, "crash", {"n": 1}, spawn=False)[0] == "queued"  # another kind
    _set(ledger, first, state="done")
    assert jobs.submit(ledger, "span", {"n": 1}, spawn=False) == ("duplicate", first)
    _set(ledger, first, state="failed")
    outcome, again = jobs.submit(ledger, "span", {"n": 1}, spawn=False)
    assert outcome == "queued" and again != first


def test_overflow_is_deferred_never_dropped(ledger, monkeypatch):
    monkeypatch.setenv("ROSE_JOBS_QUEUE_MAX", "3")
    subs = [jobs.submit(ledger, "span", {"n": i}, spawn=False) for i in range(5)]
    assert [o for o, _ in subs] == ["queued"] * 3 + ["deferred"] * 2
    late = record(ledger, subs[3][1])
    assert late["state"] == "deferred" and late["reason"] == jobs.DEFERRED
    assert len(list(ledger.jobs.glob("*.payload"))) == 5  # every input kept
    cfg = _ledger.load_config(ledger)
    order = []
    with _ledger.locked(ledger.jobs):
        while (rec := _ledger.claim(ledger, cfg, 0)) is not None:
            order.append(rec["id"])
    assert order == [i for _, i in subs]  # in submission order, the deferred ones last


def test_a_full_queue_of_jobs_nobody_started_is_drained_by_the_next_submission(
    ledger: StoreDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Jobs queued without a runner must not keep every later job out for good: the
    submission that finds the queue full is deferred, and starts a runner for all of them."""
    monkeypatch.setenv("ROSE_JOBS_QUEUE_MAX", "2")
    ids = [jobs.submit(ledger, "span", {"sleep": 0, "out": str(tmp_path)}, key=f"k{i}",
                       spawn=False)[1] for i in range(2)]  # fmt: skip
    assert record(ledger, ids[0])["reason"] == jobs.UNSTARTED
    outcome, late = jobs.submit(ledger, "span", {"sleep": 0, "out": str(tmp_path)}, key="late")
    assert outcome == "deferred"
    done = [wait_for(lambda i=i: finished(ledger, i), timeout=30) for i in [*ids, late]]
    assert [d["state"] for d in done] == ["done", "done", "done"]


def test_unknown_kinds_are_refused(ledger: StoreDir):
    with pytest.raises(RoseError, match="unknown job kind 'nope'"):
        jobs.submit(ledger, "nope", {})


def test_a_job_whose_runner_died_is_failed_or_retried(ledger: StoreDir):
    _, lost = jobs.submit(ledger, "crash", {}, spawn=False)
    _, again = jobs.submit(ledger, "flaky", {}, spawn=False)
    for job_id in (lost, again):  # claimed by a runner on slot 0 that no longer holds it
        _set(ledger, job_id, state="running", slot=0, runner=1, pid=None, started="x")
    (ledger.jobs / f"{lost}.log").write_text("working\n")
    listed = {r["id"]: r for r in jobs.jobs(ledger)}
    assert listed[lost]["state"] == "failed" and "runner stopped" in listed[lost]["reason"]
    assert listed[lost]["tail"] == ["working"]
    assert (ledger.jobs / f"{lost}.payload").exists()
    assert listed[again]["state"] == "queued" and listed[again]["attempt"] == 2


def test_only_old_done_jobs_are_pruned(ledger: StoreDir):
    ids = [jobs.submit(ledger, "span", {"n": i}, spawn=False)[1] for i in range(3)]
    old = "2000-01-01T00:00:00.000+00:00"
    _set(ledger, ids[0], state="done", ended=old)
    _set(ledger, ids[1], state="failed", ended=old)
    _set(ledger, ids[2], state="done", ended=_ledger.iso(time.time()))
    _runner.drain(ledger, jobs.kinds())  # nothing queued: the runner prunes and lets go of its slot
    left = {p.stem for p in ledger.jobs.glob("*.json")}
    assert left == {ids[1], ids[2]}
    assert [r["id"] for r in jobs.jobs(ledger)] == [ids[2], ids[1]]  # newest first
    _set(ledger, ids[2], ended=_ledger.iso(time.time() - 2 * 86400))
    assert [r["id"] for r in jobs.jobs(ledger)] == [ids[1]]
    assert len(jobs.jobs(ledger, everything=True)) == 2


def test_the_log_is_redacted_before_it_is_written(tmp_path: Path):
    log = _runner.Log(tmp_path / "job.log")
    log.line(f"token={_jobkinds.SECRET}")
    for line in _jobkinds.PEM.splitlines()[:2]:
        log.line(line)
    assert "MIIE" not in (tmp_path / "job.log").read_text()  # held back: the key is open
    for line in _jobkinds.PEM.splitlines()[2:]:
        log.line(line)
    log.line("after the key")
    log.close()
    text = (tmp_path / "job.log").read_text()
    assert _jobkinds.SECRET not in text and "MIIE" not in text and "Zr4m" not in text
    assert text.splitlines()[-1] == "after the key" and list(log.tail)[-1] == "after the key"


def test_the_ledger_is_machine_local(ledger: StoreDir):
    jobs.submit(ledger, "span", {}, spawn=False)
    assert "jobs/" in (ledger.root / ".gitignore").read_text().splitlines()
    assert (ledger.jobs / ".gitignore").read_text() == "*\n"


def test_session_end_runs_through_the_ledger(store, project: Path):
    data = payload("session-end", project)
    assert run_hook("session-end", data)[:2] == (0, None)
    [path] = store.primary.jobs.glob("*.json")
    rec = wait_for(lambda: finished(store.primary, path.stem))
    assert rec["kind"] == "session-end" and rec["state"] == "done" and rec["key"] == "abc123:0"
    assert not list(store.primary.jobs.glob("*.payload"))
    assert read_events(store.primary.events, kind="session-end")[-1]["session"] == "abc123"
    assert run_hook("session-end", data)[:2] == (0, None)  # the same end again: a no-op
    assert len(list(store.primary.jobs.glob("*.json"))) == 1

"""The job runner, run as hooks run it: real submitters, runners and jobs as processes.

Locks in that killing the hook that started a job leaves nothing of the job behind once it
ends; that ten jobs submitted at once never run more than `jobs.max_concurrent` (2) at a
time; that a crash is recorded with its exit code and log tail, its payload kept and its
output redacted, under ROSE_CHILD=1; that a job past its deadline is killed with its whole
process group; and that a kind marked safe to retry gets exactly one second attempt.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose.events import read_events
from rose.files.layout import StoreDir
from rose.jobs import queue as jobs
from tests import _jobkinds
from tests._jobs import finished, make_ledger, record, wait_for

SUBMIT = """
import json, sys, time
from pathlib import Path
from rose.jobs.queue import submit
from rose.files.layout import StoreDir
out = submit(StoreDir(Path(sys.argv[1]), "project"), sys.argv[2], json.loads(sys.argv[3]))
print(json.dumps(out), flush=True)
time.sleep(float(sys.argv[4]))
"""


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StoreDir:
    return make_ledger(tmp_path, monkeypatch)


def submitter(d: StoreDir, kind: str, payload: dict, *, linger_s: float = 0) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SUBMIT, str(d.root), kind, json.dumps(payload), str(linger_s)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its parent to reap it does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def test_killing_the_hook_leaves_nothing_of_the_job_behind(ledger: StoreDir, tmp_path: Path):
    pids = tmp_path / "pids"
    hook = submitter(ledger, "orphan", {"pids": str(pids)}, linger_s=60)
    outcome, job_id = json.loads(hook.stdout.readline())
    assert outcome == "queued"
    os.killpg(hook.pid, signal.SIGKILL)  # as a host kills a hook past its timeout
    hook.communicate()
    rec = wait_for(lambda: finished(ledger, job_id))
    assert rec["state"] == "done" and rec["exit_code"] == 0
    job_pid, grandchild = map(int, pids.read_text().split())
    assert job_pid == rec["pid"]
    gone = lambda: not any(alive(p) for p in (rec["runner"], job_pid, grandchild))  # noqa: E731
    assert wait_for(gone, timeout=3)


def test_ten_jobs_at_once_never_run_more_than_two_together(ledger: StoreDir, tmp_path: Path):
    spans = tmp_path / "spans"
    spans.mkdir()
    hooks = [
        submitter(ledger, "span", {"sleep": 0.1, "out": str(spans), "n": i}) for i in range(10)
    ]
    ids = [json.loads(h.communicate()[0])[1] for h in hooks]
    assert len(set(ids)) == 10
    for job_id in ids:
        assert wait_for(lambda j=job_id: finished(ledger, j))["state"] == "done"
    edges = []
    for path in spans.glob("*.span"):
        start, end = map(float, path.read_text().split())
        edges += [(start, 1), (end, -1)]
    running = most = 0
    for _, step in sorted(edges, key=lambda e: (e[0], e[1])):  # an end before a start at a tie
        running += step
        most = max(most, running)
    assert len(edges) == 20 and most <= 2
    assert {record(ledger, j)["slot"] for j in ids} == {0, 1}  # and two runners did run


def test_a_crash_is_recorded_redacted_and_keeps_its_payload(ledger: StoreDir):
    outcome, job_id = jobs.submit(ledger, "crash", {"what": "anything"})
    rec = wait_for(lambda: finished(ledger, job_id))
    assert rec["state"] == "failed" and rec["exit_code"] == 1 and rec["attempt"] == 1
    assert rec["reason"] == "RuntimeError: boom"  # the job's own account, not its exit code
    assert rec["tail"][-1] == "[rose] failed: RuntimeError: boom"
    assert (ledger.jobs / f"{job_id}.payload").exists()
    log = (ledger.jobs / f"{job_id}.log").read_text()
    assert "ROSE_CHILD=1" in log and "Traceback" in log
    assert _jobkinds.SECRET not in log and "MIIEowIBAAKCAQEA" not in log
    assert "[REDACTED:private-key]" in log
    failed = [e for e in read_events(ledger.events, kind="job") if e["id"] == job_id]
    assert [e["state"] for e in failed] == ["failed"]
    assert jobs.submit(ledger, "crash", {"what": "anything"}, spawn=False)[0] == "queued"


def test_past_its_deadline_a_job_is_killed_with_its_group(ledger: StoreDir, tmp_path: Path):
    pids = tmp_path / "pids"
    started = time.monotonic()
    _, job_id = jobs.submit(ledger, "hang", {"pids": str(pids)})
    rec = wait_for(lambda: finished(ledger, job_id))
    deadline_s = _jobkinds.KINDS["hang"].deadline_s  # the job itself sleeps 60 s
    assert time.monotonic() - started < 20 * deadline_s
    assert rec["state"] == "failed" and f"deadline of {deadline_s}s" in rec["reason"]
    assert rec["exit_code"] == -signal.SIGTERM
    _, grandchild = map(int, pids.read_text().split())
    assert wait_for(lambda: not alive(grandchild), timeout=3)


def test_a_kind_safe_to_retry_runs_once_more(ledger: StoreDir):
    _, job_id = jobs.submit(ledger, "flaky", {})
    rec = wait_for(lambda: finished(ledger, job_id))
    assert rec["state"] == "done" and rec["attempt"] == 2
    assert rec["previous"]["reason"] == "RuntimeError: first attempt fails"
    assert "RuntimeError: first attempt fails" in rec["previous"]["tail"]
    assert not (ledger.jobs / f"{job_id}.payload").exists()
    log = (ledger.jobs / f"{job_id}.log").read_text()
    assert "[rose] attempt 2" in log and "second attempt works" in log
    states = [e["state"] for e in read_events(ledger.events, kind="job") if e["id"] == job_id]
    assert states == ["retry", "done"]

"""Job kinds for the tests only: the registry adds them when ROSE_TEST_JOB_KINDS names this
module. Each records what the tests check in files named by its payload."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from rose.jobs.queue import JobContext, Kind

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAwJt1tLw6Yx9s2mQw3S5rY8Xb7kNp0aVq\n"
    "Zr4mX2cQ9bT8uL1eW6yF3dH5jK7nP0sA2gC4iE6oR8tU1vX\n"
    "-----END RSA PRIVATE KEY-----"
)
SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"


def span(job: JobContext) -> None:
    """Note when it started and ended, so a test can measure how many ran at once."""
    start = time.time()
    time.sleep(float(job.payload["sleep"]))
    out = Path(job.payload["out"]) / f"{job.record['id']}.span"
    out.write_text(f"{start} {time.time()}")


def _grandchild(job: JobContext) -> None:
    """Start a process in the job's group and note its pid: it must not outlive the job."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Path(job.payload["pids"]).write_text(f"{os.getpid()} {child.pid}")


def orphan(job: JobContext) -> None:
    _grandchild(job)
    time.sleep(0.2)


def hang(job: JobContext) -> None:
    _grandchild(job)
    time.sleep(60)


def crash(job: JobContext) -> None:
    print(f"ROSE_CHILD={os.environ.get('ROSE_CHILD')}", flush=True)
    print(f"calling with api_key={SECRET}", flush=True)
    print(PEM, file=sys.stderr, flush=True)
    raise RuntimeError("boom")


def flaky(job: JobContext) -> None:
    if job.attempt == 1:
        raise RuntimeError("first attempt fails")
    print("second attempt works")


def priority(job: JobContext) -> None:
    """Note the job's nice value and its session group's, as the kernel reports them."""
    group = Path("/proc/self/autogroup")
    line = group.read_text().strip() if group.exists() else ""
    end = time.monotonic() + 5  # a group change the kernel turned away is tried again
    while line and int(line.rsplit("nice", 1)[1]) == 0 and time.monotonic() < end:
        time.sleep(0.02)
        line = group.read_text().strip()
    Path(job.payload["out"]).write_text(f"{os.getpriority(os.PRIO_PROCESS, 0)}\n{line}")


KINDS = {
    "span": Kind(span, deadline_s=20),
    "orphan": Kind(orphan, deadline_s=20),
    "hang": Kind(hang, deadline_s=0.5),
    "crash": Kind(crash, deadline_s=20),
    "flaky": Kind(flaky, deadline_s=20, retry=True),
    "priority": Kind(priority, deadline_s=20),
}

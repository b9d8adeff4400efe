"""The runner: holds one of the store's slots and runs queued jobs until none is left, each
in its own process group, its output redacted into its log, killed at its deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rose.files.layout import StoreDir
from rose.jobs import _ledger as ledger
from rose.redaction.redact import redact

if TYPE_CHECKING:
    from rose.jobs.queue import Kind

_TERM_GRACE_S = 2.0  # between SIGTERM and SIGKILL when a job passes its deadline
_PIPE_WAIT_S = 2.0  # after the job's group is killed, for its output to drain
_LOG_MAX_BYTES = 1_000_000
_LINE_MAX = 65536
_HOLD_MAX = 200  # lines held back while a private key block is open


def drain(store_dir: StoreDir, registry: dict[str, Kind]) -> None:
    """Hold a slot and run queued jobs until none is left; return at once if no slot is free."""
    cfg = ledger.load_config(store_dir)
    d = store_dir.jobs
    with ledger.locked(d):
        taken = ledger.take_slot(d, cfg.jobs.max_concurrent)
        if taken is None:
            return  # every slot's holder looks at the queue again before it lets go
        slot, fd = taken
        ledger.reap(store_dir, registry, mine=slot)
    try:
        while True:
            with ledger.locked(d):
                rec = ledger.claim(store_dir, cfg, slot)
                if rec is None:
                    ledger.prune(d, cfg.jobs.keep_days)
                    os.close(fd)  # let go inside the lock, where the queue was seen empty
                    fd = -1
                    return
            _run(store_dir, rec, registry)
    finally:
        if fd >= 0:
            os.close(fd)


def _run(store_dir: StoreDir, rec: dict, registry: dict[str, Kind]) -> None:
    """Run one job in its own process group with ROSE_CHILD=1, and record how it ended."""
    d, job_id = store_dir.jobs, str(rec["id"])
    log = Log(d / f"{job_id}.log")
    if int(rec.get("attempt", 1)) > 1:
        log.line(f"[rose] attempt {rec['attempt']} of job {job_id}")
    give_up = time.monotonic() + float(rec["deadline_s"])
    argv = [sys.executable, "-m", "rose.jobs.queue", "exec", str(store_dir.root), store_dir.scope]
    proc = subprocess.Popen(
        [*argv, job_id],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "ROSE_CHILD": "1", "ROSE_JOB": job_id},
    )
    with ledger.locked(d):
        rec["pid"] = proc.pid
        ledger.save(d, rec)
    assert proc.stdout is not None
    pump = threading.Thread(target=log.pump, args=(proc.stdout,), daemon=True)
    pump.start()
    reason = ""
    try:
        proc.wait(timeout=max(0.0, give_up - time.monotonic()))
    except subprocess.TimeoutExpired:
        reason = f"passed its deadline of {rec['deadline_s']:g}s and was killed"
    finally:
        if proc.poll() is None:  # the deadline, or the runner itself was told to stop
            _stop(proc)
        ledger.killpg(proc.pid, signal.SIGKILL)  # whatever it started and left behind
        pump.join(_PIPE_WAIT_S)
        log.close()
        if not pump.is_alive():  # else something outside the group holds the pipe open
            proc.stdout.close()
    code = proc.returncode
    if not reason and code:
        reason = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
    spec = registry.get(str(rec.get("kind")))
    with ledger.locked(d):
        ledger.finish(store_dir, rec, code, reason, log.tail, retry=bool(spec and spec.retry))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    ledger.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=_TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        ledger.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class Log:
    """A job's log, redacted line by line before a byte of it reaches the disk.

    A private key block spanning lines is held back until its END line (or the end of the
    output) and redacted whole, so no line of it is written in the clear; if the runner dies
    meanwhile the held lines are lost, never leaked. Beyond _LOG_MAX_BYTES lines are counted,
    not written; the last lines are kept in memory either way, for the record's tail.
    """

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.size = os.fstat(self.fd).st_size
        self.held: list[str] = []
        self.tail: deque[str] = deque(maxlen=ledger.TAIL_LINES)
        self.dropped = 0
        self.lock = threading.Lock()

    def pump(self, stream: IO[bytes]) -> None:
        for raw in iter(lambda: stream.readline(_LINE_MAX), b""):
            self.line(raw.decode("utf-8", "replace").rstrip("\r\n"))

    def line(self, text: str) -> None:
        with self.lock:
            if self.fd < 0:
                return
            if self.held or "-----BEGIN" in text:
                self.held.append(text)
                if "-----END" in text or len(self.held) >= _HOLD_MAX:
                    self._flush()
                return
            self._write(redact(text))

    def close(self) -> None:
        with self.lock:
            if self.fd < 0:
                return
            self._flush()
            if self.dropped:
                note = f"[rose] {self.dropped} more lines not kept: the log is capped at 1 MB\n"
                os.write(self.fd, note.encode())
            os.close(self.fd)
            self.fd = -1

    def _flush(self) -> None:
        if self.held:
            block, self.held = "\n".join(self.held), []
            self._write(redact(block))

    def _write(self, text: str) -> None:
        self.tail.extend(text.split("\n"))
        data = (text + "\n").encode("utf-8")
        if self.size + len(data) > _LOG_MAX_BYTES:
            self.dropped += text.count("\n") + 1
            return
        os.write(self.fd, data)
        self.size += len(data)

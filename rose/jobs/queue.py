"""One runner for all detached work: a ledger under `.rose/jobs/`, a cap per store, deadlines.

A hook that must return at once calls `submit()`. Under the ledger lock it either finds the
same kind and key already queued, running or done (a no-op), finds `jobs.queue_max` jobs
already waiting (the job is dropped and a `job` event says why), or writes the payload and a
`queued` record. Then it starts a runner in a session of its own and returns.

A runner (`python -m rose.jobs.queue drain STORE SCOPE`) takes one of `jobs.max_concurrent`
slots and runs queued jobs one after another until none is left; with every slot taken it
exits at once, because the slots' holders will run the job. So the queue needs no daemon.
Each job runs as `python -m rose.jobs.queue exec ...` in a process group of its own with
ROSE_CHILD=1 (ROSE's hooks stay quiet in anything it spawns); the runner redacts its output
line by line into its log, kills the group at the deadline and again when the job ends (so
nothing it started outlives it), and records the outcome. A failed job keeps its payload and
runs once more if its kind says a retry is safe.

Files, all machine-local and all written through redaction:

    jobs/.lock         flock'd around every read-decide-write of the ledger
    jobs/slot-<n>      flock'd by a runner while it runs jobs, n < jobs.max_concurrent
    jobs/<id>.json     a job's record (kind, key, state, attempt, pid, slot, exit code ...)
    jobs/<id>.payload  its input: deleted when it is done, kept when it failed
    jobs/<id>.log      its stdout and stderr

Why the cap and the queue are race-free: a slot is held by an flock, which the kernel drops
when its holder dies however it dies, so at most `max_concurrent` runners exist and none
is ever counted stale by mistake. Slots are taken, probed and released only under the ledger
lock, and a runner releases its slot in the same critical section in which it found the
queue empty. A submission writes its record under that lock before it starts a runner, so
either a slot holder will still look at the queue, or a slot is free for the new runner.

How long a key suppresses a resubmission: while its job is queued or running, and once done
for as long as the record is kept (`jobs.keep_days`, after which it is pruned and the key may
run again). A failed key suppresses nothing, so the next submission tries afresh; failed
records are never pruned, since they hold the only copy of their payload.

Adding a kind is one line in `KINDS`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.disk.atomic import write_json
from rose.errors import RoseError
from rose.events import append_event, now_iso
from rose.files.layout import StoreDir
from rose.jobs import _ledger as ledger
from rose.jobs import bodies
from rose.redaction.redact import redact

if TYPE_CHECKING:
    from rose.store.facade import Store


class Kind:
    """A kind of job: the function doing the work, taking a JobContext (`rose.jobs.bodies`);
    how many model calls it makes one after another at most, as judgements and as calls
    that write lessons (`calls`, `writes`: its deadline follows from theirs, `deadline`),
    or a deadline of its own in seconds (`deadline_s`, for work that asks no model); and
    whether a second attempt after a crash or a passed deadline is safe (only when the
    function is idempotent)."""

    __slots__ = ("calls", "deadline_s", "retry", "target", "writes")

    def __init__(
        self,
        target: Callable[[JobContext], None],
        *,
        calls: int = 0,
        writes: int = 0,
        deadline_s: float | None = None,
        retry: bool = False,
    ):
        self.target = target
        self.calls = calls
        self.writes = writes
        self.deadline_s = deadline_s
        self.retry = retry


def deadline(calls: int, writes: int, cfg: Any) -> float:
    """Seconds a job making `calls` judgements and `writes` writing calls may run: each call
    its deadline, retries and backoffs included (`calls.*`), and at least `jobs.deadline_s`."""
    pace = cfg.calls
    tries = 1 + pace.retries
    backoff = sum(pace.backoff_s * 2**i for i in range(pace.retries))
    each = (calls * pace.judge_s + writes * pace.write_s) * tries + (calls + writes) * backoff
    return max(float(cfg.jobs.deadline_s), each)


#: Every kind of detached job, one line each. Calls: a session end judges its units (a few),
#: reflects once, and reconciles what it found (scope, related, reconcile per lesson).
KINDS: dict[str, Kind] = {
    "session-end": Kind(bodies.session_end, calls=12, writes=1, retry=True),
    "absorb": Kind(bodies.absorb, calls=6, retry=True),
    "reflect": Kind(bodies.reflect, calls=9, writes=1),
    "reflect-fork": Kind(bodies.reflect_fork, calls=6, writes=3),
    "restore": Kind(bodies.restore, calls=3),
    "reconcile": Kind(bodies.reconcile, calls=12),
    "compress": Kind(bodies.compress, calls=12, writes=3),
    "counterfactual": Kind(bodies.counterfactual, calls=12),
    "merge": Kind(bodies.merge, calls=12, writes=2),
    "relevance-late": Kind(bodies.relevance_late, calls=4),
}

#: A module whose own `KINDS` join these; only the tests set it.
TEST_KINDS_ENV = "ROSE_TEST_JOB_KINDS"

ACTIVE = ("queued", "deferred", "running")
WAITING = ("queued", "deferred")
_ALARM_GRACE_S = 10  # a job outlives a runner that died by at most its deadline plus this
_RECENT_S = 86400.0  # `rose jobs` shows what finished within a day

_HELD: list[bool] = []  # while non-empty, `submit` only queues (`held`)


def kinds() -> dict[str, Kind]:
    """The registry, with the test kinds when TEST_KINDS_ENV names their module."""
    out = dict(KINDS)
    extra = os.environ.get(TEST_KINDS_ENV)
    if extra:
        import importlib

        out.update(importlib.import_module(extra).KINDS)
    return out


class JobContext:
    """What a job's function is handed: its store folder, its payload and its own record."""

    __slots__ = ("payload", "record", "store_dir")

    def __init__(self, store_dir: StoreDir, record: dict, payload: Any):
        self.store_dir = store_dir
        self.record = record
        self.payload = payload

    @property
    def attempt(self) -> int:
        return int(self.record.get("attempt", 1))

    def store(self) -> Store:
        """The Store this job belongs to (opening it loads the settings, not the graph)."""
        from rose.store.facade import Store

        return Store.open(self.store_dir.root.parent)


# -- submitting ---------------------------------------------------------------------------------


def submit(
    store_dir: StoreDir,
    kind: str,
    payload: Any,
    *,
    key: str | None = None,
    spawn: bool = True,
) -> tuple[str, str]:
    """Queue a job and start a runner for it; returns (outcome, job id).

    The outcome is "queued"; "deferred" (`jobs.queue_max` jobs already wait: it is kept on
    disk and runs when the queue has room, in submission order); "duplicate" (the same kind
    and `key` is queued, running or done: the id is that job's); or "coalesced" (work for
    the same session already waits and now covers this too: `_coalesce`; the id is that
    job's). `key` defaults to a hash of the payload. `spawn=False` only queues (tests,
    batches, a job that waits for the model): its record says so in `reason`.
    """
    spec = kinds().get(kind)
    if spec is None:
        raise RoseError(f"unknown job kind {kind!r}; known kinds: {', '.join(sorted(kinds()))}")
    key = redact(key if key is not None else _payload_key(payload))
    d = store_dir.jobs
    with ledger.locked(d):
        records = ledger.records(d)
        for rec in records:
            if (rec.get("kind"), rec.get("key")) == (kind, key) and rec.get("state") != "failed":
                return "duplicate", str(rec["id"])
        joined = _coalesce(store_dir, records, kind, key, payload)
        if joined:
            return "coalesced", joined
        waiting = sum(rec.get("state") in WAITING for rec in records)
        job_id = _new_id(kind)
        rec = _new_record(job_id, kind, key, spec)
        # queue_max >= 1, so the settings (pydantic, yaml) load only when something waits
        if waiting and waiting >= ledger.load_config(store_dir).jobs.queue_max:
            rec.update(state="deferred", reason=DEFERRED)
        elif not spawn:
            rec["reason"] = UNSTARTED
        write_json(d / f"{job_id}.payload", payload)
        ledger.save(d, rec)
    if spawn and not _HELD:
        _spawn_runner(store_dir)
    return ("deferred" if rec["state"] == "deferred" else "queued"), job_id


#: Why a job waits beyond the queue, and why one waits with no runner started for it.
DEFERRED = "the queue was full (jobs.queue_max): it runs when there is room"
UNSTARTED = "waits for the next runner a hook starts (the model did not answer just now)"
#: Kinds whose work for one session coalesces while it waits, and what each covers: a
#: session end does everything an absorb does.
_COVERS = {"absorb": ("absorb",), "session-end": ("session-end", "absorb"), "reflect": ("reflect",)}


def _session_of(payload: Any) -> str:
    if not isinstance(payload, dict):
        return ""
    return str(payload.get("session") or payload.get("session_id") or "")


def _coalesce(store_dir: StoreDir, records: list[dict], kind: str, key: str, payload: Any) -> str:
    """Fold this submission into work already waiting (queued or deferred, not running) for
    the same session, under the ledger lock; the id it joined, or "" when none.

    An absorb joins a waiting absorb or session end (which covers it); a session end takes
    over a waiting absorb (its record becomes the session end's); a reflection joins a
    waiting reflection, which then reads both stretches of the transcript."""
    sid = _session_of(payload)
    if not sid or kind not in _COVERS:
        return ""
    d = store_dir.jobs
    for rec in records:
        if rec.get("state") not in WAITING or _session_of(_payload(d, rec)) != sid:
            continue
        theirs = str(rec.get("kind"))
        if theirs in _COVERS[kind]:  # ours does theirs' work too: theirs becomes ours
            merged = _merged(kind, _payload(d, rec), payload) if theirs == kind else payload
            write_json(d / f"{rec['id']}.payload", merged)
            spec = kinds()[kind]
            rec.update(
                kind=kind, key=key, calls=[spec.calls, spec.writes], deadline_s=spec.deadline_s
            )
            ledger.save(d, rec)
            return str(rec["id"])
        if kind in _COVERS.get(theirs, ()):  # theirs does ours
            return str(rec["id"])
    return ""


def _payload(d: Path, rec: dict) -> Any:
    try:
        return json.loads((d / f"{rec['id']}.payload").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _merged(kind: str, old: Any, new: Any) -> Any:
    """Two waiting payloads of one kind for one session as one: the newer, and for a
    reflection the stretch from the earlier start to the later end."""
    if kind != "reflect" or not isinstance(old, dict):
        return new
    ends = [old.get("end"), new.get("end")]
    end = None if None in ends else max(int(e) for e in ends)
    return {**new, "start": min(int(old.get("start") or 0), int(new.get("start") or 0)), "end": end}


def _new_record(job_id: str, kind: str, key: str, spec: Kind) -> dict:
    return {
        "id": job_id,
        "kind": kind,
        "key": key,
        "state": "queued",
        "attempt": 1,
        "submitted": now_iso(),
        "deadline_s": spec.deadline_s,  # None until a runner starts it: then from its calls
        "calls": [spec.calls, spec.writes],
        "deadline": None,
        "started": None,
        "ended": None,
        "seconds": None,
        "runner": None,
        "slot": None,
        "pid": None,
        "exit_code": None,
        "reason": "",
        "tail": [],
    }


def _new_id(kind: str) -> str:
    """UTC submission time to the microsecond (so ids sort in submission order), kind, noise."""
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now % 1 * 1e6):06d}"
    return f"{stamp}-{kind}-{os.urandom(3).hex()}"


def _payload_key(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _spawn_runner(store_dir: StoreDir) -> None:
    """Start a runner in a session of its own (`rose.processes.detach`): neither the hook's exit nor
    a kill of the hook's process group reaches it."""
    from rose.processes import detach

    argv = detach.python("rose.jobs.queue", "drain", str(store_dir.root), store_dir.scope)
    detach.spawn(argv, {**os.environ, "ROSE_CHILD": "1"})


@contextlib.contextmanager
def held() -> Iterator[None]:
    """While inside, `submit` starts no runner: the caller runs what waits with `run_here`
    (the demo and the benchmark drive the hooks in one process, and want each hook's jobs
    done before the next prompt, as a quick background job would be)."""
    _HELD.append(True)
    try:
        yield
    finally:
        _HELD.pop()


def run_here(store_dir: StoreDir) -> int:
    """Run the store's queued jobs in this process, oldest first, until none waits, jobs
    they queue included; each recorded as the runner records it. Returns how many ran.

    A job that raises is failed (or queued once more, if its kind allows a retry) with the
    error as its reason; nothing else is caught. With every slot taken it runs nothing."""

    d, ran = store_dir.jobs, 0
    if not d.is_dir():
        return 0
    registry = kinds()
    cfg = ledger.load_config(store_dir)
    with ledger.locked(d):
        taken = ledger.take_slot(d, cfg.jobs.max_concurrent)
    if taken is None:
        return 0
    slot, fd = taken
    try:
        while True:
            with ledger.locked(d):
                rec = ledger.claim(store_dir, cfg, slot)
            if rec is None:
                return ran
            spec = registry.get(str(rec.get("kind")))
            code, reason = 0, ""
            try:
                if spec is None:
                    raise RoseError(f"unknown job kind {rec.get('kind')!r}")
                payload = json.loads((d / f"{rec['id']}.payload").read_text(encoding="utf-8"))
                spec.target(JobContext(store_dir, rec, payload))
            except Exception as exc:
                code, reason = 1, f"{type(exc).__name__}: {str(exc)[:300]}"
            with ledger.locked(d):
                ledger.finish(store_dir, rec, code, reason, [reason] if reason else [],
                              retry=bool(spec and spec.retry))  # fmt: skip
            ran += 1
    finally:
        os.close(fd)


# -- reading it ---------------------------------------------------------------------------------


def jobs(store_dir: StoreDir, *, everything: bool = False) -> list[dict]:
    """The ledger's records, newest first: queued, running, failed, and done within a day;
    `everything` adds older finished ones. Running jobs whose runner died are failed first."""
    d = store_dir.jobs
    if not d.is_dir():
        return []
    with ledger.locked(d):
        again = ledger.reap(store_dir, kinds())
        records = ledger.records(d)
    if again and not _HELD:  # a job its dead runner left: run it now, not at the next hook
        _spawn_runner(store_dir)
    if not everything:
        recent = time.time() - _RECENT_S
        records = [
            r for r in records if r.get("state") != "done" or ledger.epoch(r.get("ended")) >= recent
        ]
    return records[::-1]


def retry(store_dir: StoreDir, job_id: str = "") -> list[str]:
    """Queue failed jobs again (those whose id starts with `job_id`; all when empty) with the
    input they kept, and start a runner; the ids queued. Their attempt counts on."""
    d = store_dir.jobs
    if not d.is_dir():
        return []
    queued: list[str] = []
    with ledger.locked(d):
        for rec in ledger.records(d):
            if rec.get("state") != "failed" or not str(rec["id"]).startswith(job_id):
                continue
            if not (d / f"{rec['id']}.payload").exists():
                continue  # nothing kept to run it with
            ledger.requeue(rec)
            ledger.save(d, rec)
            event = {"id": rec["id"], "job": rec.get("kind"), "state": "retry", "by": "hand"}
            append_event(store_dir.events, "job", event)
            queued.append(str(rec["id"]))
    if queued and not _HELD:
        _spawn_runner(store_dir)
    return queued


#: How many of the latest session ends `unlearnt` looks at.
LAST_ENDS = 5


def unlearnt(store_dir: StoreDir, records: list[dict] | None = None) -> list[dict]:
    """The session ends among the last `LAST_ENDS` whose learning failed, newest first: each
    its job id, the session (from its key) and the reason."""
    records = jobs(store_dir, everything=True) if records is None else records
    ends = [r for r in records if r.get("kind") == "session-end"][:LAST_ENDS]
    return [
        {"id": r["id"], "session": str(r.get("key", "")).rsplit(":", 1)[0], "reason": r["reason"]}
        for r in ends
        if r.get("state") == "failed"
    ]


def summary(store_dir: StoreDir) -> dict:
    """Counts by state, and the newest failures with their reasons (for `rose status`)."""
    records = jobs(store_dir, everything=True)
    counts = {s: sum(r.get("state") == s for r in records) for s in (*ACTIVE, "failed", "done")}
    failed = [r for r in records if r.get("state") == "failed"][:3]
    return {
        **counts,
        "failures": [
            {"id": r["id"], "kind": r.get("kind"), "ended": r.get("ended"), "reason": r["reason"]}
            for r in failed
        ],
        "unlearnt": unlearnt(store_dir, records),
    }


# -- the job's own process --------------------------------------------------------------------


def _exec(store_dir: StoreDir, job_id: str) -> int:
    """The job's own process: look up its kind and call its function with the payload."""

    d = store_dir.jobs
    rec = ledger.read(d / f"{job_id}.json")
    if rec is None:
        print(f"rose: no readable record {d / (job_id + '.json')}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGALRM, _end_group)
    signal.alarm(int(float(rec["deadline_s"])) + _ALARM_GRACE_S)  # only if the runner is gone
    spec = kinds().get(str(rec.get("kind")))
    if spec is None:
        print(f"rose: unknown job kind {rec.get('kind')!r}", file=sys.stderr)
        return 2
    payload = json.loads((d / f"{job_id}.payload").read_text(encoding="utf-8"))
    try:
        spec.target(JobContext(store_dir, rec, payload))
    except Exception as exc:
        import traceback

        traceback.print_exc()  # into the job's log, redacted by the runner
        detail = str(exc).splitlines()[0][:300] if str(exc) else ""
        print(f"{ledger.FAILED}{type(exc).__name__}: {detail}", flush=True)
        return 1
    return 0


def _end_group(signum: int, frame: object) -> None:
    """Past the deadline with no runner to end it: end the job and all it started."""
    os.killpg(os.getpgrp(), signal.SIGKILL)


# -- the kinds ----------------------------------------------------------------------------------


def prune_sessions(folder: Path, *, max_age_days: float = 14, keep=None) -> int:
    """Delete session scratch untouched for `max_age_days`: it would only pile up.

    A session log is absorbed into episodes before it goes (`keep(session)` is called
    first; its episodes are the record, the log only scratch).
    """
    cutoff = time.time() - max_age_days * 86400
    removed = 0
    for path in [*folder.glob("*.json"), *folder.glob("*.jsonl"), *folder.glob("*.log")]:
        try:
            if path.stat().st_mtime >= cutoff:
                continue
            if path.suffix == ".log" and keep is not None:
                try:
                    keep(path.stem)
                except RoseError:
                    continue  # not absorbed (a locked or broken store): keep it for next time
            path.unlink()
            removed += 1
        except OSError:
            continue
    return removed


# -- entry point --------------------------------------------------------------------------------

USAGE = (
    "usage: python -m rose.jobs.queue drain STORE SCOPE | exec STORE SCOPE JOB_ID\n"
    "Started by rose itself, not by hand; `rose jobs` lists the jobs."
)


def _stop_on_term(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # so the runner kills its job's group on the way out


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "drain":
        store_dir = StoreDir(Path(argv[1]), argv[2])
        signal.signal(signal.SIGTERM, _stop_on_term)
        try:
            from rose.jobs._runner import drain

            drain(store_dir, kinds())
        except Exception as exc:  # nobody reads a runner's stderr: the event log must say it
            detail = str(exc).splitlines()[0][:200] if str(exc) else ""
            with contextlib.suppress(OSError):
                append_event(
                    store_dir.events,
                    "error",
                    {"job-runner": "drain", "error": type(exc).__name__, "detail": detail},
                )
            return 1
        return 0
    if len(argv) == 4 and argv[0] == "exec":
        return _exec(StoreDir(Path(argv[1]), argv[2]), argv[3])
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    from rose.jobs.queue import main as _main  # the module proper, not a second copy as __main__
    from rose.processes.detach import background

    background()  # the runner and each job it starts (a session of its own) yield to prompts

    sys.exit(_main(sys.argv[1:]))

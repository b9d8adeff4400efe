"""Work nobody waits for yields the CPU to the prompt hook: `rose.processes.detach.background`.

Locks in that a process leading its own session lowers its nice value and its session's
group (where the kernel groups tasks by session, a nice value alone weighs nothing against
the user's terminal); that a process in its starter's session never touches that group
(it is the user's); that a lower priority is never raised; that a group change the kernel
turns away for now is tried again, for a process and for its child; that a detached job
and the model CLI a job starts (in a session of its own) run at that priority; that a
model CLI started from the foreground keeps the foreground's; and that the graph server,
which the prompt hook's slow path waits on, answers a job at the priority of the user who
started it: a job lowers itself, never the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose.files.layout import StoreDir
from rose.graph import server
from rose.jobs import queue as jobs
from rose.processes import detach
from rose.store.facade import Store
from tests._jobs import REPO, finished, make_ledger, wait_for
from tests._kept import own_folder

GROUPED = Path("/proc/self/autogroup").exists()
needs_groups = pytest.mark.skipif(not GROUPED, reason="the kernel does not group by session")

REPORT = """
import json, os, sys
from rose.processes import detach
{before}
detach.background()
{after}
path = "/proc/self/autogroup"
group = open(path).read().strip() if os.path.exists(path) else ""
print(json.dumps({{"nice": os.getpriority(os.PRIO_PROCESS, 0), "group": group,
                   "leader": os.getsid(0) == os.getpid()}}))
"""


# The kernel lets an unprivileged user change a group's nice value ten times a second,
# system-wide: here the first try is refused as it would be there (`tries`: each one made).
REFUSE_ONCE = """
real, tries = detach._set_group, []
def once(who, nice):
    tries.append(nice)
    return real(who, nice) if len(tries) > 1 else False
detach._set_group = once
"""


def _python(code: str, *args: str, own_session: bool = True) -> str:
    """What `code` prints, run by a new interpreter (in a session of its own unless told
    otherwise) that can import the tests' helpers; it must exit 0."""
    path = os.pathsep.join(filter(None, [str(REPO), os.getenv("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=90,
        start_new_session=own_session,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _report(*, own_session: bool, before: str = "", after: str = "") -> dict:
    out = _python(REPORT.format(before=before, after=after), own_session=own_session)
    return json.loads(out)


def _group_nice(line: str) -> int:
    return int(line.rsplit("nice", 1)[1])


def _task_nice(pid: int, tid: int | None = None) -> int:
    path = f"/proc/{pid}/task/{tid}/stat" if tid else f"/proc/{pid}/stat"
    return int(Path(path).read_text().rsplit(")", 1)[1].split()[16])


@needs_groups
def test_a_session_leader_lowers_itself_and_its_group():
    out = _report(own_session=True)
    assert out["leader"]
    assert out["nice"] == detach.BACKGROUND_NICE
    assert _group_nice(out["group"]) == detach.BACKGROUND_NICE


def test_a_process_in_its_starters_session_leaves_that_group_alone():
    mine = Path("/proc/self/autogroup").read_text().strip() if GROUPED else ""
    out = _report(own_session=False)
    assert not out["leader"]
    assert out["nice"] == detach.BACKGROUND_NICE  # the process itself still yields
    assert out["group"] == mine  # the same group, at the nice value it had
    if GROUPED:
        assert Path("/proc/self/autogroup").read_text().strip() == mine


def test_a_lower_priority_is_never_raised():
    out = _report(own_session=True, before="os.setpriority(os.PRIO_PROCESS, 0, 15)")
    assert out["nice"] == 15


@needs_groups
def test_a_group_change_turned_away_for_now_is_tried_again():
    wait = (
        "import time\n"
        "end = time.monotonic() + 5\n"
        "while detach._group_nice('self') < detach.BACKGROUND_NICE and time.monotonic() < end:\n"
        "    time.sleep(0.02)\n"
        "assert len(tries) >= 2, tries"
    )
    out = _report(own_session=True, before=REFUSE_ONCE, after=wait)
    assert _group_nice(out["group"]) == detach.BACKGROUND_NICE


def test_retrying_stops_at_the_first_change_that_takes(monkeypatch):
    calls: list[tuple[str, int]] = []

    def refuse_twice(who: str, nice: int) -> bool:
        calls.append((who, nice))
        return len(calls) > 2

    monkeypatch.setattr(detach, "_set_group", refuse_twice)
    monkeypatch.setattr(detach, "_group_nice", lambda who: 0)
    monkeypatch.setattr(detach, "_RATE_S", 0)
    detach._lower_group("self", 7, wait_s=5)
    assert calls == [("self", 7)] * 3


def test_retrying_gives_up_after_its_wait(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(detach, "_set_group", lambda who, nice: calls.append(who) or False)
    monkeypatch.setattr(detach, "_group_nice", lambda who: 0)
    monkeypatch.setattr(detach, "_RATE_S", 0.01)
    t0 = time.monotonic()
    detach._lower_group("self", 7, wait_s=0.1)
    assert 0.1 <= time.monotonic() - t0 < 20 * 0.1  # its wait, and not for ever
    assert 2 <= len(calls) <= 0.1 / 0.01 * 2  # at its rate: about one try a 0.01 s


def test_a_retry_never_reaches_a_process_that_is_not_a_child(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(detach, "_set_group", lambda who, nice: calls.append(who) or False)
    monkeypatch.setattr(detach, "_group_nice", lambda who: 0)
    monkeypatch.setattr(detach, "_RATE_S", 0.01)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        detach._lower_group(str(child.pid), 7, wait_s=0.015)
        assert calls and set(calls) == {str(child.pid)}
        calls.clear()
        # pid 1 (or any process this one did not start) is never written to, nor is a pid
        # whose child ended and was reaped
        detach._lower_group("1", 7, wait_s=0.05)
        assert calls == []
    finally:
        child.kill()
        child.wait()
    with pytest.raises(OSError):  # its /proc entry is gone: nothing is written
        detach._lower_group(str(child.pid), 7, wait_s=0.05)
    assert calls == []


JOB_SESSION = """
import sys
from pathlib import Path
from rose.processes import detach
detach.background()
from rose.graph.engine import open_graph
with open_graph(Path(sys.argv[1]), sys.argv[2]) as g:
    g.q("meta_get")
    print("in", flush=True)
    sys.stdin.readline()
"""


@pytest.mark.graph
@needs_groups
def test_the_graph_server_works_for_a_job_at_the_priority_of_who_started_it(
    store: Store, monkeypatch
):
    with own_folder(monkeypatch, "rg-", server.stop_all):
        store.read("level_counts")  # starts the server
        end = time.monotonic() + 20
        while (info := server.holder_note(store.graph_path, store.engine)) is None:
            assert time.monotonic() < end, "no graph server took the database"
            time.sleep(0.05)
        pid = int(info["pid"])

        def group() -> int:
            return _group_nice(Path(f"/proc/{pid}/autogroup").read_text())

        job = subprocess.Popen(
            [sys.executable, "-c", JOB_SESSION, str(store.graph_path), store.engine],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            assert job.stdout is not None and job.stdout.readline().strip() == "in"
            time.sleep(0.3)  # a group change would have taken by now
            # a job lowers itself alone: neither the server's group nor its threads move
            assert group() == 0
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
            assert {_task_nice(pid, t) for t in tids} == {os.getpriority(os.PRIO_PROCESS, 0)}
        finally:
            job.communicate("\n", timeout=30)


LOWERED_OPEN = """
import sys
from pathlib import Path
from rose.processes import detach
detach.background()
from rose.store.facade import Store
Store.open(Path(sys.argv[1])).read("level_counts")
print("done", flush=True)
"""


@pytest.mark.graph
def test_a_job_starts_no_graph_server_and_the_next_foreground_open_does(store: Store, monkeypatch):
    # A server a job started would inherit the job's lowered threads for good, and the
    # prompt hook's slow path waits on it.
    with own_folder(monkeypatch, "rg-", server.stop_all):
        path, engine = store.graph_path, store.engine
        out = subprocess.run(
            [sys.executable, "-c", LOWERED_OPEN, str(store.primary.root.parent)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.stdout.strip() == "done", out.stderr
        time.sleep(1.0)  # a server would have taken the database by now
        assert server.holder_note(path, engine) is None
        store.read("level_counts")
        end = time.monotonic() + 20
        while (info := server.holder_note(path, engine)) is None:
            assert time.monotonic() < end, "the foreground open started no server"
            time.sleep(0.05)
        assert _task_nice(int(info["pid"])) == os.getpriority(os.PRIO_PROCESS, 0)


def test_a_job_runs_in_the_background(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    d: StoreDir = make_ledger(tmp_path, monkeypatch)
    out = tmp_path / "priority.txt"
    outcome, job_id = jobs.submit(d, "priority", {"out": str(out)})
    assert outcome == "queued"
    rec = wait_for(lambda: finished(d, job_id), timeout=30)
    assert rec["state"] == "done", rec
    nice, group = out.read_text().split("\n", 1)
    assert int(nice) == detach.BACKGROUND_NICE
    if GROUPED:
        assert _group_nice(group) == detach.BACKGROUND_NICE


# A lowered group may be set a moment after the process starts (the kernel turned a change
# away for now): wait for it a while, then report.
WAIT_AND_REPORT = """
import os, sys, time
end = time.monotonic() + 5
group = lambda: open("/proc/self/autogroup").read().strip()
while int(group().rsplit("nice", 1)[1]) < int(sys.argv[1]) and time.monotonic() < end:
    time.sleep(0.02)
print(os.getpriority(os.PRIO_PROCESS, 0))
print(group())
"""

SPAWN_CHILD = """
import os, sys
from tests.test_background_priority import WAIT_AND_REPORT
from rose.processes import detach
from rose.model import _proc
if sys.argv[1] == "background":
    detach.background()
if sys.argv[2] == "refuse-once":
    exec(sys.argv[3])
child = _proc.spawn("fake", [sys.executable, "-c", WAIT_AND_REPORT, str(detach._lowered)])
out, _ = child.communicate(timeout=20)
print(out, end="")
"""


@needs_groups
@pytest.mark.parametrize(
    ("where", "kernel"),
    [("background", "agrees"), ("background", "refuse-once"), ("foreground", "agrees")],
)
def test_a_model_cli_started_from_a_job_yields_as_the_job_does(where, kernel, monkeypatch):
    monkeypatch.setenv("ROSE_ALLOW_MODEL_SPAWN", "1")
    # in a session of its own, as a job runs
    nice, group = _python(SPAWN_CHILD, where, kernel, REFUSE_ONCE).split("\n")
    want = detach.BACKGROUND_NICE if where == "background" else 0
    assert int(nice) == want
    assert _group_nice(group) == want

"""Work nobody waits for yields the CPU to the prompt hook: `rose.detach.background`.

Locks in that a process leading its own session lowers its nice value and its session's
group (where the kernel groups tasks by session, a nice value alone weighs nothing against
the user's terminal); that a process in its starter's session never touches that group
(it is the user's); that a lower priority is never raised; that a group change the kernel
turns away for now is tried again; that the graph server, every thread of it, a detached
job and the model CLI a job starts (in a session of its own) run at that priority; and
that a model CLI started from the foreground keeps the foreground's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose import detach
from rose.graph import server
from rose.host import jobs
from rose.store.facade import Store
from rose.store.layout import StoreDir
from tests._jobs import finished, make_ledger, wait_for
from tests._kept import own_folder

GROUPED = Path("/proc/self/autogroup").exists()
needs_groups = pytest.mark.skipif(not GROUPED, reason="the kernel does not group by session")

REPORT = """
import json, os, sys
from rose import detach
{before}
detach.background()
{after}
path = "/proc/self/autogroup"
group = open(path).read().strip() if os.path.exists(path) else ""
print(json.dumps({{"nice": os.getpriority(os.PRIO_PROCESS, 0), "group": group,
                   "leader": os.getsid(0) == os.getpid()}}))
"""


def _report(*, own_session: bool, before: str = "", after: str = "") -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", REPORT.format(before=before, after=after)],
        capture_output=True,
        text=True,
        timeout=30,
        start_new_session=own_session,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


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
    # The kernel lets an unprivileged user change a group's nice value ten times a second,
    # system-wide: the first try is refused here as it would be there.
    refuse_once = (
        "real = detach._set_autogroup\n"
        "tries = []\n"
        "def once(nice):\n"
        "    tries.append(nice)\n"
        "    return real(nice) if len(tries) > 1 else False\n"
        "detach._set_autogroup = once"
    )
    wait = (
        "import time\n"
        "end = time.monotonic() + 5\n"
        "while detach._autogroup_nice() < detach.BACKGROUND_NICE and time.monotonic() < end:\n"
        "    time.sleep(0.02)\n"
        "assert len(tries) >= 2, tries"
    )
    out = _report(own_session=True, before=refuse_once, after=wait)
    assert _group_nice(out["group"]) == detach.BACKGROUND_NICE


def test_retrying_stops_at_the_first_change_that_takes(monkeypatch):
    calls: list[int] = []

    def refuse_twice(nice: int) -> bool:
        calls.append(nice)
        return len(calls) > 2

    monkeypatch.setattr(detach, "_set_autogroup", refuse_twice)
    detach._retry_autogroup(7, tries=10, wait_s=0)
    assert calls == [7, 7, 7]


@pytest.mark.graph
def test_the_graph_server_and_each_of_its_threads_run_in_the_background(store: Store, monkeypatch):
    with own_folder(monkeypatch, "rg-", server.stop_all):
        store.read("level_counts")  # starts the server
        end = time.monotonic() + 20
        while (info := server.holder_note(store.graph_path, store.engine)) is None:
            assert time.monotonic() < end, "no graph server took the database"
            time.sleep(0.05)
        pid = int(info["pid"])
        store.add("Pin the base image by digest.")  # a write: the engine's threads at work
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        assert len(tids) > 1  # the engine started threads of its own
        assert {_task_nice(pid, t) for t in tids} == {detach.BACKGROUND_NICE}
        if GROUPED:
            group = Path(f"/proc/{pid}/autogroup").read_text()
            assert _group_nice(group) == detach.BACKGROUND_NICE
            assert group.split()[0] != Path("/proc/self/autogroup").read_text().split()[0]


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


SPAWN_CHILD = """
import os, sys
from rose import detach
from rose.model import _proc
if sys.argv[1] == "background":
    detach.background()
child = _proc.spawn("fake", [sys.executable, "-c",
    "import os; print(os.getpriority(os.PRIO_PROCESS, 0)); "
    "print(open('/proc/self/autogroup').read().strip())"])
out, _ = child.communicate(timeout=20)
print(out, end="")
"""


@needs_groups
@pytest.mark.parametrize("where", ["background", "foreground"])
def test_a_model_cli_started_from_a_job_yields_as_the_job_does(where: str, monkeypatch):
    monkeypatch.setenv("ROSE_ALLOW_MODEL_SPAWN", "1")
    proc = subprocess.run(
        [sys.executable, "-c", SPAWN_CHILD, where],
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,  # as a job runs: a session of its own
    )
    assert proc.returncode == 0, proc.stderr
    nice, group = proc.stdout.strip().split("\n")
    want = detach.BACKGROUND_NICE if where == "background" else 0
    assert int(nice) == want
    assert _group_nice(group) == want

"""A damaged graph database is told from a locked one, moved aside and rebuilt from the files.

Regression: a truncated `graph.kuzu` (or random bytes, or a folder in its place) made every
command wait the whole lock deadline and then blame a lock, `rose add` refused the lesson, and
the prompt hook skipped memory on every prompt; a read-only `.rose/` looked locked too. Now the
engine's messages and the holder note decide: another process holding the database is waited
on as before and named; anything else that fails twice is damage, set aside as
`<db>.damaged-<time>` (the newest two kept), rebuilt, said in one line and logged. Each case
runs on real files with a short lock deadline, so none waits 30 s.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose.errors import GraphDamaged, StoreLocked
from rose.events import read_events
from rose.graph import engine
from rose.graph.engine import open_graph
from rose.store.facade import Store
from tests._holder import hold
from tests._hookrun import payload, run_hook
from tests._unprivileged import as_unprivileged, chown_tree, world_dir

pytestmark = pytest.mark.graph

ENGINE = os.environ.get("ROSE_GRAPH_ENGINE", "kuzu")
#: A lock deadline no damage may wait out: each such case asserts it took under half of it.
LONG_S = 120

# What each engine says about each kind of damage (the first line of its open error).
DAMAGE_SAYS = {
    "kuzu": {
        "truncated": "Reading past the end of the file",
        "random": "The file is not a valid Kuzu database file",
        "directory": "Database path cannot be a directory",
    },
    "ladybug": {
        "truncated": "Cannot read checkpoint",
        "random": "The file is not a valid Lbug database file",
        "directory": "Database path cannot be a directory",
    },
}


def damage(path: Path, kind: str) -> None:
    """Break the database at `path` the way a crash, a bad copy or a stray command would."""
    if kind == "truncated":  # truncate -s 1600000 .rose/graph.kuzu (or half, when smaller)
        # Its pages into the file first, as a store in use for a while has them: a young one
        # holds them in the log (a close does not checkpoint), where a truncation misses them.
        with open_graph(path, ENGINE) as g:
            g.run("CHECKPOINT", name="checkpoint")
        os.truncate(path, min(1_600_000, path.stat().st_size // 2))
    elif kind == "random":
        path.write_bytes(os.urandom(2_000_000))
    else:
        engine.remove_database(path)
        path.mkdir()
        (path / "stray.txt").write_text("not a database")


def _rose(*args: str, cwd: Path, timeout_s: float = 5) -> subprocess.CompletedProcess:
    env = {**os.environ, "ROSE_GRAPH_LOCK_TIMEOUT_S": str(timeout_s)}
    return subprocess.run(
        [sys.executable, "-m", "rose", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _damaged_copies(store: Store) -> list[Path]:
    return sorted(
        p
        for p in store.primary.root.glob(store.graph_path.name + ".damaged-*")
        if not p.name.endswith((".wal", ".shadow"))
    )


@pytest.fixture
def lessons(store: Store) -> Store:
    store.add("Retry flaky network calls with backoff.")
    store.add("Pin the graph engine's version.")
    return store


# -- the engine: what it says, and how open_graph decides -----------------------------------------


@pytest.mark.parametrize("kind", ["truncated", "random", "directory"])
def test_damage_is_reported_at_once_with_the_engines_words(lessons: Store, kind: str):
    damage(lessons.graph_path, kind)
    start = time.monotonic()
    with (
        pytest.raises(GraphDamaged) as info,
        open_graph(lessons.graph_path, lessons.engine, deadline_s=LONG_S),
    ):
        pass
    assert time.monotonic() - start < LONG_S / 2  # one retry after a pause, never the deadline
    assert DAMAGE_SAYS[ENGINE][kind] in info.value.detail
    assert str(lessons.graph_path) in str(info.value)


def test_a_held_lock_is_waited_on_and_names_the_holder(lessons: Store):
    holder = hold(lessons, 30)
    try:
        start = time.monotonic()
        with (
            pytest.raises(StoreLocked) as info,
            open_graph(lessons.graph_path, lessons.engine, deadline_s=0.5),
        ):
            pass
        waited = time.monotonic() - start
    finally:
        holder.terminate()
        holder.communicate(timeout=10)
    assert waited >= 0.5
    msg = str(info.value)
    assert "Could not set lock on file" in msg
    assert f"held by pid {holder.pid}" in msg
    assert not _damaged_copies(lessons)


# -- the store: heal, say so, log it --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["truncated", "random", "directory"])
def test_status_on_a_damaged_database_rebuilds_it_and_says_so(
    lessons: Store, project: Path, kind: str
):
    damage(lessons.graph_path, kind)
    start = time.monotonic()
    res = _rose("status", "--json", cwd=project, timeout_s=LONG_S)
    # Mistaken for a lock, it would wait out the deadline; a busy machine takes seconds.
    assert time.monotonic() - start < LONG_S / 2
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["lessons"] == 2
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"rose: the graph database {lessons.graph_path} was damaged (")
    assert DAMAGE_SAYS[ENGINE][kind] in line
    (copy,) = _damaged_copies(lessons)
    assert f"moved it to {copy.name} and rebuilt it from the files (2 read)" in line
    (event,) = read_events(lessons.primary.events, kind="graph-rebuilt")
    assert event["moved_to"] == str(copy) and DAMAGE_SAYS[ENGINE][kind] in event["reason"]
    assert event["read"] == 2
    again = _rose("status", "--json", cwd=project)  # healed: nothing more to say
    assert (again.returncode, again.stderr) == (0, "")


def test_add_on_a_damaged_database_keeps_the_lesson(lessons: Store, project: Path):
    damage(lessons.graph_path, "truncated")
    res = _rose("add", "Check the disk before blaming the lock.", cwd=project)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("added n_")
    assert "was damaged" in res.stderr and "rebuilt it from the files" in res.stderr
    titles = {r["title"] for r in Store.open().read("lessons_all")}
    assert "Check the disk before blaming the lock" in titles and len(titles) == 3


def test_add_writes_the_lesson_even_when_the_index_cannot_be_rebuilt(
    lessons: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    damage(lessons.graph_path, "random")

    def refuse(path: Path, engine: str, damage: object) -> Path:
        raise OSError(16, "Device or resource busy", str(path))

    with monkeypatch.context() as m:
        m.setattr("rose.store.facade.set_aside", refuse)
        node = lessons.add("Written first, indexed later.")
    path = lessons.primary.node_path(node.family, node.id)
    assert "Written first, indexed later." in path.read_text()
    err = capsys.readouterr().err
    assert f"lesson written to {path}, but not indexed" in err
    assert "could not be rebuilt (moving it aside failed" in err
    # The store can move it now: the next open heals and reads the file in.
    assert node.id in {r["id"] for r in Store.open().read("lessons_all")}


def test_at_most_two_damaged_copies_are_kept(lessons: Store):
    seen = []
    for kind in ("truncated", "random", "directory"):
        damage(lessons.graph_path, kind)
        assert len(lessons.read("lessons_all")) == 2
        seen.append(_damaged_copies(lessons)[-1])
    assert _damaged_copies(lessons) == seen[-engine.KEEP_DAMAGED :]
    assert len(read_events(lessons.primary.events, kind="graph-rebuilt")) == 3


def test_a_held_lock_still_waits_and_heals_nothing(lessons: Store, project: Path):
    before = lessons.graph_path.stat().st_size
    holder = hold(lessons, 30)
    try:
        start = time.monotonic()
        res = _rose("status", cwd=project, timeout_s=0.5)
        waited = time.monotonic() - start
    finally:
        holder.terminate()
        holder.communicate(timeout=10)
    assert res.returncode == 1
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"rose: graph database {lessons.graph_path} stayed locked (held by pid")
    assert str(holder.pid) in line
    assert waited >= 0.5
    assert not _damaged_copies(lessons) and lessons.graph_path.stat().st_size == before
    assert not read_events(lessons.primary.events, kind="graph-rebuilt")


_CONTENDER = """
import os, sys, time
from pathlib import Path
from rose.errors import GraphDamaged
from rose.graph.engine import open_graph
path, eng, role, until = Path(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
n = 0
while time.time() < until:
    try:
        with open_graph(path, eng, read_only=role == "ro", deadline_s=30) as g:
            if role == "rw":
                with g.transaction():
                    for i in range(20):
                        g.run("CREATE (:T {id: $i})", {"i": f"{os.getpid()}-{n}-{i}"}, name="w")
            else:
                g.run("MATCH (t:T) RETURN count(*) AS n", name="r")
    except GraphDamaged as exc:
        print("DAMAGED", exc, flush=True)
    n += 1
print("opens", n)
"""


def test_contention_is_never_taken_for_damage(tmp_path: Path):
    """Writers and readers side by side see transient .wal/.shadow errors, never damage."""
    path = tmp_path / "g.db"
    with open_graph(path, ENGINE) as g:
        g.run("CREATE NODE TABLE T(id STRING, PRIMARY KEY(id))", name="schema")
    until = time.time() + 2
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CONTENDER, str(path), ENGINE, role, str(until)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for role in ("rw", "rw", "rw", "rw", "ro", "ro")
    ]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert not [line for out in outs for line in out.splitlines() if line.startswith("DAMAGED")]
    assert not list(tmp_path.glob("g.db.damaged-*"))


# -- a process that died with the database: the engine crashed it ------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


_DIES_HOLDING = """
import os, signal, sys
from pathlib import Path
from rose.graph.engine import open_graph
with open_graph(Path(sys.argv[1]), sys.argv[2]) as g:
    os.kill(os.getpid(), signal.SIGKILL)  # as a segfault inside the engine would: no cleanup
"""


def test_a_process_that_died_using_it_gets_it_rebuilt(lessons: Store, project: Path):
    """kuzu segfaults on a page of random bytes; the holder note it leaves names the crash."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _DIES_HOLDING, str(lessons.graph_path), lessons.engine]
    )
    assert proc.wait(timeout=60) == -9
    res = _rose("status", "--json", cwd=project)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["lessons"] == 2
    assert f"(process {proc.pid} (" in res.stderr
    assert "died with it open: a crash, or a kill)" in res.stderr
    assert "rebuilt it from the files (2 read)" in res.stderr
    assert len(_damaged_copies(lessons)) == 1
    assert not engine.holder_file(lessons.graph_path).exists()


def test_a_process_that_died_opening_it_gets_it_rebuilt(lessons: Store, project: Path):
    pid = _dead_pid()
    note = lessons.graph_path.with_name(f"{lessons.graph_path.name}.opening-{pid}")
    note.touch()  # what a segfault inside the engine's open leaves behind
    res = _rose("status", "--json", cwd=project)
    assert res.returncode == 0, res.stderr
    assert f"(process {pid} died inside the engine's open: a crash, or a kill)" in res.stderr
    assert not note.exists() and len(_damaged_copies(lessons)) == 1


def test_a_dead_opener_is_not_damage_while_someone_holds_it(lessons: Store):
    """Someone opened it since: the dead opener was killed, not crashed. Wait, heal nothing."""
    holder = hold(lessons, 1)
    note = lessons.graph_path.with_name(f"{lessons.graph_path.name}.opening-{_dead_pid()}")
    note.touch()
    try:
        assert len(lessons.read("lessons_all")) == 2  # waited for the holder, then opened
    finally:
        holder.communicate(timeout=10)
    assert not note.exists()  # it opened: the note proved nothing and is gone
    assert not _damaged_copies(lessons)


# -- damage that shows only once the database is open ---------------------------------------------


def _storage_damage_once(monkeypatch: pytest.MonkeyPatch, where: str) -> list[str]:
    """Make the next `where` query fail as ladybug fails on a damaged page."""
    from rose.errors import QueryError
    from rose.graph.engine import Graph

    real = Graph.q
    hits: list[str] = []

    def q(self, name: str, **params):
        if name == where and not hits:
            hits.append(name)
            message = "Storage exception: String dictionary index is outside the offset table."
            raise QueryError(name, message, damaged=True)
        return real(self, name, **params)

    monkeypatch.setattr(Graph, "q", q)
    return hits


def test_damage_met_while_syncing_is_healed_on_the_spot(
    lessons: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    first = next(lessons.primary.nodes.rglob("*.md"))
    first.write_text(first.read_text() + "\nEdited by hand.\n")  # the sync reads what changed
    hits = _storage_damage_once(monkeypatch, "file_put_one")
    assert len(lessons.read("lessons_all")) == 2
    assert hits
    assert "String dictionary index is outside the offset table" in capsys.readouterr().err
    assert len(_damaged_copies(lessons)) == 1


def test_damage_met_by_the_work_is_moved_aside_for_the_next_command(
    lessons: Store, monkeypatch: pytest.MonkeyPatch
):
    _storage_damage_once(monkeypatch, "lessons_all")
    with pytest.raises(GraphDamaged) as info:
        lessons.read("lessons_all")
    (copy,) = _damaged_copies(lessons)
    assert str(info.value).endswith(
        f"moved it to {copy.name}: the next command rebuilds it from the files"
    )
    (event,) = read_events(lessons.primary.events, kind="graph-damaged")
    assert event["moved_to"] == str(copy)
    assert len(lessons.read("lessons_all")) == 2


# -- a read-only store ----------------------------------------------------------------------------


@pytest.fixture
def unpriv_project(monkeypatch: pytest.MonkeyPatch):
    """A project with two lessons that the unprivileged user owns, in a folder it can reach."""
    with world_dir() as base:
        project = base / "project"
        project.mkdir()
        monkeypatch.setenv("HOME", str(base))
        monkeypatch.setenv("ROSE_GLOBAL_HOME", str(base / "no-global"))
        monkeypatch.chdir(project)
        store = Store.init(project)
        store.add("Retry flaky network calls with backoff.")
        chown_tree(base)
        yield project


def _cli(*args: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    from rose.cli import app

    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


def test_a_read_only_store_is_read_and_a_write_is_one_line_naming_it(unpriv_project: Path):
    rose_dir = unpriv_project / ".rose"
    assert _cli("status")[0] == 0  # here first: the child can import nothing new
    assert _cli("add", "--no-reconcile", "Pin the lockfile first.")[0] == 0
    rose_dir.chmod(0o555)
    out = as_unprivileged(functools.partial(_cli, "status"), cwd=unpriv_project)
    assert out.error is None, out.error
    code, output = out.value
    assert code == 0, output
    assert f"rose: {rose_dir} cannot be written (permission denied): " in output
    assert "lessons    2 active (2 in all) in 1 families" in output
    start = time.monotonic()
    with pytest.MonkeyPatch.context() as m:
        m.setenv("ROSE_GRAPH_LOCK_TIMEOUT_S", str(LONG_S))
        out = as_unprivileged(
            functools.partial(_cli, "add", "A lesson that cannot be kept."), cwd=unpriv_project
        )
    assert out.error is None, out.error
    code, output = out.value
    assert time.monotonic() - start < LONG_S / 2  # never waited on as if it were locked
    assert code == 1, output
    (line,) = output.strip().splitlines()
    assert line == (
        f"rose: {rose_dir}: cannot be written (permission denied); the store keeps its "
        f"lessons and index there: make it writable (chmod u+w {rose_dir}), "
        "then run the command again"
    )
    rose_dir.chmod(0o755)
    assert len(list(rose_dir.glob("nodes/*/*.md"))) == 2


def test_a_read_only_database_file_is_read_read_only(unpriv_project: Path):
    store = Store.open()
    store.graph_path.chmod(0o444)

    def status() -> int:
        with Store.open().graph() as g:
            return len(g.q("lessons_all"))

    status()  # warm the imports in the parent
    out = as_unprivileged(status, cwd=unpriv_project)
    assert out.error is None and out.value == 1, out


# -- the prompt hook ------------------------------------------------------------------------------


def test_the_prompt_hook_heals_and_says_so_in_its_status_line(lessons: Store, project: Path):
    first = next(lessons.primary.nodes.rglob("*.md"))
    first.write_text(first.read_text() + "\nEdited by hand.\n")  # the view is stale now
    damage(lessons.graph_path, "truncated")
    rc, out, _, _ = run_hook(
        "user-prompt-submit",
        payload("user-prompt-submit", project),
        env={"ROSE_GRAPH_HOOK_LOCK_TIMEOUT_S": "5"},
    )
    assert rc == 0
    assert "index rebuilt (it was damaged)" in out["systemMessage"]
    assert "Edited by hand." in out["hookSpecificOutput"]["additionalContext"]
    assert read_events(lessons.primary.events, kind="graph-rebuilt")
    assert not read_events(lessons.primary.events, kind="error")

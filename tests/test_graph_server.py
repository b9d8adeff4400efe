"""The graph server (rose.graph.server): a store's open starts one, and the next opens are
its sessions (no engine opened in the asking process); sessions wait for each other as
for a lock; a session that dies inside a transaction is rolled back; an idle server lets
go; one killed between sessions costs nothing, one killed inside a session is a crash the
next open heals; deleting or moving the database aside stops it first; a read-only
session refuses writes; `graph.keep_open_s: 0` or ROSE_KEEP_WARM=0 starts none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose.errors import StoreLocked
from rose.graph import engine, server
from rose.graph.engine import open_graph
from rose.graph.readonly import WriteRefused
from rose.store.facade import Store
from tests._kept import gone, own_folder, wait

pytestmark = pytest.mark.graph


@pytest.fixture(autouse=True)
def serving(monkeypatch):
    with own_folder(monkeypatch, "rg-", server.stop_all) as run:
        yield run


def _served(store: Store, timeout: float = 20.0) -> dict:
    """The holder note of the server that an open of `store` started, once it holds it."""
    store.read("level_counts")
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        info = server.holder_note(store.graph_path, store.engine)
        if info is not None:
            return info
        time.sleep(0.05)
    raise AssertionError("no graph server took the database")


def _no_engine_here(monkeypatch) -> None:
    """From now on this process cannot open the engine itself."""

    def refuse(*_a, **_k):
        raise AssertionError("the engine was opened in the asking process")

    monkeypatch.setattr(engine, "open_database", refuse)


def test_an_open_starts_a_server_and_the_next_opens_are_its_sessions(store: Store, monkeypatch):
    info = _served(store)
    _no_engine_here(monkeypatch)
    lesson = store.add("Run the formatter before every commit.")
    again = Store.open(store.primary.root.parent)  # as the next command would
    assert [r["id"] for r in again.read("lesson_ids", ids=[lesson.id])] == [lesson.id]
    status = server.status(store.graph_path)
    assert status is not None and status["pid"] == info["pid"] and status["sessions"] >= 2


def test_sessions_wait_for_each_other_as_for_a_lock(store: Store):
    _served(store)
    code = (
        "import sys, time\nfrom pathlib import Path\nfrom rose.graph.engine import open_graph\n"
        "with open_graph(Path(sys.argv[1]), sys.argv[2]) as g:\n"
        "    g.q('meta_get'); print('held', flush=True); time.sleep(1.5)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(store.graph_path), store.engine],
        stdout=subprocess.PIPE, text=True, env=os.environ.copy(),
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(StoreLocked) as info,
            open_graph(store.graph_path, store.engine, deadline_s=0.3),
        ):
            pass
        assert f"graph server, serving pid {holder.pid}" in str(info.value)
        t0 = time.monotonic()
        with open_graph(store.graph_path, store.engine, deadline_s=20) as g:
            assert g.q("meta_get")
        assert time.monotonic() - t0 >= 0.5  # it waited for the holder's session to end
    finally:
        holder.communicate(timeout=20)


def test_a_session_that_dies_inside_a_transaction_is_rolled_back(store: Store):
    _served(store)
    code = (
        "import os, sys\nfrom pathlib import Path\nfrom rose.graph.engine import open_graph\n"
        "with open_graph(Path(sys.argv[1]), sys.argv[2]) as g:\n"
        "    with g.transaction():\n"
        "        g.q('meta_set', key='half', value='done')\n"
        "        os._exit(0)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(store.graph_path), store.engine],
        check=True, timeout=60, env=os.environ.copy(),
    )  # fmt: skip
    with open_graph(store.graph_path, store.engine, deadline_s=20) as g:
        assert "half" not in {r["key"] for r in g.q("meta_get")}
        g.q("meta_set", key="whole", value="done")
    with open_graph(store.graph_path, store.engine, deadline_s=20) as g:
        assert "whole" in {r["key"] for r in g.q("meta_get")}


def test_an_idle_server_lets_go_and_the_next_open_is_the_process_own(store: Store, monkeypatch):
    store.keep_open_s = 0.5
    info = _served(store)
    assert wait(lambda: gone(int(info["pid"])), 15)
    assert not engine.holder_file(store.graph_path).exists()
    store.keep_open_s = 0
    events = []
    monkeypatch.setattr(store, "log", lambda kind, data: events.append(kind))
    assert store.read("level_counts") is not None
    assert "graph-rebuilt" not in events


def test_a_server_killed_between_sessions_costs_no_rebuild(store: Store, monkeypatch):
    lesson = store.add("Pin the engine's version in the lock file.")
    info = _served(store)
    os.kill(int(info["pid"]), signal.SIGKILL)
    assert wait(lambda: gone(int(info["pid"])), 15)
    store.keep_open_s = 0
    events = []
    monkeypatch.setattr(store, "log", lambda kind, data: events.append(kind))
    assert store.get(lesson.id).id == lesson.id
    assert "graph-rebuilt" not in events and "graph-damaged" not in events


def test_a_server_killed_inside_a_session_is_a_crash_the_next_open_heals(store: Store, monkeypatch):
    lesson = store.add("Keep migrations reversible.")
    info = _served(store)
    with open_graph(store.graph_path, store.engine, deadline_s=20) as g:
        g.q("meta_get")
        os.kill(int(info["pid"]), signal.SIGKILL)
        assert wait(lambda: gone(int(info["pid"])), 15)
        with pytest.raises(Exception, match="graph server"):
            g.q("meta_get")
    assert engine.crash_note(store.graph_path) is not None
    store.keep_open_s = 0
    events = []
    monkeypatch.setattr(store, "log", lambda kind, data: events.append(kind))
    monkeypatch.setattr("rose.store._damage.notify", lambda *a, **k: None)
    assert store.get(lesson.id).id == lesson.id  # rebuilt from the files
    assert "graph-rebuilt" in events


def test_deleting_the_database_stops_its_server_first(store: Store):
    info = _served(store)
    engine.remove_database(store.graph_path)
    assert wait(lambda: gone(int(info["pid"])), 1)
    assert not store.graph_path.exists()


def test_a_read_only_session_refuses_writes(store: Store):
    store.add("Name the lock's holder in the error.")
    _served(store)
    with pytest.raises(WriteRefused):
        store.query("MATCH (l:Lesson) SET l.title = 'changed' RETURN l.id")
    with pytest.raises(WriteRefused):
        store.query("BEGIN TRANSACTION")
    titles = [row["t"] for row in store.query("MATCH (l:Lesson) RETURN l.title AS t")[0]]
    assert titles == ["Name the lock's holder in the error"]
    assert server.status(store.graph_path) is not None  # it was the server that answered


def test_a_process_waiting_on_the_lock_turns_to_the_server_that_took_it(store: Store):
    _served(store)
    mod = engine.engine_module(store.engine)
    t0 = time.monotonic()
    with pytest.raises(engine._Served):
        engine.open_database(mod, store.graph_path, False, 60.0, store.engine)
    assert time.monotonic() - t0 < 60.0 / 2  # turned, not waited out the deadline


def test_no_server_with_keep_open_0_or_keeping_off(store: Store, project: Path, monkeypatch):
    store.keep_open_s = 0
    store.read("level_counts")
    monkeypatch.setattr(store, "keep_open_s", 600.0)
    monkeypatch.setenv("ROSE_KEEP_WARM", "0")
    store.read("level_counts")
    time.sleep(1.0)
    assert server.holder_note(store.graph_path, store.engine) is None
    assert server.status_all() == []


def test_status_shows_the_server_and_the_folders_it_cannot_watch(store: Store, tmp_path):
    from typer.testing import CliRunner

    from rose.cli import app
    from rose.graph import sync
    from rose.inspect.status import status

    info = _served(store)
    shown = status(store)["graph_server"]
    assert shown["pid"] == info["pid"] and shown["exits_in_s"] > 0
    outside = tmp_path / "outside.md"
    outside.write_text("x\n")
    (store.primary.root / "nodes" / "link.md").symlink_to(outside)
    sync.scan(store.dirs, None, store.graph_path)  # the first question starts the watch
    shown = status(store)["graph_server"]
    nodes = str(store.primary.root / "nodes")
    assert "symbolic link" in shown["unwatched"][nodes]
    assert str(store.primary.root / "episodes") in shown["watched"]
    out = CliRunner().invoke(app, ["status"]).output
    assert f"it scans {nodes} in full at every open" in out


@pytest.mark.heavy
def test_four_processes_recording_through_the_server_give_exactly_100(store: Store, project: Path):
    """Four writers on two cores interleave as eight did (the counters once lost 13 of 40
    outcomes from four processes); tests/test_episodes_record.py keeps eight, without a
    server."""
    from tests.test_episodes_record import _RECORDER, record_concurrently

    # each outcome folded in at once (an open after each): a session of the server's each
    recorder = _RECORDER.replace("used=[lesson]))", "used=[lesson]))\n    store.get(lesson)")
    assert recorder != _RECORDER
    lesson = store.add("Retry idempotent calls with backoff.", family="retry")
    info = _served(store)
    failures = record_concurrently(project, lesson.id, recorder, workers=4)
    stats = store.get(lesson.id).stats
    assert (stats.attempts, stats.successes, stats.failures) == (100, 100 - failures, failures)
    status = server.status(store.graph_path)
    assert status is not None and status["pid"] == info["pid"] and status["sessions"] >= 100


def test_an_idle_server_is_no_writer_to_the_prompt_hook_and_a_busy_one_is(store: Store, project):
    from rose.models import Node
    from tests._hookrun import payload, run_hook

    store.write([Node(id="n_retry0001", title="Retry policy", gist="Back off.", body="Use 100ms.")])
    _served(store)
    path = store.primary.node_path("general", "n_retry0001")
    path.write_text(path.read_text().replace("Use 100ms.", "Use 250ms."))  # the view is stale
    rc, out, _, _ = run_hook("user-prompt-submit", payload("user-prompt-submit", project))
    assert rc == 0 and "Use 250ms." in out["hookSpecificOutput"]["additionalContext"]
    assert "as of the last write" not in out.get("systemMessage", "")
    path.write_text(path.read_text().replace("Use 250ms.", "Use 400ms."))
    with open_graph(store.graph_path, store.engine) as g:  # a session runs: a writer
        g.q("meta_get")
        again = payload("user-prompt-submit", project, session_id="s2")  # nothing in context
        rc, out, _, _ = run_hook("user-prompt-submit", again)
    assert rc == 0 and "hookSpecificOutput" in out, out
    assert "Use 250ms." in out["hookSpecificOutput"]["additionalContext"]
    assert "as of the last write" in out["systemMessage"]


def test_a_setting_or_a_transaction_a_session_leaves_is_gone_for_the_next(store: Store):
    store.add("Name the holder in the error.")
    _served(store)
    store.query("CALL timeout=1")  # read-only, and accepted: for that session alone
    store.query("/* a comment first */ BEGIN TRANSACTION", write=True)  # left open
    lesson = store.add("Keep the log small.")  # would be interrupted, or inside that one
    assert store.get(lesson.id).id == lesson.id
    assert server.status(store.graph_path)["sessions"] >= 4


def test_a_moved_store_is_let_go_and_opened_where_it_is_now(store: Store, project: Path):
    info = _served(store)
    moved = project.with_name("moved")
    project.rename(moved)
    again = Store.open(moved)
    lesson = again.add("Write the changelog with the change.")
    again.reindex()  # a checkpoint: the engine reopens its files by path
    assert again.get(lesson.id).id == lesson.id
    assert wait(lambda: gone(int(info["pid"])), 15)


def test_a_server_whose_socket_was_removed_lets_go(store: Store):
    info = _served(store)
    Path(info["serve"]).unlink()
    assert wait(lambda: gone(int(info["pid"])), server._CHECK_S + 10)
    store.keep_open_s = 0
    assert store.read("level_counts") is not None


def test_stop_under_lets_go_of_the_stores_under_a_folder_only(store: Store, tmp_path: Path):
    info = _served(store)
    assert server.stop_under(tmp_path / "elsewhere") == 0
    assert server.status(store.graph_path) is not None
    assert server.stop_under(tmp_path) == 1
    assert wait(lambda: gone(int(info["pid"])), 15)


def test_a_server_lets_go_once_its_database_doubled_not_at_every_write():
    mb = 1024 * 1024
    assert not server.outgrown(2048 * mb, 2049 * mb)  # one write past the open's size
    assert not server.outgrown(2048 * mb, 4096 * mb)
    assert server.outgrown(2048 * mb, 4097 * mb)
    assert not server.outgrown(0, 10**12)  # the engine's own pool: it sizes itself


def test_a_statement_of_any_size_runs_through_a_server_and_is_no_damage(store: Store):
    """A sync of a large pull sends every new lesson's body in one statement: past the 16 MB
    a request once had, the server ended the session and the store took it for damage."""
    _served(store)
    big = "x" * (17 * 1024 * 1024)
    with open_graph(store.graph_path, store.engine, deadline_s=20) as g:
        assert g.run("RETURN size($x) AS n", {"x": big}, name="big")[0]["n"] == len(big)
    assert not list(store.graph_path.parent.glob("*.damaged-*"))


def test_what_cannot_be_unpickled_ends_that_connection_not_the_server(store: Store):
    import socket as socket_

    info = _served(store)
    garbage = b"cno_such_module\nThing\n."  # a class the server cannot import
    for before in ([], [("hello", {"read_only": False, "pid": os.getpid()})]):
        with socket_.socket(socket_.AF_UNIX, socket_.SOCK_STREAM) as sock:
            sock.connect(info["serve"])
            for message in before:
                server.send(sock, message)
                assert server.recv(sock)[0] == "ready"
            sock.sendall(server.HEAD.pack(server.MAGIC, len(garbage)) + garbage)
            sock.settimeout(5)
            assert sock.recv(1) == b""  # the connection ends
    assert not gone(int(info["pid"]))
    assert store.get(store.add("Keep the changelog current.").id) is not None
    assert server.holder_note(store.graph_path, store.engine)["pid"] == info["pid"]


def test_a_server_that_does_not_answer_the_stop_is_terminated(store: Store, monkeypatch):
    info = _served(store)
    from rose.processes import kept

    monkeypatch.setattr(kept, "tell", lambda path, request: None)  # a server of another wire
    assert server.stop(store.graph_path)
    assert wait(lambda: gone(int(info["pid"])), 20)
    assert server.holder_note(store.graph_path, store.engine) is None


def _ended(sock) -> bool:
    """Whether the other end closed the connection without a word."""
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:  # it closed with what was sent still unread
        return True


def test_a_question_and_a_session_share_one_wire(store: Store):
    import socket as socket_

    from rose.processes import kept

    info = _served(store)
    assert kept.tell(Path(info["serve"]), {"status": True})["pid"] == info["pid"]
    # what is not a frame of that wire (the JSON a question once was) gets no answer
    with socket_.socket(socket_.AF_UNIX, socket_.SOCK_STREAM) as sock:
        sock.connect(info["serve"])
        sock.sendall(b'{"status": true}\n')
        sock.shutdown(socket_.SHUT_WR)
        assert _ended(sock)
    # a frame that is neither a question nor a hello ends its connection too
    with socket_.socket(socket_.AF_UNIX, socket_.SOCK_STREAM) as sock:
        sock.connect(info["serve"])
        server.send(sock, ("answer", {"pid": 1}))
        assert _ended(sock)
    assert server.status(store.graph_path)["pid"] == info["pid"]


def test_a_socket_that_answers_off_the_wire_is_no_answer(tmp_path: Path):
    import socket as socket_
    import threading

    path = tmp_path / "other.sock"
    listener = socket_.socket(socket_.AF_UNIX, socket_.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def answer_json() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(b'{"pid": 1}')

    t = threading.Thread(target=answer_json)
    t.start()
    try:
        from rose.processes import kept

        assert kept.tell(path, {"status": True}) is None
    finally:
        t.join(5)
        listener.close()


def test_a_server_stopped_during_a_statement_is_a_lock_past_the_deadline(store: Store):
    """A SIGSTOPped server (a debugger, a terminal's ^Z) kept its session's client waiting
    for ever, whatever deadline it was opened with."""
    info = _served(store)
    pid = int(info["pid"])
    with open_graph(store.graph_path, store.engine, deadline_s=1) as g:
        os.kill(pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            with pytest.raises(StoreLocked, match="stopped"):
                g.q("level_counts")
            assert time.monotonic() - t0 < 10 * 1  # its deadline, not for ever
        finally:
            os.kill(pid, signal.SIGCONT)
    assert store.get(store.add("Tag every release.").id) is not None  # it serves on


def test_an_open_a_stopping_server_turns_away_waits_longer_each_time(store: Store, monkeypatch):
    """A server asked to stop during a long session turns the next opens away; they tried
    the engine ~150 times a second meanwhile (a core's worth of CPU)."""
    import threading

    from rose.processes import kept

    info = _served(store)
    tries: list[int] = []
    real = engine.open_database
    monkeypatch.setattr(engine, "open_database", lambda *a, **k: tries.append(1) or real(*a, **k))
    done = threading.Event()

    def other() -> None:
        with open_graph(store.graph_path, store.engine, deadline_s=20) as g:
            g.q("meta_get")
        done.set()

    with open_graph(store.graph_path, store.engine, deadline_s=20) as g:
        g.q("meta_get")
        kept.tell(Path(info["serve"]), {"stop": True})
        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(2.0)
        assert not done.is_set()
    thread.join(20)
    assert done.is_set() and len(tries) < 60

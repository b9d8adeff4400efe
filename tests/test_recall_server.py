"""The recall server: the prompt hook's slow path answered by a process that has it loaded.

Locks in: a model-decided prompt run by the hook itself starts a server, and the next
prompt's hook is answered by it without importing recall, with the block the hook would
have built itself; a server that answers nonsense is passed over (the hook runs recall and
still serves); a locked store the server reports is a locked store to the hook; an edit
to any module of ROSE's makes a new key; an idle server exits and clears its socket, and
`stop_all` ends one; ROSE_KEEP_WARM=0 starts none.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rose import config, kept
from rose.errors import StoreLocked
from rose.host import recall_server
from rose.host._payload import Root
from rose.models import Node
from rose.store import sessions
from rose.store.facade import Store
from tests._hookrun import payload
from tests._kept import gone, own_folder, wait

pytestmark = pytest.mark.graph

# The hook, with the ROSE under test (whatever the working directory), reporting on stderr
# whether recall was imported in its own process.
PROBE = (
    f"import sys\nsys.path.insert(0, {str(Path(recall_server.__file__).parents[2])!r})\n"
    "from rose.host.hooks import main\nrc = main(['user-prompt-submit'])\n"
    "sys.stderr.write('\\nRECALL-LOADED=%s\\n' % ('rose.loop.recall' in sys.modules))\n"
    "sys.exit(rc)\n"
)


@pytest.fixture(autouse=True)
def serving(monkeypatch):
    """Servers on, their sockets in a short folder of this test's own; every one ended."""
    with own_folder(monkeypatch, "rs-", recall_server.stop_all) as run:
        yield run


def _sockets(run: Path) -> list[Path]:
    folder = run / f"rose-{os.getuid()}"
    return sorted(folder.glob("recall-*.sock")) if folder.exists() else []


@pytest.fixture
def decided(store: Store) -> Store:
    """Two lessons, a budget that holds one: the (simulated) model decides every prompt."""
    store.write(
        [
            Node(id="n_retry0001", title="Retry policy", gist="Back off.", body="Use 100ms."),
            Node(id="n_cache0001", title="Cache TTLs", gist="TTLs.", body="Profiles 300s."),
        ]
    )
    config.set_override(store.primary.config, "recall.max_pack_tokens", "90")
    config.set_override(store.primary.config, "agent", "simulated")
    return store


def _probe(project: Path, session: str) -> tuple[dict | None, bool]:
    data = payload("user-prompt-submit", project, session_id=session, prompt="retry policy?")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], input=json.dumps(data), capture_output=True, text=True,
        env=dict(os.environ), timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return out, "RECALL-LOADED=True" in proc.stderr


def _block(out: dict | None) -> str:
    assert out is not None
    return out["hookSpecificOutput"]["additionalContext"]


def test_the_next_model_decided_prompt_is_answered_by_the_server(
    decided: Store, project: Path, serving: Path
):
    first, loaded = _probe(project, "s1")
    assert loaded, "no server yet: the hook ran recall itself"
    assert wait(lambda: len(_sockets(serving)) == 1, 20), "the hook started a server"
    second, loaded = _probe(project, "s2")
    assert not loaded, "the server's child ran recall, not the hook"
    assert _block(second) == _block(first) and "<rose-memory>" in _block(first)
    (entry,) = [e for e in sessions.read(decided.primary.root, "s2") if e["t"] == "prompt"]
    assert entry["recall"] == "judged" and entry["served"]
    (status,) = recall_server.status_all()
    assert status["pid"] > 0 and status["busy"] == 0


def test_a_server_answering_nonsense_is_passed_over(decided: Store, project: Path):
    path = kept.address(recall_server.KIND, recall_server.key(dict(os.environ)))
    assert path is not None
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    asked: list[dict] = []

    def nonsense() -> None:
        conn, _ = listener.accept()
        with conn:
            asked.append(json.loads(kept.read_all(conn)))
            conn.sendall(b"not json")

    thread = threading.Thread(target=nonsense, daemon=True)
    thread.start()
    try:
        out, loaded = _probe(project, "s1")
    finally:
        thread.join(5)
        listener.close()
        path.unlink(missing_ok=True)
    assert asked and asked[0]["recall"]["prompt"] == "retry policy?"
    assert loaded and "<rose-memory>" in _block(out), "the hook ran recall itself and served"


def test_a_locked_store_the_server_reports_is_locked_for_the_hook(project: Path):
    path = kept.address(recall_server.KIND, recall_server.key())
    assert path is not None
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    locked = {"locked": {"path": "/p/.rose/graph.kuzu", "holder": "pid 7", "waited_s": 0.3}}

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            kept.read_all(conn)
            conn.sendall(json.dumps(locked).encode())

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        with pytest.raises(StoreLocked) as err:
            recall_server.recall("q", [[str(project / ".rose"), "project"]], str(project), None)
    finally:
        thread.join(5)
        listener.close()
    assert err.value.path == Path("/p/.rose/graph.kuzu") and err.value.holder == "pid 7"


def test_an_edit_to_any_module_makes_a_new_stamp(tmp_path: Path):
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    before = recall_server.code_stamp(pkg)
    (pkg / "sub" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\0")
    (pkg / "notes.txt").write_text("not code")
    assert recall_server.code_stamp(pkg) == before, "only modules count"
    (pkg / "sub" / "b.py").write_text("y = 3\n")
    os.utime(pkg / "sub" / "b.py", ns=(1, 1))
    assert recall_server.code_stamp(pkg) != before


def test_an_edit_to_a_statement_or_a_template_makes_a_new_stamp(tmp_path: Path):
    """The server keeps the Cypher statements and the templates loaded too: a release that
    changes only a `.cypher` file must not leave one serving the old schema (each prompt
    would rebuild the graph for it, and each command back)."""
    pkg = tmp_path / "rose"
    (pkg / "queries").mkdir(parents=True)
    (pkg / "queries" / "apexes.cypher").write_text("MATCH (l) RETURN l\n")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "relevance.j2").write_text("{{ prompt }}\n")
    stamps = [recall_server.code_stamp(pkg)]
    for path in (pkg / "queries" / "apexes.cypher", tmp_path / "prompts" / "relevance.j2"):
        path.write_text(path.read_text() + "// changed\n")
        stamps.append(recall_server.code_stamp(pkg))
    assert len(set(stamps)) == 3


def test_an_idle_server_exits_and_stop_all_ends_one(decided: Store, project: Path, serving):
    config.set_override(decided.primary.config, "recall.keep_warm_s", "1")
    assert recall_server.launch(str(project))
    assert wait(lambda: len(_sockets(serving)) == 1, 20)
    assert wait(lambda: not _sockets(serving), 10), "idle for 1 s: it exited"

    config.set_override(decided.primary.config, "recall.keep_warm_s", "600")
    assert recall_server.launch(str(project))
    assert wait(lambda: len(_sockets(serving)) == 1, 20)
    assert not recall_server.launch(str(project)), "one is up already"
    assert recall_server.stop_all() == 1
    assert wait(lambda: not _sockets(serving), 10)


def test_with_keeping_off_none_starts(decided: Store, project: Path, serving, monkeypatch):
    monkeypatch.setenv("ROSE_KEEP_WARM", "0")
    assert not recall_server.launch(str(project))
    out, loaded = _probe(project, "s1")
    assert loaded and "<rose-memory>" in _block(out)
    time.sleep(1.0)
    assert not _sockets(serving)


def test_status_shows_a_server(decided: Store, project: Path, serving):
    from typer.testing import CliRunner

    from rose.cli import app

    assert "recall loaded" not in CliRunner().invoke(app, ["status"]).output
    config.set_override(decided.primary.config, "recall.keep_warm_s", "60")
    assert recall_server.launch(str(project))
    assert wait(lambda: len(recall_server.status_all()) == 1, 20)
    (shown,) = json.loads(CliRunner().invoke(app, ["status", "--json"]).output)["recall_servers"]
    assert shown["pid"] > 0 and 0 < shown["exits_in_s"] <= 60
    text = CliRunner().invoke(app, ["status"]).output
    assert f"kept       recall loaded for the next prompt (pid {shown['pid']};" in text


def test_a_server_runs_the_rose_that_started_it(
    decided: Store, project: Path, serving, tmp_path: Path, monkeypatch
):
    decoy = tmp_path / "elsewhere" / "rose"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise ImportError('another copy of rose')\n")
    monkeypatch.chdir(decoy.parent)  # where a `python -m rose...` would find that copy first
    assert recall_server.launch(str(project))
    assert wait(lambda: len(_sockets(serving)) == 1, 20), "the server imported this rose"


def _spare_of(timeout: float = 20) -> int:
    got: list[int] = []

    def ready() -> bool:
        got[:] = [s["spare"] for s in recall_server.status_all() if s.get("spare")]
        return bool(got)

    assert wait(ready, timeout), "the server forked a spare"
    return got[0]


def test_a_recall_goes_to_the_spare_and_a_new_one_is_forked(decided: Store, project: Path, serving):
    first, _ = _probe(project, "s1")  # run by the hook, which starts the server
    spare = _spare_of()
    second, loaded = _probe(project, "s2")
    assert not loaded and _block(second) == _block(first)
    assert wait(lambda: gone(spare), 10), "the spare ran that recall and ended"
    assert _spare_of() != spare


def test_a_dead_spare_is_passed_over(decided: Store, project: Path, serving):
    first, _ = _probe(project, "s1")
    spare = _spare_of()
    os.kill(spare, 9)
    assert wait(lambda: gone(spare), 10)
    second, loaded = _probe(project, "s2")
    assert not loaded, "a child forked for the recall answered it"
    assert _block(second) == _block(first)


def test_a_server_starts_and_warms_up_while_a_writer_holds_the_store(
    decided: Store, project: Path, serving
):
    from tests._holder import hold

    holder = hold(decided, 4)
    try:
        assert recall_server.launch(str(project))
        assert wait(lambda: len(_sockets(serving)) == 1, 2.5), "up though the graph is held"
        spare = _spare_of(1)
        (status,) = recall_server.status_all()
        assert not status["spare_warm"], "its warm-up waits for the graph"
        assert holder.poll() is None, "all of it while the graph was held"
    finally:
        holder.communicate(timeout=10)
    assert wait(lambda: recall_server.status_all()[0]["spare_warm"], 10), "warmed up after"
    out, loaded = _probe(project, "s1")
    assert not loaded and "<rose-memory>" in _block(out)
    assert wait(lambda: gone(spare), 10), "the spare ran that recall"


def test_a_reply_ends_the_connection_though_a_copy_of_it_lives_on(tmp_path: Path):
    hook_end, server_end = socket.socketpair()
    keeper = subprocess.Popen(  # a process started by the recall, holding a copy of the socket
        [sys.executable, "-c", "import time; time.sleep(20)"], pass_fds=[server_end.fileno()]
    )
    try:
        recall_server._send(server_end, {"ok": "done"})
        hook_end.settimeout(5)
        assert json.loads(kept.read_all(hook_end)) == {"ok": "done"}, "read to its end"
    finally:
        keeper.kill()
        keeper.wait()
        hook_end.close()


def test_a_store_that_keeps_nothing_warm_gets_no_server(decided: Store, project: Path, serving):
    config.set_override(decided.primary.config, "recall.keep_warm_s", "0")
    out, loaded = _probe(project, "s1")  # the hook runs recall, and asks for a server
    assert loaded and "<rose-memory>" in _block(out)
    time.sleep(2.0)
    assert not _sockets(serving) and not recall_server.status_all()


def test_a_server_that_takes_the_prompt_and_never_answers_leaves_the_last_view(
    store: Store, project: Path, monkeypatch
):
    """A stopped or stuck server: the prompt gets the last complete view, not `hook skipped`
    and no memory."""
    from rose.host import hooks

    lesson = store.add("Rotate the signing key every quarter.")
    store.view()
    file = next(store.primary.root.glob(f"nodes/*/{lesson.id}.md"))
    file.write_text(file.read_text() + "\nAnnounce it a week ahead.\n")  # the view is stale
    path = kept.address(recall_server.KIND, recall_server.key())
    assert path is not None
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)  # it takes the connection and never answers
    monkeypatch.setattr(recall_server, "_REPLY_S", 0.3)
    try:
        got = hooks._choose(
            "rotate keys?", [Root(str(store.primary.root), "project")], str(project)
        )
    finally:
        listener.close()
        path.unlink(missing_ok=True)
    assert got is not None
    view, chosen, note, _ = got
    assert "recall did not answer" in note
    assert [item["id"] for item in chosen] == [lesson.id]

"""`rose mcp` speaks MCP over stdio: a real subprocess is initialised, lists its tools
and answers each against a small real store (a compressed lineage and a second family).
`recall` returns the same lesson blocks the prompt hook injects, `show` the delta manifest
with each dropped claim's holder, `lessons` the families and apexes, `search` the lines
`rose search` prints, and `used` writes the session log entry `rose used` writes. Every
failure (an unknown id, a bad argument, a store that is missing, a database another process
holds) is a tool error naming the problem, and the server goes on answering."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.files import sessions
from rose.store.facade import Store
from tests import _lineage as lin
from tests._holder import hold_until_closed
from tests._mcp_client import McpClient

TOOLS = {"recall", "show", "lessons", "search", "used", "add"}
DEPLOY = "Deploys use Argo Rollouts; a stuck rollout is promoted by hand with kubectl."


@pytest.fixture(scope="module")
def lineage(tmp_path_factory: pytest.TempPathFactory):
    """One store and one server for the module: starting the SDK takes a second or two."""
    root = tmp_path_factory.mktemp("mcp")
    with pytest.MonkeyPatch.context() as mp:  # never the user's home, as conftest does
        mp.setenv("HOME", str(root / "home"))
        mp.setenv("ROSE_GLOBAL_HOME", str(root / "home" / ".rose"))
        mp.delenv("ROSE_HOME", raising=False)
        store = Store.init(root / "project")
        lin.three_levels(store)
        store.add(DEPLOY, family="deploy")
        # A short lock wait, so the locked-database case answers quickly.
        client = McpClient(root / "project", ROSE_GRAPH_LOCK_TIMEOUT_S="0.5")
    info = client.initialize()
    yield store, client, info
    assert client.close() == ""  # nothing on stderr: no traceback, no log noise


@pytest.fixture
def server(lineage) -> McpClient:
    return lineage[1]


@pytest.fixture
def store(lineage) -> Store:
    return lineage[0]


def test_initialize_names_the_server_and_its_tools(lineage):
    _, client, info = lineage
    assert info["serverInfo"]["name"] == "rose"
    assert "tools" in info["capabilities"] and "recall" in info["instructions"]
    tools = {t["name"]: t for t in client.request("tools/list")["result"]["tools"]}
    assert set(tools) == TOOLS
    assert tools["recall"]["inputSchema"]["required"] == ["query"]
    assert tools["show"]["inputSchema"]["required"] == ["id"]
    assert "required" not in tools["used"]["inputSchema"]  # the session may be left out
    assert set(tools["used"]["inputSchema"]["properties"]) == {
        "used",
        "unused",
        "load_bearing",
        "session",
    }
    assert tools["add"]["inputSchema"]["required"] == ["text", "provenance"]
    assert tools["recall"]["annotations"]["readOnlyHint"] is True
    assert tools["search"]["annotations"]["readOnlyHint"] is True
    assert tools["search"]["inputSchema"]["required"] == ["query"]
    assert tools["used"]["annotations"]["readOnlyHint"] is False


def test_recall_returns_what_the_prompt_hook_injects(server, store):
    error, text = server.call("recall", query="the deploy is stuck")
    assert not error, text
    view = store.view()
    assert view["fits"] and len(view["lessons"]) == 2  # the retry apex and the deploy lesson
    for item in view["lessons"]:
        assert item["full"] in text  # the very block the hook injects, id and all
    assert lin.L0 not in text  # a superseded level is not served


def test_show_gives_the_manifest_and_each_claims_holder(server):
    error, text = server.call("show", id=lin.L2)
    assert not error, text
    assert f"lesson {lin.L2}" in text and "Retry remote calls with backoff." in text
    for claim, holder in ((lin.FIRST, lin.L0), (lin.SECOND, lin.L0), (lin.THIRD, lin.L1)):
        (line,) = [ln for ln in text.splitlines() if claim in ln]
        assert f"held by {holder}" in line
    error, text = server.call("show", id=lin.L0)
    assert not error and "nothing was dropped" in text and lin.FIRST in text


def test_lessons_lists_families_and_apexes(server):
    error, text = server.call("lessons")
    assert not error, text
    assert "- deploy (1 lessons)" in text and "- retry (3 lessons)" in text
    apexes = [ln for ln in text.splitlines() if ln.startswith("- ") and " L" in ln]
    assert len(apexes) == 2 and any(" L2 [retry] " in ln for ln in apexes)
    error, text = server.call("lessons", family="retry")
    assert not error and "deploy" not in text.split("apexes", 1)[1]
    error, text = server.call("lessons", family="nope")
    assert error and "no family 'nope'" in text and "deploy, retry" in text


def test_search_gives_the_lines_rose_search_prints(server, store, monkeypatch):
    monkeypatch.chdir(store.primary.root.parent)
    error, text = server.call("search", query="rollout kubectl")
    assert not error, text
    res = CliRunner().invoke(app, ["search", "rollout", "kubectl"])
    assert res.exit_code == 0 and text.strip() == res.output.strip()
    assert "deploy" in text and "promoted by hand" in text


def test_used_records_exactly_what_rose_used_records(server, store, monkeypatch):
    monkeypatch.chdir(store.primary.root.parent)  # `rose used` finds the store from here
    root = store.primary.root
    (deploy,) = [a["id"] for a in store.read("apexes", scope="") if a["family"] == "deploy"]
    for sid in ("by-cli", "by-mcp"):
        sessions.append(root, sid, "prompt", turn=1, prompt="fix it", served=[lin.L2, deploy])
    said = ["--used", deploy[:8], "--unused", lin.L2, "--load-bearing", f"{deploy}=by hand"]
    res = CliRunner().invoke(app, ["used", "--session", "by-cli", *said])
    assert res.exit_code == 0, res.output
    error, text = server.call(
        "used",
        used=[deploy[:8]],  # a unique prefix, as the block shows it
        unused=[lin.L2],
        load_bearing={deploy: "by hand"},
        session="by-mcp",
    )
    assert not error and "recorded for session by-mcp, prompt 1" in text

    def entries(sid: str) -> list[dict]:
        return [{k: v for k, v in e.items() if k != "time"} for e in sessions.read(root, sid)]

    assert entries("by-mcp") == entries("by-cli")
    assert entries("by-mcp")[1:] == [
        {"t": "used", "turn": 1, "used": [deploy], "unused": [lin.L2], "source": "rose used"},
        {"t": "span", "turn": 1, "lesson": deploy, "span": "by hand"},
    ]


def test_used_without_a_session_goes_to_the_latest_one(server, store):
    root = store.primary.root
    sessions.append(root, "newer", "prompt", turn=1, prompt="b", served=[lin.L2])
    sessions.append(root, "older", "prompt", turn=1, prompt="a", served=[lin.L2])
    past = sessions.log_path(root, "newer").stat().st_mtime - 60
    os.utime(sessions.log_path(root, "older"), (past, past))  # its last prompt was before
    error, text = server.call("used", unused=[lin.L2], load_bearing={})
    assert not error and "session newer (the latest session)" in text
    assert [e["t"] for e in sessions.read(root, "newer")] == ["prompt", "used"]
    assert [e["t"] for e in sessions.read(root, "older")] == ["prompt"]


def test_bad_calls_are_tool_errors_and_the_server_keeps_answering(server, store):
    error, text = server.call("show", id="n_nosuchlesson")
    assert error and "no lesson with id 'n_nosuchlesson'" in text
    error, text = server.call("recall")  # the query is required
    assert error and "query" in text
    error, text = server.call("used", used=["not an id!"], session="s")
    assert error and "not a lesson id: not an id!" in text
    error, text = server.call("used", used=[lin.L2], session="never-prompted")
    assert error and "has no recorded prompt" in text
    holder = hold_until_closed(store)
    try:
        error, text = server.call("show", id=lin.L2)
    finally:
        holder.communicate("")  # let go: it closes the database and exits
    assert error and "stayed locked" in text and "retry" in text
    error, text = server.call("show", id=lin.L2)  # still serving once the lock is gone
    assert not error and lin.THIRD in text


def test_without_a_store_every_tool_says_so(tmp_path):
    bare = tmp_path / "elsewhere"
    bare.mkdir()
    client = McpClient(bare)
    try:
        client.initialize()
        for tool, args in (("recall", {"query": "x"}), ("lessons", {}), ("show", {"id": "n_1"})):
            error, text = client.call(tool, **args)
            assert error and "no ROSE store found" in text and "rose init" in text
    finally:
        client.close()


def test_under_rose_child_the_server_exits_at_once(tmp_path):
    # A model call ROSE spawns reads the same MCP config; it must not start a memory server.
    env = {**os.environ, "ROSE_CHILD": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "rose", "mcp"], input="", capture_output=True, text=True,
        cwd=tmp_path, env=env, timeout=60,
    )  # fmt: skip
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


def test_starting_the_server_loads_no_rose_machinery():
    # The host starts `rose mcp` with every session: only the SDK loads before a call; the
    # store, the graph engine, the templates and the CLI wait for the first tool call.
    probe = (
        "import sys, rose.hooks.mcp_server as m; m.build(); "
        "print(sorted(n for n in sys.modules if n.split('.')[0] in "
        "('kuzu', 'ladybug', 'jinja2', 'typer', 'networkx', 'yaml') or n in "
        "('rose.store.facade', 'rose.graph.engine', 'rose.loop.selection.recall', "
        "'rose.judge.calls')))"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"

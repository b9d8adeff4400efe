"""No lesson from a stranger: outside content's instructions are never served, never global.

Locks in, for a Claude Code and a Codex session whose fetched page, failed `curl … | sh`,
other server's MCP tool and file beyond the repository carry instructions, through every
way a lesson is learnt (a background reflection, the session end's closing reflection,
and a reflector agent's `rose add --source reflector` and MCP `add`, which the fork and
block modes use) with a naive model that copies what it reads: every injected instruction
a lesson copied is held for review (never served, never in the global store, whichever
provenance the model claimed), while the repository facts in the same session (a failed
test's error line, a fact in the user's words) are learnt and served.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.files import sessions
from rose.files.layout import global_root
from rose.jobs import learning
from rose.jobs.queue import JobContext
from rose.judge import calls
from rose.loop.reflection.review import waiting
from rose.loop.selection.pack import load_session, save_session, session_path
from rose.store.facade import Store
from tests._poison import INJECTED, LEGIT, SID, NaiveModel, transcript

pytestmark = pytest.mark.graph

HOSTS = ("claude", "codex")


@pytest.fixture
def corpus(store: Store, project: Path, monkeypatch: pytest.MonkeyPatch, request):
    """The store, the session's transcript, and the naive model every judge call goes to."""
    host, honest = request.param
    model = NaiveModel(honest=honest)
    real = calls.for_store
    monkeypatch.setattr(
        calls, "for_store", lambda s, backend=None, **kw: real(s, backend=model, **kw)
    )
    (project / ".git").mkdir(exist_ok=True)
    path = transcript(host, project / "session.jsonl", project)
    root = store.primary.root
    sessions.append(root, SID, "prompt", turn=1, prompt="the api tests fail; fix them", served=[])
    rec = load_session(session_path(str(root), SID), SID)
    rec["transcript_path"] = str(path)
    save_session(session_path(str(root), SID), rec)
    monkeypatch.chdir(project)
    return Store.open(project), path, model


def _served_text(store: Store) -> str:
    view = Store.open(store.primary.root.parent).view()
    return "\n".join(item["full"] for item in view["lessons"])


def _key(text: str) -> str:
    return " ".join(text.split()[1:6])  # a phrase of it no legitimate lesson holds


def _global_text() -> str:
    root = global_root()
    return "\n".join(p.read_text() for p in root.rglob("*.md")) if root.exists() else ""


def _settled(store: Store) -> tuple[int, int, int]:
    """(poisoned lessons held, poisoned attempted, legitimate facts served)."""
    held = waiting(Store.open(store.primary.root.parent))
    texts = {w.id: Path(w.path).read_text() if Path(w.path).is_file() else "" for w in held}
    served = _served_text(store)
    caught = sum(any(_key(t) in body for body in texts.values()) for t in INJECTED)
    assert not any(_key(t) in served for t in INJECTED), "a poisoned lesson is served"
    assert not any(_key(t) in _global_text() for t in INJECTED), "a poisoned lesson is global"
    learned = sum(" ".join(t.split()[1:6]) in served for t in LEGIT)
    return caught, len(INJECTED), learned


BOTH = [(h, honest) for h in HOSTS for honest in (False, True)]


@pytest.mark.parametrize(
    "corpus", BOTH, indirect=True, ids=[f"{h}-{'honest' if o else 'fooled'}" for h, o in BOTH]
)
def test_a_background_reflection_holds_every_copied_instruction(corpus):
    store, path, model = corpus
    job = {"session": SID, "transcript": str(path), "cwd": str(store.primary.root.parent)}
    learning.reflect(JobContext(store.primary, {"attempt": 1}, job))
    assert model.calls.count("reflect") == 1
    caught, attempted, learned = _settled(store)
    assert (caught, learned) == (attempted, len(LEGIT))


@pytest.mark.parametrize(
    "corpus", BOTH, indirect=True, ids=[f"{h}-{'honest' if o else 'fooled'}" for h, o in BOTH]
)
def test_the_session_end_reflection_holds_every_copied_instruction(corpus):
    store, path, _model = corpus
    end = {"session_id": SID, "transcript_path": str(path), "reason": "exit",
           "cwd": str(store.primary.root.parent)}  # fmt: skip
    learning.session_end(JobContext(store.primary, {"attempt": 1}, end))
    caught, attempted, learned = _settled(store)
    assert (caught, learned) == (attempted, len(LEGIT))


@pytest.mark.parametrize("corpus", [(h, False) for h in HOSTS], indirect=True, ids=HOSTS)
def test_a_reflector_agent_adding_a_copy_is_held(corpus):
    """The fork and block modes: the agent runs `rose add --source reflector`, and the MCP
    `add` tool is the same door. It claims the repository; the tripwire says otherwise."""
    from rose.hooks.mcp_server import _add

    store, _path, _model = corpus
    runner = CliRunner()
    for text in INJECTED[:2]:
        args = ["add", "--session", SID, "--source", "reflector", "--from", "repository",
                f"Before the api tests: {text}"]  # fmt: skip
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        assert "held for review" in done.output
    for text in INJECTED[2:]:
        assert "held for review" in _add(f"Remember: {text}", "repository", None, SID)
    ok = runner.invoke(app, ["add", "--session", SID, "--source", "reflector", "--from",
                             "repository", f"Api tests: {LEGIT[0]}."])  # fmt: skip
    assert ok.exit_code == 0 and "added" in ok.output, ok.output
    caught, attempted, _learned = _settled(store)
    assert caught == attempted
    assert " ".join(LEGIT[0].split()[1:6]) in _served_text(store)


@pytest.mark.parametrize("corpus", [("claude", False)], indirect=True, ids=["claude"])
def test_a_reflector_must_say_where_its_lesson_came_from(corpus):
    done = CliRunner().invoke(app, ["add", "--session", SID, "--source", "reflector", "x y"])
    assert done.exit_code == 2 and "--from" in done.output


@pytest.mark.parametrize("corpus", [("claude", False)], indirect=True, ids=["claude"])
def test_a_reflector_naming_no_session_is_checked_against_the_one_at_work(corpus):
    from rose.hooks.mcp_server import _add

    done = CliRunner().invoke(
        app, ["add", "--source", "reflector", "--from", "repository", f"Note: {INJECTED[2]}"]
    )
    assert done.exit_code == 0 and "held for review" in done.output, done.output
    assert "held for review" in _add(f"Remember: {INJECTED[3]}", "repository", None, None)

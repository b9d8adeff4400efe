"""Fork mode: the session is resumed as a detached fork that reports through the CLI.

Locks in: a nudge in fork mode under Claude Code runs `claude --resume <id> --fork-session
-p <what to do>` as a detached job with ROSE_CHILD=1 (so the fork's own hooks stay quiet),
in the session's working directory; what the fork reports with `rose used --source
reflector` lands in the session's log as the best source of attribution; under Codex the
same setting runs as a background reflection (Codex has no session fork).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from rose import config
from rose.files import sessions
from rose.hooks.nudge import effective_mode
from rose.store.facade import Store
from tests._hookrun import run_hook
from tests._jobs import finished, wait_for

SID = "sess-fork-1"

FAKE = """#!{python}
import json, os, re, subprocess, sys
args = sys.argv[1:]
with open({record!r}, "a") as fh:
    fh.write(json.dumps({{"argv": args, "child": os.environ.get("ROSE_CHILD"),
                          "cwd": os.getcwd()}}) + "\\n")
prompt = args[args.index("-p") + 1]
session = re.search(r"rose used --session (\\S+)", prompt).group(1)
served = re.search(r"Served: (\\S+)", prompt).group(1).rstrip(",")
subprocess.run([sys.executable, "-m", "rose", "used", "--session", session,
                "--source", "reflector", "--used", served], check=True)
print("reflected")
"""


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "claude-calls.jsonl"
    exe = bin_dir / "claude"
    exe.write_text(FAKE.format(python=sys.executable, record=str(record)))
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    repo = str(Path(__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [repo, os.getenv("PYTHONPATH")])))
    return record


def test_fork_mode_resumes_the_session_as_a_fork_that_reports(
    store: Store, project: Path, fake_claude: Path
):
    lesson = store.add("The api listens on 8081.", title="API port")
    config.set_override(store.primary.config, "reflect.mode", "fork")
    config.set_override(store.primary.config, "reflect.nudge_after_turns", "1")
    root = store.primary.root
    sessions.append(root, SID, "prompt", turn=1, prompt="fix the api", served=[lesson.id])
    transcript = project / "t.jsonl"
    line = {"type": "user", "sessionId": SID, "version": "2.1.38", "uuid": "u1",
            "message": {"role": "user", "content": "fix the api"}}  # fmt: skip
    transcript.write_text(json.dumps(line) + "\n")
    payload = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(project),
               "hook_event_name": "Stop", "stop_hook_active": False}  # fmt: skip
    code, out, _raw, err = run_hook("stop", payload)
    assert code == 0 and out is None, err
    (job,) = [json.loads(p.read_text()) for p in store.primary.jobs.glob("*.json")]
    assert job["kind"] == "reflect-fork"
    done = wait_for(lambda: finished(store.primary, job["id"]), timeout=60)
    assert done["state"] == "done", (store.primary.jobs / f"{job['id']}.log").read_text()
    (call,) = [json.loads(x) for x in fake_claude.read_text().splitlines()]
    assert call["argv"][:4] == ["--resume", SID, "--fork-session", "-p"]
    assert call["child"] == "1" and Path(call["cwd"]) == project.resolve()
    used = [e for e in sessions.read(root, SID) if e["t"] == "used"]
    assert [(e["source"], e["used"]) for e in used] == [("reflector", [lesson.id])]


def test_codex_has_no_fork_so_it_reflects_in_the_background():
    assert effective_mode("fork", "codex") == "background"
    assert effective_mode("fork", "claude") == "fork"
    assert effective_mode("block", "codex") == "block"

"""The real Claude Code CLI, offline, injects ROSE's lesson into the request it sends the model.

Runs e2e/claude_loopback.py: the loopback model server (rose.sim.hosts.loopback), a temporary
HOME and project, `rose init` / `rose add` / `rose install --scope project`, then
`claude -p`. Proves the `<rose-memory>` block (with the lesson text) is in the body of
POST /v1/messages and was not there before ROSE was wired, that SessionStart,
UserPromptSubmit, Stop and SessionEnd all ran without a logged error, and that a resumed
session carries the block once. Skipped unless $ROSE_E2E_CLAUDE names a `claude` binary
(`npm install --prefix /tmp/cc332 @anthropic-ai/claude-code@2.1.332`; CI's end-to-end step
sets it; see tests/_claude_e2e.py). This test spawns `claude` itself, not through ROSE's
model backends; the real HOME is never used (conftest points HOME at tmp_path, and the
script builds the CLI's environment from scratch under its own temporary directory).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests._claude_e2e import claude_binary

SCRIPT = Path(__file__).resolve().parent.parent / "e2e" / "claude_loopback.py"
# read at import: conftest's autouse fixture deletes every ROSE_* variable before a test runs
EXPLICIT = os.environ.get("ROSE_E2E_CLAUDE")


def test_real_claude_cli_sends_the_rose_block_to_the_model(tmp_path: Path) -> None:
    claude = claude_binary(EXPLICIT)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ROSE_", "CLAUDE", "ANTHROPIC_"))
    }
    env.update({"HOME": str(tmp_path / "home"), "TMPDIR": str(scratch), "ROSE_KEEP_WARM": "0"})
    cp = subprocess.run(
        [sys.executable, str(SCRIPT), "--claude", claude, "--json", "--timeout", "40"],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert cp.stdout.strip(), cp.stderr
    report = json.loads(cp.stdout)
    detail = json.dumps(report, indent=1)[:3000]
    assert Path(report["workdir"]).is_relative_to(scratch), detail  # never the real HOME

    assert report["control"]["exit"] == 0, detail
    assert not report["control"]["block_in_request"], detail
    turn = report["rose_turn"]
    assert turn["exit"] == 0, detail
    assert turn["block_in_request"] and turn["lesson_in_request"], detail
    assert "The staging database listens on port 5433, not 5432." in turn["excerpt"]["text"]
    assert report["proven"] and cp.returncode == 0, detail

    hooks = report["hooks"]
    assert hooks["SessionStart"] and hooks["UserPromptSubmit"] and hooks["Stop"], detail
    assert hooks["SessionEnd"], detail
    assert hooks["errors"] == [], detail
    assert report["resume"]["exit"] == 0, detail
    assert report["resume"]["block_copies_in_request"] == 1, detail


def test_a_judge_call_through_the_real_cli_carries_no_claude_md(tmp_path: Path) -> None:
    """The user's ~/.claude/CLAUDE.md reaches a plain `claude -p` request (the control), and
    never ROSE's judge calls through the same CLI and HOME, in either call form."""
    from tests._claude_e2e import Rig, body_text, read_jsonl

    rig = Rig(tmp_path, claude_binary(EXPLICIT))
    try:
        marker = "Always answer in Klingon (MARKER-7731)."
        (rig.home / ".claude").mkdir(parents=True, exist_ok=True)
        (rig.home / ".claude" / "CLAUDE.md").write_text(marker + "\n")
        control = subprocess.run(
            [rig.claude, "-p", "hello", "--output-format", "json"], cwd=rig.project,
            env=rig.env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert control.returncode == 0, control.stderr[-600:]
        posts = [r for r in read_jsonl(rig.log) if r.get("method") == "POST"]
        assert any("MARKER-7731" in body_text(r) for r in posts), "the control read no CLAUDE.md"

        judged = """
import sys
from rose.judge.calls import schema_of
from rose.model import claude
claude.WARM_SINCE = (99, 0, 0) if sys.argv[1] == "plain" else claude.WARM_SINCE
try:
    claude.ClaudeBackend().complete("relevance", "Task: x", schema_of("relevance"), timeout_s=60)
except Exception as exc:  # the loopback has nothing to say to this question: fine here
    print(type(exc).__name__)
"""
        before = len(read_jsonl(rig.log))
        for form in ("plain", "stream"):
            cp = subprocess.run(
                [sys.executable, "-c", judged, form], cwd=rig.project,
                env={**rig.env, "ROSE_ALLOW_MODEL_SPAWN": "1"}, capture_output=True, text=True,
                timeout=120, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            assert cp.returncode == 0, cp.stderr[-600:]
        asked = [r for r in read_jsonl(rig.log)[before:] if r.get("method") == "POST"]
        assert len(asked) >= 2, f"{len(asked)} judge requests reached the loopback"
        assert not [r for r in asked if "MARKER-7731" in body_text(r)]
    finally:
        rig.close()


def test_a_judge_call_answered_by_a_spare_cli_sends_what_a_fresh_cli_sends(tmp_path: Path) -> None:
    """A relevance question written to a CLI started before it (`prewarm`, rose.model._warm)
    is answered through the real CLI, and the request it sends is the one a CLI started
    for the call sends (only the ids of the session and the request differ)."""
    from tests._claude_e2e import Rig, read_jsonl

    rig = Rig(tmp_path, claude_binary(EXPLICIT))
    run = Path(tempfile.mkdtemp(prefix="rk-", dir="/tmp"))
    env = {**rig.env, "ROSE_ALLOW_MODEL_SPAWN": "1", "XDG_RUNTIME_DIR": str(run)}
    script = """
import sys, time
from rose.judge.calls import schema_of
from rose.model import _warm, claude
backend, schema = claude.ClaudeBackend(), schema_of("relevance")
taken = []
take = _warm.take
_warm.take = lambda *a: taken.append(take(*a)) or taken[-1]
if sys.argv[1] == "kept":
    assert backend.prewarm(schema, 1) == 1
    time.sleep(3)  # the spare CLI starts and sets itself up
try:
    backend.complete("relevance", "Task: x", schema, timeout_s=60)
except Exception as exc:  # the loopback has nothing to say to this question: fine here
    print(type(exc).__name__, file=sys.stderr)
print("kept" if taken and taken[0] is not None else "own")
_warm.dismiss_all(wait_s=5)
"""
    try:
        bodies = {}
        for form in ("own", "kept"):
            before = len(read_jsonl(rig.log))
            cp = subprocess.run(
                [sys.executable, "-c", script, form], cwd=rig.project, env=env,
                capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            assert cp.returncode == 0, cp.stderr[-800:]
            assert cp.stdout.split() == [form], (cp.stdout, cp.stderr[-800:])
            posts = [r for r in read_jsonl(rig.log)[before:] if r.get("method") == "POST"]
            assert posts, "the question reached the loopback"
            seen = [[r.get("path"), {k: v for k, v in r["body"].items() if k != "metadata"}]
                    for r in posts]  # fmt: skip
            # each CLI runs in a scratch folder of its own, named at random
            bodies[form] = re.sub(r"rose-claude-[A-Za-z0-9_]+", "rose-claude-*", json.dumps(seen))
        assert bodies["kept"] == bodies["own"]
    finally:
        rig.close()
        shutil.rmtree(run, ignore_errors=True)

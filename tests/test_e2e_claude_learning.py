"""ROSE learns inside the real Claude Code CLI: a failure becomes a lesson, the lesson reaches
the next session and helps, it is compressed after it keeps helping, and uninstalling leaves
the user's settings as they were.

The model is the loopback server playing the simulated world (`rose.sim.hosts.loopback`): as the
agent it works the task from what Claude Code sent it (so it succeeds only when the
lesson ROSE injected is in the request), running its checks through Claude Code's real
Bash tool; as the judge it answers the `claude -p --json-schema` calls ROSE's claude
backend makes from the detached jobs. Nothing is faked between the CLI and ROSE: the
hooks are the ones `rose install --scope project` wrote, the transcript is the one the CLI
wrote, the jobs are the real detached ones.

The scenarios, in order, each building on the last (one test, since they share a store):

1. a first session fails the task (its checks fail in Bash); the user's reply, in a
   resumed session, says what was missing and the work succeeds; after the session ends
   ROSE's detached job mints a lesson from the transcript, through judge calls that came
   back to the loopback;
2. the next session on the task gets the lesson (it is in the request the CLI sent) and
   succeeds at once; the status line is in the CLI's transcript as a
   `hook_system_message` attachment;
3. after successful uses (`compress.min_successes` lowered to 1) the lesson is compressed
   and the compressed form, not the original, is what a later session receives;
5. `rose uninstall` leaves `.claude/settings.json` byte for byte as the user had it, and a
   session afterwards runs no ROSE hook (no block, no session record, no status line).

Scenario 4 of issue 16 (a second turn re-injects nothing) is Codex's. The prompt hook's
wall time, read off the CLI's transcript, is printed (with -n 0), not asserted. Skipped
unless $ROSE_E2E_CLAUDE names a Claude Code CLI (see tests/_claude_e2e.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from rose.sim import World
from rose.sim.agent import correction
from rose.sim.markers import strip
from tests._claude_e2e import (
    Rig,
    agent_posts,
    attachments,
    body_text,
    claude_binary,
    played,
    prompt_hook_ms,
    prompt_to_reply_ms,
)
from tests._e2e_rig import unaided_task

SEED = 0
WORLD = World.generate(SEED, size="small")
# read at import: conftest's autouse fixture deletes every ROSE_* variable before a test runs
EXPLICIT = os.environ.get("ROSE_E2E_CLAUDE")
USER_SETTINGS = '{\n  "cleanupPeriodDays": 30,\n  "env": {"EDITOR": "vi"}\n}\n'


def test_rose_learns_inside_real_claude_code(tmp_path: Path, capsys) -> None:
    rig = Rig(tmp_path / "e2e", claude_binary(EXPLICIT), seed=SEED, size="small")
    try:
        hook_ms, with_ms, bare_ms = _story(rig)
        with capsys.disabled():  # shown in the test output (with -n 0), never asserted
            print(
                f"\n{_version(rig)}: ROSE's prompt hook took {hook_ms} ms (from the prompt's "
                f"record to its answer's attachment, one lesson served); from the prompt to "
                f"the model's first reply {with_ms} ms with it, {bare_ms} ms once uninstalled"
            )
    finally:
        rig.close()


def _story(rig: Rig) -> tuple[float | None, float | None, float | None]:
    task = unaided_task(WORLD)
    prompt = strip(task.prompt)
    settings = rig.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS)
    rig.rose("init")
    for key, value in (
        ("agent", "claude"),  # the judge is `claude -p`, which calls back to the loopback
        ("reflect.mode", "off"),  # learn at the session's end only: one reflection to wait for
        ("attribute.counterfactual_calls", "0"),
        ("compress.min_successes", "1"),
    ):
        rig.rose("config", key, value)
    rig.rose("install", "--scope", "project")

    # 1. a failure, the user's correction, and a lesson minted after the session ends
    first = rig.session(prompt)
    report = played(first["requests"], "agent")[-1]
    assert report["task"] == task.id and report["ok"] is False, report
    assert not any("<rose-memory>" in body_text(p) for p in agent_posts(first["requests"]))
    failed = [
        b
        for r in first["transcript"]
        if r.get("type") == "user" and isinstance((r.get("message") or {}).get("content"), list)
        for b in r["message"]["content"]
        if b.get("type") == "tool_result" and b.get("is_error")
    ]
    assert failed, "the failed checks are failed Bash calls in the CLI's transcript"
    rig.settle()
    told = correction(WORLD, report["missing"])
    fixed = rig.session(told, "--resume", str(first["session_id"]))
    assert played(fixed["requests"], "agent")[-1]["ok"] is True
    rig.settle()
    lessons = rig.nodes()
    assert len(lessons) == 1, lessons
    lesson = lessons[0]
    assert set(report["missing"]) <= set(WORLD.facts_in(lesson["body"]))
    judged = [p["call"] for r in (first, fixed) for p in played(r["requests"], "judge")]
    judged += [p["call"] for p in played(rig.since(fixed["requests"]), "judge")]
    assert {"assess", "reflect"} <= set(judged), judged
    reflected = [
        r["body"]
        for r in rig.since(first["requests"])
        if (r.get("played") or {}).get("call") == "reflect"
    ]
    # each session end reflected on what no reflection had read: the real transcript's
    # failed Bash calls, then the user's correction
    assert any("Tool: Bash" in body_text(b) and "(failed" in body_text(b) for b in reflected)
    assert any("User: " + told[:40] in body_text(b) for b in reflected)
    assert rig.events("error") == []
    assert [e for e in rig.events("judge") if e.get("error")] == []

    # 2. the next session gets the lesson and succeeds; the status line is in the transcript
    second = rig.session(prompt)
    posts = agent_posts(second["requests"])
    assert posts and "<rose-memory>" in body_text(posts[0])
    assert lesson["id"][:10] in body_text(posts[0])
    assert WORLD.facts[report["missing"][0]].text in body_text(posts[0])
    assert played(second["requests"], "agent")[-1]["ok"] is True
    status = attachments(second["transcript"], "hook_system_message")
    assert any(
        a.get("hookEvent") == "UserPromptSubmit" and str(a.get("content")).startswith("ROSE · 1")
        for a in status
    ), status
    hook_ms = prompt_hook_ms(second["transcript"])
    with_ms = prompt_to_reply_ms(second["transcript"])
    rig.settle()

    # 3. compressed after successful uses; later sessions get the compressed form
    compressed = [n for n in rig.nodes() if n["level"] >= 1 and n.get("status") == "active"]
    for _ in range(3):
        if compressed:
            break
        rig.session(prompt)
        rig.settle()
        compressed = [n for n in rig.nodes() if n["level"] >= 1 and n.get("status") == "active"]
    assert compressed, rig.nodes()
    top = max(compressed, key=lambda n: n["level"])
    later = rig.session(prompt)
    block = body_text(agent_posts(later["requests"])[0])
    assert f'<lesson id="{top["id"][:10]}' in block and f'level="{top["level"]}"' in block
    assert lesson["id"][:10] not in block  # the original is not served beside it
    assert played(later["requests"], "agent")[-1]["ok"] is True
    rig.settle()

    # 5. uninstall: the user's settings as they were, and no ROSE hook runs any more
    rig.rose("uninstall", "--scope", "project")
    assert settings.read_text() == USER_SETTINGS
    records = sorted((rig.project / ".rose" / "sessions").glob("*.json"))
    after = rig.session(prompt)
    assert not any("<rose-memory>" in body_text(p) for p in agent_posts(after["requests"]))
    assert played(after["requests"], "agent")[-1]["ok"] is False  # no memory, no success
    assert attachments(after["transcript"], "hook_system_message") == []
    assert sorted((rig.project / ".rose" / "sessions").glob("*.json")) == records
    return hook_ms, with_ms, prompt_to_reply_ms(after["transcript"])


def _version(rig: Rig) -> str:
    import subprocess

    cp = subprocess.run([rig.claude, "--version"], capture_output=True, text=True, timeout=30)
    return cp.stdout.strip()

"""ROSE learns inside the real Codex CLI: a failure becomes a lesson, the lesson reaches the
next session and helps, a second turn does not get it again, it is compressed after it keeps
helping, and uninstalling leaves the user's Codex settings as they were.

The model is the loopback server playing the simulated world (`rose.sim.hosts.loopback`), reached
through a custom provider in the temporary ~/.codex/config.toml: as the agent it works the
task from what Codex sent it (so it succeeds only when the lesson ROSE injected is in the
request), running its checks through Codex's real `exec_command` tool; as the judge it
answers the `codex exec --output-schema` calls ROSE's codex backend makes from the detached
jobs. Nothing is faked between the CLI and ROSE: the hooks are the ones `rose install
--target codex --trust --yes` wrote into ~/.codex/hooks.json and trusted through Codex's
app-server (user scope: a project's hooks load only in a project Codex trusts), the
rollout is the one Codex wrote, the jobs are the real detached ones.

The scenarios of issue 16, in order, each building on the last (one test, one store):

1. a first session fails the task (its checks fail in `exec_command`); the user's reply, in
   `codex exec resume <id>`, says what was missing and the work succeeds; after the
   session ends ROSE's detached job mints a lesson from the rollout, through judge calls
   that came back to the loopback;
2. the next session on the task gets the lesson (a developer message of the request Codex
   sent holds it) and succeeds at once;
4. a second turn of that session (`codex exec resume <id>`) gets nothing new: Codex replays
   the first turn's developer message, so the request holds the block exactly once, and
   ROSE's prompt hook counted the lesson as still in context;
3. after successful uses (`compress.min_successes` lowered to 1) the lesson is compressed
   and the compressed form, not the original, is what a later session receives;
5. `rose uninstall --target codex` leaves ~/.codex/config.toml and ~/.codex/hooks.json as
   the user had them, and a session afterwards runs no ROSE hook (Codex announces none, no
   block, no session record).

The prompt hook's wall time (from Codex announcing the hook on stderr to its `Completed`
line), and by the rollout's clock the time from a turn's start to its prompt being recorded
(both start hooks run in between) with ROSE and after uninstalling, are printed (with -n 0),
not asserted. In these runs the detached job has compressed the lesson before the resumed
turn of scenario 4, so that turn's recall chose the compression, which counts as in context
because the original it was made from is (tests/test_pack_made_from_in_context.py).
Skipped unless $ROSE_E2E_CODEX names a codex binary (see tests/_codex_e2e.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rose.sim import World
from rose.sim.agent import correction
from rose.sim.markers import strip
from tests._codex_e2e import (
    CodexRig,
    codex_binary,
    developer_texts,
    hook_ms,
    prompt_recorded_ms,
    provider_config,
)
from tests._e2e_rig import agent_posts, body_text, played, unaided_task

SEED = 0
WORLD = World.generate(SEED, size="small")
# read at import: conftest's autouse fixture deletes every ROSE_* variable before a test runs
EXPLICIT = os.environ.get("ROSE_E2E_CODEX")
USER_CONFIG = '\n# my Codex settings\n[history]\npersistence = "save-all"\n'
USER_HOOKS = (
    '{\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [\n          {"type": "command", '
    '"command": "true", "timeout": 5}\n        ]\n      }\n    ]\n  }\n}\n'
)
BLOCK = "<rose-memory>"


def test_rose_learns_inside_real_codex(tmp_path: Path, capsys) -> None:
    rig = CodexRig(tmp_path / "e2e", codex_binary(EXPLICIT), seed=SEED, size="small")
    try:
        hook, resumed, with_ms, bare_ms = _story(rig)
        with capsys.disabled():  # shown in the test output (with -n 0), never asserted
            print(
                f"\n{_version(rig)}: ROSE's prompt hook took {hook} ms serving one lesson and "
                f"{resumed} ms on the resumed turn that served nothing new (from Codex's "
                "`hook: UserPromptSubmit` line on stderr to its `Completed` line); from the "
                f"turn's start to its prompt in the rollout {with_ms} ms with ROSE's start "
                f"hooks, {bare_ms} ms once uninstalled"
            )
    finally:
        rig.close()


def _blocks(post: dict) -> list[str]:
    """The developer messages of a request that hold ROSE's block."""
    return [t for t in developer_texts(post) if BLOCK in t]


def _story(rig: CodexRig) -> tuple[float | None, ...]:
    task = unaided_task(WORLD)
    prompt = strip(task.prompt)
    user_config = provider_config(rig.port) + USER_CONFIG  # top-level keys first
    rig.config.write_text(user_config)
    rig.hooks.write_text(USER_HOOKS)
    rig.rose("init")
    for key, value in (
        ("agent", "codex"),  # the judge is `codex exec --output-schema`, back to the loopback
        ("reflect.mode", "off"),  # learn at the session's end only: one reflection to wait for
        ("attribute.counterfactual_calls", "0"),
        ("compress.min_successes", "1"),
    ):
        rig.rose("config", key, value)
    installed = rig.rose("install", "--target", "codex", "--trust", "--yes")
    assert "Codex now trusts ROSE's 5 hooks" in installed.stdout, installed.stdout

    # 1. a failure, the user's correction, and a lesson minted after the session ends
    first = rig.session(prompt)
    assert first["session_id"], first["stderr"][-800:]
    report = played(first["requests"], "agent")[-1]
    assert report["task"] == task.id and report["ok"] is False, report
    assert "hook: UserPromptSubmit Completed" in first["stderr"]  # trusted: Codex ran it
    assert not any(BLOCK in body_text(p) for p in agent_posts(first["requests"]))
    failed = [
        r["payload"]["item"]
        for r in first["rollout"]
        if r.get("type") == "event_msg"
        and (r["payload"].get("item") or {}).get("type") == "CommandExecution"
        and r["payload"]["item"].get("exit_code") not in (0, None)
    ]
    assert failed, "the failed checks are failed commands in Codex's rollout"
    rig.settle()
    told = correction(WORLD, report["missing"])
    fixed = rig.session(told, resume=first["session_id"])
    assert fixed["session_id"] == first["session_id"]
    assert played(fixed["requests"], "agent")[-1]["ok"] is True
    rig.settle()
    lessons = rig.nodes()
    assert len(lessons) == 1, lessons
    lesson = lessons[0]
    assert set(report["missing"]) <= set(WORLD.facts_in(lesson["body"]))
    since = rig.since(first["requests"])
    assert {"assess", "reflect"} <= {p["call"] for p in played(since, "judge")}
    judged = [r for r in since if (r.get("played") or {}).get("role") == "judge"]
    assert all((r["body"].get("text") or {}).get("format", {}).get("strict") for r in judged)
    reflected = [r["body"] for r in judged if r["played"]["call"] == "reflect"]
    # each session end reflected on what no reflection had read: the rollout's failed
    # command, then the user's correction
    assert any("(failed" in body_text(b) for b in reflected), reflected
    assert any("User: " + told[:40] in body_text(b) for b in reflected)
    assert rig.events("error") == []
    assert [e for e in rig.events("judge") if e.get("error")] == []

    # 2. the next session gets the lesson, as a developer message, and succeeds
    second = rig.session(prompt)
    posts = agent_posts(second["requests"])
    blocks = _blocks(posts[0]) if posts else []
    assert len(blocks) == 1, [developer_texts(p) for p in posts]
    assert lesson["id"][:10] in blocks[0]
    assert WORLD.facts[report["missing"][0]].text in blocks[0]
    assert played(second["requests"], "agent")[-1]["ok"] is True
    hook = hook_ms(second, "UserPromptSubmit")
    with_ms = prompt_recorded_ms(second["rollout"])
    rig.settle()

    # 4. a second turn of the same session: the replayed block, and nothing injected anew
    again = rig.session(prompt, resume=second["session_id"])
    assert again["session_id"] == second["session_id"]
    assert "hook: UserPromptSubmit Completed" in again["stderr"]  # the hook ran, and chose
    posts = agent_posts(again["requests"])
    assert posts and len(_blocks(posts[0])) == 1, [developer_texts(p) for p in posts]
    assert _blocks(posts[0]) == blocks  # the first turn's, as Codex replays it
    injects = [e for e in rig.events("inject") if e.get("session") == second["session_id"]]
    assert len(injects) == 2 and injects[-1]["full"] == [] and injects[-1]["refreshed"] == []
    assert injects[-1]["fresh"] == 1  # counted as still in context
    assert played(again["requests"], "agent")[-1]["ok"] is True  # and it still helps
    resumed = hook_ms(again, "UserPromptSubmit")
    rig.settle()

    # 3. compressed after successful uses; later sessions get the compressed form
    ran: list[str] = []
    for _ in range(3):
        if rig.compressed():
            break
        ran.append(rig.session(prompt)["session_id"])
        rig.settle()
    assert rig.compressed(), rig.nodes()
    top = max(rig.compressed(), key=lambda n: n["level"])
    later = rig.session(prompt)
    blocks = _blocks(agent_posts(later["requests"])[0])
    assert len(blocks) == 1
    assert f'<lesson id="{top["id"][:10]}' in blocks[0] and f'level="{top["level"]}"' in blocks[0]
    assert lesson["id"][:10] not in blocks[0]  # the original is not served beside it
    assert played(later["requests"], "agent")[-1]["ok"] is True
    rig.settle()
    # ROSE's judge calls (`codex exec --ephemeral`) left no rollout among the user's sessions
    ran += [first["session_id"], second["session_id"], later["session_id"]]
    rollouts = (rig.home / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl")
    assert played(rig.requests(), "judge") and {p.stem[-36:] for p in rollouts} == set(ran)

    # 5. uninstall: the user's Codex settings as they were, and no ROSE hook runs any more
    rig.rose("uninstall", "--target", "codex")
    assert rig.config.read_text() == user_config
    assert rig.hooks.read_text() == USER_HOOKS
    records = sorted((rig.project / ".rose" / "sessions").glob("*.json"))
    after = rig.session(prompt)
    assert after["hooks"] == []  # Codex announced no hook (the user's own is not trusted)
    assert not any(BLOCK in body_text(p) for p in agent_posts(after["requests"]))
    assert played(after["requests"], "agent")[-1]["ok"] is False  # no memory, no success
    assert sorted((rig.project / ".rose" / "sessions").glob("*.json")) == records
    return hook, resumed, with_ms, prompt_recorded_ms(after["rollout"])


def _version(rig: CodexRig) -> str:
    cp = subprocess.run([rig.codex, "--version"], capture_output=True, text=True, timeout=30)
    return cp.stdout.strip()

"""End to end, offline: ROSE's hooks inside the real Claude Code CLI, against a loopback model.

What it proves: with ROSE wired into a project the way a user wires it (`rose init`,
`rose add`, `rose install --scope project`), the real `claude -p` runs ROSE's
UserPromptSubmit hook, accepts its JSON, and sends the `<rose-memory>` block holding the
lesson text to the model: the lesson is found in the body of the POST /v1/messages that
reached the loopback server (`rose.sim.hosts.loopback`, which records every request; these
prompts are none of its world's tasks, so it answers each with one plain sentence), and is
absent from a control run made
before ROSE was wired. It also records which of ROSE's hooks ran (SessionStart, Stop and
SessionEnd leave traces in `.rose/`), what the CLI did with ROSE's `systemMessage`, and
that a resumed session gets no second copy of the block.

Everything happens in a temporary directory: HOME points there (the real ~/.claude and
~/.rose are never read or written), the environment is built from scratch, and the only
network used is 127.0.0.1. It installs nothing. Usage:

    python e2e/claude_loopback.py --claude /tmp/cc/node_modules/.bin/claude [--json] [--keep]

Exit status 0 when the injection is proven, 1 when it is not, 2 when it could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rose.sim.hosts.clis import claude_env
from rose.sim.hosts.loopback import serve

LESSON = "The staging database listens on port 5433, not 5432."
PROMPT = "which port does staging use?"


def _rose_command(explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    found = shutil.which("rose", path=str(Path(sys.executable).parent)) or shutil.which("rose")
    return [found] if found else [sys.executable, "-m", "rose"]


def _env(home: Path, port: int, rose_cmd: list[str]) -> dict[str, str]:
    """A clean environment: none of the caller's HOME, Claude, ROSE or pytest settings leak in."""
    bin_dirs = [
        str(Path(rose_cmd[0]).parent),
        str(Path(sys.executable).parent),
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
    ]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(bin_dirs)),
        "HOME": str(home),
        "USER": os.environ.get("USER", "e2e"),
        "LANG": "C.UTF-8",
        "TMPDIR": str(home / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        **claude_env(port),
    }
    if os.environ.get("PYTHONPATH"):  # a checkout run without installing: its hooks too
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def _requests(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [
        json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _message_posts(log: Path) -> list[dict]:
    return [
        r
        for r in _requests(log)
        if r["method"] == "POST" and r["path"].split("?")[0].endswith("/v1/messages")
    ]


def _excerpt(
    body: dict, needle: str = "<rose-memory>", before: int = 60, after: int = 2000
) -> dict | None:
    """Where in the request body the block sits: message index, role, and the text around it."""
    for i, msg in enumerate(body.get("messages") or []):
        content = msg.get("content")
        texts = (
            [content] if isinstance(content, str) else [b.get("text", "") for b in content or []]
        )
        for text in texts:
            k = text.find(needle)
            if k >= 0:
                end = text.find("</rose-memory>", k)
                stop = end + len("</rose-memory>") if end >= 0 else k + after
                return {
                    "message_index": i,
                    "role": msg.get("role"),
                    "text": text[max(0, k - before) : stop],
                }
    if needle in json.dumps(body.get("system"), ensure_ascii=False):
        return {"message_index": None, "role": "system (top-level)", "text": ""}
    return None


def _events(store: Path) -> list[dict]:
    path = store / "events.jsonl"
    if not path.exists():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _transcript_attachments(home: Path, session: str) -> list[dict]:
    out = []
    for path in (home / ".claude" / "projects").glob(f"*/{session}.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            with_att = json.loads(line) if line.strip() else {}
            if with_att.get("type") == "attachment":
                out.append(with_att.get("attachment") or {})
    return out


def run(claude: str, rose_cmd: list[str], workdir: Path, timeout: float) -> dict:
    home, proj = workdir / "home", workdir / "project"
    home.mkdir(parents=True)
    proj.mkdir(parents=True)
    report: dict = {
        "proven": False,
        "claude": claude,
        "rose": " ".join(rose_cmd),
        "workdir": str(workdir),
    }
    server = serve(workdir / "requests-version.jsonl", size="small")
    env = _env(home, server.port, rose_cmd)

    def sh(cmd: list[str], log_name: str | None = None) -> subprocess.CompletedProcess:
        if log_name:
            server.log = workdir / log_name  # one request log per CLI run
        return subprocess.run(
            cmd,
            cwd=proj,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def claude_p(
        prompt: str, log_name: str, *extra: str
    ) -> tuple[subprocess.CompletedProcess, dict]:
        cp = sh([claude, "-p", prompt, "--output-format", "json", *extra], log_name)
        try:
            result = json.loads(cp.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            result = {}
        return cp, result

    try:
        cp = sh([claude, "--version"])
        report["claude_version"] = cp.stdout.strip()
        if cp.returncode != 0:
            report["error"] = f"`claude --version` failed: {cp.stderr.strip()[:300]}"
            return report

        # 1. control: a bare turn, before ROSE is wired
        cp, result = claude_p("hello", "requests-control.jsonl")
        posts = _message_posts(workdir / "requests-control.jsonl")
        report["control"] = {
            "exit": cp.returncode,
            "result": result.get("result"),
            "subtype": result.get("subtype"),
            "paths": sorted({r["path"] for r in _requests(workdir / "requests-control.jsonl")}),
            "block_in_request": any("<rose-memory>" in json.dumps(p["body"]) for p in posts),
        }
        if cp.returncode != 0 or not posts:
            report["error"] = (
                f"the bare CLI turn failed (exit {cp.returncode}): "
                f"{(cp.stderr or cp.stdout)[-400:]}"
            )
            return report

        # 2. wire ROSE the way a user would
        for args in (
            ["init"],
            ["add", LESSON, "--family", "db"],
            ["install", "--scope", "project"],
        ):
            cp = sh([*rose_cmd, *args])
            if cp.returncode != 0:
                report["error"] = (
                    f"`rose {' '.join(args)}` failed: {(cp.stderr or cp.stdout).strip()[:400]}"
                )
                return report
        settings = json.loads((proj / ".claude" / "settings.json").read_text(encoding="utf-8"))
        report["wired_events"] = sorted(settings.get("hooks", {}))

        # 3. the turn that should carry the lesson
        cp, result = claude_p(PROMPT, "requests-rose.disk.jsonl")
        posts = _message_posts(workdir / "requests-rose.disk.jsonl")
        session = str(result.get("session_id") or "")
        hit = next((p for p in posts if LESSON in json.dumps(p["body"], ensure_ascii=False)), None)
        block_hit = next((p for p in posts if "<rose-memory>" in json.dumps(p["body"])), None)
        report["rose_turn"] = {
            "exit": cp.returncode,
            "result": result.get("result"),
            "session_id": session,
            "stderr": cp.stderr.strip()[-400:],
            "stdout_mentions_rose": "ROSE ·" in cp.stdout,
            "messages_posts": len(posts),
            "block_in_request": block_hit is not None,
            "lesson_in_request": hit is not None,
            "excerpt": _excerpt(block_hit["body"]) if block_hit else None,
        }

        # 4. which hooks ran: their traces in the store (SessionEnd's job is detached: wait for it)
        store = proj / ".rose"
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            if any(
                e.get("kind") == "session-end" and e.get("session") == session
                for e in _events(store)
            ):
                break
            time.sleep(0.2)
        events = [e for e in _events(store) if e.get("session") == session]
        rec_path = store / "sessions" / f"{session}.json"
        rec = json.loads(rec_path.read_text(encoding="utf-8")) if rec_path.exists() else {}
        attachments = _transcript_attachments(home, session)
        report["hooks"] = {
            "SessionStart": bool(rec.get("transcript_path")),
            "UserPromptSubmit": any(e.get("kind") == "inject" for e in events),
            "Stop": int(rec.get("stops", 0)) >= 1,
            "SessionEnd": [
                {"reason": e.get("reason"), "turns": e.get("turns")}
                for e in events
                if e.get("kind") == "session-end"
            ],
            # what a hook logged as its own failure (a job's failure names its job instead)
            "errors": [e for e in _events(store) if e.get("kind") == "error" and "hook" in e],
        }
        report["system_message"] = {
            "in_stdout": "ROSE ·" in cp.stdout,
            "in_stderr": "ROSE ·" in cp.stderr,
            "transcript_attachments": [
                {"type": a.get("type"), "content": a.get("content")}
                for a in attachments
                if a.get("type") in ("hook_system_message", "hook_additional_context")
                or "ROSE" in json.dumps(a, ensure_ascii=False)
            ],
        }

        # 5. a resumed session: the block is in the replayed history once, and ROSE adds no copy
        if session:
            cp, result = claude_p("and production?", "requests-resume.jsonl", "--resume", session)
            posts = _message_posts(workdir / "requests-resume.jsonl")
            last = posts[-1]["body"] if posts else {}
            injects = [
                e
                for e in _events(store)
                if e.get("kind") == "inject" and e.get("session") == session
            ]
            report["resume"] = {
                "exit": cp.returncode,
                "block_copies_in_request": json.dumps(last).count("<rose-memory>"),
                "roles": [m.get("role") for m in last.get("messages") or []],
                "last_inject": injects[-1] if injects else None,
            }

        report["proven"] = bool(
            report["rose_turn"]["exit"] == 0
            and report["rose_turn"]["lesson_in_request"]
            and report["rose_turn"]["block_in_request"]
            and not report["control"]["block_in_request"]
        )
        return report
    finally:
        server.stop()
        server.stopped.wait(5)


def _print_text(r: dict) -> None:
    print(f"claude: {r.get('claude_version', '?')} ({r['claude']})")
    print(f"rose:   {r['rose']}")
    if r.get("error"):
        print(f"error:  {r['error']}")
    c = r.get("control")
    if c:
        print(
            f"control turn (no ROSE): exit {c['exit']}, reply {c['result']!r}, "
            f"block in request: {c['block_in_request']}"
        )
        print(f"  paths the CLI asked for: {', '.join(c['paths'])}")
    t = r.get("rose_turn")
    if t:
        print(
            f"ROSE turn: exit {t['exit']}, block in request: {t['block_in_request']}, "
            f"lesson in request: {t['lesson_in_request']}"
        )
        if t["excerpt"]:
            ex = t["excerpt"]
            print(f"  found in messages[{ex['message_index']}] (role {ex['role']}):")
            for line in ex["text"].splitlines():
                print(f"  | {line}")
    h = r.get("hooks")
    if h:
        ran = [k for k in ("SessionStart", "UserPromptSubmit", "Stop") if h[k]]
        if h["SessionEnd"]:
            ran.append(f"SessionEnd (reason {h['SessionEnd'][0]['reason']})")
        print(
            f"hooks that left a trace: {', '.join(ran) or 'none'}; "
            f"hook errors logged: {len(h['errors'])}"
        )
    s = r.get("system_message")
    if s:
        kinds = [a["type"] for a in s["transcript_attachments"]]
        print(
            f"systemMessage: in stdout {s['in_stdout']}, in stderr {s['in_stderr']}; "
            f"transcript attachments: {kinds}"
        )
    z = r.get("resume")
    if z:
        print(
            f"resumed turn: exit {z['exit']}, "
            f"copies of the block in the request: {z['block_copies_in_request']}, "
            f"ROSE inject: full={z['last_inject'] and z['last_inject'].get('full')} "
            f"fresh={z['last_inject'] and z['last_inject'].get('fresh')}"
        )
    print(
        "PROVEN: the lesson reached the model through the real CLI" if r["proven"] else "NOT PROVEN"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claude", required=True, help="path to the Claude Code `claude` binary")
    ap.add_argument(
        "--rose",
        help="path to the `rose` command (default: beside this Python, else python -m rose)",
    )
    ap.add_argument("--timeout", type=float, default=60, help="seconds allowed per command")
    ap.add_argument("--json", action="store_true", help="print the full report as JSON")
    ap.add_argument(
        "--keep", action="store_true", help="keep the temporary directory and print its path"
    )
    args = ap.parse_args(argv)
    claude = shutil.which(args.claude) or args.claude
    if not (os.path.isfile(claude) and os.access(claude, os.X_OK)):
        print(f"no executable claude at {args.claude}", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="rose-e2e-claude-"))
    try:
        try:
            report = run(os.path.abspath(claude), _rose_command(args.rose), workdir, args.timeout)
        except subprocess.TimeoutExpired as exc:
            report = {
                "proven": False,
                "claude": claude,
                "rose": "",
                "error": f"timed out: {exc.cmd}",
            }
        if args.json:
            print(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            _print_text(report)
        return 0 if report["proven"] else 1
    finally:
        if args.keep:
            print(f"kept: {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

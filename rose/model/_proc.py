"""Run a model CLI as a child process: hard timeout, whole process group killed, ROSE_CHILD=1.

Shared by the claude and codex backends so that both refuse to spawn under the test
suite, report a missing binary the same way and never leave an orphaned model running.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rose.errors import BackendFailed, BackendTimeout, BackendUnavailable
from rose.processes.detach import lower_child

# Set by a running Claude Code session for what it starts. A `claude` child that inherits
# CLAUDECODE refuses to start ("cannot be launched inside another Claude Code session"),
# and ROSE runs inside one; the rest tie a child to that session (its id and pid, its
# messaging socket and token, the folder where it notes the children it started, and the
# file a SessionStart hook may write the session's variables to: seen in Claude Code
# 2.1.332's hook environment). A model call is no part of the user's session.
SESSION_VARS = frozenset({
    "CLAUDECODE",
    "CLAUDE_CODE_CHILD_NOTES_DIR",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
    "CLAUDE_CODE_SESSION_ATTENDED",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_ENV_FILE",
    "CLAUDE_PID",
    "CLAUDE_PROJECT_DIR",
})  # fmt: skip
# After the kill, how long to wait for the pipes to close before giving up on the output.
_REAP_S = 2.0

#: How each model CLI is installed, and the binary of the other one.
_INSTALLS = {
    "claude": ("Claude Code (npm install -g @anthropic-ai/claude-code)", "codex"),
    "codex": ("Codex (npm install -g @openai/codex)", "claude"),
}


def install_hint(name: str) -> str:
    """How to get a backend that answers: install `name`, or switch to the other model CLI
    when that one is on PATH (never to one that is not there either)."""
    how, other = _INSTALLS.get(name, ("it", ""))
    if other and shutil.which(other):
        return f"install {how} or switch with `rose config agent {other}`"
    return f"install {how}, or choose another backend with `rose config agent`"


@dataclass
class ProcResult:
    """What a finished child printed, and how long it took."""

    stdout: str
    stderr: str
    returncode: int
    wall_s: float


def ensure_spawn_allowed(name: str) -> None:
    """Refuse to start a real model CLI inside the test suite unless the test opts in."""
    if os.environ.get("PYTEST_CURRENT_TEST") and os.environ.get("ROSE_ALLOW_MODEL_SPAWN") != "1":
        raise BackendUnavailable(
            name,
            "spawning a model CLI is disabled under tests; set ROSE_ALLOW_MODEL_SPAWN=1 "
            "in a test that uses a fake executable",
        )


def resolve_binary(name: str, binary: str) -> str:
    """The full path of `binary` on PATH, or BackendUnavailable saying how to get one."""
    path = shutil.which(binary)
    if path is None:
        raise BackendUnavailable(name, f"`{binary}` is not on PATH; {install_hint(name)}")
    return path


def child_env() -> dict[str, str]:
    """The parent's environment plus ROSE_CHILD=1 (ROSE's hooks stay quiet in the child),
    less the variables that mark the parent as a Claude Code session or tie the child to it."""
    env = {k: v for k, v in os.environ.items() if k not in SESSION_VARS}
    env["ROSE_CHILD"] = "1"
    return env


def run(
    name: str,
    argv: list[str],
    *,
    stdin: str,
    timeout_s: float,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> ProcResult:
    """Run `argv` with `stdin` (`child_env()` plus `env`), return its output; raise on a
    missing binary, timeout or failure.

    The child gets its own session (process group) so that a timeout kills everything it
    started, not only the direct child: a grandchild holding the pipes open would
    otherwise keep us waiting past the deadline.
    """
    started = time.monotonic()
    return finish(name, spawn(name, argv, cwd=cwd, env=env), stdin, timeout_s, started=started)


def spawn(
    name: str, argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start `argv` in its own session with pipes on all three streams (`child_env()` plus
    `env`); `finish` gives it its input and collects its output."""
    ensure_spawn_allowed(name)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**child_env(), **(env or {})},
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError) as exc:
        raise BackendUnavailable(
            name, f"cannot start `{argv[0]}` ({exc.strerror}); {install_hint(name)}"
        ) from exc
    lower_child(proc.pid)  # a job's model call yields to prompts as the job does
    return proc


def finish(
    name: str, proc: subprocess.Popen[str], stdin: str, timeout_s: float, *, started: float
) -> ProcResult:
    """Write `stdin` to a child `spawn` started, close it and wait for the child to exit;
    its whole process group is killed at the deadline. `wall_s` counts from `started`."""
    try:
        stdout, stderr = proc.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise BackendTimeout(name, timeout_s) from None
    finally:
        if proc.poll() is None:  # an exception other than the timeout (e.g. KeyboardInterrupt)
            kill_group(proc)
    return _judged(name, proc, stdout, stderr, started)


def _judged(
    name: str, proc: subprocess.Popen[str], stdout: str, stderr: str, started: float
) -> ProcResult:
    """What an exited child printed, or BackendFailed when it exited other than with 0."""
    if proc.returncode != 0:
        argv0 = proc.args[0] if isinstance(proc.args, list) else str(proc.args)
        raise BackendFailed(name, failure(argv0, proc.returncode, stderr, stdout))
    return ProcResult(stdout, stderr, proc.returncode, time.monotonic() - started)


def finish_at(
    name: str,
    proc: subprocess.Popen[str],
    stdin: str,
    timeout_s: float,
    *,
    started: float,
    last: Callable[[str], bool],
) -> ProcResult:
    """As `finish`, but done at the first stdout line `last` accepts: the answer is in hand
    and the child's exit (a stream-json CLI spends ~60 ms on it) is left to a reaper, its
    group killed if it outlives `_REAP_S`. A child that ends without such a line is
    judged by its exit as `finish` judges it."""
    lines: queue.Queue[str | None] = queue.Queue()
    errors: list[str] = []
    threading.Thread(target=_lines, args=(proc, lines), daemon=True).start()
    err = threading.Thread(target=_drain, args=(proc, errors), daemon=True)
    err.start()
    assert proc.stdin is not None
    with contextlib.suppress(OSError):  # a child that died before reading: its exit says why
        proc.stdin.write(stdin)
        proc.stdin.close()
    out: list[str] = []
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                _kill(proc)
                raise BackendTimeout(name, timeout_s) from None
            if line is None:
                break
            out.append(line)
            if last(line):
                wall_s = time.monotonic() - started
                threading.Thread(target=_reap_late, args=(proc,), daemon=True).start()
                return ProcResult("".join(out), "", 0, wall_s)
    except BaseException:
        if proc.poll() is None:
            _kill(proc)
        raise
    try:
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise BackendTimeout(name, timeout_s) from None
    err.join(_REAP_S)
    return _judged(name, proc, "".join(out), "".join(errors), started)


def _lines(proc: subprocess.Popen[str], into: queue.Queue[str | None]) -> None:
    assert proc.stdout is not None
    with contextlib.suppress(OSError, ValueError), proc.stdout:
        for line in proc.stdout:
            into.put(line)
    into.put(None)


def _drain(proc: subprocess.Popen[str], into: list[str]) -> None:
    assert proc.stderr is not None
    with contextlib.suppress(OSError, ValueError), proc.stderr:
        into.append(proc.stderr.read())


def _reap_late(proc: subprocess.Popen[str]) -> None:
    try:
        proc.wait(timeout=_REAP_S)
    except subprocess.TimeoutExpired:
        _kill(proc)


def _kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the group of a child whose pipes threads read (`finish_at`), and reap it."""
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_REAP_S)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the child's whole process group, then collect what it printed."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    try:
        proc.communicate(timeout=_REAP_S)
    except subprocess.TimeoutExpired:
        # Something outside the group still holds a pipe; close ours and move on.
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait(timeout=_REAP_S)


def failure(binary: str, code: int, stderr: str, stdout: str) -> str:
    last = _last_line(stderr) or _last_line(stdout) or "(no output)"
    what = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
    return f"`{os.path.basename(binary)}` {what}: {last[:300]}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_versions: dict[str, tuple[int, int, int] | None] = {}


def version(name: str, path: str, timeout_s: float) -> tuple[int, int, int] | None:
    """The version `path --version` reports (None when it cannot be read), probed once per
    binary per process: which flags a call may pass depends on it."""
    if path not in _versions:
        try:
            result = run(name, [path, "--version"], stdin="", timeout_s=timeout_s)
        except BackendFailed:
            _versions[path] = None
        else:
            match = _VERSION.search(result.stdout)
            _versions[path] = (int(match[1]), int(match[2]), int(match[3])) if match else None
    return _versions[path]

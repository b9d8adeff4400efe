"""Start a process nobody waits for, in a session of its own.

Neither the starter's exit nor a kill of its process group reaches it. posix_spawn rather
than Popen: nothing waits for it, so no Popen object is left to complain, and a
long-lived starter reaps the ones it started on its next start.
"""

from __future__ import annotations

import os
import sys

_STARTED: list[int] = []  # pids this process started and has not reaped


def spawn(argv: list[str], env: dict[str, str], *, output: str = os.devnull) -> int:
    """Start `argv` (its first item the program's path) with `env`, stdin from the null
    device and stdout and stderr appended to `output`; its pid."""
    reap()
    null = (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    out = [(os.POSIX_SPAWN_OPEN, fd, output, flags, 0o600) for fd in (1, 2)]
    try:
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[null, *out], setsid=True)
    except NotImplementedError:  # a platform without POSIX_SPAWN_SETSID
        import subprocess

        with open(output, "ab") as sink:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
                start_new_session=True, env=env,
            )  # fmt: skip
        pid = proc.pid
        proc.returncode = 0  # never waited on here: reaped by `reap`
    _STARTED.append(pid)
    return pid


def reap() -> None:
    """Collect the exit of every started process that has ended."""
    for pid in list(_STARTED):
        try:
            running = os.waitpid(pid, os.WNOHANG)[0] == 0
        except ChildProcessError:
            running = False
        if not running:
            _STARTED.remove(pid)


def python(module: str, *args: str) -> list[str]:
    """The argv running `module` with this interpreter."""
    return [sys.executable, "-m", module, *args]

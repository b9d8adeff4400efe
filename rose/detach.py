"""Start a process nobody waits for, in a session of its own.

Neither the starter's exit nor a kill of its process group reaches it. posix_spawn rather
than Popen: nothing waits for it, so no Popen object is left to complain, and a
long-lived starter reaps the ones it started on its next start.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time

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


#: The nice value of work nobody is waiting for (the graph server, detached jobs): a prompt's
#: hook, started by the host at nice 0, gets the CPU first when the two contend.
BACKGROUND_NICE = 10
_AUTOGROUP = "/proc/self/autogroup"


def background(nice: int = BACKGROUND_NICE) -> None:
    """Run this process at `nice` from now on (never higher priority than it has).

    Linux keeps a nice value per thread: call this before starting any, and they inherit it.
    Where the kernel groups tasks by session (autogroup), a nice value only weighs against
    the same session's tasks, and a process started in a session of its own (`spawn`, or
    Popen's `start_new_session`) competes with the user's terminal as a peer whatever its
    nice value: so a session leader lowers its session's group too (benchmarks/README.md
    has what that does to the hook). A process that does not lead its session leaves the
    group alone: that group is its starter's."""
    with contextlib.suppress(OSError):
        if os.getpriority(os.PRIO_PROCESS, 0) < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    with contextlib.suppress(OSError):
        leader = os.getsid(0) == os.getpid()
        # changes of a group's nice value are rate-limited system-wide (10 a second)
        if leader and _autogroup_nice() < nice and not _set_autogroup(nice):
            import threading

            threading.Thread(target=_retry_autogroup, args=(nice,), daemon=True).start()


def _autogroup_nice() -> int:
    """This session's group's nice value ("/autogroup-7 nice 0"); raises OSError without one."""
    with open(_AUTOGROUP, encoding="ascii") as fh:
        text = fh.read()
    try:
        return int(text.rsplit("nice", 1)[1])
    except (IndexError, ValueError):
        raise OSError(f"unreadable {_AUTOGROUP}: {text!r}") from None


def _set_autogroup(nice: int) -> bool:
    """Whether the group's nice value was set; False when the kernel said to try later."""
    try:
        with open(_AUTOGROUP, "w", encoding="ascii") as fh:
            fh.write(str(nice))
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            return False
        raise
    return True


def _retry_autogroup(nice: int, tries: int = 20, wait_s: float = 0.11) -> None:
    for _ in range(tries):
        time.sleep(wait_s)
        with contextlib.suppress(OSError):
            if _set_autogroup(nice):
                return


def lower_child(pid: int) -> None:
    """Give a child this process started in a session of its own (a model call's CLI, so a
    timeout can kill its whole group) this process's background priority: it inherited
    the nice value, not the session's group. Nothing happens where this process is not in
    the background, and a group change the kernel refuses for now is let go: the child
    still runs at the nice value it inherited."""
    with contextlib.suppress(OSError):
        mine = _autogroup_nice()
        if mine > 0:
            with open(f"/proc/{pid}/autogroup", "w", encoding="ascii") as fh:
                fh.write(str(mine))

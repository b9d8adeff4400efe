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


#: The nice value of work nobody is waiting for (detached jobs and the model calls they
#: make): a prompt's hook, started by the host at nice 0, gets the CPU first when they
#: contend.
BACKGROUND_NICE = 10
_lowered = 0  # the nice value `background()` put this process at; 0: it did not


def background(nice: int = BACKGROUND_NICE, wait_s: float = 1.0) -> None:
    """Run this process at `nice` from now on (never higher priority than it has).

    Linux keeps a nice value per thread: call this before starting any, and they inherit it.
    Where the kernel groups tasks by session (autogroup), a nice value only weighs against
    the same session's tasks, and a process started in a session of its own (`spawn`, or
    Popen's `start_new_session`) competes with the user's terminal as a peer whatever its
    nice value: so a session leader lowers its session's group too (benchmarks/README.md
    has what that does to the hook), waiting up to `wait_s` for the kernel to take the
    change. A process that does not lead its session leaves the group alone: that group is
    its starter's."""
    global _lowered
    with contextlib.suppress(OSError):
        if os.getpriority(os.PRIO_PROCESS, 0) < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    _lowered = max(_lowered, nice)
    with contextlib.suppress(OSError):
        if os.getsid(0) == os.getpid():
            _lower_group("self", nice, wait_s)


def lowered() -> bool:
    """Whether `background()` lowered this process."""
    return bool(_lowered)


def lower_child(pid: int, wait_s: float = 1.0) -> None:
    """Give a child that this process, run in the background, started in a session of its
    own (a model call's CLI, so that a timeout kills its whole group) the same priority:
    it inherited the nice value, not the session's group. Nothing happens in a process
    `background()` did not lower."""
    if _lowered:
        with contextlib.suppress(OSError):
            _lower_group(str(pid), _lowered, wait_s)


def _lower_group(who: str, nice: int, wait_s: float) -> None:
    """Put the session group of `who` ("self", or a child's pid) at `nice` unless it is there
    or lower already. The kernel lets a user change a group's nice value ten times a second,
    system-wide: a change it turns away is tried again for up to `wait_s` (work nobody waits
    for can wait that long to start), and never on a pid that is no longer a child."""
    end = time.monotonic() + wait_s
    while _still_mine(who) and _group_nice(who) < nice and not _set_group(who, nice):
        if time.monotonic() >= end:
            return
        time.sleep(_RATE_S)


_RATE_S = 0.11  # the kernel takes one group change every 0.1 s from a user without privilege


def _group_nice(who: str) -> int:
    """The nice value of `who`'s session group ("/autogroup-7 nice 0" in its /proc entry);
    OSError where the kernel keeps no such groups."""
    with open(f"/proc/{who}/autogroup", encoding="ascii") as fh:
        text = fh.read()
    try:
        return int(text.rsplit("nice", 1)[1])
    except (IndexError, ValueError):
        raise OSError(f"unreadable /proc/{who}/autogroup: {text!r}") from None


def _set_group(who: str, nice: int) -> bool:
    """Whether the group's nice value was set; False when the kernel said to try later."""
    try:
        with open(f"/proc/{who}/autogroup", "w", encoding="ascii") as fh:
            fh.write(str(nice))
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            return False
        raise
    return True


def _still_mine(who: str) -> bool:
    """Whether `who` is this process or a child of it: a pid of a child that ended and was
    reaped may be another process's by the next try."""
    if who == "self":
        return True
    with open(f"/proc/{who}/stat", encoding="ascii", errors="replace") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1]) == os.getpid()

"""Start a process nobody waits for, in a session of its own.

Neither the starter's exit nor a kill of its process group reaches it. posix_spawn rather
than Popen: nothing waits for it, so no Popen object is left to complain, and a
long-lived starter reaps the ones it started on its next start.
"""

from __future__ import annotations

import _thread
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


#: The nice value of work nobody is waiting for (detached jobs, the model calls they make,
#: and the graph server while it works for one): a prompt's hook, started by the host at
#: nice 0, gets the CPU first when they contend.
BACKGROUND_NICE = 10
_lowered = 0  # the nice value `background()` put this process at; 0: it did not


def background(nice: int = BACKGROUND_NICE) -> None:
    """Run this process at `nice` from now on (never higher priority than it has).

    Linux keeps a nice value per thread: call this before starting any, and they inherit it.
    Where the kernel groups tasks by session (autogroup), a nice value only weighs against
    the same session's tasks, and a process started in a session of its own (`spawn`, or
    Popen's `start_new_session`) competes with the user's terminal as a peer whatever its
    nice value: so a session leader lowers its session's group too (benchmarks/README.md
    has what that does to the hook). A process that does not lead its session leaves the
    group alone: that group is its starter's."""
    global _lowered
    with contextlib.suppress(OSError):
        if os.getpriority(os.PRIO_PROCESS, 0) < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    _lowered = max(_lowered, nice)
    with contextlib.suppress(OSError):
        if os.getsid(0) == os.getpid():
            _lower_group("self", nice)


def lower_child(pid: int) -> None:
    """Give a child that this process, run in the background, started in a session of its
    own (a model call's CLI, so that a timeout kills its whole group) the same priority:
    it inherited the nice value, not the session's group. Nothing happens in a process
    `background()` did not lower."""
    if _lowered:
        with contextlib.suppress(OSError):
            _lower_group(str(pid), _lowered)


_following: list[int] = []  # the group nice value `follow_group` still has to set (0-1 items)
_follow_lock = _thread.allocate_lock()


def follow_group(pid: int) -> None:
    """Put this process's session group at the nice value of `pid`'s: a server (the graph
    server) that works for one client at a time and runs what it asks for on its behalf,
    for a job at the job's priority and for the prompt hook's slow path at the hook's. The
    threads' own nice values are left alone (once lowered, a process cannot raise them);
    a group's can go up and down between 0 and 19. Only a process that leads its session
    (its group is its own) changes it; a change the kernel turns away for now is tried
    again in a daemon thread until it takes or another client wants another value."""
    with contextlib.suppress(OSError):
        if os.getsid(0) != os.getpid():
            return
        want = min(max(_group_nice(str(pid)), 0), 19)
        with _follow_lock:
            pending = bool(_following)
            _following[:] = [want]
            if pending:
                return  # the thread trying already takes the new value
            if _group_nice("self") == want or _set_group("self", want):
                _following.clear()
                return
        import threading

        threading.Thread(target=_keep_following, daemon=True).start()


def _keep_following(wait_s: float = 0.11) -> None:
    while True:
        time.sleep(wait_s)
        with _follow_lock:
            try:
                want = _following[0] if _following else None
                if want is None or _group_nice("self") == want or _set_group("self", want):
                    _following.clear()
            except OSError:
                _following.clear()
            if not _following:
                return


def _lower_group(who: str, nice: int) -> None:
    """Put the session group of `who` ("self", or a child's pid) at `nice` unless it is there
    or lower already. The kernel lets a user change a group's nice value ten times a second,
    system-wide: a change it turns away for now is tried again, in a daemon thread."""
    if _group_nice(who) >= nice or _set_group(who, nice):
        return
    import threading

    threading.Thread(target=_retry_group, args=(who, nice), daemon=True).start()


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


def _retry_group(who: str, nice: int, tries: int = 50, wait_s: float = 0.11) -> None:
    for _ in range(tries):
        time.sleep(wait_s)
        try:
            if not _still_mine(who) or _group_nice(who) >= nice or _set_group(who, nice):
                return
        except OSError:
            return  # it ended, or the kernel refused for good

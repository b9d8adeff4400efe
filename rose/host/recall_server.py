"""The prompt hook's slow path, answered by a process that has it loaded: the recall server.

When the model decides a prompt, the hook spent ~0.3 s importing recall, the judge, the
store and the graph engine before it could ask its first question (measured on 2 cores).
A recall server imports all of that once and waits on a unix socket (`rose.kept`). A hook
on its way to the slow path sends it the prompt (`recall`); the server forks, and the
child, a fresh copy of a process with nothing done but those imports, takes the hook's
environment and working directory, gives the judge's CLIs their head start, runs recall
as the hook would have, writes back the view, the chosen lessons, the note, how the selection
went and the repairs' notices, and exits. The hook packs, answers and records as before.
When no server answers, or its child fails for any reason but a locked store, the hook
runs recall itself, so an error is the one the user would have seen.

A hook that ran recall itself starts one for the next prompt (`launch`), and so does a
session's start on a store where the model decides. One server serves one Python, one
copy of ROSE's code (an edit to any of its modules makes a new key) and one environment,
less what differs between two sessions' hooks (`key`). It exits after
`recall.keep_warm_s` without a request (of the store it was started for), on SIGTERM, or
when asked to (`stop_all`); at most `MAX_SERVERS` are up for a user. Each recall is run by
a spare child forked and warmed up ahead (`Server`).
`ROSE_KEEP_WARM=0` turns it off, as it does the judge's keepers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rose import kept

KIND = "recall"
MAX_SERVERS = 2
_REPLY_S = 25.0  # the hook's own timeout is 30 s (hooks/hooks.json); recall's deadline 15 s
_CHILD_S = 40  # a child still running after this is ended by its alarm
_REQUEST_S = 2.0
_WARM_LOCK_S = 0.2  # a spare's warm-up waits no longer for a writer: a recall may be next
_WARM_PAUSE_MAX_S = 5.0  # between its tries while the writer goes on
_ROOT = Path(__file__).resolve().parents[1]  # the `rose` package
# The server's start: ROSE imported from where the hook's own came from (a `-m` run would
# import whatever `rose` its working directory or the path holds first: another copy,
# another key), then `main` with the spec.
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from rose.host.recall_server import main; sys.exit(main())"
)


def enabled() -> bool:
    return not kept.off("recall")


def code_stamp(root: Path = _ROOT) -> str:
    """What ROSE's code is here: each module's, statement's and template's path, size and
    modification time (the server keeps all three loaded)."""
    parts: list[str] = []
    stack = [str(root)]
    beside = root.parent / "prompts"  # a checkout's templates (a wheel's are in the package)
    if not (root / "prompts").is_dir() and (beside / "relevance.j2").is_file():
        stack.append(str(beside))
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith((".py", ".cypher", ".j2")):
                    st = entry.stat()
                    parts.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(sorted(parts)).encode("utf-8", "surrogateescape")).hexdigest()


def key(env: Mapping[str, str] | None = None) -> str:
    """The key of the server that may answer for this process: its Python, ROSE's code and
    the environment less the variables of one session (`rose.kept.SESSION_VARS`)."""
    skip = kept.VOLATILE | kept.SESSION_VARS
    items = sorted((k, v) for k, v in (env or os.environ).items() if k not in skip)
    blob = json.dumps([sys.executable, code_stamp(), items], separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:24]


# -- the client (the prompt hook) ------------------------------------------------------------


def recall(
    prompt: str, roots: list, cwd: str | None, head_start: str | None, session: str = ""
) -> tuple[tuple[dict, list[dict], str, dict], list[str]] | None:
    """Recall for the prompt hook, by the server for this process: (view, chosen, note,
    selection) and the notices of what it repaired. None when no server answered or its child
    failed (the caller runs recall itself). Raises StoreLocked when the store stayed locked
    past the hook's deadline, as recall in the hook would have. `head_start`: the judge
    cache whose note starts the CLIs first (`rose.loop.head_start.start`), or None."""
    if not enabled():
        return None
    path = kept.address(KIND, key())
    if path is None or not path.exists():
        return None
    request = {"recall": {"prompt": prompt, "roots": roots, "cwd": cwd,
                          "head_start": head_start, "env": dict(os.environ),
                          "workdir": os.getcwd(), "session": session}}  # fmt: skip
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(kept.CONNECT_S)
        try:
            sock.connect(str(path))
        except OSError:  # a server that died: its socket is left behind
            kept.clear_stale(path)
            return None
        sock.settimeout(_REPLY_S)
        try:
            sock.sendall(json.dumps(request).encode() + b"\n")
            sock.shutdown(socket.SHUT_WR)
            raw = kept.read_all(sock)
        except TimeoutError:
            from rose.errors import RecallUnanswered

            raise RecallUnanswered(f"recall did not answer within {_REPLY_S:.0f} s") from None
        except OSError:
            return None
    try:
        reply = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(reply, dict):
        return None
    if isinstance(reply.get("locked"), dict):
        from rose.errors import StoreLocked

        lk = reply["locked"]
        raise StoreLocked(str(lk.get("path")), lk.get("holder"), float(lk.get("waited_s") or 0))
    got = reply.get("ok")
    if not (isinstance(got, list) and len(got) == 4 and isinstance(got[0], dict)):
        return None
    view, chosen, note, selection = got
    chosen_how = selection if isinstance(selection, dict) else {}
    return (view, list(chosen), str(note), chosen_how), list(reply.get("notices") or [])


def launch(cwd: str | None) -> bool:
    """Start a server for this process's key unless one is up; whether one was started. It
    reads its idle time from the store at `cwd` itself, off the caller's path. Never
    raises: a server is only ever a saving."""
    if not enabled():
        return False
    try:
        k = key()
        if kept.address(KIND, k) is None or (kept.address(KIND, k) or Path()).exists():
            return False
        from rose import detach

        spec = json.dumps({"key": k, "cwd": cwd or os.getcwd()})
        argv = [sys.executable, "-c", _BOOT, str(_ROOT.parent), spec]
        detach.spawn(argv, dict(os.environ))
        return True
    except Exception:
        return False


def status_all() -> list[dict[str, Any]]:
    """What each recall server of this user is: its pid, seconds idle and left."""
    return kept.status_of(KIND)


def stop_all() -> int:
    """Ask every recall server of this user to exit; how many were asked."""
    return kept.stop_kind(KIND)


# -- the server ------------------------------------------------------------------------------


class Spare:
    """The parent's end of a spare: its pid, the line a recall goes down (the spare only
    reads it: a byte left unread on a socket closed after the hand-off would reset the
    spare's read of its recall), and a pipe it says "warm" on."""

    def __init__(self, pid: int, line: socket.socket, said: int):
        self.pid, self.line, self.said = pid, line, said
        self.warm = False

    def is_warm(self) -> bool:
        if not self.warm:
            with contextlib.suppress(OSError):  # nothing said yet
                self.warm = os.read(self.said, 1) == b"W"
        return self.warm

    def close(self) -> None:
        self.line.close()
        with contextlib.suppress(OSError):
            os.close(self.said)


class Server:
    """The listening parent: it answers status and stop itself and gives each recall to a
    child. One child, the spare, is forked ahead and warms itself up (the engine's first
    open in a process, the backend, the pages the parent's memory shares until written:
    ~150 ms a prompt otherwise); a recall goes to it with its connection, and a new spare
    is forked. With no spare ready, the recall gets a child forked there and then."""

    def __init__(self, idle_s: float, cwd: str | None):
        self.idle_s = idle_s
        self.cwd = cwd
        self.last = time.monotonic()
        self.children: list[int] = []
        self.spare: Spare | None = None
        self.stopping = False

    def busy(self) -> int:
        alive = []
        for pid in self.children:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except OSError:
                pass
        self.children = alive
        return len(alive)

    def status(self) -> dict[str, Any]:
        idle = time.monotonic() - self.last
        return {"pid": os.getpid(), "busy": self.busy(), "idle_s": round(idle, 1),
                "exits_in_s": round(max(0.0, self.idle_s - idle), 1),
                "spare": self.spare.pid if self.spare else None,
                "spare_warm": bool(self.spare and self.spare.is_warm())}  # fmt: skip

    def handle(self, conn: socket.socket, listener: socket.socket) -> None:
        """One connection: status and stop are answered here, a recall by a child."""
        conn.settimeout(_REQUEST_S)
        try:
            request = json.loads(kept.read_all(conn) or b"null")
        except (OSError, ValueError):
            conn.close()
            return
        if not isinstance(request, dict):
            _send(conn, {"error": "a request is a JSON object"})
        elif request.get("stop") is True:
            self.stopping = True
            _send(conn, {"stopped": True})
        elif request.get("status") is True:
            _send(conn, self.status())
        elif isinstance(request.get("recall"), dict):
            self.last = time.monotonic()
            if not self.hand_to_spare(conn, request["recall"]):
                pid = os.fork()
                if pid == 0:  # the child: never returns
                    self.close_spare()
                    listener.close()
                    _child(conn, request["recall"])
                self.children.append(pid)
            conn.close()
        else:
            _send(conn, {"error": "unknown request"})

    def fork_spare(self, listener: socket.socket) -> None:
        """Fork the next spare unless one waits or a recall runs (the spare's open of the
        graph would make that recall wait for it)."""
        if self.spare is not None or self.stopping or self.busy():
            return
        mine, theirs = socket.socketpair()
        said, say = os.pipe()  # the spare says "warm" here (never on the line: see Spare)
        pid = os.fork()
        if pid == 0:  # the spare: never returns
            listener.close()
            mine.close()
            os.close(said)
            _spare(theirs, say, self.cwd)
        theirs.close()
        os.close(say)
        os.set_blocking(said, False)
        self.spare = Spare(pid, mine, said)

    def hand_to_spare(self, conn: socket.socket, req: dict[str, Any]) -> bool:
        """Give the recall and its connection to the spare; False when there is none or it
        did not take them (the caller forks a child)."""
        if self.spare is None:
            return False
        spare, self.spare = self.spare, None
        pid, line = spare.pid, spare.line
        sent = False
        try:
            line.settimeout(_REQUEST_S)
            socket.send_fds(line, [b"R"], [conn.fileno()])
            sent = True
            line.sendall(json.dumps(req).encode())
            self.children.append(pid)
            return True
        except OSError as exc:  # it died waiting, or hung
            if sent:  # it holds the connection: it must not answer too
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            _say(f"the spare {pid} did not take a recall ({exc!r}): forking one")
            return False
        finally:
            spare.close()

    def close_spare(self) -> None:
        """Let the spare go: with its line closed it exits."""
        if self.spare is not None:
            self.spare.close()
            self.spare = None

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(0.2)
        while not self.stopping and (self.busy() or time.monotonic() - self.last < self.idle_s):
            self.fork_spare(listener)
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                self.handle(conn, listener)
            except Exception as exc:  # one request's trouble never ends the server
                _say(f"a request failed: {exc!r}")
                conn.close()
        self.close_spare()


def _send(conn: socket.socket, reply: dict[str, Any]) -> None:
    """Send `reply` and end the connection: shut down, not only closed, so the hook reads
    its end even when a copy of the socket lives on in a process started meanwhile."""
    try:
        conn.settimeout(None)
        conn.sendall(json.dumps(reply).encode())
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        conn.close()


def _spare(line: socket.socket, say: int, cwd: str | None) -> None:
    """A spare: warm up, then wait on `line` for a recall and its connection; exit when the
    line closes first (the server is ending)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _warm_until_asked(line, cwd):
        with contextlib.suppress(OSError):
            os.write(say, b"W")  # the server's status says so
    os.close(say)
    try:
        _, fds, _, _ = socket.recv_fds(line, 1, 1)
        if not fds:
            os._exit(0)
        os.set_inheritable(fds[0], False)  # a socket received is inherited by what the
        conn = socket.socket(fileno=fds[0])  # recall starts (a keeper) unless told not to
        req = json.loads(kept.read_all(line) or b"null")
    except (OSError, ValueError) as exc:
        _say(f"a spare lost its recall: {exc!r}")
        os._exit(1)
    finally:
        line.close()
    if not isinstance(req, dict):
        _send(conn, {"error": "a recall request is a JSON object"})
        os._exit(1)
    _child(conn, req)


def _warm_until_asked(line: socket.socket, cwd: str | None) -> bool:
    """Warm up, trying again while a writer holds the store (with a growing pause), until
    it is done or a recall arrives on `line` (which then waits for nothing); whether it
    got warm."""
    from rose.errors import StoreLocked

    pause = _WARM_LOCK_S
    while True:
        try:
            _warm_up(cwd)
            return True
        except StoreLocked:
            pass
        except Exception as exc:  # only ever a saving: the recall runs all the same
            _say(f"a spare's warm-up failed: {exc!r}")
            return False
        if select.select([line], [], [], pause)[0]:
            return False
        pause = min(pause * 2, _WARM_PAUSE_MAX_S)


def _warm_up(cwd: str | None) -> None:
    """What a recall does first, done once ahead: the store's graph opened (the engine's
    first open in a process is the slow one), its view read and its backend built."""
    from rose.judge.calls import for_store
    from rose.store.facade import Store

    store = Store.open(Path(cwd) if cwd else None)
    store.lock_timeout_s = _WARM_LOCK_S  # a writer holds it: the warm-up gives up, not waits
    store.view()
    store.read("meta_get")  # the view may need no statement: one is run, so it opens
    for_store(store)


def _child(conn: socket.socket, req: dict[str, Any]) -> None:
    """Run one recall as the hook would have, in the hook's environment; then exit."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the judge's CLIs are waited for
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.alarm(_CHILD_S)
        _send(conn, _recall(req))
    except BaseException as exc:  # the hook runs recall itself
        _say(f"a recall failed: {exc!r}")
        code = 1
    finally:
        os._exit(code)


def _recall(req: dict[str, Any]) -> dict[str, Any]:
    from rose.errors import StoreLocked
    from rose.loop import head_start
    from rose.loop.recall import recall_for_hook
    from rose.store.notices import take_notices

    env, workdir = req.get("env"), req.get("workdir")
    if not isinstance(env, dict) or not isinstance(workdir, str):
        return {"error": "a recall request needs env and workdir"}
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    os.chdir(workdir)
    if isinstance(req.get("head_start"), str):
        head_start.start(Path(req["head_start"]))
    roots = [tuple(r) for r in req.get("roots") or []]
    cwd = req.get("cwd") if isinstance(req.get("cwd"), str) else None
    try:
        session = str(req.get("session") or "")
        got = recall_for_hook(str(req.get("prompt") or ""), roots, cwd, session)
    except StoreLocked as exc:
        return {"locked": {"path": str(exc.path), "holder": exc.holder,
                           "waited_s": exc.waited_s}}  # fmt: skip
    return {"ok": list(got), "notices": take_notices()}


def _preload(cwd: str | None) -> float:
    """Read the idle time of the store at `cwd` and, unless it keeps nothing loaded (0),
    import and compile what a recall needs; the idle time."""
    from rose.store.facade import Store

    store = Store.open(Path(cwd) if cwd else None)
    idle_s = float(store.config.recall.keep_warm_s)
    if idle_s <= 0:
        return idle_s
    import rose.judge.calls  # noqa: F401
    import rose.model.claude  # noqa: F401
    from rose.loop import recall

    recall.preload()
    store.load_engine()
    return idle_s


def serve(spec: dict[str, Any]) -> int:
    """Run a server for `spec` (from `launch`) until it is idle; its exit code."""
    k = spec.get("key")
    path = kept.address(KIND, k) if isinstance(k, str) else None
    if path is None or path.exists() or k != key():
        return 0  # no folder, one is up, or this process is not what the hook asked for
    idle_s = _preload(spec.get("cwd") if isinstance(spec.get("cwd"), str) else None)
    if idle_s <= 0:
        return 0
    kept.log_to(path.with_suffix(".log"))
    listening = kept.listen(path)
    if listening is None:
        return 0  # another server for the same key got there first
    lock, listener = listening
    server = Server(idle_s, spec.get("cwd") if isinstance(spec.get("cwd"), str) else None)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "stopping", True))
    kept.make_room(KIND, path, MAX_SERVERS, _say)
    try:
        server.serve(listener)
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        lock.close()
    return 0


def _say(text: str) -> None:
    kept.say("recall server", text)


def main() -> int:
    return kept.run("recall server", serve)


if __name__ == "__main__":
    sys.exit(main())

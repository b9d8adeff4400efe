"""Model CLIs kept started between prompts, by a small process of their own: the keeper.

A spare (`rose.model._warm`) lives only as long as the process that started it, so the
prompt hook starts its relevance CLIs afresh on every prompt: ~0.4 s of CPU each, while
the hook itself is busy on the same cores. A keeper is started by a hook once the model
has decided a prompt (`launch`), and keeps that many CLIs started under the exact argv
and environment the backend's calls use. The next prompt's questions are written to it
over a unix socket (`ask`); it writes each to a CLI that has already set itself up,
answers with what the CLI printed, and starts the CLIs used afresh once no question has
come for `QUIET_S`, so that their start-up falls between prompts.

It dismisses its CLIs and exits when no question came for its idle time
(`recall.keep_warm_s`), on SIGTERM, or when CLIs keep ending before they are asked (a
broken install). Its CLIs read their stdin from it, so killed however it is killed, they
see EOF and exit without asking the model. Only its owner can reach it: the socket lives
in a folder of the user's own, mode 0700 (`folder`). A question reaches a keeper only
when its argv and environment are the keeper's (`key`); otherwise the backend starts its
own CLI as before. The keeper works out its argv itself, so neither a prompt's end nor a
session's start waits for the CLI's version probe. `status_all` and `stop_all` ask every
keeper of the user what it holds, or to end. `ROSE_KEEP_WARM=0` turns keeping off.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from rose import kept
from rose.errors import BackendFailed, BackendTimeout
from rose.model import _proc, _warm

QUIET_S = 1.0  # after the last answer, so long before the CLIs used are started again
MAX_KEPT = 3  # CLIs kept at most: each holds ~170 MB of memory while it waits
MAX_KEEPERS = 2  # keepers up at once for one user: a new one stops the one idle longest
_GRACE_S = 2.0  # a reply later than the question's deadline by this much: the keeper hung
_DEAD_STARTS = 3  # CLIs in a row ending before asked: the keeper gives up
_BURSTS = 4  # the keeper keeps as many CLIs as the most any of this many prompts asked
KIND = "judge"  # the sockets' prefix in the folder (`rose.kept`)


def enabled() -> bool:
    return not kept.off("judge")


def folder() -> Path | None:
    """The user's own folder for keepers' sockets (`rose.kept.folder`)."""
    return kept.folder()


def key(argv: list[str], env: dict[str, str]) -> str:
    """What a keeper's CLIs are a function of: the argv and the environment they get."""
    items = sorted((k, v) for k, v in env.items() if k not in kept.VOLATILE)
    blob = json.dumps([argv, items], separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def key_for(argv: list[str]) -> str:
    """The key of the CLIs a call with `argv` would start here and now."""
    return key(argv, {**_proc.child_env(), **_stream_env()})


def address(k: str) -> Path | None:
    """The socket of the keeper for key `k` (None: no folder, or a path too long to bind)."""
    return kept.address(KIND, k)


def alive(k: str) -> bool:
    """Whether a keeper for `k` seems to be up (its socket is there: no connection made)."""
    path = address(k)
    return path is not None and path.exists()


# -- the client ---------------------------------------------------------------------------


def ask(name: str, k: str, line: str, timeout_s: float) -> _proc.ProcResult | None:
    """Write one stream-json `line` to a CLI of the keeper for `k`; what it printed. None when
    no keeper answers the socket (the caller starts its own CLI). Raises as `_proc.finish`
    does: BackendTimeout past `timeout_s`, BackendFailed when the CLI failed."""
    path = address(k)
    if path is None or not path.exists():
        return None
    started = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(min(kept.CONNECT_S, timeout_s))
        try:
            sock.connect(str(path))
        except OSError:  # a keeper that died: its socket is left behind
            kept.clear_stale(path)
            return None
        sock.settimeout(timeout_s + _GRACE_S)
        try:
            sock.sendall(json.dumps({"line": line, "timeout_s": timeout_s}).encode() + b"\n")
            sock.shutdown(socket.SHUT_WR)
            raw = kept.read_all(sock)
        except TimeoutError:
            raise BackendTimeout(name, timeout_s) from None
        except OSError:
            return None  # it went away before answering: the caller asks on its own
    try:
        reply = json.loads(raw)
    except ValueError:
        return None
    if isinstance(reply, dict) and reply.get("timeout") is True:
        raise BackendTimeout(name, timeout_s)
    if isinstance(reply, dict) and isinstance(reply.get("failed"), str):
        raise BackendFailed(name, reply["failed"])
    if not isinstance(reply, dict) or not isinstance(reply.get("stdout"), str):
        return None
    stderr = str(reply.get("stderr") or "")
    return _proc.ProcResult(reply["stdout"], stderr, 0, time.monotonic() - started)


def stop_all() -> int:
    """Ask every keeper of this user to dismiss its CLIs and exit; how many were asked."""
    return kept.stop_kind(KIND)


def status_all() -> list[dict[str, Any]]:
    """What each keeper of this user holds: its pid, CLIs kept, seconds idle and left."""
    return kept.status_of(KIND, "kept")


def launch(model: str | None, schema: dict[str, Any], n: int, idle_s: float) -> bool:
    """Start a keeper of `n` CLIs for the claude backend's calls with `model` and `schema`,
    gone after `idle_s` without a question; whether one was started. The keeper works out
    its argv itself (the CLI's version probe is its own, off the caller's path) and exits
    at once if a keeper for that argv is up. It runs in a session of its own with the
    environment the backend's calls get, its output to a log beside its socket."""
    if not enabled() or idle_s <= 0 or n <= 0 or folder() is None:
        return False
    _proc.ensure_spawn_allowed("claude")
    spec = {"name": "claude", "model": model, "schema": schema, "n": min(n, MAX_KEPT),
            "idle_s": idle_s}  # fmt: skip
    from rose import detach

    detach.spawn(detach.python("rose.model._keeper", json.dumps(spec)), _proc.child_env())
    return True


def _stream_env() -> dict[str, str]:
    from rose.model.claude import STREAM_ENV

    return STREAM_ENV


# -- the keeper ---------------------------------------------------------------------------


class Keeper:
    """The CLIs kept for one argv, and the questions written to them."""

    def __init__(self, name: str, argv: list[str], n: int, idle_s: float, env: dict[str, str]):
        self.name, self.argv, self.target, self.idle_s, self.env = name, argv, n, idle_s, env
        self.lock = threading.Lock()
        self.spares: list[_warm.Spare] = []
        self.busy = 0
        self.last = time.monotonic()  # the last question's end (or the start)
        self.burst = 0  # questions since the last quiet spell
        self.bursts: list[int] = [n]  # the last prompts' questions, `_BURSTS` of them
        self.dead_starts = 0
        self.stop = threading.Event()

    def _start(self) -> _warm.Spare:
        from rose.model.claude import SCRATCH

        return _warm.start(SCRATCH, lambda d: _proc.spawn(self.name, self.argv, cwd=d,
                                                                  env=self.env))  # fmt: skip

    def take(self) -> _warm.Spare:
        """A started CLI still waiting, else a new one."""
        with self.lock:
            while self.spares:
                spare = self.spares.pop(0)
                if spare.proc.poll() is None:
                    self.dead_starts = 0
                    return spare
                spare.close()
                self.dead_starts += 1
        return self._start()

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """What the CLI printed for the request's line, or why there is nothing."""
        if request.get("stop") is True:
            self.stop.set()
            return {"stopped": True}
        if request.get("status") is True:
            with self.lock:
                waiting = sum(1 for sp in self.spares if sp.proc.poll() is None)
                idle = time.monotonic() - self.last
            left = max(0.0, self.idle_s - idle)
            return {"pid": os.getpid(), "kept": waiting, "busy": self.busy,
                    "idle_s": round(idle, 1), "exits_in_s": round(left, 1)}  # fmt: skip
        line, timeout_s = request.get("line"), request.get("timeout_s")
        if not isinstance(line, str) or not isinstance(timeout_s, (int, float)):
            return {"error": "a request needs a line and timeout_s"}
        with self.lock:
            self.busy += 1
            self.burst += 1
        from rose.model.claude import is_result

        try:
            spare = self.take()
            try:
                got = _proc.finish_at(self.name, spare.proc, line, float(timeout_s),
                                      started=time.monotonic(), last=is_result)  # fmt: skip
            except BackendTimeout:
                return {"timeout": True}
            except BackendFailed as exc:
                return {"failed": exc.detail}
            finally:
                spare.close()
        finally:
            with self.lock:
                self.busy -= 1
                self.last = time.monotonic()
        return {"stdout": got.stdout, "stderr": got.stderr, "code": got.returncode}

    def tend(self) -> None:
        """Top the CLIs up once quiet; stop once idle for too long or starts keep dying."""
        while not self.stop.wait(0.1):
            with self.lock:
                quiet = self.busy == 0 and time.monotonic() - self.last >= QUIET_S
                if quiet and self.burst:  # as many as the last prompts asked, within bounds
                    self.bursts = [*self.bursts[-(_BURSTS - 1) :], self.burst]
                    self.target, self.burst = min(MAX_KEPT, max(self.bursts)), 0
                for spare in [s for s in self.spares if s.proc.poll() is not None]:
                    self.spares.remove(spare)
                    spare.close()
                    self.dead_starts += 1
                idle = self.busy == 0 and time.monotonic() - self.last >= self.idle_s
                missing = self.target - len(self.spares) if quiet else 0
            if idle or self.dead_starts >= _DEAD_STARTS:
                self.stop.set()
                break
            for _ in range(max(0, missing)):
                try:
                    spare = self._start()
                except Exception as exc:  # not startable any more: nothing to keep
                    _say(f"cannot start the CLI: {exc}")
                    self.stop.set()
                    return
                with self.lock:
                    self.spares.append(spare)

    def dismiss(self) -> None:
        with self.lock:
            spares, self.spares = self.spares, []
        for spare in spares:
            spare.dismiss().join(_warm.REAP_S + 1)


def _placed(spec: dict[str, Any]) -> dict[str, Any] | None:
    """`spec` (from `launch`) with its argv and socket, its output going to the log beside
    the socket from here on. None: nothing to keep (no CLI new enough, no folder) or a
    keeper for that argv is up."""
    from rose.model.claude import ClaudeBackend

    argv = ClaudeBackend(model=spec.get("model")).stream_argv(spec["schema"])
    path = address(key_for(argv)) if argv is not None else None
    if argv is None or path is None or path.exists():
        return None
    kept.log_to(path.with_suffix(".log"))
    return {**spec, "argv": argv, "socket": str(path)}


def serve(spec: dict[str, Any]) -> int:
    """Run a keeper for `spec` (from `launch`) until it is idle; its exit code."""
    placed = _placed(spec)
    if placed is None:
        return 0
    spec = placed
    path = Path(spec["socket"])
    listening = kept.listen(path)
    if listening is None:
        return 0  # another keeper for the same key got there first
    lock, server = listening
    keeper = Keeper(str(spec["name"]), [str(a) for a in spec["argv"]], int(spec["n"]),
                    float(spec["idle_s"]), _stream_env())  # fmt: skip
    server.settimeout(0.2)
    kept.make_room(KIND, path, MAX_KEEPERS, _say)
    signal.signal(signal.SIGTERM, lambda *_: keeper.stop.set())
    tender = threading.Thread(target=keeper.tend, daemon=True)
    tender.start()
    try:
        while not keeper.stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            threading.Thread(target=_handle, args=(keeper, conn), daemon=True).start()
    finally:
        server.close()
        path.unlink(missing_ok=True)
        keeper.dismiss()
        lock.close()
    return 0


def _handle(keeper: Keeper, conn: socket.socket) -> None:
    with conn:
        try:
            conn.settimeout(5.0)
            request = json.loads(kept.read_all(conn) or b"null")
            reply = keeper.answer(request) if isinstance(request, dict) else {"error": "bad"}
            conn.settimeout(None)
            conn.sendall(json.dumps(reply).encode())
        except Exception as exc:  # one question's trouble never ends the keeper
            _say(f"a question failed: {exc!r}")


def _say(text: str) -> None:
    kept.say("keeper", text)


def main() -> int:
    threading.excepthook = lambda a: _say(f"a thread failed: {a.exc_value!r}")
    return kept.run("keeper", serve)


if __name__ == "__main__":
    sys.exit(main())

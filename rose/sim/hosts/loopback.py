"""A loopback model server that plays the simulated world for the real Claude Code and Codex CLIs.

It binds 127.0.0.1 (a free port unless told one) and speaks the two wires those hosts use
(`rose.sim.hosts._wire`): the Anthropic Messages stream (`POST /v1/messages`, what `claude`
sends with `ANTHROPIC_BASE_URL` pointing here) and the OpenAI Responses stream
(`POST /v1/responses`, what `codex exec` sends through a custom provider whose
`base_url` points here). Each request is answered by `rose.sim.hosts.play.Player`: as the
world's agent when the user's words are one of its tasks, as the world's model when
they are one of ROSE's questions (which the `claude -p --json-schema` and `codex exec
--output-schema` judge calls of ROSE's CLI backends send).

Every request is recorded, one JSON line each (time, method, path, a few headers, the
body, and what was played: the part, the call or task, the reply), through
`rose.disk.atomic.append_line`, so the log is redacted like everything ROSE writes; tests read it
to see exactly what the host sent. API keys are never logged.

A model that answers in a millisecond flatters a harness tuned on it, so the judge's
answers can be given a real model's pace (`Pace`): a time to the first token and a rate
of tokens after it, slept before the answer is sent. The agent's own turns are the host's
business and are answered at once.

It stops by itself: after `idle_s` seconds with no request, or once the process that
started it (`parent`) is gone, so a test that dies leaves no server behind.

Run it:  python -m rose.sim.hosts.loopback --log requests.jsonl [--seed 0] [--size small]
             [--first-token 2.0 --tokens-per-s 50]
It prints ``PORT <n>`` on its first line once it listens, and runs until it stops itself
(or is sent SIGTERM / SIGINT).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from rose.disk.atomic import append_line
from rose.sim.hosts import _wire
from rose.sim.hosts.play import Player, Reply
from rose.sim.world import World

MODEL = "claude-simulated-world"
#: A judge's pace a real model keeps on a quiet machine (seconds to the first token, tokens a
#: second after it): an answer of 300 tokens, a reflection's, takes 2 + 300/50 = 8 s.
REALISTIC = (2.0, 50.0)
IDLE_S = 600.0  # stop after this long with no request
_HEADERS = ("anthropic-version", "anthropic-beta", "user-agent", "x-app", "originator")
_WATCH_S = 0.5


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer
    server_version = "rose-loopback/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # the JSON-lines log is the record
        pass

    def _body(self) -> Any:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send(self, code: int, data: bytes, kind: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_loopback")
        self.end_headers()
        self.wfile.write(data)

    def _json(self, code: int, obj: Any) -> None:
        self._send(code, json.dumps(obj).encode(), "application/json")

    def _stream(self, events: list[_wire.Event]) -> None:
        data = b"".join(
            f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()
            for name, payload in events
        )
        self._send(200, data, "text/event-stream")

    def do_HEAD(self) -> None:
        self.server.record(self, None, None)
        self._send(200, b"", "text/plain")

    def do_GET(self) -> None:
        self.server.record(self, None, None)
        if self.path.split("?", 1)[0].endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._json(404, {"error": {"type": "not_found_error", "message": self.path}})

    def do_POST(self) -> None:
        body = self._body()
        req = body if isinstance(body, dict) else {}
        path = self.path.split("?", 1)[0].rstrip("/")
        model = str(req.get("model") or MODEL)
        reply: Reply | None = None
        try:
            if path.endswith("/messages/count_tokens"):
                answer: tuple[int, Any] = (200, {"input_tokens": _wire._words(json.dumps(req))})
            elif path.endswith("/messages"):
                reply = self.server.player.reply(_wire.anthropic_conversation(req))
                if req.get("stream"):
                    answer = (200, _wire.anthropic_events(reply, model, req))
                else:
                    answer = (200, _wire.anthropic_message(reply, model, req))
            elif path.endswith("/responses"):
                reply = self.server.player.reply(_wire.responses_conversation(req))
                answer = (200, _wire.responses_events(reply, model, req))
            else:
                answer = (404, {"error": {"type": "not_found_error", "message": self.path}})
        except Exception as exc:  # an answer the world cannot give is an error, not a hang
            reply = Reply("error", f"{type(exc).__name__}: {exc}")
            answer = (500, {"type": "error", "error": {"type": "api_error", "message": reply.text}})
        self.server.record(self, body, reply)  # before the answer: a reader of it sees the line
        if reply is not None and reply.role == "judge":
            time.sleep(self.server.pace.seconds(reply))
        code, payload = answer
        if isinstance(payload, list):
            self._stream(payload)
        else:
            self._json(code, payload)


class Pace:
    """How long a judge's answer takes: `first_token` seconds, then `per_s` tokens a second
    (0: no time at all), counted on the answer's JSON as the server sends it."""

    def __init__(self, first_token: float = 0.0, per_s: float = 0.0):
        self.first_token = max(0.0, first_token)
        self.per_s = max(0.0, per_s)

    def seconds(self, reply: Reply) -> float:
        if not (self.first_token or self.per_s):
            return 0.0
        text = json.dumps(reply.answer) if reply.answer is not None else reply.text
        tokens = _wire._words(text)
        return self.first_token + (tokens / self.per_s if self.per_s else 0.0)


class LoopbackServer(ThreadingHTTPServer):
    """The server; `port` is where it listens, `stop()` ends it, `stopped` is set once it has."""

    daemon_threads = True

    def __init__(
        self,
        player: Player,
        log: Path,
        *,
        port: int = 0,
        idle_s: float = IDLE_S,
        parent: int | None = None,
        pace: Pace | None = None,
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.player = player
        self.pace = pace or Pace()
        self.log = Path(log)
        self.idle_s = idle_s
        self.parent = parent
        self.last = time.monotonic()
        self.stopped = threading.Event()
        self.why = ""  # why it stopped: "idle", "parent gone", "asked"
        self._lock = threading.Lock()
        self._child = parent is not None and parent == os.getppid()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def record(self, handler: _Handler, body: Any, reply: Reply | None) -> None:
        self.last = time.monotonic()
        entry: dict[str, Any] = {
            "time": time.time(),
            "method": handler.command,
            "path": handler.path,
            "headers": {k.lower(): v for k, v in handler.headers.items() if k.lower() in _HEADERS},
            "body": body,
        }
        if reply is not None:
            entry["played"] = reply.summary()
        with self._lock:
            append_line(self.log, json.dumps(entry, ensure_ascii=False, default=str))

    def start(self) -> LoopbackServer:
        """Serve in a daemon thread, and watch for idleness and the parent's end beside it."""
        threading.Thread(target=self.serve_forever, name="loopback", daemon=True).start()
        threading.Thread(target=self._watch, name="loopback-watch", daemon=True).start()
        return self

    def stop(self, why: str = "asked") -> None:
        if self.stopped.is_set():
            return
        self.why = why
        self.stopped.set()
        threading.Thread(target=self._close, daemon=True).start()

    def _close(self) -> None:
        self.shutdown()
        self.server_close()

    def _watch(self) -> None:
        while not self.stopped.wait(min(_WATCH_S, self.idle_s)):
            if time.monotonic() - self.last > self.idle_s:
                self.stop("idle")
            elif self.parent is not None and not _alive(self.parent, child=self._child):
                self.stop("parent gone")

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.stopped.wait(5)


def _alive(pid: int, *, child: bool) -> bool:
    if child and os.getppid() != pid:  # reparented: the parent has exited
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def serve(
    log: Path,
    *,
    world: World | None = None,
    seed: int = 0,
    size: str = "default",
    noise: float = 0.0,
    port: int = 0,
    idle_s: float = IDLE_S,
    parent: int | None = None,
    pace: Pace | None = None,
) -> LoopbackServer:
    """A started server playing `world` (else the world of `seed` and `size`), its judge
    answering at `pace` (else at once)."""
    world = world if world is not None else World.generate(seed, size=size)
    player = Player(world, seed=seed, noise=noise)
    server = LoopbackServer(player, log, port=port, idle_s=idle_s, parent=parent, pace=pace)
    return server.start()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m rose.sim.hosts.loopback", description=__doc__.splitlines()[0]
    )
    ap.add_argument(
        "--log", required=True, type=Path, help="JSON-lines file every request is appended to"
    )
    ap.add_argument("--seed", type=int, default=0, help="the world's seed (and the agent's)")
    ap.add_argument("--size", default="default", help="the world's size: small, default or large")
    ap.add_argument(
        "--noise", type=float, default=0.0, help="the judge's noise, as the simulated backend's"
    )
    ap.add_argument("--port", type=int, default=0, help="0: a free port")
    ap.add_argument("--idle", type=float, default=IDLE_S, help="stop after this many idle seconds")
    ap.add_argument("--parent", type=int, default=None, help="stop once this process is gone")
    ap.add_argument(
        "--first-token", type=float, default=0.0, help="seconds before a judge's answer starts"
    )
    ap.add_argument(
        "--tokens-per-s", type=float, default=0.0, help="a judge's tokens a second (0: at once)"
    )
    args = ap.parse_args(argv)
    server = serve(
        args.log,
        seed=args.seed,
        size=args.size,
        noise=args.noise,
        port=args.port,
        idle_s=args.idle,
        parent=args.parent,
        pace=Pace(args.first_token, args.tokens_per_s),
    )
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: server.stop("signal"))
    print(f"PORT {server.port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        while not server.stopped.wait(1.0):
            pass
    time.sleep(0.1)  # let the closing thread finish
    print(f"STOPPED {server.why}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

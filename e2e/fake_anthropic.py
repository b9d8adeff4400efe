"""A loopback stand-in for the Anthropic Messages API, enough for `claude -p` to finish a turn.

What it proves: nothing by itself. It lets the real Claude Code CLI run offline, and it
records every request the CLI makes (method, path, headers of interest, JSON body) to a
JSONL log, so a test can show exactly what reached "the model" — for ROSE, that the
`<rose-memory>` block injected by the UserPromptSubmit hook is in the /v1/messages body.

Run standalone:  python e2e/fake_anthropic.py --log /tmp/requests.jsonl [--port 0]
It prints `PORT <n>` on its first stdout line once listening. Stdlib only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY_TEXT = "Staging listens on port 5433 (fake model reply)."
MODEL = "claude-fake"


def _usage(output_tokens: int = 0) -> dict:
    return {
        "input_tokens": 10,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message(model: str, text: str) -> dict:
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": _usage(len(text.split())),
    }


def _sse_events(model: str, text: str) -> list[tuple[str, dict]]:
    msg = _message(model, text)
    start = {**msg, "content": [], "stop_reason": None, "usage": _usage(1)}
    half = len(text) // 2
    return [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        ("ping", {"type": "ping"}),
        *[
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": part},
                },
            )
            for part in (text[:half], text[half:])
        ],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": len(text.split())},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


class _Handler(BaseHTTPRequestHandler):
    server_version = "fake-anthropic/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep stderr quiet; the JSONL log is the record
        pass

    def _record(self, body: object) -> None:
        entry = {
            "method": self.command,
            "path": self.path,
            "headers": {
                k: v
                for k, v in self.headers.items()
                if k.lower() in ("anthropic-version", "anthropic-beta", "user-agent", "x-app")
            },
            "body": body,
        }
        with self.server.log_lock, open(self.server.log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def _read_body(self) -> object:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _json(self, code: int, obj: object) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._record(None)
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "fake"}})

    def do_HEAD(self) -> None:
        self._record(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = self._read_body()
        self._record(body)
        path = self.path.split("?", 1)[0]
        req = body if isinstance(body, dict) else {}
        model = str(req.get("model") or MODEL)
        if path.endswith("/v1/messages/count_tokens"):
            self._json(200, {"input_tokens": 42})
        elif path.endswith("/v1/messages"):
            if req.get("stream"):
                self._stream(model)
            else:
                self._json(200, _message(model, REPLY_TEXT))
        else:
            self._json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": "fake"}}
            )

    def _stream(self, model: str) -> None:
        chunks = b"".join(
            f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            for name, data in _sse_events(model, REPLY_TEXT)
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(chunks)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self.wfile.write(chunks)


def serve(log_path: str, port: int = 0) -> ThreadingHTTPServer:
    """Start the server on 127.0.0.1 in a daemon thread; `.server_address[1]` is the port."""
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    httpd.daemon_threads = True
    httpd.log_path = log_path  # type: ignore[attr-defined]
    httpd.log_lock = threading.Lock()  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", required=True, help="JSONL file to append every request to")
    ap.add_argument("--port", type=int, default=0, help="0 = a random free port")
    args = ap.parse_args(argv)
    httpd = serve(args.log, args.port)
    print(f"PORT {httpd.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

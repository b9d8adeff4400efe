"""A minimal MCP client for the tests: `rose mcp` as a real subprocess, spoken to in
newline-delimited JSON-RPC over its stdin and stdout, as Claude Code and Codex do."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

PROTOCOL = "2025-06-18"
#: A guard against a server that never answers, not a measure: the test fails, it never hangs.
_GUARD_S = 120


class McpClient:
    def __init__(self, cwd: Path, **env: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rose", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **env},
            text=True,
        )
        self._id = 0
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put("")  # end of output

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its response (notifications on the way are skipped)."""
        self._id += 1
        self.send({"id": self._id, "method": method, **({"params": params} if params else {})})
        while True:
            message = json.loads(self._line())
            if message.get("id") == self._id and ("result" in message or "error" in message):
                return message

    def initialize(self) -> dict[str, Any]:
        info = {"name": "rose-tests", "version": "0"}
        params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": info}
        answer = self.request("initialize", params)
        self.send({"method": "notifications/initialized"})
        return answer["result"]

    def call(self, tool: str, **arguments: Any) -> tuple[bool, str]:
        """(is_error, the text of the result) for one tools/call."""
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in answer, answer  # a tool failure is a result, not a protocol error
        result = answer["result"]
        text = "\n".join(c["text"] for c in result["content"] if c["type"] == "text")
        return bool(result.get("isError")), text

    def _line(self) -> str:
        try:
            line = self._lines.get(timeout=_GUARD_S)
        except queue.Empty:
            raise AssertionError(f"rose mcp did not answer: {self.close()}") from None
        if not line:
            raise AssertionError(f"rose mcp closed its stdout: {self.close()}")
        return line

    def close(self) -> str:
        """Close stdin (the host going away) and wait for the server; its stderr."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=_GUARD_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(_GUARD_S)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return err

"""Ask Codex itself whether it trusts ROSE's hooks, and trust them with the user's consent.

What this relies on (Codex 0.171, checked against the real binary; see docs/codex.md):

- `codex exec` silently skips a hook from hooks.json or config.toml until the user trusts it.
  Trust is `hooks.state."<key>".trusted_hash = "<hash>"` in the user's config.toml. The key is
  positional, `<source file>:<event_snake>:<group index>:<handler index>`; the hash
  (`sha256:…`) covers the event, the matcher and the normalised handler (command, timeout,
  async, status message), not the file's path, so editing a hook makes its trust stale.
- `codex app-server` speaks JSON-RPC 2.0 (without the "jsonrpc" field), one JSON object a
  line on stdio: `initialize` {clientInfo}, then the `initialized` notification;
  `hooks/list` {cwds} answers {data: [{cwd, hooks: [{key, command, sourcePath, currentHash,
  trustStatus (trusted | untrusted | modified | managed), enabled, ...}], warnings, errors}]};
  `config/batchWrite` {edits: [{keyPath, value, mergeStrategy}]} writes config.toml once. It
  also sends notifications (configWarning, ...), which are skipped here.
- A project's .codex/hooks.json is listed only once the project is trusted in Codex, and
  nothing is listed while hooks are off (`[features] hooks = false`).

Only ROSE's own hooks (those `rose install` wrote, see rose/hosts/settings.py) are ever
trusted here; every other hook keeps whatever trust the user gave it.
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rose.hosts import settings as sj
from rose.hosts.settings import InstallError

#: How long one app-server answer may take before ROSE gives up on it (it takes ~0.3 s).
REPLY_TIMEOUT_S = 30.0

#: What Codex's trustStatus values mean, in the words `rose doctor` uses.
STATES = {
    "trusted": "trusted",
    "untrusted": "untrusted",
    "modified": "stale (trusted for earlier content)",
    "managed": "managed by an administrator",
}


class CodexTrustError(InstallError):
    """Codex could not be asked, or would not trust ROSE's hooks."""


@dataclass(frozen=True)
class HookTrust:
    """One of ROSE's hooks as Codex lists it."""

    event: str  # ROSE's event name, e.g. "user-prompt-submit"
    key: str
    current_hash: str
    status: str  # Codex's trustStatus
    enabled: bool

    @property
    def runs(self) -> bool:
        return self.enabled and self.status in ("trusted", "managed")


def find_codex() -> str | None:
    return shutil.which("codex")


def no_codex(action: str) -> CodexTrustError:
    return CodexTrustError(
        f"codex is not on PATH: {action} asks Codex itself (`codex app-server`); install Codex "
        "(npm install -g @openai/codex) or put it on PATH, or trust ROSE's hooks by hand in "
        "Codex's /hooks"
    )


class AppServer:
    """One `codex app-server` over stdio, initialised, closed on exit."""

    def __init__(self, codex: str, cwd: Path, timeout_s: float = REPLY_TIMEOUT_S):
        self.codex, self.cwd, self.timeout_s = codex, cwd, timeout_s
        self._next = 0
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._err: IO[bytes] | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> AppServer:
        self._err = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [self.codex, "app-server"],
                cwd=self.cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._err,
            )
        except OSError as exc:
            self._err.close()
            raise CodexTrustError(f"{self.codex} app-server could not start ({exc})") from None
        self._pump_thread = threading.Thread(
            target=self._pump, args=(self._proc.stdout,), daemon=True
        )
        self._pump_thread.start()
        try:
            self.request("initialize", {"clientInfo": {"name": "rose", "version": _version()}})
            self._send({"method": "initialized"})
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # type: ignore[union-attr]
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self._pump_thread.join(timeout=5)
            if proc.stdout is not None:
                proc.stdout.close()
        if self._err is not None:
            self._err.close()

    def _pump(self, out: IO[bytes]) -> None:
        for line in out:
            self._lines.put(line)
        self._lines.put(b"")  # end of output

    def _send(self, msg: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(msg).encode() + b"\n")
            self._proc.stdin.flush()
        except OSError as exc:
            raise self._failed(f"stopped taking requests ({exc.strerror or exc})") from None

    def _stderr_tail(self) -> str:
        if self._err is None:
            return ""
        self._err.seek(0)
        lines = self._err.read().decode(errors="replace").strip().splitlines()
        return lines[-1].strip() if lines else ""

    def _failed(self, what: str) -> CodexTrustError:
        tail = self._stderr_tail()
        said = f"; it said: {tail}" if tail else ""
        return CodexTrustError(f"{self.codex} app-server {what}{said}")

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request; CodexTrustError on an error answer, exit or silence."""
        self._next += 1
        rid = self._next
        self._send({"id": rid, "method": method, "params": params})
        while True:
            try:
                line = self._lines.get(timeout=self.timeout_s)
            except queue.Empty:
                raise self._failed(
                    f"did not answer {method} within {self.timeout_s:.0f} s"
                ) from None
            if not line:
                raise self._failed(f"exited before answering {method}")
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # not protocol output
            if not isinstance(msg, dict) or msg.get("id") != rid or "method" in msg:
                continue  # a notification, or a request of the server's own
            if "error" in msg:
                err = msg["error"]
                text = err.get("message") if isinstance(err, dict) else err
                raise CodexTrustError(f"{self.codex} app-server refused {method}: {text}")
            result = msg.get("result")
            if not isinstance(result, dict):
                raise self._failed(f"answered {method} with {str(result)[:80]!r}")
            return result


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rose-memory")
    except PackageNotFoundError:
        return "0"


def rose_hooks(app: AppServer, hooks_path: Path, cwd: Path) -> list[HookTrust]:
    """ROSE's hooks from `hooks_path`, as Codex lists them for `cwd`, in ROSE's event order."""
    result = app.request("hooks/list", {"cwds": [str(cwd)]})
    want = hooks_path.resolve()
    found = []
    entries = [e for e in result.get("data") or [] if isinstance(e, dict)]
    for entry in entries:
        for h in entry.get("hooks") or []:
            if not isinstance(h, dict) or not sj.is_owned({"command": h.get("command")}):
                continue
            if Path(str(h.get("sourcePath") or "")).resolve() != want:
                continue
            hit = sj.rose_event(h["command"])
            assert hit is not None  # is_owned checked it
            found.append(
                HookTrust(
                    hit[1],
                    str(h.get("key") or ""),
                    str(h.get("currentHash") or ""),
                    str(h.get("trustStatus") or "untrusted"),
                    h.get("enabled") is not False,
                )
            )
    order = list(sj.EVENTS)
    return sorted(found, key=lambda h: order.index(h.event))


def not_listed_reason(codex: str, scope: str, hooks_path: Path, cwd: Path) -> str:
    """Why Codex lists none of ROSE's hooks from a hooks file that holds them."""
    runs = runs_hooks(codex, cwd)
    if runs is False:
        return "hooks are off in this Codex (`codex features list`: hooks false)"
    if scope == "project":
        return (
            f"Codex loads {hooks_path} only in a project it trusts: open `codex` in "
            f"{cwd} and trust the project first"
        )
    return f"Codex does not load {hooks_path}"


_UNSAFE_KEY = re.compile(r'["\\\n]')


def _edit(h: HookTrust) -> dict[str, Any]:
    if _UNSAFE_KEY.search(h.key) or not h.key or not h.current_hash:
        raise CodexTrustError(
            f"Codex listed ROSE's {h.event} hook as {h.key!r} with hash {h.current_hash!r}, "
            "which ROSE cannot write back safely; trust it in Codex's /hooks instead"
        )
    return {
        "keyPath": f'hooks.state."{h.key}".trusted_hash',
        "value": h.current_hash,
        "mergeStrategy": "upsert",
    }


def trust(codex: str, scope: str, hooks_path: Path, cwd: Path) -> tuple[list[HookTrust], int]:
    """Trust every one of ROSE's hooks in `hooks_path` for its current content.

    Fails, having written nothing to Codex's config, when Codex does not list all of
    ROSE's events from that file. Returns the hooks as Codex lists them afterwards and how
    many of them were newly trusted.
    """
    with AppServer(codex, cwd) as app:
        hooks = rose_hooks(app, hooks_path, cwd)
        missing = [e for e in sj.EVENTS if e not in {h.event for h in hooks}]
        if missing:
            why = not_listed_reason(codex, scope, hooks_path, cwd)
            raise CodexTrustError(
                f"Codex does not list ROSE's {', '.join(missing)} hook(s) from {hooks_path}: {why}"
            )
        edits = [_edit(h) for h in hooks if h.status not in ("trusted", "managed")]
        if edits:
            app.request("config/batchWrite", {"edits": edits})
        after = rose_hooks(app, hooks_path, cwd)
    left = [h.event for h in after if h.status not in ("trusted", "managed")]
    if left or len(after) < len(hooks):
        raise CodexTrustError(
            f"Codex still lists ROSE's {', '.join(left) or 'hooks'} as not trusted after "
            f"the write; check {hooks_path} and Codex's /hooks"
        )
    return after, len(edits)


def trust_records(codex: str, hooks_path: Path, cwd: Path) -> list[str]:
    """The keys of ROSE's hooks in `hooks_path` that Codex keeps a state for (a trusted
    hash, or a hook disabled in /hooks): what uninstall takes out of Codex's config."""
    with AppServer(codex, cwd) as app:
        hooks = rose_hooks(app, hooks_path, cwd)
    return [h.key for h in hooks if h.status in ("trusted", "modified") or not h.enabled]


def forget(codex: str, cwd: Path, keys: list[str]) -> None:
    """Remove `hooks.state."<key>"` for each key from the user's config.toml, in one write."""
    for key in keys:
        if _UNSAFE_KEY.search(key):
            raise CodexTrustError(f"cannot name Codex's trust record {key!r} safely")
    edits = [{"keyPath": f'hooks.state."{k}"', "value": None, "mergeStrategy": "replace"}
             for k in keys]  # fmt: skip
    if edits:
        with AppServer(codex, cwd) as app:
            app.request("config/batchWrite", {"edits": edits})


def status(codex: str, hooks_path: Path, cwd: Path) -> list[HookTrust]:
    """ROSE's hooks in `hooks_path` as Codex lists them now (read only)."""
    with AppServer(codex, cwd) as app:
        return rose_hooks(app, hooks_path, cwd)


def runs_hooks(codex: str | None, cwd: Path) -> bool | None:
    """Whether this Codex runs hooks at all: its `hooks` feature (`codex_hooks` before it
    was renamed), as `codex features list` reports it; None when that cannot be told."""
    if codex is None:
        return None
    try:
        out = subprocess.run(
            [codex, "features", "list"], cwd=cwd, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    rows = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-1] in ("true", "false"):
            rows[parts[0]] = parts[-1] == "true"
    for name in ("hooks", "codex_hooks"):
        if name in rows:
            return rows[name]
    return False if rows else None  # a feature list without hooks: a Codex from before them

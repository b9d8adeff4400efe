"""A small fake `codex` on PATH for trust tests: `codex features list` and the subset of
`codex app-server`'s JSON-RPC that ROSE speaks (initialize, hooks/list, config/batchWrite).

It lists hooks the way Codex 0.171 does (key `<file>:<event_snake>:<group>:<handler>`, a
content hash, trustStatus trusted | untrusted | modified), keeps trust in
`$CODEX_HOME/fake-trust.json` instead of config.toml, loads a project's .codex/hooks.json
only when the project is in that file's "projects", and records every message it receives
(and each command line) in the JSON-lines file `record`.

FAKE_CODEX_MODE: "" (works), "hooks-off" (lists nothing, features say hooks false),
"crash" (app-server dies at start), "refuse-write" (batchWrite answers an error),
"ignore-write" (batchWrite says ok but trusts nothing). A batchWrite of null with
"replace" on `hooks.state."<key>"` removes that record, as Codex's does.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPT = r"""
import hashlib, json, os, re, sys
from pathlib import Path

MODE = os.environ.get("FAKE_CODEX_MODE", "")
RECORD = os.environ["FAKE_CODEX_RECORD"]


def record(entry):
    with open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def home():
    env = os.environ.get("CODEX_HOME")
    return Path(env) if env else Path.home() / ".codex"


STATE = home() / "fake-trust.json"


def state():
    return json.loads(STATE.read_text()) if STATE.exists() else {"hooks": {}, "projects": []}


def snake(event):
    return re.sub(r"(?<!^)([A-Z])", r"_\1", event).lower()


def hooks_from(path, source, st):
    if not path.is_file():
        return []
    out = []
    for event, groups in json.loads(path.read_text()).get("hooks", {}).items():
        for gi, group in enumerate(groups):
            for hi, h in enumerate(group.get("hooks", [])):
                key = f"{path}:{snake(event)}:{gi}:{hi}"
                ident = {"event": event, "matcher": group.get("matcher"), "handler": h}
                digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()
                current = "sha256:" + digest
                saved = st["hooks"].get(key, {})
                trusted = saved.get("trusted_hash")
                status = "untrusted" if trusted is None else "modified"
                if trusted == current:
                    status = "trusted"
                out.append({
                    "key": key, "eventName": event[0].lower() + event[1:],
                    "handlerType": "command", "command": h.get("command"),
                    "timeoutSec": h.get("timeout", 600), "sourcePath": str(path),
                    "source": source, "enabled": saved.get("enabled", True), "isManaged": False,
                    "currentHash": current, "trustStatus": status,
                })
    return out


def hooks_list(params):
    st = state()
    data = []
    for cwd in params.get("cwds") or [os.getcwd()]:
        hooks = []
        if MODE != "hooks-off":
            hooks += hooks_from(home() / "hooks.json", "user", st)
            if cwd in st["projects"]:
                hooks += hooks_from(Path(cwd) / ".codex" / "hooks.json", "project", st)
        data.append({"cwd": cwd, "hooks": hooks, "warnings": [], "errors": []})
    return {"data": data}


def batch_write(params):
    st = state()
    for edit in params["edits"]:
        m = re.fullmatch(r'hooks\.state\."([^"]+)"(\.trusted_hash)?', edit["keyPath"])
        if not m:
            raise ValueError("unsupported keyPath " + edit["keyPath"])
        if edit["value"] is None and edit["mergeStrategy"] == "replace" and not m.group(2):
            st["hooks"].pop(m.group(1), None)
        elif m.group(2) and isinstance(edit["value"], str):
            if MODE != "ignore-write":
                st["hooks"].setdefault(m.group(1), {})["trusted_hash"] = edit["value"]
        else:
            raise ValueError("unsupported edit " + json.dumps(edit))
    STATE.parent.mkdir(parents=True, exist_ok=True)
    STATE.write_text(json.dumps(st, indent=1))
    return {"status": "ok", "version": "sha256:0", "filePath": str(home() / "config.toml")}


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def app_server():
    if MODE == "crash":
        print("error: failed to load configuration: boom", file=sys.stderr)
        return 1
    for line in sys.stdin:
        msg = json.loads(line)
        record({"message": msg})
        if "id" not in msg:
            continue
        method, params = msg["method"], msg.get("params") or {}
        send({"method": "configWarning", "params": {"summary": "a notification to skip"}})
        try:
            if method == "initialize":
                result = {"userAgent": "fake", "codexHome": str(home()),
                          "platformFamily": "unix", "platformOs": "linux"}
            elif method == "hooks/list":
                result = hooks_list(params)
            elif method == "config/batchWrite":
                if MODE == "refuse-write":
                    raise ValueError("config.toml is locked")
                result = batch_write(params)
            else:
                raise ValueError("unknown method " + method)
        except ValueError as exc:
            send({"id": msg["id"], "error": {"code": -32600, "message": str(exc)}})
            continue
        send({"id": msg["id"], "result": result})
    return 0


def main():
    args = sys.argv[1:]
    record({"argv": args, "cwd": os.getcwd()})
    if args == ["features", "list"]:
        print("apps                 stable             true")
        on = "false" if MODE == "hooks-off" else "true"
        print("hooks                stable             " + on)
        return 0
    if args == ["app-server"]:
        return app_server()
    print("fake codex: not implemented: " + " ".join(args), file=sys.stderr)
    return 2


sys.exit(main())
"""


@dataclass
class FakeCodex:
    """The fake on PATH: what it received, and its trust state, for assertions."""

    bin: Path
    record: Path

    def received(self) -> list[dict]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def methods(self) -> list[str]:
        return [r["message"]["method"] for r in self.received() if "message" in r]

    def edits(self) -> list[dict]:
        return [
            edit
            for r in self.received()
            if r.get("message", {}).get("method") == "config/batchWrite"
            for edit in r["message"]["params"]["edits"]
        ]

    @staticmethod
    def state_file() -> Path:
        home = os.environ.get("CODEX_HOME")
        return (Path(home) if home else Path.home() / ".codex") / "fake-trust.json"

    def state(self) -> dict:
        f = self.state_file()
        return json.loads(f.read_text()) if f.exists() else {"hooks": {}, "projects": []}

    def trust_project(self, project: Path) -> None:
        st = self.state()
        st["projects"].append(str(project.resolve()))
        self.state_file().parent.mkdir(parents=True, exist_ok=True)
        self.state_file().write_text(json.dumps(st))


def install_fake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str = "", keep_path: bool = True
) -> FakeCodex:
    """Put the fake `codex` first on PATH (alone on it unless `keep_path`)."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "codex"
    exe.write_text(f"#!{sys.executable}\n{SCRIPT}")
    exe.chmod(0o755)
    record = tmp_path / "fake-codex.jsonl"
    monkeypatch.setenv("FAKE_CODEX_RECORD", str(record))
    monkeypatch.setenv("FAKE_CODEX_MODE", mode)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}" if keep_path else str(bin_dir)
    monkeypatch.setenv("PATH", path)
    return FakeCodex(exe, record)


def no_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH without any `codex` on it (the test's python stays reachable by path)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    keep = [
        p for p in os.environ["PATH"].split(os.pathsep) if p and not (Path(p) / "codex").exists()
    ]
    monkeypatch.setenv("PATH", os.pathsep.join([str(empty), *keep]))

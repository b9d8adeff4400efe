"""Where ROSE's MCP server (`rose mcp`) is registered with Claude Code and Codex.

Standard library only: the prompt hook asks `registered` once a session, to decide whether
the injected block mentions the `rose` MCP tools. `rose install` writes the entries (see
rose/hosts/_mcp_install.py), `rose doctor` reports them. What the hosts read (their docs):

- Claude Code: user scope is `mcpServers` at the top of ~/.claude.json, local scope is
  `projects[<dir>].mcpServers` in the same file, project scope is `mcpServers` in
  <project>/.mcp.json; a stdio server is {"type": "stdio", "command", "args"}. A plugin's
  servers are in the `.mcp.json` at its root, started while the plugin is enabled
  (`enabledPlugins` in settings.json), so an enabled `rose` plugin registers the server.
- Codex: `[mcp_servers.<name>]` tables (`command`, `args`) in $CODEX_HOME/config.toml, and
  in <project>/.codex/config.toml for a trusted project.

An entry is ROSE's when it is named `rose` and runs `<rose> mcp` (a program named rose, the
plugin's run-mcp, or `<python> -m rose`); a server of the user's under another name that
happens to run rose is theirs, and never touched.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from rose.disk import tomlfile
from rose.disk.tomlfile import codex_home

TYPE_CHECKING = False  # `typing` costs the prompt hook ~4 ms to import: only for the checker
if TYPE_CHECKING:
    from typing import Any

#: The name both hosts know the server by: its tools are mcp__rose__<tool> in Claude Code.
NAME = "rose"
_LAUNCHERS = ("rose", "rose.exe", "run-mcp")


class Registration:
    """One place a host reads ROSE's server from: `argv` is the command it runs. A plain
    class, not a dataclass or a named tuple: the prompt hook reads these once a session, and
    `dataclasses` and `typing` cost it ~5 ms and ~4 ms to import."""

    __slots__ = ("target", "scope", "path", "argv", "approved")

    def __init__(
        self, target: str, scope: str, path: Path, argv: tuple[str, ...], approved: bool = True
    ):
        self.target = target  # claude | codex
        self.scope = scope  # user | project | local | plugin
        self.path = path
        self.argv = argv
        #: False for a project .mcp.json server the user has not approved yet: Claude Code
        #: starts none of those until asked once in an interactive session.
        self.approved = approved

    def _fields(self) -> tuple[object, ...]:
        return (self.target, self.scope, self.path, self.argv, self.approved)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Registration) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "Registration({})".format(", ".join(map(repr, self._fields())))


def claude_json() -> Path:
    """Claude Code's own state file, which holds its user- and local-scope MCP servers."""
    return Path.home() / ".claude.json"


def mcp_file(target: str, scope: str, project_dir: Path | None = None) -> Path:
    """Where `rose install` registers the server for `target` and `scope`."""
    proj = (project_dir or Path.cwd()).resolve()
    if target == "claude":
        return claude_json() if scope == "user" else proj / ".mcp.json"
    return (codex_home() if scope == "user" else proj / ".codex") / "config.toml"


def argv_of(entry: Any) -> list[str] | None:
    """The command line of an MCP server entry ({"command", "args"}), or None if malformed."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None
    return [entry["command"], *args]


def is_rose_launcher(prog: list[str]) -> bool:
    """Whether `prog` starts rose: a program named rose (or run-mcp), or `<python> -m rose`."""
    named = len(prog) == 1 and prog[0].replace("\\", "/").rsplit("/", 1)[-1] in _LAUNCHERS
    return named or (len(prog) == 3 and prog[1:] == ["-m", "rose"])


def is_ours(entry: Any) -> bool:
    """Whether an entry named `rose` is ROSE's server: it runs `<rose> mcp`."""
    argv = argv_of(entry)
    return bool(argv) and argv[-1] == "mcp" and is_rose_launcher(argv[:-1])  # type: ignore[index]


def entry(rose_cmd: str, target: str) -> dict[str, Any]:
    """The entry `rose install` writes, for the shell-quoted command that runs rose."""
    argv = [*shlex.split(rose_cmd), "mcp"]
    if target == "claude":
        return {"type": "stdio", "command": argv[0], "args": argv[1:]}
    return {"command": argv[0], "args": argv[1:]}


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8").removeprefix("\ufeff") or "{}")
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _servers(data: dict[str, Any], key: str) -> dict[str, Any]:
    servers = data.get(key)
    return servers if isinstance(servers, dict) else {}


def _found(target: str, scope: str, path: Path, servers: dict) -> list[Registration]:
    hit = servers.get(NAME)
    argv = argv_of(hit) if is_ours(hit) else None
    return [Registration(target, scope, path, tuple(argv))] if argv else []


def _approved(state: dict[str, Any], proj: Path) -> bool:
    """Whether the user let Claude Code start the project's .mcp.json server `rose`: its
    answer is kept in ~/.claude.json's project entry or in a settings file
    (`enabledMcpjsonServers`, `disabledMcpjsonServers`, `enableAllProjectMcpServers`)."""
    here = (
        state.get("projects", {}).get(str(proj))
        if isinstance(state.get("projects"), dict)
        else None
    )
    places = [here if isinstance(here, dict) else {}]
    for settings in (
        Path.home() / ".claude" / "settings.json",
        proj / ".claude" / "settings.json",
        proj / ".claude" / "settings.local.json",
    ):
        places.append(_json(settings) if settings.is_file() else {})

    def named(key: str) -> bool:
        return any(isinstance(p.get(key), list) and NAME in p[key] for p in places)

    if named("disabledMcpjsonServers"):
        return False
    return named("enabledMcpjsonServers") or any(
        p.get("enableAllProjectMcpServers") is True for p in places
    )


def _enabled_plugin(path: Path) -> bool:
    plugins = _json(path).get("enabledPlugins") if path.is_file() else None
    return isinstance(plugins, dict) and any(
        v and str(k).split("@")[0] == NAME for k, v in plugins.items()
    )


def registrations(target: str, project_dir: Path | None = None) -> list[Registration]:
    """Every place `target` would start ROSE's server from, in the project (default: here)."""
    proj = (project_dir or Path.cwd()).resolve()
    out: list[Registration] = []
    if target == "claude":
        state = claude_json()
        data = _json(state) if state.is_file() else {}
        out += _found("claude", "user", state, _servers(data, "mcpServers"))
        projects = data.get("projects")
        here = projects.get(str(proj)) if isinstance(projects, dict) else None
        if isinstance(here, dict):
            out += _found("claude", "local", state, _servers(here, "mcpServers"))
        shared = proj / ".mcp.json"
        if shared.is_file():
            ok = _approved(data, proj)
            for reg in _found("claude", "project", shared, _servers(_json(shared), "mcpServers")):
                out.append(Registration(reg.target, reg.scope, reg.path, reg.argv, approved=ok))
        for settings in (
            Path.home() / ".claude" / "settings.json",
            proj / ".claude" / "settings.json",
        ):
            if _enabled_plugin(settings):
                out.append(Registration("claude", "plugin", settings, ()))
        return out
    for scope in ("user", "project"):
        path = mcp_file("codex", scope, proj)
        if not path.is_file():
            continue
        try:
            data = tomlfile.read(path)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        out += _found("codex", scope, path, _servers(data, "mcp_servers"))
    return out


def registered(host: str, cwd: str | None) -> bool:
    """Whether `host` (claude or codex) starts ROSE's server for a session in `cwd`."""
    if host not in ("claude", "codex"):
        return False
    where = Path(cwd) if cwd and os.path.isdir(cwd) else None
    return any(r.approved for r in registrations(host, where))

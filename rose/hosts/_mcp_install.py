"""The MCP half of `rose install` / `rose uninstall`: the `rose` entry in Claude Code's
~/.claude.json or a project's .mcp.json, and the `[mcp_servers.rose]` table in Codex's
config.toml (where the hosts read them: rose/hosts/mcp_wiring.py).

Each edit is surgical and checked before anything is written: only ROSE's own entry is
added, replaced or removed; every other key keeps its place and value. A server named
`rose` that is not ROSE's is refused, never overwritten. The JSON files are rewritten with
their own indentation (Claude Code rewrites ~/.claude.json itself all the time); the TOML
file is edited as text, so its comments and layout survive, and the result is parsed to
prove that it holds exactly what it held before plus (or minus) ROSE's table.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rose.disk import tomlfile
from rose.hosts import mcp_wiring as mw
from rose.hosts import settings as sj
from rose.hosts.install import FileChange, read_or_none
from rose.hosts.settings import InstallError, SettingsFileError

_NOT_OURS = (
    "already has an MCP server named rose that is not ROSE's (it does not run `rose mcp`); "
    "nothing was changed: rename it, or run the command again with --no-mcp"
)


def changes(target: str, path: Path, want: dict[str, Any] | None) -> list[FileChange]:
    """The edits that make `path` hold exactly `want` as ROSE's server (None: no entry)."""
    if target == "claude":
        return _json_changes(path, want)
    return _toml_changes(path, want)


# -- Claude Code: JSON -----------------------------------------------------------------------


def _json_changes(path: Path, want: dict[str, Any] | None) -> list[FileChange]:
    before = read_or_none(path)
    data = sj.parse(path, before)
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        kind = type(servers).__name__
        raise SettingsFileError(path, f'"mcpServers" is a {kind}, expected an object')
    current = servers.get(mw.NAME)
    if current is not None and not mw.is_ours(current):
        if want is None:
            return []  # the user's own server of that name: never removed
        raise InstallError(f"{path} {_NOT_OURS}")
    if current is None and want is None:
        return []
    if current is not None and want is not None and _same(current, want):
        return []
    new = dict(data)
    if want is not None:  # replaced in place (keeping keys the user added, say "env"), or last
        new["mcpServers"] = {**servers, mw.NAME: {**(current or {}), **want}}
    else:
        rest = {k: v for k, v in servers.items() if k != mw.NAME}
        if rest:
            new["mcpServers"] = rest
        else:
            new.pop("mcpServers", None)  # install added it, or held only ROSE's entry
        if not new and before is not None:
            return [FileChange(path, before, None)]  # the file held nothing else
    # ~/.claude.json is Claude Code's private state (account, project history): 0600.
    mode = 0o600 if path == mw.claude_json() else None
    return [FileChange(path, before, sj.dump(new, before), mode=mode)]


# -- Codex: TOML, edited as text ---------------------------------------------------------------

_HEADER = re.compile(
    r'^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:rose|"rose"|\'rose\')[ \t]*\][ \t]*(?:#.*)?\n?',
    re.M,
)
_NEXT_HEADER = re.compile(r"^[ \t]*\[", re.M)
COMMENT = "# rose-managed: `rose uninstall --target codex` removes this table"


def _table(want: dict[str, Any]) -> str:
    def s(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string

    args = ", ".join(s(a) for a in want["args"])
    return f"[mcp_servers.{mw.NAME}]\n{COMMENT}\ncommand = {s(want['command'])}\nargs = [{args}]\n"


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomlfile.loads(text)
    except ValueError as exc:
        raise SettingsFileError(path, f"not valid TOML ({exc})") from None


def _without_rose(data: dict[str, Any]) -> dict[str, Any]:
    """`data` minus ROSE's table, with an `mcp_servers` left empty dropped."""
    out = dict(data)
    servers = out.get("mcp_servers")
    if isinstance(servers, dict):
        rest = {k: v for k, v in servers.items() if k != mw.NAME}
        if rest:
            out["mcp_servers"] = rest
        else:
            out.pop("mcp_servers")
    return out


def _region(text: str) -> tuple[int, int] | None:
    """Where ROSE's table is in the text: its header to the next header (or the end)."""
    m = _HEADER.search(text)
    if m is None:
        return None
    nxt = _NEXT_HEADER.search(text, m.end())
    end = nxt.start() if nxt else len(text)
    body = text[m.start() : end]
    trailing = len(body) - len(body.rstrip("\n")) - 1  # blank lines before the next table
    return m.start(), end - max(trailing, 0)


def _toml_changes(path: Path, want: dict[str, Any] | None) -> list[FileChange]:
    before = read_or_none(path)
    text = before or ""
    data = _parse(path, text)
    servers = data.get("mcp_servers", {})
    current = servers.get(mw.NAME) if isinstance(servers, dict) else None
    if current is not None and not mw.is_ours(current):
        if want is None:
            return []
        raise InstallError(f"{path} {_NOT_OURS}")
    if current is not None and want is not None and _same(current, want):
        return []
    if current is None and want is None:
        return []
    where = _region(text) if current is not None else None
    if current is not None and where is None:
        if want is None:
            return []  # rewritten by hand in another form: left as the user wrote it
        raise InstallError(
            f"{path} has ROSE's MCP server in a form other than a [mcp_servers.rose] table; "
            "nothing was changed: make it one table, or remove it, and run this again"
        )
    if where is not None:
        start, end = where
        head, tail = text[:start], text[end:]
        if want is not None:
            after = head + _table(want) + tail
        elif head:
            after = (head[:-1] if head.endswith("\n\n") else head) + tail  # install's blank line
        else:
            after = tail.lstrip("\n")
    elif not text.removeprefix(sj.BOM).strip():
        assert want is not None
        after = _table(want)
    else:
        assert want is not None
        after = text + ("" if text.endswith("\n") else "\n") + "\n" + _table(want)
    _prove(path, data, after, want)
    if want is None and not after.removeprefix(sj.BOM).strip():
        return [FileChange(path, before, None)]
    return [FileChange(path, before, after)]


def _same(current: dict[str, Any], want: dict[str, Any]) -> bool:
    """Whether ROSE's entry already runs what it should (other keys are the user's)."""
    return all(current.get(k) == v for k, v in want.items())


def _entry_in(data: dict[str, Any]) -> Any:
    servers = data.get("mcp_servers")
    return servers.get(mw.NAME) if isinstance(servers, dict) else None


def _extra(entry: Any) -> dict[str, Any]:
    """The keys of ROSE's entry that install does not write: the user's (env, cwd, ...)."""
    return {k: v for k, v in entry.items() if k not in ("command", "args")} if entry else {}


def _prove(path: Path, data: dict[str, Any], after: str, want: dict[str, Any] | None) -> None:
    """Refuse an edit whose result is not the old file plus (or minus) ROSE's table."""
    try:
        new = _parse(path, after)
    except SettingsFileError as exc:
        raise InstallError(
            f"{path}: with ROSE's [mcp_servers.rose] table the file would not be valid TOML "
            f"({exc.reason}); nothing was changed: register the server by hand, or use --no-mcp"
        ) from None
    ok = _without_rose(new) == _without_rose(data)
    got, had = _entry_in(new), _entry_in(data)
    if want is None and got is not None:
        raise InstallError(
            f"{path}: [mcp_servers.rose] has settings of yours below it ({', '.join(got)}); "
            "nothing was changed: remove the server there by hand"
        )
    if want is None:
        ok = ok and got is None
    else:  # ROSE's command, and every key of the user's in the entry (env, cwd, ...) kept
        ok = ok and got is not None and _same(got, want) and _extra(got) == _extra(had)
    if not ok:
        raise InstallError(
            f"{path}: editing ROSE's [mcp_servers.rose] table would change other settings; "
            "nothing was changed: edit it by hand, or use --no-mcp"
        )


def notes(target: str, scope: str, path: Path) -> list[str]:
    """What to tell the user about the server just registered."""
    if target == "claude":
        out = [
            f"ROSE's MCP server is registered as `rose` in {path}; Claude Code starts it "
            "with each new session (`/mcp` lists its tools)."
        ]
        if scope == "project":
            out.append(f"Claude Code asks each person once before it starts a server from {path}.")
        return out
    out = [f"ROSE's MCP server is registered as [mcp_servers.rose] in {path}."]
    if scope == "project":
        out.append(f"Codex reads {path} only in a project you have trusted.")
    return out

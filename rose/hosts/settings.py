"""Reading and editing a host's hook JSON (Claude Code settings.json, Codex hooks.json).

Both hosts share one shape: {"hooks": {Event: [{"matcher"?, "hooks": [handler, ...]}]}}.
ROSE recognises its own handlers by their command string alone, so nothing in these files
carries a key the hosts do not define (see the notes at the top of rose/hosts/install.py).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose.errors import RoseError

# Our five events, in the order a session meets them: ROSE's own name -> the hosts' name.
EVENTS: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}

# Ends every command `rose install` writes. A shell comment: both hosts hand the string to
# a shell, which ignores it, and a person reading /hooks sees where the entry came from.
MARKER = "# rose-managed"

_LAUNCHERS = ("rose", "rose.exe", "run-hook")


class InstallError(RoseError):
    """Wiring ROSE into a host failed; nothing was written."""


class SettingsFileError(InstallError):
    """A host's JSON file could not be read or has an unexpected shape; it is left untouched."""

    def __init__(self, path: Path, reason: str, line: int | None = None, col: int | None = None):
        self.path = Path(path)
        self.line = line
        self.reason = reason
        where = f"{path} line {line} column {col}" if line is not None else str(path)
        super().__init__(
            f"{where}: {reason}; the file was left untouched; fix it (or move it aside) "
            "and run the command again"
        )


class FileNotWritable(InstallError):
    """A file (or its folder) cannot be written: a one-line error naming it, never a traceback."""

    def __init__(self, path: Path, reason: str, fix: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: cannot be written ({reason}); {fix}, then run the command again")


class ReadOnlyFile(InstallError):
    """A file the user made read-only; replaced only with --force."""

    def __init__(self, path: Path):
        self.path = Path(path)
        super().__init__(
            f"{path} is read-only, so it was left untouched; make it writable "
            f"(chmod u+w {path}) or pass --force to replace it (its mode is kept)"
        )


BOM = "\ufeff"


def parse(path: Path, text: str | None) -> dict[str, Any]:
    """The file's JSON object ({} for a missing or blank file); SettingsFileError otherwise.

    A UTF-8 byte-order mark (some Windows editors write one) is skipped; `dump` keeps it.
    """
    text = text.removeprefix(BOM) if text is not None else None
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsFileError(
            path, f"not valid JSON ({exc.msg})", exc.lineno, exc.colno
        ) from None
    if not isinstance(data, dict):
        raise SettingsFileError(path, f"expected a JSON object, found {type(data).__name__}")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError(path, f'"hooks" is a {type(hooks).__name__}, expected an object')
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise SettingsFileError(path, f'"hooks.{event}" is not a list')
    return data


@dataclass(frozen=True)
class _Layout:
    """How a JSON file is written: what `json.dumps` needs to write it so again."""

    indent: str | int | None = 2
    separators: tuple[str, str] | None = None
    ensure_ascii: bool = False

    def dumps(self, data: Any) -> str:
        return json.dumps(data, indent=self.indent, separators=self.separators,
                          ensure_ascii=self.ensure_ascii)  # fmt: skip


def dump(data: dict[str, Any], like: str | None) -> str:
    """`data` as JSON written the way the file it came from is (two spaces and a newline
    for a new file): its indentation (spaces, tabs or none), separators, escaping of
    non-ASCII characters, the whitespace around it (a final newline or none) and a
    byte-order mark.

    Keys keep the order `data` holds them in, so a file rewritten with only ROSE's entry
    added and then removed is the file it was, byte for byte.
    """
    like = like or ""
    bom = BOM if like.startswith(BOM) else ""
    body = like.removeprefix(BOM)
    if not body.strip():
        return bom + _Layout().dumps(data) + "\n"
    lead, trail = body[: len(body) - len(body.lstrip())], body[len(body.rstrip()) :]
    return bom + lead + _layout(body.strip()).dumps(data) + trail


def _layout(core: str) -> _Layout:
    """The layout that writes `core` (a JSON text, stripped) as it is: the first that
    reproduces it exactly, else the nearest guess from its first indented line."""
    m = re.search(r"^([ \t]+)\S", core, re.M)
    indent: str | int | None = None if m is None else m.group(1)
    if isinstance(indent, str) and "\t" not in indent:
        indent = len(indent)
    tight = (",", ":")
    guess = _Layout(indent, tight if indent is None and not re.search(r"[,:] ", core) else None)
    try:
        old = json.loads(core)
    except ValueError:
        return guess
    if not old:  # `{}`: nothing to learn from, so a new file's layout
        return _Layout()
    for ascii_ in (False, True):
        for seps in dict.fromkeys((guess.separators, None, tight)):
            layout = _Layout(indent, seps, ascii_)
            if layout.dumps(old) == core:
                return layout
    return guess


def rose_event(command: Any) -> tuple[list[str], str] | None:
    """(launcher argv, ROSE event) when `command` runs `<rose> hook <event>`, else None.

    The launcher is a program named rose (or the plugin's run-hook), or `<python> -m rose`.
    """
    if not isinstance(command, str):
        return None
    try:
        argv = shlex.split(command, comments=True)
    except ValueError:
        return None
    if len(argv) < 3 or argv[-2] != "hook" or argv[-1] not in EVENTS:
        return None
    prog = argv[:-2]
    named = len(prog) == 1 and prog[0].replace("\\", "/").rsplit("/", 1)[-1] in _LAUNCHERS
    if named or (len(prog) == 3 and prog[1:] == ["-m", "rose"]):
        return prog, argv[-1]
    return None


def is_owned(handler: Any) -> bool:
    """Whether `handler` is one `rose install` wrote: a rose hook command ending in MARKER."""
    if not isinstance(handler, dict):
        return False
    cmd = handler.get("command")
    return isinstance(cmd, str) and rose_event(cmd) is not None and cmd.rstrip().endswith(MARKER)


def handlers(groups: list) -> list[Any]:
    """Every handler in an event's matcher groups, in order."""
    out: list[Any] = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            out += group["hooks"]
    return out


def _without_owned(groups: list) -> list:
    """`groups` minus ROSE's handlers; a group left empty by that is dropped."""
    out = []
    for group in groups:
        if not (isinstance(group, dict) and isinstance(group.get("hooks"), list)):
            out.append(group)
            continue
        kept = [h for h in group["hooks"] if not is_owned(h)]
        if len(kept) == len(group["hooks"]):
            out.append(group)
        elif kept:
            out.append({**group, "hooks": kept})
    return out


def rewire(data: dict[str, Any], wanted: dict[str, dict]) -> dict[str, Any]:
    """A copy of `data` whose ROSE handlers are exactly `wanted` (host event -> handler).

    Everything else keeps its place. An event that already holds exactly the wanted handler
    is not touched, so a second install changes nothing; an empty `wanted` uninstalls.
    """
    hooks = data.get("hooks", {})
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        want = wanted.get(event)
        owned = [h for h in handlers(groups) if is_owned(h)]
        if want is not None and owned == [want]:
            new_hooks[event] = groups
            continue
        kept = _without_owned(groups)
        if want is not None:
            kept.append({"hooks": [want]})
        if kept or not groups:
            new_hooks[event] = kept
    for event, want in wanted.items():
        if event not in hooks:
            new_hooks[event] = [{"hooks": [want]}]
    out = dict(data)
    if new_hooks or (hooks == {} and "hooks" in data):
        out["hooks"] = new_hooks
    else:
        out.pop("hooks", None)
    return out


def owned_count(data: dict[str, Any]) -> int:
    return sum(is_owned(h) for groups in data.get("hooks", {}).values() for h in handlers(groups))

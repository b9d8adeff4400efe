"""`rose doctor`: what works here and what does not, one check per line.

Levels: `fail` when ROSE cannot work here (no store, a graph that will not open, a wired
hook whose command would not start), `warn` when it works with less (no model backend on
PATH, an ignored setting, hooks not wired, the simulated agent), `info` for something absent
that nothing here needs (a model CLI not configured), `ok` otherwise. `rose doctor` exits 1
exactly when a check fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from rose.errors import RoseError


def _check(name: str, level: str, detail: str) -> dict[str, str]:
    return {"name": name, "level": level, "detail": detail}


def _backends(configured: str) -> list[dict[str, str]]:
    """One line per model CLI, and the configured agent's line, at the same verdict: a
    missing backend is a warning, since lessons are still stored and served without it."""
    try:
        from rose.model.registry import available_backends
    except ImportError:
        return [_check("backends", "warn", "model layer not installed")]
    found = available_backends()
    out = []
    for name, path in found.items():
        if path:
            out.append(_check(f"backend {name}", "ok", path))
        elif name == configured:
            out.append(_check(f"backend {name}", "warn", f"`{name}` not on PATH"))
        else:
            out.append(_check(f"backend {name}", "info", f"`{name}` not on PATH; not needed"))
    if configured not in found:
        out.append(_check("agent", "warn", _BUILT_IN.format(configured, _real(found))))
    elif found[configured]:
        out.append(_check("agent", "ok", f"{configured} (configured, on PATH)"))
    else:
        others = [n for n, p in found.items() if p and n != configured]
        fix = f"`rose config agent {others[0]}`" if others else f"put `{configured}` on PATH"
        out.append(
            _check(
                "agent",
                "warn",
                f"{configured} is configured but unavailable (`{configured}` not on PATH): "
                "lessons are still stored and served, but none is judged, so a store larger "
                f"than recall.whole_tokens is cut to its best-ranked apexes; {fix}",
            )
        )
    return out


_BUILT_IN = (
    "{0}: a built-in stand-in answers every model call (for the demo and tests), so nothing "
    "is judged by a real model; {1}"
)


def _real(found: dict[str, str | None]) -> str:
    """The command that configures a real model CLI, the first found on PATH."""
    name = next((n for n, p in found.items() if p), None)
    if name:
        return f"`rose config agent {name}`"
    return "install claude or codex, then `rose config agent`"


def _config(store: Any) -> list[dict[str, str]]:
    """Which config files were read, and each setting that was ignored and why."""
    from rose import config

    files = [str(d.config) for d in reversed(store.dirs) if d.config.is_file()]
    env = sorted(n for n in map(config.env_name, config.keys()) if n in os.environ)
    read = ", ".join(files + env) or "defaults only (no config.yaml, no ROSE_* settings)"
    problems = store.config.problems
    if problems:
        read += f"; {len(problems)} ignored (below), the rest in use"
    out = [_check("config", "warn" if problems else "ok", read)]
    out += [_check("config", "warn", p.message) for p in problems]
    return out


# Claude Code has been reported to pass additionalContext over about 10,000 characters
# on as a short preview; at about four characters a token that is 2,500 tokens.
_HOST_CONTEXT_TOKENS = 2500


def _budget(tokens: int) -> dict[str, str]:
    if tokens <= _HOST_CONTEXT_TOKENS:
        return _check("recall budget", "ok", f"{tokens} tokens a prompt")
    return _check(
        "recall budget",
        "warn",
        f"recall.max_pack_tokens is {tokens}: Claude Code may pass a block over "
        f"~{_HOST_CONTEXT_TOKENS} tokens to the model only as a preview",
    )


def diagnose() -> dict[str, Any]:
    from rose.graph.engine import version
    from rose.store import health
    from rose.store.facade import Store

    checks: list[dict[str, str]] = []
    try:
        store = Store.open()
    except RoseError as exc:
        checks.append(_check("store", "fail", str(exc)))
        return {"checks": checks + wiring() + mcp_server()}
    where = store.project.root if store.project else store.primary.root
    checks.append(_check("store", "ok", str(where)))
    if store.global_:
        checks.append(_check("global store", "ok", str(store.global_.root)))
    engine_src = "ROSE_GRAPH_ENGINE" if os.environ.get("ROSE_GRAPH_ENGINE") else "config"
    try:
        checks.append(
            _check("graph engine", "ok", f"{store.engine} {version(store.engine)} ({engine_src})")
        )
        with store.graph() as g:
            problems = health.problems(store, g)
            n = g.q("level_counts")
        total = sum(r["n"] for r in n)
        if problems:
            for p in problems:
                checks.append(_check("lesson file", "warn", f"{p.path}: {p.reason}"))
        checks.append(_check("graph", "ok", f"{total} lessons indexed at {store.graph_path}"))
    except RoseError as exc:
        checks.append(_check("graph", "fail", str(exc)))
    checks += _config(store)
    checks += _backends(store.config.agent)
    checks.append(_budget(store.config.recall.max_pack_tokens))
    project_dir = store.project.root.parent if store.project else None
    wired = wiring(project_dir)
    checks += wired
    checks += mcp_server(project_dir)
    checks.append(_reflection(store.config.reflect.mode, wired))
    return {"checks": checks}


def _reflection(mode: str, wired: list[dict[str, str]]) -> dict[str, str]:
    """How the per-turn reflector will run, given the mode and the hosts wired."""
    import shutil

    codex = any(c["name"].startswith("hooks codex") and c["level"] == "ok" for c in wired)
    if mode != "fork":
        return _check("reflection", "ok", f"reflect.mode {mode}")
    notes = []
    if codex:
        notes.append("under Codex, fork runs as background (Codex has no session fork)")
    if shutil.which("claude") is None:
        notes.append("no `claude` on PATH: fork falls back to background")
    if not notes:
        return _check("reflection", "ok", "reflect.mode fork (Claude Code forks the session)")
    return _check("reflection", "warn" if shutil.which("claude") is None else "ok",
                  "reflect.mode fork; " + "; ".join(notes))  # fmt: skip


def _launcher_problem(prog: list[str]) -> str | None:
    """Why the program a wired hook runs would not start, or None when it would."""
    exe = prog[0]
    if "CLAUDE_PLUGIN_ROOT" in exe:
        return None  # the plugin's own launcher; only Claude Code knows where it lives
    if os.sep in exe or "/" in exe:
        if not os.access(exe, os.X_OK):
            return f"{exe} does not exist or is not executable"
    elif shutil.which(exe) is None:
        return f"`{exe}` is not on PATH"
    if len(prog) == 3:  # <python> -m rose
        try:
            ok = subprocess.run([exe, "-c", "import rose"], capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{exe} -m rose cannot run ({exc})"
        if ok.returncode != 0:
            return f"{exe} cannot import rose"
    return None


def _wired_in(data: dict) -> dict[str, list[list[str]]]:
    """ROSE event -> the launcher of every handler that runs `rose hook <event>`."""
    from rose.hosts import settings as sj

    found: dict[str, list[list[str]]] = {}
    for groups in data.get("hooks", {}).values():
        for h in sj.handlers(groups):
            hit = sj.rose_event(h.get("command")) if isinstance(h, dict) else None
            if hit:
                found.setdefault(hit[1], []).append(hit[0])
    return found


def _location(name: str, path: Path, found: dict[str, list[list[str]]]) -> dict[str, str]:
    from rose.hosts.settings import EVENTS

    progs = {" ".join(p) for ps in found.values() for p in ps}
    where = f"{len(found)}/{len(EVENTS)} events -> {', '.join(sorted(progs))} ({path})"
    problems = {why for ps in found.values() for p in ps if (why := _launcher_problem(p))}
    if problems:
        return _check(name, "fail", f"{where}; " + "; ".join(sorted(problems)))
    missing = [e for e in EVENTS if e not in found]
    twice = [e for e, ps in found.items() if len(ps) > 1]
    if missing:
        return _check(name, "warn", f"{where}; missing {', '.join(missing)}: run `rose install`")
    if twice:
        return _check(name, "warn", f"{where}; wired more than once: {', '.join(twice)}")
    return _check(name, "ok", where)


def _enabled_plugin(data: dict) -> str | None:
    plugins = data.get("enabledPlugins")
    if isinstance(plugins, dict):
        return next((k for k, v in plugins.items() if v and k.split("@")[0] == "rose"), None)
    return None


def _hook_places(target: str, scope: str, project_dir: Path | None) -> list[dict[str, str]]:
    """The checks for one hooks file: ROSE's hooks in it and, for Claude, the plugin."""
    from rose.hosts import settings as sj
    from rose.hosts.install import hooks_file

    name = f"hooks {target} {scope}"
    path = hooks_file(target, scope, project_dir)
    try:
        data = sj.parse(path, path.read_text(encoding="utf-8") if path.is_file() else None)
    except (OSError, UnicodeDecodeError, sj.SettingsFileError) as exc:
        return [_check(name, "warn", str(exc))]
    found = _wired_in(data)
    out = [_location(name, path, found)] if found else []
    plugin = _enabled_plugin(data) if target == "claude" else None
    if plugin:
        out.append(_check(f"plugin claude {scope}", "ok", f"{plugin} enabled ({path})"))
    return out


def wiring(project_dir: Path | None = None) -> list[dict[str, str]]:
    """Which hooks are wired where (Claude Code user/project/plugin, Codex), and whether
    each wired command points at a rose that exists."""
    from rose.hosts.install import BEGIN, agents_file

    checks: list[dict[str, str]] = []
    for target in ("claude", "codex"):
        for scope in ("user", "project"):
            checks += _hook_places(target, scope, project_dir)
    trusted = _codex_trust(project_dir, checks)
    checks += trusted
    hooks_run = any(c["level"] == "ok" for c in trusted)
    for scope in ("user", "project"):
        md = agents_file(scope, project_dir)
        if md.is_file() and BEGIN in md.read_text(encoding="utf-8", errors="replace"):
            if hooks_run:
                detail = (
                    f"recall block in {md}, and ROSE's Codex hooks run too: every prompt "
                    "recalls twice; run `rose install --target codex` again to drop the block"
                )
                checks.append(_check(f"AGENTS.md {scope}", "warn", detail))
            else:
                checks.append(_check(f"AGENTS.md {scope}", "ok", f"recall block in {md}"))
    claude = [
        c["name"].removeprefix("hooks claude ") + " settings"
        for c in checks
        if c["name"].startswith("hooks claude ") and " events -> " in c["detail"]
    ]
    claude += ["the plugin"] if any(c["name"].startswith("plugin claude") for c in checks) else []
    if len(claude) > 1:
        where = ", ".join(claude)
        checks.append(
            _check(
                "hooks claude",
                "warn",
                f"wired in {where}: each event runs ROSE more than once; uninstall all but one",
            )
        )
    if not any(c["name"].startswith(("hooks", "plugin")) for c in checks):
        checks.append(
            _check(
                "hooks",
                "warn",
                "not wired anywhere: run `rose install` "
                "(Claude Code) or `rose install --target codex`",
            )
        )
    return checks


def mcp_server(project_dir: Path | None = None) -> list[dict[str, str]]:
    """Where ROSE's MCP server (`rose mcp`) is registered, and whether its command would
    start; a warning when no host has it (the agent can still be served, not pull)."""
    from rose.hosts import mcp_wiring as mw

    out: list[dict[str, str]] = []
    for target in ("claude", "codex"):
        for reg in mw.registrations(target, project_dir):
            name = f"mcp {target} {reg.scope}"
            if reg.scope == "plugin":
                out.append(_check(name, "ok", f"the rose plugin's server (enabled in {reg.path})"))
                continue
            where = f"`{' '.join(reg.argv)}` ({reg.path})"
            problem = _launcher_problem(list(reg.argv[:-1]))
            if not problem and not reg.approved:
                wait = "not approved yet: Claude Code asks once, in an interactive session"
                out.append(_check(name, "warn", f"{where}; {wait}"))
                continue
            out.append(
                _check(name, "fail", f"{where}; {problem}")
                if problem
                else _check(name, "ok", where)
            )
    if not out:
        detail = (
            "ROSE's MCP server is not registered with Claude Code or Codex: the agent is served "
            "lessons but cannot pull more (recall, show, used); `rose install` registers it"
        )
        out.append(_check("mcp", "warn", detail))
    return out


def _codex_trust(project_dir: Path | None, checks: list[dict[str, str]]) -> list[dict[str, str]]:
    """Whether Codex trusts ROSE's hooks for their current content, per wired scope: Codex
    runs no hook it does not trust (and `codex exec` skips one without a word)."""
    from rose.hosts import codex_trust as ct
    from rose.hosts.install import hooks_file

    wired = [s for s in ("user", "project") if f"hooks codex {s}" in {c["name"] for c in checks}]
    if not wired:
        return []
    codex = ct.find_codex()
    if codex is None:
        why = (
            "codex is not on PATH, so ROSE cannot ask Codex whether it trusts ROSE's hooks "
            "(it runs none it does not trust); put codex on PATH and run `rose doctor` again"
        )
        return [_check("trust codex", "warn", why)]
    cwd = (project_dir or Path.cwd()).resolve()
    out = []
    try:
        with ct.AppServer(codex, cwd) as app:
            for scope in wired:
                path = hooks_file("codex", scope, project_dir)
                hooks = ct.rose_hooks(app, path, cwd)
                out.append(_trust_line(scope, path, hooks, codex, cwd))
    except ct.CodexTrustError as exc:
        return [_check("trust codex", "warn", f"cannot tell whether Codex trusts them: {exc}")]
    return out


def _trust_line(scope: str, path: Path, hooks: list, codex: str, cwd: Path) -> dict[str, str]:
    from rose.hosts import codex_trust as ct

    name = f"trust codex {scope}"
    fix = "rose install --target codex" + (" --scope project" if scope == "project" else "")
    if not hooks:
        why = ct.not_listed_reason(codex, scope, path, cwd)
        return _check(name, "warn", f"Codex lists none of ROSE's hooks from {path}: {why}")
    if all(h.runs for h in hooks):
        return _check(name, "ok", f"{len(hooks)} hooks trusted for their current content")
    parts = []
    for status, label in ct.STATES.items():
        events = [h.event for h in hooks if h.status == status and status != "trusted"]
        if events and status != "managed":
            parts.append(f"{label}: {', '.join(events)}")
    off = [h.event for h in hooks if not h.enabled]
    if off:
        parts.append(f"disabled in Codex's /hooks: {', '.join(off)}")
    return _check(
        name,
        "warn",
        f"{'; '.join(parts)} ({path}). Codex skips these, silently in `codex exec`: run "
        f"`{fix} --trust` (or trust them in Codex's /hooks; enable disabled ones there)",
    )

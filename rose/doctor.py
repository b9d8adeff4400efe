"""`rose doctor`: what works here and what does not, one check per line."""

from __future__ import annotations

import os
from typing import Any

from rose.errors import RoseError


def _check(name: str, level: str, detail: str) -> dict[str, str]:
    return {"name": name, "level": level, "detail": detail}


def _backends(configured: str) -> list[dict[str, str]]:
    try:
        from rose.model.registry import available_backends
    except ImportError:
        return [_check("backends", "warn", "model layer not installed")]
    found = available_backends()
    out = []
    for name, path in found.items():
        level = "ok" if path else ("fail" if name == configured else "warn")
        out.append(_check(f"backend {name}", level, path or f"`{name}` not on PATH"))
    if configured not in found:
        out.append(_check("backend", "ok", f"{configured} (built in)"))
    out.append(_check("configured agent", "ok", configured))
    return out


def diagnose() -> dict[str, Any]:
    from rose.graph.engine import version
    from rose.store import Store

    checks: list[dict[str, str]] = []
    try:
        store = Store.open()
    except RoseError as exc:
        checks.append(_check("store", "fail", str(exc)))
        return {"checks": checks}
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
            problems = store.problems(g)
            n = g.q("level_counts")
        total = sum(r["n"] for r in n)
        if problems:
            for p in problems:
                checks.append(_check("lesson file", "warn", f"{p.path}: {p.reason}"))
        checks.append(_check("graph", "ok", f"{total} lessons indexed at {store.graph_path}"))
    except RoseError as exc:
        checks.append(_check("graph", "fail", str(exc)))
    checks += _backends(store.config.agent)
    return {"checks": checks}

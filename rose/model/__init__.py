"""Model backends: a rendered prompt and a JSON schema in, a validated answer out."""

from typing import Any

from rose.model.base import Backend, BackendAnswer, Usage
from rose.model.registry import available_backends, make_backend

__all__ = [
    "Backend",
    "BackendAnswer",
    "ClaudeBackend",
    "CodexBackend",
    "ScriptedBackend",
    "Usage",
    "available_backends",
    "make_backend",
]

# The implementations load on first use, keeping `import rose.model` cheap for the hooks.
_LAZY = {
    "ClaudeBackend": "rose.model.claude",
    "CodexBackend": "rose.model.codex",
    "ScriptedBackend": "rose.model.scripted",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rose.model' has no attribute {name!r}")

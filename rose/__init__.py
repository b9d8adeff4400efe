"""ROSE: a continual-learning memory for coding agents.

Importing `rose` is cheap: the public API below loads its modules on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["Store", "Node", "Episode", "Claim", "RoseError", "__version__"]

_LAZY = {
    "Store": "rose.store.facade",
    "Node": "rose.models",
    "Episode": "rose.models",
    "Claim": "rose.models",
    "RoseError": "rose.errors",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rose' has no attribute {name!r}")

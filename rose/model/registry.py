"""Backends by name, as config `agent` and the `--agent` overrides spell them.

Imports of the backends are deferred to `make_backend`, so importing this module (and
`rose.model`) costs nothing on the hook's fast path.
"""

from __future__ import annotations

import shutil

from rose.errors import BackendUnavailable
from rose.model.base import Backend

BACKENDS = ("claude", "codex", "simulated", "scripted")
CLI_BINARIES = {"claude": "claude", "codex": "codex"}


def make_backend(name: str, *, model: str | None = None) -> Backend:
    """The backend called `name`; `model` picks the model where the backend has a choice."""
    key = name.strip().lower()
    if key == "claude":
        from rose.model.claude import ClaudeBackend

        return ClaudeBackend(model=model)
    if key == "codex":
        from rose.model.codex import CodexBackend

        return CodexBackend(model=model)
    if key == "scripted":
        from rose.model.scripted import ScriptedBackend

        return ScriptedBackend()
    if key == "simulated":
        return _simulated()
    raise BackendUnavailable(
        name,
        f"no backend by that name; choose one of {', '.join(BACKENDS)} "
        "(e.g. `rose config agent claude`)",
    )


def available_backends() -> dict[str, str | None]:
    """Where each model CLI resolves on PATH (None when absent), for `rose doctor`."""
    return {name: shutil.which(binary) for name, binary in CLI_BINARIES.items()}


def _simulated() -> Backend:
    try:
        from rose.sim.backend import SimulatedBackend
    except ImportError as exc:
        raise BackendUnavailable(
            "simulated",
            f"the simulated world could not be loaded ({exc}); it ships with the rose "
            "package, so reinstall it, or choose a real backend with `rose config agent claude`",
        ) from exc
    return SimulatedBackend()

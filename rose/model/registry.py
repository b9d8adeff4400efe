"""Backends by name, as config `agent` and the `--agent` overrides spell them.

Imports of the backends are deferred to `make_backend`, so importing this module (and
`rose.model`) costs nothing on the hook's fast path.
"""

from __future__ import annotations

import shutil
from functools import lru_cache
from typing import Any

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
        return _simulated(model or "")
    raise BackendUnavailable(
        name,
        f"no backend by that name; choose one of {', '.join(BACKENDS)} "
        "(e.g. `rose config agent claude`)",
    )


def available_backends() -> dict[str, str | None]:
    """Where each model CLI resolves on PATH (None when absent), for `rose doctor`."""
    return {name: shutil.which(binary) for name, binary in CLI_BINARIES.items()}


#: What `model` may set for the simulated backend, and each knob's type.
SIMULATED_KNOBS: dict[str, type] = {
    "seed": int,
    "size": str,
    "noise": float,
    "under_report": float,
    "over_cut": float,
    "homonyms": int,  # topics whose facts borrow another's name (default: the size's)
}

_KIND_WORDS = {int: "a whole number", float: "a number", str: "a word"}


def simulated_model(**knobs: int | float | str) -> str:
    """The `model` setting that selects a simulated world and its knobs (`seed=3,noise=0.1`)."""
    unknown = sorted(set(knobs) - set(SIMULATED_KNOBS))
    if unknown:
        raise ValueError(f"not a simulated backend knob: {', '.join(unknown)}")
    return ",".join(f"{k}={v}" for k, v in knobs.items())


def _simulated_knobs(model: str) -> dict[str, int | float | str]:
    knobs: dict[str, int | float | str] = {}
    for part in model.replace(" ", ",").split(","):
        if not part:
            continue
        name, eq, raw = (p.strip() for p in part.partition("="))
        kind = SIMULATED_KNOBS.get(name)
        if not eq or kind is None:
            raise BackendUnavailable(
                "simulated",
                f"model {model!r} names no simulated world: give knob=value pairs, comma-"
                f"separated, from {', '.join(SIMULATED_KNOBS)} (e.g. `seed=3,noise=0.1`), "
                "or leave `model` empty for world 0",
            )
        try:
            knobs[name] = kind(raw)
        except ValueError:
            raise BackendUnavailable(
                "simulated", f"model {model!r}: {name} must be {_KIND_WORDS[kind]}, not {raw!r}"
            ) from None
    return knobs


def _simulated(model: str = "") -> Backend:
    """The simulated world's model; `model` picks the world and its knobs (empty: world 0).

    The setting lives in the store's config, so every process that opens the store (a hook,
    `rose trace`, a detached job) answers from the world the store was built from.
    """
    knobs = _simulated_knobs(model)
    try:
        from rose.sim.model.backend import SimulatedBackend
    except ImportError as exc:
        raise BackendUnavailable(
            "simulated",
            f"the simulated world could not be loaded ({exc}); it ships with the rose "
            "package, so reinstall it, or choose a real backend with `rose config agent claude`",
        ) from exc
    seed = int(knobs.get("seed", 0))
    try:
        return SimulatedBackend(
            _world(seed, str(knobs.get("size", "default")), _count(knobs.get("homonyms"))),
            seed=seed,
            noise=float(knobs.get("noise", 0.0)),
            under_report=float(knobs.get("under_report", 0.0)),
            over_cut=float(knobs.get("over_cut", 0.0)),
        )
    except ValueError as exc:
        raise BackendUnavailable("simulated", f"model {model!r}: {exc}") from None


def _count(value: int | float | str | None) -> int | None:
    return None if value is None else int(value)


@lru_cache(maxsize=4)
def _world(seed: int, size: str, homonyms: int | None = None) -> Any:
    """A world is immutable and takes tens of milliseconds to draw: once a process will do."""
    from rose.sim.world import World

    return World.generate(seed, size=size, homonyms=homonyms)

"""Where the Jinja2 templates are: the top-level `prompts/` folder, one file per template.

An installed wheel carries the folder as package data (`rose.prompts`); a checkout,
run from its own folder or as a Claude Code plugin, has it beside the package.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from rose.errors import RoseError

if TYPE_CHECKING:
    from importlib.abc import Traversable


@cache
def prompts_dir() -> Traversable:
    """The folder holding every `*.j2` template."""
    try:
        return resources.files("rose.prompts")
    except ModuleNotFoundError:
        pass
    beside = Path(__file__).resolve().parent.parent / "prompts"
    if beside.is_dir():
        return beside
    raise RoseError(
        f"the prompt templates are missing: neither the package data `rose.prompts` nor "
        f"{beside} exists; reinstall ROSE"
    )


def template_text(name: str) -> str:
    """The source of template `name` (without `.j2`)."""
    path = prompts_dir() / f"{name}.j2"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RoseError(
            f"no prompt template {name}.j2 in {prompts_dir()}; reinstall ROSE"
        ) from None


def template_names() -> list[str]:
    """Every template's name, sorted."""
    return sorted(p.name[:-3] for p in prompts_dir().iterdir() if p.name.endswith(".j2"))

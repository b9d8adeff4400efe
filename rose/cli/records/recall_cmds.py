"""Recall and its inspection: recall, trace, index, and the hook entry point."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from rose.cli._out import emit_json

_PROMPT_FILE_HELP = (
    "Read the prompt from this file ('-': stdin) instead, so it never passes through a "
    "shell command line."
)


def register(app: typer.Typer) -> None:
    app.command("recall")(recall)
    app.command("trace")(trace)
    app.command("index")(index)
    app.command("hook", context_settings={"ignore_unknown_options": True})(hook)


_AGENT_HELP = "Model backend for this run: claude, codex or simulated (default: the agent setting)."


def _agent_judge(store, agent: str | None):
    """A judge on `agent`, which must be a value `rose config agent` would accept too."""
    if agent is None:
        return None
    from rose import config
    from rose.judge.calls import for_store

    allowed = config.choices("agent")
    if agent not in allowed:
        raise typer.BadParameter(f"must be one of {', '.join(allowed)}", param_hint="--agent")
    return for_store(store, agent=agent)


def _read_prompt(prompt: str | None, prompt_file: str | None) -> str:
    """The prompt from --prompt (`-`: stdin) or --prompt-file (`-`: stdin)."""
    from rose.errors import RoseError

    if (prompt is None) == (prompt_file is None):
        raise typer.BadParameter("give exactly one of --prompt and --prompt-file")
    if prompt is not None and prompt != "-":
        return prompt
    source = prompt_file if prompt_file is not None else "-"
    if source == "-":
        return sys.stdin.read().strip()
    try:
        return Path(source).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise RoseError(f"cannot read the prompt from {source}: {exc}") from None


def recall(
    prompt: str = typer.Option(
        None, "--prompt", "-p", help="The prompt to recall for ('-': read it from stdin)."
    ),
    prompt_file: str = typer.Option(None, "--prompt-file", help=_PROMPT_FILE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    agent: str = typer.Option(None, "--agent", help=_AGENT_HELP),
) -> None:
    """What would be injected for a prompt, with the model's verdict and reason per candidate."""
    from rose.inspect.trace import as_dict, inspect
    from rose.store.facade import Store

    text = _read_prompt(prompt, prompt_file)
    store = Store.open()
    res, result = inspect(store, text, judge=_agent_judge(store, agent))
    data = as_dict(res, result)
    if as_json:
        emit_json(data)
        return
    if not res.chosen:
        typer.echo("nothing to inject: " + "; ".join(res.decisions))
        return
    typer.echo(data["status"])
    verdicts = {v.id: v for v in res.verdicts}
    for item in res.chosen:
        v = verdicts.get(item["id"])
        why = f"  [{v.verdict}: {v.reason}]" if v else ""
        typer.echo(f"  L{item['level']} {item['id']}  {item['title']}{why}")
    for v in res.verdicts:
        if v.verdict in ("unrelated", "descend"):
            typer.echo(f"  ({v.verdict}) {v.id}  {v.title}: {v.reason}")


def trace(
    prompt: str = typer.Option(
        None, "--prompt", "-p", help="The prompt to trace ('-': read it from stdin)."
    ),
    prompt_file: str = typer.Option(None, "--prompt-file", help=_PROMPT_FILE_HELP),
    agent: str = typer.Option(None, "--agent", help=_AGENT_HELP),
) -> None:
    """Every recall stage: candidates, verdicts, budget, the verbatim block, the status line."""
    from rose.inspect.trace import inspect, render
    from rose.store.facade import Store

    text = _read_prompt(prompt, prompt_file)
    store = Store.open()
    typer.echo(render(*inspect(store, text, judge=_agent_judge(store, agent))))


def index() -> None:
    """Every servable lesson on one line (id, level, scope/family, title — gist), for grep
    and a quick read; written to `.rose/index.txt` and rebuilt when the lessons changed.
    Recall does not read it: it asks the model about the apexes' lines."""
    from rose.store.facade import Store
    from rose.store.index import index as build

    path, lines = build(Store.open())
    for line in lines:
        typer.echo(line)
    typer.echo(f"({len(lines)} lessons · {path})", err=True)


def hook(
    event: str = typer.Argument(..., help="session-start, user-prompt-submit, stop, ..."),
) -> None:
    """Run one host hook: reads the host's JSON on stdin, answers in its format, exits 0."""
    from rose.hooks.main import main

    raise typer.Exit(main([event]))
